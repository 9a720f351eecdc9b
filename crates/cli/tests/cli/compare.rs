//! `wakesim compare`: paired seeds, the table styles, the output directory (data, resume,
//! refusal), bad input, and results that do not depend on `--jobs`. Small machine, short runs.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// A workload whose results depend on the seed (schbench v1 sleeps a random time) and that
/// runs in well under a second; no warmup (-w 0), so every sample counts.
const CMD: &[&str] = &["--", "schbench-v1", "-m", "{m}", "-t", "2", "-r", "2", "-w", "0"];

fn compare_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["compare", "--machine", "test-2x4", "--kernel", "v6.5", "--sweep", "m=1,2"];
    a.extend_from_slice(extra);
    a.extend_from_slice(CMD);
    a
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

fn run_ok(args: &[&str]) -> (String, String) {
    let o = wakesim(args);
    assert_eq!(o.status.code(), Some(0), "wakesim {args:?}\nstderr:\n{}", stderr(&o));
    (stdout(&o), stderr(&o))
}

#[test]
fn every_variant_runs_with_the_baselines_seeds() {
    let d = TempDir::new("cmp-paired");
    let out = d.join("x");
    // `same` turns on a feature v6.5 already has: it must reproduce the baseline run for run.
    run_ok(&compare_args(&["--variant", "same=+TTWU_QUEUE", "--variant", "sh=+SHARED_RUNQ", "--runs", "2", "--seed", "5", "--out", s(&out)]));
    for pt in ["m=1", "m=2"] {
        for k in 0..2 {
            let base = read_json(&out.join(format!("runs/baseline/{pt}/run-{k}.json")));
            let same = read_json(&out.join(format!("runs/same/{pt}/run-{k}.json")));
            let sh = read_json(&out.join(format!("runs/sh/{pt}/run-{k}.json")));
            assert_eq!(base["seed"], 5 + k);
            assert_eq!(sh["seed"], 5 + k, "variant run k uses the baseline's seed");
            assert_eq!(base["record"], same["record"], "same seed and features → same run ({pt} run {k})");
        }
        let r0 = read_json(&out.join(format!("runs/baseline/{pt}/run-0.json")));
        let r1 = read_json(&out.join(format!("runs/baseline/{pt}/run-1.json")));
        assert_ne!(r0["record"], r1["record"], "repetitions use different seeds ({pt})");
    }
}

#[test]
fn a_run_file_names_the_wakesim_run_that_reproduces_it() {
    let d = TempDir::new("cmp-repro");
    let out = d.join("x");
    run_ok(&compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "2", "--out", s(&out)]));
    let f = read_json(&out.join("runs/sh/m=2/run-1.json"));
    let argv: Vec<String> = f["argv"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    assert_eq!(argv.join(" "), "wakesim run --machine test-2x4 --kernel v6.5 --features=+SHARED_RUNQ --seed 2 --duration 60 -- schbench-v1 -m 2 -t 2 -r 2 -w 0");
    let json = d.join("run.json");
    let mut args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
    args.splice(1..1, ["--json", s(&json)]);
    run_ok(&args);
    let single = read_json(&json);
    assert_eq!(single["stats"], f["stats"], "wakesim run with that argv gives the same statistics");
    assert_eq!(single["output"], f["output"]);
    let commands = std::fs::read_to_string(out.join("commands.txt")).unwrap();
    assert!(commands.lines().any(|l| l == argv.join(" ")), "{commands}");
}

#[test]
fn copies_run_side_by_side_and_the_run_file_says_so() {
    let d = TempDir::new("cmp-copies");
    let out = d.join("x");
    let (text, _) = run_ok(&["compare", "--machine", "test-2x4", "--kernel", "v6.5", "--runs", "1", "--copies", "2", "--format", "mmtests", "--duration", "0.02", "--out", s(&out), "--", "context1", "1"]);
    assert!(text.starts_with("# wakesim compare: context1 (x2) on test-2x4"), "{text}");
    let f = read_json(&out.join("runs/baseline/all/run-0.json"));
    let argv: Vec<String> = f["argv"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    assert_eq!(argv.join(" "), "wakesim run --machine test-2x4 --kernel v6.5 --seed 1 --duration 0.02 --copies 2 -- context1 1");
    let json = d.join("run.json");
    let mut args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
    args.splice(1..1, ["--json", s(&json)]);
    run_ok(&args);
    assert_eq!(read_json(&json)["metric"]["value"], f["record"]["metrics"][0]["value"], "the sum over both copies, as wakesim run --copies 2 gives it");
    assert_eq!(read_json(&out.join("experiment.json"))["experiment"]["copies"], 2);
    rejects(&["compare", "--machine", "test-2x4", "--copies", "0", "--", "context1", "1"], &["--copies"]);
}

#[test]
fn stdout_has_every_table_style() {
    let (out, _) = run_ok(&compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "3"]));
    for h in ["## mmtests compare", "## normalized", "## latency percentiles", "## schedstat diff", "## where the time went"] {
        assert!(out.contains(h), "{h} missing:\n{out}");
    }
    // mmtests rows: statistic, point, then per variant a value and a gain in (…) or *…*.
    let amean: Vec<&str> = out.lines().filter(|l| l.starts_with("Amean     m-")).collect();
    assert_eq!(amean.len(), 2, "one Amean row per sweep point (p99 latency is lower-is-better)");
    for row in &amean {
        let f: Vec<&str> = row.split_whitespace().collect();
        assert!(f[2].parse::<f64>().is_ok() && f[3] == "(" && f[4] == "0.00%)", "{row}");
        assert!(row.ends_with("%)") || row.ends_with("%*"), "{row}");
    }
    assert!(out.contains("Test          : schbench-v1\nUnits         : Normalized wakeup latency p99 (us)\nInterpretation: Lower is better\nStatistic     : AMean\n"), "{out}");
    let norm_row = out.lines().find(|l| l.starts_with("    1     1.00 [ 0.00](")).expect("normalized row for m=1");
    assert_eq!(norm_row.matches('[').count(), 2, "{norm_row}");
    assert!(out.contains("Wakeup Latencies percentiles (usec), m-2"), "schbench's own distribution side by side");
    assert!(out.lines().any(|l| l.trim_start().starts_with("* 99.0th:")));
    assert!(out.contains("schedstat diff, m-1 (mean of 3 runs)") && out.contains("Domain MC (summed over CPUs)"));
    assert!(out.contains("Where the wakeup time went, m-2") && out.contains("Placement (select_idle_sibling outcome"));
    // --format picks styles.
    let (only, _) = run_ok(&compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "1", "--format", "normalized"]));
    assert!(only.contains("## normalized") && !only.contains("## mmtests"));
}

#[test]
fn out_dir_holds_tidy_results_statistics_and_commands() {
    let d = TempDir::new("cmp-out");
    let out = d.join("x");
    run_ok(&compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "2", "--out", s(&out)]));
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("machine,kernel,variant,features,features_on,workload,m,run,seed,metric,unit,higher_is_better,value"));
    // 2 points × 2 variants × 2 runs × 1 metric.
    assert_eq!(lines.count(), 8);
    let rows = read_json(&out.join("results.json"));
    assert_eq!(rows.as_array().unwrap().len(), 8);
    assert_eq!(rows[0]["variant"], "baseline");
    assert_eq!(rows[7]["features"], "+SHARED_RUNQ");
    assert!(rows[7]["features_on"].as_str().unwrap().contains("SHARED_RUNQ"));
    assert_eq!(rows[7]["m"], "2");
    let summary = read_json(&out.join("summary.json"));
    assert_eq!(summary.as_array().unwrap().len(), 4);
    assert_eq!(summary[1]["mean_kind"], "Amean");
    assert!(summary[1]["welch_p"].is_number() || summary[1]["welch_p"].is_null());
    let exp = read_json(&out.join("experiment.json"));
    assert_eq!(exp["experiment"]["variants"][1]["spec"], "+SHARED_RUNQ");
    assert_eq!(exp["experiment"]["sweeps"][0][0], "m");
    assert!(exp["argv"].as_array().unwrap().iter().any(|a| a == "--out"));
    let cmds = std::fs::read_to_string(out.join("commands.txt")).unwrap();
    assert_eq!(cmds.lines().filter(|l| l.starts_with("wakesim run ")).count(), 8);
    // No temporary files left behind.
    for f in entries_under(&out) {
        assert!(!f.to_string_lossy().ends_with(".tmp"), "{}", f.display());
    }
}

#[test]
fn resume_reuses_finished_runs_and_redoes_missing_ones() {
    let d = TempDir::new("cmp-resume");
    let out = d.join("x");
    let args = compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "2", "--out", s(&out)]);
    run_ok(&args);
    // Mark one finished run so that its reuse shows in the results, and remove another.
    let kept = out.join("runs/baseline/m=1/run-0.json");
    let mut v = read_json(&kept);
    v["record"]["metrics"][0]["value"] = Value::from(12345.0);
    std::fs::write(&kept, serde_json::to_string(&v).unwrap()).unwrap();
    let gone = out.join("runs/sh/m=2/run-1.json");
    let before = std::fs::read_to_string(&gone).unwrap();
    std::fs::remove_file(&gone).unwrap();
    let (_, err) = run_ok(&args);
    assert!(err.contains("7 of 8 runs already done"), "{err}");
    assert_eq!(std::fs::read_to_string(&gone).unwrap(), before, "the missing run is redone, identically");
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(csv.lines().any(|l| l.contains(",baseline,") && l.ends_with(",12345.0")), "the finished run was not rerun:\n{csv}");
    // --jobs and --format are not part of the experiment: still the same one.
    run_ok(&compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "2", "--out", s(&out), "--jobs", "1", "--format", "mmtests"]));
}

#[test]
fn more_runs_extend_an_experiment_and_fewer_are_refused() {
    let d = TempDir::new("cmp-more");
    let out = d.join("x");
    run_ok(&compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "1", "--out", s(&out)]));
    let first = std::fs::read_to_string(out.join("runs/sh/m=2/run-0.json")).unwrap();
    let (_, err) = run_ok(&compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "2", "--out", s(&out)]));
    assert!(err.contains("4 of 8 runs already done"), "{err}");
    assert_eq!(std::fs::read_to_string(out.join("runs/sh/m=2/run-0.json")).unwrap(), first, "a finished run is kept");
    // The second seed's run is the one a fresh two-run experiment makes.
    let fresh = d.join("fresh");
    run_ok(&compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "2", "--out", s(&fresh)]));
    let record = |dir: &std::path::Path| read_json(&dir.join("runs/sh/m=2/run-1.json"))["record"].clone();
    assert_eq!(record(&out), record(&fresh));
    assert_eq!(read_json(&out.join("experiment.json"))["experiment"]["runs"], 2);
    let e = rejects(&compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "1", "--out", s(&out)]), &["holds another experiment", "runs"]);
    assert!(e.contains("was 2, now 1"), "{e}");
}

#[test]
fn a_directory_of_another_experiment_is_refused() {
    let d = TempDir::new("cmp-other");
    let out = d.join("x");
    run_ok(&compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "1", "--out", s(&out)]));
    let before = std::fs::read_to_string(out.join("experiment.json")).unwrap();
    let e = rejects(&compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "1", "--duration", "30", "--out", s(&out)]), &["holds another experiment", "duration"]);
    assert!(e.contains("was 60.0, now 30.0"), "{e}");
    assert_eq!(std::fs::read_to_string(out.join("experiment.json")).unwrap(), before, "refused: nothing rewritten");
    let other = d.join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    rejects(&compare_args(&["--runs", "1", "--out", s(&other)]), &["not empty", "no wakesim experiment"]);
}

#[test]
fn bad_variants_sweeps_and_options_are_one_line_errors() {
    let base = ["compare", "--machine", "test-2x4", "--kernel", "v6.5"];
    let with = |extra: &[&'static str], cmd: &[&'static str]| -> Vec<&'static str> { [&base[..], extra, &["--"], cmd].concat() };
    rejects(&with(&["--variant", "x=+NO_SUCH_FEATURE"], &["perf", "bench", "sched", "pipe", "-l", "10"]), &["NO_SUCH_FEATURE"]);
    rejects(&with(&["--variant", "x"], &["perf", "bench", "sched", "pipe"]), &["NAME=SPEC"]);
    rejects(&with(&["--sweep", "clients=1,2"], &["perf", "bench", "sched", "pipe", "-l", "10"]), &["--sweep clients", "does not use {clients}"]);
    rejects(&with(&[], &["schbench-v1", "-m", "{m}"]), &["{m}", "no --sweep m"]);
    rejects(&with(&["--sweep", "m=1,x"], &["schbench-v1", "-m", "{m}", "-r", "1"]), &["schbench-v1 -m x"]);
    rejects(&with(&["--format", "fancy"], &["perf", "bench", "sched", "pipe"]), &["--format", "fancy"]);
    rejects(&with(&["--runs", "0"], &["perf", "bench", "sched", "pipe"]), &["--runs"]);
    rejects(&with(&["--jobs", "0"], &["perf", "bench", "sched", "pipe"]), &["--jobs"]);
    rejects(&with(&["--duration", "-1"], &["perf", "bench", "sched", "pipe"]), &["--duration"]);
    rejects(&with(&["--variant", "SHARED_RUNQ_GATED=+SHARED_RUNQ_GATED"], &["perf", "bench", "sched", "pipe"]), &["SHARED_RUNQ_GATED", "SHARED_RUNQ"]);
}

#[test]
fn results_do_not_depend_on_the_number_of_threads() {
    let d = TempDir::new("cmp-jobs");
    let (a, b) = (d.join("a"), d.join("b"));
    let (out1, _) = run_ok(&compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "3", "--jobs", "1", "--out", s(&a)]));
    let (out2, _) = run_ok(&compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "3", "--jobs", "3", "--out", s(&b)]));
    assert_eq!(out1, out2, "stdout");
    for f in ["results.csv", "results.json", "summary.csv", "summary.json", "runs/baseline/m=2/run-2.json", "runs/sh/m=1/run-0.json"] {
        assert_eq!(std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap(), "{f}");
    }
}

#[test]
fn a_killed_compare_keeps_its_finished_runs_and_resumes() {
    let d = TempDir::new("cmp-kill");
    let out = d.join("x");
    let args = compare_args(&["--variant", "sh=+SHARED_RUNQ", "--runs", "25", "--jobs", "1", "--format", "mmtests", "--out", s(&out)]);
    let mut child = std::process::Command::new(bin()).args(&args).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let first = out.join("runs/baseline/m=1/run-0.json");
    let t0 = std::time::Instant::now();
    while !first.exists() && t0.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    assert!(first.exists(), "no run finished within a minute");
    assert!(!out.join("results.csv").exists(), "killed before the end: no results yet");
    // Every run file present is complete.
    let mut done = 0;
    for v in ["baseline", "sh"] {
        for p in ["m=1", "m=2"] {
            for e in std::fs::read_dir(out.join("runs").join(v).join(p)).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if !name.starts_with('.') {
                    read_json(&e.path());
                    done += 1;
                }
            }
        }
    }
    assert!(done >= 1 && done < 100, "{done} runs finished");
    let (_, err) = run_ok(&args);
    assert!(err.contains(&format!("{done} of 100 runs already done")), "{err}");
    assert!(out.join("results.csv").exists());
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 100);
}
