//! Sched domains: `build_sched_domains()` + `sd_init()` defaults + degenerate-level removal.

use crate::{CpuSet, Topology};

/// `SD_*` flags (include/linux/sched/sd_flags.h), as a plain bitset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SdFlags(pub u32);

impl SdFlags {
    pub const BALANCE_NEWIDLE: u32 = 1 << 0;
    pub const BALANCE_EXEC: u32 = 1 << 1;
    pub const BALANCE_FORK: u32 = 1 << 2;
    pub const BALANCE_WAKE: u32 = 1 << 3;
    pub const WAKE_AFFINE: u32 = 1 << 4;
    pub const ASYM_CPUCAPACITY: u32 = 1 << 5;
    pub const ASYM_CPUCAPACITY_FULL: u32 = 1 << 6;
    pub const SHARE_CPUCAPACITY: u32 = 1 << 7;
    pub const CLUSTER: u32 = 1 << 8;
    pub const SHARE_LLC: u32 = 1 << 9;
    pub const SERIALIZE: u32 = 1 << 10;
    pub const ASYM_PACKING: u32 = 1 << 11;
    pub const PREFER_SIBLING: u32 = 1 << 12;
    pub const OVERLAP: u32 = 1 << 13;
    pub const NUMA: u32 = 1 << 14;

    /// Names in the order the kernel's debugfs `flags` file prints them.
    pub const NAMES: [(u32, &'static str); 15] = [
        (Self::BALANCE_NEWIDLE, "SD_BALANCE_NEWIDLE"),
        (Self::BALANCE_EXEC, "SD_BALANCE_EXEC"),
        (Self::BALANCE_FORK, "SD_BALANCE_FORK"),
        (Self::BALANCE_WAKE, "SD_BALANCE_WAKE"),
        (Self::WAKE_AFFINE, "SD_WAKE_AFFINE"),
        (Self::ASYM_CPUCAPACITY, "SD_ASYM_CPUCAPACITY"),
        (Self::ASYM_CPUCAPACITY_FULL, "SD_ASYM_CPUCAPACITY_FULL"),
        (Self::SHARE_CPUCAPACITY, "SD_SHARE_CPUCAPACITY"),
        (Self::CLUSTER, "SD_CLUSTER"),
        (Self::SHARE_LLC, "SD_SHARE_LLC"),
        (Self::SERIALIZE, "SD_SERIALIZE"),
        (Self::ASYM_PACKING, "SD_ASYM_PACKING"),
        (Self::PREFER_SIBLING, "SD_PREFER_SIBLING"),
        (Self::OVERLAP, "SD_OVERLAP"),
        (Self::NUMA, "SD_NUMA"),
    ];

    #[inline]
    pub fn has(self, f: u32) -> bool {
        self.0 & f != 0
    }
}

/// Topology level a domain was built from (`sched_domain_topology_level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SdLevel {
    Smt,
    Cls,
    Mc,
    Pkg,
    /// NUMA level `n` (1 = first level spanning remote nodes).
    Numa(u8),
}

impl SdLevel {
    pub fn name(self) -> String {
        match self {
            SdLevel::Smt => "SMT".into(),
            SdLevel::Cls => "CLS".into(),
            SdLevel::Mc => "MC".into(),
            SdLevel::Pkg => "PKG".into(),
            SdLevel::Numa(1) => "NUMA".into(),
            SdLevel::Numa(n) => format!("NUMA{}", n - 1),
        }
    }
}

/// One group of a domain: the span of a child domain (for the lowest level, a single CPU).
#[derive(Clone, Debug)]
pub struct SchedGroup {
    pub span: CpuSet,
    pub weight: u32,
    /// `group_balance_cpu()`: the first CPU of the group's balance mask.
    pub balance_cpu: u32,
    /// Number of cores in the group (`sg->cores`).
    pub cores: u32,
}

/// One sched domain of one CPU, with `sd_init()`'s defaults. Immutable shape only.
#[derive(Clone, Debug)]
pub struct SchedDomain {
    pub level: SdLevel,
    pub span: CpuSet,
    pub span_weight: u32,
    pub flags: SdFlags,
    pub imbalance_pct: u32,
    pub busy_factor: u32,
    pub cache_nice_tries: u32,
    /// Milliseconds, as `sd_init()` sets them (`min_interval = span_weight`, `max = 2*span_weight`).
    pub min_interval_ms: u32,
    pub max_interval_ms: u32,
    /// Groups of this domain; `groups[0]` is the local group (contains the owning CPU).
    pub groups: Vec<SchedGroup>,
    /// `imb_numa_nr` for NUMA levels (0 elsewhere).
    pub imb_numa_nr: u32,
}

impl SchedDomain {
    #[inline]
    pub fn has(&self, f: u32) -> bool {
        self.flags.has(f)
    }
}

/// Builds `domains[cpu]` for every CPU of `topo` (bottom-up, degenerate levels removed).
pub fn build_domains(topo: &Topology) -> Vec<Vec<SchedDomain>> {
    let _ = topo;
    unimplemented!("helper A builds this")
}
