//! The CPU an idle scan returns is read when the scan reaches it (`Sim::sis_recheck`): the
//! model runs `select_idle_cpu()` when `try_to_wake_up()` starts, but the kernel's scan reads
//! each CPU as its probe comes, so a CPU another wakeup claimed before the scan got there is
//! found busy and the scan goes on, with what is left of its depth.

use crate::idle_scan::{outcome, state};
use wakesim_stats::SisOutcome;

/// test-smt2 (cores {c, c+4}) with hogs on 0-5 and R (prev 5) asleep: CPUs 6 and 7 idle, no
/// idle core (their siblings 2 and 3 are busy); from target 0 the scan order is 1, 2, ..., 7.
fn two_idle_cpus(depth: u32) -> (wakesim_model::Sim, usize) {
    let (mut s, r) = state(&[0, 1, 2, 3, 4, 5], 5);
    s.llcs[0].has_idle_cores = false;
    s.llcs[0].nr_idle_scan = depth;
    assert!(s.is_available_idle(6) && s.is_available_idle(7));
    (s, r)
}

#[test]
fn a_scanned_cpu_claimed_before_the_scan_reached_it_sends_the_scan_on_to_the_next_idle_cpu() {
    let (mut s, r) = two_idle_cpus(8);
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 6);
    let (idle_cpu, rescans, probes) = (outcome(&s, SisOutcome::IdleCpu), s.wake.sis_rescans, s.wake.sis_probes);
    s.claim_idle_cpu(6);
    let (cpu, cost) = s.sis_recheck_for(0, r).expect("CPU 6 was claimed: the scan goes on");
    assert_eq!(cpu, 7);
    assert!(cost > 0, "probing CPU 7 costs the waker");
    assert_eq!(s.wake.sis_rescans, rescans + 1);
    assert_eq!(s.wake.sis_probes, probes + 1, "only CPU 7 is probed: 1-6 were already");
    assert_eq!(outcome(&s, SisOutcome::IdleCpu), idle_cpu, "still one wakeup placed on an idle CPU");
}

#[test]
fn a_scanned_cpu_still_idle_when_the_scan_reaches_it_is_kept() {
    let (mut s, r) = two_idle_cpus(8);
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 6);
    let rescans = s.wake.sis_rescans;
    assert_eq!(s.sis_recheck_for(0, r), None);
    assert_eq!(s.wake.sis_rescans, rescans);
    assert_eq!(s.sis_recheck_for(0, r), None, "one read per scan");
}

#[test]
fn the_scan_goes_on_with_the_sis_util_depth_it_had_left() {
    // Depth 6 reaches CPU 6 with its last count: past it the scan returns -1 and the wakee
    // stacks on the target; depth 7 leaves one more probe, which finds CPU 7.
    // The placement's outcome moves from "idle CPU" to what the rest of the scan found.
    for (depth, expect, fallbacks) in [(6u32, 0usize, 1u64), (7, 7, 0)] {
        let (mut s, r) = two_idle_cpus(depth);
        assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 6, "depth {depth}");
        let (idle_cpu, fallback) = (outcome(&s, SisOutcome::IdleCpu), outcome(&s, SisOutcome::Fallback));
        s.claim_idle_cpu(6);
        assert_eq!(s.sis_recheck_for(0, r).map(|x| x.0), Some(expect), "depth {depth}");
        assert_eq!(outcome(&s, SisOutcome::Fallback), fallback + fallbacks, "depth {depth}");
        assert_eq!(outcome(&s, SisOutcome::IdleCpu), idle_cpu - fallbacks, "depth {depth}");
    }
}

#[test]
fn an_idle_core_whose_sibling_was_claimed_sends_the_scan_on_to_the_next_idle_core() {
    // Hogs on 0, 1, 4, 5: cores {2,6} and {3,7} idle. From target 0 the core scan passes core
    // {1,5} and returns core 2; a wakeup claims 6 meanwhile, so the core is not idle when the
    // scan reaches it and the scan goes on to core 3.
    let (mut s, r) = state(&[0, 1, 4, 5], 5);
    s.llcs[0].has_idle_cores = true;
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 2);
    s.claim_idle_cpu(6);
    assert_eq!(s.sis_recheck_for(0, r).map(|x| x.0), Some(3));
    // With core 3 claimed too, no idle core is left: the first idle CPU the scan saw, 2, is it.
    let (mut s, r) = state(&[0, 1, 4, 5], 5);
    s.llcs[0].has_idle_cores = true;
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 2);
    s.claim_idle_cpu(6);
    s.claim_idle_cpu(7);
    assert_eq!(s.sis_recheck_for(0, r).map(|x| x.0), Some(2));
}
