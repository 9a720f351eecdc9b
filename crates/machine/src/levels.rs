//! The topology levels (`struct sched_domain_topology_level`): the kernel's `default_topology[]`
//! / `x86_topology[]` followed by the NUMA levels that `sched_init_numa()` appends.

use crate::{CpuSet, SdFlags, SdLevel, Topology};

/// One topology level with its per-CPU mask.
#[derive(Clone, Debug)]
pub(crate) struct TopologyLevel {
    pub level: SdLevel,
    /// `tl->sd_flags()`: the topology flags (`cpu_smt_flags()` etc.).
    pub topo_flags: u32,
    /// `SDTL_OVERLAP` (NUMA levels >= 1): groups built by `build_overlap_sched_groups()`.
    pub overlap: bool,
    /// `sched_domains_numa_distance[tl->numa_level]` for NUMA levels, LOCAL_DISTANCE otherwise.
    pub numa_distance: u32,
    /// `tl->mask(cpu)` per CPU, with `build_sched_domain()`'s fix-up applied (a level's span
    /// always contains the level below's span). CPUs with the same span share its buffer.
    pub spans: Vec<CpuSet>,
    /// Per CPU, a number naming its span: equal spans, equal numbers (the group builder's key).
    pub span_ids: Vec<u32>,
}

/// Levels bottom-up:
/// * SMT: `cpu_smt_mask`, `cpu_smt_flags()` = SD_SHARE_CPUCAPACITY | SD_SHARE_LLC;
/// * CLS (only on machines with clusters): `cpu_clustergroup_mask`, `cpu_cluster_flags()` =
///   SD_CLUSTER | SD_SHARE_LLC;
/// * MC: `cpu_coregroup_mask` = the LLC, `cpu_core_flags()` = SD_SHARE_LLC;
/// * PKG: `cpu_cpu_mask` = `cpumask_of_node(cpu_to_node(cpu))` (yes, the *node*), no flags. When
///   a package holds several nodes, x86 drops PKG and the kernel's NODE level (numa_level 0,
///   same span, no flags) stands in: named [`SdLevel::Numa`]`(0)` here;
/// * NUMA levels `j = 1..`: one per distinct node distance above 10 (`sched_init_numa()`), span =
///   CPUs of the nodes within that distance, `cpu_numa_flags()` = SD_NUMA, SDTL_OVERLAP.
pub(crate) fn topology_levels(topo: &Topology) -> Vec<TopologyLevel> {
    let n = topo.cpus.len();
    let mut levels = Vec::new();
    let plain = |level, topo_flags, spans| TopologyLevel {
        level,
        topo_flags,
        overlap: false,
        numa_distance: crate::topology::LOCAL_DISTANCE,
        spans,
        span_ids: Vec::new(),
    };
    levels.push(plain(
        SdLevel::Smt,
        SdFlags::SHARE_CPUCAPACITY | SdFlags::SHARE_LLC,
        topo.smt_mask.clone(),
    ));
    if topo.has_clusters() {
        let spans = spans_by_id(topo, |c| c.cluster.unwrap_or(0));
        levels.push(plain(
            SdLevel::Cls,
            SdFlags::CLUSTER | SdFlags::SHARE_LLC,
            spans,
        ));
    }
    levels.push(plain(
        SdLevel::Mc,
        SdFlags::SHARE_LLC,
        spans_by_id(topo, |c| c.llc),
    ));
    let pkg_level = if numa_in_package(topo) {
        SdLevel::Numa(0)
    } else {
        SdLevel::Pkg
    };
    let node_spans = spans_by_id(topo, |c| c.node);
    levels.push(plain(pkg_level, 0, node_spans.clone()));

    // sched_init_numa(): the distinct distances between nodes that have CPUs, ascending.
    let nodes = topo.nr_nodes() as u32;
    let mut distances: Vec<u32> = (0..nodes)
        .flat_map(|a| (0..nodes).map(move |b| (a, b)))
        .map(|(a, b)| topo.node_dist(a, b))
        .collect();
    distances.sort_unstable();
    distances.dedup();
    let node_masks: Vec<CpuSet> = (0..nodes).map(|k| topo.node_cpus(k)).collect();
    for (j, &d) in distances.iter().enumerate().skip(1) {
        let per_node: Vec<CpuSet> = (0..nodes)
            .map(|a| {
                (0..nodes)
                    .filter(|&b| topo.node_dist(a, b) <= d)
                    .fold(CpuSet::new(), |mut m, b| {
                        m.or_assign(&node_masks[b as usize]);
                        m
                    })
            })
            .collect();
        levels.push(TopologyLevel {
            level: SdLevel::Numa(j.min(u8::MAX as usize) as u8),
            topo_flags: SdFlags::NUMA,
            overlap: true,
            numa_distance: d,
            spans: (0..n)
                .map(|cpu| per_node[topo.cpus[cpu].node as usize].clone())
                .collect(),
            span_ids: Vec::new(),
        });
    }

    // build_sched_domain(): "BUG: arch topology borken" fix-up, ensure a level covers its child.
    for l in 1..levels.len() {
        for cpu in 0..n {
            let (lower, upper) = levels.split_at_mut(l);
            let child = &lower[l - 1].spans[cpu];
            let s = &mut upper[0].spans[cpu];
            if !child.is_subset_of(s) {
                *s = s.or(child);
            }
        }
    }
    for tl in &mut levels {
        tl.span_ids = number_spans(&tl.spans);
    }
    levels
}

/// Numbers the distinct spans in order of first appearance.
fn number_spans(spans: &[CpuSet]) -> Vec<u32> {
    let mut ids: std::collections::HashMap<&CpuSet, u32> = std::collections::HashMap::new();
    spans
        .iter()
        .map(|s| {
            let next = ids.len() as u32;
            *ids.entry(s).or_insert(next)
        })
        .collect()
}

/// Whether some package contains more than one NUMA node (`x86_has_numa_in_package`).
fn numa_in_package(topo: &Topology) -> bool {
    let mut node_of_pkg: Vec<Option<u32>> = vec![None; topo.nr_packages()];
    for c in &topo.cpus {
        match node_of_pkg.get_mut(c.package as usize) {
            Some(Some(n)) if *n != c.node => return true,
            Some(slot @ None) => *slot = Some(c.node),
            _ => {}
        }
    }
    false
}

/// Per-CPU span of the CPUs sharing `key` with it (`key` values are dense ids).
fn spans_by_id(topo: &Topology, key: impl Fn(&crate::CpuInfo) -> u32) -> Vec<CpuSet> {
    let count = topo
        .cpus
        .iter()
        .map(&key)
        .max()
        .map_or(0, |m| m as usize + 1);
    let mut by_id = vec![CpuSet::new(); count];
    for (i, c) in topo.cpus.iter().enumerate() {
        by_id[key(c) as usize].set(i);
    }
    topo.cpus.iter().map(|c| by_id[key(c) as usize].clone()).collect()
}
