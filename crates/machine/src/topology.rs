//! The physical layout: which CPU sits on which core, cluster, LLC, package and NUMA node.
//!
//! Invariants (established by [`Topology::new`], checked by [`Topology::validate`]):
//! * CPUs are numbered `0..n` (`n <= MAX_CPUS`);
//! * core, cluster, LLC, package and node ids are dense (`0..count`), numbered in order of their
//!   lowest CPU;
//! * the hierarchy nests: a core lies in one cluster, a cluster in one LLC, an LLC in one
//!   package and one node (as the kernel's `topology_sane()` / `match_llc()` insist; with SNC the
//!   LLC is split per node);
//! * `node_distance` is an `nodes x nodes` ACPI SLIT table: 10 on the diagonal, > 10 elsewhere,
//!   symmetric, every entry < 256 (`sched_init_numa()` rejects `>= 1 << DISTANCE_BITS`).

use crate::{CpuSet, MachineError, MAX_CPUS};

/// `LOCAL_DISTANCE` (include/linux/topology.h).
pub const LOCAL_DISTANCE: u32 = 10;
/// `1 << DISTANCE_BITS` (include/linux/numa.h): distances must be below this.
pub const MAX_DISTANCE: u32 = 256;

/// One hardware thread (a Linux "CPU").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuInfo {
    /// Global core number (unique across the machine).
    pub core: u32,
    /// Global cluster number (cores sharing L2 / a DSU), `None` if the machine has no
    /// cluster level.
    pub cluster: Option<u32>,
    /// Global LLC number.
    pub llc: u32,
    pub package: u32,
    pub node: u32,
}

/// Distance classes that costs depend on (cache-line transfers, IPI delivery, migration).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dist {
    /// The same CPU.
    Local,
    /// SMT siblings of one core.
    Smt,
    /// Different cores in one cluster (e.g. an Altra DSU pair, a Kunpeng cluster).
    Cluster,
    /// Different cores (clusters) sharing one LLC.
    Llc,
    /// Different LLCs in one package and NUMA node (e.g. two AMD CCXs).
    CrossLlc,
    /// Different packages (sockets) or different NUMA nodes (also two nodes of one package,
    /// as with AMD NPS2/4 or Intel SNC: the line crosses the memory-controller fabric).
    CrossNode,
}

impl Dist {
    pub const ALL: [Dist; 6] = [
        Dist::Local,
        Dist::Smt,
        Dist::Cluster,
        Dist::Llc,
        Dist::CrossLlc,
        Dist::CrossNode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Dist::Local => "local",
            Dist::Smt => "smt",
            Dist::Cluster => "cluster",
            Dist::Llc => "llc",
            Dist::CrossLlc => "cross_llc",
            Dist::CrossNode => "cross_node",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

#[derive(Clone, Debug)]
pub struct Topology {
    pub cpus: Vec<CpuInfo>,
    /// SMT siblings of each CPU, including itself (`cpu_smt_mask`).
    pub smt_mask: Vec<CpuSet>,
    /// NUMA distance table (`node_distance`), `[node][node]`, local = 10.
    pub node_distance: Vec<Vec<u32>>,
    /// Number of hardware threads per core on this machine (1 = no SMT).
    pub threads_per_core: u32,
}

impl Topology {
    /// Builds a topology from per-CPU ids and a node distance table.
    ///
    /// Ids may be any labels: they are renumbered densely in order of their lowest CPU. Nodes
    /// without CPUs are dropped from the distance table (the kernel ignores them too:
    /// `sched_init_numa()` only walks `N_CPU` nodes). `smt_mask` and `threads_per_core` are
    /// derived from the core ids. Errors name the offending CPU.
    pub fn new(cpus: Vec<CpuInfo>, node_distance: Vec<Vec<u32>>) -> Result<Topology, MachineError> {
        Self::new_located(cpus, node_distance).map_err(|e| MachineError::Invalid(e.msg))
    }

    /// [`Topology::new`] with errors that remember which CPU they are about (for file errors).
    pub(crate) fn new_located(
        cpus: Vec<CpuInfo>,
        node_distance: Vec<Vec<u32>>,
    ) -> Result<Topology, TopoError> {
        let n = cpus.len();
        check_cpu_count(n).map_err(TopoError::global)?;
        check_distance_shape(&node_distance).map_err(TopoError::distance)?;
        for (i, c) in cpus.iter().enumerate() {
            if c.node as usize >= node_distance.len() {
                return Err(TopoError::cpu(
                    i,
                    format!(
                        "cpu {i}: node {} has no row in the {}-node distance table",
                        c.node,
                        node_distance.len()
                    ),
                ));
            }
        }
        let has_cluster = cpus[0].cluster.is_some();
        if let Some(i) = cpus.iter().position(|c| c.cluster.is_some() != has_cluster) {
            return Err(TopoError::cpu(
                i,
                format!("cpu {i}: either every CPU has a cluster id or none has"),
            ));
        }
        // Keep the distance rows/columns of nodes that have CPUs, in node order.
        let mut used_nodes: Vec<u32> = cpus.iter().map(|c| c.node).collect();
        used_nodes.sort_unstable();
        used_nodes.dedup();
        let dist: Vec<Vec<u32>> = used_nodes
            .iter()
            .map(|&a| {
                used_nodes
                    .iter()
                    .map(|&b| node_distance[a as usize][b as usize])
                    .collect()
            })
            .collect();
        let node_of = |old: u32| used_nodes.binary_search(&old).unwrap_or(0) as u32;

        let mut core = Renumber::default();
        let mut cluster = Renumber::default();
        let mut llc = Renumber::default();
        let mut package = Renumber::default();
        let cpus: Vec<CpuInfo> = cpus
            .iter()
            .map(|c| CpuInfo {
                core: core.id(c.core),
                cluster: c.cluster.map(|k| cluster.id(k)),
                llc: llc.id(c.llc),
                package: package.id(c.package),
                node: node_of(c.node),
            })
            .collect();
        let (smt_mask, threads_per_core) = smt_masks(&cpus);
        let topo = Topology {
            cpus,
            smt_mask,
            node_distance: dist,
            threads_per_core,
        };
        topo.check_nesting()?;
        topo.validate().map_err(TopoError::global)?;
        Ok(topo)
    }

    /// Checks every invariant listed in the module documentation.
    pub fn validate(&self) -> Result<(), MachineError> {
        let n = self.cpus.len();
        check_cpu_count(n)?;
        check_distance_shape(&self.node_distance)?;
        if self.smt_mask.len() != n {
            return Err(MachineError::Invalid(format!(
                "smt_mask has {} entries for {n} CPUs",
                self.smt_mask.len()
            )));
        }
        let nodes = self.node_distance.len();
        if let Some(i) = self.cpus.iter().position(|c| c.node as usize >= nodes) {
            return Err(MachineError::Invalid(format!(
                "cpu {i}: node {} outside the distance table",
                self.cpus[i].node
            )));
        }
        for (what, ids) in [
            ("core", self.cpus.iter().map(|c| c.core).collect::<Vec<_>>()),
            ("llc", self.cpus.iter().map(|c| c.llc).collect()),
            ("package", self.cpus.iter().map(|c| c.package).collect()),
            ("node", self.cpus.iter().map(|c| c.node).collect()),
        ] {
            check_dense(what, &ids)?;
        }
        if self.cpus.iter().any(|c| c.cluster.is_some()) {
            let ids: Option<Vec<u32>> = self.cpus.iter().map(|c| c.cluster).collect();
            match ids {
                Some(ids) => check_dense("cluster", &ids)?,
                None => {
                    return Err(MachineError::Invalid(
                        "either every CPU has a cluster id or none has".into(),
                    ))
                }
            }
        }
        self.check_nesting()
            .map_err(|e| MachineError::Invalid(e.msg))?;
        let (want, _) = smt_masks(&self.cpus);
        for (i, (m, want)) in self.smt_mask.iter().zip(&want).enumerate() {
            if m != want {
                return Err(MachineError::Invalid(format!(
                    "cpu {i}: smt_mask does not match the core ids"
                )));
            }
        }
        Ok(())
    }

    /// Same core => same cluster/LLC/package/node; same cluster => same LLC; same LLC => same
    /// package and node.
    fn check_nesting(&self) -> Result<(), TopoError> {
        let n = self.cpus.len();
        let mut core_owner: Vec<Option<usize>> = vec![None; n];
        let mut cluster_owner: Vec<Option<usize>> = vec![None; n];
        let mut llc_owner: Vec<Option<usize>> = vec![None; n];
        for (i, c) in self.cpus.iter().enumerate() {
            if let Some(j) = first_of(&mut core_owner, c.core, i) {
                let o = &self.cpus[j];
                if o.cluster != c.cluster
                    || o.llc != c.llc
                    || o.package != c.package
                    || o.node != c.node
                {
                    return Err(nest_err(i, j, "core", "cluster/llc/package/node"));
                }
            }
            if let Some(k) = c.cluster {
                if let Some(j) = first_of(&mut cluster_owner, k, i) {
                    if self.cpus[j].llc != c.llc {
                        return Err(nest_err(i, j, "cluster", "llc"));
                    }
                }
            }
            if let Some(j) = first_of(&mut llc_owner, c.llc, i) {
                let o = &self.cpus[j];
                if o.package != c.package || o.node != c.node {
                    return Err(nest_err(i, j, "llc", "package/node"));
                }
            }
        }
        Ok(())
    }

    #[inline]
    pub fn dist(&self, a: usize, b: usize) -> Dist {
        let (x, y) = (&self.cpus[a], &self.cpus[b]);
        if a == b {
            Dist::Local
        } else if x.core == y.core {
            Dist::Smt
        } else if x.cluster.is_some() && x.cluster == y.cluster {
            Dist::Cluster
        } else if x.llc == y.llc {
            Dist::Llc
        } else if x.package == y.package && x.node == y.node {
            Dist::CrossLlc
        } else {
            Dist::CrossNode
        }
    }

    pub fn smt_active(&self) -> bool {
        self.threads_per_core > 1
    }

    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    pub fn nr_cores(&self) -> usize {
        count_ids(self.cpus.iter().map(|c| c.core))
    }

    /// Number of clusters (0 if the machine has no cluster level).
    pub fn nr_clusters(&self) -> usize {
        count_ids(self.cpus.iter().filter_map(|c| c.cluster))
    }

    pub fn nr_llcs(&self) -> usize {
        count_ids(self.cpus.iter().map(|c| c.llc))
    }

    pub fn nr_packages(&self) -> usize {
        count_ids(self.cpus.iter().map(|c| c.package))
    }

    pub fn nr_nodes(&self) -> usize {
        count_ids(self.cpus.iter().map(|c| c.node))
    }

    pub fn has_clusters(&self) -> bool {
        self.cpus.first().is_some_and(|c| c.cluster.is_some())
    }

    /// CPUs whose info satisfies `pred` (e.g. `|c| c.llc == 3`).
    pub fn cpus_where(&self, pred: impl Fn(&CpuInfo) -> bool) -> CpuSet {
        CpuSet::from_cpus(
            self.cpus
                .iter()
                .enumerate()
                .filter(|(_, c)| pred(c))
                .map(|(i, _)| i),
        )
    }

    /// `cpumask_of_node(node)`.
    pub fn node_cpus(&self, node: u32) -> CpuSet {
        self.cpus_where(|c| c.node == node)
    }

    /// `node_distance(a, b)`.
    pub fn node_dist(&self, a: u32, b: u32) -> u32 {
        self.node_distance[a as usize][b as usize]
    }
}

/// Maps arbitrary labels to dense ids in order of first use.
#[derive(Default)]
struct Renumber(std::collections::HashMap<u32, u32>);

impl Renumber {
    fn id(&mut self, label: u32) -> u32 {
        let next = self.0.len() as u32;
        *self.0.entry(label).or_insert(next)
    }
}

fn smt_masks(cpus: &[CpuInfo]) -> (Vec<CpuSet>, u32) {
    let nr_cores = count_ids(cpus.iter().map(|c| c.core));
    let mut per_core = vec![CpuSet::new(); nr_cores];
    for (i, c) in cpus.iter().enumerate() {
        per_core[c.core as usize].set(i);
    }
    let threads = per_core.iter().map(|s| s.weight()).max().unwrap_or(1) as u32;
    (
        cpus.iter().map(|c| per_core[c.core as usize].clone()).collect(),
        threads,
    )
}

fn count_ids(it: impl Iterator<Item = u32>) -> usize {
    let mut v: Vec<u32> = it.collect();
    v.sort_unstable();
    v.dedup();
    v.len()
}

/// Records `cpu` as the first owner of `id` or returns the earlier owner.
fn first_of(owner: &mut [Option<usize>], id: u32, cpu: usize) -> Option<usize> {
    let slot = owner.get_mut(id as usize)?;
    match *slot {
        Some(j) => Some(j),
        None => {
            *slot = Some(cpu);
            None
        }
    }
}

fn nest_err(i: usize, j: usize, what: &str, differs: &str) -> TopoError {
    TopoError::cpu(
        i,
        format!("cpus {j} and {i} are in the same {what} but differ in {differs}: each {what} must lie inside one {differs}"),
    )
}

/// A topology error and what it is about: a CPU, the distance table, or the whole machine.
#[derive(Debug)]
pub(crate) struct TopoError {
    pub cpu: Option<usize>,
    pub distance: bool,
    pub msg: String,
}

impl TopoError {
    fn cpu(i: usize, msg: String) -> Self {
        TopoError {
            cpu: Some(i),
            distance: false,
            msg,
        }
    }
    fn global(e: MachineError) -> Self {
        TopoError {
            cpu: None,
            distance: false,
            msg: inner_msg(e),
        }
    }
    fn distance(e: MachineError) -> Self {
        TopoError {
            cpu: None,
            distance: true,
            msg: inner_msg(e),
        }
    }
}

fn inner_msg(e: MachineError) -> String {
    match e {
        MachineError::Invalid(m) => m,
        other => other.to_string(),
    }
}

fn check_cpu_count(n: usize) -> Result<(), MachineError> {
    if n == 0 {
        return Err(MachineError::Invalid("machine has no CPUs".into()));
    }
    if n > MAX_CPUS {
        return Err(MachineError::Invalid(format!(
            "machine has {n} CPUs, more than the maximum {MAX_CPUS}"
        )));
    }
    Ok(())
}

fn check_dense(what: &str, ids: &[u32]) -> Result<(), MachineError> {
    let count = count_ids(ids.iter().copied());
    if let Some(&bad) = ids.iter().find(|&&x| x as usize >= count) {
        return Err(MachineError::Invalid(format!(
            "{what} ids must be dense 0..{count} (found {what} {bad}); build with Topology::new to renumber"
        )));
    }
    Ok(())
}

/// Checks an ACPI SLIT-style table the way `slit_valid()` (drivers/acpi/numa/srat.c) and
/// `sched_init_numa()` do, and additionally requires symmetry.
pub(crate) fn check_distance_shape(d: &[Vec<u32>]) -> Result<(), MachineError> {
    if d.is_empty() {
        return Err(MachineError::Invalid("numa distance table is empty".into()));
    }
    let n = d.len();
    if let Some((i, row)) = d.iter().enumerate().find(|(_, r)| r.len() != n) {
        return Err(MachineError::Invalid(format!(
            "numa distance table must be {n}x{n}: row {i} has {} entries",
            row.len()
        )));
    }
    for (i, row) in d.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            if i == j && v != LOCAL_DISTANCE {
                return Err(MachineError::Invalid(format!(
                    "numa distance [{i}][{i}] is {v}; the local distance must be {LOCAL_DISTANCE}"
                )));
            }
            if i != j && (v <= LOCAL_DISTANCE || v >= MAX_DISTANCE) {
                return Err(MachineError::Invalid(format!(
                    "numa distance [{i}][{j}] is {v}; remote distances must be in {}..{}",
                    LOCAL_DISTANCE + 1,
                    MAX_DISTANCE
                )));
            }
            if d[j][i] != v {
                return Err(MachineError::Invalid(format!(
                    "numa distance table is not symmetric: [{i}][{j}] = {v} but [{j}][{i}] = {}",
                    d[j][i]
                )));
            }
        }
    }
    Ok(())
}
