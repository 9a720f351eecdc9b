//! Reading a machine from sysfs, on fake trees laid out like real ones.

use std::path::{Path, PathBuf};

use wakesim_machine::{host, host_from_sysfs, Dist, MachineError, SdFlags};

/// A fake `/sys` in a fresh temporary directory, removed on drop.
struct FakeSys(PathBuf);

impl FakeSys {
    fn new(tag: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("wakesim-fake-sys-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        FakeSys(dir)
    }

    fn write(&self, rel: &str, content: &str) {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{content}\n")).unwrap();
    }

    fn cpu(
        &self,
        cpu: usize,
        pkg: u32,
        core_cpus: &str,
        cluster: Option<&str>,
        caches: &[(u32, &str, &str)],
    ) {
        let t = format!("devices/system/cpu/cpu{cpu}/topology");
        self.write(&format!("{t}/physical_package_id"), &pkg.to_string());
        self.write(&format!("{t}/core_cpus_list"), core_cpus);
        self.write(&format!("{t}/thread_siblings_list"), core_cpus);
        if let Some(c) = cluster {
            self.write(&format!("{t}/cluster_cpus_list"), c);
        }
        for (i, (level, kind, shared)) in caches.iter().enumerate() {
            let c = format!("devices/system/cpu/cpu{cpu}/cache/index{i}");
            self.write(&format!("{c}/level"), &level.to_string());
            self.write(&format!("{c}/type"), kind);
            self.write(&format!("{c}/shared_cpu_list"), shared);
        }
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for FakeSys {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn two_cpu_vm_is_one_mc_domain() {
    // This VM: cpu0 and cpu1 on separate cores, private L1/L2, L3 shared 0-1, one node.
    let fs = FakeSys::new("vm");
    fs.write("devices/system/cpu/online", "0-1");
    for cpu in 0..2 {
        let me = cpu.to_string();
        fs.cpu(
            cpu,
            0,
            &me,
            Some(&me),
            &[
                (1, "Data", &me),
                (1, "Instruction", &me),
                (2, "Unified", &me),
                (3, "Unified", "0-1"),
            ],
        );
    }
    fs.write("devices/system/node/node0/cpulist", "0-1");
    fs.write("devices/system/node/node0/distance", "10");
    let m = host_from_sysfs(fs.path()).unwrap();
    assert_eq!((m.name.as_str(), m.cost_profile.as_str()), ("host", "host"));
    assert_eq!(m.nr_cpus(), 2);
    assert!(!m.topo.smt_active());
    assert!(!m.topo.has_clusters());
    assert_eq!(m.level_names(0), ["MC"]);
    assert_eq!(m.llc_size, vec![2, 2]);
    assert!(m.share_cache(0, 1));
    assert_eq!(m.dist(0, 1), Dist::Llc);
}

#[test]
fn two_socket_smt_host_with_nodes() {
    // 2 packages x 2 cores x 2 threads, x86 numbering: siblings (0,4) (1,5) (2,6) (3,7).
    let fs = FakeSys::new("smt");
    fs.write("devices/system/cpu/online", "0-7");
    for cpu in 0..8 {
        let core = cpu % 4;
        let pkg = (core / 2) as u32;
        let sib = format!("{},{}", core, core + 4);
        let llc = if pkg == 0 { "0-1,4-5" } else { "2-3,6-7" };
        fs.cpu(
            cpu,
            pkg,
            &sib,
            Some(&sib),
            &[(1, "Data", &sib), (2, "Unified", &sib), (3, "Unified", llc)],
        );
    }
    fs.write("devices/system/node/node0/cpulist", "0-1,4-5");
    fs.write("devices/system/node/node0/distance", "10 21");
    fs.write("devices/system/node/node1/cpulist", "2-3,6-7");
    fs.write("devices/system/node/node1/distance", "21 10");
    let m = host_from_sysfs(fs.path()).unwrap();
    assert_eq!(m.topo.threads_per_core, 2);
    assert_eq!(m.level_names(0), ["SMT", "MC", "NUMA"]);
    assert_eq!(m.llc_size[0], 4);
    assert_eq!(m.dist(0, 4), Dist::Smt);
    assert_eq!(m.dist(0, 1), Dist::Llc);
    assert_eq!(m.dist(0, 2), Dist::CrossNode);
    assert_eq!(m.topo.node_distance, vec![vec![10, 21], vec![21, 10]]);
    assert!(m.domains[0][2].has(SdFlags::NUMA));
}

#[test]
fn arm64_clusters_without_shared_cache_become_the_llc() {
    // Altra-like: private L2 per core, clusters of two cores, no L3 in sysfs.
    let fs = FakeSys::new("arm");
    fs.write("devices/system/cpu/online", "0-3");
    for cpu in 0..4 {
        let me = cpu.to_string();
        let pair = if cpu < 2 { "0-1" } else { "2-3" };
        fs.cpu(
            cpu,
            0,
            &me,
            Some(pair),
            &[
                (1, "Data", &me),
                (1, "Instruction", &me),
                (2, "Unified", &me),
            ],
        );
    }
    let m = host_from_sysfs(fs.path()).unwrap();
    assert_eq!(m.level_names(0), ["CLS", "PKG"]);
    assert_eq!(m.llc_size[0], 2);
    assert_eq!(m.dist(0, 1), Dist::Cluster);
    assert_eq!(m.dist(1, 2), Dist::CrossLlc);
}

#[test]
fn offline_cpus_are_skipped_and_the_rest_renumbered() {
    let fs = FakeSys::new("offline");
    fs.write("devices/system/cpu/online", "0-1,3");
    for cpu in [0, 1, 3] {
        let me = cpu.to_string();
        fs.cpu(cpu, 0, &me, None, &[(3, "Unified", "0-3")]);
    }
    let m = host_from_sysfs(fs.path()).unwrap();
    assert_eq!(m.nr_cpus(), 3);
    assert_eq!(m.llc_size, vec![3, 3, 3]);
    assert!(m.description.contains("renumbered"), "{}", m.description);
}

#[test]
fn missing_or_garbled_sysfs_is_a_host_error() {
    let fs = FakeSys::new("bad");
    assert!(matches!(
        host_from_sysfs(fs.path()),
        Err(MachineError::Host(_))
    ));
    fs.write("devices/system/cpu/online", "zero");
    let e = host_from_sysfs(fs.path()).unwrap_err();
    assert!(
        matches!(e, MachineError::Host(ref m) if m.contains("online")),
        "{e}"
    );
    fs.write("devices/system/cpu/online", "0");
    fs.write("devices/system/cpu/cpu0/topology/physical_package_id", "x");
    assert!(matches!(
        host_from_sysfs(fs.path()),
        Err(MachineError::Host(_))
    ));
}

#[test]
fn this_machine_can_be_read() {
    if !Path::new("/sys/devices/system/cpu/online").exists() {
        return;
    }
    let m = host().unwrap();
    assert!(m.nr_cpus() >= 1);
    assert_eq!(m.domains.len(), m.nr_cpus());
}
