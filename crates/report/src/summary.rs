//! Statistics of repeated runs, as mmtests' `compare-kernels.sh` computes them.
//!
//! Means follow the metric's kind (mmtests: `Hmean` for rates, where higher is better, `Amean`
//! for times). Spread is the sample standard deviation (n − 1) and the coefficient of variation
//! in percent. A difference is marked significant when Welch's two-sample t-test (unequal
//! variances) rejects equal means at α = 0.05, which is what mmtests' `*` marks.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Significance level of the `*` marks (mmtests' default confidence of 95 %).
pub const ALPHA: f64 = 0.05;

/// Summary statistics of one set of repeated measurements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub amean: f64,
    /// Harmonic mean; NaN when a value is not positive.
    pub hmean: f64,
    /// Sample standard deviation (n − 1 denominator); 0 for a single value.
    pub stddev: f64,
    /// Coefficient of variation, percent of the arithmetic mean.
    pub cv: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// Statistics of `xs`; all NaN when empty.
    pub fn of(xs: &[f64]) -> Summary {
        let n = xs.len();
        if n == 0 {
            return Summary { n, amean: f64::NAN, hmean: f64::NAN, stddev: f64::NAN, cv: f64::NAN, min: f64::NAN, max: f64::NAN };
        }
        let amean = xs.iter().sum::<f64>() / n as f64;
        let hmean = if xs.iter().all(|&x| x > 0.0) { n as f64 / xs.iter().map(|x| 1.0 / x).sum::<f64>() } else { f64::NAN };
        let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // Equal values have no spread (the rounding of the mean would invent some).
        let var = if n > 1 && min != max { xs.iter().map(|x| (x - amean).powi(2)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
        let stddev = var.sqrt();
        let cv = if amean != 0.0 { stddev / amean.abs() * 100.0 } else { 0.0 };
        Summary { n, amean, hmean, stddev, cv, min, max }
    }

    /// The mean mmtests uses for a metric of this kind: Hmean for higher-is-better (rates),
    /// Amean otherwise (falls back to Amean when Hmean is undefined).
    pub fn mean(&self, higher_is_better: bool) -> f64 {
        if higher_is_better && self.hmean.is_finite() {
            self.hmean
        } else {
            self.amean
        }
    }
}

/// Name of the mean [`Summary::mean`] picks: `Hmean` or `Amean`.
pub fn mean_name(higher_is_better: bool) -> &'static str {
    if higher_is_better {
        "Hmean"
    } else {
        "Amean"
    }
}

/// Percentage gain of `new` over `base`, positive when `new` is better: mmtests' convention,
/// so that a shorter time and a higher throughput both show as positive.
pub fn gain(base: f64, new: f64, higher_is_better: bool) -> f64 {
    if base == 0.0 || !base.is_finite() || !new.is_finite() {
        return 0.0;
    }
    let d = (new - base) / base.abs() * 100.0;
    if higher_is_better {
        d
    } else {
        -d
    }
}

/// Two-sided p-value of Welch's t-test for equal means of `a` and `b`; None with fewer than two
/// values on either side. Two samples without spread differ for sure if their means differ.
pub fn welch_p(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (sa, sb) = (Summary::of(a), Summary::of(b));
    let (va, vb) = (sa.stddev.powi(2) / a.len() as f64, sb.stddev.powi(2) / b.len() as f64);
    let se2 = va + vb;
    if se2 == 0.0 {
        return Some(if sa.amean == sb.amean { 1.0 } else { 0.0 });
    }
    let t = (sa.amean - sb.amean) / se2.sqrt();
    // Welch–Satterthwaite degrees of freedom.
    let df = se2.powi(2) / (va.powi(2) / (a.len() - 1) as f64 + vb.powi(2) / (b.len() - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(2.0 * (1.0 - dist.cdf(t.abs())))
}

/// Whether `a` and `b` differ at [`ALPHA`] by Welch's t-test.
pub fn significant(a: &[f64], b: &[f64]) -> bool {
    welch_p(a, b).is_some_and(|p| p < ALPHA)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_matches_hand_computed_values() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.amean, 5.0);
        // Sample variance 32/7.
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!((s.cv - s.stddev / 5.0 * 100.0).abs() < 1e-12);
        assert_eq!((s.min, s.max), (2.0, 9.0));
        let h = Summary::of(&[1.0, 2.0, 4.0]).hmean;
        assert!((h - 3.0 / 1.75).abs() < 1e-12);
    }

    #[test]
    fn hmean_is_used_for_throughput_and_amean_for_time() {
        let s = Summary::of(&[1.0, 3.0]);
        assert_eq!(s.mean(true), 1.5);
        assert_eq!(s.mean(false), 2.0);
        assert_eq!(Summary::of(&[0.0, 3.0]).mean(true), 1.5, "Hmean undefined with a zero: Amean");
        assert_eq!(Summary::of(&[0.005571036; 3]).stddev, 0.0, "equal values have no spread");
    }

    #[test]
    fn gain_is_positive_when_the_change_is_better() {
        assert!((gain(100.0, 110.0, true) - 10.0).abs() < 1e-12);
        assert!((gain(100.0, 90.0, false) - 10.0).abs() < 1e-12);
        assert!(gain(100.0, 110.0, false) < 0.0);
    }

    #[test]
    fn welch_matches_a_reference_value() {
        // Equal sample variances (2.5) and sizes: t = -3, Welch df = 8; the two-sided p of
        // Student's t with 8 df at |t| = 3 is 0.01707 (t tables: one tail 0.008536).
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [4.0, 5.0, 6.0, 7.0, 8.0];
        let p = welch_p(&a, &b).unwrap();
        assert!((p - 0.01707).abs() < 1e-4, "p = {p}");
        assert!(significant(&a, &b));
        assert!(!significant(&a, &[1.5, 2.5, 3.0, 3.5, 4.5]));
        assert_eq!(welch_p(&a, &[1.0]), None);
    }
}
