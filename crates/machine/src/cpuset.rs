//! `CpuSet`: a bitset of CPUs, the simulator's `struct cpumask`.
//!
//! Sized by the machine, as the kernel sizes `cpumask_var_t` by `nr_cpu_ids` (`cpumask_size()`):
//! up to [`INLINE_CPUS`] bits live inline (no heap, so masks of the machines up to 1,024 CPUs
//! copy, compare and intersect on the hot path without allocation); a set holding a higher CPU
//! keeps its words in a shared heap buffer, copied on write, so the per-CPU copies of one span
//! cost a pointer each. [`MAX_CPUS`] bounds every machine.

use std::sync::Arc;

/// Largest machine the simulator accepts: `NR_CPUS` with x86's `CONFIG_MAXSMP`.
pub const MAX_CPUS: usize = 8192;
/// CPUs a set holds without a heap buffer.
pub const INLINE_CPUS: usize = 1024;
const INLINE_WORDS: usize = INLINE_CPUS / 64;

#[derive(Clone)]
pub struct CpuSet(Repr);

#[derive(Clone)]
enum Repr {
    Inline([u64; INLINE_WORDS]),
    /// More than `INLINE_WORDS` words (`cpumask_size()` of a big machine), shared until written.
    Heap(Arc<[u64]>),
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

impl PartialEq for CpuSet {
    fn eq(&self, o: &CpuSet) -> bool {
        match (&self.0, &o.0) {
            (Repr::Inline(a), Repr::Inline(b)) => a == b,
            (Repr::Heap(a), Repr::Heap(b)) if Arc::ptr_eq(a, b) => true,
            _ => {
                let (a, b) = (self.words(), o.words());
                let n = a.len().max(b.len());
                (0..n).all(|i| word(a, i) == word(b, i))
            }
        }
    }
}

impl Eq for CpuSet {}

impl std::hash::Hash for CpuSet {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let w = self.words();
        let used = w.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
        w[..used].hash(h);
    }
}

#[inline]
fn word(w: &[u64], i: usize) -> u64 {
    w.get(i).copied().unwrap_or(0)
}

/// The lowest set bit `>= from` of the `len` words `at(0..len)` yields: the word walk of
/// `cpumask_next()` and its `_andnot` form.
#[inline(always)]
fn next_bit(len: usize, from: usize, at: impl Fn(usize) -> u64) -> Option<usize> {
    let mut i = from >> 6;
    if i >= len {
        return None;
    }
    let mut w = at(i) & (!0u64 << (from & 63));
    loop {
        if w != 0 {
            return Some((i << 6) + w.trailing_zeros() as usize);
        }
        i += 1;
        if i == len {
            return None;
        }
        w = at(i);
    }
}

/// Words for `bits` bits (`BITS_TO_LONGS`).
fn words_for(bits: usize) -> usize {
    bits.div_ceil(64)
}

impl CpuSet {
    pub const fn new() -> Self {
        CpuSet(Repr::Inline([0; INLINE_WORDS]))
    }

    /// An empty set with room for `nr_cpus` CPUs (`zalloc_cpumask_var()` after `nr_cpu_ids`).
    pub fn with_nr_cpus(nr_cpus: usize) -> Self {
        Self::from_words(vec![0; words_for(nr_cpus)])
    }

    /// A set from its words: inline when they fit, else on the heap.
    fn from_words(w: Vec<u64>) -> Self {
        if w.len() <= INLINE_WORDS {
            let mut a = [0; INLINE_WORDS];
            a[..w.len()].copy_from_slice(&w);
            CpuSet(Repr::Inline(a))
        } else {
            CpuSet(Repr::Heap(w.into()))
        }
    }

    /// CPUs `lo..hi` (half-open).
    pub fn range(lo: usize, hi: usize) -> Self {
        let mut s = Self::with_nr_cpus(hi);
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

    /// The set's words (`cpumask_bits()`); bits past the end are clear.
    #[inline]
    fn words(&self) -> &[u64] {
        match &self.0 {
            Repr::Inline(w) => w,
            Repr::Heap(w) => w,
        }
    }

    /// Writable words, at least `need` of them: grows the set (to a power of two of words) and
    /// unshares a heap buffer.
    fn words_mut(&mut self, need: usize) -> &mut [u64] {
        let have = self.words().len();
        let unique = match &mut self.0 {
            Repr::Heap(a) => Arc::get_mut(a).is_some(),
            Repr::Inline(_) => true,
        };
        if need > have || !unique {
            let len = if need > have { need.next_power_of_two().max(2 * INLINE_WORDS) } else { have };
            let mut w = vec![0; len];
            w[..have].copy_from_slice(self.words());
            self.0 = Repr::Heap(w.into());
        }
        match &mut self.0 {
            Repr::Heap(a) => Arc::get_mut(a).expect("unshared above"),
            Repr::Inline(w) => w,
        }
    }

    #[inline]
    pub fn set(&mut self, c: usize) {
        if let Repr::Inline(w) = &mut self.0 {
            if c < INLINE_CPUS {
                w[c >> 6] |= 1u64 << (c & 63);
                return;
            }
        }
        self.set_beyond_inline(c);
    }

    #[cold]
    #[inline(never)]
    fn set_beyond_inline(&mut self, c: usize) {
        assert!(c < MAX_CPUS, "CPU {c} beyond MAX_CPUS");
        self.words_mut((c >> 6) + 1)[c >> 6] |= 1u64 << (c & 63);
    }

    #[inline]
    pub fn clear(&mut self, c: usize) {
        if let Repr::Inline(w) = &mut self.0 {
            if c < INLINE_CPUS {
                w[c >> 6] &= !(1u64 << (c & 63));
            }
            return;
        }
        self.clear_on_heap(c);
    }

    #[cold]
    #[inline(never)]
    fn clear_on_heap(&mut self, c: usize) {
        if self.contains(c) {
            self.words_mut((c >> 6) + 1)[c >> 6] &= !(1u64 << (c & 63));
        }
    }

    #[inline]
    pub fn contains(&self, c: usize) -> bool {
        word(self.words(), c >> 6) & (1u64 << (c & 63)) != 0
    }

    pub fn weight(&self) -> usize {
        self.words().iter().map(|w| w.count_ones() as usize).sum()
    }

    /// `cpumask_weight_and()`: CPUs in both sets, without building their intersection.
    pub fn weight_and(&self, o: &CpuSet) -> usize {
        self.words().iter().zip(o.words()).map(|(a, b)| (a & b).count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.words().iter().all(|&w| w == 0)
    }

    /// Lowest CPU in the set (`cpumask_first`).
    pub fn first(&self) -> Option<usize> {
        self.next_from(0)
    }

    /// `cpumask_first_and()`: lowest CPU in both sets, without building their intersection.
    pub fn first_and(&self, o: &CpuSet) -> Option<usize> {
        let (a, b) = (self.words(), o.words());
        (0..a.len().min(b.len())).find_map(|i| {
            let w = a[i] & b[i];
            (w != 0).then(|| (i << 6) + w.trailing_zeros() as usize)
        })
    }

    /// Lowest CPU `>= from` in the set (`cpumask_next` semantics, inclusive).
    #[inline]
    pub fn next_from(&self, from: usize) -> Option<usize> {
        let w = self.words();
        next_bit(w.len(), from, |i| w[i])
    }

    /// `cpumask_next_andnot()`: lowest CPU `>= from` in this set and not in `o`.
    pub fn next_and_not(&self, o: &CpuSet, from: usize) -> Option<usize> {
        let (a, b) = (self.words(), o.words());
        next_bit(a.len(), from, |i| a[i] & !word(b, i))
    }

    /// Word-by-word combination of two sets over `len` words (the heap path of the operations
    /// below, kept out of line so that their inline path stays small enough to inline).
    #[inline(never)]
    fn combine(&self, o: &CpuSet, len: usize, f: impl Fn(u64, u64) -> u64) -> CpuSet {
        let (a, b) = (self.words(), o.words());
        CpuSet::from_words((0..len).map(|i| f(word(a, i), word(b, i))).collect())
    }

    #[inline]
    pub fn and(&self, o: &CpuSet) -> CpuSet {
        if let (Repr::Inline(a), Repr::Inline(b)) = (&self.0, &o.0) {
            let mut r = *a;
            for i in 0..INLINE_WORDS {
                r[i] &= b[i];
            }
            return CpuSet(Repr::Inline(r));
        }
        self.combine(o, self.words().len().min(o.words().len()), |a, b| a & b)
    }

    #[inline]
    pub fn or(&self, o: &CpuSet) -> CpuSet {
        if let (Repr::Inline(a), Repr::Inline(b)) = (&self.0, &o.0) {
            let mut r = *a;
            for i in 0..INLINE_WORDS {
                r[i] |= b[i];
            }
            return CpuSet(Repr::Inline(r));
        }
        self.combine(o, self.words().len().max(o.words().len()), |a, b| a | b)
    }

    /// `cpumask_or(self, self, o)` in place: no new buffer when this one is unshared.
    pub fn or_assign(&mut self, o: &CpuSet) {
        let src = o.words();
        let used = src.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
        let dst = self.words_mut(used);
        for i in 0..used {
            dst[i] |= src[i];
        }
    }

    #[inline]
    pub fn and_not(&self, o: &CpuSet) -> CpuSet {
        if let (Repr::Inline(a), Repr::Inline(b)) = (&self.0, &o.0) {
            let mut r = *a;
            for i in 0..INLINE_WORDS {
                r[i] &= !b[i];
            }
            return CpuSet(Repr::Inline(r));
        }
        self.combine(o, self.words().len(), |a, b| a & !b)
    }

    #[inline]
    pub fn intersects(&self, o: &CpuSet) -> bool {
        if let (Repr::Inline(a), Repr::Inline(b)) = (&self.0, &o.0) {
            return (0..INLINE_WORDS).any(|i| a[i] & b[i] != 0);
        }
        self.intersects_words(o)
    }

    #[inline(never)]
    fn intersects_words(&self, o: &CpuSet) -> bool {
        self.words().iter().zip(o.words()).any(|(a, b)| a & b != 0)
    }

    #[inline]
    pub fn is_subset_of(&self, o: &CpuSet) -> bool {
        if let (Repr::Inline(a), Repr::Inline(b)) = (&self.0, &o.0) {
            return (0..INLINE_WORDS).all(|i| a[i] & !b[i] == 0);
        }
        self.is_subset_of_words(o)
    }

    #[inline(never)]
    fn is_subset_of_words(&self, o: &CpuSet) -> bool {
        let (a, b) = (self.words(), o.words());
        (0..a.len()).all(|i| a[i] & !word(b, i) == 0)
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
        let start = start.min(self.words().len() * 64);
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
        use std::fmt::Write;
        let words32 = nr_cpus.div_ceil(32).max(1);
        let mut out = String::with_capacity(words32 * 9);
        for i in (0..words32).rev() {
            let w64 = word(self.words(), (i * 32) >> 6);
            let v = if i % 2 == 0 {
                w64 as u32
            } else {
                (w64 >> 32) as u32
            };
            if i + 1 != words32 {
                out.push(',');
            }
            let _ = write!(out, "{v:08x}");
        }
        out
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
        assert!(CpuSet::parse_list("8192").is_err());
    }

    #[test]
    fn mask_format_matches_kernel_bitmap() {
        let s = CpuSet::range(0, 4);
        assert_eq!(s.to_mask_string(8), "0000000f");
        let s = CpuSet::from_cpus([32]);
        assert_eq!(s.to_mask_string(64), "00000001,00000000");
        let s = CpuSet::from_cpus([4100]);
        assert!(s.to_mask_string(4101).starts_with("00000010,"));
    }

    #[test]
    fn sets_beyond_1024_cpus_grow_onto_the_heap_and_compare_by_content() {
        let mut big = CpuSet::range(0, 8192);
        assert_eq!(big.weight(), 8192);
        assert_eq!(big.iter_wrap(8191).take(2).collect::<Vec<_>>(), vec![8191, 0]);
        let low = CpuSet::range(0, 1024);
        let mut high = CpuSet::from_cpus(1024..8192);
        assert_eq!(low.or(&high), big);
        assert_eq!(big.and(&low), low);
        assert_eq!(big.and_not(&high), low);
        assert_eq!(high.first_and(&big), Some(1024));
        assert_eq!(high.weight_and(&big), 7168);
        assert!(low.is_subset_of(&big) && !big.is_subset_of(&low));
        // Clones share the buffer until written; writes leave the other copy alone.
        let copy = big.clone();
        big.clear(5000);
        assert!(copy.contains(5000) && !big.contains(5000));
        // Equal contents are equal whatever the storage.
        high.clear(1024);
        for c in 1025..8192 {
            high.clear(c);
        }
        assert_eq!(high, CpuSet::new());
        let mut grown = low.clone();
        grown.or_assign(&CpuSet::from_cpus([6000]));
        assert_eq!(grown.to_list_string(), "0-1023,6000");
    }
}
