//! Human-readable machine descriptions: `wakesim machines` (one line each) and
//! `wakesim machines show NAME` (header, CPU layout, distances, and the sched-domain hierarchy
//! as the kernel prints it at boot with `sched_verbose`: `sched_domain_debug_one()`, plus the
//! per-domain values of `/sys/kernel/debug/sched/domains/cpuN/domainM/`).

use std::collections::HashSet;
use std::fmt::Write;

use crate::{Arch, Machine, SchedDomain, SdLevel};

/// Groups shown per domain before the list is cut short.
const MAX_GROUPS_SHOWN: usize = 8;
/// LLCs listed per (package, node) before the list is cut short.
const MAX_LLCS_SHOWN: usize = 16;
/// CPUs whose hierarchy `describe` prints at most.
const MAX_CPUS_SHOWN: usize = 8;

/// Column header matching [`list_line`].
pub fn list_header() -> String {
    format!(
        "{:<14} {:>5}  {:<10} {:>4}  {:<22} {}",
        "NAME", "CPUS", "SHAPE", "LLC", "DOMAINS (CPU 0)", "COSTS"
    )
}

/// One line for `wakesim machines`: name, CPUs, shape (packages x cores per package x threads),
/// LLC size, domain levels of CPU 0, cost profile.
pub fn list_line(m: &Machine) -> String {
    format!(
        "{:<14} {:>5}  {:<10} {:>4}  {:<22} {}",
        m.name,
        m.nr_cpus(),
        shape(m),
        m.llc_size.first().copied().unwrap_or(1),
        m.level_names(0).join("-"),
        m.cost_profile
    )
}

/// Header, layout and the domain hierarchy of a few representative CPUs: CPU 0, the first CPU
/// of another LLC and of another package, and the first CPU of every other hierarchy shape.
pub fn describe(m: &Machine) -> String {
    let cpus = representative_cpus(m);
    let mut out = header(m);
    out.push_str(&describe_cpus(m, &cpus));
    if cpus.len() < m.nr_cpus() {
        let _ = writeln!(
            out,
            "(domains of CPUs {} shown; every other CPU's hierarchy has the same shape as one of these)",
            cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")
        );
    }
    out
}

/// Like [`describe`], with the domain hierarchy of every CPU.
pub fn describe_all(m: &Machine) -> String {
    let all: Vec<usize> = (0..m.nr_cpus()).collect();
    let mut out = header(m);
    out.push_str(&describe_cpus(m, &all));
    out
}

/// The sched-domain hierarchy of the given CPUs, in the kernel's boot-log format, each domain
/// followed by its flags and tunables.
pub fn describe_cpus(m: &Machine, cpus: &[usize]) -> String {
    let mut out = String::new();
    for &cpu in cpus.iter().filter(|&&c| c < m.nr_cpus()) {
        out.push_str(&cpu_domains(m, cpu));
    }
    out
}

fn header(m: &Machine) -> String {
    let t = &m.topo;
    let mut out = String::new();
    let _ = writeln!(out, "{}: {}", m.name, m.description);
    let arch = match m.arch {
        Arch::X86 => "x86",
        Arch::Arm64 => "arm64",
    };
    let hz = m.hz.map_or("1000 (default)".to_string(), |h| h.to_string());
    let slice = m.base_slice.map_or("the kernel default".to_string(), |s| {
        format!("{:.2} ms", s as f64 / 1e6)
    });
    let _ = writeln!(
        out,
        "  arch {arch}, cost profile {}, HZ {hz}, base slice {slice}, cpuidle governor {}",
        m.cost_profile, m.cpuidle_governor
    );
    let _ = writeln!(
        out,
        "  {} CPUs, {} cores, {} threads/core, {} LLCs{}, {} packages, {} NUMA nodes",
        m.nr_cpus(),
        t.nr_cores(),
        t.threads_per_core,
        t.nr_llcs(),
        if t.has_clusters() {
            format!(" ({} clusters)", t.nr_clusters())
        } else {
            String::new()
        },
        t.nr_packages(),
        t.nr_nodes()
    );
    let sizes: Vec<String> = m.domains[0]
        .iter()
        .map(|sd| format!("{}({})", sd.level.name(), sd.span_weight))
        .collect();
    let _ = writeln!(
        out,
        "  sched domains of CPU 0: {}; sd_llc_size {}",
        if sizes.is_empty() {
            "none".into()
        } else {
            sizes.join(" -> ")
        },
        m.llc_size[0]
    );
    out.push_str(&layout(m));
    out.push_str(&distances(m));
    out
}

/// CPU lists per package / node / LLC (and clusters inside an LLC when they differ from it).
fn layout(m: &Machine) -> String {
    let t = &m.topo;
    let mut out = String::from("CPU layout:\n");
    let mut seen_pn = HashSet::new();
    for cpu in 0..m.nr_cpus() {
        let info = &t.cpus[cpu];
        if !seen_pn.insert((info.package, info.node)) {
            continue;
        }
        let span = t.cpus_where(|c| c.package == info.package && c.node == info.node);
        let _ = writeln!(
            out,
            "  package {} node {}: CPUs {}",
            info.package,
            info.node,
            span.to_list_string()
        );
        let mut llcs: Vec<u32> = span.iter().map(|c| t.cpus[c].llc).collect();
        llcs.dedup();
        llcs.sort_unstable();
        llcs.dedup();
        for (k, &llc) in llcs.iter().enumerate() {
            if k == MAX_LLCS_SHOWN {
                let _ = writeln!(out, "    ... ({} more LLCs)", llcs.len() - k);
                break;
            }
            let lspan = t.cpus_where(|c| c.llc == llc);
            let mut line = format!("    LLC {llc}: {}", lspan.to_list_string());
            let mut clusters: Vec<u32> = lspan.iter().filter_map(|c| t.cpus[c].cluster).collect();
            clusters.sort_unstable();
            clusters.dedup();
            if clusters.len() > 1 {
                let lists: Vec<String> = clusters
                    .iter()
                    .map(|&k| t.cpus_where(|c| c.cluster == Some(k)).to_list_string())
                    .collect();
                let _ = write!(line, "  clusters: {}", lists.join(" "));
            }
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

/// `numactl -H` style distance table (only with more than one node).
fn distances(m: &Machine) -> String {
    let d = &m.topo.node_distance;
    if d.len() < 2 {
        return String::new();
    }
    let mut out = String::from("node distances:\nnode ");
    for j in 0..d.len() {
        let _ = write!(out, "{j:>4}");
    }
    out.push('\n');
    for (i, row) in d.iter().enumerate() {
        let _ = write!(out, "{i:>4}:");
        for v in row {
            let _ = write!(out, "{v:>4}");
        }
        out.push('\n');
    }
    out
}

/// `sched_domain_debug()` output for one CPU, plus the debugfs values of each domain.
fn cpu_domains(m: &Machine, cpu: usize) -> String {
    let doms = &m.domains[cpu];
    if doms.is_empty() {
        return format!("CPU{cpu} attaching NULL sched-domain.\n");
    }
    let mut out = format!("CPU{cpu} attaching sched-domain(s):\n");
    for (level, sd) in doms.iter().enumerate() {
        let pad = " ".repeat(level);
        let _ = writeln!(
            out,
            "{pad} domain-{level}: span={} level={}",
            sd.span.to_list_string(),
            kernel_level_name(sd.level)
        );
        let _ = writeln!(out, "{pad}  groups:{}", groups(sd));
        let _ = writeln!(out, "{pad}  flags: {}", sd.flags.names().join(" "));
        let _ = writeln!(
            out,
            "{pad}  imbalance_pct={} busy_factor={} cache_nice_tries={} min_interval={} max_interval={} imb_numa_nr={}{}",
            sd.imbalance_pct,
            sd.busy_factor,
            sd.cache_nice_tries,
            sd.min_interval_ms,
            sd.max_interval_ms,
            sd.imb_numa_nr,
            if m.sd_llc[cpu] == Some(level as u8) { "  <- sd_llc" } else { "" }
        );
    }
    out
}

fn kernel_level_name(l: SdLevel) -> &'static str {
    l.kernel_name()
}

/// ` 0:{ span=0,52 cap=2048 }, 1:{ ... }`: group id (`sgc->id`, the balance CPU), span, and
/// capacity when it is not SCHED_CAPACITY_SCALE (1024 per CPU).
fn groups(sd: &SchedDomain) -> String {
    let shown: Vec<String> = sd
        .groups
        .iter()
        .take(MAX_GROUPS_SHOWN)
        .map(|g| {
            let cap = if g.weight == 1 {
                String::new()
            } else {
                format!(" cap={}", 1024 * g.weight)
            };
            format!(
                " {}:{{ span={}{cap} }}",
                g.balance_cpu,
                g.span.to_list_string()
            )
        })
        .collect();
    let mut s = shown.join(",");
    if sd.groups.len() > MAX_GROUPS_SHOWN {
        let _ = write!(s, ", ... ({} groups)", sd.groups.len());
    }
    s
}

/// CPU 0, the first CPU of another LLC and of another package, then the first CPU of each
/// hierarchy shape not yet shown (at most [`MAX_CPUS_SHOWN`]).
fn representative_cpus(m: &Machine) -> Vec<usize> {
    let n = m.nr_cpus();
    let t = &m.topo;
    let mut chosen = vec![0];
    if let Some(c) = (0..n).find(|&c| t.cpus[c].llc != t.cpus[0].llc) {
        chosen.push(c);
    }
    if let Some(c) = (0..n).find(|&c| t.cpus[c].package != t.cpus[0].package) {
        chosen.push(c);
    }
    let shape_of = |c: usize| -> Vec<(SdLevel, u32, usize)> {
        m.domains[c]
            .iter()
            .map(|sd| (sd.level, sd.span_weight, sd.groups.len()))
            .collect()
    };
    let mut shapes: HashSet<Vec<(SdLevel, u32, usize)>> =
        chosen.iter().map(|&c| shape_of(c)).collect();
    for c in 0..n {
        if chosen.len() >= MAX_CPUS_SHOWN {
            break;
        }
        if shapes.insert(shape_of(c)) {
            chosen.push(c);
        }
    }
    chosen.sort_unstable();
    chosen.dedup();
    chosen
}

/// `2x26x2` (packages x cores per package x threads per core), or `N CPUs` if irregular.
pub fn shape(m: &Machine) -> String {
    let t = &m.topo;
    let (p, c, th) = (t.nr_packages(), t.nr_cores(), t.threads_per_core as usize);
    if c % p == 0 && c * th == m.nr_cpus() {
        format!("{p}x{}x{th}", c / p)
    } else {
        format!("{}c/{}t", c, m.nr_cpus())
    }
}
