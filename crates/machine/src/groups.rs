//! Sched groups: `build_sched_groups()` / `get_group()` for ordinary levels and
//! `build_overlap_sched_groups()` for NUMA levels (kernel/sched/topology.c).

use crate::levels::TopologyLevel;
use crate::{CpuSet, SchedGroup, Topology};
use std::collections::HashMap;
use std::sync::Arc;

/// Builds the group lists of every (CPU, level). A group is built once and shared by every
/// domain listing it, as the kernel shares a level's `sched_group`s between the CPUs of a
/// domain, so the lists cost a pointer per group.
pub(crate) struct GroupBuilder<'a> {
    topo: &'a Topology,
    levels: &'a [TopologyLevel],
    /// Index of the last level built for each CPU (its chain ends there).
    top: &'a [usize],
    /// `get_group()`'s groups by (level, child span id; the CPU at the lowest level).
    regular: HashMap<(usize, u32), Arc<SchedGroup>>,
    /// Overlap groups by (sibling level, span id of their span at the level they come from).
    overlap: HashMap<(usize, u32), Arc<SchedGroup>>,
}

impl<'a> GroupBuilder<'a> {
    pub fn new(topo: &'a Topology, levels: &'a [TopologyLevel], top: &'a [usize]) -> Self {
        GroupBuilder {
            topo,
            levels,
            top,
            regular: HashMap::new(),
            overlap: HashMap::new(),
        }
    }

    /// Groups of `cpu`'s domain at level index `t`; `groups[0]` is the local group.
    pub fn build(&mut self, t: usize, cpu: usize) -> Vec<Arc<SchedGroup>> {
        if self.levels[t].overlap {
            self.build_overlap(t, cpu)
        } else {
            self.build_regular(t, cpu)
        }
    }

    /// `build_sched_groups()`: walk the span with `for_each_cpu_wrap(i, span, cpu)`, one group
    /// per uncovered child domain, so the list starts at the local group and continues in CPU
    /// order, wrapping around.
    fn build_regular(&mut self, t: usize, cpu: usize) -> Vec<Arc<SchedGroup>> {
        let span = &self.levels[t].spans[cpu];
        let mut covered = CpuSet::new();
        let mut out = Vec::new();
        let mut walk = UncoveredWalk::new(cpu);
        while let Some(i) = walk.next(span, &covered) {
            let g = self.get_group(t, i);
            covered.or_assign(&g.span);
            out.push(g);
        }
        out
    }

    /// `get_group()`: the group is the child's span; its balance CPU (and `sgc->id`) is the
    /// child span's first CPU.
    fn get_group(&mut self, t: usize, i: usize) -> Arc<SchedGroup> {
        let key = if t == 0 { (0, i as u32) } else { (t, self.levels[t - 1].span_ids[i]) };
        let (topo, levels) = (self.topo, self.levels);
        self.regular
            .entry(key)
            .or_insert_with(|| {
                let span = if t == 0 { CpuSet::from_cpus([i]) } else { levels[t - 1].spans[i].clone() };
                let first = span.first().unwrap_or(i);
                Arc::new(make_group(topo, span, first))
            })
            .clone()
    }

    /// `build_overlap_sched_groups()`: for each uncovered CPU `i` (wrapping from `cpu`), the
    /// group is the child span of `i`'s own domain at this level (its "sibling"), descending
    /// with `find_descended_sibling()` when that child spans outside this domain. The balance
    /// CPU is the first CPU of `build_balance_mask()`.
    fn build_overlap(&mut self, t: usize, cpu: usize) -> Vec<Arc<SchedGroup>> {
        let levels = self.levels;
        let span = &levels[t].spans[cpu];
        let mut covered = CpuSet::new();
        let mut out = Vec::new();
        let mut walk = UncoveredWalk::new(cpu);
        while let Some(i) = walk.next(span, &covered) {
            if self.top[i] < t {
                // `i`'s chain stopped below this level (asymmetric node setups).
                continue;
            }
            let mut sib = t;
            if sib > 0 && !levels[sib - 1].spans[i].is_subset_of(span) {
                while sib > 0 && !levels[sib - 1].spans[i].is_subset_of(span) {
                    sib -= 1;
                }
                while sib > 0 && levels[sib - 1].spans[i] == levels[sib].spans[i] {
                    sib -= 1;
                }
            }
            let g = self.overlap_group(sib, i);
            covered.or_assign(&g.span);
            out.push(g);
        }
        out
    }

    /// The overlap group of `i` descended to level `sib`: the span of `i`'s domain below `sib`
    /// (at `sib` itself when that is the lowest level), balanced by the first CPU whose own
    /// domain below `sib` has that span.
    fn overlap_group(&mut self, sib: usize, i: usize) -> Arc<SchedGroup> {
        let from = sib.saturating_sub(1);
        let (topo, levels, top) = (self.topo, self.levels, self.top);
        let id = levels[from].span_ids[i];
        self.overlap
            .entry((sib, id))
            .or_insert_with(|| {
                let gspan = levels[from].spans[i].clone();
                let balance = gspan
                    .iter()
                    .find(|&j| sib > 0 && top[j] >= sib && levels[sib - 1].span_ids[j] == id)
                    .or(gspan.first())
                    .unwrap_or(i);
                Arc::new(make_group(topo, gspan, balance))
            })
            .clone()
    }
}

/// `for_each_cpu_wrap(i, span, cpu)` that skips the CPUs `covered` holds when it reaches them,
/// finding each next CPU a word at a time rather than testing every CPU of the span.
struct UncoveredWalk {
    start: usize,
    from: usize,
    wrapped: bool,
}

impl UncoveredWalk {
    fn new(start: usize) -> Self {
        UncoveredWalk {
            start,
            from: start,
            wrapped: false,
        }
    }

    fn next(&mut self, span: &CpuSet, covered: &CpuSet) -> Option<usize> {
        loop {
            match span.next_and_not(covered, self.from) {
                Some(i) if !self.wrapped || i < self.start => {
                    self.from = i + 1;
                    return Some(i);
                }
                _ if !self.wrapped => {
                    self.wrapped = true;
                    self.from = 0;
                }
                _ => return None,
            }
        }
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
