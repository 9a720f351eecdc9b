//! `/proc/schedstat` text: field counts and the per-version idle-type order.

use wakesim_stats::*;

fn lines(text: &str, prefix: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .map(|l| l.split(' ').map(String::from).collect())
        .collect()
}

#[test]
fn header_has_version_and_jiffies_timestamp() {
    let s = crate::common::sample();
    for v in [15, 16] {
        let t = schedstat_text(&s, v);
        let mut it = t.lines();
        assert_eq!(it.next(), Some(format!("version {v}").as_str()));
        assert_eq!(it.next(), Some("timestamp 2500"));
    }
}

#[test]
fn cpu_lines_have_nine_fields_after_the_name() {
    let s = crate::common::sample();
    for v in [15, 16] {
        let cpus = lines(&schedstat_text(&s, v), "cpu");
        assert_eq!(cpus.len(), 4);
        for (i, f) in cpus.iter().enumerate() {
            assert_eq!(f[0], format!("cpu{i}"));
            assert_eq!(f.len(), 1 + 9, "{f:?}");
            assert_eq!(f[2], "0", "legacy field 2 is always 0");
        }
        // cpu1: yld 0, 0, sched 200, goidle 20, ttwu 100, local 40, time 2e6, delay 10000, pcount 120
        assert_eq!(
            cpus[1][1..].join(" "),
            "0 0 200 20 100 40 2000000 10000 120"
        );
    }
}

#[test]
fn domain_lines_have_mask_and_36_counters() {
    let s = crate::common::sample();
    for v in [15, 16] {
        let text = schedstat_text(&s, v);
        let doms = lines(&text, "domain");
        assert_eq!(doms.len(), 8, "2 domains × 4 CPUs");
        for f in &doms {
            assert_eq!(f.len(), 2 + 24 + 12, "{f:?}");
            assert!(
                f[1].chars().all(|c| c.is_ascii_hexdigit() || c == ','),
                "mask {}",
                f[1]
            );
        }
        // Domain lines follow their CPU line, bottom-up.
        let order: Vec<&str> = text
            .lines()
            .skip(2)
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        assert_eq!(&order[..3], ["cpu0", "domain0", "domain1"]);
    }
}

#[test]
fn idle_type_order_differs_between_v15_and_v16() {
    let s = crate::common::sample();
    // lb_count: Idle 11, Busy 22, NewlyIdle 33; each group has 8 counters starting at field 2.
    let first = |v: u32| {
        let d = &lines(&schedstat_text(&s, v), "domain0")[0];
        [d[2].clone(), d[10].clone(), d[18].clone()]
    };
    assert_eq!(
        first(15),
        ["11", "22", "33"],
        "v15: IDLE, NOT_IDLE, NEWLY_IDLE"
    );
    assert_eq!(first(16), ["22", "11", "33"], "v16: busy, IDLE, NEWLY_IDLE");
    assert_eq!(
        IdleType::schedstat_order(15),
        [IdleType::Idle, IdleType::Busy, IdleType::NewlyIdle]
    );
    assert_eq!(
        IdleType::schedstat_order(16),
        [IdleType::Busy, IdleType::Idle, IdleType::NewlyIdle]
    );
}

#[test]
fn domain_tail_is_alb_sbe_sbf_then_ttwu_counters() {
    let s = crate::common::sample();
    let d = &lines(&schedstat_text(&s, 16), "domain")[0]; // cpu0 SMT
    let tail: Vec<&str> = d[26..].iter().map(String::as_str).collect();
    assert_eq!(
        tail,
        ["0", "0", "0", "0", "0", "0", "0", "0", "0", "7", "5", "0"]
    );
    let mc = &lines(&schedstat_text(&s, 16), "domain1")[0];
    assert_eq!(mc[26], "9", "alb_count first");
}

#[test]
fn cpumask_string_matches_kernel_pb_format() {
    assert_eq!(cpumask_string([0, 1, 2, 3], 4), "f");
    assert_eq!(cpumask_string([0, 1], 8), "03");
    assert_eq!(cpumask_string([0, 1], 104), "00,00000000,00000000,00000003");
    assert_eq!(cpumask_string(0..104, 104), "ff,ffffffff,ffffffff,ffffffff");
    assert_eq!(cpumask_string([32], 64), "00000001,00000000");
    assert_eq!(
        cpumask_string([5, 300], 16),
        "0020",
        "out-of-range CPUs ignored"
    );
    assert_eq!(cpumask_string([], 0), "0");
}

#[test]
fn unknown_version_renders_as_v16() {
    let s = crate::common::sample();
    assert_eq!(schedstat_text(&s, 99), schedstat_text(&s, 16));
}

#[test]
fn missing_domain_rows_do_not_panic() {
    let mut s = crate::common::sample();
    s.domains.truncate(1);
    let t = schedstat_text(&s, 15);
    assert_eq!(lines(&t, "cpu").len(), 4);
    assert_eq!(lines(&t, "domain").len(), 2);
}
