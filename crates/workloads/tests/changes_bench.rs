//! Issue 3's benchmark-level checks at reduced size: the changes move the benchmarks the way
//! their authors reported, on the machine and kernel they were measured on.

mod common;
use common::*;
use wakesim_model::{Config, Features, RunResult, Sim};

fn run_on(machine: &str, kernel: &str, changes: &[&str], cmd: &str, cap_s: f64) -> (RunResult, f64) {
    let w = build(machine, cmd);
    let m = wakesim_machine::preset(machine).unwrap();
    let costs = wakesim_costs::profile_for(&m.cost_profile).unwrap();
    let mut f = Features::for_kernel(kernel).unwrap();
    for c in changes {
        match c.strip_prefix('-') {
            Some(n) => f.set(n, false).unwrap(),
            None => f.set(c.trim_start_matches('+'), true).unwrap(),
        }
    }
    let cap = (cap_s * 1e9) as u64;
    let cap = w.duration.map_or(cap, |d| d.min(cap));
    let cfg = Config { machine: m, costs, features: f, seed: 1, duration_cap: cap };
    let r = Sim::new(cfg, &w).unwrap().run();
    let metric = w.reporter.metric(&r.outcome).value;
    (r, metric)
}

/// Tianchen Ding (2022): the idle-target wakelist raised UnixBench pipe-based context switching
/// by 11 % and made hackbench faster on an 8269CY with v5.19.
#[test]
fn ttwu_queue_idle_speeds_up_context_switching_and_hackbench_on_xeon_8269cy() {
    let (_, base) = run_on("xeon-8269cy", "v5.19", &[], "context1 1", 2.0);
    let (_, chg) = run_on("xeon-8269cy", "v5.19", &["+TTWU_QUEUE_IDLE"], "context1 1", 2.0);
    assert!(chg > base * 1.05, "context1 lps {base} -> {chg}");
    let (_, base) = run_on("xeon-8269cy", "v5.19", &[], "hackbench -g 1 -l 1000", 10.0);
    let (_, chg) = run_on("xeon-8269cy", "v5.19", &["+TTWU_QUEUE_IDLE"], "hackbench -g 1 -l 1000", 10.0);
    assert!(chg < base, "hackbench time {base} -> {chg}");
}

/// Abel Wu (2022): the SIS filter made hackbench process-pipes much faster in the overloaded
/// range on a 2x24x2 Xeon 8260 with v6.0.
#[test]
fn sis_filter_speeds_up_overloaded_hackbench_pipes_on_xeon_8260() {
    let (_, base) = run_on("xeon-8260", "v6.0", &[], "hackbench -p -g 24 -l 100", 10.0);
    let (_, chg) = run_on("xeon-8260", "v6.0", &["+SIS_FILTER"], "hackbench -p -g 24 -l 100", 10.0);
    assert!(chg < base * 0.95, "hackbench -p -g 24 time {base} -> {chg}");
}
