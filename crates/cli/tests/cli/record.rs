//! Issue #19: `wakesim record` (a real run's scheduling behaviour as a task file: live through
//! tracefs, or imported from a tracefs text dump or `perf script` text) and its replay with
//! `wakesim run --tasks FILE`, including `--cpu-scale`.

use crate::common::*;

/// The `Elapsed: X s` line of a task-file run, in seconds.
fn elapsed(out: &str) -> f64 {
    let first = out.lines().next().unwrap_or("");
    first
        .strip_prefix("Elapsed: ")
        .and_then(|r| r.strip_suffix(" s"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no Elapsed line first:\n{out}"))
}

#[test]
fn cpu_scale_two_doubles_a_compute_bound_task_and_leaves_sleeps_alone() {
    let dir = TempDir::new("cpu-scale");
    let f = dir.write("cb.toml", "name = \"cb\"\n[[task]]\nname = \"t\"\nprogram = [\"compute 20ms\"]\n");
    let run = |scale: &str| elapsed(&ok(&["run", "--machine", "test-2x4", "--noise", "none", "--tasks", s(&f), "--cpu-scale", scale]));
    let (one, two) = (run("1"), run("2"));
    assert!((one - 0.020).abs() < 0.0005, "{one}");
    assert!((two / one - 2.0).abs() < 0.01, "scale 2: {two} s vs {one} s");
    // A sleep is not compute: 2 x 1 ms compute + 10 ms sleep -> 12 ms at scale 1, 14 ms at 2.
    let g = dir.write("mix.toml", "name = \"mix\"\n[[task]]\nname = \"t\"\nprogram = [\"compute 1ms\", \"sleep 10ms\", \"compute 1ms\"]\n");
    let mix = |scale: &str| elapsed(&ok(&["run", "--machine", "test-2x4", "--noise", "none", "--tasks", s(&g), "--cpu-scale", scale]));
    let (a, b) = (mix("1"), mix("2"));
    assert!((b - a - 0.002).abs() < 0.0002, "scale 1: {a} s, scale 2: {b} s");
    // The JSON says what ran; without the flag the key is absent (the golden corpus is unchanged).
    let json = dir.join("r.json");
    ok(&["run", "--machine", "test-2x4", "--tasks", s(&f), "--cpu-scale", "0.5", "--json", s(&json)]);
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["cpu_scale"], 0.5);
    ok(&["run", "--machine", "test-2x4", "--tasks", s(&f), "--json", s(&json)]);
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(doc.get("cpu_scale").is_none());
}

#[test]
fn a_bad_cpu_scale_is_one_line_exit_2() {
    for bad in ["0", "-1", "nan", "inf", "abc", "5000"] {
        rejects(&["run", "--machine", "test-2x4", "--cpu-scale", bad], &["--cpu-scale"]);
    }
}
