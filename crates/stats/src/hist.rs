//! Latency histogram: an HDR histogram of nanoseconds, plus exact count/sum/min/max.

use hdrhistogram::Histogram;
use serde::ser::{Serialize, SerializeStruct, Serializer};

/// Lowest discernible value, ns. (0 is still recordable: HDR puts it in the first bucket.)
pub const HIST_LOW_NS: u64 = 1;
/// Highest trackable value, ns (100 s); larger values are clamped to it.
pub const HIST_HIGH_NS: u64 = 100_000_000_000;
/// Significant decimal digits: values are kept within 0.1 % (exact below 2048 ns).
pub const HIST_SIGFIG: u8 = 3;

/// A latency distribution in nanoseconds (e.g. wakeup latency: `try_to_wake_up()` → the wakee
/// running; run delay: runnable → running).
///
/// Percentiles come from the HDR buckets (the bucket's highest equivalent value, clamped to the
/// exact max, like schbench and `hdr_value_at_percentile`); count, mean, min and max are exact.
/// Everything is integer arithmetic in recording order, so it is deterministic.
#[derive(Clone, Debug)]
pub struct LatencyHist {
    h: Histogram<u64>,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for LatencyHist {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for LatencyHist {
    fn eq(&self, o: &Self) -> bool {
        self.h == o.h && self.sum == o.sum && self.min == o.min && self.max == o.max
    }
}

impl LatencyHist {
    pub fn new() -> Self {
        let h = Histogram::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, HIST_SIGFIG)
            .expect("constant histogram bounds are valid");
        LatencyHist {
            h,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Record one value in ns; values above 100 s are clamped to 100 s.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.record_n(ns, 1);
    }

    /// Record `n` occurrences of the same value.
    pub fn record_n(&mut self, ns: u64, n: u64) {
        if n == 0 {
            return;
        }
        let v = ns.min(HIST_HIGH_NS);
        self.h.saturating_record_n(v, n);
        self.sum += v as u128 * n as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.h.len()
    }

    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// Exact mean, ns (0 when empty).
    pub fn mean(&self) -> f64 {
        match self.count() {
            0 => 0.0,
            n => self.sum as f64 / n as f64,
        }
    }

    /// Exact sum of the recorded (clamped) values, ns.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// Exact minimum, ns (0 when empty).
    pub fn min(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.min
        }
    }

    /// Exact maximum, ns (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Value at percentile `p` (0–100; clamped into that range, NaN → 0), ns: the value of rank
    /// ⌈p·n/100⌉ (at least 1), reported as its bucket's highest equivalent value within
    /// [min, max]. 0 when empty.
    ///
    /// The rank is computed here rather than by `Histogram::value_at_percentile`, whose
    /// `ceil(p / 100 · n)` overshoots by one rank when `p / 100` is not exact in binary
    /// (99.9 / 100 > 0.999, so p99.9 of 1..=1000 came out as 1000 instead of 999).
    pub fn value_at_percentile(&self, p: f64) -> u64 {
        let n = self.count();
        if n == 0 {
            return 0;
        }
        let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 100.0) };
        if p == 0.0 {
            return self.min;
        }
        // p·n/100, multiplying first; the tolerance absorbs the representation error of p.
        let rank = ((p * n as f64 / 100.0) - 1e-7).ceil().clamp(1.0, n as f64) as u64;
        let mut seen = 0u64;
        for v in self.h.iter_recorded() {
            seen += v.count_at_value();
            if seen >= rank {
                return v.value_iterated_to().clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// `(p, value)` for each requested percentile.
    pub fn percentiles(&self, ps: &[f64]) -> Vec<(f64, u64)> {
        ps.iter()
            .map(|&p| (p, self.value_at_percentile(p)))
            .collect()
    }

    /// Add all of `other`'s values to `self`.
    pub fn merge(&mut self, other: &LatencyHist) {
        if other.is_empty() {
            return;
        }
        if self.h.add(&other.h).is_err() {
            // Cannot happen (same bounds everywhere); fall back to re-recording bucket by bucket.
            for v in other.h.iter_recorded() {
                self.h
                    .saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }
}

/// JSON form: `{count, mean_ns, min_ns, max_ns, p50, p90, p99, p99_9}` (percentiles in ns).
impl Serialize for LatencyHist {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("LatencyHist", 8)?;
        st.serialize_field("count", &self.count())?;
        st.serialize_field("mean_ns", &self.mean())?;
        st.serialize_field("min_ns", &self.min())?;
        st.serialize_field("max_ns", &self.max())?;
        st.serialize_field("p50", &self.value_at_percentile(50.0))?;
        st.serialize_field("p90", &self.value_at_percentile(90.0))?;
        st.serialize_field("p99", &self.value_at_percentile(99.0))?;
        st.serialize_field("p99_9", &self.value_at_percentile(99.9))?;
        st.end()
    }
}
