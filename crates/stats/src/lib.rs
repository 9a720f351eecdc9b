//! # wakesim-stats: the counters the kernel exports, and the ones the mailing list derives
//!
//! * [`CpuSchedstat`] / [`DomainSchedstat`]: `/proc/schedstat` fields (version 15/16 meanings),
//!   incremented by the model exactly where the kernel increments them.
//! * [`WakeStats`]: wakeup-path counters that are not schedstats but that every wakeup-path patch
//!   discussion derives (IPIs vs polling wakes, wakelist vs direct enqueue, SIS probes, placement).
//! * [`NewidleLevel`]: newly-idle balancing calls and cost per domain level.
//! * [`LatencyHist`]: an HDR histogram of latencies in nanoseconds.
//! * [`Stats`]: all of the above for one run, with the text forms ([`schedstat_text`],
//!   [`summary_text`]) and the JSON form ([`Stats::to_json`]).

mod counters;
mod hist;
mod idle;
mod report;
mod schedstat;
mod summary;

pub use counters::*;
pub use hist::{LatencyHist, HIST_HIGH_NS, HIST_LOW_NS, HIST_SIGFIG};
pub use idle::{IdleStateStat, IdleStats};
pub use report::*;
pub use schedstat::{cpumask_string, schedstat_text, HZ};
pub use summary::{dur, pct, summary_text, DIST_NAMES};
