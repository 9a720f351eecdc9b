//! Domain hierarchies of the presets and of hand-written machines, checked against what the
//! kernel builds (kernel/sched/topology.c: build_sched_domains, sd_init, cpu_attach_domain).

use wakesim_machine::{from_toml_str, preset, Dist, Machine, SdFlags, SdLevel};

fn levels(m: &Machine, cpu: usize) -> Vec<(String, u32)> {
    m.domains[cpu]
        .iter()
        .map(|sd| (sd.level.name(), sd.span_weight))
        .collect()
}

fn lv(v: &[(&str, u32)]) -> Vec<(String, u32)> {
    v.iter().map(|(n, w)| (n.to_string(), *w)).collect()
}

fn machine(toml: &str) -> Machine {
    from_toml_str(toml, "test.toml").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn intel_2s_presets_are_smt_mc_numa_with_socket_wide_llc() {
    for (name, llc) in [("xeon-8269cy", 52u32), ("xeon-8260", 48)] {
        let m = preset(name).unwrap();
        for cpu in [0, m.nr_cpus() - 1] {
            assert_eq!(
                levels(&m, cpu),
                lv(&[("SMT", 2), ("MC", llc), ("NUMA", 2 * llc)]),
                "{name} cpu {cpu}"
            );
            assert_eq!(m.llc_size[cpu], llc);
            assert_eq!(m.sd_llc[cpu], Some(1));
        }
        assert_eq!(m.llc_span[0].weight() as u32, llc);
    }
}

#[test]
fn xeon_4s_fully_connected_has_a_single_numa_level() {
    let m = preset("xeon-4s").unwrap();
    assert_eq!(levels(&m, 0), lv(&[("SMT", 2), ("MC", 48), ("NUMA", 192)]));
    assert_eq!(m.domains[0][2].groups.len(), 4);
    assert_eq!(m.llc_size[100], 48);
}

#[test]
fn epyc_presets_are_smt_mc16_pkg_numa() {
    for (name, per_socket) in [
        ("epyc-7763", 128u32),
        ("epyc-9654", 192),
        ("epyc-9754", 256),
    ] {
        let m = preset(name).unwrap();
        assert_eq!(m.nr_cpus() as u32, 2 * per_socket);
        for cpu in [0, 17, m.nr_cpus() - 1] {
            assert_eq!(
                levels(&m, cpu),
                lv(&[
                    ("SMT", 2),
                    ("MC", 16),
                    ("PKG", per_socket),
                    ("NUMA", 2 * per_socket)
                ]),
                "{name} cpu {cpu}"
            );
            assert_eq!(m.llc_size[cpu], 16);
        }
        // Zen's node_reclaim_distance = 32 keeps wake_affine across the SLIT-32 sockets.
        assert!(m.domains[0][3].has(SdFlags::WAKE_AFFINE), "{name}");
    }
}

#[test]
fn altra_is_cls2_then_pkg80_without_smt() {
    let m = preset("altra").unwrap();
    assert_eq!(m.nr_cpus(), 80);
    assert!(!m.topo.smt_active());
    for cpu in 0..80 {
        assert_eq!(levels(&m, cpu), lv(&[("CLS", 2), ("PKG", 80)]));
        assert_eq!(m.llc_size[cpu], 2);
        assert_eq!(m.sd_llc[cpu], Some(0));
    }
    let cls = &m.domains[0][0];
    assert!(cls.has(SdFlags::CLUSTER) && cls.has(SdFlags::SHARE_LLC));
    assert_eq!(m.share_id[1], 0);
    assert!(m.share_resources(0, 1) && !m.share_resources(1, 2));
}

#[test]
fn cpu_n_and_n_plus_nr_cores_are_smt_siblings() {
    for name in ["xeon-8269cy", "epyc-9754", "test-2x4"] {
        let m = preset(name).unwrap();
        let cores = m.nr_cores();
        assert_eq!(cores * 2, m.nr_cpus());
        for cpu in 0..cores {
            assert_eq!(m.dist(cpu, cpu + cores), Dist::Smt, "{name} {cpu}");
            assert_eq!(
                m.topo.smt_mask[cpu].to_list_string(),
                format!("{},{}", cpu, cpu + cores)
            );
            assert_eq!(m.domains[cpu][0].span, m.topo.smt_mask[cpu]);
        }
    }
}

#[test]
fn groups_start_with_the_local_group_and_partition_the_span_in_wrap_order() {
    for name in wakesim_machine::preset_names() {
        let m = preset(name).unwrap();
        for cpu in 0..m.nr_cpus() {
            for (k, sd) in m.domains[cpu].iter().enumerate() {
                assert!(
                    sd.groups[0].span.contains(cpu),
                    "{name} cpu {cpu} level {k}"
                );
                if k > 0 {
                    assert_eq!(
                        sd.groups[0].span,
                        m.domains[cpu][k - 1].span,
                        "{name} cpu {cpu} level {k}"
                    );
                }
                let mut union = wakesim_machine::CpuSet::new();
                for g in &sd.groups {
                    assert!(!union.intersects(&g.span), "{name}: overlapping groups");
                    union = union.or(&g.span);
                    assert_eq!(g.weight as usize, g.span.weight());
                    assert_eq!(g.balance_cpu as usize, g.span.first().unwrap());
                }
                assert_eq!(union, sd.span);
                // Kernel order: first CPUs ascending from the local group, wrapping once.
                let firsts: Vec<usize> =
                    sd.groups.iter().map(|g| g.span.first().unwrap()).collect();
                let descents = firsts.windows(2).filter(|w| w[1] < w[0]).count();
                assert!(descents <= 1, "{name} cpu {cpu}: {firsts:?}");
            }
        }
    }
    let m = preset("xeon-8269cy").unwrap();
    let firsts: Vec<u32> = m.domains[30][1]
        .groups
        .iter()
        .map(|g| g.balance_cpu)
        .collect();
    assert_eq!(&firsts[..3], &[30, 31, 32]);
    assert_eq!(*firsts.last().unwrap(), 29);
    assert_eq!(m.domains[30][1].groups[0].cores, 1);
    assert_eq!(m.domains[30][2].groups[0].cores, 26);
}

#[test]
fn sd_init_defaults_per_level() {
    let m = preset("epyc-7763").unwrap();
    let d = &m.domains[0];
    let base = SdFlags::BALANCE_NEWIDLE
        | SdFlags::BALANCE_EXEC
        | SdFlags::BALANCE_FORK
        | SdFlags::WAKE_AFFINE;
    // (imbalance_pct, cache_nice_tries, flags)
    let want = [
        (
            110,
            0,
            base | SdFlags::PREFER_SIBLING | SdFlags::SHARE_CPUCAPACITY | SdFlags::SHARE_LLC,
        ),
        (117, 1, base | SdFlags::PREFER_SIBLING | SdFlags::SHARE_LLC),
        (117, 1, base | SdFlags::PREFER_SIBLING),
        (
            117,
            2,
            base | SdFlags::SERIALIZE | SdFlags::OVERLAP | SdFlags::NUMA,
        ),
    ];
    for (sd, (pct, tries, flags)) in d.iter().zip(want) {
        assert_eq!(sd.imbalance_pct, pct, "{:?}", sd.level);
        assert_eq!(sd.cache_nice_tries, tries, "{:?}", sd.level);
        assert_eq!(sd.flags.0, flags, "{:?}: {:?}", sd.level, sd.flags.names());
        assert_eq!(sd.busy_factor, 16);
        assert_eq!(sd.min_interval_ms, sd.span_weight);
        assert_eq!(sd.max_interval_ms, 2 * sd.span_weight);
        assert!(!sd.has(SdFlags::BALANCE_WAKE));
    }
}

#[test]
fn numa_level_beyond_node_reclaim_distance_loses_wake_affine_exec_fork() {
    let far = "sockets = 2\ncores_per_llc = 4\nnuma_distance = [[10, 32], [32, 10]]\n";
    let m = machine(far);
    let numa = m.domains[0].last().unwrap();
    assert_eq!(numa.level, SdLevel::Numa(1));
    for f in [
        SdFlags::WAKE_AFFINE,
        SdFlags::BALANCE_EXEC,
        SdFlags::BALANCE_FORK,
    ] {
        assert!(!numa.has(f));
    }
    assert!(numa.has(SdFlags::BALANCE_NEWIDLE));
    let zen = machine(&format!("{far}node_reclaim_distance = 32\n"));
    assert!(zen.domains[0].last().unwrap().has(SdFlags::WAKE_AFFINE));
}

#[test]
fn imb_numa_nr_follows_build_sched_domains() {
    // Single LLC per node: span_weight >> 3; several LLCs: their count.
    for (name, imb) in [
        ("xeon-8269cy", 6),
        ("xeon-8260", 6),
        ("xeon-4s", 6),
        ("epyc-7763", 8),
        ("epyc-9654", 12),
        ("epyc-9754", 16),
    ] {
        let m = preset(name).unwrap();
        let numa = m.domains[0].last().unwrap();
        assert!(numa.has(SdFlags::NUMA));
        assert_eq!(numa.imb_numa_nr, imb, "{name}");
        assert_eq!(m.domains[0][0].imb_numa_nr, 0);
    }
    assert_eq!(preset("altra").unwrap().domains[0][1].imb_numa_nr, 40);
}

#[test]
fn nps4_epyc_gets_node_and_two_numa_levels_like_the_kernel() {
    // K Prateek Nayak's NPS4 Zen3 example on LKML (imb_numa_nr 2 and 4).
    let m = machine(
        "sockets = 2\nnodes_per_socket = 4\nllcs_per_node = 2\ncores_per_llc = 8\nthreads_per_core = 2\n\
         sibling_node_distance = 12\nsocket_distance = 32\nnode_reclaim_distance = 32\n",
    );
    assert_eq!(
        levels(&m, 0),
        lv(&[
            ("SMT", 2),
            ("MC", 16),
            ("NODE", 32),
            ("NUMA", 128),
            ("NUMA1", 256)
        ])
    );
    let imb: Vec<u32> = m.domains[0].iter().map(|sd| sd.imb_numa_nr).collect();
    assert_eq!(imb, vec![0, 0, 2, 2, 4]);
    assert!(!m.domains[0][2].has(SdFlags::NUMA));
}

#[test]
fn ring_of_four_nodes_builds_overlapping_numa_groups() {
    // The example in kernel/sched/topology.c: node 0's NUMA-1 = nodes {0,1,3}, groups {0},{1},{3};
    // NUMA-2 = all, groups {0-1,3} then {1-3}.
    let m = machine(
        "sockets = 4\ncores_per_llc = 1\nnuma_distance = [[10,20,30,20],[20,10,20,30],[30,20,10,20],[20,30,20,10]]\n",
    );
    let d = &m.domains[0];
    assert_eq!(levels(&m, 0), lv(&[("NUMA", 3), ("NUMA1", 4)]));
    let g1: Vec<String> = d[0]
        .groups
        .iter()
        .map(|g| g.span.to_list_string())
        .collect();
    assert_eq!(g1, ["0", "1", "3"]);
    let g2: Vec<String> = d[1]
        .groups
        .iter()
        .map(|g| g.span.to_list_string())
        .collect();
    assert_eq!(g2, ["0-1,3", "1-3"]);
    // 30 is not beyond node_reclaim_distance (30): wake_affine stays.
    assert!(d[1].has(SdFlags::OVERLAP) && d[1].has(SdFlags::WAKE_AFFINE));
    // Node 1's NUMA-2 groups {0-2}, {0,2-3}: their balance CPUs are the ones that reach them.
    let g: Vec<(String, u32)> = m.domains[1][1]
        .groups
        .iter()
        .map(|g| (g.span.to_list_string(), g.balance_cpu))
        .collect();
    assert_eq!(g, [("0-2".to_string(), 1), ("0,2-3".to_string(), 3)]);
}

#[test]
fn share_cache_within_an_llc_only() {
    let m = preset("test-2x4").unwrap();
    assert_eq!(m.llc_size[0], 8);
    assert!(m.share_cache(0, 3) && m.share_cache(0, 8) && m.share_cache(3, 11));
    assert!(!m.share_cache(0, 4) && !m.share_cache(3, 12));
    assert_eq!(m.llc_id[13], 4);
    assert_eq!(m.share_id[13], 4);
    let x = preset("xeon-8269cy").unwrap();
    assert!(x.share_cache(0, 77) && !x.share_cache(0, 26));
}

#[test]
fn dist_classes() {
    let t = preset("test-2x4").unwrap();
    assert_eq!(t.dist(5, 5), Dist::Local);
    assert_eq!(t.dist(1, 9), Dist::Smt);
    assert_eq!(t.dist(0, 3), Dist::Llc);
    assert_eq!(t.dist(0, 4), Dist::CrossLlc);
    let x = preset("xeon-8269cy").unwrap();
    assert_eq!(x.dist(0, 26), Dist::CrossNode);
    assert_eq!(x.dist(0, 25), Dist::Llc);
    let a = preset("altra").unwrap();
    assert_eq!(a.dist(0, 1), Dist::Cluster);
    assert_eq!(a.dist(1, 2), Dist::CrossLlc);
    // Kunpeng-like: clusters of 4 cores inside a 24-core LLC.
    let k = machine("arch = \"arm64\"\nsockets = 1\nclusters_per_llc = 6\ncores_per_cluster = 4\n");
    assert_eq!(levels(&k, 0), lv(&[("CLS", 4), ("MC", 24)]));
    assert_eq!(k.dist(0, 3), Dist::Cluster);
    assert_eq!(k.dist(0, 4), Dist::Llc);
    assert_eq!(k.llc_size[0], 24);
    assert_eq!(k.share_id[5], 4);
    assert!(k.share_cache(0, 23) && !k.share_resources(0, 4));
}

#[test]
fn one_cpu_machine_has_no_domains() {
    let m = machine("sockets = 1\ncores_per_llc = 1\n");
    assert!(m.domains[0].is_empty());
    assert_eq!((m.sd_llc[0], m.llc_size[0], m.llc_id[0]), (None, 1, 0));
}

#[test]
fn the_512_cpu_preset_builds_four_levels_on_every_cpu() {
    // How long this takes is measured by `wakesim bench`, not asserted here.
    let m = preset("epyc-9754").unwrap();
    assert_eq!(m.nr_cpus(), 512);
    for cpu in 0..512 {
        let names: Vec<String> = m.domains[cpu].iter().map(|d| d.level.name()).collect();
        assert_eq!(names, ["SMT", "MC", "PKG", "NUMA"], "cpu {cpu}");
        assert_eq!(m.domains[cpu].last().unwrap().span.weight(), 512);
    }
}

#[test]
fn an_8192_cpu_machine_file_loads_and_builds_domains_with_groups_shared_between_cpus() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/maxsmp-8192.toml");
    let m = wakesim_machine::load_file(std::path::Path::new(path)).unwrap();
    assert_eq!(m.nr_cpus(), 8192);
    let chain = lv(&[("SMT", 2), ("MC", 64), ("PKG", 512), ("NUMA", 2048), ("NUMA1", 8192)]);
    for cpu in [0, 4095, 4096, 8191] {
        assert_eq!(levels(&m, cpu), chain, "cpu {cpu}");
    }
    // CPU N + 4096 is CPU N's SMT sibling; an LLC is 32 cores of one socket.
    assert_eq!(m.topo.smt_mask[8191].to_list_string(), "4095,8191");
    assert_eq!(m.llc_span[8191].to_list_string(), "4064-4095,8160-8191");
    assert_eq!(m.llc_size[8191], 64);
    // Groups: 2 threads, 32 cores, 8 LLCs, 4 sockets of a blade, 4 blades.
    let counts: Vec<usize> = m.domains[5000].iter().map(|sd| sd.groups.len()).collect();
    assert_eq!(counts, [2, 32, 8, 4, 4]);
    assert!(m.domains[5000].iter().all(|sd| sd.groups[0].span.contains(5000)));
    // As in the kernel, the CPUs of a domain share its groups rather than each copying them.
    let (a, b) = (&m.domains[0][2].groups, &m.domains[1][2].groups);
    assert!(std::sync::Arc::ptr_eq(&a[0], &b[0]));
    assert_eq!(m.domains[1][2].groups[1].span.to_list_string(), "32-63,4128-4159");
}

#[test]
fn the_sapphire_rapids_example_is_two_sockets_of_56_cores_with_smt_and_one_llc_each() {
    // docs/accuracy.md compares it with Aaron Lu's "2sockets/112core/224cpu" box.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/machines/spr-2s-224.toml");
    let m = wakesim_machine::load_file(std::path::Path::new(path)).unwrap();
    assert_eq!(m.nr_cpus(), 224);
    assert_eq!(levels(&m, 0), lv(&[("SMT", 2), ("MC", 112), ("NUMA", 224)]));
    assert_eq!(m.llc_size[223], 112);
}

#[test]
fn the_one_llc_altra_example_is_the_altra_with_all_80_cores_in_one_llc() {
    // docs/results-notes.md runs the Altra's context1 on it (a guest seeing one shared cache).
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/machines/altra-1llc.toml");
    let m = wakesim_machine::load_file(std::path::Path::new(path)).unwrap();
    let altra = preset("altra").unwrap();
    assert_eq!(m.nr_cpus(), altra.nr_cpus());
    assert_eq!(m.llc_size[0], 80);
    assert_eq!(altra.llc_size[0], 2);
    // The hardware is the preset's: two CPUs of one DSU are a cluster apart, two of different
    // DSUs are not (they pay the profile's cross-DSU transfer, not the cluster's).
    assert_eq!(m.dist(0, 1), altra.dist(0, 1));
    assert_eq!(m.dist(0, 1), Dist::Cluster);
    assert_ne!(m.dist(0, 2), Dist::Cluster);
}
