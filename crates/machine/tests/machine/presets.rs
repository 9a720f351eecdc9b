//! The built-in machines.

use wakesim_machine::{lookup, preset, preset_names, Arch, MachineError};

#[test]
fn every_preset_builds_with_the_advertised_cpu_count() {
    let want = [
        ("xeon-8269cy", 104),
        ("xeon-8260", 96),
        ("xeon-4s", 192),
        ("altra", 80),
        ("epyc-7763", 256),
        ("epyc-9654", 384),
        ("epyc-9754", 512),
        ("epyc-9965", 768),
        ("test-2x4", 16),
        ("test-smt2", 8),
    ];
    assert_eq!(
        preset_names(),
        want.iter().map(|(n, _)| *n).collect::<Vec<_>>()
    );
    for (name, cpus) in want {
        let m = preset(name).unwrap();
        assert_eq!(m.name, name);
        assert_eq!(m.nr_cpus(), cpus, "{name}");
        assert_eq!(m.domains.len(), cpus);
        assert!(!m.description.is_empty());
        assert!(
            m.description.contains("[source: ") || m.description.contains("TEST MACHINE"),
            "{name}"
        );
    }
}

#[test]
fn presets_carry_their_cost_profile_and_arch() {
    for (name, cost, arch) in [
        ("xeon-8269cy", "skx", Arch::X86),
        ("xeon-8260", "skx", Arch::X86),
        ("xeon-4s", "skx", Arch::X86),
        ("altra", "altra", Arch::Arm64),
        ("epyc-7763", "zen3", Arch::X86),
        ("epyc-9654", "zen4", Arch::X86),
        ("epyc-9754", "zen4c", Arch::X86),
        ("test-2x4", "generic", Arch::X86),
        ("test-smt2", "generic", Arch::X86),
    ] {
        let m = preset(name).unwrap();
        assert_eq!((m.cost_profile.as_str(), m.arch), (cost, arch), "{name}");
    }
}

#[test]
fn test_smt2_is_one_llc_of_four_smt_cores() {
    let m = preset("test-smt2").unwrap();
    assert_eq!(m.level_names(0), ["SMT", "MC"]);
    assert_eq!(m.llc_size[0], 8);
    assert_eq!(m.topo.smt_mask[1].to_list_string(), "1,5");
    let t = preset("test-2x4").unwrap();
    assert_eq!(t.level_names(0), ["SMT", "MC", "PKG"]);
}

#[test]
fn unknown_names_list_the_known_ones_including_host() {
    match preset("xeon-9999") {
        Err(MachineError::Unknown(name, known)) => {
            assert_eq!(name, "xeon-9999");
            assert!(known.contains("epyc-9754") && known.contains("host"));
        }
        other => panic!("{other:?}"),
    }
    assert!(lookup("altra").is_ok());
    assert!(matches!(
        lookup("no/such/file.toml"),
        Err(MachineError::File { .. })
    ));
}
