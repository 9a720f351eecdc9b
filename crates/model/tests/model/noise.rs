//! Background activity (`noise`): each source of a profile is a real task or interrupt, at its
//! rate, on its CPUs; it goes through the wakeup path and stacks on busy CPUs; seeds vary it.

use crate::common::*;
use wakesim_engine::{MSEC, SEC, USEC};
use wakesim_machine::{Arrival, NoiseIrq, NoiseProfile, NoiseTask};
use wakesim_model::{Features, Sim};
use wakesim_workloads::{Dur, Op, TaskSpec, Workload};

fn task(name: &str, per_cpu: bool, cpus: &str, period_ms: f64, arrival: Arrival, run_us: f64) -> NoiseTask {
    NoiseTask { name: name.into(), per_cpu, cpus: cpus.into(), period_ms, arrival, run_us, run_sd_us: 0.0, nice: 0, source: "test".into() }
}

fn irq(name: &str, per_cpu: bool, cpus: &str, period_ms: f64, arrival: Arrival, handler_us: f64) -> NoiseIrq {
    NoiseIrq { name: name.into(), per_cpu, cpus: cpus.into(), period_ms, arrival, handler_us, source: "test".into() }
}

fn profile(tasks: Vec<NoiseTask>, irqs: Vec<NoiseIrq>) -> NoiseProfile {
    NoiseProfile { name: "test".into(), description: String::new(), skew_tick: false, cost_jitter: 0.0, tasks, irqs }
}

/// One task that sleeps for `ms` and exits: the run lasts `ms` of simulated time.
fn sleeper(ms: u64) -> Workload {
    let t = TaskSpec::new("sleeper", vec![Op::Sleep(Dur::Fixed(ms * MSEC)), Op::Exit]);
    workload(vec![TaskSpec { origin: wakesim_workloads::Origin::Existing, ..t }], 0, 0)
}

fn run_with(machine: &str, noise: NoiseProfile, seed: u64, wl: &Workload) -> wakesim_model::RunResult {
    let mut cfg = config(machine, Features::default(), seed);
    cfg.noise = noise;
    Sim::new(cfg, wl).unwrap().run()
}

#[test]
fn a_periodic_per_cpu_task_wakes_once_per_period_on_its_own_cpu() {
    // 1 ms period, 100 ms run: 99-100 activations per CPU (the first at a random phase).
    let p = profile(vec![task("kworker/{cpu}", true, "all", 1.0, Arrival::Periodic, 10.0)], vec![]);
    let r = run_with("test-2x4", p, 1, &sleeper(100));
    let n = r.stats.nr_cpus as u64;
    let s = &r.stats.noise;
    assert_eq!(s.tasks, n, "one instance per CPU");
    assert!((99 * n..=100 * n).contains(&s.task_wakeups), "{} wakeups on {n} CPUs in 100 ms", s.task_wakeups);
    // Each activation runs its 10 us of CPU time (plus the syscall and wakeup costs around it).
    let per = s.task_runtime_ns / s.task_wakeups;
    assert!((10 * USEC..20 * USEC).contains(&per), "{per} ns per activation");
}

#[test]
fn a_poisson_interrupt_source_fires_at_its_mean_rate_and_charges_its_handler() {
    // Mean 1 ms over 1 s: 1000 arrivals, sd ~32; 5 sd either side.
    let p = profile(vec![], vec![irq("nic", false, "3", 1.0, Arrival::Poisson, 4.0)]);
    let r = run_with("test-2x4", p, 1, &sleeper(1000));
    let s = &r.stats.noise;
    assert_eq!(s.irq_sources, 1, "a non-per-CPU source lands on one CPU");
    assert!((840..=1160).contains(&s.irqs), "{} interrupts in 1 s at 1 kHz", s.irqs);
    assert_eq!(s.irq_time_ns, s.irqs * 4 * USEC);
    // The handler time is spent on CPU 3, its affinity.
    assert!(r.cpu_busy[3] >= s.irq_time_ns, "CPU 3 busy {} < handlers {}", r.cpu_busy[3], s.irq_time_ns);
}

#[test]
fn a_background_task_woken_on_a_busy_cpu_stacks_and_sets_root_domain_overload() {
    // A compute-bound workload task pinned on CPU 0 and a kworker pinned there: every kworker
    // wakeup finds CPU 0 busy, so nr_running reaches 2 and rd->overloaded is set
    // (add_nr_running() → set_rd_overloaded()), which the quiet machine never does.
    let mut hog = TaskSpec::new("hog", vec![Op::Compute(Dur::Fixed(50 * MSEC)), Op::Exit]);
    hog.allowed = Some(wakesim_machine::CpuSet::from_cpus([0]));
    let wl = workload(vec![hog], 0, 0);
    let overloaded = |noise: NoiseProfile| {
        let mut cfg = config("test-2x4", Features::default(), 1);
        cfg.noise = noise;
        let mut sim = Sim::new(cfg, &wl).unwrap();
        let mut seen = false;
        sim.step_until_with(60 * MSEC, |s, _, _| seen |= s.rd_overloaded);
        seen
    };
    assert!(!overloaded(NoiseProfile::none()), "one task per CPU never overloads");
    let p = profile(vec![task("kworker/0", false, "0", 1.0, Arrival::Periodic, 20.0)], vec![]);
    assert!(overloaded(p), "the kworker stacks on the busy CPU");
}

#[test]
fn background_tasks_do_not_keep_the_run_alive_or_enter_its_task_statistics() {
    let r = run_with("test-2x4", NoiseProfile::server(), 1, &sleeper(5));
    assert!(!r.outcome.capped, "the run ends when the workload's task exits");
    assert!(r.outcome.end_time < 6 * MSEC, "ended at {}", r.outcome.end_time);
    assert_eq!(r.stats.tasks.len(), 1, "per-task statistics cover the workload only");
    assert_eq!(r.outcome.task_exit.len(), 1);
}

#[test]
fn skew_tick_spreads_the_cpus_ticks_over_half_a_period() {
    // tick_setup_sched_timer(): CPU c's tick is offset by c × (TICK_NSEC/2) / nr_cpus. With a
    // busy CPU 0 and CPU 7 over many ticks, their ticks differ by 7/n of half a period.
    let mut specs = Vec::new();
    for c in [0usize, 7] {
        let mut t = TaskSpec::new(format!("hog{c}"), vec![Op::Compute(Dur::Fixed(20 * MSEC)), Op::Exit]);
        t.allowed = Some(wakesim_machine::CpuSet::from_cpus([c]));
        specs.push(t);
    }
    let wl = workload(specs, 0, 0);
    let tick_phases = |skew: bool| {
        let mut cfg = config("test-2x4", Features::default(), 1);
        cfg.noise = NoiseProfile { skew_tick: skew, ..profile(vec![], vec![]) };
        let mut sim = Sim::new(cfg, &wl).unwrap();
        let mut at: [Vec<u64>; 2] = [vec![], vec![]];
        sim.step_until_with(15 * MSEC, |_, t, ev| {
            if let wakesim_model::exec::Ev::Tick { cpu } = ev {
                at[usize::from(cpu == 7)].push(t % MSEC);
            }
        });
        (at[0].last().copied().unwrap(), at[1].last().copied().unwrap(), sim.nr_cpus() as u64)
    };
    let (a, b, _) = tick_phases(false);
    assert_eq!(a, b, "without skew_tick every CPU ticks on one grid");
    let (a, b, n) = tick_phases(true);
    assert_eq!((b + MSEC - a) % MSEC, 7 * ((MSEC / 2) / n), "CPU 7's tick lags CPU 0's by 7 × (TICK_NSEC/2)/nr_cpus");
}

#[test]
fn with_background_activity_each_seed_launches_from_its_own_cpu_and_one_seed_repeats_exactly() {
    let launch = |noise: NoiseProfile, seed| {
        let cfg = { let mut c = config("test-2x4", Features::default(), seed); c.noise = noise; c };
        Sim::new(cfg, &sleeper(1)).unwrap().launch_cpu
    };
    assert!((1..=8).all(|s| launch(NoiseProfile::none(), s) == 0), "the quiet machine launches from CPU 0");
    let cpus: std::collections::BTreeSet<u32> = (1..=8).map(|s| launch(NoiseProfile::server(), s)).collect();
    assert!(cpus.len() >= 3, "8 seeds launched from only {cpus:?}");
    // Same seed, same run, to the statistics' last counter; another seed, another run.
    let wl = ping_pong(2, 2000);
    let json = |seed| serde_json::to_string(&run_with("test-2x4", NoiseProfile::server(), seed, &wl).stats).unwrap();
    assert_eq!(json(3), json(3));
    assert_ne!(json(3), json(4));
}

#[test]
fn a_noise_profile_file_names_the_bad_key_and_its_line() {
    let bad = "name = \"x\"\n[[task]]\nname = \"k\"\nperiod_ms = 10\nrun_us = 3\nperiod = 4\n";
    let e = NoiseProfile::from_toml_str(bad).unwrap_err();
    assert!(e.contains("line 6") && e.contains("period"), "{e}");
    let neg = "name = \"x\"\n[[irq]]\nname = \"n\"\nperiod_ms = -1\nhandler_us = 3\n";
    let e = NoiseProfile::from_toml_str(neg).unwrap_err();
    assert!(e.contains("irq 'n'") && e.contains("period_ms"), "{e}");
    // The presets' default profile round-trips through its file format.
    let s = NoiseProfile::server();
    assert_eq!(NoiseProfile::from_toml_str(&s.to_toml()).unwrap(), s);
    let _ = SEC;
}

/// `cost_jitter`: every kernel step's duration is drawn around the profile's figure with mean 1
/// and the given CV, from the seed. A pinned pipe ping-pong (4,000 kernel passes a side) keeps
/// its CPU time to within 2 % (the law of large numbers on a mean-1 factor), one seed repeats
/// exactly, another seed differs, and a CV outside [0, 1] is refused.
#[test]
fn cost_jitter_varies_every_kernel_step_around_its_cost_and_keeps_the_mean() {
    let wl = {
        let mut w = ping_pong(1, 2000);
        w.tasks = w.tasks.into_iter().map(|t| pinned(t, &[1])).collect();
        w
    };
    let jitter = |cv: f64| NoiseProfile { cost_jitter: cv, ..profile(vec![], vec![]) };
    let exact = run_with("test-2x4", profile(vec![], vec![]), 1, &wl);
    let a = run_with("test-2x4", jitter(0.2), 1, &wl);
    let again = run_with("test-2x4", jitter(0.2), 1, &wl);
    let other = run_with("test-2x4", jitter(0.2), 2, &wl);
    let ratio = a.cpu_busy[1] as f64 / exact.cpu_busy[1] as f64;
    assert!((0.98..=1.02).contains(&ratio), "busy {} → {} ns ({ratio})", exact.cpu_busy[1], a.cpu_busy[1]);
    assert_ne!(a.cpu_busy[1], exact.cpu_busy[1], "the steps were jittered");
    assert_eq!((a.cpu_busy.clone(), a.events), (again.cpu_busy.clone(), again.events), "one seed, one run");
    assert_ne!(a.cpu_busy[1], other.cpu_busy[1], "another seed, another run");
    let bad = "name = \"x\"\ncost_jitter = 1.5\n";
    let e = NoiseProfile::from_toml_str(bad).unwrap_err();
    assert!(e.contains("cost_jitter"), "{e}");
}
