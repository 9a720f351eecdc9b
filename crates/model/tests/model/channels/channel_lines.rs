//! A pipe's state has a location: each read and write takes `pipe->mutex` and the ring it
//! guards, so ends on different CPUs pull the pipe's lines back and forth, and ops on the same
//! pipe from two CPUs at once serialise.
use crate::common::*;
use wakesim_engine::Time;
use wakesim_machine::CpuSet;
use wakesim_workloads::{Op, TaskSpec, Workload};

const MSGS: u64 = 2_000;

/// One writer streaming `MSGS` messages of `bytes` into a pipe large enough never to block it,
/// one reader draining them; each pinned to its CPU. With `writers` = 2 a second writer on
/// `cpus[2]` writes as many again.
fn stream(cpus: &[usize], writers: usize, bytes: u64) -> Workload {
    let mut chan = pipe("p");
    chan.capacity = u64::MAX / 2;
    let total = MSGS * writers as u64;
    let reader = vec![Op::LoopStart { count: total, end: 2 }, Op::Recv { chan: 0, bytes }, Op::LoopEnd { start: 0 }, Op::Exit];
    let writer = vec![Op::LoopStart { count: MSGS, end: 2 }, Op::Send { chan: 0, bytes }, Op::LoopEnd { start: 0 }, Op::Exit];
    let pin = |mut t: TaskSpec, cpu: usize| {
        t.allowed = Some(CpuSet::from_cpus([cpu]));
        t
    };
    let mut tasks = vec![pin(TaskSpec::new("reader", reader), cpus[0])];
    for w in 0..writers {
        tasks.push(pin(TaskSpec::new(format!("writer{w}"), writer.clone()), cpus[1 + w]));
    }
    Workload { name: "stream".into(), tasks, channels: vec![chan], futexes: 0, reporter: Box::new(Elapsed), duration: None }
}

/// Elapsed simulated time of `wl` on test-2x4 with `pipe_lines` set to `lines`.
fn elapsed(wl: &Workload, lines: u64) -> (Time, u64) {
    let mut line_llc = 0;
    let r = sim_with("test-2x4", wl, 1, |cfg| {
        cfg.costs.pipe_lines = lines;
        line_llc = cfg.costs.line.llc;
    })
    .run();
    assert!(!r.outcome.capped, "the stream finishes");
    (r.outcome.end_time, line_llc)
}

#[test]
fn ends_on_two_cores_pay_a_transfer_per_pipe_line_per_message() {
    // CPUs 0 and 2 are different cores of one LLC on test-2x4 (CPU 1 is 0's SMT sibling).
    let wl = stream(&[0, 2], 1, 100);
    let (without, line) = elapsed(&wl, 0);
    let (with, _) = elapsed(&wl, 4);
    // Both ends run at once, each paying 4 transfers per message: the stream slows by about
    // 4 transfers per message, however the two sides overlap.
    let per_msg = (with - without) as f64 / MSGS as f64;
    let expect = 4.0 * line as f64;
    assert!(per_msg > 0.5 * expect && per_msg < 2.5 * expect, "{per_msg:.0} ns more per message, 4 lines of {line} ns");
}

#[test]
fn ends_on_one_cpu_keep_the_pipe_lines_local() {
    let wl = stream(&[3, 3], 1, 100);
    let (without, line) = elapsed(&wl, 0);
    let (with, _) = elapsed(&wl, 4);
    let per_msg = (with - without) as f64 / MSGS as f64;
    assert!(per_msg < line as f64, "{per_msg:.0} ns more per message with both ends on one CPU");
}

#[test]
fn writers_on_two_cpus_serialise_on_the_pipe() {
    // 32 KiB writes: the copy under pipe->mutex dominates each op.
    let bytes = 32 * 1024;
    let cfg = config("test-2x4", Default::default(), 1);
    let hold = 2 * cfg.costs.copy(bytes) + cfg.costs.pipe_send + cfg.costs.pipe_recv;
    let (two, _) = elapsed(&stream(&[0, 2, 4], 2, bytes), 4);
    // Every write and read holds the one mutex: the 2 × MSGS messages' writes and reads cannot
    // overlap (without it the reader's own reads, about half of this, would bound the run).
    assert!(two >= 2 * MSGS * hold, "the stream took {two} ns, below 2 × {MSGS} × {hold} ns of serialised copies");
}

/// A writer that keeps a channel of 8 messages full while its slower reader (5 µs of work per
/// message) drains `MSGS` messages; returns the wakeups of the run (the writer's, the reader's timer and any
/// wake of a reader that found the channel empty).
fn writer_wakeups(kind: wakesim_workloads::ChanKind) -> u64 {
    let mut chan = pipe("c");
    chan.kind = kind;
    chan.capacity = 8 * 100;
    let reader = vec![
        Op::Sleep(wakesim_workloads::Dur::Fixed(wakesim_engine::MSEC)),
        Op::LoopStart { count: MSGS, end: 4 },
        Op::Recv { chan: 0, bytes: 100 },
        Op::Compute(wakesim_workloads::Dur::Fixed(5 * wakesim_engine::USEC)),
        Op::LoopEnd { start: 1 },
        Op::Exit,
    ];
    let writer = vec![Op::LoopStart { count: MSGS, end: 2 }, Op::Send { chan: 0, bytes: 100 }, Op::LoopEnd { start: 0 }, Op::Exit];
    let mut r = TaskSpec::new("reader", reader);
    r.allowed = Some(CpuSet::from_cpus([0]));
    let mut w = TaskSpec::new("writer", writer);
    w.allowed = Some(CpuSet::from_cpus([2]));
    let wl = Workload { name: "fill".into(), tasks: vec![r, w], channels: vec![chan], futexes: 0, reporter: Box::new(Elapsed), duration: None };
    let res = sim_with("test-2x4", &wl, 1, |_| {}).run();
    assert!(!res.outcome.capped);
    res.stats.wake.wakeups
}

#[test]
fn unix_socket_writers_wake_once_the_queue_drains_to_a_quarter_pipe_writers_at_each_read() {
    use wakesim_workloads::ChanKind;
    let pipe = writer_wakeups(ChanKind::Pipe);
    let unix = writer_wakeups(ChanKind::UnixStream);
    // A pipe read that frees a slot wakes the writer each time the writer is blocked; a unix
    // socket's writer sleeps until 6 of the 8 queued messages are gone (unix_writable()).
    assert!(unix * 3 < pipe, "{unix} wakeups with a unix socket, {pipe} with a pipe");
    assert!(unix >= MSGS / 8, "the unix writer still has to be woken for every refill: {unix}");
}
