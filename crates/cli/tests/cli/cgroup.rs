//! `--cgroup`: a benchmark runs in its session's autogroup by default, as on a distribution
//! kernel, so its enqueues update the group's `tg->load_avg`; `root` runs it outside any group.

use crate::common::*;

const TBENCH: &[&str] = &["tbench", "-t", "1", "--warmup", "0", "4"];

fn tg_updates(json: &std::path::Path) -> u64 {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    v["stats"]["wake"]["tg_updates"].as_u64().expect("stats.wake.tg_updates")
}

#[test]
fn a_benchmark_runs_in_an_autogroup_unless_told_root() {
    let dir = TempDir::new("cgroup");
    let (auto, root) = (dir.join("auto.json"), dir.join("root.json"));
    let out = ok(&run_with(&["--machine", "test-2x4", "--duration", "0.02", "--json", s(&auto)], TBENCH));
    assert!(out.contains("tg->load_avg updates"), "{out}");
    ok(&run_with(&["--machine", "test-2x4", "--duration", "0.02", "--cgroup", "root", "--json", s(&root)], TBENCH));
    assert!(tg_updates(&auto) > 0, "an autogroup's tasks update tg->load_avg");
    assert_eq!(tg_updates(&root), 0, "tasks in the root group update no group's load");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&auto).unwrap()).unwrap();
    assert_eq!(v["cgroup"], "autogroup");
}

#[test]
fn an_unknown_cgroup_setup_is_one_line_naming_it_exit_2_and_nothing_is_written() {
    let dir = TempDir::new("bad-cgroup");
    let json = dir.join("never.json");
    let line = rejects(&run_with(&["--machine", "test-smt2", "--cgroup", "user.slice", "--json", s(&json)], TBENCH), &["--cgroup", "'user.slice'"]);
    assert!(line.contains("autogroup, root"), "the known setups are listed: {line}");
    let out = dir.join("cmp");
    rejects(&["compare", "--machine", "test-smt2", "--cgroup", "x", "--runs", "1", "--out", s(&out), "--", "perf", "bench", "sched", "pipe", "-l", "10"], &["'x'"]);
    assert!(dir.entries().is_empty(), "{:?}", dir.entries());
}
