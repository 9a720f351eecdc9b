//! A cache line many CPUs write at once (`crates/model/src/lines.rs`, `data::SharedLine`): one
//! owner and a time until which it is busy, each access paying the transfer from the last
//! writer. Checked here against the shape of published contended-atomic measurements: a closed
//! loop of CPUs each incrementing one shared counter as fast as it can, as in Travis Downs' "A
//! Concurrency Cost Hierarchy" (2020, `travisdowns/concurrency-hierarchy-bench`), and
//! per-distance CAS latencies on multi-socket Xeons (LPD-EPFL/mctop `desc/*.mct`, the machines
//! of David, Guerraoui and Trigonakis, SOSP 2013, and their successors).
use crate::common::*;
use wakesim_engine::Time;
use wakesim_model::data::SharedLine;
use wakesim_model::Sim;

/// `cpus` each run `lock xadd` on one line in a closed loop (the next op issued when the last
/// returns), `ops` ops in all, the line starting at the last of them; the line's accesses
/// serialise in the order they arrive. Returns the machine-wide interval between two ops in ns
/// (Downs' "Nanos/Op" divided by the number of threads). The op itself is charged nothing
/// beyond the transfer (`hold` 0): what is checked is how the transfers add up.
fn interval(s: &Sim, cpus: &[usize], ops: u64) -> f64 {
    let mut line = SharedLine::owned_by(cpus[cpus.len() - 1] as u32);
    let mut issue: Vec<Time> = vec![0; cpus.len()];
    for _ in 0..ops {
        let i = (0..cpus.len()).min_by_key(|&i| (issue[i], i)).unwrap();
        let c = cpus[i];
        let xfer = s.line_transfer(c, line.owner as usize);
        issue[i] += line.take(c as u32, issue[i], xfer, 0);
    }
    *issue.iter().max().unwrap() as f64 / ops as f64
}

/// One CPU of each core of LLC 0 (no SMT siblings: Downs ran with SMT off).
fn cores_of_llc0(s: &Sim) -> Vec<usize> {
    let mut seen = std::collections::BTreeSet::new();
    (0..s.nr_cpus())
        .filter(|&c| s.m.topo.cpus[c].llc == s.m.topo.cpus[0].llc)
        .filter(|&c| seen.insert(s.m.topo.cpus[c].core))
        .collect()
}

/// Every pair of CPUs on different cores, split by whether they share a package.
fn core_pairs(s: &Sim) -> (Vec<(usize, usize)>, Vec<(usize, usize)>) {
    let n = s.nr_cpus();
    let t = &s.m.topo.cpus;
    let pairs = (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b))).filter(|&(a, b)| t[a].core != t[b].core);
    pairs.partition(|&(a, b)| t[a].package == t[b].package)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Downs' closed loop of `lock xadd` on one line: the machine-wide interval between two ops
/// moved by at most 11 % from 2 threads to 4–16 (Skylake i7-6700HQ 22.1 → 24.1 ns, Ice Lake
/// 16.4 → 17.4 ns, Graviton 2 8.5 → 9.4 ns): the line serves one contender at a time, each op
/// costing about one transfer however many wait, so a thread's own latency grows linearly with
/// their number. The model's line must do the same inside an LLC.
#[test]
fn a_contended_counter_serves_one_transfer_per_op_however_many_contend() {
    for m in ["xeon-8269cy", "xeon-4s", "epyc-9654", "epyc-9754"] {
        let s = sim(m, v6_6(), &pinned_ping_pong(0, 1, 1), 1);
        let cores = cores_of_llc0(&s);
        // Per op, in transfers: the interval over the mean transfer between the contenders (the
        // Cascade Lake presets' mesh makes some pairs of cores cheaper than others).
        let per_xfer = |n: usize| {
            let c = &cores[..n];
            let xfers: Vec<f64> = c.iter().flat_map(|&a| c.iter().filter(move |&&b| b != a).map(move |&b| (a, b))).map(|(a, b)| s.line_transfer(a, b) as f64).collect();
            interval(&s, c, 10_000) / (xfers.iter().sum::<f64>() / xfers.len() as f64)
        };
        // The mechanism's own rule first: two contenders hand the line back and forth, one
        // transfer per op (the line starts at the second, so the first op pays one too).
        let two = per_xfer(2);
        assert!((0.95..=1.05).contains(&two), "{m}: two contenders take {two:.2} transfers per op");
        for n in [3, 4, 8, 16].into_iter().filter(|&n| n <= cores.len()) {
            let r = per_xfer(n) / two;
            assert!((0.89..=1.11).contains(&r), "{m}: {n} contenders take {r:.2}× the time per op of two, in transfers");
        }
    }
}

/// Per-distance CAS latencies on multi-socket Xeons (LPD-EPFL/mctop `desc/*.mct`, cycles): in
/// the socket and one socket away 135 / 338 (4-socket Haswell-EX), 112 / 308 (2-socket Ivy
/// Bridge-EP), 116 / 341 (8-socket Westmere-EX, one hop): a handoff across sockets costs
/// 2.50–2.94× one inside. The model's contended line on the multi-socket Xeon presets, typical
/// (median) pairs.
#[test]
fn a_handoff_across_sockets_costs_what_multi_socket_xeons_show() {
    for m in ["xeon-8269cy", "xeon-8260", "xeon-4s"] {
        let s = sim(m, v6_6(), &pinned_ping_pong(0, 1, 1), 1);
        let (same, other) = core_pairs(&s);
        let per_op = |v: Vec<(usize, usize)>| median(v.into_iter().map(|(a, b)| interval(&s, &[a, b], 100)).collect());
        let (inside, across) = (per_op(same), per_op(other));
        let r = across / inside;
        assert!((2.50..=2.94).contains(&r), "{m}: {across:.1} ns across sockets, {inside:.1} inside: {r:.2}×");
    }
}
