//! `wakesim native`, `calibrate` and `validate` on this machine. These measure the host, so they
//! assert that the measurement ran and produced sane, bounded figures (positive, finite, spread
//! reported) — never a timing threshold.

use crate::common::*;
use std::process::{Command, Stdio};

/// Run `wakesim ARGS` with `XDG_CONFIG_HOME` pointed at `config` (never the real home).
fn wakesim_cfg(config: &std::path::Path, prefix: &[&str], args: &[&str]) -> std::process::Output {
    let (prog, pre): (&str, &[&str]) = match prefix.split_first() {
        Some((p, rest)) => (p, rest),
        None => (bin(), &[]),
    };
    let mut cmd = Command::new(prog);
    cmd.args(pre);
    if !prefix.is_empty() {
        cmd.arg(bin());
    }
    cmd.args(args).stdin(Stdio::null()).env("RUST_BACKTRACE", "1").env("XDG_CONFIG_HOME", config);
    cmd.output().expect("cannot start the wakesim binary")
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[test]
fn native_pipe_prints_perfs_lines_with_a_positive_figure() {
    let out = ok(&["native", "--", "perf", "bench", "sched", "pipe", "-l", "2000"]);
    assert!(out.contains("# Executed 2000 pipe operations between two processes"), "{out}");
    let us = usecs_per_op(&out).expect("usecs/op line");
    assert!(us > 0.0 && us.is_finite(), "{out}");
    let t = total_time_sec(&out).expect("Total time line");
    assert!(t >= 0.0, "{out}");
    assert!(out.contains("ops/sec"), "{out}");
}

#[test]
fn native_hackbench_threads_and_processes_print_rt_tests_time_line() {
    for extra in [&[][..], &["-T"][..], &["-p"][..]] {
        let mut args = vec!["native", "--", "hackbench", "-g", "1", "-f", "4", "-l", "20"];
        args.extend_from_slice(extra);
        let out = ok(&args);
        let t: f64 = out.lines().find_map(|l| l.strip_prefix("Time: ")).expect("Time: line").parse().unwrap();
        assert!(t >= 0.0 && t.is_finite(), "{args:?}: {out}");
        assert!(out.contains("== 8 tasks"), "{out}");
    }
}

#[test]
fn native_schbench_prints_its_percentile_table_and_stops_at_its_runtime() {
    let out = ok(&["native", "--", "schbench", "-m", "1", "-t", "1", "-r", "1"]);
    assert!(out.contains("Wakeup Latencies percentiles"), "{out}");
    assert!(out.contains("50.0th"), "{out}");
}

#[test]
fn native_json_has_the_metric_and_the_output() {
    let d = TempDir::new("native-json");
    let j = d.join("n.json");
    ok(&["native", "--json", s(&j), "--", "perf", "bench", "sched", "pipe", "-T", "-l", "500"]);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(v["metric"]["name"], "usecs/op");
    assert!(v["metric"]["value"].as_f64().unwrap() > 0.0);
    assert!(v["output"].as_str().unwrap().contains("between two threads"));
}

#[test]
fn native_refuses_kernel_only_workloads_and_a_missing_command() {
    rejects(&["native", "--", "ipistorm", "numipi=100", "single=1", "offset=1", "cpulist=0", "wait=1"], &["cannot run natively", "smp_call_function_single"]);
    rejects(&["native"], &["needs a benchmark command"]);
    rejects(&["native", "--", "hackbench", "-g", "0"], &["hackbench"]);
}

#[test]
fn native_refuses_a_cpu_this_machine_does_not_have() {
    rejects(&["native", "--", "taskset", "-c", "1000", "perf", "bench", "sched", "pipe", "-l", "10"], &["1000"]);
}

#[test]
fn calibrate_quick_writes_a_complete_profile_that_host_loads_by_default() {
    let _cpus = exclusive_cpus();
    let cfg = TempDir::new("calib-default");
    let o = wakesim_cfg(cfg.path(), &[], &["calibrate", "--quick"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}\n{out}", stderr(&o));
    assert!(stderr(&o).contains("calibrate: [1/"), "progress lines on stderr: {}", stderr(&o));
    let path = cfg.join("wakesim/host-costs.toml");
    let text = std::fs::read_to_string(&path).expect("profile at the default location");
    assert!(text.contains("name = \"host-calibrated\""), "{text}");
    // Every direct measurement carries its median and spread.
    for key in ["syscall = ", "copy_ps_per_byte = ", "context_switch = ", "unix_send = ", "sock_msg_cold = ", "sock_wait = ", "pipe_wait = "] {
        let line = text.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("{key} missing:\n{text}"));
        assert!(line.contains("median") && line.contains("min") && line.contains("max"), "{line}");
        let v: u64 = line[key.len()..].split_whitespace().next().unwrap().parse().unwrap();
        if key == "sock_msg_cold = " {
            // A difference of two measured pairs (queued − hot), floored at 0: on a busy machine
            // the two can come out within each other's noise.
            assert!(line.contains("queued pair") && line.contains("hot pair"), "{line}");
        } else {
            assert!(v > 0, "{line}");
        }
    }
    // The socket work is solved in place, against the native pinned hackbench, in the split a
    // one-CPU socket stream measured.
    let send = text.lines().find(|l| l.starts_with("unix_send = ")).unwrap();
    assert!(send.contains("solved") && send.contains("hackbench"), "{send}");
    assert!(out.contains("socket stream on CPU") && out.contains("receiver per message"), "{out}");
    // The table shows median, min–max and spread for each measurement.
    assert!(out.contains("spread") && out.contains("syscall (getppid)"), "{out}");
    // The background activity last, beside the cost profile.
    assert!(out.contains("background activity (") && out.contains("host-noise.toml"), "{out}");
    let noise = std::fs::read_to_string(cfg.join("wakesim/host-noise.toml")).expect("host-noise.toml beside host-costs.toml");
    wakesim_machine::NoiseProfile::from_toml_str(&noise).unwrap_or_else(|e| panic!("{e}\n{noise}"));
    // `--machine host` now predicts with it; `--costs FILE` loads the same file.
    let j = cfg.join("r.json");
    let o = wakesim_cfg(cfg.path(), &[], &["run", "--machine", "host", "--json", s(&j), "--", "perf", "bench", "sched", "pipe", "-l", "200"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(v["cost_profile"], "host-calibrated");
    assert!(!stdout(&o).contains("# wakesim:"), "a calibrated host needs no note:\n{}", stdout(&o));
    let o = wakesim(&["run", "--machine", "host", "--costs", s(&path), "--", "perf", "bench", "sched", "pipe", "-l", "200"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stdout(&o).contains("# wakesim:"), "--costs needs no note:\n{}", stdout(&o));
}

#[test]
fn host_without_a_calibrated_profile_says_so_on_stdout() {
    let cfg = TempDir::new("host-uncalibrated");
    let o = wakesim_cfg(cfg.path(), &[], &["run", "--machine", "host", "--", "perf", "bench", "sched", "pipe", "-l", "50"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let out = stdout(&o);
    let first = out.lines().next().unwrap_or("");
    assert!(first.starts_with("# wakesim: ") && first.contains("calibrate") && first.contains("host-costs.toml"), "{out}");
    assert_eq!(out.lines().filter(|l| l.starts_with("# wakesim:")).count(), 1, "{out}");
}

#[test]
fn calibrate_on_one_cpu_skips_the_cross_cpu_wakeups_and_still_writes_a_usable_profile() {
    let _cpus = exclusive_cpus();
    if !std::path::Path::new("/usr/bin/taskset").exists() {
        eprintln!("taskset not installed: skipped");
        return;
    }
    let cfg = TempDir::new("calib-onecpu");
    let f = cfg.join("one.toml");
    let o = wakesim_cfg(cfg.path(), &["/usr/bin/taskset", "-c", "0"], &["calibrate", "--quick", "--out", s(&f)]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}\n{out}", stderr(&o));
    assert!(out.contains("cross-CPU wakeup") && out.contains("only one CPU usable"), "{out}");
    let text = std::fs::read_to_string(&f).unwrap();
    assert!(text.contains("# cross-CPU wakeup: only one CPU usable"), "the file says what was skipped:\n{text}");
    let o = wakesim(&["run", "--machine", "host", "--costs", s(&f), "--", "perf", "bench", "sched", "pipe", "-l", "200"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn calibrate_measures_each_distance_class_when_two_cpus_are_usable() {
    let _cpus = exclusive_cpus();
    if cpus() < 2 {
        return;
    }
    let cfg = TempDir::new("calib-two");
    let f = cfg.join("two.toml");
    let o = wakesim_cfg(cfg.path(), &[], &["calibrate", "--quick", "--out", s(&f)]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let idle = out.lines().find(|l| l.starts_with("wake 0->1") && l.contains("idle target")).expect(&out);
    let busy = out.lines().find(|l| l.starts_with("wake 0->1") && l.contains("busy target")).expect(&out);
    for l in [idle, busy] {
        let median: f64 = l.split_whitespace().find_map(|w| w.parse().ok()).unwrap();
        assert!(median > 0.0 && median.is_finite(), "{l}");
        assert!(l.trim_end().ends_with('%'), "spread reported: {l}");
    }
}

#[test]
fn a_malformed_default_profile_is_one_error_line_naming_the_key() {
    let cfg = TempDir::new("calib-bad");
    std::fs::create_dir_all(cfg.join("wakesim")).unwrap();
    std::fs::write(cfg.join("wakesim/host-costs.toml"), "name = \"x\"\nsyscall = -5\n").unwrap();
    let o = wakesim_cfg(cfg.path(), &[], &["run", "--machine", "host", "--", "perf", "bench", "sched", "pipe", "-l", "10"]);
    let line = assert_one_line_error(&o, "bad default profile");
    assert!(line.contains("syscall") && line.contains("host-costs.toml:2"), "{line}");
    // Other machines do not read it.
    let o = wakesim_cfg(cfg.path(), &[], &["run", "--machine", "test-smt2", "--", "perf", "bench", "sched", "pipe", "-l", "10"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn calibrate_refuses_an_out_path_in_a_missing_directory() {
    let cfg = TempDir::new("calib-out");
    let bad = cfg.join("no/such/dir/x.toml");
    let o = wakesim_cfg(cfg.path(), &[], &["calibrate", "--quick", "--out", s(&bad)]);
    let line = assert_one_line_error(&o, "calibrate --out missing dir");
    assert!(line.contains("does not exist"), "{line}");
    assert!(!bad.exists());
}

#[test]
fn validate_has_network_rows_with_receiver_blocks_per_message() {
    let _cpus = exclusive_cpus();
    let cfg = TempDir::new("validate-net");
    let j = cfg.join("v.json");
    let o = wakesim_cfg(cfg.path(), &[], &["validate", "--reps", "1", "--only", "UDP_STREAM", "--json", s(&j)]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}\n{out}", stderr(&o));
    assert!(out.contains("| netperf UDP_STREAM 64 B | 10^6bits/s |"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    let row = &v["rows"][0];
    // A one-second timed run: its tasks were ended, not waited for, and their blocks still
    // count (a loopback UDP receiver sleeps many times a second on any Linux box).
    assert!(row["switches"]["measured_voluntary"]["median"].as_f64().is_some_and(|x| x > 100.0), "{row}");
    let per = row["switches"]["sleeps_per_message"].as_array().unwrap();
    assert!(per.iter().all(|x| x.as_f64().is_some_and(|x| x > 0.0 && x < 1.5)), "{row}");
    assert!(out.contains("blocks per message, measured : predicted"), "{out}");
}

#[test]
fn validate_quick_prints_measured_vs_predicted_and_writes_json() {
    let _cpus = exclusive_cpus();
    let cfg = TempDir::new("validate");
    let j = cfg.join("v.json");
    let o = wakesim_cfg(cfg.path(), &[], &["validate", "--quick", "--reps", "2", "--only", "pipe", "--json", s(&j)]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}\n{out}", stderr(&o));
    assert!(out.contains("| pipe, unpinned | usecs/op |"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        for side in ["measured", "predicted"] {
            let xs = r[side].as_array().unwrap();
            assert_eq!(xs.len(), 2);
            assert!(xs.iter().all(|x| x.as_f64().is_some_and(|x| x > 0.0 && x.is_finite())), "{r}");
            let s = &r[format!("{side}_summary")];
            assert!(s["min"].as_f64().unwrap() <= s["median"].as_f64().unwrap());
            assert!(s["median"].as_f64().unwrap() <= s["max"].as_f64().unwrap());
        }
        assert!(r["error_pct"].as_f64().unwrap().is_finite());
        // The run-to-run variation of both sides, as a coefficient of variation.
        for k in ["measured_cv_pct", "predicted_cv_pct"] {
            assert!(r[k].as_f64().is_some_and(|x| x >= 0.0 && x.is_finite()), "{k}: {r}");
        }
    }
    assert!(out.contains("| CV measured | CV predicted |"), "{out}");
    // The simulated side's background activity is named (no calibrated one here: the default).
    assert!(v["noise"].as_str().is_some_and(|n| !n.is_empty()), "{v}");
    // The unpinned pipe against its one-CPU basis, run alternately: a finite positive ratio
    // per pair and the model's ratio; the pinned case has no basis.
    let rel = &rows[1]["relative"];
    assert!(rows[0]["relative"].is_null(), "{}", rows[0]);
    assert!(rel["basis"].as_array().unwrap().iter().any(|w| w == "taskset"), "{rel}");
    for k in ["predicted_ratio", "error_pct"] {
        assert!(rel[k].as_f64().is_some_and(|x| x.is_finite()), "{k}: {rel}");
    }
    assert!(rel["measured_ratio"]["median"].as_f64().is_some_and(|x| x > 0.0 && x.is_finite()), "{rel}");
    assert!(out.contains("| pipe, unpinned | `taskset -c "), "{out}");
    // The decisions: every round trip of a pipe ping-pong has its tasks block, natively
    // (getrusage) and in the model.
    for r in rows {
        let sw = &r["switches"];
        for k in ["measured_voluntary", "predicted_voluntary"] {
            assert!(sw[k]["median"].as_f64().is_some_and(|x| x >= 1000.0), "{k}: {sw}");
        }
        for k in ["measured_involuntary", "predicted_involuntary"] {
            assert!(sw[k]["median"].as_f64().is_some_and(|x| x >= 0.0), "{k}: {sw}");
        }
    }
    assert!(out.contains("| case | blocked, measured | blocked, predicted |"), "{out}");
    // The machine's speed against the profile, before and after the cases.
    for k in ["drift_before", "drift_after"] {
        let d = v[k].as_array().unwrap();
        assert!(!d.is_empty(), "{k}");
        assert!(d.iter().all(|x| x["now_ns"].as_f64().is_some_and(|n| n > 0.0 && n.is_finite())), "{k}: {d:?}");
    }
    assert!(out.contains("machine speed against the profile"), "{out}");
    rejects(&["validate", "--only", "nothing-matches"], &["--only"]);
    rejects(&["validate", "--reps", "0"], &["--reps"]);
}
