//! Stats: totals, the human summary and the JSON form.

use wakesim_stats::*;

#[test]
fn domain_totals_sum_over_cpus_per_level_bottom_up() {
    let s = crate::common::sample();
    let t = s.domain_totals_by_level();
    let names: Vec<&str> = t.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["SMT", "MC"]);
    assert_eq!(t[0].1.lb_count, [44, 88, 132]);
    assert_eq!(t[0].1.ttwu_wake_remote, 28);
    assert_eq!(t[1].1.alb_count, 36);
}

#[test]
fn cpu_totals_sum_every_field() {
    let c = crate::common::sample().cpu_totals();
    assert_eq!(
        (c.sched_count, c.ttwu_count, c.ttwu_local, c.pcount),
        (1000, 500, 200, 600)
    );
}

#[test]
fn summary_contains_the_key_figures() {
    let t = summary_text(&crate::common::sample());
    for needle in [
        "4 CPUs",
        "2.500s simulated",
        "wakeups      1000",
        "sync 90.0%",
        "migrated 12.5%",
        "IPIs 300",
        "polling wakes 400",
        "IPIs/wakeup 0.30",
        "wakelist 600 (batched 50)",
        "direct 400",
        "voluntary 3 (blocked)  involuntary 2 (preempted)",
        "probes/scan 8.00",
        "found idle 25.0%",
        "target 50.0%",
        "prev 30.0%",
        "idle_cpu 20.0%",
        "waker CPU 25.0%",
        "gated 20.0%",
        "SMT 400 calls, avg 1.5us",
        "MC 300 calls, avg 3.0us",
        "smt 60",
        "llc 70",
        "wakeup p50 9.0us",
        "p99 250.0us",
        "contended 1.0%",
        "ttwu 500 (local 40.0%)",
        "SMT: lb 264",
    ] {
        assert!(t.contains(needle), "missing {needle:?} in\n{t}");
    }
    let n = t.lines().count();
    assert!((10..=17).contains(&n), "{n} lines:\n{t}");
}

#[test]
fn summary_of_empty_stats_does_not_panic() {
    let t = summary_text(&Stats::default());
    assert!(t.contains("0 CPUs"));
    assert!(t.contains("sync -"));
}

#[test]
fn json_has_all_sections() {
    let s = crate::common::sample();
    let v: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
    for k in [
        "nr_cpus",
        "sim_time_ns",
        "cpus",
        "domains",
        "wake",
        "newidle",
        "wakeup_latency",
        "run_delay",
        "tasks",
    ] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    assert_eq!(v["wakeup_latency"]["count"], 5);
    assert_eq!(v["domains"][0][0][0], "SMT");
    assert_eq!(v["tasks"][0]["nr_switches"], 5);
    assert_eq!(s.to_json(), crate::common::sample().to_json(), "deterministic");
}

#[test]
fn wake_and_newidle_stats_add() {
    let s = crate::common::sample();
    let mut w = s.wake.clone();
    w.add(&s.wake);
    assert_eq!(
        (w.wakeups, w.sis_outcome[0], w.migrations_by_dist[3]),
        (2000, 1000, 140)
    );
    let mut n = s.newidle.clone();
    n.add(&NewidleStats {
        levels: vec![NewidleLevel {
            name: "NUMA".into(),
            calls: 1,
            cost: 2,
            pulled: 0,
        }],
        ..s.newidle.clone()
    });
    assert_eq!(n.entered, 1000);
    assert_eq!(
        n.levels.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
        ["SMT", "MC", "NUMA"]
    );
}

#[test]
fn wake_counters_from_a_file_written_before_the_tg_read_side_read_as_zero() {
    // A compare or report directory from an older version has no stale-read counters.
    let mut v = serde_json::to_value(WakeStats::default()).unwrap();
    let m = v.as_object_mut().unwrap();
    m.remove("tg_read_misses");
    m.remove("tg_read_wait");
    m.insert("tg_updates".into(), 7.into());
    let w: WakeStats = serde_json::from_value(v).unwrap();
    assert_eq!((w.tg_updates, w.tg_read_misses, w.tg_read_wait), (7, 0, 0));
}
