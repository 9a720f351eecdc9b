//! The TOML machine format: what it accepts, and errors that name the file, line and key.

use wakesim_machine::{
    from_toml_str, load_file, lookup, preset_names, preset_toml, Arch, MachineError, MachineSpec,
    Shape,
};

fn file_err(text: &str) -> (usize, String) {
    match from_toml_str(text, "m.toml") {
        Err(MachineError::File { path, line, msg }) => {
            assert_eq!(path, "m.toml");
            (line, msg)
        }
        Err(other) => panic!("expected a File error, got {other:?}"),
        Ok(_) => panic!("expected an error for:\n{text}"),
    }
}

#[test]
fn malformed_toml_reports_the_line() {
    let (line, msg) = file_err("name = \"x\"\nsockets = 2\ncores_per_llc = = 4\n");
    assert_eq!(line, 3, "{msg}");
    let (line, _) = file_err("name = \"x\"\n\n\nsockets = \"two\"\n");
    assert_eq!(line, 4);
}

#[test]
fn unknown_key_is_rejected_with_its_line() {
    let (line, msg) = file_err("sockets = 1\ncores_per_llc = 2\ncores_per_sokcet = 3\n");
    assert_eq!(line, 3);
    assert!(msg.contains("cores_per_sokcet"), "{msg}");
}

#[test]
fn zero_counts_are_rejected_naming_the_key() {
    let (line, msg) = file_err("sockets = 1\n# comment\ncores_per_llc = 0\n");
    assert_eq!(line, 3);
    assert!(msg.contains("cores_per_llc"), "{msg}");
    let (line, msg) = file_err("sockets = 0\ncores_per_llc = 4\n");
    assert_eq!(line, 1);
    assert!(msg.contains("sockets"), "{msg}");
    let (_, msg) = file_err("sockets = 1\n");
    assert!(msg.contains("cores_per_llc"), "{msg}");
    let (line, _) = file_err("sockets = -1\ncores_per_llc = 4\n");
    assert_eq!(line, 1);
}

#[test]
fn more_than_max_cpus_is_rejected() {
    let (line, msg) =
        file_err("name = \"big\"\nsockets = 33\ncores_per_llc = 128\nthreads_per_core = 2\n");
    assert_eq!(line, 2);
    assert!(msg.contains("8448") && msg.contains("8192"), "{msg}");
    // Overflowing products are caught too.
    let (_, msg) =
        file_err("sockets = 4000000000\ncores_per_llc = 4000000000\nllcs_per_node = 4000000000\n");
    assert!(msg.contains("maximum"), "{msg}");
}

#[test]
fn distance_table_is_checked() {
    let (line, msg) = file_err("sockets = 2\ncores_per_llc = 2\nnuma_distance = [[10, 21]]\n");
    assert_eq!(line, 3);
    assert!(msg.contains("rows"), "{msg}");
    let (line, msg) =
        file_err("sockets = 2\ncores_per_llc = 2\nnuma_distance = [[10, 21], [21]]\n");
    assert_eq!(line, 3);
    assert!(msg.contains("2x2"), "{msg}");
    let (_, msg) =
        file_err("sockets = 2\ncores_per_llc = 2\nnuma_distance = [[10, 21], [22, 10]]\n");
    assert!(msg.contains("symmetric"), "{msg}");
    let (_, msg) =
        file_err("sockets = 2\ncores_per_llc = 2\nnuma_distance = [[10, 10], [10, 10]]\n");
    assert!(msg.contains("remote"), "{msg}");
    let (line, _) = file_err("sockets = 2\ncores_per_llc = 2\nsocket_distance = 5\n");
    assert_eq!(line, 3);
    let (line, _) = file_err("sockets = 2\ncores_per_llc = 2\nnuma_distance = [[10, 21], [21, 10]]\nsocket_distance = 30\n");
    assert_eq!(line, 4);
}

#[test]
fn conflicting_keys_are_rejected() {
    let (line, msg) = file_err("sockets = 1\ncores_per_cluster = 2\ncores_per_llc = 4\n");
    assert_eq!(line, 3);
    assert!(msg.contains("not both"), "{msg}");
    let (line, _) =
        file_err("sockets = 1\ncores_per_llc = 4\nllc_is_cluster = true\nclusters_per_llc = 2\n");
    assert_eq!(line, 4);
    let (line, _) = file_err("sockets = 1\nclusters_per_llc = 3\ncores_per_llc = 4\n");
    assert_eq!(line, 3);
    let (line, _) = file_err("arch = \"riscv\"\nsockets = 1\ncores_per_llc = 4\n");
    assert_eq!(line, 1);
}

#[test]
fn regular_defaults_and_numbering() {
    let spec = MachineSpec::parse(
        "sockets = 2\ncores_per_llc = 3\nthreads_per_core = 2\n",
        "dir/box.toml",
    )
    .unwrap();
    assert_eq!(spec.name, "box");
    assert_eq!(spec.arch, Arch::X86);
    assert_eq!(spec.cost_profile, "generic");
    assert_eq!(spec.node_reclaim_distance, 30);
    assert_eq!(spec.numa_distance, vec![vec![10, 21], vec![21, 10]]);
    let m = spec.build().unwrap();
    assert_eq!(m.nr_cpus(), 12);
    // Cores first across sockets, then the siblings.
    assert_eq!(m.topo.cpus[3].package, 1);
    assert_eq!(m.topo.cpus[9].core, 3);
    assert_eq!(m.topo.node_distance, vec![vec![10, 21], vec![21, 10]]);
}

#[test]
fn explicit_cpu_list_builds_irregular_machines() {
    let text = r#"
name = "odd"
arch = "arm64"
cost_profile = "generic"
[[cpu]]
id = 0
core = 0
llc = 0
package = 0
[[cpu]]
core = 0
llc = 0
package = 0
[[cpu]]
core = 1
llc = 0
package = 0
[[cpu]]
core = 7
llc = 5
package = 3
"#;
    let spec = MachineSpec::parse(text, "odd.toml").unwrap();
    assert!(matches!(spec.shape, Shape::Explicit(ref c) if c.len() == 4));
    let m = spec.build().unwrap();
    assert_eq!(m.arch, Arch::Arm64);
    assert_eq!(m.topo.threads_per_core, 2);
    assert_eq!(m.topo.nr_packages(), 2);
    assert_eq!(m.topo.nr_nodes(), 2);
    assert_eq!(m.llc_size[0], 3);
    assert_eq!(m.llc_size[3], 1);
    assert_eq!(m.level_names(0), ["SMT", "MC", "NUMA"]);
    assert!(m.domains[3].iter().all(|sd| sd.span.contains(3)));
}

#[test]
fn explicit_cpu_list_errors_point_at_the_entry() {
    let (line, msg) = file_err("[[cpu]]\ncore = 0\nllc = 0\npackage = 0\n[[cpu]]\nid = 5\ncore = 1\nllc = 0\npackage = 0\n");
    assert!((5..=9).contains(&line), "line {line}: {msg}");
    assert!(msg.contains("id = 5"), "{msg}");
    // CPU 1 shares core 0 with CPU 0 but sits in another package.
    let (line, msg) = file_err(
        "[[cpu]]\ncore = 0\nllc = 0\npackage = 0\n[[cpu]]\ncore = 0\nllc = 1\npackage = 1\n",
    );
    assert!((5..=8).contains(&line), "line {line}: {msg}");
    assert!(msg.contains("cpus 0 and 1"), "{msg}");
    let (line, msg) = file_err("sockets = 1\n[[cpu]]\ncore = 0\nllc = 0\npackage = 0\n");
    assert_eq!(line, 1);
    assert!(msg.contains("sockets"), "{msg}");
    let (_, msg) = file_err("[[cpu]]\ncore = 0\nllc = 0\n");
    assert!(msg.contains("package"), "{msg}");
}

#[test]
fn load_file_reports_unreadable_files_and_parses_good_ones() {
    let dir = std::env::temp_dir().join(format!("wakesim-machine-spec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("missing.toml");
    assert!(matches!(
        load_file(&missing),
        Err(MachineError::File { line: 0, .. })
    ));
    let good = dir.join("small.toml");
    std::fs::write(&good, "sockets = 1\ncores_per_llc = 4\n").unwrap();
    let m = load_file(&good).unwrap();
    assert_eq!((m.name.as_str(), m.nr_cpus()), ("small", 4));
    let via_lookup = lookup(good.to_str().unwrap()).unwrap();
    assert_eq!(via_lookup.nr_cpus(), 4);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_preset_file_parses_with_its_own_name() {
    for name in preset_names() {
        let spec = MachineSpec::parse(preset_toml(name).unwrap(), name).unwrap();
        assert_eq!(spec.name, name);
        assert!(matches!(spec.shape, Shape::Regular(_)));
    }
}

#[test]
fn format_md_examples_build() {
    let doc = include_str!("../../FORMAT.md");
    let blocks: Vec<&str> = doc
        .split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert_eq!(blocks.len(), 3);
    let x = from_toml_str(blocks[0], "FORMAT.md").unwrap();
    assert_eq!(x.level_names(0), ["SMT", "MC", "NUMA"]);
    let nps4 = from_toml_str(blocks[1], "FORMAT.md").unwrap();
    assert_eq!(nps4.level_names(0), ["SMT", "MC", "NODE", "NUMA", "NUMA1"]);
    let odd = from_toml_str(blocks[2], "FORMAT.md").unwrap();
    assert_eq!(odd.level_names(0), ["SMT", "MC", "NUMA"]);
    assert_eq!(odd.level_names(3), ["NUMA"]);
    assert_eq!(odd.domains[3][0].groups.len(), 2);
}

#[test]
fn hz_is_the_kernels_config_hz_and_defaults_to_none() {
    let m = from_toml_str("sockets = 1\ncores_per_llc = 2\nhz = 250\n", "m.toml").unwrap();
    assert_eq!(m.hz, Some(250));
    let m = from_toml_str("sockets = 1\ncores_per_llc = 2\n", "m.toml").unwrap();
    assert_eq!(m.hz, None, "the model's default applies");
    let (line, msg) = file_err("sockets = 1\ncores_per_llc = 2\nhz = 500\n");
    assert_eq!(line, 3);
    assert!(msg.contains("'hz'") && msg.contains("500"), "{msg}");
}

#[test]
fn machines_of_8193_cpus_are_rejected_at_the_line_that_exceeds_8192() {
    let (line, msg) = file_err("name = \"big\"\nsockets = 3\ncores_per_llc = 2731\n");
    assert_eq!(line, 2);
    assert_eq!(msg, "this shape has 8193 CPUs, more than the maximum 8192");
    let entry = "[[cpu]]\ncore = 0\nllc = 0\npackage = 0\n";
    let (line, msg) = file_err(&entry.repeat(8193));
    assert_eq!(line, 8192 * 4 + 1, "{msg}");
    assert!(msg.contains("more than the maximum 8192 CPUs"), "{msg}");
}
