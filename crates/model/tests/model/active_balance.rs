//! Active balancing (kernel/sched/fair.c: load_balance()'s failure path, need_active_balance(),
//! imbalanced_active_balance(), active_load_balance_cpu_stop()): a running task that no balance
//! pass can detach is pushed by the busiest CPU's stopper once periodic balancing has failed
//! more than `cache_nice_tries + 2` times at that level.

use crate::common::*;
use wakesim_engine::{Time, MSEC};
use wakesim_model::Sim;
use wakesim_stats::IdleType;

const MC: usize = 1;

/// v6.6 with the v6.13 NOHZ fix: before it a polling idle CPU skips the idle balance it is
/// kicked for (tests/model/nohz.rs), so idle cores would never balance for themselves here.
fn v6_6_ilb(extra: &str) -> wakesim_model::Features {
    feat(&format!("+ILB_POLLING_FIX{extra}"))
}

fn pushed(s: &Sim) -> u64 {
    s.dstat.iter().map(|d| d[MC].alb_pushed).sum()
}

fn kicked(s: &Sim) -> u64 {
    s.dstat.iter().map(|d| d[MC].alb_count).sum()
}

fn same_core(s: &Sim, a: usize, b: usize) -> bool {
    s.m.domains[a][0].span.contains(b)
}

#[test]
fn two_hogs_on_one_core_are_pushed_apart_after_repeated_failed_balancing() {
    let mut s = sim("test-smt2", v6_6_ilb(""), &hogs_on_one_core(false), 1);
    assert!(s.m.domains[0][MC].span.weight() == 8 && s.m.domains[0].len() == 2, "SMT and MC levels");
    let t: Time = step_until_cond(&mut s, 300 * MSEC, "a hog pushed to another core", |s| pushed(s) > 0);
    // The CPU that received it had failed more than cache_nice_tries + 2 periodic passes at MC,
    // each at least its min_interval after the last (a failure resets the interval to it).
    let dst = (0..8).find(|&c| s.dstat[c][MC].alb_pushed > 0).unwrap();
    let sd = &s.m.domains[dst][MC];
    let needed = sd.cache_nice_tries as u64 + 3;
    let failed = s.dstat[dst][MC].lb_failed[IdleType::Idle as usize];
    assert!(failed >= needed, "pushed after {failed} failed idle passes, the kernel needs {needed}");
    assert!(t >= (needed - 1) * sd.min_interval_ms as u64 * MSEC, "pushed at {t} ns: sooner than {needed} passes allow");
    // The push lands once the stopper's CPU has switched away: both hogs then run on two cores.
    s.step_until(t + MSEC);
    let (a, b) = (s.task_cpu(0), s.task_cpu(1));
    assert!(!same_core(&s, a, b), "hogs on CPUs {a} and {b}: still one core");
    assert_eq!(s.running(a), Some(0));
    assert_eq!(s.running(b), Some(1));
    assert_eq!(s.wake.migrations_balance, 1, "one push, no other migration");
}

#[test]
fn without_active_balancing_two_running_hogs_share_a_core_for_good() {
    let mut s = sim("test-smt2", v6_6_ilb(",-ACTIVE_BALANCE"), &hogs_on_one_core(false), 1);
    s.step_until(300 * MSEC);
    assert!(same_core(&s, s.task_cpu(0), s.task_cpu(1)), "a balance pass cannot detach a running task");
    assert_eq!(kicked(&s), 0);
    let failed: u64 = s.dstat.iter().map(|d| d[MC].lb_failed[IdleType::Idle as usize]).sum();
    assert!(failed > 10, "the idle cores kept trying: {failed} failed passes");
}

#[test]
fn a_hog_pinned_to_its_cpu_is_never_pushed() {
    let sib = smt_sibling("test-smt2", 0);
    let mut s = sim("test-smt2", v6_6_ilb(""), &hogs_on_one_core(true), 1);
    s.step_until(300 * MSEC);
    assert_eq!((s.task_cpu(0), s.task_cpu(1)), (0, sib));
    // need_active_balance() said yes, but busiest's current task may not run on the idle CPU
    // (LBF_ALL_PINNED): the stopper is never woken.
    assert_eq!(kicked(&s), 0, "no stopper ran");
    let failed: u64 = s.dstat.iter().map(|d| d[MC].lb_failed[IdleType::Idle as usize]).sum();
    assert!(failed > 3, "the balancer found the imbalance: {failed} failed passes");
}

