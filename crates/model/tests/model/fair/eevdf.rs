//! EEVDF: lag-based placement and wakeup preemption, weighted sharing of one CPU, slice-length
//! preemption at the tick (kernel/sched/fair.c: place_entity(), pick_eevdf(), update_curr(),
//! check_preempt_wakeup_fair(); Stoica and Abdel-Wahab, "Earliest Eligible Virtual Deadline
//! First", 1995).

use crate::common::*;
use wakesim_engine::{Time, MSEC, USEC};
use wakesim_model::{Features, Sim};
use wakesim_workloads::Op;

const H: usize = 0;
const R: usize = 1;

/// H (a hog) and R share CPU 3. H is listed first, so it runs first (equal initial deadlines,
/// inserted first); when H's first half-slice ends R runs, and sleeps `sleep_for` at once: R leaves
/// with a positive lag (it received less than its share). Then R wakes from its hrtimer on CPU 3.
fn lagged_sleeper(sleep_for: Time) -> (Sim, Time) {
    let tasks = vec![
        pinned(task("H", vec![compute(200 * MSEC), Op::Exit]), &[3]),
        pinned(task("R", vec![sleep(sleep_for), compute(100 * USEC), Op::Exit]), &[3]),
    ];
    let s = sim("test-smt2", v6_6(), &workload(tasks, 0, 0), 1);
    (s, sleep_for)
}

/// Steps to just before R's timer fires and returns (R's saved vlag, time R blocked).
fn until_before_wake(s: &mut Sim, f: Features) -> (i64, Time) {
    s.f = f;
    let blocked = step_until_cond(s, 10 * MSEC, "R ran and blocked", |s| {
        s.tasks[s.task_id(R) as usize].state == wakesim_model::state::TState::Sleeping && s.running(3) == Some(H) && s.tasks[s.task_id(R) as usize].counters.nr_switches > 0
    });
    (s.se[s.task_id(R) as usize].vlag, blocked)
}

#[test]
fn waking_task_with_positive_lag_preempts_a_task_past_its_protected_slice() {
    let (mut s, d) = lagged_sleeper(20 * MSEC);
    let (vlag, blocked) = until_before_wake(&mut s, v6_6());
    assert!(vlag > 500 * USEC as i64, "R slept owed service: vlag {vlag}");
    s.step_until(blocked + d - USEC);
    let pre = s.wake.wakeup_preemptions;
    let t_wake = blocked + d;
    // H has run alone for ~20 ms: its RUN_TO_PARITY protection ended with its first slice.
    let running_h = step_until_cond(&mut s, t_wake + 50 * USEC, "R runs", |s| s.running(3) == Some(R));
    assert_eq!(s.wake.wakeup_preemptions, pre + 1, "pick_eevdf chose the wakee");
    assert!(running_h - t_wake < 20 * USEC, "R preempted H at once ({} ns after its timer)", running_h - t_wake);
    // Placement: vruntime = V − vlag·(W + w)/W; with one other entity of equal weight, 2·vlag.
    let h = &s.se[s.task_id(H) as usize];
    let r = &s.se[s.task_id(R) as usize];
    let gap = h.vruntime - r.vruntime;
    assert!((gap - 2 * vlag).abs() < 100 * USEC as i64, "v(H) − v(R) = {gap}, 2·vlag = {}", 2 * vlag);
}

#[test]
fn waking_task_without_lag_does_not_preempt() {
    // PLACE_LAG off: the wakee is placed at V, H's deadline is earlier: no preemption, R waits
    // until H's slice ends at a tick.
    let (mut s, d) = lagged_sleeper(20 * MSEC);
    let (_, blocked) = until_before_wake(&mut s, feat("-PLACE_LAG"));
    s.step_until(blocked + d - USEC);
    let pre = s.wake.wakeup_preemptions;
    s.step_until(blocked + d + 100 * USEC);
    assert_eq!(s.wake.wakeup_preemptions, pre);
    assert_eq!(s.running(3), Some(H), "H keeps the CPU");
    let t = step_until_cond(&mut s, blocked + d + 5 * MSEC, "R runs", |s| s.running(3) == Some(R));
    assert!(t - (blocked + d) <= 3 * MSEC + 2 * MSEC, "R runs within a slice plus a tick");
}

#[test]
fn wakeup_preemption_off_leaves_the_wakee_waiting() {
    let (mut s, d) = lagged_sleeper(20 * MSEC);
    let (_, blocked) = until_before_wake(&mut s, feat("-WAKEUP_PREEMPTION"));
    s.step_until(blocked + d + 100 * USEC);
    assert_eq!(s.running(3), Some(H));
}

/// Two hogs pinned to CPU 1 with the given nice values; returns their runtimes after `t`.
fn share(n0: i32, n1: i32, t: Time) -> (Time, Time, u64) {
    let tasks = vec![
        nice(pinned(task("a", vec![compute(10 * t), Op::Exit]), &[1]), n0),
        nice(pinned(task("b", vec![compute(10 * t), Op::Exit]), &[1]), n1),
    ];
    let mut s = sim("test-smt2", v6_6(), &workload(tasks, 0, 0), 1);
    s.step_until(t);
    let now = s.now();
    let rt = |s: &Sim, i: usize| {
        let p = s.task_id(i) as usize;
        let se = &s.se[p];
        // Include the running task's not yet accounted time.
        se.sum_exec_runtime + if s.cpus[1].curr as usize == p { now - se.exec_start } else { 0 }
    };
    let sw = s.tasks[s.task_id(0) as usize].counters.nr_switches + s.tasks[s.task_id(1) as usize].counters.nr_switches;
    (rt(&s, 0), rt(&s, 1), sw)
}

#[test]
fn nice_weights_share_one_cpu_in_proportion() {
    let (a, b, _) = share(0, 5, 600 * MSEC);
    let ratio = a as f64 / b as f64;
    let want = 1024.0 / 335.0;
    assert!((ratio / want - 1.0).abs() < 0.05, "runtime ratio {ratio:.3}, weights say {want:.3}");
    assert!(a + b > 590 * MSEC, "the CPU was busy all along: {}", a + b);
}

#[test]
fn equal_weights_share_one_cpu_equally_in_slices() {
    let (a, b, switches) = share(0, 0, 300 * MSEC);
    let ratio = a as f64 / b as f64;
    assert!((ratio - 1.0).abs() < 0.03, "ratio {ratio:.3}");
    // Slices of base_slice = 3 ms (8 CPUs), noticed at the next 1 ms tick: 75–100 switches.
    assert!((70..=110).contains(&switches), "context switches in 300 ms: {switches}");
}

#[test]
fn a_250_hz_kernel_notices_the_end_of_a_slice_only_at_its_4_ms_tick() {
    // Two hogs on CPU 1 with the 1.5 ms slice of a 2-CPU machine: a slice ends at the next
    // tick that sees it (update_curr from sched_tick), every 2 ms at HZ=1000, every 4 ms at 250.
    let tasks = || vec![pinned(task("a", vec![compute(MSEC * 1000), Op::Exit]), &[1]), pinned(task("b", vec![compute(MSEC * 1000), Op::Exit]), &[1])];
    let switches = |hz: Option<u64>| {
        let mut s = sim_with("test-smt2", &workload(tasks(), 0, 0), 1, |cfg| cfg.machine.hz = hz);
        s.t.base_slice = 1_500 * wakesim_engine::USEC;
        s.step_until(300 * MSEC);
        s.tasks[s.task_id(0) as usize].counters.nr_switches + s.tasks[s.task_id(1) as usize].counters.nr_switches
    };
    let (at1000, at250) = (switches(None), switches(Some(250)));
    assert!((140..=160).contains(&at1000), "300 ms at HZ=1000: {at1000} switches");
    assert!((70..=80).contains(&at250), "300 ms at HZ=250: {at250} switches");
}

#[test]
fn a_preempted_hog_counts_involuntary_switches_and_a_sleeper_voluntary_ones() {
    // Two hogs on one CPU only ever leave it at the end of a slice (still runnable: nivcsw, as
    // __schedule() counts it); R, which sleeps on a timer, leaves it blocked (nvcsw).
    let tasks = vec![
        pinned(task("a", vec![compute(100 * MSEC), Op::Exit]), &[1]),
        pinned(task("b", vec![compute(100 * MSEC), Op::Exit]), &[1]),
        pinned(task("R", vec![sleep(MSEC), sleep(MSEC), Op::Exit]), &[2]),
    ];
    let mut s = sim("test-smt2", v6_6(), &workload(tasks, 0, 0), 1);
    s.step_until(50 * MSEC);
    let c = |i: usize| s.tasks[s.task_id(i) as usize].counters.clone();
    for i in [0, 1] {
        assert!(c(i).nivcsw >= 5 && c(i).nvcsw == 0, "hog {i}: {:?}", c(i));
    }
    assert!(c(2).nvcsw >= 2 && c(2).nivcsw == 0, "sleeper: {:?}", c(2));
}
