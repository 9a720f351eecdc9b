//! `wakesim calibrate`'s background-activity measurement on this machine: the profile it writes
//! parses and `--machine host` runs pick it up; the methods that cannot run here say why (one
//! error line when asked for, a note and the next method when not); nothing is half-written.
//! Windows are short (0.2–0.3 s): every allowed CPU spins meanwhile.

use crate::common::*;
use std::process::{Command, Output, Stdio};
use wakesim_machine::NoiseProfile;

/// `wakesim ARGS` with `XDG_CONFIG_HOME` at `config` and the extra environment `env`.
fn wakesim_env(config: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args).stdin(Stdio::null()).env("RUST_BACKTRACE", "1").env("XDG_CONFIG_HOME", config);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("cannot start the wakesim binary")
}

#[test]
fn the_loop_method_writes_a_profile_that_parses_and_host_runs_use_it() {
    let _cpus = exclusive_cpus();
    let cfg = TempDir::new("noise-loop");
    let o = wakesim_env(cfg.path(), &[], &["calibrate", "--noise-only", "--noise-method", "loop", "--noise-window", "0.2"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}\n{out}", stderr(&o));
    assert!(out.contains("background activity (self-timing loop, 0.2 s on CPUs"), "{out}");
    assert!(out.contains("self-timing loop, CPU ") && out.contains("% of the time lost"), "{out}");
    assert!(out.contains("no thread census"), "the loop alone says what it cannot do: {out}");
    // Only the noise profile: the cost profile is left alone.
    let path = cfg.join("wakesim/host-noise.toml");
    assert!(!cfg.join("wakesim/host-costs.toml").exists());
    let text = std::fs::read_to_string(&path).expect("host-noise.toml at the default location");
    assert!(text.starts_with("# Written by `wakesim calibrate`"), "{text}");
    let p = NoiseProfile::from_toml_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(p.name, "host-measured");
    assert!(p.description.contains("(self-timing loop)"), "{}", p.description);
    assert!(p.tasks.is_empty(), "no thread census without tracefs: {:?}", p.tasks);
    // The variation of single kernel calls is measured and written, with how in a note.
    assert!(p.cost_jitter > 0.0 && p.cost_jitter < 1.0, "cost_jitter {}", p.cost_jitter);
    assert!(text.contains("# Note: cost_jitter ") && text.contains("null syscall median"), "{text}");
    for i in &p.irqs {
        assert!(i.period_ms > 0.0 && i.handler_us >= 0.0 && i.source.starts_with("measured by wakesim calibrate on "), "{i:?}");
    }
    // `--machine host` runs with it by default; `--noise FILE` loads it.
    let j = cfg.join("r.json");
    let o = wakesim_env(cfg.path(), &[], &["run", "--machine", "host", "--json", s(&j), "--", "perf", "bench", "sched", "pipe", "-l", "200"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(v["noise"], "host-measured", "{v}");
    let o = wakesim(&["run", "--machine", "test-smt2", "--noise", s(&path), "--", "perf", "bench", "sched", "pipe", "-l", "200"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn without_tracefs_auto_falls_back_to_the_loop_and_a_forced_tracer_is_one_error_line() {
    let _cpus = exclusive_cpus();
    let cfg = TempDir::new("noise-notracefs");
    let none = cfg.join("no-tracefs");
    let env = [("WAKESIM_TRACEFS", s(&none))];
    for method in ["tracefs", "osnoise"] {
        let o = wakesim_env(cfg.path(), &env, &["calibrate", "--noise-only", "--noise-method", method, "--noise-window", "0.2"]);
        let line = assert_one_line_error(&o, method);
        assert!(line.contains(&format!("--noise-method {method}")) && line.contains("no tracefs at"), "{line}");
        assert!(!cfg.join("wakesim/host-noise.toml").exists(), "nothing written");
    }
    let o = wakesim_env(cfg.path(), &env, &["calibrate", "--noise-only", "--noise-window", "0.2"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}\n{out}", stderr(&o));
    assert!(out.contains("(self-timing loop, ") && out.contains("note: tracefs: no tracefs at"), "{out}");
    let text = std::fs::read_to_string(cfg.join("wakesim/host-noise.toml")).unwrap();
    assert!(text.contains("# Note: no thread census: it needs tracefs."), "{text}");
}

#[test]
fn bad_noise_options_are_one_error_line_and_nothing_is_written() {
    let cfg = TempDir::new("noise-bad");
    for w in ["0", "-1", "nan", "61"] {
        let o = wakesim_env(cfg.path(), &[], &["calibrate", "--noise-only", "--noise-window", w]);
        let line = assert_one_line_error(&o, "--noise-window");
        assert!(line.contains("--noise-window"), "{line}");
    }
    let o = wakesim_env(cfg.path(), &[], &["calibrate", "--noise-only", "--noise-method", "magic"]);
    assert!(assert_one_line_error(&o, "--noise-method").contains("magic"));
    // A --noise-out in a missing directory is refused before anything is measured, cost profile
    // included.
    let bad = cfg.join("no/such/dir/n.toml");
    let costs = cfg.join("c.toml");
    let o = wakesim_env(cfg.path(), &[], &["calibrate", "--quick", "--out", s(&costs), "--noise-out", s(&bad)]);
    assert!(assert_one_line_error(&o, "--noise-out").contains("does not exist"));
    assert!(!bad.exists() && !costs.exists());
    assert!(stderr(&o).lines().all(|l| !l.starts_with("calibrate: [")), "refused before measuring: {}", stderr(&o));
}

#[test]
fn with_root_and_tracefs_the_census_names_the_tick_and_the_threads() {
    let top = std::path::Path::new("/sys/kernel/tracing");
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0")));
    if !root || !top.join("instances").is_dir() {
        eprintln!("no root or no tracefs at /sys/kernel/tracing: skipped");
        return;
    }
    let _cpus = exclusive_cpus();
    let cfg = TempDir::new("noise-tracefs");
    let f = cfg.join("n.toml");
    let o = wakesim_env(cfg.path(), &[], &["calibrate", "--noise-only", "--noise-method", "tracefs", "--noise-window", "0.3", "--noise-out", s(&f)]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}\n{out}", stderr(&o));
    assert!(out.contains("(self-timing loop and tracefs events, 0.3 s"), "{out}");
    // Every busy CPU ticks: the census has the tick, and says it is the model's own.
    let tick = out.lines().find(|l| l.starts_with("local_timer ")).unwrap_or_else(|| panic!("{out}"));
    assert!(tick.contains("the tick"), "{tick}");
    let p = NoiseProfile::from_toml_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    assert!(p.description.contains("tracefs events"), "{}", p.description);
    // The instance is gone again.
    let left: Vec<_> = std::fs::read_dir(top.join("instances")).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().starts_with("wakesim-noise-")).collect();
    assert!(left.is_empty(), "{left:?}");
}
