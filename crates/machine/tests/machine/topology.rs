//! Building machines from a `Topology` in code.

use wakesim_machine::{Arch, CpuInfo, CpuSet, Machine, MachineError, Topology, MAX_CPUS};

fn cpu(core: u32, llc: u32, package: u32, node: u32) -> CpuInfo {
    CpuInfo {
        core,
        cluster: None,
        llc,
        package,
        node,
    }
}

#[test]
fn topology_new_renumbers_labels_and_derives_smt_masks() {
    // Sparse labels, CPUs 0 and 2 are siblings; node 0 has no CPUs and is dropped.
    let t = Topology::new(
        vec![cpu(40, 9, 3, 1), cpu(41, 9, 3, 1), cpu(40, 9, 3, 1)],
        vec![vec![10, 20], vec![20, 10]],
    )
    .unwrap();
    assert_eq!(t.cpus[0], cpu(0, 0, 0, 0));
    assert_eq!(t.cpus[1].core, 1);
    assert_eq!(t.smt_mask[0], CpuSet::from_cpus([0, 2]));
    assert_eq!(t.threads_per_core, 2);
    assert_eq!(t.node_distance, vec![vec![10]]);
    let m = Machine::from_topology("t", "d", Arch::X86, "generic", t).unwrap();
    assert_eq!(m.level_names(0), ["SMT", "MC"]);
    assert_eq!(m.level_names(1), ["MC"]);
}

#[test]
fn zero_cpus_too_many_cpus_and_broken_nesting_are_rejected() {
    let one = vec![vec![10]];
    assert!(matches!(
        Topology::new(vec![], one.clone()),
        Err(MachineError::Invalid(_))
    ));
    let many: Vec<CpuInfo> = (0..MAX_CPUS as u32 + 1).map(|c| cpu(c, 0, 0, 0)).collect();
    assert!(
        matches!(Topology::new(many, one.clone()), Err(MachineError::Invalid(m)) if m.contains("8193"))
    );
    let e = Topology::new(vec![cpu(0, 0, 0, 0), cpu(1, 0, 1, 0)], one.clone()).unwrap_err();
    assert!(e.to_string().contains("llc"), "{e}");
    let e = Topology::new(vec![cpu(0, 0, 0, 3)], one).unwrap_err();
    assert!(e.to_string().contains("node 3"), "{e}");
}

#[test]
fn from_topology_rejects_hand_built_inconsistent_topologies() {
    let t = Topology {
        cpus: vec![cpu(0, 0, 0, 0), cpu(1, 0, 0, 0)],
        smt_mask: vec![CpuSet::from_cpus([0, 1]), CpuSet::from_cpus([0, 1])],
        node_distance: vec![vec![10]],
        threads_per_core: 2,
    };
    let e = Machine::from_topology("x", "", Arch::X86, "generic", t).unwrap_err();
    assert!(e.to_string().contains("smt_mask"), "{e}");
}
