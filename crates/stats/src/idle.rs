//! Idle states: what the cpuidle governor chose, summed over CPUs (the
//! `/sys/devices/system/cpu/cpuN/cpuidle/stateK/{usage,time,above,below}` counters), and how
//! often it kept the tick running.

use serde::{Deserialize, Serialize};

use crate::summary::{dur, pct};

/// One idle state's counters, summed over CPUs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IdleStateStat {
    pub name: String,
    /// Stays in the state.
    pub usage: u64,
    /// Their total residency, ns.
    pub time_ns: u64,
    /// Stays shorter than its target residency with a shallower state available (too deep).
    pub above: u64,
    /// Stays long enough for the next deeper state (too shallow).
    pub below: u64,
}

/// The governor's choices over the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IdleStats {
    /// The cpuidle governor (`menu`, `teo`, `haltpoll`, `ewma`).
    pub governor: String,
    pub states: Vec<IdleStateStat>,
    /// Entries into a state on the governor's choice, and those after which the tick kept
    /// running (not stopped).
    pub selects: u64,
    pub tick_kept: u64,
}

impl IdleStats {
    /// The summary's `idle states` line body: each state's share of the stays (and of the idle
    /// time), the misses, and the tick decisions.
    pub fn summary(&self) -> String {
        let time: u64 = self.states.iter().map(|s| s.time_ns).sum();
        let stays: u64 = self.states.iter().map(|s| s.usage).sum();
        let per: Vec<String> = self
            .states
            .iter()
            .map(|s| format!("{} {} ({} of time)", s.name, pct(s.usage, stays), pct(s.time_ns, time)))
            .collect();
        let above: u64 = self.states.iter().map(|s| s.above).sum();
        let below: u64 = self.states.iter().map(|s| s.below).sum();
        format!(
            "{}: {} stays, {} | too deep {} too shallow {} | tick kept {} | idle {}",
            self.governor,
            stays,
            per.join(", "),
            pct(above, stays),
            pct(below, stays),
            pct(self.tick_kept, self.selects),
            dur(time)
        )
    }
}
