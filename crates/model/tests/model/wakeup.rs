//! try_to_wake_up(): wakelist vs direct enqueue, IPI vs polling flag write, cross-LLC offload,
//! wake_affine_weight's tie rule (kernel/sched/core.c: try_to_wake_up(), ttwu_queue_cond(),
//! set_nr_if_polling(); kernel/sched/fair.c: wake_affine_weight(), commit 082f764a2f3f).

use crate::common::*;
use wakesim_engine::{Time, MSEC, USEC};
use wakesim_model::exec::Ev;
use wakesim_model::{Features, Sim};
use wakesim_stats::{SisOutcome, WakeStats};
use wakesim_workloads::{Op, Workload};

const R: usize = 1;

/// W (pinned to CPU 0) computes `before`, writes the pipe R waits on (a sync wakeup), computes a
/// little more and exits; R starts on `r_cpu`, blocks on the pipe at once, then computes 20 µs.
fn waker_wakee(r_cpu: u32, before: Time) -> Workload {
    let w = pinned(task("W", vec![compute(before), Op::Send { chan: 0, bytes: 4 }, compute(50 * USEC), Op::Exit]), &[0]);
    let r = start_on(task("R", vec![Op::Recv { chan: 0, bytes: 4 }, compute(20 * USEC), Op::Exit]), r_cpu);
    workload(vec![w, r], 1, 0)
}

/// Steps until R's wakeup has been queued (wakelist) or enqueued (direct), returning the stats
/// just before W's wakeup started.
fn step_to_wakeup(s: &mut Sim, at: Time) -> WakeStats {
    s.step_until(at - 10 * USEC);
    let before = s.wake.clone();
    step_until_cond(s, at + 200 * USEC, "R's wakeup is queued or enqueued", |s| {
        s.wake.wakelist_queued > before.wakelist_queued || s.wake.direct_enqueue > before.direct_enqueue
    });
    before
}

/// Steps until workload task `i` runs on `cpu`, returning the events dispatched meanwhile.
fn step_until_running(s: &mut Sim, i: usize, cpu: usize, limit: Time) -> Vec<Ev> {
    let mut evs = Vec::new();
    while s.running(cpu) != Some(i) {
        let (t, ev) = s.step().expect("events pending");
        assert!(t <= limit, "task {i} not running on cpu {cpu} by {limit} ns");
        evs.push(ev);
    }
    evs
}

fn is_ipi_to(ev: &Ev, cpu: usize) -> bool {
    matches!(ev, Ev::Ipi { cpu: c, .. } if *c as usize == cpu)
}

fn is_poll_wake_of(ev: &Ev, cpu: usize) -> bool {
    matches!(ev, Ev::PollWake { cpu: c } if *c as usize == cpu)
}

#[test]
fn same_llc_wakeup_of_an_idle_cpu_is_queued_on_its_wakelist_and_enqueued_there() {
    let mut s = sim("test-smt2", v6_6(), &waker_wakee(5, 200 * USEC), 1);
    s.step_until(150 * USEC);
    assert_eq!(s.task_cpu(R), 5);
    assert!(s.is_available_idle(5), "R blocked: CPU 5 is idle");
    let before = step_to_wakeup(&mut s, 200 * USEC);
    // The waker only queued R: ttwu_pending makes CPU 5 non-idle at once, nothing enqueued yet.
    assert_eq!(s.wake.wakelist_queued, before.wakelist_queued + 1);
    assert_eq!(s.wake.direct_enqueue, before.direct_enqueue, "no direct enqueue by the waker");
    assert!(s.on_wakelist(5, R), "R is on CPU 5's call_single_queue");
    assert!(s.cpus[5].ttwu_pending);
    assert!(!s.is_available_idle(5), "ttwu_pending makes idle_cpu() false");
    assert_eq!(s.nr_running(5), 0, "the target enqueues R itself");
    step_until_running(&mut s, R, 5, 300 * USEC);
    assert!(!s.cpus[5].ttwu_pending, "sched_ttwu_pending() cleared the flag");
    assert!(!s.on_wakelist(5, R));
    assert_eq!(s.wake.remote_enqueue, before.remote_enqueue, "no remote rq lock taken by the waker");
    assert_eq!(s.wake.cost_remote_lock, before.cost_remote_lock, "and no remote-lock time");
    assert_eq!(s.tasks[s.task_id(R) as usize].counters.nr_migrations, 0, "R woke where it slept");
}

#[test]
fn polling_idle_target_is_woken_by_a_flag_write_without_an_ipi() {
    let mut s = sim("test-smt2", v6_6(), &waker_wakee(5, 200 * USEC), 1);
    s.step_until(150 * USEC);
    assert!(s.is_polling_idle(5), "x86 generic idle states poll (POLL / MWAIT)");
    let before = step_to_wakeup(&mut s, 200 * USEC);
    let evs = step_until_running(&mut s, R, 5, 300 * USEC);
    assert_eq!(s.wake.poll_wakes, before.poll_wakes + 1, "one flag write");
    assert_eq!(s.wake.ipis_sent, before.ipis_sent, "no IPI at all");
    assert!(evs.iter().any(|e| is_poll_wake_of(e, 5)), "CPU 5 noticed the flag write: {evs:?}");
    assert!(!evs.iter().any(|e| is_ipi_to(e, 5)), "no IPI reached CPU 5: {evs:?}");
}

#[test]
fn non_polling_idle_target_needs_a_call_function_ipi() {
    let mut s = sim_with("test-smt2", &waker_wakee(5, 200 * USEC), 1, non_polling_idle);
    s.step_until(150 * USEC);
    assert!(!s.is_polling_idle(5), "HLT-like idle does not poll");
    let before = step_to_wakeup(&mut s, 200 * USEC);
    assert_eq!(s.wake.wakelist_queued, before.wakelist_queued + 1, "still the wakelist");
    let evs = step_until_running(&mut s, R, 5, 400 * USEC);
    assert_eq!(s.wake.ipis_call_function, before.ipis_call_function + 1);
    assert_eq!(s.wake.poll_wakes, before.poll_wakes);
    assert!(evs.iter().any(|e| is_ipi_to(e, 5)), "an IPI reached CPU 5: {evs:?}");
}

#[test]
fn arm64_wfi_idle_target_needs_an_ipi() {
    // altra: arm64, WFI only; the LLC-sharing level is the 2-CPU cluster {0,1}.
    let mut s = sim("altra", v6_6(), &waker_wakee(1, 200 * USEC), 1);
    s.step_until(150 * USEC);
    assert!(s.m.share_cache(0, 1));
    assert!(!s.is_polling_idle(1));
    let before = step_to_wakeup(&mut s, 200 * USEC);
    assert_eq!(s.wake.wakelist_queued, before.wakelist_queued + 1);
    let evs = step_until_running(&mut s, R, 1, 400 * USEC);
    assert_eq!(s.wake.ipis_call_function, before.ipis_call_function + 1);
    assert_eq!(s.wake.poll_wakes, before.poll_wakes, "WFI cannot be woken by a flag write");
    assert!(evs.iter().any(|e| is_ipi_to(e, 1)));
}

#[test]
fn ping_pong_on_polling_idle_cpus_wakes_by_flag_writes_but_on_arm64_by_ipis() {
    let x86 = run("test-smt2", v6_6(), &ping_pong(1, 500), 1);
    assert!(!x86.outcome.capped);
    let w = &x86.stats.wake;
    assert!(w.wakelist_queued >= 990, "same-LLC wakes of idle CPUs use the wakelist: {}", w.wakelist_queued);
    // Polling idle: flag writes only. The one exception is a wakee still descheduling on its
    // CPU (WF_ON_CPU wakelist): that CPU runs prev, not its idle task, so it needs an IPI.
    assert!(w.ipis_sent <= 2, "ipis {}", w.ipis_sent);
    assert!(w.poll_wakes >= 990, "poll wakes {}", w.poll_wakes);
    let arm = run("altra", v6_6(), &ping_pong(1, 500), 1);
    assert!(!arm.outcome.capped);
    let a = &arm.stats.wake;
    assert_eq!(a.poll_wakes, 0, "arm64 WFI never polls");
    assert!(a.ipis_sent >= 990, "every wake of an idle CPU is an IPI: {}", a.ipis_sent);
    // The IPIs cost time: the arm64 ping-pong is slower per round trip despite equal work.
    assert!(arm.outcome.end_time > x86.outcome.end_time);
}

#[test]
fn wakelist_disabled_makes_the_waker_enqueue_remotely() {
    let mut s = sim("test-smt2", feat("-TTWU_QUEUE"), &waker_wakee(5, 200 * USEC), 1);
    let before = step_to_wakeup(&mut s, 200 * USEC);
    assert_eq!(s.wake.wakelist_queued, before.wakelist_queued);
    assert_eq!(s.wake.direct_enqueue, before.direct_enqueue + 1);
    assert_eq!(s.wake.remote_enqueue, before.remote_enqueue + 1);
    step_until_running(&mut s, R, 5, 300 * USEC);
    // The idle target still needs a kick: resched_curr on a polling idle CPU is a flag write.
    assert_eq!(s.wake.poll_wakes, before.poll_wakes + 1);
}

#[test]
fn a_remote_direct_enqueue_charges_the_lock_and_the_enqueue_to_the_wakers_remote_lock_time() {
    let mut s = sim("test-smt2", feat("-TTWU_QUEUE"), &waker_wakee(5, 200 * USEC), 1);
    let before = step_to_wakeup(&mut s, 200 * USEC);
    step_until_running(&mut s, R, 5, 300 * USEC);
    let t = s.wake.cost_remote_lock - before.cost_remote_lock;
    // At least the rq lock's acquisition and the enqueue with its preemption check, all done by
    // the waker; at most the time from just before the wakeup until R runs.
    let floor = s.c.rq_lock + s.c.enqueue + s.c.wakeup_preempt;
    assert!(t >= floor, "remote-lock time {t} ns below the profile's lock + enqueue {floor} ns");
    assert!(t <= s.now() - (200 * USEC - 10 * USEC), "remote-lock time {t} ns longer than the wakeup");
}

#[test]
fn pre_v6_0_wakelist_rule_only_offloads_when_the_wakee_is_still_on_cpu() {
    // TTWU_QUEUE_IDLE off: the v5.8–v5.19 rule; an idle same-LLC target is enqueued directly.
    let mut s = sim("test-smt2", feat("-TTWU_QUEUE_IDLE"), &waker_wakee(5, 200 * USEC), 1);
    let before = step_to_wakeup(&mut s, 200 * USEC);
    assert_eq!(s.wake.wakelist_queued, before.wakelist_queued);
    assert_eq!(s.wake.remote_enqueue, before.remote_enqueue + 1);
}

/// CPU 0 runs W and a pinned hog; CPUs 1–7 run one pinned hog each; R shares CPU 5 with its hog
/// (listed first, so it runs first and R sleeps with a positive lag), blocks on a futex and is
/// woken by W (non-sync) after `work` of W's compute.
fn busy_llc_futex(work: Time) -> Workload {
    let mut tasks = vec![
        pinned(task("W", vec![compute(work), Op::FutexWake { futex: 0, n: 1 }, compute(100 * USEC), Op::Exit]), &[0]),
        pinned(task("hog0", vec![compute(400 * MSEC), Op::Exit]), &[0]),
    ];
    for c in 1..8 {
        tasks.push(pinned(task(&format!("hog{c}"), vec![compute(400 * MSEC), Op::Exit]), &[c]));
    }
    tasks.push(start_on(task("R", vec![Op::FutexWait { futex: 0 }, compute(50 * USEC), Op::Exit]), 5));
    workload(tasks, 0, 1)
}
const R_BUSY: usize = 9;

#[test]
fn busy_same_llc_target_is_enqueued_by_the_waker_under_the_remote_rq_lock_and_kicked_by_ipi() {
    let mut s = sim("test-smt2", v6_6(), &busy_llc_futex(20 * MSEC), 1);
    s.step_until(5 * MSEC);
    assert!(s.running(5).is_some() && s.nr_running(5) == 1, "R ran and sleeps on the futex");
    let before = s.wake.clone();
    step_until_cond(&mut s, 100 * MSEC, "R enqueued", |s| s.wake.direct_enqueue > before.direct_enqueue || s.wake.wakelist_queued > before.wakelist_queued);
    assert_eq!(s.wake.wakelist_queued, before.wakelist_queued, "busy same-LLC target: no wakelist");
    assert_eq!(s.wake.remote_enqueue, before.remote_enqueue + 1, "the waker locked CPU 5's rq");
    assert_eq!(s.wake.sis_outcome[SisOutcome::Fallback as usize], before.sis_outcome[SisOutcome::Fallback as usize] + 1, "no idle CPU anywhere");
    assert_eq!(s.task_cpu(R_BUSY), 5, "wake_affine_weight kept prev: CPU 0 carries twice the load");
    let evs = step_until_running(&mut s, R_BUSY, 5, 100 * MSEC);
    assert_eq!(s.wake.ipis_resched, before.ipis_resched + 1, "a reschedule IPI for the preemption");
    assert!(evs.iter().any(|e| is_ipi_to(e, 5)));
    assert_eq!(s.wake.poll_wakes, before.poll_wakes, "a busy CPU does not poll");
}

/// test-2x4: W pinned to CPU 0 (LLC 0) wakes R, which may only run in LLC 1 and last ran on CPU 5.
fn cross_llc(hogs_in_llc1: bool) -> Workload {
    let llc1 = [4usize, 5, 6, 7, 12, 13, 14, 15];
    let mut tasks = vec![pinned(task("W", vec![compute(5 * MSEC), Op::Send { chan: 0, bytes: 4 }, compute(50 * USEC), Op::Exit]), &[0])];
    if hogs_in_llc1 {
        for &c in &llc1 {
            tasks.push(pinned(task(&format!("hog{c}"), vec![compute(30 * MSEC), Op::Exit]), &[c]));
        }
    }
    tasks.push(start_on(pinned(task("R", vec![Op::Recv { chan: 0, bytes: 4 }, compute(20 * USEC), Op::Exit]), &llc1), 5));
    workload(tasks, 1, 0)
}

#[test]
fn cross_llc_wakeup_of_a_busy_cpu_goes_through_the_wakelist_with_an_ipi() {
    let wl = cross_llc(true);
    let r = wl.tasks.len() - 1;
    let mut s = sim("test-2x4", v6_6(), &wl, 1);
    let before = step_to_wakeup(&mut s, 5 * MSEC);
    let target = (4..16).find(|&c| s.on_wakelist(c, r)).expect("R on an LLC-1 wakelist");
    assert!(!s.m.share_cache(0, target));
    assert_eq!(s.wake.direct_enqueue, before.direct_enqueue, "cross-LLC: never a remote enqueue");
    assert_eq!(s.wake.affine_attempts, before.affine_attempts, "CPU 0 is not allowed: no wake_affine");
    assert_eq!(s.nr_running(target), 1, "the busy target's hog only, until it handles the IPI");
    step_until_cond(&mut s, 10 * MSEC, "the target enqueued R", |s| s.nr_running(target) == 2 || s.running(target) == Some(r));
    assert_eq!(s.wake.ipis_call_function, before.ipis_call_function + 1, "busy target: a real IPI");
}

#[test]
fn cross_llc_wakeup_of_an_idle_cpu_goes_through_the_wakelist_with_a_flag_write() {
    let wl = cross_llc(false);
    let r = wl.tasks.len() - 1;
    let mut s = sim("test-2x4", v6_6(), &wl, 1);
    let before = step_to_wakeup(&mut s, 5 * MSEC);
    assert!(s.on_wakelist(5, r), "prev (CPU 5) is idle: SIS keeps it");
    step_until_running(&mut s, r, 5, 6 * MSEC);
    assert_eq!(s.wake.direct_enqueue, before.direct_enqueue);
    assert_eq!(s.wake.poll_wakes, before.poll_wakes + 1);
    assert_eq!(s.wake.ipis_sent, before.ipis_sent);
}

/// CPU 0 runs two pinned hogs (the waker is whichever runs), CPU 5 one, R last ran on CPU 5.
fn wa_state(f: Features) -> Sim {
    let tasks = vec![
        pinned(task("a0", vec![compute(100 * MSEC), Op::Exit]), &[0]),
        pinned(task("b0", vec![compute(100 * MSEC), Op::Exit]), &[0]),
        // R first: it runs on CPU 5 and blocks at once, before an idle CPU's balance pass
        // could pull it off CPU 5 while it waits behind h5.
        start_on(task("R", vec![Op::FutexWait { futex: 0 }, Op::Exit]), 5),
        pinned(task("h5", vec![compute(100 * MSEC), Op::Exit]), &[5]),
    ];
    let mut s = sim("test-smt2", f, &workload(tasks, 0, 1), 1);
    s.step_until(10 * MSEC);
    assert!(s.running(0).is_some() && s.running(5).is_some() && s.nr_running(0) == 2);
    s
}

/// Runs select_task_rq_fair() for R from CPU 0 with the given loads; returns whether
/// wake_affine() chose the waker's CPU (ttwu_move_affine).
fn affine(f: Features, this_load: u64, prev_load: u64, sync: bool) -> bool {
    let mut s = wa_state(f);
    let r = s.task_id(2) as usize;
    let waker = s.cpus[0].curr as usize;
    s.cpus[0].cfs.avg.load_avg = this_load;
    s.cpus[5].cfs.avg.load_avg = prev_load;
    s.tasks[r].avg.load_avg = 0;
    s.tasks[waker].avg.load_avg = 0;
    let (a0, m0) = (s.wake.affine_attempts, s.wake.affine_moves);
    let mv0 = s.dstat[0][1].ttwu_move_affine;
    s.select_task_rq_for(0, 2, sync);
    assert_eq!(s.wake.affine_attempts, a0 + 1, "wake_affine ran");
    let moved = s.wake.affine_moves == m0 + 1;
    assert_eq!(s.dstat[0][1].ttwu_move_affine, mv0 + moved as u64, "counted on the MC domain of CPU 0");
    moved
}

#[test]
fn wake_affine_weight_equal_loads_keep_prev_unless_the_wakeup_is_sync() {
    // WA_BIAS off so that equal cpu_load() values are an exact tie.
    let f = feat("-WA_BIAS");
    assert!(!affine(f, 2000, 2000, false), "strict '<': a tie stays on prev (Mel Gorman 2018)");
    assert!(affine(f, 2000, 2000, true), "sync: prev_eff + 1, so a tie goes to the waker's CPU");
    assert!(affine(f, 1000, 2000, false), "lower load on the waker's CPU: pull");
    assert!(!affine(f, 3000, 2000, true), "higher load on the waker's CPU: stay");
    let f = feat("-WA_BIAS,-WA_WEIGHT_NOEQUAL");
    assert!(affine(f, 2000, 2000, false), "pre-2018 '<=': a tie pulls to the waker's CPU");
}

#[test]
fn wake_affine_weight_bias_scales_prev_load_by_half_the_imbalance_pct() {
    // WA_BIAS: this_eff·100 vs prev_eff·(100 + (117-100)/2) = ·108.
    let f = v6_6();
    assert!(affine(f, 2000, 2000, false), "equal loads: 200000 < 216000");
    assert!(affine(f, 2150, 2000, false), "215000 < 216000");
    assert!(!affine(f, 2170, 2000, false), "217000 ≥ 216000");
}

#[test]

fn a_call_to_an_idle_cpu_that_is_in_schedule_idle_needs_a_real_ipi() {
    // W (CPU 1) calls CPU 3 and waits; the flag write makes CPU 3 run schedule_idle() →
    // newidle (rd overloaded by CPU 0's two hogs). W's second call lands during that newidle.
    let w = pinned(
        task("W", vec![compute(5 * MSEC), Op::CallFunc { cpu: 3, wait: true }, Op::CallFunc { cpu: 3, wait: false }, compute(MSEC), Op::Exit]),
        &[1],
    );
    let h0 = pinned(task("h0", vec![compute(20 * MSEC), Op::Exit]), &[0]);
    let h1 = pinned(task("h1", vec![compute(20 * MSEC), Op::Exit]), &[0]);
    let mut s = sim("test-smt2", v6_6(), &workload(vec![w, h0, h1], 0, 0), 1);
    s.step_until(5 * MSEC - 10 * USEC);
    let (mut polls3, mut ipis3, mut second_call) = (0, 0, None);
    s.step_until_with(5 * MSEC + 100 * USEC, |s, _, ev| {
        match ev {
            Ev::PollWake { cpu: 3 } => polls3 += 1,
            Ev::Ipi { cpu: 3, .. } => ipis3 += 1,
            _ => {}
        }
        // The second call (wait = false: no waiter) is queued.
        let queued = s.cpus[3].csd.iter().any(|e| matches!(e, wakesim_model::state::Csd::Func { waiter, .. } if *waiter == u32::MAX));
        if queued && second_call.is_none() {
            second_call = Some((s.cpus[3].mode, s.running(3)));
        }
    });
    let (mode, running) = second_call.expect("the second call was queued");
    assert_ne!(mode, wakesim_model::state::Mode::Idle, "the second call found CPU 3 out of its idle loop");
    assert_eq!(running, None, "still in its idle task");
    assert_eq!(polls3, 1, "only the first call is a flag write");
    assert_eq!(ipis3, 1, "the second is an IPI");
}

#[test]

fn a_task_given_start_cpu_0_starts_on_cpu_0() {
    let t = |n: &str| start_on(task(n, vec![compute(10 * MSEC), Op::Exit]), 0);
    let mut s = sim("test-smt2", v6_6(), &workload(vec![t("a"), t("b")], 0, 0), 1);
    s.step_until(10 * USEC);
    assert_eq!((s.task_cpu(0), s.task_cpu(1)), (0, 0), "both asked for CPU 0");
}

#[test]
fn a_second_wakeup_to_an_undrained_wakelist_sends_no_second_ipi() {
    // R1 and R2 (pinned to CPU 5) sleep on a futex; W wakes both back to back. The first
    // wakeup finds CPU 5's call_single_queue empty and kicks it; the second is batched behind
    // it and both are enqueued by one flush.
    let tasks = vec![
        pinned(task("W", vec![compute(MSEC), Op::FutexWake { futex: 0, n: 2 }, compute(100 * USEC), Op::Exit]), &[0]),
        pinned(task("R1", vec![Op::FutexWait { futex: 0 }, compute(20 * USEC), Op::Exit]), &[5]),
        pinned(task("R2", vec![Op::FutexWait { futex: 0 }, compute(20 * USEC), Op::Exit]), &[5]),
    ];
    let mut s = sim_with("test-smt2", &workload(tasks, 0, 1), 1, non_polling_idle);
    s.step_until(MSEC - 10 * USEC);
    assert!(s.is_available_idle(5));
    let b = s.wake.clone();
    step_until_cond(&mut s, 2 * MSEC, "both queued", |s| s.wake.wakelist_queued == b.wakelist_queued + 2);
    assert!(s.on_wakelist(5, 1) && s.on_wakelist(5, 2), "both on CPU 5's list");
    assert_eq!(s.wake.wakelist_batched, b.wakelist_batched + 1);
    step_until_cond(&mut s, 2 * MSEC, "both enqueued", |s| s.nr_running(5) == 2);
    assert_eq!(s.wake.ipis_call_function, b.ipis_call_function + 1, "one IPI for two wakeups");
}

/// Steps from R's wakelist queueing on CPU 5 until R runs there; returns whether CPU 5 ever
/// looked idle to a waker (`available_idle_cpu()`) while R was still on its list, and what
/// `select_idle_sibling()` chose at that moment for another task whose previous CPU is 5.
fn idle_while_r_is_queued(f: Features) -> (bool, Option<usize>) {
    let mut s = sim("test-smt2", f, &waker_wakee(5, 200 * USEC), 1);
    step_to_wakeup(&mut s, 200 * USEC);
    assert!(s.on_wakelist(5, R) && s.nr_running(5) == 0, "R queued on CPU 5's list, not enqueued");
    let (mut seen, mut chosen) = (false, None);
    while s.running(5) != Some(R) {
        if s.on_wakelist(5, R) && s.is_available_idle(5) && !seen {
            seen = true;
            chosen = Some(s.select_idle_sibling_for(0, 0, 5, 5).0);
        }
        let (t, _) = s.step().expect("events pending");
        assert!(t <= 300 * USEC, "R not running on CPU 5 by 300 µs");
    }
    (seen, chosen)
}

#[test]
fn before_v6_2_a_cpu_taking_its_wakelist_looks_idle_until_the_enqueue() {
    // sched_ttwu_pending() cleared rq->ttwu_pending before taking the rq lock (v5.8 to v6.1);
    // from v6.2 (d6962c4fe8f9) it clears it after the enqueues. In the window a waker's
    // select_idle_sibling() takes the CPU as idle and stacks a second task on it.
    let mut early = v6_6();
    early.TTWU_PENDING_AFTER_ENQUEUE = false;
    assert_eq!(idle_while_r_is_queued(early), (true, Some(5)), "v5.19: CPU 5 idle in the window, chosen");
    assert_eq!(idle_while_r_is_queued(v6_6()), (false, None), "v6.2 on: never idle while R is queued");
    assert!(!wakesim_model::Features::for_kernel("v5.19").unwrap().TTWU_PENDING_AFTER_ENQUEUE);
    assert!(wakesim_model::Features::for_kernel("v6.6").unwrap().TTWU_PENDING_AFTER_ENQUEUE);
}
