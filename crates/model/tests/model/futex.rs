//! A futex op costs its own work (`futex_wait` / `futex_wake` beyond the syscall) and the
//! futex has a location: the waiter queues on the hash bucket and its `futex_q`, the waker on
//! another CPU pulls those lines over to unqueue it, and the woken waiter pulls them back.
//!
//! The three wakes of the behaviour language: a semaphore post (`FutexWake`, kept when nobody
//! waits), `FUTEX_WAKE` proper (`FutexWakeWaiters`, lost when nobody waits) and a write to a
//! polled pipe (`FutexWakeAllSync`: every waiter, WF_SYNC, later waits pass).
use crate::common::*;
use wakesim_costs::CostProfile;
use wakesim_engine::{Time, MSEC, USEC};
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

fn one_futex(tasks: Vec<TaskSpec>) -> Workload {
    Workload { name: "futex".into(), tasks, channels: vec![], futexes: 1, reporter: Box::new(Elapsed), duration: Some(50 * MSEC) }
}

/// A waiter that starts waiting after `delay`, and a waker that wakes at once with `wake`.
fn late_waiter(wake: Op) -> Workload {
    one_futex(vec![
        task("waiter", vec![sleep(MSEC), Op::FutexWait { futex: 0 }, Op::Exit]),
        task("waker", vec![compute(10 * USEC), wake, Op::Exit]),
    ])
}

#[test]
fn a_futex_wake_with_no_waiter_is_lost_but_a_semaphore_post_is_kept() {
    let lost = run("test-smt2", v6_6(), &late_waiter(Op::FutexWakeWaiters { futex: 0, n: 1 }), 1);
    assert!(lost.outcome.task_exit[1].is_some(), "the waker finished");
    assert!(lost.outcome.task_exit[0].is_none(), "the wake was lost: the waiter still waits");
    let kept = run("test-smt2", v6_6(), &late_waiter(Op::FutexWake { futex: 0, n: 1 }), 1);
    assert!(kept.outcome.task_exit[0].is_some_and(|t| t < 2 * MSEC), "the post was kept: the wait passed");
}

#[test]
fn futex_wake_waiters_wakes_at_most_n_of_the_tasks_waiting_now() {
    let mut tasks: Vec<TaskSpec> = (0..3).map(|i| task(&format!("w{i}"), vec![Op::FutexWait { futex: 0 }, Op::Exit])).collect();
    tasks.push(task("waker", vec![sleep(MSEC), Op::FutexWakeWaiters { futex: 0, n: 2 }, sleep(MSEC), Op::FutexWakeWaiters { futex: 0, n: 5 }, Op::Exit]));
    let r = run("test-smt2", v6_6(), &one_futex(tasks), 1);
    let exits: Vec<_> = r.outcome.task_exit[..3].iter().map(|t| t.unwrap()).collect();
    let first = exits.iter().filter(|&&t| t < 2 * MSEC).count();
    assert_eq!(first, 2, "the first wake woke two of three: {exits:?}");
    assert!(exits.iter().filter(|&&t| t > 2 * MSEC).count() == 1, "the second woke the last one (not 5): {exits:?}");
    assert!(!r.outcome.capped);
}

#[test]
fn wake_all_sync_wakes_every_waiter_with_wf_sync_and_later_waits_pass() {
    let n = 5;
    let mut tasks: Vec<TaskSpec> = (0..n).map(|i| task(&format!("w{i}"), vec![Op::FutexWait { futex: 0 }, Op::Exit])).collect();
    tasks.push(task("late", vec![sleep(3 * MSEC), Op::FutexWait { futex: 0 }, Op::FutexWait { futex: 0 }, Op::Exit]));
    tasks.push(task("waker", vec![sleep(MSEC), Op::FutexWakeAllSync { futex: 0 }, Op::Exit]));
    let r = run("test-smt2", v6_6(), &one_futex(tasks), 1);
    assert!(!r.outcome.capped, "every task finished");
    let late = r.outcome.task_exit[n].unwrap();
    assert!((3 * MSEC..4 * MSEC).contains(&late), "the late waiter passed without a wake: {late}");
    // Wakeups: n sync (the broadcast), and two non-sync timer wakes (late's and the waker's sleeps).
    assert_eq!(r.stats.wake.wakeups_sync, n as u64);
    assert_eq!(r.stats.wake.wakeups, n as u64 + 2);
    assert_eq!(r.stats.tasks[n].nr_wakeups, 1, "only its sleep woke the late waiter");
}
