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
    let cfg = Config { machine: m.clone(), costs: c.clone(), features: *f, seed, duration_cap: 60 * SEC };
    let r = Sim::new(cfg, w).map_err(UserError)?.run();
    Ok(w.reporter.metric(&r.outcome).value)
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
pub fn solve(x0: u64, target: f64, mut f: impl FnMut(u64) -> Result<f64, UserError>) -> Result<Solved, UserError> {
    let mut xa = x0 as f64;
    let mut fa = f(x0)?;
    let mut xb = (x0 as f64 * 1.5).max(xa + 200.0);
    let mut fb = f(xb as u64)?;
    let mut slope = 0.0;
    for _ in 0..3 {
        slope = (fb - fa) / (xb - xa);
        if !(slope.is_finite() && slope > 1e-9) {
            return Ok(Solved { value: x0, achieved: f(x0)?, slope: 0.0 });
        }
        let xn = (xb + (target - fb) / slope).max(0.0).round();
        if (xn - xb).abs() < 1.0 {
            break;
        }
        (xa, fa) = (xb, fb);
        xb = xn;
        fb = f(xb as u64)?;
    }
    Ok(Solved { value: xb as u64, achieved: fb, slope })
}
