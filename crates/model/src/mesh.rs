//! A core's place on its die's mesh (`CostProfile::line_mesh_offset`).
//!
//! On a mesh die (Intel Skylake-SP and later) a cache line that moves between two cores crosses
//! the die from one core's tile to the other's, by way of the line's home agent, so some pairs
//! of cores are faster than others. The published per-pair matrices of Cascade Lake parts
//! (nviennot/core-to-core-latency: Xeon 8275CL, Xeon Gold 6242) fit an additive model, a pair's
//! latency = base + one figure for each core, to within 0.4 ns (R² 0.97–0.98), and the same
//! per-core figure shows in the cross-socket pairs: a core far from the die's centre is slow to
//! reach every other core. See the `skx` profile for the fit.
//!
//! Which tile a CPU number lands on depends on which cores of the die were fused off, which
//! differs from chip to chip and is not published. The model gives the cores of each package
//! the offsets of a die whose tiles are spread evenly from `-line_mesh_offset` to
//! `+line_mesh_offset` ns (so they sum to zero over the package), in an order drawn once from a
//! fixed stream: every run on a machine sees the same chip, whatever its seed, and a run's
//! seed decides which cores its tasks land on (docs/noise.md). SMT siblings share their core's
//! tile.

use wakesim_engine::{stream_id, RngStream, Time};
use wakesim_costs::CostProfile;
use wakesim_machine::{Dist, Machine};

use crate::sim::Sim;

/// Each CPU's mesh offset in ns (its core's); empty when `half` is 0 (a uniform die), so that
/// [`line_xfer`] skips them.
pub(crate) fn mesh_offsets(m: &Machine, half: u64) -> Vec<i32> {
    let topo = &m.topo;
    if half == 0 {
        return Vec::new();
    }
    let mut off = vec![0i32; topo.cpus.len()];
    let packages = topo.cpus.iter().map(|c| c.package).max().map_or(0, |p| p + 1);
    for pkg in 0..packages {
        let mut cores: Vec<u32> = topo.cpus.iter().filter(|c| c.package == pkg).map(|c| c.core).collect();
        cores.sort_unstable();
        cores.dedup();
        let k = cores.len();
        // Evenly spread over [-half, +half], symmetric, so the package's offsets sum to zero.
        let mut tiles: Vec<i32> = (0..k).map(|i| (half as f64 * (2.0 * (i as f64 + 0.5) / k as f64 - 1.0)).round() as i32).collect();
        // The die's layout: one fixed shuffle per package (Fisher–Yates), not the run's seed.
        let mut rng = RngStream::new(0, stream_id("mesh"), pkg as u64);
        for i in (1..k).rev() {
            tiles.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for (cpu, c) in topo.cpus.iter().enumerate() {
            if c.package == pkg {
                off[cpu] = tiles[cores.binary_search(&c.core).unwrap()];
            }
        }
    }
    off
}

/// One cache-line transfer between `a`'s and `b`'s caches: the profile's figure for their
/// distance, plus both cores' mesh offsets when they are different cores.
#[inline(always)]
pub(crate) fn line_xfer(m: &Machine, c: &CostProfile, mesh: &[i32], a: usize, b: usize) -> Time {
    let d = m.dist(a, b);
    let base = c.line.get(d);
    if mesh.is_empty() {
        return base;
    }
    match d {
        Dist::Local | Dist::Smt => base,
        _ => (base as i64 + mesh[a] as i64 + mesh[b] as i64).max(1) as Time,
    }
}

impl Sim {
    /// [`line_xfer`] on this machine.
    #[inline(always)]
    pub(crate) fn line_xfer(&self, a: usize, b: usize) -> Time {
        line_xfer(&self.m, &self.c, &self.mesh_off, a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_spread_evenly_shared_by_siblings_and_sum_to_zero_per_package() {
        let m = wakesim_machine::preset("xeon-8269cy").unwrap();
        let off = mesh_offsets(&m, 3);
        for pkg in 0..2 {
            let cpus: Vec<usize> = (0..m.nr_cpus()).filter(|&c| m.topo.cpus[c].package == pkg).collect();
            assert_eq!(cpus.iter().map(|&c| off[c]).sum::<i32>(), 0);
            assert_eq!(cpus.iter().map(|&c| off[c]).min(), Some(-3));
            assert_eq!(cpus.iter().map(|&c| off[c]).max(), Some(3));
            for &c in &cpus {
                for s in m.topo.smt_mask[c].iter() {
                    assert_eq!(off[s], off[c], "siblings {c} and {s}");
                }
            }
        }
        assert_eq!(off, mesh_offsets(&m, 3), "one chip: the same offsets every time");
        assert!(mesh_offsets(&m, 0).is_empty(), "a uniform die has no offsets");
    }
}
