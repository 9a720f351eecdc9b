//! LatencyHist: percentiles on known data, merge, clamping, JSON.

use wakesim_stats::LatencyHist;

fn one_to(n: u64) -> LatencyHist {
    let mut h = LatencyHist::new();
    for v in 1..=n {
        h.record(v);
    }
    h
}

#[test]
fn percentiles_of_1_to_1000_are_exact() {
    let h = one_to(1000);
    assert_eq!(h.count(), 1000);
    assert_eq!((h.min(), h.max()), (1, 1000));
    assert_eq!(h.mean(), 500.5);
    assert_eq!(h.value_at_percentile(50.0), 500);
    assert_eq!(h.value_at_percentile(90.0), 900);
    assert_eq!(h.value_at_percentile(99.0), 990);
    assert_eq!(h.value_at_percentile(99.9), 999);
    assert_eq!(h.value_at_percentile(100.0), 1000);
    assert_eq!(h.percentiles(&[50.0, 99.0]), vec![(50.0, 500), (99.0, 990)]);
}

#[test]
fn large_values_are_within_a_tenth_of_a_percent() {
    let mut h = LatencyHist::new();
    for v in 1..=1000u64 {
        h.record(v * 1_000_000); // 1 ms .. 1 s
    }
    let p99 = h.value_at_percentile(99.0) as f64;
    assert!((p99 - 990e6).abs() / 990e6 < 1e-3, "{p99}");
    assert_eq!(h.max(), 1_000_000_000, "max is exact");
}

#[test]
fn merge_equals_recording_everything_in_one() {
    let mut a = LatencyHist::new();
    let mut b = LatencyHist::new();
    for v in 1..=500u64 {
        a.record(v);
    }
    for v in 501..=1000u64 {
        b.record(v);
    }
    a.merge(&b);
    assert_eq!(a, one_to(1000));
    assert_eq!(a.value_at_percentile(50.0), 500);
    let before = a.clone();
    a.merge(&LatencyHist::new());
    assert_eq!(a, before, "merging an empty histogram changes nothing");
}

#[test]
fn out_of_range_values_are_clamped_not_lost() {
    let mut h = LatencyHist::new();
    h.record(0);
    h.record(u64::MAX);
    assert_eq!(h.count(), 2);
    assert_eq!((h.min(), h.max()), (0, 100_000_000_000));
}

#[test]
fn empty_histogram_reports_zeros() {
    let h = LatencyHist::default();
    assert!(h.is_empty());
    assert_eq!(
        (h.count(), h.min(), h.max(), h.value_at_percentile(99.0)),
        (0, 0, 0, 0)
    );
    assert_eq!(h.mean(), 0.0);
}

#[test]
fn bad_percentiles_do_not_panic() {
    let h = one_to(10);
    assert_eq!(h.value_at_percentile(-5.0), 1);
    assert_eq!(h.value_at_percentile(250.0), 10);
    assert_eq!(h.value_at_percentile(f64::NAN), 1);
}

#[test]
fn serializes_to_summary_object() {
    let h = one_to(1000);
    let v: serde_json::Value = serde_json::from_str(&serde_json::to_string(&h).unwrap()).unwrap();
    assert_eq!(v["count"], 1000);
    assert_eq!(v["mean_ns"], 500.5);
    assert_eq!(
        (v["min_ns"].as_u64(), v["max_ns"].as_u64()),
        (Some(1), Some(1000))
    );
    assert_eq!(
        (
            v["p50"].as_u64(),
            v["p90"].as_u64(),
            v["p99"].as_u64(),
            v["p99_9"].as_u64()
        ),
        (Some(500), Some(900), Some(990), Some(999))
    );
    assert_eq!(v.as_object().unwrap().len(), 8);
}

#[test]
fn same_input_same_output() {
    let mk = || {
        let mut h = LatencyHist::new();
        let mut x = 12345u64;
        for _ in 0..10_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            h.record(x >> 40);
        }
        serde_json::to_string(&h).unwrap()
    };
    assert_eq!(mk(), mk());
}
