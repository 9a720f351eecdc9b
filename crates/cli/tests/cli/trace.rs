//! `wakesim run --trace FILE`: the file Perfetto opens, and what tracing must not change.

use crate::common::*;
use serde_json::Value;

fn pipe_run<'a>(pre: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["run", "--machine", "test-smt2"];
    v.extend_from_slice(pre);
    v.extend_from_slice(&["--", "perf", "bench", "sched", "pipe", "-l", "300"]);
    v
}

fn read_events(path: &std::path::Path) -> Vec<Value> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("trace is valid JSON");
    v["traceEvents"].as_array().unwrap().clone()
}

#[test]
fn trace_writes_a_chrome_trace_and_leaves_the_output_unchanged() {
    let dir = TempDir::new("trace");
    let f = dir.join("trace.json");
    let plain = ok(&pipe_run(&[]));
    let traced = ok(&pipe_run(&["--trace", s(&f)]));
    assert_eq!(plain, traced, "--trace changed what wakesim run prints");
    let evs = read_events(&f);
    let tasks: Vec<_> = evs.iter().filter(|e| e["ph"] == "X" && e["cat"] == "task").collect();
    let (bench, background): (Vec<&serde_json::Value>, Vec<&serde_json::Value>) = tasks.iter().partition(|e| e["name"].as_str().unwrap().starts_with("sched-pipe"));
    // 300 round trips: each task runs at least once per round trip.
    assert!(bench.len() >= 600, "{}", bench.len());
    assert!(bench.iter().all(|e| e["tid"].as_u64().unwrap() < 8));
    // Everything else that ran is the default background activity (`--noise server`).
    let server: Vec<String> = wakesim_machine::NoiseProfile::server().tasks.iter().map(|t| t.name.split('{').next().unwrap().to_string()).collect();
    for e in background {
        let name = e["name"].as_str().unwrap();
        assert!(server.iter().any(|p| name.starts_with(p.as_str())), "unexpected task {name} in the trace");
    }
    assert!(evs.iter().any(|e| e["ph"] == "s") && evs.iter().any(|e| e["ph"] == "f"), "wakeup arrows");
    assert_eq!(dir.entries(), vec!["trace.json".to_string()], "no temporary file left");
}

#[test]
fn the_same_seed_writes_a_byte_identical_trace_file() {
    let dir = TempDir::new("trace-det");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    ok(&pipe_run(&["--seed", "5", "--trace", s(&a)]));
    ok(&pipe_run(&["--seed", "5", "--trace", s(&b)]));
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(), "trace files differ");
}

#[test]
fn trace_window_keeps_only_the_asked_milliseconds() {
    let dir = TempDir::new("trace-window");
    let f = dir.join("w.json");
    ok(&pipe_run(&["--trace", s(&f), "--trace-window", "0.2,0.4"]));
    let evs = read_events(&f);
    let xs: Vec<_> = evs.iter().filter(|e| e["ph"] == "X").collect();
    assert!(!xs.is_empty());
    for e in xs {
        let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
        assert!(ts >= 200.0 && ts + dur <= 400.0 + 1e-9, "slice outside the window: {e}");
    }
}

#[test]
fn hitting_the_trace_limit_is_noted_on_stderr_and_in_the_file() {
    let dir = TempDir::new("trace-limit");
    let f = dir.join("l.json");
    let o = wakesim(&pipe_run(&["--trace", s(&f), "--trace-limit", "50"]));
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("limit of 50 events"), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    assert_eq!(v["otherData"]["truncated"], true);
}

#[test]
fn bad_trace_options_are_one_line_errors_and_write_nothing() {
    let dir = TempDir::new("trace-bad");
    let f = dir.join("t.json");
    for w in ["5", "a,b", "3,1", "-1,2", "1,1", "1,inf"] {
        rejects(&pipe_run(&["--trace", s(&f), "--trace-window", w]), &["--trace-window"]);
    }
    rejects(&pipe_run(&["--trace", s(&f), "--trace-limit", "0"]), &["--trace-limit"]);
    rejects(&pipe_run(&["--trace-window", "0,1"]), &["--trace"]);
    let missing = dir.join("no-such-dir").join("t.json");
    rejects(&pipe_run(&["--trace", s(&missing)]), &["no-such-dir"]);
    // Onto a directory: the run happens, the rename fails, nothing is left behind.
    std::fs::create_dir(dir.join("taken")).unwrap();
    rejects(&pipe_run(&["--trace", s(&dir.join("taken"))]), &["taken"]);
    assert_eq!(dir.entries(), vec!["taken".to_string()]);
}
