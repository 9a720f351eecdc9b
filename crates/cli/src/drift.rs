//! Has the machine changed speed since it was calibrated? `wakesim validate` re-measures the
//! two cheapest calibrated figures — a null syscall, and a hot 100 B pipe write + read on one
//! thread — before and after its cases and sets them beside what the profile implies
//! (`syscall`; 2 syscalls + 2 copies + `pipe_send` + `pipe_recv`), and re-runs the pinned
//! `hackbench -g 1` calibrate solved the socket work against, beside the model's run of it with
//! the profile (equal at calibration), and bounces a cache line between the first two CPUs
//! (the hypervisor may have moved the vCPUs closer or apart since). On a shared VM the same
//! figure moves by tens of percent from one minute to the next (host load, frequency); a
//! prediction made with a profile from another minute then misses by that much, whatever the
//! model does. The check names the drift instead of hiding it.

use crate::UserError;
use serde::Serialize;
use wakesim_costs::CostProfile;
use wakesim_hostbench::{calib, sys, Summary};
use wakesim_machine::Machine;
use wakesim_model::Features;

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

/// The syscall and the hot pipe pair now against the profile `p`, and the pinned hackbench
/// against the model's run of it on `m`. A measurement that fails is left out.
pub fn measure(p: &CostProfile, m: &Machine, f: &Features) -> Vec<Drift> {
    let mut out = Vec::new();
    if let Some(s) = Summary::of(&calib::syscall_ns(100_000, 3)) {
        out.push(Drift { what: "syscall", calibrated_ns: p.syscall as f64, now_ns: s.median });
    }
    let pair = 2.0 * p.syscall as f64 + 2.0 * p.copy(100) as f64 + (p.pipe_send + p.pipe_recv) as f64;
    if let Some(s) = calib::channel_pair_ns(false, 100, 20_000, 3).ok().and_then(|v| Summary::of(&v)) {
        out.push(Drift { what: "pipe write+read", calibrated_ns: pair, now_ns: s.median });
    }
    // The two vCPUs' distance on the host can change (the hypervisor moves them): one line
    // bounced between the first two usable CPUs, against the profile's line cost for their class.
    let cpus: Vec<usize> = sys::allowed_cpus().into_iter().filter(|&c| c < m.nr_cpus()).collect();
    if let [a, b, ..] = cpus[..] {
        if let Some(s) = calib::line_transfer_ns(a, b, 100_000, 3).ok().and_then(|v| Summary::of(&v)) {
            let dist = m.dist(a, b);
            out.push(Drift { what: "line transfer", calibrated_ns: p.line.get(dist) as f64, now_ns: s.median });
        }
    }
    // The socket work's basis (calibrate's step 8): the same command, natively and in the model.
    let cpu = sys::allowed_cpus().first().copied().unwrap_or(0);
    let cmd = crate::calibrate::pinned_hackbench(cpu, 200);
    let basis = || -> Result<Drift, UserError> {
        let w = crate::native::workload(&cmd, crate::native::host_cpus())?;
        let mut v = Vec::new();
        for seed in 1..=3 {
            let r = crate::native::run_workload(&w, 60.0, seed)?;
            v.push(w.reporter.metric(&r.outcome).value * 1e9);
        }
        let now = Summary::of(&v).ok_or_else(|| UserError("no figure".into()))?.median;
        let ws = crate::native::workload(&cmd, m.nr_cpus() as u32)?;
        let model = crate::fit::simulate(m, p, f, &ws, 1)? * 1e9;
        Ok(Drift { what: "pinned hackbench -g 1", calibrated_ns: model, now_ns: now })
    };
    if let Ok(d) = basis() {
        out.push(d);
    }
    out
}

/// `ns` as the figure reads best: `498 ns`, `163.2 ms`.
fn show(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.1} ms", ns / 1e6)
    } else {
        format!("{ns:.0} ns")
    }
}

/// `pipe write+read 498 ns → 520 ns (+4 %), …`
pub fn describe(d: &[Drift]) -> String {
    d.iter().map(|x| format!("{} {} → {} ({:+.0} %)", x.what, show(x.calibrated_ns), show(x.now_ns), x.pct())).collect::<Vec<_>>().join(", ")
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
        assert_eq!(describe(&d), "pipe write+read 500 ns → 600 ns (+20 %)");
        assert!(!stale(&[Drift { what: "x", calibrated_ns: 500.0, now_ns: 520.0 }]));
        let hb = [Drift { what: "pinned hackbench -g 1", calibrated_ns: 163.2e6, now_ns: 201.0e6 }];
        assert_eq!(describe(&hb), "pinned hackbench -g 1 163.2 ms → 201.0 ms (+23 %)");
    }
}
