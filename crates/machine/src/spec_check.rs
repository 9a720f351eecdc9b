//! Validation of a parsed machine file, key by key, with errors that point at the line.

use std::path::Path;

use toml::Spanned;

use crate::kconfig::HZ_CHOICES;
use crate::spec::{
    MachineSpec, RegularShape, Shape, DEFAULT_SIBLING_NODE_DISTANCE, DEFAULT_SOCKET_DISTANCE,
};
use crate::spec_raw::{RawCpu, RawSpec};
use crate::topology::{TopoError, LOCAL_DISTANCE, MAX_DISTANCE};
use crate::{Arch, CpuInfo, MachineError, Topology, MAX_CPUS, RECLAIM_DISTANCE};

/// Error context: the file's text (for line numbers) and its name.
pub(crate) struct Ctx<'a> {
    pub text: &'a str,
    pub path: &'a str,
}

impl Ctx<'_> {
    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    pub fn err_line(&self, line: usize, msg: String) -> MachineError {
        MachineError::File {
            path: self.path.to_string(),
            line,
            msg,
        }
    }

    fn err<T>(&self, at: &Spanned<T>, msg: String) -> MachineError {
        self.err_line(self.line_of(at.span().start), msg)
    }

    /// A positive count: zero is rejected naming the key.
    fn count(
        &self,
        v: &Option<Spanned<u32>>,
        key: &str,
        default: u32,
    ) -> Result<u32, MachineError> {
        match v {
            None => Ok(default),
            Some(s) if *s.get_ref() == 0 => Err(self.err(s, format!("'{key}' must be at least 1"))),
            Some(s) => Ok(*s.get_ref()),
        }
    }

    pub fn check_raw(&self, raw: RawSpec) -> Result<MachineSpec, MachineError> {
        let name = match &raw.name {
            Some(n) if n.get_ref().trim().is_empty() => {
                return Err(self.err(n, "'name' must not be empty".into()))
            }
            Some(n) => n.get_ref().clone(),
            None => Path::new(self.path)
                .file_stem()
                .map_or("machine".into(), |s| s.to_string_lossy().into_owned()),
        };
        let arch = match &raw.arch {
            None => Arch::X86,
            Some(a) => match a.get_ref().as_str() {
                "x86" | "x86_64" => Arch::X86,
                "arm64" | "aarch64" => Arch::Arm64,
                other => {
                    return Err(self.err(
                        a,
                        format!("unknown arch '{other}' (expected \"x86\" or \"arm64\")"),
                    ))
                }
            },
        };
        let cost_profile = match &raw.cost_profile {
            Some(c) if c.get_ref().trim().is_empty() => {
                return Err(self.err(c, "'cost_profile' must not be empty".into()))
            }
            Some(c) => c.get_ref().clone(),
            None => "generic".into(),
        };
        let cpuidle_governor = match &raw.cpuidle_governor {
            Some(g) => Some(
                g.get_ref()
                    .parse::<crate::GovernorKind>()
                    .map_err(|e| self.err(g, format!("'cpuidle_governor': {e}")))?,
            ),
            None => None,
        };
        let node_reclaim_distance = match &raw.node_reclaim_distance {
            Some(d) if *d.get_ref() < LOCAL_DISTANCE => {
                return Err(self.err(
                    d,
                    format!("'node_reclaim_distance' must be at least {LOCAL_DISTANCE}"),
                ))
            }
            Some(d) => *d.get_ref(),
            None => RECLAIM_DISTANCE,
        };
        if let Some(h) = raw
            .hz
            .as_ref()
            .filter(|h| !HZ_CHOICES.contains(h.get_ref()))
        {
            return Err(self.err(
                h,
                format!(
                    "'hz' must be one of {HZ_CHOICES:?} (CONFIG_HZ's choices), not {}",
                    h.get_ref()
                ),
            ));
        }
        let scalar = raw
            .socket_distance
            .as_ref()
            .or(raw.sibling_node_distance.as_ref());
        if let (Some(_), Some(s)) = (&raw.numa_distance, scalar) {
            return Err(self.err(s, "give either 'numa_distance' or 'socket_distance'/'sibling_node_distance', not both".into()));
        }
        let (shape, numa_distance) = match &raw.cpu {
            Some(entries) => self.explicit(&raw, entries)?,
            None => self.regular(&raw)?,
        };
        let spec = MachineSpec {
            name,
            description: raw
                .description
                .clone()
                .unwrap_or_else(|| format!("machine file {}", self.path)),
            arch,
            cost_profile,
            node_reclaim_distance,
            max_cstate: raw.max_cstate.as_ref().map(|v| *v.get_ref()),
            cpuidle_governor,
            hz: raw.hz.as_ref().map(|v| *v.get_ref()),
            shape,
            numa_distance,
        };
        // Build the topology now so that nesting and distance errors point into the file.
        let topo = match &spec.shape {
            Shape::Regular(r) => Topology::new_located(r.cpus(), spec.numa_distance.clone()),
            Shape::Explicit(c) => Topology::new_located(c.clone(), spec.numa_distance.clone()),
        };
        if let Err(e) = topo {
            return Err(self.topo_error(&raw, e));
        }
        Ok(spec)
    }

    fn topo_error(&self, raw: &RawSpec, e: TopoError) -> MachineError {
        let line = match (e.cpu, e.distance, &raw.cpu, &raw.numa_distance) {
            (Some(i), _, Some(entries), _) if i < entries.len() => {
                self.line_of(entries[i].span().start)
            }
            (_, true, _, Some(d)) => self.line_of(d.span().start),
            _ => 1,
        };
        self.err_line(line, e.msg)
    }

    fn regular(&self, raw: &RawSpec) -> Result<(Shape, Vec<Vec<u32>>), MachineError> {
        let sockets = match &raw.sockets {
            Some(_) => self.count(&raw.sockets, "sockets", 1)?,
            None => {
                return Err(self.err_line(
                    1,
                    "missing key 'sockets' (or describe every CPU with [[cpu]] entries)".into(),
                ))
            }
        };
        let nodes_per_socket = self.count(&raw.nodes_per_socket, "nodes_per_socket", 1)?;
        let llcs_per_node = self.count(&raw.llcs_per_node, "llcs_per_node", 1)?;
        let clusters_per_llc = self.count(&raw.clusters_per_llc, "clusters_per_llc", 1)?;
        let threads_per_core = self.count(&raw.threads_per_core, "threads_per_core", 1)?;
        let llc_is_cluster = raw.llc_is_cluster.as_ref().is_some_and(|b| *b.get_ref());
        if let (true, Some(c)) = (llc_is_cluster, &raw.clusters_per_llc) {
            if *c.get_ref() != 1 {
                return Err(self.err(
                    c,
                    "'clusters_per_llc' must be 1 when 'llc_is_cluster' is true".into(),
                ));
            }
        }
        let cores_per_cluster = match (&raw.cores_per_cluster, &raw.cores_per_llc) {
            (Some(_), Some(l)) => {
                return Err(self.err(
                    l,
                    "give either 'cores_per_cluster' or 'cores_per_llc', not both".into(),
                ))
            }
            (Some(_), None) => self.count(&raw.cores_per_cluster, "cores_per_cluster", 1)?,
            (None, Some(l)) => {
                let per_llc = self.count(&raw.cores_per_llc, "cores_per_llc", 1)?;
                if per_llc % clusters_per_llc != 0 {
                    return Err(self.err(
                        l,
                        format!("'cores_per_llc' ({per_llc}) must be a multiple of 'clusters_per_llc' ({clusters_per_llc})"),
                    ));
                }
                per_llc / clusters_per_llc
            }
            (None, None) => {
                return Err(self.err_line(
                    1,
                    "missing key 'cores_per_llc' (or 'cores_per_cluster')".into(),
                ))
            }
        };
        let total = [
            sockets,
            nodes_per_socket,
            llcs_per_node,
            clusters_per_llc,
            cores_per_cluster,
            threads_per_core,
        ]
        .iter()
        .fold(1u64, |acc, &x| acc.saturating_mul(x as u64));
        if total > MAX_CPUS as u64 {
            let at = raw
                .sockets
                .as_ref()
                .map_or(1, |s| self.line_of(s.span().start));
            return Err(self.err_line(
                at,
                format!("this shape has {total} CPUs, more than the maximum {MAX_CPUS}"),
            ));
        }
        let shape = RegularShape {
            sockets,
            nodes_per_socket,
            llcs_per_node,
            clusters_per_llc,
            cores_per_cluster,
            threads_per_core,
            llc_is_cluster,
        };
        let dist = match &raw.numa_distance {
            Some(d) => {
                let n = shape.nr_nodes() as usize;
                if d.get_ref().len() != n {
                    return Err(self.err(
                        d,
                        format!("'numa_distance' has {} rows but the machine has {n} nodes (sockets x nodes_per_socket)", d.get_ref().len()),
                    ));
                }
                d.get_ref().clone()
            }
            None => {
                let sib = self.distance_key(
                    &raw.sibling_node_distance,
                    "sibling_node_distance",
                    DEFAULT_SIBLING_NODE_DISTANCE,
                )?;
                let sock = self.distance_key(
                    &raw.socket_distance,
                    "socket_distance",
                    DEFAULT_SOCKET_DISTANCE,
                )?;
                shape.default_distance(sib, sock)
            }
        };
        Ok((Shape::Regular(shape), dist))
    }

    fn distance_key(
        &self,
        v: &Option<Spanned<u32>>,
        key: &str,
        default: u32,
    ) -> Result<u32, MachineError> {
        match v {
            None => Ok(default),
            Some(s) if !(LOCAL_DISTANCE + 1..MAX_DISTANCE).contains(s.get_ref()) => Err(self.err(
                s,
                format!(
                    "'{key}' must be in {}..{}",
                    LOCAL_DISTANCE + 1,
                    MAX_DISTANCE
                ),
            )),
            Some(s) => Ok(*s.get_ref()),
        }
    }

    fn explicit(
        &self,
        raw: &RawSpec,
        entries: &[Spanned<RawCpu>],
    ) -> Result<(Shape, Vec<Vec<u32>>), MachineError> {
        for (key, present) in [
            ("sockets", raw.sockets.as_ref().map(|s| s.span())),
            (
                "nodes_per_socket",
                raw.nodes_per_socket.as_ref().map(|s| s.span()),
            ),
            (
                "llcs_per_node",
                raw.llcs_per_node.as_ref().map(|s| s.span()),
            ),
            (
                "clusters_per_llc",
                raw.clusters_per_llc.as_ref().map(|s| s.span()),
            ),
            (
                "cores_per_cluster",
                raw.cores_per_cluster.as_ref().map(|s| s.span()),
            ),
            (
                "cores_per_llc",
                raw.cores_per_llc.as_ref().map(|s| s.span()),
            ),
            (
                "threads_per_core",
                raw.threads_per_core.as_ref().map(|s| s.span()),
            ),
            (
                "llc_is_cluster",
                raw.llc_is_cluster.as_ref().map(|s| s.span()),
            ),
        ] {
            if let Some(span) = present {
                return Err(self.err_line(
                    self.line_of(span.start),
                    format!("'{key}' describes a regular machine and cannot be combined with [[cpu]] entries"),
                ));
            }
        }
        if entries.is_empty() {
            return Err(self.err_line(1, "machine has no CPUs".into()));
        }
        if entries.len() > MAX_CPUS {
            return Err(self.err(
                &entries[MAX_CPUS],
                format!("more than the maximum {MAX_CPUS} CPUs"),
            ));
        }
        let mut cpus = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            let c = e.get_ref();
            if let Some(id) = c.id {
                if id as usize != i {
                    return Err(self.err(e, format!("[[cpu]] entry {i} has id = {id}; entries must be listed in CPU order 0, 1, 2, ...")));
                }
            }
            cpus.push(CpuInfo {
                core: c.core,
                cluster: c.cluster,
                llc: c.llc,
                package: c.package,
                node: c.node.unwrap_or(c.package),
            });
        }
        let max_node = cpus.iter().map(|c| c.node).max().unwrap_or(0) as usize;
        let dist = match &raw.numa_distance {
            Some(d) => {
                if d.get_ref().len() <= max_node {
                    return Err(self.err(
                        d,
                        format!(
                            "'numa_distance' has {} rows but node {max_node} is used",
                            d.get_ref().len()
                        ),
                    ));
                }
                d.get_ref().clone()
            }
            None => {
                let sib = self.distance_key(
                    &raw.sibling_node_distance,
                    "sibling_node_distance",
                    DEFAULT_SIBLING_NODE_DISTANCE,
                )?;
                let sock = self.distance_key(
                    &raw.socket_distance,
                    "socket_distance",
                    DEFAULT_SOCKET_DISTANCE,
                )?;
                let pkg_of = |node: usize| {
                    cpus.iter()
                        .find(|c| c.node as usize == node)
                        .map(|c| c.package)
                };
                (0..=max_node)
                    .map(|a| {
                        (0..=max_node)
                            .map(|b| match (a == b, pkg_of(a), pkg_of(b)) {
                                (true, _, _) => LOCAL_DISTANCE,
                                (false, Some(x), Some(y)) if x == y => sib,
                                _ => sock,
                            })
                            .collect()
                    })
                    .collect()
            }
        };
        Ok((Shape::Explicit(cpus), dist))
    }
}
