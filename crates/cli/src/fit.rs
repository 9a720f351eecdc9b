//! From measurements to cost-profile fields. Direct where a measurement is one cost (syscall,
//! copy per byte, the idle-exit difference); through the model where a measurement is a sum of
//! many charges: the model runs the same workload as the measurement, and the one unknown field
//! is solved (secant method) so the model's figure equals the measured median. The other terms
//! of the sum keep their base-profile values, so the fit stays consistent with however the model
//! charges them.

use crate::UserError;
use wakesim_costs::CostProfile;
use wakesim_engine::SEC;
use wakesim_machine::Machine;
use wakesim_model::{Config, Features, Sim};
use wakesim_workloads::Workload;

/// Run `w` in the model; its reporter's metric.
pub fn simulate(m: &Machine, c: &CostProfile, f: &Features, w: &Workload, seed: u64) -> Result<f64, UserError> {
    Ok(simulate_switches(m, c, f, w, seed)?.0)
}

/// Run `w` in the model; its reporter's metric and its tasks' voluntary and involuntary
/// context switches (the `nvcsw`/`nivcsw` sums getrusage(2) reports for a native run).
pub fn simulate_switches(m: &Machine, c: &CostProfile, f: &Features, w: &Workload, seed: u64) -> Result<(f64, u64, u64), UserError> {
    let cfg = Config { machine: m.clone(), costs: c.clone(), features: *f, seed, duration_cap: 60 * SEC, noise: wakesim_model::NoiseProfile::none(), governor: m.cpuidle_governor, task_groups: wakesim_model::TaskGroups::Autogroup };
    let r = Sim::new(cfg, w).map_err(UserError)?.run();
    let (v, i) = r.stats.switches();
    Ok((w.reporter.metric(&r.outcome).value, v, i))
}

/// The result of solving one field.
pub struct Solved {
    pub value: u64,
    /// The model's figure with that value (same unit as the target).
    pub achieved: f64,
    /// How the figure moves per ns of the field (0: the field does not affect it).
    pub slope: f64,
}

/// Find `x ≥ 0` with `f(x) ≈ target` by the secant method from `x0`, assuming `f` increasing in
/// `x` (every cost here adds time). Three model runs at most besides the two starting points.
/// The model's response is monotonic only at large scale (a run's discrete events shift with
/// any cost), so once the first step has shown the field matters, a later step whose two points
/// lie too close to show a slope ends the search with the best point so far instead of failing.
pub fn solve(x0: u64, target: f64, mut f: impl FnMut(u64) -> Result<f64, UserError>) -> Result<Solved, UserError> {
    let mut xa = x0 as f64;
    let mut fa = f(x0)?;
    let mut xb = (x0 as f64 * 1.5).max(xa + 200.0);
    let mut fb = f(xb as u64)?;
    let mut slope = (fb - fa) / (xb - xa);
    if !(slope.is_finite() && slope > 1e-9) {
        return Ok(Solved { value: x0, achieved: fa, slope: 0.0 });
    }
    let mut best = if (fa - target).abs() < (fb - target).abs() { (xa, fa) } else { (xb, fb) };
    for _ in 0..3 {
        let s = (fb - fa) / (xb - xa);
        if !(s.is_finite() && s > 1e-9) {
            break;
        }
        slope = s;
        let xn = (xb + (target - fb) / slope).max(0.0).round();
        if (xn - xb).abs() < 1.0 {
            break;
        }
        (xa, fa) = (xb, fb);
        xb = xn;
        fb = f(xb as u64)?;
        if (fb - target).abs() < (best.1 - target).abs() {
            best = (xb, fb);
        }
    }
    Ok(Solved { value: best.0 as u64, achieved: best.1, slope })
}

#[cfg(test)]
mod tests {
    use super::solve;

    #[test]
    fn a_linear_response_is_solved_exactly() {
        let s = solve(1000, 5000.0, |x| Ok(2.0 * x as f64 + 1000.0)).unwrap();
        assert_eq!(s.value, 2000);
        assert!((s.slope - 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_flat_response_is_reported_unsolved() {
        let s = solve(1000, 5000.0, |_| Ok(3000.0)).unwrap();
        assert_eq!((s.value, s.slope), (1000, 0.0));
    }

    #[test]
    fn a_later_step_that_shows_no_slope_keeps_the_best_point() {
        // Rising by 2 per unit, but with a ±40 ripple that makes close points look flat or
        // falling: the search must end near 2000, not fall back to its start.
        let f = |x: u64| Ok(2.0 * x as f64 + 1000.0 + if (x / 7).is_multiple_of(2) { 40.0 } else { -40.0 });
        let s = solve(1000, 5030.0, f).unwrap();
        assert!(s.slope > 0.0);
        assert!((1980..=2050).contains(&s.value), "solved to {}", s.value);
        assert!((s.achieved - 5030.0).abs() <= 50.0, "achieved {}", s.achieved);
    }
}
