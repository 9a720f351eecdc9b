//! The latency histogram schbench prints from: Jens Axboe's fio "plat" log-linear buckets
//! (PLAT_BITS = 8, 19 groups), copied from `masoncl/schbench@24e32b8:schbench.c`
//! (`plat_val_to_idx`, `plat_idx_to_val`, `calc_percentiles`, `add_lat`, `combine_stats`);
//! the 2021 version `@2eef447` has the same code.

const PLAT_BITS: u32 = 8;
const PLAT_VAL: u32 = 1 << PLAT_BITS;
const PLAT_GROUP_NR: u32 = 19;
const PLAT_NR: usize = (PLAT_GROUP_NR * PLAT_VAL) as usize;

/// `struct stats`: histogram, sample count, min and max (min 0 = unset, as in schbench).
#[derive(Clone, Debug)]
pub struct Plat {
    pub plat: Vec<u32>,
    pub nr_samples: u64,
    pub max: u32,
    pub min: u32,
}

impl Default for Plat {
    fn default() -> Self {
        Plat { plat: vec![0; PLAT_NR], nr_samples: 0, max: 0, min: 0 }
    }
}

/// `plat_val_to_idx`.
pub fn val_to_idx(val: u32) -> usize {
    let msb = if val == 0 { 0 } else { 31 - val.leading_zeros() };
    if msb <= PLAT_BITS {
        return val as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = (error_bits + 1) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (val >> error_bits);
    ((base + offset) as usize).min(PLAT_NR - 1)
}

/// `plat_idx_to_val`: the mean of the bucket's range (C's float-to-unsigned truncation).
pub fn idx_to_val(idx: usize) -> u32 {
    let idx = idx.min(PLAT_NR - 1) as u32;
    if idx < (PLAT_VAL << 1) {
        return idx;
    }
    let error_bits = (idx >> PLAT_BITS) - 1;
    let base = 1u32 << (error_bits + PLAT_BITS);
    let k = idx % PLAT_VAL;
    (f64::from(base) + (f64::from(k) + 0.5) * f64::from(1u32 << error_bits)) as u32
}

impl Plat {
    /// `add_lat`.
    pub fn add(&mut self, us: u32) {
        if us > self.max {
            self.max = us;
        }
        if self.min == 0 || us < self.min {
            self.min = us;
        }
        self.plat[val_to_idx(us)] += 1;
        self.nr_samples += 1;
    }

    /// `calc_percentiles` for `plist`: (value, samples in the step) per percentile. With no
    /// samples every percentile is bucket 0, as in schbench (`0 >= p/100 * 0`).
    pub fn percentiles(&self, plist: &[f64]) -> Vec<(u32, u64)> {
        let nr = self.nr_samples as f64;
        let mut vals: Vec<(u32, u64)> = Vec::new();
        if plist.is_empty() {
            return vals;
        }
        let mut sum = 0u64;
        let mut j = 0;
        'outer: for (i, &c) in self.plat.iter().enumerate() {
            sum += u64::from(c);
            while sum as f64 >= plist[j] / 100.0 * nr {
                vals.push((idx_to_val(i), sum));
                if j == plist.len() - 1 {
                    break 'outer;
                }
                j += 1;
            }
        }
        // ocounts[i] -= sum of the earlier ones: samples per step.
        let mut last = 0u64;
        for i in 1..vals.len() {
            last += vals[i - 1].1;
            vals[i].1 -= last.min(vals[i].1);
        }
        vals
    }
}

/// The distribution of `p` at percentiles `ps`, valued as schbench's `calc_percentiles` values
/// them (the bucket's value), for `Reporter::latency_percentiles`.
pub fn plat_percentiles(name: &str, unit: &str, p: &Plat, ps: &[f64]) -> crate::LatencyPercentiles {
    let vals = p.percentiles(ps);
    crate::LatencyPercentiles {
        name: name.into(),
        unit: unit.into(),
        samples: p.nr_samples,
        points: ps.iter().zip(vals).map(|(&q, (v, _))| (q, f64::from(v))).collect(),
    }
}

/// `show_latencies` of the current schbench: the header, the percentiles selected by `mask`
/// (bit i = plist\[i\]) with a star on `star`, and the min/max line.
pub fn show_latencies(
    s: &Plat,
    label: &str,
    units: &str,
    runtime: u64,
    plist: &[f64],
    mask: u32,
    star: u32,
) -> String {
    let mut o = String::new();
    let vals = s.percentiles(plist);
    if !vals.is_empty() {
        o += &format!(
            "{label} percentiles ({units}) runtime {runtime} (s) ({} total samples)\n",
            s.nr_samples
        );
        for (i, (v, n)) in vals.iter().enumerate() {
            let bit = 1u32 << i;
            if mask & bit == 0 {
                continue;
            }
            o += &format!(
                "\t{}{:2.1}th: {:<10} ({} samples)\n",
                if bit == star { "* " } else { "  " },
                plist[i],
                v,
                n
            );
        }
    }
    o += &format!("\t  min={}, max={}\n", s.min, s.max);
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_below_512_and_log_linear_above() {
        for v in [0u32, 1, 7, 255, 511] {
            assert_eq!(idx_to_val(val_to_idx(v)), v);
        }
        // 1000 = 0b1111101000: msb 9, one error bit, bucket [1000, 1001] -> mean 1001.
        assert_eq!(idx_to_val(val_to_idx(1000)), 1001);
        assert!(idx_to_val(val_to_idx(1_000_000)).abs_diff(1_000_000) < 1_000_000 / 256);
    }

    #[test]
    fn percentiles_follow_calc_percentiles() {
        let mut s = Plat::default();
        for v in 1..=100 {
            s.add(v);
        }
        let p = s.percentiles(&[20.0, 50.0, 90.0, 99.0, 99.9]);
        assert_eq!(p.iter().map(|x| x.0).collect::<Vec<_>>(), vec![20, 50, 90, 99, 100]);
        assert_eq!(p.iter().map(|x| x.1).collect::<Vec<_>>(), vec![20, 30, 40, 9, 1]);
        assert_eq!((s.min, s.max), (1, 100));
        let text = show_latencies(&s, "Wakeup Latencies", "usec", 30, &[20.0, 50.0, 90.0, 99.0, 99.9], 0b11110, 0b1000);
        assert!(text.starts_with("Wakeup Latencies percentiles (usec) runtime 30 (s) (100 total samples)\n"));
        assert!(text.contains("\t  50.0th: 50         (30 samples)\n"), "{text}");
        assert!(text.contains("\t* 99.0th: 99         (9 samples)\n"), "{text}");
        assert!(!text.contains("20.0th"));
        assert!(text.ends_with("\t  min=1, max=100\n"));
    }
}
