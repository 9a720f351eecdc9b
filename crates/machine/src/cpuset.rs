//! `CpuSet`: a fixed-size bitset of CPUs, the simulator's `struct cpumask`.
//!
//! Fixed size (no heap) so that spans can be copied, compared and intersected on the hot path
//! without allocation. [`MAX_CPUS`] bounds every machine.

/// Largest machine the simulator accepts.
pub const MAX_CPUS: usize = 1024;
const WORDS: usize = MAX_CPUS / 64;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CpuSet {
    w: [u64; WORDS],
}

impl Default for CpuSet {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{{{}}}", self.to_list_string())
    }
}

impl CpuSet {
    pub const fn new() -> Self {
        CpuSet { w: [0; WORDS] }
    }

    /// CPUs `lo..hi` (half-open).
    pub fn range(lo: usize, hi: usize) -> Self {
        let mut s = Self::new();
        for c in lo..hi {
            s.set(c);
        }
        s
    }

    pub fn from_cpus<I: IntoIterator<Item = usize>>(it: I) -> Self {
        let mut s = Self::new();
        for c in it {
            s.set(c);
        }
        s
    }

    #[inline]
    pub fn set(&mut self, c: usize) {
        self.w[c >> 6] |= 1u64 << (c & 63);
    }

    #[inline]
    pub fn clear(&mut self, c: usize) {
        self.w[c >> 6] &= !(1u64 << (c & 63));
    }

    #[inline]
    pub fn contains(&self, c: usize) -> bool {
        c < MAX_CPUS && self.w[c >> 6] & (1u64 << (c & 63)) != 0
    }

    pub fn weight(&self) -> usize {
        self.w.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.w.iter().all(|&w| w == 0)
    }

    /// Lowest CPU in the set (`cpumask_first`).
    pub fn first(&self) -> Option<usize> {
        self.next_from(0)
    }

    /// Lowest CPU `>= from` in the set (`cpumask_next` semantics, inclusive).
    #[inline]
    pub fn next_from(&self, from: usize) -> Option<usize> {
        if from >= MAX_CPUS {
            return None;
        }
        let mut i = from >> 6;
        let mut word = self.w[i] & (!0u64 << (from & 63));
        loop {
            if word != 0 {
                return Some((i << 6) + word.trailing_zeros() as usize);
            }
            i += 1;
            if i == WORDS {
                return None;
            }
            word = self.w[i];
        }
    }

    pub fn and(&self, o: &CpuSet) -> CpuSet {
        let mut r = *self;
        for i in 0..WORDS {
            r.w[i] &= o.w[i];
        }
        r
    }

    pub fn or(&self, o: &CpuSet) -> CpuSet {
        let mut r = *self;
        for i in 0..WORDS {
            r.w[i] |= o.w[i];
        }
        r
    }

    pub fn and_not(&self, o: &CpuSet) -> CpuSet {
        let mut r = *self;
        for i in 0..WORDS {
            r.w[i] &= !o.w[i];
        }
        r
    }

    pub fn intersects(&self, o: &CpuSet) -> bool {
        (0..WORDS).any(|i| self.w[i] & o.w[i] != 0)
    }

    pub fn is_subset_of(&self, o: &CpuSet) -> bool {
        (0..WORDS).all(|i| self.w[i] & !o.w[i] == 0)
    }

    /// Ascending iteration.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let mut next = self.next_from(0);
        std::iter::from_fn(move || {
            let c = next?;
            next = self.next_from(c + 1);
            Some(c)
        })
    }

    /// `for_each_cpu_wrap(cpu, set, start)`: every CPU of the set once, starting at the first CPU
    /// `>= start` and wrapping around, as `select_idle_cpu()` scans.
    pub fn iter_wrap(&self, start: usize) -> impl Iterator<Item = usize> + '_ {
        let start = start.min(MAX_CPUS);
        let first_hi = self.next_from(start);
        let first_lo = self.next_from(0).filter(|&c| c < start);
        let mut phase_hi = true;
        let mut next = first_hi.or(first_lo);
        if first_hi.is_none() {
            phase_hi = false;
        }
        std::iter::from_fn(move || {
            let c = next?;
            let n = self.next_from(c + 1);
            next = if phase_hi {
                match n {
                    Some(x) => Some(x),
                    None => {
                        phase_hi = false;
                        self.next_from(0).filter(|&x| x < start)
                    }
                }
            } else {
                n.filter(|&x| x < start)
            };
            Some(c)
        })
    }

    /// Kernel list format: `0-3,8,10-11`.
    pub fn to_list_string(&self) -> String {
        let mut out = String::new();
        let mut it = self.iter().peekable();
        while let Some(lo) = it.next() {
            let mut hi = lo;
            while it.peek() == Some(&(hi + 1)) {
                hi = it.next().unwrap();
            }
            if !out.is_empty() {
                out.push(',');
            }
            if lo == hi {
                out.push_str(&lo.to_string());
            } else {
                out.push_str(&format!("{lo}-{hi}"));
            }
        }
        out
    }

    /// Parses the kernel list format (`0-3,8`). Returns a message naming the bad token.
    pub fn parse_list(s: &str) -> Result<CpuSet, String> {
        let mut set = CpuSet::new();
        let s = s.trim();
        if s.is_empty() {
            return Ok(set);
        }
        for tok in s.split(',') {
            let tok = tok.trim();
            let (lo, hi) = match tok.split_once('-') {
                Some((a, b)) => (a.trim().parse::<usize>(), b.trim().parse::<usize>()),
                None => (tok.parse::<usize>(), tok.parse::<usize>()),
            };
            match (lo, hi) {
                (Ok(lo), Ok(hi)) if lo <= hi && hi < MAX_CPUS => {
                    for c in lo..=hi {
                        set.set(c);
                    }
                }
                _ => return Err(format!("bad CPU list entry '{tok}'")),
            }
        }
        Ok(set)
    }

    /// Kernel bitmap format as in /proc/schedstat domain lines: comma-separated 32-bit hex words,
    /// most significant first, covering `nr_cpus`.
    pub fn to_mask_string(&self, nr_cpus: usize) -> String {
        let words32 = nr_cpus.div_ceil(32).max(1);
        let mut parts = Vec::with_capacity(words32);
        for i in (0..words32).rev() {
            let w64 = self.w[(i * 32) >> 6];
            let v = if i % 2 == 0 {
                w64 as u32
            } else {
                (w64 >> 32) as u32
            };
            parts.push(format!("{v:08x}"));
        }
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_iteration_starts_at_start_and_covers_all() {
        let s = CpuSet::from_cpus([1, 3, 5, 7]);
        let v: Vec<_> = s.iter_wrap(4).collect();
        assert_eq!(v, vec![5, 7, 1, 3]);
        let v: Vec<_> = s.iter_wrap(0).collect();
        assert_eq!(v, vec![1, 3, 5, 7]);
        let v: Vec<_> = s.iter_wrap(8).collect();
        assert_eq!(v, vec![1, 3, 5, 7]);
        let v: Vec<_> = s.iter_wrap(3).collect();
        assert_eq!(v, vec![3, 5, 7, 1]);
    }

    #[test]
    fn list_format_round_trips() {
        let s = CpuSet::parse_list("0-3,8,10-11").unwrap();
        assert_eq!(s.weight(), 7);
        assert_eq!(s.to_list_string(), "0-3,8,10-11");
        assert!(CpuSet::parse_list("3-1").is_err());
        assert!(CpuSet::parse_list("x").is_err());
    }

    #[test]
    fn mask_format_matches_kernel_bitmap() {
        let s = CpuSet::range(0, 4);
        assert_eq!(s.to_mask_string(8), "0000000f");
        let s = CpuSet::from_cpus([32]);
        assert_eq!(s.to_mask_string(64), "00000001,00000000");
    }
}
