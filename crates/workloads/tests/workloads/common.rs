//! Shared helpers: build a workload from a command line with a machine's CPU count, run it on
//! the model, and count what the task graph does.
#![allow(dead_code)]

use wakesim_model::{Config, Features, RunResult, Sim};
use wakesim_workloads::{from_command_line_with, op_counts, BuildContext, OpCounts, Workload, WorkloadError};

pub fn args(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

pub fn ctx(machine: &str, copies: u32) -> BuildContext {
    let m = wakesim_machine::preset(machine).unwrap();
    BuildContext { nr_cpus: Some(m.nr_cpus() as u32), copies }
}

pub fn build(machine: &str, s: &str) -> Workload {
    build_copies(machine, s, 1)
}

pub fn build_copies(machine: &str, s: &str, copies: u32) -> Workload {
    from_command_line_with(&args(s), &ctx(machine, copies)).unwrap_or_else(|e| panic!("{s}: {e}"))
}

pub fn err(machine: &str, s: &str) -> String {
    match from_command_line_with(&args(s), &ctx(machine, 1)) {
        Ok(_) => panic!("{s}: accepted"),
        Err(e) => {
            let m = e.to_string();
            assert!(!m.contains('\n'), "one line: {m}");
            m
        }
    }
}

pub fn totals(w: &Workload) -> OpCounts {
    let mut c = OpCounts::default();
    for t in &w.tasks {
        c.add(&op_counts(&t.program));
    }
    c
}

/// Runs `w` on `machine` with the CLI's rule: the workload's own duration, else `cap_s`.
pub fn run(machine: &str, w: &Workload, cap_s: f64) -> RunResult {
    let m = wakesim_machine::preset(machine).unwrap();
    let costs = wakesim_costs::profile_for(&m.cost_profile).unwrap();
    let cap = (cap_s * 1e9) as u64;
    let cap = w.duration.map_or(cap, |d| d.min(cap));
    let cfg = Config { machine: m, costs, features: Features::for_kernel("v6.6").unwrap(), seed: 1, duration_cap: cap, noise: wakesim_model::NoiseProfile::none(), governor: wakesim_model::GovernorKind::Ewma, task_groups: wakesim_model::TaskGroups::Root };
    Sim::new(cfg, w).unwrap().run()
}

/// Builds, runs and renders.
pub fn run_cmd(machine: &str, s: &str, cap_s: f64) -> (Workload, RunResult, String) {
    let w = build(machine, s);
    let r = run(machine, &w, cap_s);
    let out = w.reporter.render(&r.outcome);
    (w, r, out)
}

pub fn is_err(r: Result<Workload, WorkloadError>) -> bool {
    r.is_err()
}
