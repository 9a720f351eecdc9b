//! Has the machine changed speed since it was calibrated? `wakesim validate` re-measures the
//! two cheapest calibrated figures — a null syscall, and a hot 100 B pipe write + read on one
//! thread — before and after its cases and sets them beside what the profile implies
//! (`syscall`; 2 syscalls + 2 copies + `pipe_send` + `pipe_recv`). On a shared VM the same
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
    /// The figure the calibrated profile implies, ns.
    pub calibrated_ns: f64,
    /// ns measured now (median of repetitions).
    pub now_ns: f64,
}

impl Drift {
    pub fn pct(&self) -> f64 {
        100.0 * (self.now_ns - self.calibrated_ns) / self.calibrated_ns.max(1.0)
    }
}

/// The syscall and the hot pipe pair now against the profile `p`. A measurement that fails is
/// left out. (Not the socket pair: calibrate fits `unix_send`/`unix_recv` in place, not hot.)
pub fn measure(p: &CostProfile) -> Vec<Drift> {
    let mut out = Vec::new();
    if let Some(s) = Summary::of(&calib::syscall_ns(100_000, 3)) {
        out.push(Drift { what: "syscall", calibrated_ns: p.syscall as f64, now_ns: s.median });
    }
    let pair = 2.0 * p.syscall as f64 + 2.0 * p.copy(100) as f64 + (p.pipe_send + p.pipe_recv) as f64;
    if let Some(s) = calib::channel_pair_ns(false, 100, 20_000, 3).ok().and_then(|v| Summary::of(&v)) {
        out.push(Drift { what: "pipe write+read", calibrated_ns: pair, now_ns: s.median });
    }
    out
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
