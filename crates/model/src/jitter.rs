//! Run-to-run jitter of the kernel's own work (`NoiseProfile::cost_jitter`, docs/noise.md):
//! no two passes through a kernel code path take the same time on real hardware (cache and TLB
//! state, branch history, the other hyperthread), while the cost profile gives each one fixed
//! figure. With a coefficient of variation `c` > 0 every kernel step's duration (`Sim::busy`) is
//! multiplied by a lognormal factor of mean 1 and CV `c`, drawn from the CPU's own random
//! stream, so the same seed repeats the run exactly. With `c` = 0 nothing is drawn and every
//! cost is charged as the profile gives it.

use wakesim_engine::{stream_id, RngStream, Time};

/// The lognormal factor's parameters and one random stream per CPU.
#[derive(Clone, Debug)]
pub struct CostJitter {
    /// σ and μ of the underlying normal: σ² = ln(1 + c²), μ = −σ²/2 (so the mean is 1).
    sigma: f64,
    mu: f64,
    rng: Vec<RngStream>,
}

impl CostJitter {
    /// `None` for `cv` = 0 (no jitter, nothing drawn).
    pub fn new(cv: f64, seed: u64, nr_cpus: usize) -> Option<CostJitter> {
        if cv <= 0.0 {
            return None;
        }
        let var = (1.0 + cv * cv).ln();
        let rng = (0..nr_cpus).map(|c| RngStream::new(seed, stream_id("cost-jitter"), c as u64)).collect();
        Some(CostJitter { sigma: var.sqrt(), mu: -var / 2.0, rng })
    }

    /// `d` ns of kernel work on `cpu`, jittered; at least 1 ns (the step still takes place).
    pub fn apply(&mut self, cpu: usize, d: Time) -> Time {
        let f = (self.mu + self.sigma * self.rng[cpu].standard_normal()).exp();
        ((d as f64 * f).round() as Time).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_factor_has_mean_one_and_the_asked_spread() {
        let mut j = CostJitter::new(0.2, 7, 1).unwrap();
        let xs: Vec<f64> = (0..200_000).map(|_| j.apply(0, 1_000_000) as f64 / 1e6).collect();
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!((mean - 1.0).abs() < 0.005, "mean {mean}");
        assert!((sd / mean - 0.2).abs() < 0.005, "cv {}", sd / mean);
        assert!(CostJitter::new(0.0, 7, 1).is_none());
    }
}
