//! The three futex wakes of the behaviour language: a semaphore post (`FutexWake`, kept when
//! nobody waits), `FUTEX_WAKE` proper (`FutexWakeWaiters`, lost when nobody waits) and a write
//! to a polled pipe (`FutexWakeAllSync`: every waiter, WF_SYNC, later waits pass); and the
//! datagram send that drops instead of blocking (`SendDgram`); and `smp_call_function()` to
//! every other CPU (`CallFuncAll`).
mod common;
use common::*;
use wakesim_engine::{MSEC, USEC};
use wakesim_workloads::{Op, TaskSpec, Workload};

fn wl(tasks: Vec<TaskSpec>) -> Workload {
    Workload { name: "futex".into(), tasks, channels: vec![], futexes: 1, reporter: Box::new(Elapsed), duration: Some(50 * MSEC) }
}

/// A waiter that starts waiting after `delay`, and a waker that wakes at once with `wake`.
fn late_waiter(wake: Op) -> Workload {
    wl(vec![
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
    let r = run("test-smt2", v6_6(), &wl(tasks), 1);
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
    let r = run("test-smt2", v6_6(), &wl(tasks), 1);
    assert!(!r.outcome.capped, "every task finished");
    let late = r.outcome.task_exit[n].unwrap();
    assert!((3 * MSEC..4 * MSEC).contains(&late), "the late waiter passed without a wake: {late}");
    // Wakeups: n sync (the broadcast), and two non-sync timer wakes (late's and the waker's sleeps).
    assert_eq!(r.stats.wake.wakeups_sync, n as u64);
    assert_eq!(r.stats.wake.wakeups, n as u64 + 2);
    assert_eq!(r.stats.tasks[n].nr_wakeups, 1, "only its sleep woke the late waiter");
}

#[test]
fn a_datagram_to_a_full_buffer_is_dropped_and_the_sender_goes_on() {
    let prog = |send: fn(u32, u64) -> Op| {
        vec![Op::LoopStart { count: 10, end: 2 }, send(0, 60), Op::LoopEnd { start: 0 }, Op::Exit]
    };
    let w = |send: fn(u32, u64) -> Op| Workload {
        name: "dgram".into(),
        tasks: vec![task("sender", prog(send)), task("receiver", vec![sleep(MSEC), Op::Recv { chan: 0, bytes: 60 }, Op::Exit])],
        channels: vec![wakesim_workloads::ChannelSpec { name: "c".into(), kind: wakesim_workloads::ChanKind::UdpLoopback, capacity: 100 }],
        futexes: 0,
        reporter: Box::new(Elapsed),
        duration: None,
    };
    let dgram = run("test-smt2", v6_6(), &w(|chan, bytes| Op::SendDgram { chan, bytes }), 1);
    // The first datagram fits (60 of 100 bytes); the nine after it find 40 bytes free.
    assert_eq!(dgram.stats.wake.dgram_drops, 9);
    assert!(dgram.outcome.task_exit[0].unwrap() < MSEC, "the sender never blocked");
    assert!(!dgram.outcome.capped);
    let stream = run("test-smt2", v6_6(), &w(|chan, bytes| Op::Send { chan, bytes }), 1);
    assert_eq!(stream.stats.wake.dgram_drops, 0);
    assert!(stream.outcome.task_exit[0].is_none(), "a blocking sender waits for a reader that reads once");
}

#[test]
fn call_function_all_waits_until_every_other_cpu_has_run_it() {
    let n = 8u64;
    let one = |op: Op| {
        let mut t = task("caller", vec![op, Op::Exit]);
        t.allowed = Some(wakesim_machine::CpuSet::from_cpus([2]));
        t.start_cpu = Some(2);
        Workload { name: "call".into(), tasks: vec![t], channels: vec![], futexes: 0, reporter: Box::new(Elapsed), duration: None }
    };
    let all = run("test-smt2", v6_6(), &one(Op::CallFuncAll { wait: true }), 1);
    let single = run("test-smt2", v6_6(), &one(Op::CallFunc { cpu: 5, wait: true }), 1);
    let nowait = run("test-smt2", v6_6(), &one(Op::CallFuncAll { wait: false }), 1);
    let kicks = |r: &wakesim_model::RunResult| r.stats.wake.ipis_call_function + r.stats.wake.poll_wakes;
    // One kick per other CPU (+1: the kick that starts the task), against one for a single call.
    assert_eq!(kicks(&all), n - 1 + 1);
    assert_eq!(kicks(&single), 1 + 1);
    assert_eq!(kicks(&nowait), n - 1 + 1);
    // Waiting for seven CPUs takes longer than for one, and not waiting is quickest.
    let end = |r: &wakesim_model::RunResult| r.outcome.task_exit[0].unwrap();
    assert!(end(&all) > end(&single), "{} vs {}", end(&all), end(&single));
    assert!(end(&nowait) < end(&all), "{} vs {}", end(&nowait), end(&all));
}
