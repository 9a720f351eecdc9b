//! Each message has a location of its own, apart from the channel's state: its writer's CPU
//! has it in cache until that CPU has written more message memory than its private cache holds.
//! A reader on another CPU pulls the message's lines over (`pipe_msg_lines` / `sock_msg_lines`);
//! a socket message read after it left the cache costs `sock_msg_cold`.
use crate::common::*;
use wakesim_engine::Time;
use wakesim_machine::CpuSet;
use wakesim_stats::WakeStats;
use wakesim_workloads::{ChanKind, ChannelSpec, Op, TaskSpec, Workload};

const MSGS: u64 = 1_000;

fn chan(kind: ChanKind) -> ChannelSpec {
    ChannelSpec { name: "c".into(), kind, capacity: u64::MAX / 2 }
}

/// `MSGS` repetitions of `op`, starting at program counter `at`.
fn repeat(op: Op, at: u32) -> Vec<Op> {
    vec![Op::LoopStart { count: MSGS, end: at + 2 }, op, Op::LoopEnd { start: at }]
}

fn one_channel(name: &str, tasks: Vec<TaskSpec>, kind: ChanKind) -> Workload {
    Workload { name: name.into(), tasks, channels: vec![chan(kind)], futexes: 0, reporter: Box::new(Elapsed), duration: None }
}

/// A writer streaming `MSGS` 100 B messages on `cpus[1]`, a reader draining them on `cpus[0]`.
fn stream(kind: ChanKind, cpus: [usize; 2]) -> Workload {
    let pinned = |name: &str, op: Op, cpu: usize| {
        let mut t = TaskSpec::new(name, [repeat(op, 0), vec![Op::Exit]].concat());
        t.allowed = Some(CpuSet::from_cpus([cpu]));
        t
    };
    let tasks = vec![pinned("reader", Op::Recv { chan: 0, bytes: 100 }, cpus[0]), pinned("writer", Op::Send { chan: 0, bytes: 100 }, cpus[1])];
    one_channel("stream", tasks, kind)
}

/// One task that queues `MSGS` 100 B messages, then reads them all back.
fn fill_then_drain(kind: ChanKind) -> Workload {
    let prog = [repeat(Op::Send { chan: 0, bytes: 100 }, 0), repeat(Op::Recv { chan: 0, bytes: 100 }, 3), vec![Op::Exit]].concat();
    one_channel("fill", vec![TaskSpec::new("t", prog)], kind)
}

/// Elapsed time, message counters and the LLC line transfer of `wl` on test-2x4, with the
/// channels' own lines free (so only the messages' costs differ between runs) and `adj` applied.
fn run(wl: &Workload, adj: impl FnOnce(&mut wakesim_costs::CostProfile)) -> (Time, WakeStats, Time) {
    let mut line = 0;
    let r = sim_with("test-2x4", wl, 1, |cfg| {
        cfg.costs.pipe_lines = 0;
        cfg.costs.sock_lines = 0;
        adj(&mut cfg.costs);
        line = cfg.costs.line.llc;
    })
    .run();
    assert!(!r.outcome.capped, "the run finishes");
    (r.outcome.end_time, r.stats.wake, line)
}

#[test]
fn a_message_read_on_another_core_pulls_its_lines_over() {
    // CPUs 0 and 2: two cores of one LLC on test-2x4.
    let wl = stream(ChanKind::Pipe, [0, 2]);
    let (without, _, line) = run(&wl, |c| c.pipe_msg_lines = 0);
    let (with, w, _) = run(&wl, |c| c.pipe_msg_lines = 6);
    assert_eq!(w.msgs_read, MSGS);
    assert_eq!(w.msgs_cross_cpu, MSGS, "every message was written on CPU 2 and read on CPU 0");
    let per_msg = (with - without) as f64 / MSGS as f64;
    let expect = 6.0 * line as f64;
    assert!(per_msg > 0.5 * expect && per_msg < 1.5 * expect, "{per_msg:.0} ns more per message, 6 lines of {line} ns");
}

#[test]
fn a_message_read_on_its_writers_cpu_pays_no_lines() {
    let wl = stream(ChanKind::UnixStream, [3, 3]);
    let (without, _, _) = run(&wl, |c| c.sock_msg_lines = 0);
    let (with, w, _) = run(&wl, |c| c.sock_msg_lines = 6);
    assert_eq!(w.msgs_cross_cpu, 0);
    assert_eq!(with, without);
}

#[test]
fn socket_messages_queued_past_the_private_cache_are_read_cold() {
    // 1000 skbs of 768 B truesize behind a 64 KiB cache: all but the last ~85 written were
    // evicted by the time the task reads them.
    let wl = fill_then_drain(ChanKind::UnixStream);
    let cache = 64 << 10;
    let (warm, _, _) = run(&wl, |c| {
        c.private_cache_bytes = cache;
        c.sock_msg_cold = 0;
    });
    let (cold, w, _) = run(&wl, |c| {
        c.private_cache_bytes = cache;
        c.sock_msg_cold = 1_000;
    });
    let still_cached = cache / 768;
    assert!(w.msgs_cold.abs_diff(MSGS - still_cached) <= 1, "{} cold of {MSGS}, expected {}", w.msgs_cold, MSGS - still_cached);
    assert_eq!(cold - warm, w.msgs_cold * 1_000, "each cold message costs its reader sock_msg_cold");
}

#[test]
fn a_private_cache_larger_than_the_queue_keeps_every_message_warm() {
    let (_, w, _) = run(&fill_then_drain(ChanKind::UnixStream), |c| {
        c.private_cache_bytes = 1 << 30;
        c.sock_msg_cold = 1_000;
    });
    assert_eq!((w.msgs_read, w.msgs_cold), (MSGS, 0));
}

#[test]
fn pipe_messages_are_never_read_cold() {
    // 100 KB of pipe data behind a 4 KiB cache: evicted, but a pipe's pages stream (measured).
    let wl = fill_then_drain(ChanKind::Pipe);
    let (a, w, _) = run(&wl, |c| c.private_cache_bytes = 4 << 10);
    let (b, _, _) = run(&wl, |c| c.private_cache_bytes = 1 << 30);
    assert_eq!(w.msgs_cold, MSGS - (4 << 10) / 100, "the pipe's messages are counted as evicted");
    assert_eq!(a, b, "but cost nothing more");
}
