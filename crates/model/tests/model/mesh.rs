//! A core's place on its die's mesh (`crate::mesh`): each core adds a fixed offset to every
//! cache-line transfer with another core, as the per-pair core-to-core matrices of Cascade Lake
//! parts show (nviennot/core-to-core-latency; the fit is in the `skx` profile).
use crate::common::*;
use wakesim_engine::Time;
use wakesim_workloads::Workload;

const ROUNDS: u64 = 2_000;

fn ping_pong(a: usize, b: usize) -> Workload {
    pinned_ping_pong(a, b, ROUNDS)
}

fn elapsed(a: usize, b: usize, mesh: Option<u64>) -> Time {
    let s = sim_with("xeon-8269cy", &ping_pong(a, b), 1, |cfg| {
        if let Some(m) = mesh {
            cfg.costs.line_mesh_offset = m;
        }
    });
    let r = s.run();
    assert!(!r.outcome.capped, "the ping-pong finishes");
    r.outcome.end_time
}

/// Every pair of CPUs on different cores of one LLC.
fn llc_pairs(s: &wakesim_model::Sim) -> Vec<(usize, usize)> {
    let n = s.nr_cpus();
    (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b))).filter(|&(a, b)| s.m.dist(a, b) == wakesim_machine::Dist::Llc).collect()
}

/// The pair whose transfers cost most above (`sign` 1) or below (−1) the profile's same-LLC
/// figure: the die's most outlying or most central pair.
fn pair(s: &wakesim_model::Sim, sign: i64) -> (usize, usize) {
    let extra = |&(a, b): &(usize, usize)| sign * (s.line_transfer(a, b) as i64 - s.c.line.llc as i64);
    llc_pairs(s).into_iter().max_by_key(extra).expect("a machine with an LLC of several cores")
}

#[test]
fn same_llc_pairs_spread_as_the_published_cascade_lake_matrices() {
    let s = sim("xeon-8269cy", v6_6(), &ping_pong(0, 1), 1);
    let lat: Vec<f64> = llc_pairs(&s).into_iter().map(|(a, b)| s.line_transfer(a, b) as f64).collect();
    let n = lat.len() as f64;
    let mean = lat.iter().sum::<f64>() / n;
    let cv = (lat.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt() / mean;
    // Published: Xeon 8275CL 46.7–47.1 ns mean, CV 5.3 %; Xeon Gold 6242 48.2 ns, CV 4.9 %;
    // pairs 41.3–56.2 ns over both parts and their sockets.
    assert!((45.0..=49.0).contains(&mean), "mean {mean:.1} ns");
    assert!((0.04..=0.065).contains(&cv), "CV {:.1} %", cv * 100.0);
    let (lo, hi) = lat.iter().fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
    assert!(lo >= 41.0 && hi <= 56.5, "pairs {lo}–{hi} ns");
    // SMT siblings share a tile: no offset.
    assert_eq!(s.line_transfer(0, 52), s.c.line.smt);
}

#[test]
fn the_chip_is_the_same_in_every_run() {
    let a = sim("xeon-8269cy", v6_6(), &ping_pong(0, 1), 1);
    let b = sim("xeon-8269cy", v6_6(), &ping_pong(0, 1), 9);
    assert_eq!(a.mesh_off, b.mesh_off, "the seed draws the run, not the chip");
}

#[test]
fn an_outlying_pair_ping_pongs_slower_than_a_central_pair() {
    let s = sim("xeon-8269cy", v6_6(), &ping_pong(0, 1), 1);
    let (oa, ob) = pair(&s, 1);
    let (ca, cb) = pair(&s, -1);
    let gap = s.line_transfer(oa, ob) as i64 - s.line_transfer(ca, cb) as i64;
    assert!(gap >= 10, "outlying {oa}-{ob} vs central {ca}-{cb}: {gap} ns a transfer");
    let (outer, central) = (elapsed(oa, ob, None), elapsed(ca, cb, None));
    // Every transfer between the two CPUs costs `gap` more; a round trip moves at least the two
    // messages' lines and the pipes' own lines across.
    let per_rt = (outer as f64 - central as f64) / ROUNDS as f64;
    let transfers = per_rt / gap as f64;
    assert!((4.0..=60.0).contains(&transfers), "{per_rt:.0} ns a round trip = {transfers:.1} transfers of {gap} ns");
    // With a uniform die the two pairs are the same.
    assert_eq!(elapsed(oa, ob, Some(0)), elapsed(ca, cb, Some(0)));
}
