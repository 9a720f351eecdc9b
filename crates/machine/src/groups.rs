//! Sched groups: `build_sched_groups()` / `get_group()` for ordinary levels and
//! `build_overlap_sched_groups()` for NUMA levels (kernel/sched/topology.c).

use crate::levels::TopologyLevel;
use crate::{CpuSet, SchedGroup, Topology};

/// Builds the group lists of every (CPU, level); ordinary groups are shared between the CPUs
/// of a domain exactly as the kernel shares `sched_group`s, so they are built once and cached.
pub(crate) struct GroupBuilder<'a> {
    topo: &'a Topology,
    levels: &'a [TopologyLevel],
    /// Index of the last level built for each CPU (its chain ends there).
    top: &'a [usize],
    /// `[level][first cpu of the group]`.
    cache: Vec<Vec<Option<SchedGroup>>>,
}

impl<'a> GroupBuilder<'a> {
    pub fn new(topo: &'a Topology, levels: &'a [TopologyLevel], top: &'a [usize]) -> Self {
        let n = topo.cpus.len();
        GroupBuilder {
            topo,
            levels,
            top,
            cache: vec![vec![None; n]; levels.len()],
        }
    }

    /// Groups of `cpu`'s domain at level index `t`; `groups[0]` is the local group.
    pub fn build(&mut self, t: usize, cpu: usize) -> Vec<SchedGroup> {
        if self.levels[t].overlap {
            self.build_overlap(t, cpu)
        } else {
            self.build_regular(t, cpu)
        }
    }

    /// The span of the (pre-degenerate) child domain of CPU `i`'s level `t` domain; a single
    /// CPU at the lowest level.
    fn child_span(&self, t: usize, i: usize) -> CpuSet {
        if t == 0 {
            CpuSet::from_cpus([i])
        } else {
            self.levels[t - 1].spans[i].clone()
        }
    }

    /// `build_sched_groups()`: walk the span with `for_each_cpu_wrap(i, span, cpu)`, one group
    /// per uncovered child domain, so the list starts at the local group and continues in CPU
    /// order, wrapping around.
    fn build_regular(&mut self, t: usize, cpu: usize) -> Vec<SchedGroup> {
        let span = self.levels[t].spans[cpu].clone();
        let mut covered = CpuSet::new();
        let mut out = Vec::new();
        for i in span.iter_wrap(cpu) {
            if covered.contains(i) {
                continue;
            }
            let g = self.get_group(t, i);
            covered.or_assign(&g.span);
            out.push(g);
        }
        out
    }

    /// `get_group()`: the group is the child's span; its balance CPU (and `sgc->id`) is the
    /// child span's first CPU.
    fn get_group(&mut self, t: usize, i: usize) -> SchedGroup {
        let span = self.child_span(t, i);
        let first = span.first().unwrap_or(i);
        if let Some(g) = &self.cache[t][first] {
            return g.clone();
        }
        let g = make_group(self.topo, span, first);
        self.cache[t][first] = Some(g.clone());
        g
    }

    /// `build_overlap_sched_groups()`: for each uncovered CPU `i` (wrapping from `cpu`), the
    /// group is the child span of `i`'s own domain at this level (its "sibling"), descending
    /// with `find_descended_sibling()` when that child spans outside this domain. The balance
    /// CPU is the first CPU of `build_balance_mask()`.
    fn build_overlap(&self, t: usize, cpu: usize) -> Vec<SchedGroup> {
        let span = &self.levels[t].spans[cpu];
        let mut covered = CpuSet::new();
        let mut out = Vec::new();
        for i in span.iter_wrap(cpu) {
            if covered.contains(i) || self.top[i] < t {
                // Covered, or `i`'s chain stopped below this level (asymmetric node setups).
                continue;
            }
            let mut sib = t;
            if sib > 0 && !self.levels[sib - 1].spans[i].is_subset_of(span) {
                while sib > 0 && !self.levels[sib - 1].spans[i].is_subset_of(span) {
                    sib -= 1;
                }
                while sib > 0 && self.levels[sib - 1].spans[i] == self.levels[sib].spans[i] {
                    sib -= 1;
                }
            }
            let gspan = if sib > 0 {
                &self.levels[sib - 1].spans[i]
            } else {
                &self.levels[sib].spans[i]
            };
            covered.or_assign(gspan);
            let balance = gspan
                .iter()
                .find(|&j| sib > 0 && self.top[j] >= sib && self.levels[sib - 1].spans[j] == *gspan)
                .or(gspan.first())
                .unwrap_or(i);
            out.push(make_group(self.topo, gspan.clone(), balance));
        }
        out
    }
}

/// One group with `init_sched_groups_capacity()`'s `group_weight` and `cores` (CPUs counted once
/// per SMT core).
fn make_group(topo: &Topology, span: CpuSet, balance_cpu: usize) -> SchedGroup {
    let mut cores: Vec<u32> = span.iter().map(|c| topo.cpus[c].core).collect();
    let weight = cores.len() as u32;
    cores.sort_unstable();
    cores.dedup();
    SchedGroup {
        span,
        weight,
        balance_cpu: balance_cpu as u32,
        cores: cores.len() as u32,
    }
}
