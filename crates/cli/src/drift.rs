//! Has the machine changed speed since it was calibrated? `wakesim validate` re-measures the
//! two cheapest calibrated figures — a hot 100 B pipe and unix-socket write + read on one
//! thread — before and after its cases and sets them beside what the profile implies
//! (2 syscalls + 2 copies + the channel's send and receive work). On a shared VM the same
//! figure moves by tens of percent from one minute to the next (host load, frequency); a
//! prediction made with a profile from another minute then misses by that much, whatever the
//! model does. The check names the drift instead of hiding it.

use serde::Serialize;
use wakesim_costs::CostProfile;
use wakesim_hostbench::{calib, Summary};

/// Drift beyond which validate says the profile is stale, percent.
pub const STALE_PCT: f64 = 10.0;

#[derive(Clone, Debug, Serialize)]
pub struct Drift {
    pub what: &'static str,
    /// ns per write + read that the calibrated profile implies.
    pub calibrated_ns: f64,
    /// ns measured now (median of repetitions).
    pub now_ns: f64,
}

impl Drift {
    pub fn pct(&self) -> f64 {
        100.0 * (self.now_ns - self.calibrated_ns) / self.calibrated_ns.max(1.0)
    }
}

/// The hot pairs now against the profile `p`. A measurement that fails is left out.
pub fn measure(p: &CostProfile) -> Vec<Drift> {
    let base = 2.0 * p.syscall as f64 + 2.0 * p.copy(100) as f64;
    [("pipe write+read", false, p.pipe_send + p.pipe_recv), ("socket write+read", true, p.unix_send + p.unix_recv)]
        .into_iter()
        .filter_map(|(what, socket, work)| {
            let now = Summary::of(&calib::channel_pair_ns(socket, 100, 20_000, 3).ok()?)?.median;
            Some(Drift { what, calibrated_ns: base + work as f64, now_ns: now })
        })
        .collect()
}

/// `pipe write+read 498 → 520 ns (+4 %), …`
pub fn describe(d: &[Drift]) -> String {
    d.iter().map(|x| format!("{} {:.0} → {:.0} ns ({:+.0} %)", x.what, x.calibrated_ns, x.now_ns, x.pct())).collect::<Vec<_>>().join(", ")
}

pub fn stale(d: &[Drift]) -> bool {
    d.iter().any(|x| x.pct().abs() > STALE_PCT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_is_the_change_from_the_calibrated_figure() {
        let d = [Drift { what: "pipe write+read", calibrated_ns: 500.0, now_ns: 600.0 }];
        assert!((d[0].pct() - 20.0).abs() < 1e-9);
        assert!(stale(&d));
        assert_eq!(describe(&d), "pipe write+read 500 → 600 ns (+20 %)");
        assert!(!stale(&[Drift { what: "x", calibrated_ns: 500.0, now_ns: 520.0 }]));
    }
}
