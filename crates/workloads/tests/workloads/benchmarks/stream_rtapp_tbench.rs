//! STREAM, rt-app and tbench: task graphs, metrics and output formats; --copies; the new
//! task-file ops.

use crate::common::*;
use wakesim_workloads::bench::{rtapp, stream, tbench};
use wakesim_workloads::{from_toml_str, op_counts, Op};

#[test]
fn stream_threads_default_to_the_cpu_count_and_never_sleep() {
    let w = build("test-2x4", "stream");
    assert_eq!(w.tasks.len(), 16);
    assert!(w.tasks.iter().all(|t| t.smt_throughput == Some(stream::SMT_THROUGHPUT)));
    let c = op_counts(&w.tasks[0].program);
    assert_eq!((c.computes, c.barriers, c.sleeps), (40, 0, 0), "10 iterations x 4 kernels, no barrier");
    let w = build("test-2x4", "OMP_NUM_THREADS=4 OMP_WAIT_POLICY=passive NTIMES=3 stream");
    assert_eq!(w.tasks.len(), 4);
    assert_eq!(op_counts(&w.tasks[0].program).barriers, 12);

    let (w, r, out) = run_cmd("test-2x4", "env OMP_NUM_THREADS=8 STREAM_ARRAY_SIZE=2000000 stream", 100.0);
    assert_eq!(r.stats.wake.wakeups, 0, "no thread ever sleeps");
    // mmtests' stream awk: /Copy:/ {print $2} etc.
    let rate = |name: &str| -> f64 { out.lines().find(|l| l.starts_with(name)).unwrap().split_whitespace().nth(1).unwrap().parse().unwrap() };
    // 8 threads, one per core on an idle 16-CPU box: each streams 5 GB/s -> 40 GB/s.
    let copy = rate("Copy:");
    assert!((copy - 40_000.0).abs() / 40_000.0 < 0.02, "{copy}\n{out}");
    assert!((rate("Triad:") - copy).abs() / copy < 0.02);
    assert_eq!(w.reporter.metric(&r.outcome).value, stream::StreamReporter { opts: stream::Options { threads: 8, array_size: 2_000_000, ntimes: 10, passive: false } }.best_rates(&r.outcome)[3]);
    for (cmd, word) in [("OMP_NUM_THREADS=0 stream", "OMP_NUM_THREADS"), ("stream -n 3", "-n"), ("OMP_WAIT_POLICY=busy stream", "OMP_WAIT_POLICY")] {
        let e = err("test-smt2", cmd);
        assert!(e.contains(word), "{cmd}: {e}");
    }
}

const RTAPP: &str = r#"{
  "global": { "duration": 2, "calibration": "CPU0", "default_policy": "SCHED_OTHER" },
  "tasks": {
    "periodic": { "instance": 2, "loop": -1, "run": 1000, "timer": { "ref": "unique", "period": 10000 } },
    "pair": {
      "loop": 50,
      "phases": {
        "p0": { "loop": 2, "run": 200, "lock": "m", "run1": 100, "unlock": "m", "sem_post": "s" },
        "p1": { "cpus": [1], "sleep": 500, "barrier": "b" }
      }
    },
    "peer": { "loop": 50, "sem_wait": "s", "sem_wait1": "s", "barrier": "b", "priority": 5 }
  }
}"#;

#[test]
fn rtapp_json_becomes_a_task_graph() {
    let w = rtapp::from_json(RTAPP, "t.json").unwrap();
    assert_eq!(w.tasks.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["periodic-0", "periodic-1", "pair-0", "peer-0"]);
    assert_eq!(w.duration, Some(2_000_000_000));
    let p = &w.tasks[0].program;
    assert!(p.contains(&Op::SleepUntilNext { period: 10_000_000 }));
    let pair = op_counts(&w.tasks[2].program);
    assert_eq!(pair.computes, 50 * 2 * 2);
    assert_eq!(pair.locks, 50 * 2 * 2);
    assert_eq!(pair.futex_wakes, 50 * 2);
    assert_eq!(pair.barriers, 50);
    let peer = op_counts(&w.tasks[3].program);
    assert_eq!(peer.futex_waits, 100, "two sem_waits per loop match two posts per loop");
    // barrier parties = every instance that uses the name.
    assert!(w.tasks[3].program.contains(&Op::Barrier { id: 0, parties: 2 }));
    assert_eq!(w.tasks[3].nice, 5);
    assert_eq!(w.tasks[2].allowed.as_ref().unwrap().first(), Some(1));

    let r = run("test-smt2", &w, 100.0);
    let out = w.reporter.render(&r.outcome);
    assert!(out.contains("[rt-app] <notice> [0] starting thread periodic-0 ..."), "{out}");
    let line = out.lines().find(|l| l.starts_with("periodic-0")).unwrap();
    let f: Vec<f64> = line.split_whitespace().skip(1).map(|x| x.parse().unwrap()).collect();
    // ~200 periods of 10 ms in 2 s, each 10 ms long with 9 ms of slack.
    assert!((190.0..=201.0).contains(&f[0]), "{line}");
    assert!((f[1] - 10_000.0).abs() < 100.0, "{line}");
    assert!((f[2] - 9_000.0).abs() < 200.0, "{line}");
    let pair = out.lines().find(|l| l.starts_with("pair-0")).unwrap();
    assert!(pair.split_whitespace().nth(1).unwrap() == "150", "50 loops x (2 + 1 phase iterations): {pair}");
}

#[test]
fn rtapp_unsupported_things_name_the_file_position() {
    for (text, pos, word) in [
        ("{\"tasks\": {\"t\": {\"run\": 10, \"yield\": \"\"}}}", "t.json:1:", "yield"),
        ("{\"tasks\": {\"t\": {\n  \"run\": 10,\n  \"broad\": \"c\"}}}", "t.json:3:12", "broad"),
        ("{\"tasks\": {\"t\": {\"policy\": \"SCHED_FIFO\", \"run\": 1}}}", "t.json:1:", "SCHED_FIFO"),
        ("{\"tasks\": {\"t\": {\"run\": \"x\"}}}", "t.json:1:", "'run' must be an integer"),
        ("{\"tasks\": {\"t\": {\"run\": 1}}, \"bogus\": 1}", "t.json:1:", "bogus"),
        ("{\"tasks\": {\"t\": {\"run\": 1,}}}", "t.json:1:", "expected"),
        ("{\"tasks\": {\"a\": {\"instance\": 2, \"timer\": {\"ref\": \"shared\", \"period\": 100}}}}", "t.json:1:", "shared"),
    ] {
        let e = match rtapp::from_json(text, "t.json") {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.to_string(),
        };
        assert!(e.starts_with(pos) && e.contains(word) && !e.contains('\n'), "{text}: {e}");
    }
}

#[test]
fn tbench_graph_replays_the_loadfile_between_client_and_server_pairs() {
    let ops = tbench::ops();
    assert_eq!(ops.len(), 3573);
    let payload: u64 = ops.iter().map(|o| o.payload).sum();
    assert_eq!(payload / ops.len() as u64, 5351);
    let w = build("test-2x4", "tbench -t 10 4");
    assert_eq!(w.tasks.len(), 2 * 4 + 1);
    assert_eq!(w.duration, Some(12 * 1_000_000_000 + 250_000_000), "warmup 10/5 = 2 s + 10 s, + the setup allowance");
    // Client c and server c talk over their own two loopback TCP channels; the client's sends
    // are exactly what its server receives (in two reads each: header, body).
    let client = &w.tasks[0].program;
    let server = &w.tasks[1].program;
    let sent: u64 = client.iter().filter_map(|o| match o { Op::Send { chan: 0, bytes } => Some(*bytes), _ => None }).sum();
    let got: u64 = server.iter().filter_map(|o| match o { Op::Recv { chan: 0, bytes } => Some(*bytes), _ => None }).sum();
    assert_eq!(sent, got);
    assert_eq!(client.iter().filter(|o| matches!(o, Op::Send { .. })).count(), 1 + 3573);

    let (w, r, out) = run_cmd("test-2x4", "tbench -t 3 --warmup 1 --show-execute-time 2 127.0.0.1", 100.0);
    assert!(out.starts_with("dbench version 4.00 - Copyright Andrew Tridgell 1999-2004\n\nRunning for 3 seconds with load '/usr/share/dbench/client.txt' and minimum warmup 1 secs\n"), "{out}");
    // mmtests: grep execute > benchlog-tput; awk $3 = MB/sec, $6 = seconds.
    let tput: Vec<(f64, f64)> = out.lines().filter(|l| l.contains("execute")).map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f[2].parse().unwrap(), f[5].parse().unwrap())
    }).collect();
    assert_eq!(tput.iter().map(|x| x.1).collect::<Vec<_>>(), vec![1.0, 2.0]);
    let last = out.lines().last().unwrap();
    assert!(last.starts_with("Throughput ") && last.contains(" MB/sec  2 clients  2 procs  max_latency="), "{last}");
    let shown: f64 = last.split_whitespace().nth(1).unwrap().parse().unwrap();
    // dbench's final figure is the whole execute period's bytes over its length: close to the
    // last per-second line, which covers all but the last second.
    assert!((shown - tput[1].0).abs() / shown < 0.02, "final {shown} vs last execute line {}", tput[1].0);
    assert!((w.reporter.metric(&r.outcome).value - shown).abs() / shown < 1e-4);
    // --show-execute-time: "%4d completed in %u ms at time %u ms" (grep "completed in").
    assert!(out.lines().any(|l| l.contains(" completed in ") && l.ends_with(" ms")), "{out}");
    assert!(out.contains(" Operation                Count    AvgLat    MaxLat\n --------------------------------------------------\n"));

    for (cmd, word) in [("tbench", "NPROCS"), ("tbench 0", "0 procs"), ("tbench -c my.txt 2", "my.txt"), ("tbench 2 10.1.1.1", "10.1.1.1"), ("tbench -R 10 2", "-R")] {
        let e = err("test-smt2", cmd);
        assert!(e.contains(word), "{cmd}: {e}");
    }
}

#[test]
fn tbench_without_t_runs_wakesims_short_default_and_says_so() {
    let w = build("test-smt2", "tbench 2");
    assert_eq!(w.duration, Some((tbench::DEFAULT_TIMELIMIT + 1) * 1_000_000_000 + 250_000_000), "5 s + 5/5 s warmup + the setup allowance");
    let (_, _, out) = run_cmd("test-smt2", "tbench 1", 100.0);
    let first = out.lines().next().unwrap();
    assert!(first.starts_with("# wakesim: no -t given: 5 simulated seconds (+1 s warmup) instead of dbench's 600 (+120 s)"), "{first}");
    assert!(out.contains("Running for 5 seconds with load") && out.contains("cleanup   5 sec"), "{out}");
    assert!(out.lines().last().unwrap().starts_with("Throughput "), "the short run reaches its result");
    // The real default is still there for the asking, and then nothing is said.
    let real = build("test-smt2", "tbench -t 600 2");
    assert_eq!(real.duration, Some(720 * 1_000_000_000 + 250_000_000));
    let r = run("test-smt2", &real, 0.01);
    assert!(!real.reporter.render(&r.outcome).contains("# wakesim: no -t"));
}

#[test]
fn tbench_capped_in_warmup_says_so() {
    let w = build("test-smt2", "tbench -t 10 --warmup 5 1");
    let r = run("test-smt2", &w, 1.5);
    let out = w.reporter.render(&r.outcome);
    assert!(out.contains("warmup   1 sec"), "{out}");
    assert!(out.contains("no throughput measured"), "{out}");
    assert!(w.reporter.metric(&r.outcome).value.is_nan());
}

#[test]
fn copies_replicate_every_resource_and_split_the_outcome() {
    let one = build("test-smt2", "hackbench -T -g 1 -l 2");
    let w = build_copies("test-smt2", "hackbench -T -g 1 -l 2", 3);
    assert_eq!(w.tasks.len(), 3 * one.tasks.len());
    assert_eq!(w.channels.len(), 3 * one.channels.len());
    assert_eq!(w.futexes, 3 * one.futexes);
    let c1 = totals(&one);
    let c3 = totals(&w);
    assert_eq!(c3.sends(), 3 * c1.sends());
    // Copy k's programs use copy k's channels only.
    let n = one.tasks.len();
    let nch = one.channels.len() as u32;
    for (i, t) in w.tasks.iter().enumerate() {
        let k = (i / n) as u32;
        for op in &t.program {
            if let Op::Send { chan, .. } | Op::Recv { chan, .. } = op {
                assert_eq!(chan / nch, k, "task {i}");
            }
        }
    }
    let r = run("test-smt2", &w, 10.0);
    let out = w.reporter.render(&r.outcome);
    assert_eq!(out.matches("\nTime: ").count(), 3, "{out}");
    // Time is lower-is-better: the metric is the mean of the copies.
    assert!(w.reporter.metric(&r.outcome).value > 0.0);
    // Barriers and mutex ids are per copy too.
    let w = build_copies("test-smt2", "OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive stream", 2);
    assert!(w.tasks[2].program.contains(&Op::Barrier { id: 1, parties: 2 }));
    assert_ne!(w.tasks[0].mm, w.tasks[2].mm);
}

#[test]
fn task_files_have_call_barrier_lock_and_every() {
    let text = r#"
name = "new-ops"
[[task]]
name = "kick{i}"
count = 2
smt_throughput = 1.05
program = """
barrier start 3
every 1ms
loop 5 {
  lock m
  compute 10us
  unlock m
  call {i+4}
  call 7 nowait
}
"""
[[task]]
name = "third"
program = ["barrier start 3"]
"#;
    let w = from_toml_str(text, "n.toml").unwrap();
    let p = &w.tasks[1].program;
    assert_eq!(p[0], Op::Barrier { id: 0, parties: 3 });
    assert_eq!(p[1], Op::SleepUntilNext { period: 1_000_000 });
    assert!(p.contains(&Op::Lock { id: 0 }) && p.contains(&Op::Unlock { id: 0 }));
    assert!(p.contains(&Op::CallFunc { cpu: 5, wait: true }));
    assert!(p.contains(&Op::CallFunc { cpu: 7, wait: false }));
    assert_eq!(w.tasks[0].smt_throughput, Some(1.05));
    assert_eq!(w.tasks[2].smt_throughput, None);
    let r = run("test-smt2", &w, 10.0);
    assert!(!r.outcome.capped);
    for (bad, word) in [
        ("program = [\"barrier b 2\", \"barrier b 3\"]", "barrier 'b' has 3 parties"),
        ("program = [\"call x\"]", "CPU number"),
        ("program = [\"every exp(1ms)\"]", "fixed period"),
        ("program = [\"lock\"]", "mutex name"),
        ("smt_throughput = 3.0\nprogram = [\"exit\"]", "smt_throughput"),
    ] {
        let e = from_toml_str(&format!("[[task]]\nname = \"t\"\n{bad}\n"), "b.toml").expect_err(bad).to_string();
        assert!(e.starts_with("b.toml:") && e.contains(word), "{bad}: {e}");
    }
}
