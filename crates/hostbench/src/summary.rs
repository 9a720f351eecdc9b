//! Median and spread of repeated measurements.

use serde::Serialize;

/// The median, extremes and count of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

impl Summary {
    /// Summarise `xs` (non-finite samples are dropped); `None` if nothing is left.
    pub fn of(xs: &[f64]) -> Option<Summary> {
        let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        Some(Summary { median, min: v[0], max: v[n - 1], n })
    }

    /// Half the min–max range relative to the median, in percent.
    pub fn spread_pct(&self) -> f64 {
        if self.median == 0.0 {
            return 0.0;
        }
        50.0 * (self.max - self.min) / self.median.abs()
    }

    /// Whether `x` lies within [min, max].
    pub fn contains(&self, x: f64) -> bool {
        self.min <= x && x <= self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts_and_extremes() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
        let s = Summary::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert_eq!(s.spread_pct(), 60.0);
    }

    #[test]
    fn non_finite_samples_are_dropped_and_empty_gives_none() {
        assert_eq!(Summary::of(&[f64::NAN, 5.0]).unwrap().n, 1);
        assert!(Summary::of(&[f64::INFINITY]).is_none());
    }
}
