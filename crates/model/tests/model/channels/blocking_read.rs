//! A read that finds its pipe empty sleeps after a check (`pipe_wait`), and does its work
//! (`pipe_recv` and the copy) only when it completes after the wakeup; a read that finds data
//! pays only the work. The sleeper's own CPU time, which EEVDF charges it, is what moves.
use crate::common::*;
use wakesim_engine::{Time, USEC};
use wakesim_workloads::Op;

/// The reader on CPU 1 blocks on an empty pipe; the writer on CPU 2 writes once, 50 µs later.
/// Returns the reader's CPU time with `pipe_wait` = `wait` and `pipe_recv` = `recv`.
fn reader_time(wait: Time, recv: Time, block: bool) -> Time {
    let delay = if block { 50 * USEC } else { 0 };
    let reader = vec![compute(if block { 0 } else { 100 * USEC }), Op::Recv { chan: 0, bytes: 100 }, Op::Exit];
    let writer = vec![compute(delay), Op::Send { chan: 0, bytes: 100 }, Op::Exit];
    let tasks = vec![pinned(task("reader", reader), &[1]), pinned(task("writer", writer), &[2])];
    let r = sim_with("test-2x4", &workload(tasks, 1, 0), 1, |cfg| {
        cfg.costs.pipe_wait = wait;
        cfg.costs.pipe_recv = recv;
    })
    .run();
    assert!(!r.outcome.capped);
    let t = r.stats.tasks.iter().find(|t| t.name == "reader").expect("reader");
    t.runtime_ns
}

#[test]
fn a_blocking_read_pays_its_check_before_it_sleeps_and_its_work_once_after_the_wakeup() {
    let base = reader_time(0, 0, true);
    // The check is paid once, by the reader.
    assert_eq!(reader_time(700, 0, true) - base, 700);
    // The read's own work is paid once, not also before the sleep.
    assert_eq!(reader_time(0, 900, true) - base, 900);
}

#[test]
fn a_read_that_finds_data_pays_no_check() {
    let base = reader_time(0, 0, false);
    assert_eq!(reader_time(700, 0, false), base, "the data was there: no check and sleep");
    assert_eq!(reader_time(0, 900, false) - base, 900);
}
