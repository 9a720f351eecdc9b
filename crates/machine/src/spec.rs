//! The TOML machine description (see `crates/machine/FORMAT.md`).
//!
//! Two shapes: a *regular* machine described by counts (sockets, nodes per socket, LLCs per
//! node, clusters per LLC, cores, threads), numbered the way x86 enumerates CPUs (all cores
//! first, then the second hardware thread of every core: CPU `N` and `N + nr_cores` are SMT
//! siblings); or an *explicit* list of `[[cpu]]` entries for irregular or recorded machines.
//! Every error is a [`MachineError::File`] naming the file, the line and the key.

use std::path::Path;

use crate::spec_check::Ctx;
use crate::spec_raw::RawSpec;
use crate::topology::LOCAL_DISTANCE;
use crate::{Arch, CpuInfo, DomainOptions, Machine, MachineError, Topology, MAX_CPUS};

/// Default distance between two nodes of one socket (AMD NPS2/4 and Intel SNC firmware report
/// 11-12; we take 12).
pub const DEFAULT_SIBLING_NODE_DISTANCE: u32 = 12;
/// Default distance between sockets: 21, what Intel 2- and 4-socket Xeon firmware reports in the
/// SLIT (`numactl -H`). AMD EPYC 2-socket systems report 32; the EPYC presets say so explicitly.
pub const DEFAULT_SOCKET_DISTANCE: u32 = 21;

/// A parsed, validated machine description.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineSpec {
    pub name: String,
    pub description: String,
    pub arch: Arch,
    /// Cost profile name (wakesim-costs), e.g. "skx", "zen3", "altra", "generic".
    pub cost_profile: String,
    /// `node_reclaim_distance` (see [`DomainOptions`]).
    pub node_reclaim_distance: u32,
    /// `intel_idle.max_cstate=N` / `processor.max_cstate=N` (see [`Machine::max_cstate`]).
    pub max_cstate: Option<u32>,
    /// The box kernel's cpuidle governor (see [`Machine::cpuidle_governor`]); `None` = the default.
    pub cpuidle_governor: Option<crate::GovernorKind>,
    /// CONFIG_HZ of the box's kernel (see [`Machine::hz`]).
    pub hz: Option<u64>,
    pub shape: Shape,
    /// `node_distance` table, indexed by node id.
    pub numa_distance: Vec<Vec<u32>>,
}

/// How the CPUs are described.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Regular(RegularShape),
    /// One entry per CPU, CPU `i` = entry `i`.
    Explicit(Vec<CpuInfo>),
}

/// A machine made of identical sockets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegularShape {
    pub sockets: u32,
    pub nodes_per_socket: u32,
    pub llcs_per_node: u32,
    pub clusters_per_llc: u32,
    pub cores_per_cluster: u32,
    pub threads_per_core: u32,
    /// The LLC-sharing level is a cluster (CLS domain with SD_CLUSTER | SD_SHARE_LLC, no MC), as
    /// on Ampere Altra whose DSU pairs have no shared CPU-side cache.
    pub llc_is_cluster: bool,
}

impl RegularShape {
    pub fn nr_nodes(&self) -> u32 {
        self.sockets.saturating_mul(self.nodes_per_socket)
    }

    pub fn nr_cores(&self) -> u32 {
        self.nr_nodes()
            .saturating_mul(self.llcs_per_node)
            .saturating_mul(self.clusters_per_llc)
            .saturating_mul(self.cores_per_cluster)
    }

    pub fn nr_cpus(&self) -> u32 {
        self.nr_cores().saturating_mul(self.threads_per_core)
    }

    /// Every count at least 1, at most [`MAX_CPUS`] CPUs, `llc_is_cluster` only with one
    /// cluster per LLC. (Files are checked key by key when parsed; this guards shapes built in
    /// code.)
    pub fn validate(&self) -> Result<(), MachineError> {
        let counts = [
            ("sockets", self.sockets),
            ("nodes_per_socket", self.nodes_per_socket),
            ("llcs_per_node", self.llcs_per_node),
            ("clusters_per_llc", self.clusters_per_llc),
            ("cores_per_cluster", self.cores_per_cluster),
            ("threads_per_core", self.threads_per_core),
        ];
        if let Some((key, _)) = counts.iter().find(|(_, v)| *v == 0) {
            return Err(MachineError::Invalid(format!("'{key}' must be at least 1")));
        }
        if self.nr_cpus() as usize > MAX_CPUS {
            return Err(MachineError::Invalid(format!(
                "this shape has {} CPUs, more than the maximum {MAX_CPUS}",
                self.nr_cpus()
            )));
        }
        if self.llc_is_cluster && self.clusters_per_llc != 1 {
            return Err(MachineError::Invalid(
                "'clusters_per_llc' must be 1 when 'llc_is_cluster' is true".into(),
            ));
        }
        Ok(())
    }

    /// CPUs in x86 enumeration order: CPU `t * nr_cores + core` is thread `t` of `core`; cores
    /// are numbered socket by socket, node by node, LLC by LLC, cluster by cluster.
    /// Empty if the shape is invalid (see [`RegularShape::validate`]).
    pub fn cpus(&self) -> Vec<CpuInfo> {
        if self.validate().is_err() {
            return Vec::new();
        }
        let nr_cores = self.nr_cores();
        let clustered = self.clusters_per_llc > 1 || self.llc_is_cluster;
        (0..self.threads_per_core)
            .flat_map(|_| 0..nr_cores)
            .map(|core| {
                let cluster = core / self.cores_per_cluster;
                let llc = cluster / self.clusters_per_llc;
                let node = llc / self.llcs_per_node;
                CpuInfo {
                    core,
                    cluster: clustered.then_some(cluster),
                    llc,
                    package: node / self.nodes_per_socket,
                    node,
                }
            })
            .collect()
    }

    /// The default SLIT: 10 local, [`DEFAULT_SIBLING_NODE_DISTANCE`] within a socket,
    /// [`DEFAULT_SOCKET_DISTANCE`] (or the given values) between sockets.
    /// Empty if the shape is invalid.
    pub fn default_distance(&self, sibling: u32, socket: u32) -> Vec<Vec<u32>> {
        if self.validate().is_err() {
            return Vec::new();
        }
        let n = self.nr_nodes();
        let sock = |x: u32| x / self.nodes_per_socket;
        (0..n)
            .map(|a| {
                (0..n)
                    .map(|b| {
                        if a == b {
                            LOCAL_DISTANCE
                        } else if sock(a) == sock(b) {
                            sibling
                        } else {
                            socket
                        }
                    })
                    .collect()
            })
            .collect()
    }
}

impl MachineSpec {
    /// Parses and validates a machine file. `path` is only used in error messages (and as the
    /// default name: the file stem).
    pub fn parse(text: &str, path: &str) -> Result<MachineSpec, MachineError> {
        let ctx = Ctx { text, path };
        let raw: RawSpec = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| ctx.line_of(s.start));
            let mut msg = e.message().trim_end().to_string();
            // Quote the offending line so the message names the key.
            if let Some(src) = text
                .lines()
                .nth(line - 1)
                .map(str::trim)
                .filter(|l| !l.is_empty() && l.len() <= 100)
            {
                msg.push_str(&format!(" (in `{src}`)"));
            }
            ctx.err_line(line, msg)
        })?;
        ctx.check_raw(raw)
    }

    /// The topology this spec describes.
    pub fn topology(&self) -> Result<Topology, MachineError> {
        match &self.shape {
            Shape::Regular(r) => {
                r.validate()?;
                Topology::new(r.cpus(), self.numa_distance.clone())
            }
            Shape::Explicit(cpus) => Topology::new(cpus.clone(), self.numa_distance.clone()),
        }
    }

    /// Builds the machine (topology, domains, LLC pointers).
    pub fn build(&self) -> Result<Machine, MachineError> {
        let opts = DomainOptions {
            node_reclaim_distance: self.node_reclaim_distance,
        };
        let mut m = Machine::from_topology_with(
            &self.name,
            &self.description,
            self.arch,
            &self.cost_profile,
            self.topology()?,
            &opts,
        )?;
        m.max_cstate = self.max_cstate;
        m.cpuidle_governor = self.cpuidle_governor.unwrap_or(crate::DEFAULT_GOVERNOR);
        m.hz = self.hz;
        Ok(m)
    }
}

/// Parses a machine from TOML text; `path_for_errors` names it in error messages.
pub fn from_toml_str(text: &str, path_for_errors: &str) -> Result<Machine, MachineError> {
    let spec = MachineSpec::parse(text, path_for_errors)?;
    spec.build().map_err(|e| match e {
        MachineError::Invalid(msg) => MachineError::File {
            path: path_for_errors.to_string(),
            line: 1,
            msg,
        },
        other => other,
    })
}

/// Reads and parses a machine file.
pub fn load_file(path: &Path) -> Result<Machine, MachineError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| MachineError::File {
        path: shown.clone(),
        line: 0,
        msg: format!("cannot read machine file: {e}"),
    })?;
    from_toml_str(&text, &shown)
}
