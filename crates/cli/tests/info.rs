//! `wakesim machines`, `machines show`, `workloads`, `features`, `bench`, `--help`.

mod common;

use common::*;

#[test]
fn machines_lists_every_preset() {
    let out = ok(&["machines"]);
    let listed: Vec<&str> = out.lines().filter_map(|l| l.split_whitespace().next()).collect();
    let presets = preset_files();
    assert!(presets.len() >= 9, "presets found: {presets:?}");
    for p in &presets {
        assert!(listed.contains(&p.as_str()), "preset {p} not listed:\n{out}");
    }
    // The real parts the spec names, with their CPU counts.
    for (name, cpus) in [("xeon-8269cy", 104), ("xeon-8260", 96), ("xeon-4s", 192), ("altra", 80), ("epyc-7763", 256), ("epyc-9654", 384), ("epyc-9754", 512)] {
        let line = out.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_else(|| panic!("{name} missing:\n{out}"));
        assert_eq!(line.split_whitespace().nth(1), Some(cpus.to_string().as_str()), "{line}");
    }
    assert!(out.lines().any(|l| l.starts_with("host")), "host is mentioned:\n{out}");
    // Every preset runs through `machines show`.
    for p in &presets {
        let shown = ok(&["machines", "show", p]);
        assert!(shown.starts_with(&format!("{p}: ")), "{shown}");
    }
}

#[test]
fn machines_show_prints_domain_hierarchy() {
    let out = ok(&["machines", "show", "xeon-8269cy"]);
    for needle in [
        "sched domains of CPU 0: SMT(2) -> MC(52) -> NUMA(104); sd_llc_size 52",
        "CPU0 attaching sched-domain(s):",
        " domain-0: span=0,52 level=SMT",
        "  domain-1: span=0-25,52-77 level=MC",
        "   domain-2: span=0-103 level=NUMA",
        "CPU26 attaching sched-domain(s):",
    ] {
        assert!(out.contains(needle), "missing {needle:?}:\n{out}");
    }
    // sd_llc is marked on the MC level (the LLC).
    let llc_marks = out.lines().filter(|l| l.ends_with("<- sd_llc")).count();
    assert_eq!(llc_marks, 2, "one sd_llc mark per CPU shown:\n{out}");
    // Altra: 2-CPU clusters are the LLC; no SMT, no MC.
    let altra = ok(&["machines", "show", "altra"]);
    assert!(altra.contains("CLS(2) -> PKG(80)"), "{altra}");
    assert!(altra.contains(" domain-0: span=0-1 level=CLS"), "{altra}");
    assert!(!altra.contains("level=SMT") && !altra.contains("level=MC"), "{altra}");
    // --all prints every CPU.
    let all = ok(&["machines", "show", "test-smt2", "--all"]);
    assert_eq!(all.lines().filter(|l| l.ends_with("attaching sched-domain(s):")).count(), 8, "{all}");
}

#[test]
fn features_lists_defaults() {
    let out = ok(&["features"]);
    let mut names = Vec::new();
    for line in out.lines() {
        let mut f = line.split_whitespace();
        let name = f.next().unwrap();
        let state = f.next().unwrap_or("");
        assert!(name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'), "feature name {name:?}");
        assert!(state == "on" || state == "off", "default of {name} is {state:?}");
        assert!(f.next().is_some(), "{name} has no description");
        names.push((name.to_string(), state == "on"));
    }
    // Mainline defaults, including the two merged mailing-list changes.
    for expected in ["TTWU_QUEUE", "TTWU_QUEUE_IDLE", "WA_IDLE", "WA_WEIGHT", "WA_BIAS", "WA_WEIGHT_NOEQUAL", "SIS_UTIL", "WAKEUP_PREEMPTION", "RUN_TO_PARITY"] {
        assert!(names.contains(&(expected.to_string(), true)), "{expected} should be listed and on by default:\n{out}");
    }
    let mut sorted: Vec<_> = names.iter().map(|n| &n.0).collect();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "a feature is listed twice");
}

#[test]
fn workloads_lists_perf_pipe_and_task_files() {
    let out = ok(&["workloads"]);
    assert!(out.lines().any(|l| l == "perf bench sched pipe"), "{out}");
    assert!(out.contains("-l/--loop"), "{out}");
    assert!(out.contains("--tasks FILE"), "{out}");
}

#[test]
fn bench_reports_events_per_second() {
    let out = ok(&["bench", "--scenario", "104", "--seconds", "0.001"]);
    let mut lines = out.lines();
    let header = lines.next().unwrap();
    for col in ["scenario", "machine", "cpus", "events", "events/s", "sim-s/wall-s"] {
        assert!(header.split_whitespace().any(|h| h == col), "column {col} missing: {header}");
    }
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(&row[..3], &["104", "xeon-8269cy", "104"], "{out}");
    let events: u64 = row[4].parse().unwrap();
    let per_sec: f64 = row[5].parse().unwrap();
    assert!(events > 0 && per_sec > 0.0, "{out}");
    assert!(out.contains("peak memory:"), "{out}");
}

#[test]
fn help_and_version_exit_zero() {
    let help = ok(&["--help"]);
    for cmd in ["run", "machines", "workloads", "features", "bench"] {
        assert!(help.lines().any(|l| l.trim_start().starts_with(cmd)), "{cmd} not in --help:\n{help}");
    }
    let run_help = ok(&["run", "--help"]);
    for flag in ["--machine", "--seed", "--duration", "--json", "--tasks", "--features", "--costs"] {
        assert!(run_help.contains(flag), "{flag} not in run --help");
    }
    assert!(ok(&["--version"]).starts_with("wakesim "));
}
