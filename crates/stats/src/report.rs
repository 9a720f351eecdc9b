//! Whole-run statistics and their text/JSON forms.
//!
//! * [`Stats`]: everything one run measured (schedstat counters per CPU and per domain, wakeup-path
//!   counters, newidle per level, latency histograms, per-task summaries).
//! * Text: [`schedstat_text`](crate::schedstat_text) (`/proc/schedstat` v15/v16) and
//!   [`summary_text`](crate::summary_text) (a dozen lines for humans).
//! * JSON: `Stats` derives `Serialize`; [`Stats::to_json`].

use serde::Serialize;

use crate::{CpuSchedstat, DomainSchedstat, LatencyHist, NewidleStats, NoiseStats, WakeStats, WastedStats};

/// Per-task summary (`/proc/<pid>/schedstat` + `/proc/<pid>/sched` fields).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TaskStat {
    pub name: String,
    /// `se.sum_exec_runtime`, ns.
    pub runtime_ns: u64,
    /// `sched_info.run_delay`: time runnable but waiting, ns.
    pub wait_ns: u64,
    /// `nr_wakeups`.
    pub nr_wakeups: u64,
    /// `se.nr_migrations`.
    pub nr_migrations: u64,
    /// `nr_switches` (voluntary + involuntary context switches).
    pub nr_switches: u64,
    /// `nvcsw`: switched out because it blocked (`voluntary_ctxt_switches`).
    pub nvcsw: u64,
    /// `nivcsw`: switched out while still runnable, i.e. preempted (`nonvoluntary_ctxt_switches`).
    pub nivcsw: u64,
}

/// One domain of one CPU: (level name e.g. "SMT"/"MC"/"PKG"/"NUMA", span mask string as the
/// kernel prints it — see [`cpumask_string`](crate::cpumask_string) — counters).
pub type DomainEntry = (String, String, DomainSchedstat);

/// All statistics of one run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    pub nr_cpus: usize,
    /// Simulated time covered by the counters, ns.
    pub sim_time_ns: u64,
    /// `cpus[cpu]`: the `cpu<N>` line of /proc/schedstat.
    pub cpus: Vec<CpuSchedstat>,
    /// `domains[cpu]`: that CPU's domains bottom-up (index = the `domain<L>` number).
    pub domains: Vec<Vec<DomainEntry>>,
    pub wake: WakeStats,
    pub newidle: NewidleStats,
    /// `try_to_wake_up()` → the wakee running on its CPU, ns.
    pub wakeup_latency: LatencyHist,
    /// Each wait on a runqueue (runnable → running), ns.
    pub run_delay: LatencyHist,
    pub tasks: Vec<TaskStat>,
    /// The work-conservation checker's findings (idle CPUs while work waited nearby).
    pub wasted: WastedStats,
    /// The background activity beside the workload.
    pub noise: NoiseStats,
    /// The idle states the governor chose.
    pub idle: crate::IdleStats,
}

impl Stats {
    /// The tasks' context switches: blocked (Σ `nvcsw`) and preempted (Σ `nivcsw`), what
    /// getrusage(2) reports for a native run of the same tasks.
    pub fn switches(&self) -> (u64, u64) {
        self.tasks.iter().fold((0, 0), |(v, i), t| (v + t.nvcsw, i + t.nivcsw))
    }

    /// Empty statistics for `nr_cpus` CPUs (per-CPU vectors sized, no domains yet).
    pub fn new(nr_cpus: usize) -> Self {
        Stats {
            nr_cpus,
            cpus: vec![CpuSchedstat::default(); nr_cpus],
            domains: vec![Vec::new(); nr_cpus],
            ..Default::default()
        }
    }

    /// The `cpu<N>` counters summed over all CPUs.
    pub fn cpu_totals(&self) -> CpuSchedstat {
        let mut t = CpuSchedstat::default();
        for c in &self.cpus {
            t.add(c);
        }
        t
    }

    /// Domain counters summed over all CPUs, per level name, in bottom-up order of first
    /// appearance (CPU 0's levels first). What `compare` diffs per domain.
    pub fn domain_totals_by_level(&self) -> Vec<(String, DomainSchedstat)> {
        let mut out: Vec<(String, DomainSchedstat)> = Vec::new();
        for cpu in &self.domains {
            for (level, _, d) in cpu {
                match out.iter_mut().find(|(n, _)| n == level) {
                    Some((_, t)) => t.add(d),
                    None => out.push((level.clone(), d.clone())),
                }
            }
        }
        out
    }

    /// The JSON form (pretty-printed, deterministic field order).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}
