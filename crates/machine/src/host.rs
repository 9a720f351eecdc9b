//! Reading this machine's topology from sysfs (`Documentation/ABI/stable/sysfs-devices-system-cpu`,
//! `Documentation/ABI/testing/sysfs-devices-system-cpu`, `.../stable/sysfs-devices-node`).
//!
//! What is read, under `<root>` (normally `/sys`):
//! * `devices/system/cpu/online`: the CPUs (offline CPUs are skipped and the rest renumbered
//!   densely; the description says so);
//! * `cpuN/topology/physical_package_id`, `core_cpus_list` (or the older
//!   `thread_siblings_list`), `cluster_cpus_list` (optional);
//! * `cpuN/cache/index*/{level,type,shared_cpu_list}`: the LLC is the highest-level Unified or
//!   Data cache (no cache information: the package);
//! * `devices/system/node/nodeN/{cpulist,distance}` (optional; default: one node).
//!
//! Like the kernel, the LLC is extended to the cluster when the cluster is larger (arm64
//! `cpu_coregroup_mask()`: "systems with no shared cpu-side LLC but with clusters defined"), and
//! an LLC is split per node (x86 `match_llc()` with SNC).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::{
    Arch, CpuInfo, CpuSet, DomainOptions, Machine, MachineError, Topology, RECLAIM_DISTANCE,
    RECLAIM_DISTANCE_AMD_ZEN,
};

/// This machine, from `/sys` (and `/proc/cpuinfo` for the model name and the AMD
/// `node_reclaim_distance`). Cost profile "host".
pub fn host() -> Result<Machine, MachineError> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model =
        cpuinfo_field(&cpuinfo, "model name").or_else(|| cpuinfo_field(&cpuinfo, "CPU part"));
    let amd_zen = cpuinfo_field(&cpuinfo, "vendor_id").is_some_and(|v| v == "AuthenticAMD")
        && cpuinfo_field(&cpuinfo, "cpu family")
            .and_then(|f| f.parse::<u32>().ok())
            .is_some_and(|f| f >= 0x17);
    let opts = DomainOptions {
        node_reclaim_distance: if amd_zen {
            RECLAIM_DISTANCE_AMD_ZEN
        } else {
            RECLAIM_DISTANCE
        },
    };
    let mut m = host_from_sysfs_with(Path::new("/sys"), &opts)?;
    m.hz = crate::kconfig::running_kernel_hz();
    m.base_slice = crate::kconfig::running_base_slice_ns();
    if let Some(model) = model {
        m.description = format!("{} ({model})", m.description);
    }
    // The running kernel's cpuidle governor; one the model lacks (`ladder`) is said and menu
    // stands in; unreadable (no cpuidle): the default.
    match crate::running_governor(Path::new("/sys")) {
        Some(Ok(g)) => m.cpuidle_governor = g,
        Some(Err(name)) => {
            m.cpuidle_governor = crate::GovernorKind::Menu;
            m.description = format!("{}; cpuidle governor '{name}' is not modelled, menu stands in", m.description);
        }
        None => {}
    }
    Ok(m)
}

/// The machine described by a sysfs tree rooted at `root` (e.g. `/sys`, or a fake tree in
/// tests). Name "host", cost profile "host", the architecture this program was built for.
pub fn host_from_sysfs(root: &Path) -> Result<Machine, MachineError> {
    host_from_sysfs_with(root, &DomainOptions::default())
}

fn host_from_sysfs_with(root: &Path, opts: &DomainOptions) -> Result<Machine, MachineError> {
    let cpu_dir = root.join("devices/system/cpu");
    let online = read_list(&cpu_dir.join("online"))?;
    let os_cpus: Vec<usize> = online.iter().collect();
    if os_cpus.is_empty() {
        return Err(MachineError::Host(format!(
            "{}: no CPUs online",
            cpu_dir.join("online").display()
        )));
    }
    let renumbered = os_cpus.iter().enumerate().any(|(i, &c)| i != c);
    let per_cpu: Vec<SysCpu> = os_cpus
        .iter()
        .map(|&c| read_cpu(&cpu_dir.join(format!("cpu{c}")), c, &online))
        .collect::<Result<_, _>>()?;
    let (node_of, dist) = read_nodes(&root.join("devices/system/node"), &online)?;

    let cpus = assemble(&os_cpus, &per_cpu, &node_of);
    let topo = Topology::new(cpus, dist).map_err(|e| MachineError::Host(e.to_string()))?;
    let mut description = format!("this machine, read from {}", root.display());
    if renumbered {
        description.push_str(&format!(
            "; online CPUs {} renumbered 0..{}",
            online.to_list_string(),
            os_cpus.len()
        ));
    }
    let arch = if cfg!(target_arch = "aarch64") {
        Arch::Arm64
    } else {
        Arch::X86
    };
    Machine::from_topology_with("host", description, arch, "host", topo, opts)
}

/// What sysfs says about one CPU (spans in OS CPU numbers, restricted to online CPUs).
struct SysCpu {
    package: u32,
    core: CpuSet,
    cluster: Option<CpuSet>,
    llc: Option<CpuSet>,
}

fn read_cpu(dir: &Path, cpu: usize, online: &CpuSet) -> Result<SysCpu, MachineError> {
    let topo = dir.join("topology");
    let package = match read_opt(&topo.join("physical_package_id"))? {
        // -1: unknown (some arm64 firmware); treat as package 0.
        Some(s) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| bad(&topo.join("physical_package_id"), &s))?
            .max(0) as u32,
        None => 0,
    };
    let core = match read_list_opt(&topo.join("core_cpus_list"))? {
        Some(s) => Some(s),
        None => read_list_opt(&topo.join("thread_siblings_list"))?,
    };
    let with_self = |s: CpuSet| {
        let mut s = s.and(online);
        s.set(cpu);
        s
    };
    let core = with_self(core.unwrap_or_else(|| CpuSet::from_cpus([cpu])));
    let cluster = read_list_opt(&topo.join("cluster_cpus_list"))?.map(with_self);
    let llc = read_llc(&dir.join("cache"))?.map(with_self);
    Ok(SysCpu {
        package,
        core,
        cluster,
        llc,
    })
}

/// The highest-level Unified or Data cache's `shared_cpu_list`.
fn read_llc(cache: &Path) -> Result<Option<CpuSet>, MachineError> {
    let Ok(entries) = std::fs::read_dir(cache) else {
        return Ok(None);
    };
    let mut best: Option<(u32, CpuSet)> = None;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("index"))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for d in dirs {
        let (Some(level), Some(kind)) = (read_opt(&d.join("level"))?, read_opt(&d.join("type"))?)
        else {
            continue;
        };
        if !matches!(kind.trim(), "Unified" | "Data") {
            continue;
        }
        let level: u32 = level
            .trim()
            .parse()
            .map_err(|_| bad(&d.join("level"), &level))?;
        let Some(shared) = read_list_opt(&d.join("shared_cpu_list"))? else {
            continue;
        };
        match &best {
            Some((l, _)) if *l >= level => {}
            _ => best = Some((level, shared)),
        }
    }
    Ok(best.map(|(_, s)| s))
}

/// Node index of each online CPU (by OS number) and the node distance table.
type NodeInfo = (HashMap<usize, u32>, Vec<Vec<u32>>);

/// Node of each online CPU (by OS number) and the distance table over node directories in id
/// order. Without `devices/system/node`: one node.
fn read_nodes(dir: &Path, online: &CpuSet) -> Result<NodeInfo, MachineError> {
    let mut ids: Vec<u32> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                e.file_name()
                    .to_string_lossy()
                    .strip_prefix("node")
                    .and_then(|n| n.parse().ok())
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    ids.sort_unstable();
    if ids.is_empty() {
        return Ok((HashMap::new(), vec![vec![crate::LOCAL_DISTANCE]]));
    }
    let mut node_of = HashMap::new();
    let mut dist = Vec::with_capacity(ids.len());
    for (idx, id) in ids.iter().enumerate() {
        let nd = dir.join(format!("node{id}"));
        if let Some(cpus) = read_list_opt(&nd.join("cpulist"))? {
            for c in cpus.and(online).iter() {
                node_of.entry(c).or_insert(idx as u32);
            }
        }
        let row = match read_opt(&nd.join("distance"))? {
            Some(s) => s
                .split_whitespace()
                .map(|t| t.parse::<u32>().map_err(|_| bad(&nd.join("distance"), &s)))
                .collect::<Result<Vec<u32>, _>>()?,
            None => (0..ids.len())
                .map(|j| {
                    if j == idx {
                        crate::LOCAL_DISTANCE
                    } else {
                        crate::spec::DEFAULT_SOCKET_DISTANCE
                    }
                })
                .collect(),
        };
        if row.len() != ids.len() {
            return Err(MachineError::Host(format!(
                "{}: {} distances for {} nodes",
                nd.join("distance").display(),
                row.len(),
                ids.len()
            )));
        }
        dist.push(row);
    }
    Ok((node_of, dist))
}

/// Turns per-CPU spans into nested global ids: LLC within (package, node), cluster within LLC,
/// core within cluster (or LLC).
fn assemble(os_cpus: &[usize], sys: &[SysCpu], node_of: &HashMap<usize, u32>) -> Vec<CpuInfo> {
    let pkg_span = |p: u32| {
        CpuSet::from_cpus(
            os_cpus
                .iter()
                .zip(sys)
                .filter(|(_, s)| s.package == p)
                .map(|(&c, _)| c),
        )
    };
    // Clusters matter only if some cluster is larger than its core (else CLS would degenerate
    // into SMT, as it does on Intel servers whose L2 is per core).
    let use_clusters = sys.iter().any(|s| {
        s.cluster
            .as_ref()
            .is_some_and(|k| *k != s.core && s.core.is_subset_of(k))
    });
    let mut labels: HashMap<(u8, usize, u32), u32> = HashMap::new();
    let mut label = |kind: u8, first: usize, parent: u32| {
        let next = labels.len() as u32;
        *labels.entry((kind, first, parent)).or_insert(next)
    };
    os_cpus
        .iter()
        .zip(sys)
        .map(|(&c, s)| {
            let node = node_of.get(&c).copied().unwrap_or(0);
            let mut llc = s.llc.clone().unwrap_or_else(|| pkg_span(s.package));
            let cluster = s.cluster.clone().filter(|_| use_clusters).unwrap_or_else(|| s.core.clone());
            if llc != cluster && llc.is_subset_of(&cluster) {
                llc = cluster.clone();
            }
            let pkg_node = label(0, s.package as usize, node);
            let llc_id = label(1, llc.first().unwrap_or(c), pkg_node);
            let cluster_id = use_clusters.then(|| label(2, cluster.first().unwrap_or(c), llc_id));
            let core = label(3, s.core.first().unwrap_or(c), cluster_id.unwrap_or(llc_id));
            CpuInfo {
                core,
                cluster: cluster_id,
                llc: llc_id,
                package: s.package,
                node,
            }
        })
        .collect()
}

fn read_opt(p: &Path) -> Result<Option<String>, MachineError> {
    match std::fs::read_to_string(p) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(MachineError::Host(format!(
            "cannot read {}: {e}",
            p.display()
        ))),
    }
}

fn read_list_opt(p: &Path) -> Result<Option<CpuSet>, MachineError> {
    match read_opt(p)? {
        Some(s) => CpuSet::parse_list(&s)
            .map(Some)
            .map_err(|e| MachineError::Host(format!("{}: {e}", p.display()))),
        None => Ok(None),
    }
}

fn read_list(p: &Path) -> Result<CpuSet, MachineError> {
    read_list_opt(p)?
        .ok_or_else(|| MachineError::Host(format!("cannot read {}: not found", p.display())))
}

fn bad(p: &Path, content: &str) -> MachineError {
    MachineError::Host(format!(
        "{}: unexpected content '{}'",
        p.display(),
        content.trim()
    ))
}

fn cpuinfo_field(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}
