//! `wakesim run`: the benchmark's own output, the statistics summary, `--json`, determinism.

use crate::common::*;
use serde_json::Value;

const PIPE_2000: &[&str] = &["perf", "bench", "sched", "pipe", "-l", "2000"];

fn run_args<'a>(pre: &[&'a str], cmd: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["run"];
    v.extend_from_slice(pre);
    if !cmd.is_empty() {
        v.push("--");
        v.extend_from_slice(cmd);
    }
    v
}

fn read_json(p: &std::path::Path) -> (String, Value) {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", p.display()));
    (text, v)
}

#[test]
fn run_prints_perf_pipe_output_then_statistics() {
    let out = ok(&run_args(&["--machine", "test-smt2"], PIPE_2000));
    assert!(out.starts_with("# Running 'sched/pipe' benchmark:\n"), "perf's banner first:\n{out}");
    assert!(out.contains("# Executed 2000 pipe operations between two processes\n"), "{out}");
    let total = total_time_sec(&out).expect("mmtests regex `Total time: ([0-9.]+) \\[sec\\]` matches");
    let usecs = usecs_per_op(&out).expect("mmtests regex `^\\s+([0-9.]+) usecs/op` matches");
    assert!(usecs > 0.1 && usecs < 1000.0, "implausible usecs/op {usecs}");
    // perf: usecs/op = total / loops; Total time is printed as `%lu.%03lu` of seconds and
    // whole milliseconds (tv_usec / USEC_PER_MSEC), i.e. truncated to the millisecond.
    let exact = usecs * 2000.0 / 1e6;
    assert!(exact - total >= -1e-6 && exact - total < 0.001 + 1e-6, "usecs/op {usecs} and Total time {total} disagree");
    let ops_line = out.lines().find(|l| l.trim_end().ends_with(" ops/sec")).expect("an ops/sec line");
    let ops: f64 = ops_line.split_whitespace().next().unwrap().parse().expect("ops/sec is a number");
    assert!((ops - 1e6 / usecs).abs() <= 1.0 + 1e-6 * ops, "ops/sec {ops} is not 1e6 / {usecs}");
    // Then the statistics summary, after the benchmark's output.
    let bench_end = out.find(" ops/sec").unwrap();
    let stats = out.find("--- wakesim statistics: 8 CPUs").expect("statistics header naming the machine's CPU count");
    assert!(stats > bench_end, "statistics come after the benchmark output");
    for key in ["wakeups", "latency", "migrations", "schedstat"] {
        assert!(out[stats..].lines().any(|l| l.starts_with(key)), "statistics line '{key}' missing:\n{out}");
    }
}

#[test]
fn run_without_a_command_runs_the_default_pipe_demo() {
    // What the README's first command runs: perf bench sched pipe -l 100000 on the 104-CPU Xeon.
    let out = ok(&["run"]);
    assert!(out.contains("# Executed 100000 pipe operations between two processes"), "{out}");
    assert!(usecs_per_op(&out).is_some(), "{out}");
    assert!(out.contains("--- wakesim statistics: 104 CPUs"), "{out}");
}

#[test]
fn same_seed_gives_byte_identical_json_except_engine_block() {
    let dir = TempDir::new("same-seed");
    let tasks = dir.write("rpc.toml", &format_md_example_tasks());
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["--machine", "test-2x4", "--seed", "42"], PIPE_2000.to_vec()),
        (vec!["--machine", "test-smt2", "--seed", "7", "--tasks", s(&tasks)], vec![]),
        (vec!["--machine", "test-2x4", "--seed", "9", "--kernel", "v6.5", "--features", "+SHARED_RUNQ", "--tasks", s(&tasks)], vec![]),
        (vec!["--machine", "test-2x4", "--seed", "9", "--features", "+SIS_FILTER", "--tasks", s(&tasks)], vec![]),
    ];
    for (i, (pre, cmd)) in cases.iter().enumerate() {
        let mut runs = Vec::new();
        for r in 0..2 {
            let json = dir.join(&format!("case{i}-run{r}.json"));
            let mut pre = pre.clone();
            pre.extend_from_slice(&["--json", s(&json)]);
            let out = ok(&run_args(&pre, cmd));
            let (text, v) = read_json(&json);
            runs.push((out, text, v));
        }
        let (out_a, text_a, mut a) = runs.remove(0);
        let (out_b, text_b, mut b) = runs.remove(0);
        assert_eq!(out_a, out_b, "case {i}: stdout differs between two runs with the same seed");
        // The engine block carries wall-clock figures; everything before it must match byte for byte.
        let cut_a = text_a.find("\"engine\"").expect("an engine block");
        let cut_b = text_b.find("\"engine\"").expect("an engine block");
        assert_eq!(&text_a[..cut_a], &text_b[..cut_b], "case {i}: JSON text differs before the engine block");
        let ea = a.as_object_mut().unwrap().remove("engine").unwrap();
        let eb = b.as_object_mut().unwrap().remove("engine").unwrap();
        assert_eq!(a, b, "case {i}: JSON differs outside the engine block");
        // The event count is not a wall-clock figure: it must match too.
        assert_eq!(ea["events"], eb["events"], "case {i}: event counts differ");
    }
}

#[test]
fn different_seeds_still_complete() {
    let dir = TempDir::new("seeds");
    let tasks = dir.write("rpc.toml", &format_md_example_tasks());
    let mut outputs = Vec::new();
    for seed in ["1", "2", "3", "18446744073709551615"] {
        let json = dir.join(&format!("seed{seed}.json"));
        let out = ok(&["run", "--machine", "test-smt2", "--seed", seed, "--tasks", s(&tasks), "--json", s(&json)]);
        assert!(out.starts_with("Elapsed: "), "seed {seed}: task-file output first:\n{out}");
        assert!(out.contains("Mark 1: 4 records by 4 tasks"), "seed {seed}: every client finished:\n{out}");
        let (_, v) = read_json(&json);
        assert_eq!(v["capped"], Value::Bool(false), "seed {seed}: hit the duration cap");
        assert_eq!(v["seed"].as_u64().map(|s| s.to_string()).as_deref(), Some(seed));
        outputs.push(out);
    }
    // The workload draws exp/uniform/normal durations, so the seed must matter.
    assert!(outputs.windows(2).any(|w| w[0] != w[1]), "every seed gave the same output");
}

#[test]
fn json_file_is_written_atomically_and_complete() {
    let dir = TempDir::new("json");
    let json = dir.join("result.json");
    std::fs::write(&json, "stale contents from an earlier run\n").unwrap();
    #[cfg(unix)]
    let old_ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&json).unwrap());

    let out = ok(&run_args(&["--machine", "test-smt2", "--seed", "5", "--json", s(&json)], PIPE_2000));

    // Only the result is left in the directory: no temporary file beside it.
    assert_eq!(dir.entries(), vec!["result.json".to_string()]);
    // Replaced by a rename of a new file, not rewritten in place.
    #[cfg(unix)]
    assert_ne!(std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&json).unwrap()), old_ino, "the result file was rewritten in place");

    let (text, v) = read_json(&json);
    assert!(text.ends_with("}\n"), "the file is complete");
    for key in ["machine", "seed", "workload", "command", "metric", "output", "stats", "engine"] {
        assert!(v.get(key).is_some(), "key '{key}' missing from the JSON");
    }
    assert_eq!(v["machine"], "test-smt2");
    assert_eq!(v["seed"], 5);
    assert_eq!(v["command"], serde_json::json!(PIPE_2000));
    // The benchmark's output is stored verbatim and is what stdout starts with.
    let bench_out = v["output"].as_str().expect("output is a string");
    assert!(out.starts_with(bench_out), "stdout does not start with the JSON's output field");
    // The metric is the number perf printed.
    assert_eq!(v["metric"]["name"], "usecs/op");
    let printed = usecs_per_op(&out).unwrap();
    let metric = v["metric"]["value"].as_f64().expect("metric value is a number");
    assert!((metric - printed).abs() < 1e-6, "metric {metric} vs printed {printed}");
    assert_eq!(v["stats"]["nr_cpus"], 8);
    let engine = &v["engine"];
    assert!(engine["events"].as_u64().unwrap_or(0) > 0, "engine.events: {engine}");
    for key in ["wall_seconds", "events_per_sec", "sim_seconds_per_wall_second"] {
        assert!(engine[key].as_f64().is_some_and(|x| x >= 0.0 && x.is_finite()), "engine.{key}: {engine}");
    }
}

#[test]
fn format_md_example_task_file_runs() {
    let dir = TempDir::new("example");
    let tasks = dir.write("rpc-demo.toml", &format_md_example_tasks());
    let out = ok(&["run", "--machine", "test-smt2", "--tasks", s(&tasks)]);
    let first = out.lines().next().unwrap();
    let secs: f64 = first.strip_prefix("Elapsed: ").and_then(|r| r.strip_suffix(" s")).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("first line: {first}"));
    assert!(secs > 0.0);
    assert!(out.contains("Mark 0: 4 records by 4 tasks"), "{out}");
    assert!(out.contains("--- wakesim statistics: 8 CPUs"), "{out}");
}

#[test]
fn machine_file_is_accepted() {
    let dir = TempDir::new("machine-file");
    let m = dir.write("box.toml", "name = \"box\"\nsockets = 1\ncores_per_llc = 3\nthreads_per_core = 2\n");
    let out = ok(&run_args(&["--machine", s(&m)], &["perf", "bench", "sched", "pipe", "-l", "200"]));
    assert!(out.contains("--- wakesim statistics: 6 CPUs"), "{out}");
}

#[test]
fn an_8192_cpu_machine_file_runs_a_benchmark_to_completion() {
    let m = concat!(env!("CARGO_MANIFEST_DIR"), "/../machine/tests/data/maxsmp-8192.toml");
    let out = ok(&run_args(&["--machine", m, "--noise", "none"], &["hackbench", "-g", "2", "-l", "20"]));
    assert!(out.contains("Time: "), "{out}");
    assert!(out.contains("--- wakesim statistics: 8192 CPUs"), "{out}");
}

#[test]
fn duration_cap_stops_a_forever_workload() {
    let dir = TempDir::new("cap");
    let tasks = dir.write("spin.toml", "name = \"spin\"\n[[task]]\nname = \"a\"\nprogram = [\"loop forever {\", \"compute 10us\", \"sleep 5us\", \"}\"]\n");
    let json = dir.join("cap.json");
    let out = ok(&["run", "--machine", "test-smt2", "--duration", "0.002", "--tasks", s(&tasks), "--json", s(&json)]);
    assert!(out.contains("duration cap"), "{out}");
    let (_, v) = read_json(&json);
    assert_eq!(v["capped"], Value::Bool(true));
    assert_eq!(v["end_time_ns"], 2_000_000);
}

#[test]
fn schedstat_dump_follows_the_summary() {
    for version in ["15", "16"] {
        let out = ok(&run_args(&["--machine", "test-smt2", "--schedstat", version], &["perf", "bench", "sched", "pipe", "-l", "200"]));
        let summary = out.find("--- wakesim statistics").unwrap();
        let dump = out.find(&format!("\nversion {version}\n")).unwrap_or_else(|| panic!("no 'version {version}' line:\n{out}"));
        assert!(dump > summary);
        assert_eq!(out.lines().filter(|l| l.strip_prefix("cpu").is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))).count(), 8, "one cpuN line per CPU:\n{out}");
    }
}

#[test]
fn features_change_the_wakeup_path() {
    // TTWU_QUEUE_IDLE off (before v6.0): same-LLC wakeups enqueue directly on the remote rq.
    let on = ok(&run_args(&["--machine", "test-smt2"], &["perf", "bench", "sched", "pipe", "-l", "500"]));
    let off = ok(&run_args(&["--machine", "test-smt2", "--features=-TTWU_QUEUE_IDLE"], &["perf", "bench", "sched", "pipe", "-l", "500"]));
    let enqueue = |t: &str| t.lines().find(|l| l.starts_with("enqueue")).unwrap().to_string();
    assert_ne!(enqueue(&on), enqueue(&off), "turning TTWU_QUEUE_IDLE off changed nothing");
}

#[test]
fn closed_stdout_is_not_a_panic() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(bin())
        .args(run_args(&["--machine", "test-smt2"], &["perf", "bench", "sched", "pipe", "-l", "200"]))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away before anything is written
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(o.status.code(), Some(101), "{err}");
}

// `--copies N` runs instances side by side and aggregates as UnixBench/mmtests do; a
// benchmark's own run time (netperf -l, schbench -r, ...) bounds the run unless --duration is
// shorter.

#[test]
fn copies_run_side_by_side_and_unixbench_sums_their_lps() {
    let out = ok(&["run", "--machine", "test-2x4", "--copies", "3", "--", "context1", "1"]);
    let counts: Vec<f64> = out
        .lines()
        .filter_map(|l| l.strip_prefix("COUNT|"))
        .map(|l| l.split('|').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(counts.len(), 3, "one COUNT line per copy:\n{out}");
    let summary = out.lines().find(|l| l.starts_with("Pipe-based Context Switching")).expect("Run's summary line");
    let lps: f64 = summary.split_whitespace().find_map(|w| w.parse().ok()).expect("a number");
    let sum: f64 = counts.iter().sum(); // context1 1: one second, so counts are lps
    assert!((lps - sum).abs() <= 1.0 + 1e-6 * sum, "summary {lps} is not the sum {sum}");
}

fn end_time_ns(args: &[&str]) -> u64 {
    let dir = std::env::temp_dir().join(format!("wakesim-cd-{}-{}", std::process::id(), args.len()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("r.json");
    let mut a = vec!["run", "--json", s(&json)];
    a.extend_from_slice(args);
    ok(&a);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    v["end_time_ns"].as_u64().expect("end_time_ns")
}

#[test]
fn benchmark_run_time_bounds_the_run_unless_duration_is_shorter() {
    let own = end_time_ns(&["--machine", "test-2x4", "--", "netperf", "-t", "TCP_RR", "-l", "1"]);
    assert_eq!(own, 1_000_000_000, "netperf -l 1 runs one simulated second");
    let capped = end_time_ns(&["--machine", "test-2x4", "--duration", "0.25", "--", "netperf", "-t", "TCP_RR", "-l", "1"]);
    assert_eq!(capped, 250_000_000, "--duration 0.25 is shorter");
}

#[test]
fn zero_copies_is_one_line_exit_2() {
    rejects(&["run", "--copies", "0", "--", "context1", "1"], &["--copies"]);
}

#[test]
fn bad_wasted_thresholds_are_one_line_errors() {
    for bad in ["4", "abc", "-1ms", "4xs", "1e99s", "ms", ""] {
        rejects(
            &["run", "--machine", "test-smt2", "--wasted-threshold", bad, "--", "perf", "bench", "sched", "pipe", "-l", "10"],
            &["--wasted-threshold"],
        );
    }
}

#[test]
fn the_overload_on_wakeup_example_reports_wasted_cores_in_text_json_and_trace() {
    let dir = TempDir::new("wasted");
    let (json, trace) = (dir.join("r.json"), dir.join("t.json"));
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/overload-on-wakeup.toml");
    let out = ok(&[
        "run", "--machine", "test-2x4", "--tasks", example, "--duration", "0.05", "--wasted-threshold", "1ms",
        "--json", s(&json), "--trace", s(&trace),
    ]);
    let line = out.lines().find(|l| l.starts_with("wasted ")).expect("a wasted line");
    assert!(line.contains("> 1.00ms") && line.contains("| worst") && !line.starts_with("wasted       0 "), "{line}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let w = &v["stats"]["wasted"];
    assert_eq!(w["threshold_ns"], 1_000_000);
    assert!(w["intervals"].as_u64().unwrap() > 0 && w["wasted_ns"].as_u64().unwrap() > 0, "{w}");
    assert!(w["worst"][0]["level"].is_string());
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let wasted: Vec<&serde_json::Value> = t["traceEvents"].as_array().unwrap().iter().filter(|e| e["name"] == "wasted").collect();
    assert!(!wasted.is_empty());
    assert!(wasted.iter().all(|e| e["ph"] == "X" && e["pid"] == 3 && e["dur"].as_f64().unwrap() > 1000.0), "{:?}", wasted[0]);
}

#[test]
fn an_idle_machine_prints_a_zero_wasted_line() {
    let out = ok(&["run", "--machine", "test-smt2", "--", "perf", "bench", "sched", "pipe", "-l", "2000"]);
    assert!(out.contains("\nwasted       0 intervals > 500.0us  idle CPU time 0ns"), "{out}");
}

/// `--cost-scale KEY=F`: a pipe ping-pong pinned to one CPU switches context twice per round
/// trip, so twice the switch cost lengthens the run by at least 2 × loops × that cost; the
/// JSON names the scaled profile; a bad key or factor is one line.
#[test]
fn a_cost_scale_reaches_the_model_and_is_named_in_the_json() {
    let cmd = ["--machine", "xeon-8269cy", "--noise", "none", "--", "taskset", "-c", "3", "perf", "bench", "sched", "pipe", "-l", "2000"];
    let base = end_time_ns(&cmd);
    let mut scaled_args = vec!["--cost-scale", "context_switch=2"];
    scaled_args.extend_from_slice(&cmd);
    let scaled = end_time_ns(&scaled_args);
    let cs = wakesim_costs::profile_for("skx").unwrap().context_switch;
    assert!(scaled >= base + 2 * 2000 * cs, "{base} → {scaled} ns with {cs} ns more per switch");

    let dir = TempDir::new("cost-scale");
    let json = dir.join("r.json");
    ok(&["run", "--json", s(&json), "--cost-scale", "idle_states=2", "--cost-scale", "ipi_delivery.llc=0.5", "--", "perf", "bench", "sched", "pipe", "-l", "100"]);
    let (_, v) = read_json(&json);
    assert_eq!(v["cost_profile"], "skx (idle_states=2, ipi_delivery.llc=0.5)");

    rejects(&["run", "--cost-scale", "context_switch"], &["--cost-scale", "KEY=FACTOR"]);
    rejects(&["run", "--cost-scale", "context_swich=2"], &["unknown cost key 'context_swich'"]);
    rejects(&["run", "--cost-scale", "context_switch=-2"], &["non-negative"]);
    rejects(&["run", "--cost-scale", "line.far=2"], &["line.far"]);
}
