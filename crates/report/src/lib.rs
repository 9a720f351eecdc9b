//! `wakesim-report`: what `wakesim compare` prints and `wakesim report` draws, as pure functions
//! on plain data.
//!
//! A comparison is a [`Grid`]: for each sweep point, for each variant (index 0 is the baseline),
//! the [`RunRecord`]s of its repetitions. Every repetition `k` of every variant ran with the same
//! seed, so a difference between columns is the change, not noise (common random numbers).
//!
//! * [`summary`]: the statistics of repeated runs (Amean, Hmean, Stddev, CV, Min, Max) and
//!   Welch's t-test for the `*` marks.
//! * [`mmtests`]: mmtests' `compare-kernels.sh` table.
//! * [`normalized`]: the normalized table of AMD's LKML replies (`1.00 [ 0.00]( 2.90)`).
//! * [`percentiles`]: schbench-style latency percentile tables side by side.
//! * [`schedstat_diff`]: per-CPU totals and per-domain-level counters, baseline vs variant.
//! * [`breakdown`]: where each variant's wakeup time went and where wakees were placed.
//! * [`html`]: the self-contained HTML report; [`timeline`] reads Chrome trace events for it.
//!
//! ```
//! use wakesim_report::{Grid, RunRecord, mmtests};
//! use wakesim_workloads::Metric;
//! let rec = |v: f64| RunRecord { metrics: vec![Metric { name: "Throughput".into(), unit: "MB/sec".into(), value: v, higher_is_better: true }], ..Default::default() };
//! let grid = Grid {
//!     workload: "tbench".into(),
//!     variants: vec!["baseline".into(), "patched".into()],
//!     sweeps: vec!["clients".into()],
//!     points: vec![vec!["1".into()]],
//!     cells: vec![vec![vec![rec(100.0), rec(101.0)], vec![rec(110.0), rec(111.0)]]],
//! };
//! let table = mmtests::render(&grid);
//! assert!(table.contains("Hmean     clients-1"));
//! assert!(table.contains("*   9.95%*"), "{table}"); // Hmean 100.50 → 110.50, significant
//! ```

pub mod breakdown;
mod data;
pub mod html;
pub mod mmtests;
pub mod normalized;
pub mod percentiles;
pub mod schedstat_diff;
pub mod summary;
pub mod timeline;

pub use data::{Grid, RunRecord, CDF_PERCENTILES, MODEL_WAKEUP_LATENCY};
