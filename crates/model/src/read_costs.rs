//! What reading every runqueue of a span costs a CPU (`update_sg_lb_stats()`'s walk over a
//! domain, `select_idle_cpu()`'s full scan of an LLC): the sum of the line transfers by distance
//! (for the walk, the share of it that its overlapping misses leave, [`line_share`]; for
//! the scan, [`ScanLines`]),
//! computed from how many of the span's CPUs lie at each distance (`cpumask_weight_and()` with
//! the CPU's core, cluster, LLC and package-node) rather than by visiting every CPU, so that
//! setting up a machine of n CPUs stays near linear in n. Sums of integers: the same figures.

use wakesim_costs::LineCosts;
use wakesim_engine::Time;
use wakesim_machine::{CpuSet, Dist, Machine, Topology};

/// The CPUs of each cluster, LLC and (package, node) of a topology, as the distance classes of
/// `Topology::dist` nest them: core ⊆ cluster ⊆ LLC ⊆ package-node.
pub(crate) struct DistanceMasks {
    cluster: Vec<CpuSet>,
    llc: Vec<CpuSet>,
    /// By index into `pkg_node_ids`.
    pkg_node: Vec<CpuSet>,
    pkg_node_ids: Vec<(u32, u32)>,
}

fn masks_by_id(n: usize, ids: impl Iterator<Item = u32>) -> Vec<CpuSet> {
    let mut out: Vec<CpuSet> = Vec::new();
    for (c, id) in ids.enumerate() {
        if out.len() <= id as usize {
            out.resize(id as usize + 1, CpuSet::with_nr_cpus(n));
        }
        out[id as usize].set(c);
    }
    out
}

impl DistanceMasks {
    pub fn new(topo: &Topology) -> DistanceMasks {
        let n = topo.nr_cpus();
        let mut pkg_node_ids: Vec<(u32, u32)> = topo.cpus.iter().map(|c| (c.package, c.node)).collect();
        pkg_node_ids.sort_unstable();
        pkg_node_ids.dedup();
        let pn = |c: &wakesim_machine::CpuInfo| pkg_node_ids.binary_search(&(c.package, c.node)).unwrap_or(0) as u32;
        DistanceMasks {
            cluster: masks_by_id(n, topo.cpus.iter().map(|c| c.cluster.unwrap_or(0))),
            llc: masks_by_id(n, topo.cpus.iter().map(|c| c.llc)),
            pkg_node: masks_by_id(n, topo.cpus.iter().map(pn)),
            pkg_node_ids,
        }
    }

    /// How many CPUs of `span` lie at each distance from `c`, indexed by [`Dist::index`].
    pub fn counts(&self, topo: &Topology, c: usize, span: &CpuSet) -> [u64; 6] {
        let info = &topo.cpus[c];
        let local = span.contains(c) as u64;
        let core = span.weight_and(&topo.smt_mask[c]) as u64;
        let cluster = match info.cluster {
            Some(k) => span.weight_and(&self.cluster[k as usize]) as u64,
            None => core,
        };
        let llc = span.weight_and(&self.llc[info.llc as usize]) as u64;
        let pn = self.pkg_node_ids.binary_search(&(info.package, info.node)).unwrap_or(0);
        let pkg_node = span.weight_and(&self.pkg_node[pn]) as u64;
        let all = span.weight() as u64;
        [local, core - local, cluster - core, llc - cluster, pkg_node - llc, all - pkg_node]
    }

    /// `Σ line(dist(c, o))` over the CPUs `o` of `span`, with the mesh offsets of `c` and `o`
    /// (`crate::mesh`) on every transfer between different cores, as `Sim::line_xfer` charges it.
    pub fn span_line_cost(&self, topo: &Topology, c: usize, span: &CpuSet, line: &LineCosts, mesh: &mut MeshSums) -> Time {
        let counts = self.counts(topo, c, span);
        let base: Time = Dist::ALL.iter().map(|&d| counts[d.index()] * line.get(d)).sum();
        if mesh.zero {
            return base;
        }
        // The other cores of the span: c's offset once for each, plus each one's own.
        let off_c = mesh.off[c] as i64;
        let far = (counts[Dist::Cluster.index()..].iter().sum::<u64>()) as i64;
        let own_core = span.weight_and(&topo.smt_mask[c]) as i64;
        let theirs = mesh.span_sum(span) - own_core * off_c;
        (base as i64 + far * off_c + theirs).max(0) as Time
    }
}

/// `pct` percent of `lines`, the one-after-another sum of some rq-line transfers whose misses
/// overlap, rounded to the nearest ns: what a balance pass's walk (`update_sg_lb_stats()` over
/// each group of a domain) pays for its span's rq lines (`lb_walk_line_pct`: the lines of one
/// CPU's rq overlap each other and the next CPUs'), and the idle scan's probes ([`ScanLines`]).
pub(crate) fn line_share(lines: Time, pct: u64) -> Time {
    (lines * pct + 50) / 100
}

/// The rq lines of one `select_idle_cpu()` loop's probes (`__select_idle_cpu()` and
/// `select_idle_core()` on each CPU of the scan). A probe's rq address comes from `cpu_rq(cpu)`
/// alone and the loop goes on to the next CPU without waiting for this one's lines, so an
/// out-of-order core has several probes' misses in flight: each probe pays `pct` percent of its
/// line transfer (`sis_probe_line_pct`), and the loop's last probe, whose answer ends it, is
/// waited for in full: `Σ pct·line + (1 − pct)·line_last`. The sum is rounded once, so that a
/// scan charged from a precomputed span sum ([`own_llc_scan_lines`]) costs what the loop does.
#[derive(Default, Clone, Copy)]
pub(crate) struct ScanLines {
    probes: u64,
    lines: Time,
    last: Time,
}

impl ScanLines {
    /// One probe whose rq lines are one transfer of `line` ns away.
    #[inline]
    pub(crate) fn probe(&mut self, line: Time) {
        self.probes += 1;
        self.lines += line;
        self.last = line;
    }

    /// `probes` probes whose lines sum to `lines`, the last of them `last` away.
    pub(crate) fn of(probes: u64, lines: Time, last: Time) -> ScanLines {
        ScanLines { probes, lines, last }
    }

    /// How many probes the loop made.
    pub(crate) fn probes(&self) -> u64 {
        self.probes
    }

    /// What the loop's probes cost: `sis_probe` each, and their lines as above.
    pub(crate) fn cost(&self, sis_probe: Time, pct: u64) -> Time {
        self.probes * sis_probe + line_share(self.lines, pct) + self.last.saturating_sub(line_share(self.last, pct))
    }
}

/// Per CPU, the sum of the line transfers of probing every CPU of its own LLC, one after
/// another ([`ScanLines`] takes the share); `llc_span[l]` is the span of the model's LLC `l`,
/// `llc_of[c]` the LLC of CPU `c`.
pub(crate) fn own_llc_scan_lines(m: &Machine, masks: &DistanceMasks, llc_span: &[CpuSet], llc_of: &[u32], line: &LineCosts, mesh: &mut MeshSums) -> Vec<Time> {
    (0..m.nr_cpus())
        .map(|c| masks.span_line_cost(&m.topo, c, &llc_span[llc_of[c] as usize], line, mesh))
        .collect()
}

/// Whether every LLC span of the model is a whole LLC of the topology and holds its own CPUs:
/// then every CPU of another LLC is at one distance from a CPU (an LLC lies in one
/// package-node), which [`crate::sim::Sim`]'s cost of scanning another LLC relies on.
pub(crate) fn llc_spans_are_topology_llcs(m: &Machine, masks: &DistanceMasks, llc_span: &[CpuSet], llc_of: &[u32]) -> bool {
    let whole_llc = |s: &CpuSet| match s.first() {
        Some(f) => *s == masks.llc[m.topo.cpus[f].llc as usize],
        None => false,
    };
    llc_span.iter().all(whole_llc) && (0..m.nr_cpus()).all(|c| llc_span[llc_of[c] as usize].contains(c))
}

/// The mesh offsets (`crate::mesh`) with the sum over each span asked for, computed once per
/// distinct span: every CPU of a domain asks for the same one, and setup stays linear in the
/// number of CPUs for each distinct span.
pub struct MeshSums<'a> {
    off: &'a [i32],
    /// Every offset is 0 (the profile has no mesh): spans cost what their distances say.
    zero: bool,
    seen: std::collections::HashMap<(usize, usize), Vec<(CpuSet, i64)>>,
}

impl<'a> MeshSums<'a> {
    pub fn new(off: &'a [i32]) -> Self {
        MeshSums { off, zero: off.iter().all(|&o| o == 0), seen: Default::default() }
    }

    fn span_sum(&mut self, span: &CpuSet) -> i64 {
        let key = (span.first().unwrap_or(0), span.weight());
        let known = self.seen.entry(key).or_default();
        if let Some((_, sum)) = known.iter().find(|(s, _)| s == span) {
            return *sum;
        }
        let sum = span.iter().map(|o| self.off[o] as i64).sum();
        known.push((span.clone(), sum));
        sum
    }
}
