//! Whole-system invariants under random small task graphs: a task is never on two runqueues,
//! the clock never goes back, every task finishes (docs/model.md, "Time belongs to CPUs" and
//! "Tasks").

use crate::common::*;
use wakesim_engine::{Time, SEC};
use wakesim_model::state::{Mode, TState};
use wakesim_model::{Features, Sim};

/// Checks beyond `check_invariants_full()`: each task runs on at most one CPU and that CPU is
/// its task_cpu; nr_running totals match the tasks on a runqueue; a running task is on_cpu.
fn extra_invariants(s: &Sim) {
    let mut running_on = vec![None; s.tasks.len()];
    for c in 0..s.nr_cpus() {
        let cur = s.cpus[c].curr as usize;
        assert!(running_on[cur].is_none(), "task {} is current on CPUs {:?} and {c}", s.tasks[cur].name, running_on[cur]);
        running_on[cur] = Some(c);
        assert!(s.tasks[cur].on_cpu, "cpu {c}: current task {} not on_cpu", s.tasks[cur].name);
        if !s.tasks[cur].is_idle {
            assert_eq!(s.tasks[cur].cpu as usize, c, "running task {} on cpu {c} has task_cpu {}", s.tasks[cur].name, s.tasks[cur].cpu);
        }
        if s.cpus[c].mode == Mode::User {
            assert!(!s.tasks[cur].is_idle, "cpu {c} runs user code of its idle task");
            assert_eq!(s.tasks[cur].state, TState::Runnable, "cpu {c} runs user code of a non-runnable task");
        }
    }
    let nr: u32 = (0..s.nr_cpus()).map(|c| s.nr_running(c)).sum();
    let on_rq = s.tasks.iter().zip(&s.se).filter(|(t, se)| !t.is_idle && se.on_rq).count() as u32;
    assert_eq!(nr, on_rq, "Σ nr_running vs tasks on a runqueue");
    for (i, t) in s.tasks.iter().enumerate().filter(|(_, t)| !t.is_idle) {
        if t.state == TState::Dead {
            // Until its last __schedule() (which may wait for the rq lock) deactivates it, an
            // exiting task is still its CPU's current task and on the runqueue.
            let exiting = s.cpus[t.cpu as usize].curr as usize == i;
            assert!(!s.se[i].on_rq || exiting, "dead task {} still queued", t.name);
        }
    }
}

/// Runs `wl` one event at a time with every check after every event; returns the sim.
fn run_fully_checked(machine: &str, wl: &wakesim_workloads::Workload, seed: u64, cap: Time) -> Sim {
    run_fully_checked_with(machine, v6_6(), wl, seed, cap)
}

fn run_fully_checked_with(machine: &str, f: Features, wl: &wakesim_workloads::Workload, seed: u64, cap: Time) -> Sim {
    let mut s = sim(machine, f, wl, seed);
    s.boot();
    let mut last = 0;
    let mut n = 0u64;
    while s.live_tasks() > 0 {
        let Some((t, _)) = s.step() else { break };
        assert!(t >= last, "clock went back: {t} < {last}");
        last = t;
        s.check_invariants_full();
        extra_invariants(&s);
        n += 1;
        assert!(t <= cap, "seed {seed}: not finished by {cap} ns ({} tasks left, {n} events)", s.live_tasks());
    }
    s
}

#[test]
fn fuzzed_task_graphs_finish_with_no_task_ever_on_two_runqueues() {
    for seed in 1..=6u64 {
        let machine = if seed % 2 == 0 { "test-2x4" } else { "test-smt2" };
        let n = if seed % 2 == 0 { 16 } else { 8 };
        let wl = random_graph(seed, n);
        let ntasks = wl.tasks.len();
        let s = run_fully_checked(machine, &wl, seed, 5 * SEC);
        assert_eq!(s.live_tasks(), 0, "seed {seed}");
        let exited = s.tasks.iter().filter(|t| !t.is_idle && t.exit_time.is_some()).count();
        assert_eq!(exited, ntasks, "seed {seed}: every task exited");
        assert!(s.wake.wakeups > 0, "seed {seed}: the graph exercised wakeups");
    }
}

#[test]
fn fuzzed_task_graphs_finish_under_run_with_consistent_outcomes() {
    // The plain run() path (light invariants only) on more seeds, also on a non-polling machine.
    for seed in 11..=18u64 {
        let (machine, n) = match seed % 3 {
            0 => ("test-2x4", 16),
            1 => ("test-smt2", 8),
            _ => ("altra", 80),
        };
        let wl = random_graph(seed, n.min(16));
        let r = run(machine, v6_6(), &wl, seed);
        assert!(!r.outcome.capped, "seed {seed} on {machine} hit the cap");
        assert!(r.outcome.task_exit.iter().all(|e| e.is_some()), "seed {seed}: every task exited");
        let last_exit = r.outcome.task_exit.iter().map(|e| e.unwrap()).max().unwrap();
        assert_eq!(r.outcome.end_time, last_exit, "the run ends with the last exit");
        let runtime: u64 = r.stats.tasks.iter().map(|t| t.runtime_ns).sum();
        let busy: u64 = r.cpu_busy.iter().sum();
        assert!(runtime <= busy, "seed {seed}: task runtime {runtime} exceeds CPU busy time {busy}");
        assert!(busy <= r.outcome.end_time * r.stats.nr_cpus as u64, "seed {seed}: CPUs busier than wall time");
    }
}

#[test]
fn clock_never_goes_back_and_marks_are_monotonic_per_task() {
    let wl = ping_pong(3, 300);
    let mut s = sim("test-2x4", v6_6(), &wl, 5);
    assert!(s.run_checked(5 * SEC, 64), "finished");
    for w in s.marks.windows(2) {
        assert!(w[1].time >= w[0].time, "marks recorded out of time order: {:?}", w);
    }
    for (t, se) in s.tasks.iter().zip(&s.se).filter(|(t, _)| !t.is_idle) {
        let e = t.exit_time.expect("exited");
        assert!(e <= s.now(), "{} exited in the future", t.name);
        assert!(se.sum_exec_runtime <= e, "{} ran longer than it lived", t.name);
    }
}

#[test]
fn stepping_does_not_perturb_the_run() {
    // testkit's step / step_until must dispatch exactly what run() does.
    let wl = random_graph(42, 8);
    let r = run("test-smt2", v6_6(), &wl, 42);
    let mut s = sim("test-smt2", v6_6(), &wl, 42);
    s.step_until(3_000_000);
    s.step_until(3_000_000);
    s.step_until(7_777_777);
    assert!(s.run_checked(10 * SEC, 0));
    assert_eq!(s.now(), r.outcome.end_time);
    assert_eq!(format!("{:?}", s.wake), format!("{:?}", r.stats.wake));
    assert_eq!(format!("{:?}", s.sched), format!("{:?}", r.stats.cpus));
}

/// Every kernel profile, and each mailing-list change on the kernel it was judged on, keeps the
/// invariants on random task graphs: CFS picking (v4.15, v5.19), delayed dequeue (v6.12), the
/// shared runqueue (v6.5 + SHARED_RUNQ, gated or not), the SIS filter (v6.0 + SIS_FILTER) and
/// the filter's whole series (v6.0 + its five patches).
#[test]
fn fuzzed_task_graphs_keep_the_invariants_under_every_kernel_profile_and_change() {
    let cases: &[(&str, &[&str])] = &[
        ("v4.15", &[]),
        ("v5.19", &["TTWU_QUEUE_IDLE"]),
        ("v6.0", &["SIS_FILTER"]),
        ("v6.5", &["SHARED_RUNQ"]),
        // At an odd index: odd seeds run it on the SMT machine, where its LLC state lives.
        ("v6.0", &["SIS_UTIL_IDLE_CORE", "SIS_IDLE_CORE_LIMIT", "SIS_IDLE_CORE_PENDING", "SIS_LLC_BUSY", "SIS_FILTER"]),
        ("v6.5", &["SHARED_RUNQ", "SHARED_RUNQ_GATED"]),
        ("v6.7", &["NEWIDLE_SKIP_IPI"]),
        ("v6.12", &[]),
    ];
    for (i, (kernel, changes)) in cases.iter().enumerate() {
        let mut f = Features::for_kernel(kernel).unwrap();
        f.apply(&changes.join(",")).unwrap();
        f.check().unwrap();
        for seed in [11u64 + i as u64, 23 + i as u64] {
            let (machine, n) = if seed % 2 == 0 { ("test-2x4", 16) } else { ("test-smt2", 8) };
            let wl = random_graph(seed, n);
            let s = run_fully_checked_with(machine, f, &wl, seed, 30 * SEC);
            assert_eq!(s.live_tasks(), 0, "{kernel} {changes:?} seed {seed}: tasks left");
        }
    }
}

#[test]
fn ping_pong_pair_completes_every_round_trip() {
    let r = run("test-smt2", v6_6(), &ping_pong(1, 1000), 1);
    assert!(!r.outcome.capped, "run hit the cap");
    assert_eq!(r.outcome.task_exit.iter().filter(|e| e.is_some()).count(), 2);
    // 2 wakeups per round trip (plus possibly none at start).
    assert!(r.stats.wake.wakeups >= 2000 - 2 && r.stats.wake.wakeups <= 2000 + 2, "wakeups {}", r.stats.wake.wakeups);
    let per_op = r.outcome.end_time as f64 / 1000.0;
    eprintln!("usecs/op {:.3} events {} ipis {} polls {} wakelist {} direct {}", per_op / 1000.0, r.events, r.stats.wake.ipis_sent, r.stats.wake.poll_wakes, r.stats.wake.wakelist_queued, r.stats.wake.direct_enqueue);
    assert!(per_op > 1000.0 && per_op < 100_000.0, "per op {per_op} ns");
}
