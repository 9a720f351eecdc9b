mod common;
use common::*;

#[test]
fn ping_pong_pair_completes_every_round_trip() {
    let r = run("test-smt2", v6_6(), &ping_pong(1, 1000), 1);
    assert!(!r.outcome.capped, "run hit the cap");
    assert_eq!(r.outcome.task_exit.iter().filter(|e| e.is_some()).count(), 2);
    // 2 wakeups per round trip (plus possibly none at start).
    assert!(r.stats.wake.wakeups >= 2000 - 2 && r.stats.wake.wakeups <= 2000 + 2, "wakeups {}", r.stats.wake.wakeups);
    let per_op = r.outcome.end_time as f64 / 1000.0;
    eprintln!("usecs/op {:.3} events {} ipis {} polls {} wakelist {} direct {}", per_op / 1000.0, r.events, r.stats.wake.ipis_sent, r.stats.wake.poll_wakes, r.stats.wake.wakelist_queued, r.stats.wake.direct_enqueue);
    assert!(per_op > 1000.0 && per_op < 100_000.0, "per op {per_op} ns");
}
