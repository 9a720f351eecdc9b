//! A futex op costs its own work (`futex_wait` / `futex_wake` beyond the syscall) and the
//! futex has a location: the waiter queues on the hash bucket and its `futex_q`, the waker on
//! another CPU pulls those lines over to unqueue it, and the woken waiter pulls them back.
mod common;
use common::*;
use wakesim_costs::CostProfile;
use wakesim_engine::Time;
use wakesim_workloads::{Op, TaskSpec, Workload};

const ROUNDS: u64 = 1_000;

/// Two tasks pinned to `a` and `b` waking each other `ROUNDS` times through futexes 0 and 1
/// (the futex ping-pong `wakesim calibrate` measures).
fn ping_pong(a: usize, b: usize) -> Workload {
    let first = looped(ROUNDS, vec![Op::FutexWake { futex: 1, n: 1 }, Op::FutexWait { futex: 0 }]);
    let second = looped(ROUNDS, vec![Op::FutexWait { futex: 1 }, Op::FutexWake { futex: 0, n: 1 }]);
    let tasks = vec![pinned(task("a", first), &[a]), pinned(task("b", second), &[b])];
    Workload { name: "futex ping-pong".into(), tasks, channels: Vec::new(), futexes: 2, reporter: Box::new(Elapsed), duration: None }
}

/// Elapsed simulated time of `wl` on test-2x4 with `set` applied to the costs; and those costs.
fn elapsed(wl: &Workload, set: impl FnOnce(&mut CostProfile)) -> (Time, CostProfile) {
    let mut costs = None;
    let r = sim_with("test-2x4", wl, 1, |cfg| {
        set(&mut cfg.costs);
        costs = Some(cfg.costs.clone());
    })
    .run();
    assert!(!r.outcome.capped, "the ping-pong finishes");
    (r.outcome.end_time, costs.unwrap())
}

#[test]
fn a_wake_from_another_core_pulls_the_futex_lines_there_and_back() {
    // CPUs 0 and 2: two cores of one LLC on test-2x4.
    let wl = ping_pong(0, 2);
    let (without, c) = elapsed(&wl, |c| c.futex_lines = 0);
    let (with, _) = elapsed(&wl, |c| c.futex_lines = 4);
    // Per round trip two wakes; each wake's futex_wake() pulls the 4 lines from the waiter's CPU
    // and the woken waiter pulls them back: 16 transfers, all on the critical path.
    let per_rt = (with - without) as f64 / ROUNDS as f64;
    let expect = 16.0 * c.line.llc as f64;
    assert!((per_rt - expect).abs() < 0.1 * expect, "{per_rt:.0} ns more per round trip, expected {expect:.0} (16 × line.llc)");
}

#[test]
fn waiter_and_waker_on_one_cpu_keep_the_futex_lines_local() {
    // With a local access free (line.local = 0, an L1 hit) and the lines starting on CPU 0,
    // the line count must change nothing at all when both tasks run there.
    let wl = ping_pong(0, 0);
    let (without, _) = elapsed(&wl, |c| (c.futex_lines, c.line.local) = (0, 0));
    let (with, _) = elapsed(&wl, |c| (c.futex_lines, c.line.local) = (4, 0));
    assert_eq!(with, without, "the run's length changed with the futex's line count on one CPU");
}

#[test]
fn a_cross_cpu_wake_waits_for_the_wakers_futex_work() {
    // futex_wake() runs before the wakeup it leads to: 2 wakes per round trip on the critical
    // path. (The waker's own futex_wait after it overlaps the wakee's wakeup.)
    let wl = ping_pong(0, 2);
    let (base, _) = elapsed(&wl, |c| c.futex_wake = 0);
    let (more, _) = elapsed(&wl, |c| c.futex_wake = 300);
    let per_rt = (more - base) as f64 / ROUNDS as f64;
    assert!((per_rt - 600.0).abs() < 60.0, "futex_wake 300 ns added {per_rt:.0} ns per round trip, expected 600");
}

#[test]
fn a_wait_that_finds_a_pending_wake_still_pays_the_bucket_work() {
    // One task posts and consumes its own futex: no sleep, no switch; every ns of both calls
    // adds to the run.
    let prog = vec![Op::LoopStart { count: ROUNDS, end: 3 }, Op::FutexWake { futex: 0, n: 1 }, Op::FutexWait { futex: 0 }, Op::LoopEnd { start: 0 }, Op::Exit];
    let wl = Workload { name: "post+wait".into(), tasks: vec![TaskSpec::new("t", prog)], channels: Vec::new(), futexes: 1, reporter: Box::new(Elapsed), duration: None };
    let (base, _) = elapsed(&wl, |c| (c.futex_wait, c.futex_wake) = (0, 0));
    let (both, _) = elapsed(&wl, |c| (c.futex_wait, c.futex_wake) = (200, 100));
    let per_loop = (both - base) as f64 / ROUNDS as f64;
    assert!((per_loop - 300.0).abs() < 15.0, "{per_loop:.0} ns more per post + wait, expected 300");
}
