//! Built-in profiles: every one validates and has the idle-state shape of its platform.

use wakesim_costs::{generic, profile_for, profile_names, CostError, CostProfile};
use wakesim_machine::Dist;

fn all() -> Vec<CostProfile> {
    profile_names()
        .into_iter()
        .map(|n| profile_for(n).expect("built-in profile"))
        .collect()
}

#[test]
fn every_builtin_profile_validates() {
    for p in all() {
        p.validate().unwrap_or_else(|e| panic!("{}: {e}", p.name));
    }
}

#[test]
fn builtin_profiles_carry_their_own_name() {
    for n in profile_names() {
        assert_eq!(profile_for(n).unwrap().name, n);
    }
    assert_eq!(generic(), profile_for("generic").unwrap());
    assert_eq!(CostProfile::default(), generic());
}

#[test]
fn required_profiles_exist() {
    for n in ["skx", "zen3", "zen4", "zen4c", "altra", "generic", "host"] {
        assert!(profile_names().contains(&n), "{n} missing");
    }
}

#[test]
fn unknown_profile_error_lists_known_names() {
    let e = profile_for("pentium").unwrap_err();
    assert!(matches!(e, CostError::Unknown(..)));
    let msg = e.to_string();
    assert!(
        msg.contains("pentium") && msg.contains("zen3") && msg.contains("altra"),
        "{msg}"
    );
}

#[test]
fn altra_has_no_polling_idle_state() {
    let p = profile_for("altra").unwrap();
    assert!(!p.has_polling_idle());
    assert!(p.idle_states.iter().all(|s| !s.polling));
    assert_eq!(p.idle_states[0].name, "WFI");
}

#[test]
fn x86_profiles_have_poll_as_state_zero_with_polling() {
    for n in ["skx", "zen3", "zen4", "zen4c", "generic"] {
        let p = profile_for(n).unwrap();
        let s0 = &p.idle_states[0];
        assert_eq!(s0.name, "POLL", "{n}");
        assert!(s0.polling, "{n}");
        assert_eq!(s0.exit_latency, 0, "{n}");
    }
}

#[test]
fn amd_c2_does_not_poll_but_c1_does() {
    for n in ["zen3", "zen4", "zen4c"] {
        let p = profile_for(n).unwrap();
        let c1 = p.idle_states.iter().find(|s| s.name == "C1").unwrap();
        let c2 = p.idle_states.iter().find(|s| s.name == "C2").unwrap();
        assert!(c1.polling && !c2.polling, "{n}");
        assert_eq!(c2.exit_latency, 18_000, "{n}");
    }
}

#[test]
fn skx_idle_table_matches_intel_idle_skx_cstates() {
    let p = profile_for("skx").unwrap();
    let t: Vec<(&str, u64, u64)> = p
        .idle_states
        .iter()
        .map(|s| (s.name.as_str(), s.exit_latency, s.target_residency))
        .collect();
    assert_eq!(
        t,
        [
            ("POLL", 0, 0),
            ("C1", 2_000, 2_000),
            ("C1E", 10_000, 20_000),
            ("C6", 133_000, 600_000)
        ]
    );
}

/// One-way IPIs between every pair of CPUs of a bare-metal 2-socket Xeon Gold 6130
/// (khale/ipi-heatmaps `machines/jebe`, each pair's two directions averaged): 298–431 ns from
/// the sender's ICR write to the receiver's handler (5th–95th percentile of the pairs), with no
/// difference across the socket. The profile's send → handler (`ipi_send` + delivery) must lie
/// in that range at every distance an IPI can travel.
#[test]
fn skx_ipi_reaches_its_handler_in_the_measured_time_at_every_distance() {
    let p = profile_for("skx").unwrap();
    for d in [Dist::Smt, Dist::Cluster, Dist::Llc, Dist::CrossLlc, Dist::CrossNode] {
        let t = p.ipi_send + p.ipi_delivery.get(d);
        assert!((298..=431).contains(&t), "{d:?}: {t} ns from send to handler");
    }
}

#[test]
fn host_needs_ipis_to_wake_idle_cpus() {
    assert!(!profile_for("host").unwrap().has_polling_idle());
}

#[test]
fn line_costs_grow_with_distance() {
    for p in all() {
        let l = &p.line;
        assert!(l.get(Dist::Local) <= l.get(Dist::Smt), "{}", p.name);
        assert!(l.get(Dist::Llc) <= l.get(Dist::CrossLlc), "{}", p.name);
        assert!(
            l.get(Dist::CrossLlc) <= l.get(Dist::CrossNode),
            "{}",
            p.name
        );
        let m = &p.migration_penalty;
        assert!(
            m.get(Dist::Smt) <= m.get(Dist::Llc) && m.get(Dist::Llc) <= m.get(Dist::CrossNode),
            "{}",
            p.name
        );
    }
}

#[test]
fn same_cpu_pipe_round_trip_is_3_7_us_on_x86() {
    // WC §3.4: 4 pipe syscalls + 2 local sync wakeups + 2 cross-mm switches = 3.7 µs.
    let p = profile_for("generic").unwrap();
    let wake = p.ttwu_base + p.select_base + p.rq_lock + p.enqueue + p.wakeup_preempt;
    let switch = p.rq_lock + p.dequeue + p.pick + p.context_switch + p.context_switch_mm;
    let pipe_ops = 2 * (p.pipe_send + p.pipe_recv);
    assert_eq!(4 * p.syscall + pipe_ops + 2 * wake + 2 * switch + 2 * p.copy(4), 3_700);
}

#[test]
fn smt_throughput_is_1_15_where_there_is_smt() {
    for n in ["skx", "zen3", "zen4", "zen4c", "generic", "host"] {
        assert_eq!(profile_for(n).unwrap().smt_throughput, 1.15, "{n}");
    }
}
