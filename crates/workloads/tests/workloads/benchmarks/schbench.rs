//! schbench, both versions: the task graph, the latency/RPS arithmetic and the output as
//! mmtests parses it.

use crate::common::*;
use wakesim_workloads::bench::schbench::{self, matrix_size, work_ns, MARK_DONE, MARK_WAKE, MARK_WOKEN};
use wakesim_workloads::{MarkRecord, Op, Outcome};

/// mmtests' schbench parser (gormanm/mmtests shellpack_src/src/schbench/parse-results.awk):
/// `/percentile/ {metric=$1}`, `/Wakeup Latencies.*runtime/ {runtime=$6}`, the `  50.0th:` and
/// `* 99.0th:` lines, flushed at each `current rps` line. Returns (metric, pct, runtime, value).
fn mmtests_awk(out: &str) -> Vec<(String, String, String, u64)> {
    let (mut metric, mut runtime, mut sample, mut rows) = (String::new(), "1".to_string(), Vec::new(), Vec::new());
    for line in out.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if line.contains("percentile") {
            metric = f[0].to_string();
        }
        if line.contains("Wakeup Latencies") && line.contains("runtime") {
            runtime = f[5].to_string();
        }
        if line.contains("current rps") {
            rows.append(&mut sample);
        }
        for p in ["20.0th:", "50.0th:", "90.0th:", "99.0th:", "99.9th:"] {
            if line.contains(&format!("  {p}")) {
                sample.push((metric.clone(), f[0].replace("th:", "th"), runtime.clone(), f[1].parse().unwrap()));
            } else if line.contains(&format!("* {p}")) {
                sample.push((metric.clone(), f[1].replace("th:", "th"), runtime.clone(), f[2].parse().unwrap()));
            }
        }
    }
    rows
}

/// `MMTests::ExtractSchbench` before the 2025 rework (gormanm/mmtests@fa495493^): every line
/// matching `[ \t\*]+([0-9]+\.[0-9]+)th: ([0-9]+)` — the one both versions' output must fit.
fn old_extract(out: &str) -> Vec<(String, u64)> {
    out.lines()
        .filter_map(|l| {
            let t = l.trim_start_matches([' ', '\t', '*']);
            if t.len() == l.len() {
                return None;
            }
            let (q, rest) = t.split_once("th: ")?;
            q.split_once('.')?;
            let v: u64 = rest.split_whitespace().next()?.parse().ok()?;
            Some((q.to_string(), v))
        })
        .collect()
}

#[test]
fn current_graph_is_m_messengers_with_t_workers() {
    // Default -t = ceil(nprocs / m): 8 CPUs, m = 3 -> 3 workers each.
    let w = build("test-smt2", "schbench -m 3 -r 5");
    assert_eq!(w.tasks.len(), 3 * (3 + 1));
    assert_eq!(w.futexes, 6);
    assert_eq!(w.duration, Some(5_000_000_000));
    let w = build("test-2x4", "schbench -m 2 -t 5 -n 2 -F 256 -s 50");
    assert_eq!(w.tasks.len(), 12);
    for (i, t) in w.tasks.iter().enumerate() {
        let messenger = i % 6 == 0;
        let posts = 2 * (i / 6) as u32;
        if messenger {
            // wait for a post, stamp, wake one waiting worker
            assert!(t.program.contains(&Op::FutexWait { futex: posts }));
            assert!(t.program.contains(&Op::FutexWake { futex: posts + 1, n: 1 }));
        } else {
            assert!(t.program.contains(&Op::FutexWake { futex: posts, n: 1 }));
            assert!(t.program.contains(&Op::FutexWait { futex: posts + 1 }));
            assert!(t.program.contains(&Op::Sleep(wakesim_workloads::Dur::Fixed(50_000))));
            assert_eq!(t.smt_throughput, Some(schbench::SMT_THROUGHPUT));
        }
    }
    // sqrt(256*1024/3/8) = 104; two multiplies of 104^3.
    assert_eq!(matrix_size(256), 104);
    let o = schbench::parse(&args("-n 2")).unwrap();
    assert_eq!(work_ns(&o), (2.0 * 104f64.powi(3) * schbench::NS_PER_MAC).round() as u64);
}

#[test]
fn pinning_follows_schbench() {
    let w = build("test-2x4", "schbench -m 2 -t 2 -M auto");
    assert_eq!(w.tasks[0].allowed.as_ref().unwrap().first(), Some(0));
    assert_eq!(w.tasks[3].allowed.as_ref().unwrap().first(), Some(1));
    // thread_auto_pin() leaves the workers unpinned (its loop index is shadowed).
    assert!(w.tasks[1].allowed.is_none());
    let w = build("test-2x4", "schbench -m 2 -t 1 -M 4-5 -W 8-15");
    assert_eq!(w.tasks[2].allowed.as_ref().unwrap().first(), Some(5));
    assert_eq!(w.tasks[1].allowed.as_ref().unwrap().weight(), 8);
}

/// The ops of worker `i`'s program around its work: what comes right before and after the
/// matrix multiply `Compute`.
fn around_work(w: &wakesim_workloads::Workload, i: usize) -> (Op, Op) {
    let p = &w.tasks[i].program;
    let k = p.iter().position(|op| matches!(op, Op::Compute(_))).expect("a worker computes");
    (p[k - 1].clone(), p[k + 1].clone())
}

#[test]
fn workers_hold_their_cpus_lock_around_the_work_unless_l_or_c() {
    let lock = Op::CpuSpinLock { set: schbench::LOCK_SET };
    let unlock = Op::CpuSpinUnlock { set: schbench::LOCK_SET };
    let w = build("test-2x4", "schbench -m 2 -t 3");
    for i in 0..w.tasks.len() {
        if i % 4 == 0 {
            assert!(!w.tasks[i].program.contains(&lock), "message threads take no lock");
        } else {
            assert_eq!(around_work(&w, i), (lock.clone(), unlock.clone()), "worker {i}");
        }
    }
    // do_work() takes the lock even with nothing to compute.
    let w = build("test-2x4", "schbench -m 1 -t 1 -n 0");
    assert!(w.tasks[1].program.windows(2).any(|p| p == [lock.clone(), unlock.clone()]));
    // -L skips it; so does -C (calibrate_only sets skip_locking); pipe mode does no work.
    for c in ["schbench -m 1 -t 2 -L", "schbench -m 1 -t 2 --no-locking", "schbench -m 1 -t 2 -C", "schbench -m 1 -t 2 -p 1024"] {
        let w = build("test-2x4", c);
        assert_eq!(totals(&w).cpu_locks, 0, "{c}");
    }
    // The 2016-2022 version has no lock at all (added in masoncl/schbench@5a425ee, 2023).
    assert_eq!(totals(&build("test-2x4", "schbench --old -m 1 -t 2")).cpu_locks, 0);
}

#[test]
fn copies_of_schbench_each_get_their_own_lock_array() {
    let w = build_copies("test-2x4", "schbench -m 1 -t 2", 3);
    for (i, t) in w.tasks.iter().enumerate() {
        let copy = (i / 3) as u32;
        for op in &t.program {
            if let Op::CpuSpinLock { set } | Op::CpuSpinUnlock { set } = op {
                assert_eq!(*set, copy, "task {i}");
            }
        }
    }
}

#[test]
fn stacked_workers_spin_on_the_cpu_lock_and_lose_rps_to_it() {
    // 16 workers on 8 CPUs: two per CPU at best. The tick preempts a holder mid-request and
    // the worker that runs next spins away its slice on the same CPU's lock.
    let cmd = "schbench -m 1 -t 16 -r 1 -n 1";
    let (w, locked, _) = run_cmd("test-smt2", cmd, 100.0);
    let (_, free, _) = run_cmd("test-smt2", &format!("{cmd} -L"), 100.0);
    let lw = &locked.stats.wake;
    assert!(lw.cpu_lock_contended > 0 && lw.cpu_lock_spin > 0, "{lw:?}");
    assert_eq!(free.stats.wake.cpu_lock_acquires, 0);
    let (rl, rf) = (w.reporter.metric(&locked.outcome).value, w.reporter.metric(&free.outcome).value);
    assert!(rl < rf, "average rps with the lock {rl} should be below -L's {rf}");
}

#[test]
fn run_prints_interval_blocks_that_mmtests_reads_and_rps_from_completions() {
    let (w, r, out) = run_cmd("test-smt2", "schbench -m 1 -t 4 -r 4 -i 2 -n 1", 100.0);
    assert_eq!(r.outcome.end_time, 4_000_000_000, "runs exactly -r seconds");
    // Interval prints at t = 2 and 4, each flushed by "current rps".
    assert_eq!(out.matches("current rps: ").count(), 2, "{out}");
    let rows = mmtests_awk(&out);
    let wakeup: Vec<_> = rows.iter().filter(|r| r.0 == "Wakeup").collect();
    assert_eq!(wakeup.len(), 2 * 4, "p50/p90/p99/p99.9 per interval: {rows:?}");
    assert_eq!(wakeup[0].2, "2");
    assert_eq!(wakeup[4].2, "4");
    assert!(rows.iter().any(|r| r.0 == "RPS" && r.1 == "50.0th"));
    // average rps = completed requests / runtime.
    let done = r.outcome.marks.iter().filter(|m| m.mark == MARK_DONE).count();
    let avg: f64 = out.lines().find_map(|l| l.strip_prefix("average rps: ")).unwrap().parse().unwrap();
    assert!((avg - done as f64 / 4.0).abs() < 0.01, "{avg} vs {done}");
    assert_eq!(w.reporter.metric(&r.outcome).value, done as f64 / 4.0);
    // Each request: one post, one wakeup of the worker by the messenger, one sleep.
    assert!(r.stats.wake.wakeups as usize >= 2 * done, "{} wakeups, {done} requests", r.stats.wake.wakeups);
    // The final block's header names the -r runtime; "Request" lines are there too.
    assert!(out.contains("Request Latencies percentiles (usec) runtime 4 (s)"));
    assert!(old_extract(&out).iter().any(|(q, _)| q == "99.0"));
}

#[test]
fn wakeup_latency_pairs_kth_wake_with_kth_wakeup_and_drops_zero() {
    let w = build("test-smt2", "schbench -m 1 -t 2 -r 1");
    let rec = |mark, task, us: u64| MarkRecord { mark, task, time: us * 1_000 };
    let out = Outcome {
        end_time: 1_000_000_000,
        capped: true,
        marks: vec![
            rec(MARK_WAKE, 0, 100),
            rec(MARK_WAKE, 0, 101),
            rec(MARK_WOKEN, 2, 104), // paired with 100: 4 us
            rec(MARK_WOKEN, 1, 111), // paired with 101: 10 us
            rec(MARK_DONE, 1, 20_111),
            rec(MARK_WAKE, 0, 500),
            rec(MARK_WOKEN, 1, 500), // 0 us: dropped, as schbench's `if (delta > 0)`
        ],
        task_exit: vec![None; 3],
    };
    let text = w.reporter.render(&out);
    assert!(text.contains("Wakeup Latencies percentiles (usec) runtime 1 (s) (2 total samples)"), "{text}");
    assert!(text.contains("\t  min=4, max=10\n"), "{text}");
    assert!(text.contains("Request Latencies percentiles (usec) runtime 1 (s) (1 total samples)"), "{text}");
    assert!(text.contains("average rps: 1.00"), "{text}");
}

#[test]
fn old_version_graph_and_output() {
    let w = build("test-2x4", "schbench-v1 -m 2 -t 3 -r 20");
    assert_eq!(w.tasks.len(), 8);
    let c = totals(&w);
    assert_eq!(c.futex_wakes, u64::MAX, "loop forever");
    // Each messenger cycle: wait for its 3 workers' posts, then one wake per worker.
    let m0 = &w.tasks[0].program;
    assert_eq!(m0.iter().filter(|o| matches!(o, Op::FutexWake { .. })).count(), 3);
    assert!(m0.iter().any(|o| matches!(o, Op::LoopStart { count: 3, .. })));
    assert!(m0.contains(&Op::Compute(wakesim_workloads::Dur::Fixed(30_000_000))), "-C is always 30 ms");
    // `schbench --old` is the same tool.
    assert_eq!(build("test-2x4", "schbench --old -m 2 -t 3 -r 20").tasks.len(), 8);

    let (_, r, out) = run_cmd("test-2x4", "schbench --old -m 1 -t 2 -r 12 -w 2 -i 5", 100.0);
    assert_eq!(r.outcome.end_time, 12_000_000_000);
    assert!(out.starts_with("warmup done, zeroing stats\nLatency percentiles (usec) runtime 5 (s)"), "{out}");
    // Interval prints at 5 and 10 s, then the final one with the -r runtime.
    assert_eq!(out.matches("Latency percentiles").count(), 3, "{out}");
    assert!(out.contains("Latency percentiles (usec) runtime 12 (s)"));
    let p = old_extract(&out);
    assert_eq!(p.iter().filter(|x| x.0 == "99.0").count(), 3);
    assert_eq!(p.iter().map(|x| x.0.as_str()).take(7).collect::<Vec<_>>(), ["50.0", "75.0", "90.0", "95.0", "99.0", "99.5", "99.9"]);
    // A cycle: the workers' 30 ms spin, then the messenger's 30 ms spin and 30..37.5 ms sleep
    // (mean 33.75): ~94 ms, 2 samples each.
    let n: u64 = out.lines().rev().find(|l| l.starts_with("Latency")).unwrap().split('(').nth(3).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    assert!((2 * 100..=2 * 112).contains(&n), "{n} samples in 10 s after warmup");
}

#[test]
fn bad_flags_are_one_line_errors() {
    for (cmd, word) in [
        ("schbench -m 0", "-m"),
        ("schbench -t -3", "-t"),
        ("schbench -R 100", "-R"),
        ("schbench -M 3-1", "-M"),
        ("schbench --split 101", "split"),
        ("schbench extra", "extra"),
        ("schbench-v1 -p 64", "-p"),
        ("schbench --old -s 2", "-s 2"),
        ("schbench --old -x", "-x"),
    ] {
        let e = err("test-smt2", cmd);
        assert!(e.contains(word), "{cmd}: {e}");
    }
    // Without a machine the default -t cannot be computed.
    let e = wakesim_workloads::from_command_line(&args("schbench")).unwrap_err().to_string();
    assert!(e.contains("CPU count"), "{e}");
}

/// The values of the last `<heading> percentiles` block of schbench's output, by percentile.
fn last_block(out: &str, heading: &str) -> Vec<(f64, f64)> {
    let start = out.rfind(&format!("{heading} percentiles")).expect("block present");
    out[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.contains("th: "))
        .map(|l| {
            let t = l.trim_start_matches([' ', '\t', '*']);
            let (q, rest) = t.split_once("th: ").unwrap();
            (q.parse().unwrap(), rest.split_whitespace().next().unwrap().parse().unwrap())
        })
        .collect()
}

#[test]
fn latency_percentiles_are_the_values_schbench_prints_last() {
    let (w, r, out) = run_cmd("test-smt2", "schbench -m 1 -t 4 -r 3 -n 1", 100.0);
    let ps = [50.0, 90.0, 99.0, 99.9];
    let lat = w.reporter.latency_percentiles(&r.outcome, &ps);
    assert_eq!(lat.len(), 2);
    assert_eq!(lat[0].name, "Wakeup Latencies");
    assert_eq!(lat[1].name, "Request Latencies");
    assert!(lat[0].samples > 0);
    assert_eq!(lat[0].points, last_block(&out, "Wakeup Latencies"));
    assert_eq!(lat[1].points, last_block(&out, "Request Latencies"));
    // metrics(): the headline, then each distribution's p99.
    let m = w.reporter.metrics(&r.outcome);
    assert_eq!(m[0], w.reporter.metric(&r.outcome));
    assert_eq!((m[1].name.as_str(), m[1].value, m[1].higher_is_better), ("wakeup p99", lat[0].points[2].1, false));
    assert_eq!((m[2].name.as_str(), m[2].value), ("request p99", lat[1].points[2].1));
}

#[test]
fn old_schbench_latency_p99_is_its_headline_metric() {
    let (w, r, _) = run_cmd("test-smt2", "schbench-v1 -m 1 -t 2 -r 2", 100.0);
    let lat = w.reporter.latency_percentiles(&r.outcome, &[99.0]);
    assert_eq!(lat.len(), 1);
    assert_eq!(lat[0].points[0].1, w.reporter.metric(&r.outcome).value);
}
