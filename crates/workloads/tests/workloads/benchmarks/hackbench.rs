//! hackbench (rt-tests) and perf bench sched messaging: the task graph matches the tools'
//! arithmetic, the time is the start-to-last-reap span, and the output parses as mmtests
//! parses it.

use crate::common::*;
use wakesim_workloads::bench::hackbench::{data_capacity, HackbenchReporter, MARK_END, MARK_START};
use wakesim_workloads::{ChanKind, Op};

/// `MMTests::ExtractHackbench` (gormanm/mmtests@c2574e09^:bin/lib/MMTests/ExtractHackbench.pm):
/// `/Total time: ([0-9.]*)/`; and the current shellpack's `grep "Total time:" | awk '{print $3}'`
/// (shellpack_src/src/hackbench/parse-results).
fn mmtests_total_time(out: &str) -> Option<f64> {
    let line = out.lines().find(|l| l.contains("Total time:"))?;
    let via_regex: f64 = line.split("Total time: ").nth(1)?.split(|c: char| !(c.is_ascii_digit() || c == '.')).next()?.parse().ok()?;
    let via_awk: f64 = line.split_whitespace().nth(2)?.parse().ok()?;
    assert_eq!(via_regex, via_awk, "{line}");
    Some(via_regex)
}

/// rt-tests prints `Time: %lu.%03lu`.
fn rt_time(out: &str) -> Option<f64> {
    let l = out.lines().find(|l| l.starts_with("Time: "))?;
    let v = &l[6..];
    let (a, b) = v.split_once('.')?;
    assert_eq!(b.len(), 3, "{l}");
    assert!(a.chars().all(|c| c.is_ascii_digit()));
    v.parse().ok()
}

#[test]
fn graph_is_40_tasks_per_group_and_fds_squared_times_loops_messages() {
    for (cmd, g, f, l, d) in [
        ("hackbench -g 3 -l 7", 3, 20, 7, 100),
        ("hackbench -g 2 -f 5 -l 4 -s 64 -p -T", 2, 5, 4, 64),
        ("perf bench sched messaging -g 4 -l 9", 4, 20, 9, 100),
        ("perf bench sched messaging -p -t -g 1", 1, 20, 100, 100),
    ] {
        let w = build("test-smt2", cmd);
        assert_eq!(w.tasks.len() as u32, 2 * g * f + 1, "{cmd}: main + 2*fds per group");
        let c = totals(&w);
        let data = (g * f) as usize;
        // Every data channel: fds senders x loops messages in, fds*loops reads out, same bytes.
        for ch in 0..data {
            assert_eq!(c.sent[ch], (u64::from(f * l), u64::from(f * l * d)), "{cmd} ch{ch}");
            assert_eq!(c.received[ch], c.sent[ch], "{cmd} ch{ch}");
        }
        let reaps = c.sent.get(data + 1).map_or(0, |x| x.0);
        assert_eq!(c.sends() - c.sent[data].0 - reaps, u64::from(g * f * f * l), "{cmd}: messages");
        // Start: every child says ready (1 byte), main reads them all, one futex wake of all.
        assert_eq!(c.sent[data], (u64::from(2 * g * f), u64::from(2 * g * f)), "{cmd}: ready");
        assert_eq!(c.received[data], c.sent[data]);
        assert_eq!(c.futex_wakes, 1 + if cmd.contains("-T") || cmd.contains(" -t") { u64::from(2 * g * f) } else { 0 }, "{cmd}");
        assert_eq!(c.marks, 2);
        // The start is one write to the polled wakefd: a sync wake of every child.
        let starts: Vec<_> = w.tasks[0].program.iter().filter(|o| matches!(o, Op::FutexWakeAllSync { .. })).collect();
        assert_eq!(starts, vec![&Op::FutexWakeAllSync { futex: 0 }], "{cmd}");
    }
}

#[test]
fn sockets_buffer_about_278_messages_and_pipes_640() {
    // ⌈212992 / 768⌉ skbs of 100 B (truesize 256 + 512) on a unix socket; 16 pages of 40.
    assert_eq!(data_capacity(ChanKind::UnixStream, 100), 278 * 100);
    assert_eq!(data_capacity(ChanKind::Pipe, 100), 640 * 100);
    let w = build("test-smt2", "hackbench -g 1 -l 1");
    assert!(w.channels[..20].iter().all(|c| c.kind == ChanKind::UnixStream && c.capacity == 27_800));
    let w = build("test-smt2", "hackbench -i -g 1 -l 1");
    assert!(w.channels[..20].iter().all(|c| c.kind == ChanKind::TcpLoopback));
}

#[test]
fn processes_have_their_own_mm_threads_share_one() {
    let w = build("test-smt2", "hackbench -g 1 -l 1");
    let mut mms: Vec<u32> = w.tasks.iter().map(|t| t.mm).collect();
    mms.sort_unstable();
    mms.dedup();
    assert_eq!(mms.len(), w.tasks.len());
    let w = build("test-smt2", "hackbench -T -g 1 -l 1");
    assert!(w.tasks.iter().all(|t| t.mm == 1));
}

#[test]
fn runs_to_the_end_and_prints_the_tools_time() {
    let (w, r, out) = run_cmd("test-smt2", "perf bench sched messaging -g 2 -l 20", 10.0);
    assert!(!r.outcome.capped);
    assert!(out.starts_with("# Running 'sched/messaging' benchmark:\n# 20 sender and receiver processes per group\n# 2 groups == 80 processes run\n\n"), "{out}");
    let t = mmtests_total_time(&out).expect("Total time line");
    let m = w.reporter.metric(&r.outcome);
    // The printed value is the metric truncated to milliseconds.
    assert_eq!(t, (m.value * 1e3).floor() / 1e3, "{out}");
    // Every message was read; every receiver woke at least once.
    // Every task exited; main (task 0) took its stop time after reaping the last child.
    let last_reap = r.outcome.marks.iter().find(|m| m.mark == MARK_END).unwrap().time;
    assert!(r.outcome.task_exit.iter().all(|e| e.is_some()));
    assert!(r.outcome.task_exit[0].unwrap() >= last_reap);
    assert!(r.stats.wake.wakeups_sync > 40, "{}", r.stats.wake.wakeups_sync);

    let (_, _, out) = run_cmd("test-2x4", "hackbench -p -T -g 2 -l 10", 10.0);
    assert!(out.starts_with("Running in threaded mode with 2 groups using 40 file descriptors each (== 80 tasks)\nEach sender will pass 10 messages of 100 bytes\n"), "{out}");
    assert!(rt_time(&out).is_some(), "{out}");
    let (_, _, out) = run_cmd("test-2x4", "perf bench -f simple sched messaging -g 1 -l 5", 10.0);
    assert!(out.lines().next().unwrap().parse::<f64>().is_ok(), "{out}");
}

#[test]
fn time_is_start_mark_to_last_reap_truncated_to_ms() {
    use wakesim_workloads::{MarkRecord, Outcome};
    let w = build("test-smt2", "hackbench -g 1 -l 1");
    let rep = w.reporter;
    let rec = |mark, time| MarkRecord { mark, task: 0, time };
    let out = Outcome { end_time: 9_000_000_000, capped: false, marks: vec![rec(MARK_START, 1_000_000), rec(MARK_END, 1_235_999_999)], task_exit: vec![] };
    assert!(rep.render(&out).contains("\nTime: 1.234\n"));
    let _ = HackbenchReporter { opts: Default::default() };
    let capped = Outcome { capped: true, ..out };
    assert!(!rep.render(&capped).contains("Time:"), "no time for an unfinished run");
}

#[test]
fn every_sender_writes_to_every_receiver_of_its_group_only() {
    let w = build("test-smt2", "hackbench -g 2 -f 3 -l 1");
    for t in w.tasks.iter().filter(|t| t.name.starts_with("sender.")) {
        let grp: u32 = t.name.split('.').nth(1).unwrap().parse().unwrap();
        let chans: Vec<u32> = t.program.iter().filter_map(|o| match o { Op::Send { chan, bytes: 100 } => Some(*chan), _ => None }).collect();
        assert_eq!(chans, vec![grp * 3, grp * 3 + 1, grp * 3 + 2], "{}", t.name);
    }
}

#[test]
fn bad_flags_are_one_line_errors() {
    for (cmd, word) in [
        ("hackbench -g 0", "-g"),
        ("hackbench -l -5", "-l"),
        ("hackbench -f x", "-f"),
        ("hackbench -p -i", "--pipe|-p and --inet|-i"),
        ("hackbench -F", "-F"),
        ("hackbench --bogus", "--bogus"),
        ("hackbench -g 4 extra", "extra"),
        ("perf bench sched messaging -g 0", "-g"),
        ("perf bench sched messaging -f 10", "-f"),
    ] {
        let e = err("test-smt2", cmd);
        assert!(e.contains(word), "{cmd}: {e}");
    }
}
