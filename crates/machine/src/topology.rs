//! The physical layout: which CPU sits on which core, cluster, LLC, package and NUMA node.

use crate::CpuSet;

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
    /// Different LLCs in one package (e.g. two AMD CCXs).
    CrossLlc,
    /// Different packages (sockets) / NUMA nodes.
    CrossNode,
}

impl Dist {
    pub const ALL: [Dist; 6] = [Dist::Local, Dist::Smt, Dist::Cluster, Dist::Llc, Dist::CrossLlc, Dist::CrossNode];

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
}

