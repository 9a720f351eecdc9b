//! NOHZ idle balancing: the busy CPU's tick kicks an idle CPU (kick_ilb) to balance on behalf
//! of every tickless idle CPU; v6.6's nohz_csd_func() drops the balance when the kick arrived
//! by a flag write (need_resched() set), until the v6.13 fix (ILB_POLLING_FIX)
//! (kernel/sched/fair.c: nohz_balancer_kick(), kick_ilb(); kernel/sched/core.c: nohz_csd_func()).

use crate::common::*;
use wakesim_engine::{MSEC, USEC};
use wakesim_model::Sim;
use wakesim_workloads::Op;

const IDLE: usize = 0; // IdleType::Idle

fn two_hogs() -> wakesim_workloads::Workload {
    workload(
        vec![
            pinned(task("h0", vec![compute(40 * MSEC), Op::Exit]), &[0]),
            pinned(task("h1", vec![compute(40 * MSEC), Op::Exit]), &[1]),
        ],
        0,
        0,
    )
}

fn idle_balances(s: &Sim) -> u64 {
    (0..s.nr_cpus()).map(|c| s.dstat[c].iter().map(|d| d.lb_count[IDLE]).sum::<u64>()).sum()
}

#[test]
fn busy_llc_kicks_an_idle_cpu_that_balances_for_all_nohz_idle_cpus() {
    // Non-polling idle: the kick is an IPI, nohz_csd_func() raises SCHED_SOFTIRQ.
    let mut s = sim_with("test-smt2", &two_hogs(), 1, non_polling_idle);
    s.step_until(30 * MSEC);
    assert!(s.nohz.idle_cpus.contains(2) && s.nohz.nr_cpus >= 5, "idle CPUs stopped their tick");
    assert!(s.wake.ipis_call_function >= 5, "kicks: {}", s.wake.ipis_call_function);
    // Balancing on behalf of idle CPUs other than the kicked one happened.
    let others: u64 = (3..8).map(|c| s.dstat[c].iter().map(|d| d.lb_count[IDLE]).sum::<u64>()).sum();
    assert!(others > 0, "CPUs 3–7 were balanced by the ILB");
}

#[test]
fn v6_6_polling_ilb_kick_is_dropped_by_nohz_csd_func() {
    let mut s = sim("test-smt2", v6_6(), &two_hogs(), 1);
    s.step_until(30 * MSEC);
    assert!(s.wake.poll_wakes >= 5, "kicks by flag write: {}", s.wake.poll_wakes);
    assert_eq!(s.wake.ipis_sent, 0);
    assert_eq!(idle_balances(&s), 0, "every kick found need_resched() set: no idle balance ran");
    assert!(s.newidle.from_idle_no_task >= 5, "each kick cost a schedule() + newidle instead");
}

#[test]
fn with_the_v6_13_fix_a_polling_cpu_balances_for_the_idle_cpus_it_was_kicked_for() {
    // nohz_csd_func() tests idle_cpu() only, and _nohz_idle_balance() stops only when this CPU
    // is no longer idle, so the NEED_RESCHED of the flag write no longer drops the balance.
    let mut f = v6_6();
    f.apply("+ILB_POLLING_FIX").unwrap();
    let mut s = sim("test-smt2", f, &two_hogs(), 1);
    s.step_until(30 * MSEC);
    assert!(s.wake.poll_wakes >= 5, "kicks by flag write: {}", s.wake.poll_wakes);
    assert_eq!(s.wake.ipis_sent, 0);
    let others: u64 = (3..8).map(|c| s.dstat[c].iter().map(|d| d.lb_count[IDLE]).sum::<u64>()).sum();
    assert!(others > 0, "CPUs 3–7 were balanced by the ILB");
}

#[test]
fn a_cpu_woken_only_to_handle_an_ipi_stays_nohz_idle_and_not_busy() {
    let wl = workload(vec![pinned(task("hog", vec![compute(50 * MSEC), Op::Exit]), &[0])], 0, 0);
    let mut s = sim_with("test-smt2", &wl, 1, non_polling_idle);
    s.step_until(10 * MSEC - 5 * USEC);
    assert!(s.cpus[3].nohz_idle);
    let busy0 = s.llcs[0].nr_busy_cpus;
    let cf0 = s.wake.ipis_call_function;
    s.kick_ilb_csd(0, 3);
    let mut left_mask = false;
    s.step_until_with(10 * MSEC + 100 * USEC, |s, _, _| {
        left_mask |= !s.nohz.idle_cpus.contains(3) || s.llcs[0].nr_busy_cpus != busy0;
    });
    assert!(!left_mask, "CPU 3 left the NOHZ mask / counted busy while handling one IPI");
    // Consequence: CPU 0's tick at 10 ms saw two busy CPUs and kicked another ILB.
    assert_eq!(s.wake.ipis_call_function, cf0 + 1, "only our kick");
}
