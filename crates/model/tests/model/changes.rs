//! The five mailing-list changes show their mechanism in the statistics (issue 3's evidence),
//! each against the kernel profile it was measured on.
use crate::common::*;
use wakesim_engine::USEC;
use wakesim_machine::CpuSet;
use wakesim_model::Features;
use wakesim_workloads::{Dur, Op, TaskSpec, Workload};

fn kernel(k: &str, changes: &[&str]) -> Features {
    let mut f = Features::for_kernel(k).unwrap();
    f.apply(&changes.join(",")).unwrap();
    f.check().unwrap();
    f
}

/// `pairs` ping-pong pairs computing ~`work` between messages.
fn loaded_pairs(pairs: u32, loops: u64, work: u64) -> Workload {
    let mut tasks = Vec::new();
    let mut channels = Vec::new();
    for i in 0..pairs {
        let (a, b) = (2 * i, 2 * i + 1);
        channels.push(pipe(&format!("a{i}")));
        channels.push(pipe(&format!("b{i}")));
        let c = Op::Compute(Dur::Exp { mean: work });
        tasks.push(TaskSpec::new(
            format!("ping{i}"),
            vec![Op::LoopStart { count: loops, end: 4 }, Op::Send { chan: a, bytes: 100 }, c.clone(), Op::Recv { chan: b, bytes: 100 }, Op::LoopEnd { start: 0 }, Op::Exit],
        ));
        tasks.push(TaskSpec::new(
            format!("pong{i}"),
            vec![Op::LoopStart { count: loops, end: 4 }, Op::Recv { chan: a, bytes: 100 }, c, Op::Send { chan: b, bytes: 100 }, Op::LoopEnd { start: 0 }, Op::Exit],
        ));
    }
    Workload { name: "pairs".into(), tasks, channels, futexes: 0, reporter: Box::new(Elapsed), duration: None }
}

#[test]
fn ttwu_queue_idle_waker_takes_no_remote_rq_lock_for_an_idle_target_and_kicks_are_unchanged() {
    let wl = ping_pong(1, 2000);
    let base = run("test-smt2", kernel("v5.19", &[]), &wl, 1);
    let chg = run("test-smt2", kernel("v5.19", &["+TTWU_QUEUE_IDLE"]), &wl, 1);
    let (b, c) = (&base.stats.wake, &chg.stats.wake);
    // v5.19 offloads only wakees still descheduling (WF_ON_CPU): about half of these wakeups.
    assert!(b.remote_enqueue > 1500, "v5.19 enqueues remotely: {}", b.remote_enqueue);
    assert!(c.remote_enqueue < 10, "with the change the idle target enqueues itself: {}", c.remote_enqueue);
    assert!(c.wakelist_queued > 3000, "wakelist {}", c.wakelist_queued);
    let kicks = |w: &wakesim_stats::WakeStats| (w.ipis_sent + w.poll_wakes) as f64;
    let ratio = kicks(c) / kicks(b);
    assert!((0.95..1.05).contains(&ratio), "IPIs + polling wakes changed: {} vs {}", kicks(b), kicks(c));
    assert!(chg.outcome.end_time < base.outcome.end_time, "the waker is freed sooner");
}

#[test]
fn sis_filter_probes_fewer_cpus_per_scan_in_a_loaded_llc() {
    let wl = loaded_pairs(6, 1500, 20 * USEC);
    let base = run("test-smt2", kernel("v6.0", &[]), &wl, 2);
    let chg = run("test-smt2", kernel("v6.0", &["+SIS_FILTER"]), &wl, 2);
    let per = |w: &wakesim_stats::WakeStats| w.sis_probes as f64 / w.sis_scans.max(1) as f64;
    let (b, c) = (per(&base.stats.wake), per(&chg.stats.wake));
    assert!(base.stats.wake.sis_scans > 1000 && chg.stats.wake.sis_scans > 1000);
    assert!(c < 0.8 * b, "probes per scan {b:.2} -> {c:.2}");
}

#[test]
fn shared_runq_pulls_come_from_the_shared_queue_and_cost_shard_locks_and_migrations() {
    let wl = loaded_pairs(20, 400, 30 * USEC);
    let base = run("test-2x4", kernel("v6.5", &[]), &wl, 3);
    let chg = run("test-2x4", kernel("v6.5", &["+SHARED_RUNQ"]), &wl, 3);
    let (b, c) = (&base.stats.wake, &chg.stats.wake);
    assert_eq!(b.shard_lock_acquires, 0);
    assert!(c.shared_runq_pulls > 100, "pulls {}", c.shared_runq_pulls);
    assert!(c.shard_lock_acquires > 10 * c.shared_runq_pulls, "every insert and pick takes a shard lock");
    assert!(c.shard_lock_contended > 0, "shard locks are contended");
    let mig = |w: &wakesim_stats::WakeStats| w.migrations_by_dist.iter().sum::<u64>();
    assert!(mig(c) > mig(b), "migrations {} -> {}", mig(b), mig(c));
}

#[test]
fn gated_shared_runq_skips_newidle_at_and_below_the_llc() {
    let wl = loaded_pairs(20, 400, 30 * USEC);
    let v3 = run("test-2x4", kernel("v6.5", &["+SHARED_RUNQ"]), &wl, 3);
    let v4 = run("test-2x4", kernel("v6.5", &["+SHARED_RUNQ", "+SHARED_RUNQ_GATED"]), &wl, 3);
    let level = |r: &wakesim_model::RunResult, name: &str| r.stats.newidle.levels.iter().find(|l| l.name == name).map_or(0, |l| l.calls);
    assert!(level(&v3, "MC") > 0, "v3 still walks MC");
    assert_eq!(level(&v4, "SMT") + level(&v4, "MC"), 0, "gated: no newidle at SMT/MC");
}

#[test]
fn newidle_skip_ipi_stops_newidle_on_ipi_only_wakeups() {
    let mut t = TaskSpec::new(
        "ipistorm",
        vec![Op::LoopStart { count: 1000, end: 2 }, Op::CallFunc { cpu: 9, wait: true }, Op::LoopEnd { start: 0 }, Op::Exit],
    );
    t.allowed = Some(CpuSet::from_cpus([1]));
    let wl = Workload { name: "ipistorm".into(), tasks: vec![t], channels: vec![], futexes: 0, reporter: Box::new(Elapsed), duration: None };
    let base = run("test-2x4", kernel("v6.7", &[]), &wl, 1);
    let chg = run("test-2x4", kernel("v6.7", &["+NEWIDLE_SKIP_IPI"]), &wl, 1);
    // Some calls find the target polling (a flag write that makes it leave the idle loop, run
    // schedule_idle and, in v6.7, newidle); the others arrive while it is on that path with
    // the flag cleared and take a real IPI, handled without leaving the loop again.
    let kicked = base.stats.newidle.from_idle_no_task;
    assert!(kicked >= 250 && kicked <= base.stats.wake.poll_wakes, "{kicked} IPI-only kicks, {} flag writes", base.stats.wake.poll_wakes);
    assert_eq!(chg.stats.newidle.from_idle_no_task, 0);
}

#[test]
fn delayed_dequeue_keeps_an_ineligible_blocked_task_queued_and_wakes_it_in_place() {
    // Three tasks share CPU 0: each computes 1.5 ms, then sleeps 100 us. A task that blocks after
    // running past its fair share is ineligible: with DELAY_DEQUEUE it stays queued, and its
    // timer wakeup finds it there (ttwu_runnable), with no placement decision.
    let tasks = (0..3)
        .map(|i| {
            let mut t = TaskSpec::new(
                format!("t{i}"),
                vec![
                    Op::LoopStart { count: 40, end: 3 },
                    Op::Compute(Dur::Fixed(1500 * USEC)),
                    Op::Sleep(Dur::Fixed(100 * USEC)),
                    Op::LoopEnd { start: 0 },
                    Op::Exit,
                ],
            );
            t.allowed = Some(CpuSet::from_cpus([0]));
            t
        })
        .collect();
    let wl = Workload { name: "share".into(), tasks, channels: vec![], futexes: 0, reporter: Box::new(Elapsed), duration: None };
    let v66 = run("test-smt2", kernel("v6.6", &[]), &wl, 1);
    let v612 = run("test-smt2", kernel("v6.12", &[]), &wl, 1);
    assert!(v612.stats.wake.wakeups_queued > 10, "v6.12 queued wakeups {}", v612.stats.wake.wakeups_queued);
    assert!(v66.stats.wake.wakeups_queued * 4 < v612.stats.wake.wakeups_queued, "v6.6 {}", v66.stats.wake.wakeups_queued);
}
