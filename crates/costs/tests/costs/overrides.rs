//! TOML cost overrides: what they change, and the errors they give.

use wakesim_costs::{
    from_toml_str, load_overrides, profile_for, profile_names, to_toml, CostError, IdleState,
};

fn zen3() -> wakesim_costs::CostProfile {
    profile_for("zen3").unwrap()
}

/// The (line, message) of a file error, or a panic naming what came back instead.
fn file_err(r: Result<wakesim_costs::CostProfile, CostError>) -> (usize, String) {
    match r {
        Err(CostError::File { path, line, msg }) => {
            assert_eq!(path, "t.toml");
            (line, msg)
        }
        other => panic!("expected a file error, got {other:?}"),
    }
}

#[test]
fn overrides_change_only_the_given_keys() {
    let text = "rq_lock = 35\n[line]\nllc = 40\n[migration_penalty]\ncross_node = 1\n";
    let p = from_toml_str(zen3(), text, "t.toml").unwrap();
    let mut want = zen3();
    want.rq_lock = 35;
    want.line.llc = 40;
    want.migration_penalty.cross_node = 1;
    assert_eq!(p, want);
}

#[test]
fn empty_file_is_the_base_profile() {
    assert_eq!(
        from_toml_str(zen3(), "# nothing\n", "t.toml").unwrap(),
        zen3()
    );
}

#[test]
fn dotted_and_inline_tables_work_like_sections() {
    let p = from_toml_str(
        zen3(),
        "line.smt = 3\nipi_delivery = { llc = 7 }\n",
        "t.toml",
    )
    .unwrap();
    assert_eq!((p.line.smt, p.ipi_delivery.llc), (3, 7));
    assert_eq!(p.line.llc, zen3().line.llc);
}

#[test]
fn unknown_key_error_carries_the_right_line() {
    let (line, msg) = file_err(from_toml_str(
        zen3(),
        "rq_lock = 1\n\n# c\nrq_lok = 2\n",
        "t.toml",
    ));
    assert_eq!(line, 4);
    assert!(msg.contains("rq_lok"), "{msg}");
}

#[test]
fn unknown_nested_key_names_table_and_line() {
    let (line, msg) = file_err(from_toml_str(zen3(), "[line]\nllc = 1\nl3 = 2\n", "t.toml"));
    assert_eq!(line, 3);
    assert!(msg.contains("line.l3"), "{msg}");
    let (line, msg) = file_err(from_toml_str(
        zen3(),
        "[[idle_states]]\nname = \"POLL\"\nexit_latency = 0\ntarget_residency = 0\npolling = true\nfoo = 1\n",
        "t.toml",
    ));
    assert_eq!(line, 6);
    assert!(msg.contains("idle_states[0].foo"), "{msg}");
}

#[test]
fn file_error_display_is_path_line_message() {
    let e = from_toml_str(zen3(), "x = 1\n", "costs.toml").unwrap_err();
    assert_eq!(e.to_string(), "costs.toml:1: unknown key 'x'");
}

#[test]
fn negative_value_is_an_error_naming_the_key() {
    let (line, msg) = file_err(from_toml_str(zen3(), "\nsyscall = -5\n", "t.toml"));
    assert_eq!(line, 2);
    assert!(
        msg.contains("syscall") && msg.contains("non-negative"),
        "{msg}"
    );
}

#[test]
fn non_integer_value_is_an_error_naming_the_key() {
    let (_, msg) = file_err(from_toml_str(zen3(), "[line]\nllc = 2.5\n", "t.toml"));
    assert!(msg.contains("line.llc") && msg.contains("integer"), "{msg}");
    let (_, msg) = file_err(from_toml_str(zen3(), "tick = \"1us\"\n", "t.toml"));
    assert!(msg.contains("tick") && msg.contains("string"), "{msg}");
}

#[test]
fn syntax_error_reports_a_line() {
    let (line, _) = file_err(from_toml_str(
        zen3(),
        "rq_lock = 1\nenqueue = = 2\n",
        "t.toml",
    ));
    assert_eq!(line, 2);
}

#[test]
fn base_key_selects_another_profile() {
    let p = from_toml_str(zen3(), "rq_lock = 99\nbase = \"altra\"\n", "t.toml").unwrap();
    let mut want = profile_for("altra").unwrap();
    want.rq_lock = 99; // applied on top of the new base, whatever the key order
    assert_eq!(p, want);
}

#[test]
fn unknown_base_is_an_error_on_its_line() {
    let (line, msg) = file_err(from_toml_str(zen3(), "\n\nbase = \"vax\"\n", "t.toml"));
    assert_eq!(line, 3);
    assert!(msg.contains("vax") && msg.contains("base"), "{msg}");
}

#[test]
fn idle_states_array_replaces_the_list() {
    let text = "[[idle_states]]\nname = \"POLL\"\nexit_latency = 0\ntarget_residency = 0\npolling = true\n\
                [[idle_states]]\nname = \"C1\"\nexit_latency = 1000\ntarget_residency = 2000\npolling = true\n";
    let p = from_toml_str(zen3(), text, "t.toml").unwrap();
    assert_eq!(
        p.idle_states.len(),
        2,
        "C2 dropped: the array replaces the list"
    );
    assert_eq!(
        p.idle_states[1],
        IdleState {
            name: "C1".into(),
            exit_latency: 1000,
            target_residency: 2000,
            polling: true
        }
    );
}

#[test]
fn idle_state_missing_key_is_an_error() {
    let (_, msg) = file_err(from_toml_str(
        zen3(),
        "[[idle_states]]\nname = \"C1\"\nexit_latency = 1\n",
        "t.toml",
    ));
    assert!(msg.contains("target_residency"), "{msg}");
}

#[test]
fn idle_states_out_of_exit_latency_order_are_rejected() {
    let text = "[[idle_states]]\nname = \"C6\"\nexit_latency = 100\ntarget_residency = 400\npolling = false\n\
                [[idle_states]]\nname = \"C1\"\nexit_latency = 1\ntarget_residency = 2\npolling = false\n";
    let (line, msg) = file_err(from_toml_str(zen3(), text, "t.toml"));
    assert_eq!(line, 1);
    assert!(msg.contains("ordered"), "{msg}");
}

#[test]
fn empty_idle_state_list_is_rejected() {
    let (_, msg) = file_err(from_toml_str(zen3(), "idle_states = []\n", "t.toml"));
    assert!(msg.contains("at least one"), "{msg}");
}

#[test]
fn smt_throughput_outside_1_to_2_is_rejected() {
    let (line, msg) = file_err(from_toml_str(zen3(), "\nsmt_throughput = 2.5\n", "t.toml"));
    assert_eq!(line, 2);
    assert!(msg.contains("smt_throughput"), "{msg}");
    assert!(from_toml_str(zen3(), "smt_throughput = 0.9\n", "t.toml").is_err());
    assert!(from_toml_str(zen3(), "smt_throughput = nan\n", "t.toml").is_err());
    assert_eq!(
        from_toml_str(zen3(), "smt_throughput = 1\n", "t.toml")
            .unwrap()
            .smt_throughput,
        1.0
    );
}

#[test]
fn an_idle_probe_line_share_above_three_lines_is_rejected() {
    let (line, msg) = file_err(from_toml_str(zen3(), "\nsis_probe_line_pct = 301\n", "t.toml"));
    assert_eq!(line, 2);
    assert!(msg.contains("sis_probe_line_pct") && msg.contains("301"), "{msg}");
    assert_eq!(from_toml_str(zen3(), "sis_probe_line_pct = 100\n", "t.toml").unwrap().sis_probe_line_pct, 100);
}

#[test]
fn a_balance_walk_line_share_above_six_lines_is_rejected() {
    let (line, msg) = file_err(from_toml_str(zen3(), "\nlb_walk_line_pct = 601\n", "t.toml"));
    assert_eq!(line, 2);
    assert!(msg.contains("lb_walk_line_pct") && msg.contains("601"), "{msg}");
    assert_eq!(from_toml_str(zen3(), "lb_walk_line_pct = 100\n", "t.toml").unwrap().lb_walk_line_pct, 100);
}

#[test]
fn to_toml_then_from_toml_is_identity_for_every_profile() {
    for n in profile_names() {
        let p = profile_for(n).unwrap();
        let text = to_toml(&p);
        // Read on top of a different base: the file is complete, so the base must not leak in.
        let back = from_toml_str(profile_for("altra").unwrap(), &text, "t.toml").unwrap();
        assert_eq!(back, p, "{n}:\n{text}");
    }
}

#[test]
fn to_toml_round_trips_odd_names_and_floats() {
    let mut p = zen3();
    p.name = "my \"box\" \\ tab\t".into();
    p.smt_throughput = 1.2345678901234567;
    p.idle_states[1].name = "C1 (mwait)".into();
    let back = from_toml_str(profile_for("generic").unwrap(), &to_toml(&p), "t.toml").unwrap();
    assert_eq!(back, p);
}

#[test]
fn load_overrides_reads_a_file_and_reports_its_path() {
    let dir = std::env::temp_dir().join(format!("wakesim-costs-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("c.toml");
    std::fs::write(&f, "base = \"skx\"\nsis_probe = 33\n").unwrap();
    let p = load_overrides(zen3(), &f).unwrap();
    assert_eq!((p.name.as_str(), p.sis_probe), ("skx", 33));
    std::fs::write(&f, "bogus = 1\n").unwrap();
    let msg = load_overrides(zen3(), &f).unwrap_err().to_string();
    assert!(msg.contains("c.toml:1:") && msg.contains("bogus"), "{msg}");
    let missing = load_overrides(zen3(), &dir.join("nope.toml"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("nope.toml"), "{missing}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn format_md_example_parses() {
    let md = include_str!("../../FORMAT.md");
    let start = md.find("```toml\n").expect("example block") + "```toml\n".len();
    let end = start + md[start..].find("```").expect("end of block");
    let p = from_toml_str(profile_for("skx").unwrap(), &md[start..end], "t.toml").unwrap();
    assert_eq!(p.name, "zen3-noc2");
    assert_eq!(p.line.llc, zen3().line.llc, "base = zen3 applied");
    assert_eq!(
        (p.line.cross_node, p.poll_limit, p.idle_states.len()),
        (350, 62_500, 2)
    );
}

#[test]
fn a_cost_scale_multiplies_one_key_and_leaves_the_rest() {
    let base = zen3();
    let mut p = base.clone();
    wakesim_costs::scale_cost(&mut p, "idle_exit", 2.0).unwrap();
    assert_eq!(p.idle_exit, 2 * base.idle_exit);
    p.idle_exit = base.idle_exit;
    assert_eq!(p, base, "only idle_exit moved");

    // A whole by-distance table, or one of its distances.
    let mut p = base.clone();
    wakesim_costs::scale_cost(&mut p, "ipi_delivery", 0.5).unwrap();
    assert_eq!(p.ipi_delivery.cross_node, (base.ipi_delivery.cross_node as f64 * 0.5).round() as u64);
    assert_eq!(p.ipi_delivery.llc, (base.ipi_delivery.llc as f64 * 0.5).round() as u64);
    let mut p = base.clone();
    wakesim_costs::scale_cost(&mut p, "migration_penalty.cross_node", 3.0).unwrap();
    assert_eq!(p.migration_penalty.cross_node, 3 * base.migration_penalty.cross_node);
    assert_eq!(p.migration_penalty.llc, base.migration_penalty.llc);

    // idle_states: every state's exit latency and residency; POLL's zero stays zero.
    let mut p = base.clone();
    wakesim_costs::scale_cost(&mut p, "idle_states", 2.0).unwrap();
    for (a, b) in p.idle_states.iter().zip(&base.idle_states) {
        assert_eq!((a.exit_latency, a.target_residency), (2 * b.exit_latency, 2 * b.target_residency));
    }
}

#[test]
fn a_cost_scale_names_an_unknown_key_or_a_bad_factor() {
    let mut p = zen3();
    let e = wakesim_costs::scale_cost(&mut p, "idle_exitt", 2.0).unwrap_err().to_string();
    assert!(e.contains("unknown cost key 'idle_exitt'"), "{e}");
    let e = wakesim_costs::scale_cost(&mut p, "ipi_delivery.far", 2.0).unwrap_err().to_string();
    assert!(e.contains("ipi_delivery.far"), "{e}");
    let e = wakesim_costs::scale_cost(&mut p, "idle_exit", -1.0).unwrap_err().to_string();
    assert!(e.contains("non-negative"), "{e}");
}

#[test]
fn describe_cost_shows_a_key_as_the_profile_holds_it() {
    let p = zen3();
    assert_eq!(wakesim_costs::describe_cost(&p, "idle_exit").unwrap(), format!("{} ns", p.idle_exit));
    let t = wakesim_costs::describe_cost(&p, "ipi_delivery").unwrap();
    assert!(t.contains(&format!("cross_node {}", p.ipi_delivery.cross_node)) && t.ends_with(" ns"), "{t}");
    assert_eq!(wakesim_costs::describe_cost(&p, "line.llc").unwrap(), format!("llc {} ns", p.line.llc));
    let s = wakesim_costs::describe_cost(&p, "idle_states").unwrap();
    assert!(s.contains("C1 1000/2000") && !s.contains("POLL"), "{s}");
    assert!(wakesim_costs::describe_cost(&p, "no_such").is_none());
    // Counts and sizes are not ns.
    assert_eq!(wakesim_costs::describe_cost(&p, "sock_msg_lines").unwrap(), p.sock_msg_lines.to_string());
    assert_eq!(wakesim_costs::describe_cost(&p, "stream_write_overlap").unwrap(), p.stream_write_overlap.to_string());
    assert_eq!(wakesim_costs::describe_cost(&p, "private_cache_bytes").unwrap(), format!("{} B", p.private_cache_bytes));
}
