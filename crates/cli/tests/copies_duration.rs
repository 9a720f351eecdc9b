//! `--copies N` runs instances side by side and aggregates as UnixBench/mmtests do; a
//! benchmark's own run time (netperf -l, schbench -r, ...) bounds the run unless --duration is
//! shorter.

mod common;

use common::*;

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
