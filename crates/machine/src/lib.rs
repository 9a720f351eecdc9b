//! # wakesim-machine: topologies and sched domains
//!
//! A [`Machine`] is what the kernel sees at boot: CPUs grouped into SMT cores, clusters, LLCs,
//! packages and NUMA nodes ([`Topology`]), and the sched-domain hierarchy that
//! `build_sched_domains()` derives from them with `sd_init()`'s per-level defaults
//! ([`SchedDomain`]), plus the per-CPU LLC pointers of `update_top_cache_domain()`.
//!
//! Machines come from presets (named after real parts), from `host` (this machine's
//! `/sys/devices/system/cpu`), or from a TOML file in the format documented in `FORMAT.md`.
//!
//! Entry points: [`lookup`] (what a user typed: `host`, a preset name or a file path),
//! [`preset`] / [`preset_names`], [`host`] / [`host_from_sysfs`], [`load_file`] /
//! [`from_toml_str`] / [`MachineSpec`], and [`Machine::from_topology`] for code that builds a
//! [`Topology`] itself. [`describe`] and [`list_line`] print machines for `wakesim machines`.
//!
//! Module map (each names the kernel code it models): `levels` (the topology tables and
//! `sched_init_numa()`), `domains` (`sd_init()`, `build_sched_domains()`), `groups`
//! (`build_sched_groups()`, `build_overlap_sched_groups()`), `degenerate` (`imb_numa_nr`,
//! `sd_degenerate()`, `cpu_attach_domain()`), `attach` (`update_top_cache_domain()`).
//!
//! The model keeps the *mutable* per-domain state (balance intervals, newidle cost, schedstats)
//! itself, in arrays indexed like [`Machine::domains`]; this crate is the immutable shape.

mod attach;
pub mod cpuset;
mod degenerate;
mod domains;
mod governor;
mod groups;
mod host;
pub mod kconfig;
mod levels;
pub mod noise;
mod presets;
mod print;
mod spec;
mod spec_check;
mod spec_raw;
mod topology;

pub use cpuset::{CpuSet, MAX_CPUS};
pub use domains::{
    build_domains, build_domains_with, DomainOptions, SchedDomain, SchedGroup, SdFlags, SdLevel,
    RECLAIM_DISTANCE, RECLAIM_DISTANCE_AMD_ZEN, SD_BUSY_FACTOR, SD_IMBALANCE_PCT,
    SD_IMBALANCE_PCT_SMT,
};
pub use governor::{running_governor, GovernorKind, DEFAULT_GOVERNOR};
pub use host::{host, host_from_sysfs};
pub use noise::{Arrival, NoiseIrq, NoiseProfile, NoiseTask};
pub use presets::{preset, preset_names, preset_toml};
pub use print::{describe, describe_all, describe_cpus, list_header, list_line, shape};
pub use spec::{
    from_toml_str, load_file, MachineSpec, RegularShape, Shape, DEFAULT_SIBLING_NODE_DISTANCE,
    DEFAULT_SOCKET_DISTANCE,
};
pub use topology::{CpuInfo, Dist, Topology, LOCAL_DISTANCE};

/// Resolves what a user typed as a machine: `host` (this machine, from sysfs), a preset name,
/// or the path of a TOML machine file (anything containing `/` or ending in `.toml`).
pub fn lookup(name: &str) -> Result<Machine, MachineError> {
    if name == "host" {
        host()
    } else if name.contains('/') || name.ends_with(".toml") {
        load_file(std::path::Path::new(name))
    } else {
        preset(name)
    }
}

/// Errors from building or loading a machine. Each names what is wrong and, for files, where.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    #[error("unknown machine '{0}' (known: {1})")]
    Unknown(String, String),
    #[error("{0}")]
    Invalid(String),
    #[error("{path}:{line}: {msg}")]
    File {
        path: String,
        line: usize,
        msg: String,
    },
    #[error("cannot read host topology: {0}")]
    Host(String),
}

/// The CPU architecture family: decides whether idle CPUs can be woken by a flag write
/// (x86 MWAIT/poll idle sets TIF_POLLING_NRFLAG) or always need an IPI (arm64 WFI).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    X86,
    Arm64,
}

/// A machine: topology plus its sched-domain hierarchy and cached per-CPU pointers.
#[derive(Clone, Debug)]
pub struct Machine {
    pub name: String,
    pub description: String,
    pub arch: Arch,
    /// Name of the default cost profile for this machine (see wakesim-costs).
    pub cost_profile: String,
    /// Deepest idle state the box enables (`intel_idle.max_cstate=N`: C-states counted from 1,
    /// the POLL state not counted); `None` = every state of the cost profile.
    pub max_cstate: Option<u32>,
    /// The cpuidle governor its kernel runs (`cpuidle_governor` in a machine file; `--machine
    /// host` reads `/sys/devices/system/cpu/cpuidle/current_governor_ro`).
    pub cpuidle_governor: GovernorKind,
    /// CONFIG_HZ of the box's kernel: the tick, and every interval kept in jiffies. `None` =
    /// the model's default, 1000 (`wakesim_model::tunables`).
    pub hz: Option<u64>,
    /// `sysctl_sched_base_slice` in ns when known from the running kernel (`--machine host`);
    /// `None` = the model's default for the CPU count.
    pub base_slice: Option<u64>,
    pub topo: Topology,
    /// `domains[cpu]`: the CPU's sched domains bottom-up (index 0 = lowest level), after
    /// degenerate levels were removed, as `cpu_attach_domain()` leaves them.
    pub domains: Vec<Vec<SchedDomain>>,
    /// `sd_llc`: index into `domains[cpu]` of the highest domain with SD_SHARE_LLC, if any.
    pub sd_llc: Vec<Option<u8>>,
    /// `sd_llc_size`: weight of that domain's span (1 if none).
    pub llc_size: Vec<u32>,
    /// `sd_llc_id`: first CPU of the LLC span (the CPU itself if none).
    pub llc_id: Vec<u32>,
    /// `sd_share_id`: first CPU of the lowest SD_CLUSTER domain, else the LLC id.
    pub share_id: Vec<u32>,
    /// The LLC span of each CPU (the CPU alone if it has no LLC domain).
    pub llc_span: Vec<CpuSet>,
}

impl Machine {
    pub fn nr_cpus(&self) -> usize {
        self.topo.cpus.len()
    }

    /// `cpus_share_cache(a, b)`.
    #[inline]
    pub fn share_cache(&self, a: usize, b: usize) -> bool {
        self.llc_id[a] == self.llc_id[b]
    }

    /// `cpus_share_resources(a, b)` (same cluster, or same LLC without clusters).
    #[inline]
    pub fn share_resources(&self, a: usize, b: usize) -> bool {
        self.share_id[a] == self.share_id[b]
    }

    /// Distance class between two CPUs, for costs.
    #[inline]
    pub fn dist(&self, a: usize, b: usize) -> Dist {
        self.topo.dist(a, b)
    }

    /// Index of the lowest domain level of `cpu` whose span contains `other`, if any.
    pub fn lowest_common_level(&self, cpu: usize, other: usize) -> Option<usize> {
        self.domains[cpu]
            .iter()
            .position(|sd| sd.span.contains(other))
    }
}
