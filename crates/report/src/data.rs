//! The data every table is computed from.

use serde::{Deserialize, Serialize};
use wakesim_stats::{CpuSchedstat, DomainSchedstat, Stats, WakeStats};
use wakesim_workloads::{LatencyPercentiles, Metric};

/// Percentiles at which latency distributions are kept: enough points for a CDF, and the ones
/// schbench prints (20, 50, 90, 99, 99.9).
pub const CDF_PERCENTILES: [f64; 25] = [
    1.0, 5.0, 10.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0, 70.0, 75.0, 80.0, 85.0, 90.0, 92.5, 95.0, 97.0, 98.0, 99.0, 99.5,
    99.9, 99.95, 99.99, 99.999, 100.0,
];

/// Name of the latency distribution every run has: the model's own `try_to_wake_up()` → running
/// latency (`Stats::wakeup_latency`), whatever the benchmark reports.
pub const MODEL_WAKEUP_LATENCY: &str = "wakeup latency (model)";

/// What one finished run contributes to the comparison; stored in its run file so that a
/// resumed comparison can use it without rerunning.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunRecord {
    /// The benchmark's metrics, headline first (`Reporter::metrics`).
    pub metrics: Vec<Metric>,
    /// Latency distributions: the benchmark's own (e.g. schbench's), then the model's.
    pub latencies: Vec<LatencyPercentiles>,
    /// `/proc/schedstat` CPU lines summed over all CPUs.
    pub cpu_totals: CpuSchedstat,
    /// Domain lines summed over CPUs, per level (bottom-up: SMT, MC, PKG, NUMA…).
    pub domains: Vec<(String, DomainSchedstat)>,
    /// Wakeup-path counters and cost breakdown.
    pub wake: WakeStats,
    /// Simulated time the counters cover, ns.
    pub sim_time_ns: u64,
    /// The work-conservation checker (default threshold): intervals an idle CPU sat beside a
    /// waiting task, and their total, ns. Absent in run files written before it: 0.
    #[serde(default)]
    pub wasted_intervals: u64,
    #[serde(default)]
    pub wasted_ns: u64,
}

impl RunRecord {
    /// The record of a run: its metrics, the benchmark's latencies, and the statistics.
    pub fn new(metrics: Vec<Metric>, mut latencies: Vec<LatencyPercentiles>, stats: &Stats) -> Self {
        let h = &stats.wakeup_latency;
        latencies.push(LatencyPercentiles {
            name: MODEL_WAKEUP_LATENCY.into(),
            unit: "usec".into(),
            samples: h.count(),
            points: CDF_PERCENTILES.iter().map(|&p| (p, h.value_at_percentile(p) as f64 / 1e3)).collect(),
        });
        RunRecord {
            metrics,
            latencies,
            cpu_totals: stats.cpu_totals(),
            domains: stats.domain_totals_by_level(),
            wake: stats.wake.clone(),
            sim_time_ns: stats.sim_time_ns,
            wasted_intervals: stats.wasted.intervals,
            wasted_ns: stats.wasted.wasted_ns,
        }
    }

    /// The value of metric `name`, if this run reported it.
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics.iter().find(|m| m.name == name).map(|m| m.value)
    }
}

/// A whole comparison: `cells[point][variant][run]`.
#[derive(Clone, Debug, Default)]
pub struct Grid {
    /// The benchmark's name (e.g. "tbench"), for table titles.
    pub workload: String,
    /// Variant names; index 0 is the baseline the others are compared with.
    pub variants: Vec<String>,
    /// Sweep parameter names (empty: one point).
    pub sweeps: Vec<String>,
    /// Each point's values, one per sweep name.
    pub points: Vec<Vec<String>>,
    pub cells: Vec<Vec<Vec<RunRecord>>>,
}

impl Grid {
    /// mmtests-style label of point `p`: `clients-1`, `clients-1,loops-10`, or `all`.
    pub fn point_label(&self, p: usize) -> String {
        if self.sweeps.is_empty() {
            return "all".into();
        }
        self.sweeps.iter().zip(&self.points[p]).map(|(n, v)| format!("{n}-{v}")).collect::<Vec<_>>().join(",")
    }

    /// The point's values alone (`1`, `1,10`), or `-` without a sweep.
    pub fn point_values(&self, p: usize) -> String {
        if self.sweeps.is_empty() {
            return "-".into();
        }
        self.points[p].join(",")
    }

    /// Metrics in the order the baseline's first run reports them: (name, unit, higher_is_better).
    pub fn metric_kinds(&self) -> Vec<(String, String, bool)> {
        self.cells
            .iter()
            .flat_map(|p| p.iter().flat_map(|v| v.iter()))
            .next()
            .map(|r| r.metrics.iter().map(|m| (m.name.clone(), m.unit.clone(), m.higher_is_better)).collect())
            .unwrap_or_default()
    }

    /// The values of metric `name` over the runs of (point, variant). A run whose benchmark
    /// measured nothing (NaN, e.g. tbench stopped before its warmup ended) is left out.
    pub fn values(&self, point: usize, variant: usize, name: &str) -> Vec<f64> {
        self.cells[point][variant].iter().filter_map(|r| r.metric(name)).filter(|v| v.is_finite()).collect()
    }
}
