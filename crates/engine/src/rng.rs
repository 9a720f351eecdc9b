//! Seeded random streams, one per purpose.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// SplitMix64 finaliser: spreads `(seed, id)` into a well-mixed 64-bit stream seed.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A stable 64-bit id for a named purpose (FNV-1a of the name), so streams are keyed by what
/// they are for, not by the order in which they were created.
pub fn stream_id(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// One deterministic PCG stream.
#[derive(Clone, Debug)]
pub struct RngStream(Pcg64Mcg);

impl RngStream {
    /// The stream for purpose `id` (see [`stream_id`]) and index `n` (e.g. a task number).
    pub fn new(seed: u64, id: u64, n: u64) -> Self {
        let s = splitmix64(splitmix64(seed ^ splitmix64(id)) ^ n);
        RngStream(Pcg64Mcg::seed_from_u64(s))
    }

    pub fn next_u64(&mut self) -> u64 {
        rand::Rng::next_u64(&mut self.0)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        self.0.random::<f64>()
    }

    /// An exponential draw of mean `mean` (inverse transform; the uniform kept away from 1).
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -(1.0 - self.unit()).ln() * mean
    }

    /// A standard normal draw (Box–Muller from two uniforms, the first kept away from 0).
    pub fn standard_normal(&mut self) -> f64 {
        let (u1, u2) = (1.0 - self.unit(), self.unit());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// Uniform integer in `[0, n)`; `n` must be positive.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0.random_range(0..n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_stream_give_same_numbers() {
        let mut a = RngStream::new(7, stream_id("task"), 3);
        let mut b = RngStream::new(7, stream_id("task"), 3);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn different_streams_differ() {
        let mut a = RngStream::new(7, stream_id("task"), 3);
        let mut b = RngStream::new(7, stream_id("task"), 4);
        let mut c = RngStream::new(7, stream_id("idle"), 3);
        let x = a.next_u64();
        assert_ne!(x, b.next_u64());
        assert_ne!(x, c.next_u64());
    }
}
