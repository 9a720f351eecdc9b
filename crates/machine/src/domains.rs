//! Sched domains: `build_sched_domains()` + `sd_init()` defaults + degenerate-level removal.

use crate::{CpuSet, Topology};
use std::sync::Arc;

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

    /// Names of the set flags, in the debugfs `flags` file order.
    pub fn names(self) -> Vec<&'static str> {
        Self::NAMES
            .iter()
            .filter(|(f, _)| self.has(*f))
            .map(|(_, n)| *n)
            .collect()
    }
}

/// Topology level a domain was built from (`sched_domain_topology_level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SdLevel {
    Smt,
    Cls,
    Mc,
    Pkg,
    /// NUMA level `n` (1 = first level spanning remote nodes). `Numa(0)` is the kernel's
    /// `NODE` level: it takes PKG's place when a package holds several nodes (x86 drops PKG
    /// when `x86_has_numa_in_package`, e.g. AMD NPS2/4 or Intel SNC).
    Numa(u8),
}

impl SdLevel {
    /// Our name: unique per level (`NUMA`, `NUMA1`, `NUMA2`, ... for successive NUMA levels).
    pub fn name(self) -> String {
        match self {
            SdLevel::Smt => "SMT".into(),
            SdLevel::Cls => "CLS".into(),
            SdLevel::Mc => "MC".into(),
            SdLevel::Pkg => "PKG".into(),
            SdLevel::Numa(0) => "NODE".into(),
            SdLevel::Numa(1) => "NUMA".into(),
            SdLevel::Numa(n) => format!("NUMA{}", n - 1),
        }
    }

    /// The name the kernel prints (`sd->name`, `SD_INIT_NAME`): every NUMA level is "NUMA".
    pub fn kernel_name(self) -> &'static str {
        match self {
            SdLevel::Smt => "SMT",
            SdLevel::Cls => "CLS",
            SdLevel::Mc => "MC",
            SdLevel::Pkg => "PKG",
            SdLevel::Numa(0) => "NODE",
            SdLevel::Numa(_) => "NUMA",
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
    /// Groups of this domain; `groups[0]` is the local group (contains the owning CPU), the rest
    /// follow in the kernel's circular-list order (`build_sched_groups()` walks the span with
    /// `for_each_cpu_wrap` from the owning CPU): ascending first CPU after the local group,
    /// wrapping around to the lower CPUs. Shared with the other domains listing the same group.
    pub groups: Vec<Arc<SchedGroup>>,
    /// `imb_numa_nr`, as `build_sched_domains()` sets it: 0 at and below the LLC, the allowed
    /// NUMA imbalance on the levels above it (fair.c reads it on SD_NUMA levels only).
    pub imb_numa_nr: u32,
}

impl SchedDomain {
    #[inline]
    pub fn has(&self, f: u32) -> bool {
        self.flags.has(f)
    }
}

/// Knobs of the domain build that are not topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DomainOptions {
    /// `node_reclaim_distance`: NUMA levels farther than this lose SD_BALANCE_EXEC/FORK and
    /// SD_WAKE_AFFINE in `sd_init()`. Default `RECLAIM_DISTANCE` = 30 (include/linux/topology.h);
    /// AMD Zen sets 32 (`init_amd_zn()`, arch/x86/kernel/cpu/amd.c, v5.4+), so that 2-socket EPYC
    /// (SLIT 32) keeps wake_affine across sockets.
    pub node_reclaim_distance: u32,
}

/// `RECLAIM_DISTANCE` (include/linux/topology.h).
pub const RECLAIM_DISTANCE: u32 = 30;
/// `node_reclaim_distance` on AMD family 17h+ (`init_amd_zn()`).
pub const RECLAIM_DISTANCE_AMD_ZEN: u32 = 32;

impl Default for DomainOptions {
    fn default() -> Self {
        DomainOptions {
            node_reclaim_distance: RECLAIM_DISTANCE,
        }
    }
}

/// Builds `domains[cpu]` for every CPU of `topo` (bottom-up, degenerate levels removed), with
/// default [`DomainOptions`].
pub fn build_domains(topo: &Topology) -> Vec<Vec<SchedDomain>> {
    build_domains_with(topo, &DomainOptions::default())
}

/// `build_sched_domains()` followed by `cpu_attach_domain()` for every CPU:
/// 1. per CPU, one domain per topology level (`levels.rs`) initialised by `sd_init()`,
///    stopping at the first level that spans every CPU;
/// 2. `imb_numa_nr` on that full chain (as the kernel does, before degeneration);
/// 3. degenerate levels removed (`sd_degenerate()` / `sd_parent_degenerate()`);
/// 4. groups (`build_sched_groups()` / `build_overlap_sched_groups()`) from the *pre-degenerate*
///    child spans, which is what the kernel's groups are built from.
///
/// `topo` must satisfy [`Topology::validate`] (as every `Topology` from `Topology::new` does).
pub fn build_domains_with(topo: &Topology, opts: &DomainOptions) -> Vec<Vec<SchedDomain>> {
    let n = topo.cpus.len();
    let levels = crate::levels::topology_levels(topo);
    let all = CpuSet::range(0, n);
    // top[cpu]: index of the last level built for cpu (its span is all CPUs).
    let top: Vec<usize> = (0..n)
        .map(|cpu| {
            levels
                .iter()
                .position(|tl| tl.spans[cpu] == all)
                .unwrap_or(levels.len() - 1)
        })
        .collect();
    let mut groups = crate::groups::GroupBuilder::new(topo, &levels, &top);
    (0..n)
        .map(|cpu| {
            let mut chain: Vec<(usize, SchedDomain)> = (0..=top[cpu])
                .map(|t| (t, sd_init(&levels[t], cpu, opts)))
                .collect();
            crate::degenerate::set_imb_numa_nr(&mut chain);
            crate::degenerate::attach(&mut chain, &levels, cpu);
            chain
                .into_iter()
                .map(|(t, mut sd)| {
                    sd.groups = groups.build(t, cpu);
                    sd
                })
                .collect()
        })
        .collect()
}

/// `sd_init()` (kernel/sched/topology.c, v6.6-v6.12): the per-level defaults.
///
/// * intervals: `min_interval = span_weight`, `max_interval = 2 * span_weight` (ms);
/// * `busy_factor = 16`, `imbalance_pct = 117`, `cache_nice_tries = 0`;
/// * flags: BALANCE_NEWIDLE | BALANCE_EXEC | BALANCE_FORK | WAKE_AFFINE | PREFER_SIBLING plus the
///   level's topology flags;
/// * SD_SHARE_CPUCAPACITY (SMT): `imbalance_pct = 110`;
/// * else SD_SHARE_LLC (CLS, MC): `imbalance_pct = 117`, `cache_nice_tries = 1`;
/// * else SD_NUMA: `cache_nice_tries = 2`, drop PREFER_SIBLING, add SERIALIZE, and beyond
///   `node_reclaim_distance` drop BALANCE_EXEC, BALANCE_FORK and WAKE_AFFINE;
/// * else (PKG, NODE): `cache_nice_tries = 1`.
///
/// SD_OVERLAP is added for NUMA levels (`SDTL_OVERLAP` in `build_sched_domains()`).
/// Asymmetric CPU capacity (SD_ASYM_CPUCAPACITY) is not modelled.
pub(crate) fn sd_init(
    tl: &crate::levels::TopologyLevel,
    cpu: usize,
    opts: &DomainOptions,
) -> SchedDomain {
    use SdFlags as F;
    let span = tl.spans[cpu].clone();
    let w = span.weight() as u32;
    let mut flags = F::BALANCE_NEWIDLE
        | F::BALANCE_EXEC
        | F::BALANCE_FORK
        | F::WAKE_AFFINE
        | F::PREFER_SIBLING
        | tl.topo_flags;
    let mut imbalance_pct = SD_IMBALANCE_PCT;
    let mut cache_nice_tries = 0;
    if flags & F::SHARE_CPUCAPACITY != 0 {
        imbalance_pct = SD_IMBALANCE_PCT_SMT;
    } else if flags & F::SHARE_LLC != 0 {
        imbalance_pct = SD_IMBALANCE_PCT;
        cache_nice_tries = 1;
    } else if flags & F::NUMA != 0 {
        cache_nice_tries = 2;
        flags &= !F::PREFER_SIBLING;
        flags |= F::SERIALIZE;
        if tl.numa_distance > opts.node_reclaim_distance {
            flags &= !(F::BALANCE_EXEC | F::BALANCE_FORK | F::WAKE_AFFINE);
        }
    } else {
        cache_nice_tries = 1;
    }
    if tl.overlap {
        flags |= F::OVERLAP;
    }
    SchedDomain {
        level: tl.level,
        span,
        span_weight: w,
        flags: SdFlags(flags),
        imbalance_pct,
        busy_factor: SD_BUSY_FACTOR,
        cache_nice_tries,
        min_interval_ms: w,
        max_interval_ms: 2 * w,
        groups: Vec::new(),
        imb_numa_nr: 0,
    }
}

/// `sd_init()`: `.imbalance_pct = 117` (v5.10+; 125 before).
pub const SD_IMBALANCE_PCT: u32 = 117;
/// `sd_init()`: SD_SHARE_CPUCAPACITY levels get `imbalance_pct = 110`.
pub const SD_IMBALANCE_PCT_SMT: u32 = 110;
/// `sd_init()`: `.busy_factor = 16` (v5.10+; 32 before).
pub const SD_BUSY_FACTOR: u32 = 16;
