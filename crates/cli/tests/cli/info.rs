//! `wakesim machines`, `machines show`, `workloads`, `features`, `kernels`, `bench`, `--help`.

use crate::common::*;

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

/// `wakesim features`: a header (`feature`, `kind`, one column per kernel profile,
/// `description`), then one row per feature with its kind and `+`/`-` per kernel. Returns
/// (kernels, [(feature, [on per kernel])]).
fn feature_table() -> (Vec<String>, Vec<(String, Vec<bool>)>) {
    let (kernels, rows) = feature_table_with_kinds();
    (kernels, rows.into_iter().map(|(name, _, on)| (name, on)).collect())
}

/// [`feature_table`] with each row's kind and whole line: (kernels, [(feature, (kind, line), on)]).
fn feature_table_with_kinds() -> (Vec<String>, Vec<(String, (String, String), Vec<bool>)>) {
    let out = ok(&["features"]);
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().expect("a header line").split_whitespace().collect();
    assert_eq!(header.first(), Some(&"feature"), "header: {header:?}");
    assert_eq!(header.get(1), Some(&"kind"), "header: {header:?}");
    assert_eq!(header.last(), Some(&"description"), "header: {header:?}");
    let kernels: Vec<String> = header[2..header.len() - 1].iter().map(|s| s.to_string()).collect();
    assert!(!kernels.is_empty(), "no kernel columns: {header:?}");
    let mut rows = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        let name = f[0];
        assert!(name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'), "feature name {name:?}");
        let kind = f[1];
        assert!(["SCHED_FEAT", "version", "mechanism", "patch"].contains(&kind), "{name}: kind {kind:?}");
        assert!(f.len() > kernels.len() + 2, "{name} has no description: {line}");
        let on: Vec<bool> = f[2..kernels.len() + 2]
            .iter()
            .map(|c| match *c {
                "+" => true,
                "-" => false,
                other => panic!("{name}: cell {other:?} is neither + nor -"),
            })
            .collect();
        rows.push((name.to_string(), (kind.to_string(), line.to_string()), on));
    }
    (kernels, rows)
}

#[test]
fn features_says_where_each_flag_comes_from_and_links_the_patches() {
    let (_, rows) = feature_table_with_kinds();
    let row = |name: &str| rows.iter().find(|r| r.0 == name).unwrap_or_else(|| panic!("{name} not listed")).1.clone();
    for f in ["PLACE_LAG", "TTWU_QUEUE", "SIS_UTIL", "SIS_PROP", "DELAY_DEQUEUE"] {
        assert_eq!(row(f).0, "SCHED_FEAT", "{f}");
    }
    for f in ["EEVDF", "TTWU_QUEUE_IDLE", "WA_WEIGHT_NOEQUAL", "CSD_POLL", "TG_LOAD_RATELIMIT", "SM_IDLE"] {
        assert_eq!(row(f).0, "version", "{f}");
    }
    for f in ["SIS_FILTER", "SHARED_RUNQ", "SHARED_RUNQ_GATED", "NEWIDLE_SKIP_IPI"] {
        let (kind, line) = row(f);
        assert_eq!(kind, "patch", "{f}");
        assert!(line.contains("https://lore.kernel.org/"), "{f} has no lore link: {line}");
    }
}

fn default_kernel() -> String {
    let help = ok(&["run", "--help"]);
    let line = help.lines().find(|l| l.contains("--kernel")).expect("--kernel in run --help");
    let d = line.split("[default: ").nth(1).and_then(|r| r.split(']').next()).expect("a default kernel");
    d.to_string()
}

/// The `features` object of a run's JSON.
fn run_features(extra: &[&str]) -> serde_json::Map<String, serde_json::Value> {
    let dir = TempDir::new("features");
    let json = dir.join("f.json");
    let mut args = vec!["run", "--machine", "test-smt2", "--json", s(&json)];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "perf", "bench", "sched", "pipe", "-l", "10"]);
    ok(&args);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    v["features"].as_object().expect("a features object").clone()
}

fn column(rows: &[(String, Vec<bool>)], k: usize) -> serde_json::Map<String, serde_json::Value> {
    rows.iter().map(|(n, on)| (n.clone(), serde_json::Value::Bool(on[k]))).collect()
}

#[test]
fn features_lists_defaults() {
    let (kernels, rows) = feature_table();
    let mut names: Vec<&String> = rows.iter().map(|r| &r.0).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), rows.len(), "a feature is listed twice");
    // The default run uses exactly the default kernel's column.
    let dk = default_kernel();
    let k = kernels.iter().position(|x| *x == dk).unwrap_or_else(|| panic!("default kernel {dk} has no column: {kernels:?}"));
    assert_eq!(run_features(&[]), column(&rows, k), "a default run's features differ from the {dk} column");
    let get = |name: &str, k: usize| rows.iter().find(|r| r.0 == name).unwrap_or_else(|| panic!("{name} not listed")).1[k];
    // The merged mailing-list changes are on by default: change 1 (v6.0) and change 2 (2018).
    assert!(get("TTWU_QUEUE_IDLE", k) && get("WA_WEIGHT_NOEQUAL", k));
    // ...and absent from the kernels they were measured on (5.19 and 4.15).
    if let Some(k519) = kernels.iter().position(|x| x == "v5.19") {
        assert!(!get("TTWU_QUEUE_IDLE", k519), "TTWU_QUEUE_IDLE on in v5.19");
    }
    if let Some(k415) = kernels.iter().position(|x| x == "v4.15") {
        assert!(!get("WA_WEIGHT_NOEQUAL", k415), "WA_WEIGHT_NOEQUAL on in v4.15");
    }
}

#[test]
fn every_kernel_profile_runs_with_its_listed_features() {
    let (kernels, rows) = feature_table();
    let listed: Vec<String> = ok(&["kernels"]).lines().filter(|l| !l.starts_with(char::is_whitespace)).map(|l| l.split_whitespace().next().unwrap().to_string()).collect();
    assert_eq!(listed, kernels, "`wakesim kernels` and the columns of `wakesim features` differ");
    for (k, name) in kernels.iter().enumerate() {
        assert_eq!(run_features(&["--kernel", name]), column(&rows, k), "kernel {name}: the run's features differ from its column");
    }
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
fn bench_with_the_server_background_runs_its_tasks_too_and_a_bad_profile_is_one_line() {
    let events = |noise: &str| -> u64 {
        let out = ok(&["bench", "--scenario", "104", "--seconds", "0.002", "--noise", noise]);
        out.lines().nth(1).unwrap().split_whitespace().nth(4).unwrap().parse().unwrap()
    };
    // The background's interrupts and kworkers take CPU time from the pairs: another run.
    assert_ne!(events("server"), events("none"));
    rejects(&["bench", "--scenario", "104", "--noise", "no-such-profile"], &["no-such-profile"]);
}

#[test]
fn help_and_version_exit_zero() {
    let help = ok(&["--help"]);
    for cmd in ["run", "machines", "workloads", "features", "kernels", "bench"] {
        assert!(help.lines().any(|l| l.trim_start().starts_with(cmd)), "{cmd} not in --help:\n{help}");
    }
    let run_help = ok(&["run", "--help"]);
    for flag in ["--machine", "--kernel", "--seed", "--duration", "--json", "--tasks", "--features", "--costs"] {
        assert!(run_help.contains(flag), "{flag} not in run --help");
    }
    assert!(ok(&["--version"]).starts_with("wakesim "));
}
