//! Five worked wakeup scenarios (S1–S5), step by step on the model, each through the kernel
//! functions it names (kernel/sched/core.c, fair.c, idle.c).
//! Machines: test-smt2 (1 LLC, cores {c, c+4}) and test-2x4 (LLC 0 = {0-3,8-11},
//! LLC 1 = {4-7,12-15}); x86 generic costs (idle CPUs poll) unless stated.

use crate::common::*;
use wakesim_engine::{MSEC, USEC};
use wakesim_model::exec::Ev;
use wakesim_model::{Features, Sim};
use wakesim_stats::SisOutcome;
use wakesim_workloads::Op;

const IDLE: usize = 0; // IdleType::Idle
const NEWLY: usize = 2; // IdleType::NewlyIdle

fn sis(s: &Sim, o: SisOutcome) -> u64 {
    s.wake.sis_outcome[o as usize]
}

/// Steps until `i` runs on `cpu`, returning the events seen.
fn until_running(s: &mut Sim, i: usize, cpu: usize, limit: u64) -> Vec<Ev> {
    let mut evs = Vec::new();
    while s.running(cpu) != Some(i) {
        let (t, ev) = s.step().expect("pending events");
        assert!(t <= limit, "task {i} not running on CPU {cpu} by {limit}");
        evs.push(ev);
    }
    evs
}

/// S1 — pipe ping-pong on one LLC with idle CPUs: W on CPU 0 writes the pipe (sync wakeup) R
/// waits on; R last ran on CPU 5, idle and polling.
#[test]
fn s1_sync_wakeup_goes_affine_then_to_idle_prev_through_the_wakelist_by_poll_wake() {
    let w = pinned(task("W", vec![compute(300 * USEC), Op::Send { chan: 0, bytes: 4 }, compute(100 * USEC), Op::Exit]), &[0]);
    let r = start_on(task("R", vec![Op::Recv { chan: 0, bytes: 4 }, compute(20 * USEC), Op::Exit]), 5);
    let mut s = sim("test-smt2", v6_6(), &workload(vec![w, r], 1, 0), 1);
    s.step_until(290 * USEC);
    let (wid, rid) = (s.task_id(0) as usize, s.task_id(1) as usize);
    assert!(s.is_available_idle(5) && s.is_polling_idle(5), "R sleeps; CPU 5 idles in a polling state");
    let state5 = s.idle_state(5).expect("idling");
    let b = s.wake.clone();
    let (mv0, rem0, cnt0) = (s.dstat[0][1].ttwu_move_affine, s.dstat[0][1].ttwu_wake_remote, s.sched[0].ttwu_count);
    let (stamp, avg0) = (s.cpus[5].idle_stamp, s.cpus[5].avg_idle as i64);
    step_until_cond(&mut s, 400 * USEC, "W queued R", |s| s.wake.wakelist_queued > b.wakelist_queued);
    // 1. record_wakee; wake_wide = 0 (flips are small) → want_affine.
    assert_eq!(s.tasks[wid].last_wakee as usize, rid);
    assert_eq!(s.wake.wake_wide, b.wake_wide);
    // 2. wake_affine at MC (the lowest SD_WAKE_AFFINE domain holding CPU 5): wake_affine_idle:
    //    CPU 0 busy, sync and nr_running(0) == 1 → CPU 0.
    assert_eq!(s.wake.affine_attempts, b.affine_attempts + 1);
    assert_eq!(s.wake.affine_moves, b.affine_moves + 1);
    assert_eq!(s.dstat[0][1].ttwu_move_affine, mv0 + 1, "counted on CPU 0's MC domain");
    // 3. select_idle_sibling(R, prev 5, target 0): CPU 0 busy; prev idle and cache-affine → 5.
    assert_eq!(sis(&s, SisOutcome::Prev), b.sis_outcome[SisOutcome::Prev as usize] + 1);
    // 4. ttwu_queue_cond: same LLC, not this CPU, nr_running(5) == 0 → wakelist; CPU 5 polls →
    //    NEED_RESCHED is set by a flag write, no IPI.
    assert!(s.on_wakelist(5, 1) && s.cpus[5].ttwu_pending);
    assert_eq!(s.wake.direct_enqueue, b.direct_enqueue);
    let evs = until_running(&mut s, 1, 5, 400 * USEC);
    assert_eq!(s.wake.poll_wakes, b.poll_wakes + 1);
    assert_eq!(s.wake.ipis_sent, b.ipis_sent);
    assert!(evs.iter().any(|e| matches!(e, Ev::PollWake { cpu: 5 })));
    // 5. CPU 5 pays its idle state's exit latency, flushes the CSD queue (sched_ttwu_pending:
    //    enqueue, not migrated; avg_idle update) and schedule_idle() picks R.
    assert_eq!(s.wake.cost_idle_exit - b.cost_idle_exit, s.c.idle_states[state5].exit_latency);
    assert_eq!(s.tasks[rid].counters.nr_migrations, 0);
    assert_eq!(s.cpus[5].idle_stamp, 0);
    assert_ne!(s.cpus[5].avg_idle as i64, avg0, "avg_idle took the ~{} ns idle period", s.now() - stamp);
    // Stats on the waker's CPU: ttwu_count, and ttwu_wake_remote on the MC domain.
    assert_eq!(s.sched[0].ttwu_count, cnt0 + 1);
    assert_eq!(s.dstat[0][1].ttwu_wake_remote, rem0 + 1);
    assert_eq!(s.wake.wakeups_sync, b.wakeups_sync + 1);
}

/// S2 — CPU 5 busy and no idle CPU in the LLC, nr_idle_scan = 0 from the LLC's real
/// utilisation: the waker enqueues directly under CPU 5's lock and kicks it with a resched IPI.
#[test]
fn s2_busy_llc_with_zero_scan_depth_enqueues_under_the_remote_lock_and_sends_a_resched_ipi() {
    let mut tasks = vec![
        pinned(task("W", vec![compute(60 * MSEC), Op::FutexWake { futex: 0, n: 1 }, compute(100 * USEC), Op::Exit]), &[0]),
        pinned(task("hog0", vec![compute(600 * MSEC), Op::Exit]), &[0]),
    ];
    for c in 1..8 {
        tasks.push(pinned(task(&format!("hog{c}"), vec![compute(600 * MSEC), Op::Exit]), &[c]));
    }
    // R shares CPU 5 with hog5, which runs first: R sleeps owed service (positive lag).
    tasks.push(start_on(task("R", vec![Op::FutexWait { futex: 0 }, compute(50 * USEC), Op::Exit]), 5));
    let r = tasks.len() - 1;
    let mut s = sim("test-smt2", v6_6(), &workload(tasks, 0, 1), 1);
    s.step_until(5 * MSEC);
    assert!(s.se[s.task_id(r) as usize].vlag > 0, "R left with a positive lag");
    // Step until W's try_to_wake_up() places R, keeping the state just before that event.
    let placed = |w: &wakesim_stats::WakeStats| w.sis_outcome.iter().sum::<u64>();
    let (b, depth, idle_any) = loop {
        let snap = (s.wake.clone(), s.llc_nr_idle_scan(0), (0..8).any(|c| s.is_available_idle(c)));
        let (t, _) = s.step().expect("events");
        assert!(t < 400 * MSEC, "no wakeup");
        if placed(&s.wake) > placed(&snap.0) {
            break snap;
        }
    };
    step_until_cond(&mut s, 400 * MSEC, "R enqueued", |s| s.wake.direct_enqueue > b.direct_enqueue || s.wake.wakelist_queued > b.wakelist_queued);
    assert!(s.now() > 150 * MSEC, "W computed 60 ms sharing CPU 0 and its core");
    assert_eq!(depth, 0, "8 busy CPUs: SIS_UTIL had turned the scan off");
    assert!(!idle_any, "no idle CPU in the LLC");
    // wake_affine_weight keeps prev (CPU 0 carries two tasks, CPU 5 one).
    assert_eq!(s.wake.affine_attempts, b.affine_attempts + 1);
    assert_eq!(s.wake.affine_moves, b.affine_moves);
    // select_idle_sibling: target 5 busy, recent = prev, no idle core, prev's sibling busy;
    // select_idle_cpu() returns at once (nr == 1): no scan, no probe → target 5.
    assert_eq!(s.wake.sis_scans, b.sis_scans);
    assert_eq!(s.wake.sis_probes, b.sis_probes);
    assert_eq!(sis(&s, SisOutcome::Fallback), b.sis_outcome[SisOutcome::Fallback as usize] + 1);
    assert_eq!(s.task_cpu(r), 5);
    // ttwu_queue_cond: same LLC and nr_running(5) > 0 → the waker locks rq 5 and enqueues.
    assert_eq!(s.wake.wakelist_queued, b.wakelist_queued);
    assert_eq!(s.wake.remote_enqueue, b.remote_enqueue + 1);
    // check_preempt_wakeup_fair: R (placed at V − lag) is the EEVDF pick → resched_curr(rq 5):
    // CPU 5 is busy, not polling → a reschedule IPI, and R runs as soon as it lands.
    let t_enq = s.now();
    let evs = until_running(&mut s, r, 5, 400 * MSEC);
    assert_eq!(s.wake.wakeup_preemptions, b.wakeup_preemptions + 1);
    assert_eq!(s.wake.ipis_resched, b.ipis_resched + 1);
    assert!(evs.iter().any(|e| matches!(e, Ev::Ipi { cpu: 5, .. })));
    assert!(s.now() - t_enq < 20 * USEC, "preempted at once, not at the next tick");
}

/// S3 — cross-LLC wakeup with wake_wide = 1: no affine, target = prev's LLC; whatever CPU it
/// lands on there, the wakelist is used (IPI unless the target polls).
#[test]
fn s3_wide_cross_llc_wakeup_stays_in_prevs_llc_and_uses_the_wakelist() {
    let tasks = vec![
        pinned(task("W", vec![compute(2 * MSEC), Op::Send { chan: 0, bytes: 4 }, compute(100 * USEC), Op::Exit]), &[0]),
        start_on(task("R", vec![Op::Recv { chan: 0, bytes: 4 }, compute(20 * USEC), Op::Exit]), 5),
        pinned(task("hog5", vec![sleep(200 * USEC), compute(10 * MSEC), Op::Exit]), &[5]),
    ];
    let mut s = sim("test-2x4", v6_6(), &workload(tasks, 1, 0), 1);
    s.step_until(MSEC);
    assert_eq!(s.task_cpu(1), 5);
    assert!(!s.is_available_idle(5), "prev is busy");
    // Flip counts of a 1:N waker: master ≥ slave · llc_size, slave ≥ llc_size.
    let (w, r) = (s.task_id(0) as usize, s.task_id(1) as usize);
    s.tasks[w].wakee_flips = 100;
    s.tasks[r].wakee_flips = 10;
    let b = s.wake.clone();
    step_until_cond(&mut s, 3 * MSEC, "W queued R", |s| s.wake.wakelist_queued > b.wakelist_queued || s.wake.direct_enqueue > b.direct_enqueue);
    assert_eq!(s.wake.wake_wide, b.wake_wide + 1);
    assert_eq!(s.wake.affine_attempts, b.affine_attempts, "want_affine = 0: no wake_affine");
    let target = s.task_cpu(1);
    assert!(s.m.share_cache(target, 5), "SIS searched prev's LLC: CPU {target}");
    assert!(!s.m.share_cache(target, 0));
    assert_eq!(s.wake.direct_enqueue, b.direct_enqueue, "cross-LLC: the target enqueues");
    assert!(s.on_wakelist(target, 1));
    until_running(&mut s, 1, target, 3 * MSEC);
    assert_eq!(s.wake.poll_wakes, b.poll_wakes + 1, "idle polling target: no IPI");
}

fn s4(hog_cpus: &[usize]) -> Sim {
    let mut tasks = vec![pinned(task("T", vec![compute(5 * MSEC), sleep(3 * MSEC), compute(3 * MSEC), Op::Exit]), &[7])];
    for n in ["hogA", "hogB"] {
        tasks.push(start_on(pinned(task(n, vec![compute(40 * MSEC), Op::Exit]), hog_cpus), hog_cpus[0] as u32));
    }
    let mut s = sim("test-2x4", v6_6(), &workload(tasks, 0, 0), 1);
    s.step_until(5 * MSEC - 10 * USEC);
    assert_eq!(s.running(7), Some(0));
    s
}

fn newly(s: &Sim) -> [[u64; 3]; 2] {
    let mut o = [[0; 3]; 2];
    for l in 0..3 {
        o[0][l] = s.dstat[7][l].lb_count[NEWLY];
        o[1][l] = s.dstat[7][l].lb_gained[NEWLY];
    }
    o
}

/// S4 — newidle after a block: CPU 7 blocks its only task; the walk goes SMT → MC, each level
/// within avg_idle, and a pull at MC stops it (PKG not visited).
#[test]
fn s4_newidle_after_a_block_walks_up_and_stops_on_a_pull() {
    let mut s = s4(&[4, 7]);
    assert!(s.rd_overloaded && s.cpus[7].avg_idle >= s.max_newidle_lb_cost(7, 0));
    let n0 = newly(&s);
    step_until_cond(&mut s, 6 * MSEC, "CPU 7 runs a pulled hog", |s| matches!(s.running(7), Some(1) | Some(2)));
    let n1 = newly(&s);
    assert_eq!([n1[0][0] - n0[0][0], n1[0][1] - n0[0][1], n1[0][2] - n0[0][2]], [1, 1, 0], "levels visited");
    assert_eq!(n1[1][1] - n0[1][1], 1, "pulled at MC");
    assert_eq!(s.cpus[7].idle_stamp, 0, "pulled: idle_stamp reset");
    assert!(!s.cpus[7].nohz_idle);
}

/// S4 without a pull: idle task, sched_goidle++, update_idle_core sets has_idle_cores, the tick
/// stops (NOHZ mask); the next wakeup updates avg_idle from the newidle idle_stamp.
#[test]
fn s4_newidle_without_a_pull_goes_idle_and_feeds_avg_idle_at_the_next_wakeup() {
    let mut s = s4(&[4]);
    let n0 = newly(&s);
    let goidle = s.sched[7].sched_goidle;
    s.llcs[1].has_idle_cores = false;
    step_until_cond(&mut s, 6 * MSEC, "CPU 7 idles", |s| s.idle_state(7).is_some());
    let n1 = newly(&s);
    assert_eq!([n1[0][0] - n0[0][0], n1[0][1] - n0[0][1], n1[0][2] - n0[0][2]], [1, 1, 1], "SMT, MC, PKG");
    assert_eq!(n1[1], n0[1], "nothing pulled");
    assert_eq!(s.sched[7].sched_goidle, goidle + 1);
    assert!(s.llc_has_idle_cores(7), "core {{7,15}} is idle: hint set");
    assert!(s.cpus[7].nohz_idle && s.nohz.idle_cpus.contains(7), "tick stopped: in the NOHZ mask");
    let stamp = s.cpus[7].idle_stamp;
    assert!(stamp > 0);
    let avg = s.cpus[7].avg_idle;
    step_until_cond(&mut s, 10 * MSEC, "T woken on CPU 7", |s| s.cpus[7].idle_stamp == 0);
    assert!(s.cpus[7].avg_idle != avg || avg == 2 * s.cpus[7].max_idle_balance_cost, "avg_idle updated (or at its cap)");
    // Busy again: by its first busy tick CPU 7 has left the NOHZ mask.
    let t = s.now();
    s.step_until(t + 2 * MSEC);
    assert_eq!(s.running(7), Some(0));
    assert!(!s.cpus[7].nohz_idle && !s.nohz.idle_cpus.contains(7));
}

/// S5: W on CPU 1 sends a bare function call (smp_call_function_single, no task) to idle
/// CPU 3 at ~5 ms. Returns the sim stepped to just before the call and the state snapshot.
fn s5(f: Features, non_polling: bool) -> Sim {
    let w = pinned(task("W", vec![compute(5 * MSEC), Op::CallFunc { cpu: 3, wait: false }, compute(MSEC), Op::Exit]), &[1]);
    let wl = workload(vec![w], 0, 0);
    let mut s = if non_polling {
        sim_with("test-smt2", &wl, 1, |c| {
            c.features = f;
            non_polling_idle(c)
        })
    } else {
        sim("test-smt2", f, &wl, 1)
    };
    s.step_until(5 * MSEC - 10 * USEC);
    assert!(s.is_available_idle(3));
    assert_eq!(s.is_polling_idle(3), !non_polling);
    s
}

struct S5 {
    poll_wakes: u64,
    ipis: u64,
    schedules: u64,
    newidle: u64,
    newidle_from_idle: u64,
}

fn s5_run(mut s: Sim) -> (Sim, S5) {
    let b = s.wake.clone();
    let (sc, ent, nt) = (s.sched[3].sched_count, s.newidle.entered, s.newidle.from_idle_no_task);
    s.step_until(5 * MSEC + 300 * USEC);
    assert!(s.cpus[3].csd.is_empty(), "the function ran");
    assert!(s.idle_state(3).is_some() && s.running(3).is_none(), "CPU 3 is back in idle");
    let d = S5 {
        poll_wakes: s.wake.poll_wakes - b.poll_wakes,
        ipis: s.wake.ipis_call_function - b.ipis_call_function,
        schedules: s.sched[3].sched_count - sc,
        newidle: s.newidle.entered - ent,
        newidle_from_idle: s.newidle.from_idle_no_task - nt,
    };
    (s, d)
}

/// S5 (pre-6.12) — the call to a polling idle CPU only sets NEED_RESCHED: the CPU leaves idle,
/// flushes the CSD, runs schedule_idle() → pick_next_task_fair() → newidle with nothing to run.
#[test]
fn s5_v6_6_function_call_to_a_polling_idle_cpu_runs_schedule_and_newidle() {
    let (_, d) = s5_run(s5(v6_6(), false));
    assert_eq!((d.poll_wakes, d.ipis), (1, 0), "a flag write, no IPI");
    assert_eq!(d.schedules, 1, "a spurious __schedule()");
    assert_eq!((d.newidle, d.newidle_from_idle), (1, 1), "newidle from the idle task");
}

/// S5 (6.12) — SM_IDLE: schedule_idle() with nr_running == 0 goes straight back to idle.
#[test]
fn s5_v6_12_sm_idle_returns_to_idle_without_newidle() {
    let (_, d) = s5_run(s5(Features::for_kernel("v6.12").unwrap(), false));
    assert_eq!((d.poll_wakes, d.ipis), (1, 0));
    assert_eq!(d.schedules, 1);
    assert_eq!(d.newidle, 0, "pick_next_task() skipped");
}

/// S5 control — a non-polling idle CPU gets a real IPI: the handler runs the function,
/// NEED_RESCHED stays clear, no schedule() at all.
#[test]
fn s5_function_call_to_a_non_polling_idle_cpu_is_an_ipi_without_schedule() {
    let (_, d) = s5_run(s5(v6_6(), true));
    assert_eq!((d.poll_wakes, d.ipis), (0, 1));
    assert_eq!(d.schedules, 0);
    assert_eq!(d.newidle, 0);
}

/// S5, the NOHZ kick variant (v6.6) — kick_ilb()'s CSD to a polling idle CPU sets NEED_RESCHED,
/// so nohz_csd_func() sees need_resched() and drops the idle balance; the CPU runs schedule()
/// and newidle instead (kernel/sched/core.c: nohz_csd_func(); Vincent Guittot's review of
/// K Prateek Nayak's 2024 RFC, https://lore.kernel.org/lkml/20240119084548.2788-1-kprateek.nayak@amd.com/).
#[test]
fn s5_nohz_kick_to_a_polling_idle_cpu_loses_the_idle_balance() {
    let wl = workload(vec![pinned(task("hog", vec![compute(50 * MSEC), Op::Exit]), &[0])], 0, 0);
    let mut s = sim("test-smt2", v6_6(), &wl, 1);
    s.step_until(10 * MSEC + 100 * USEC);
    assert!(s.is_polling_idle(3) && s.is_available_idle(3));
    let b = s.wake.clone();
    let (sc, ent, nt) = (s.sched[3].sched_count, s.newidle.entered, s.newidle.from_idle_no_task);
    let idle_lb = |s: &Sim| -> u64 { (0..8).map(|c| s.dstat[c].iter().map(|d| d.lb_count[IDLE]).sum::<u64>()).sum() };
    let lb0 = idle_lb(&s);
    s.kick_ilb_csd(0, 3);
    assert!(s.cpus[3].need_resched, "the flag write set NEED_RESCHED on the idle task");
    s.step_until(10 * MSEC + 300 * USEC);
    assert_eq!(s.wake.poll_wakes, b.poll_wakes + 1);
    assert_eq!(s.wake.ipis_sent, b.ipis_sent);
    assert_eq!(s.sched[3].sched_count, sc + 1, "schedule_idle() ran __schedule()");
    assert_eq!(s.newidle.entered, ent + 1, "pick_next_task_fair() found nothing: newidle");
    assert_eq!(s.newidle.from_idle_no_task, nt + 1);
    assert_eq!(idle_lb(&s), lb0, "nohz_csd_func() saw need_resched(): the idle balance was lost");
    assert!(s.idle_state(3).is_some() && s.running(3).is_none(), "back to idle");
}

/// Same kick to a non-polling idle CPU: an IPI, no schedule(), and the NOHZ balance runs.
#[test]
fn s5_nohz_kick_to_a_non_polling_idle_cpu_runs_the_idle_balance() {
    let wl = workload(vec![pinned(task("hog", vec![compute(50 * MSEC), Op::Exit]), &[0])], 0, 0);
    let mut s = sim_with("test-smt2", &wl, 1, non_polling_idle);
    s.step_until(10 * MSEC + 100 * USEC);
    assert!(!s.is_polling_idle(3) && s.is_available_idle(3));
    let b = s.wake.clone();
    let (sc, ent) = (s.sched[3].sched_count, s.newidle.entered);
    let idle_lb = |s: &Sim| -> u64 { (0..8).map(|c| s.dstat[c].iter().map(|d| d.lb_count[IDLE]).sum::<u64>()).sum() };
    let lb0 = idle_lb(&s);
    s.kick_ilb_csd(0, 3);
    assert!(!s.cpus[3].need_resched);
    s.step_until(10 * MSEC + 300 * USEC);
    assert_eq!(s.wake.ipis_call_function, b.ipis_call_function + 1);
    assert_eq!(s.wake.poll_wakes, b.poll_wakes);
    assert_eq!(s.sched[3].sched_count, sc, "no schedule() on an IPI that queued no task");
    assert_eq!(s.newidle.entered, ent);
    assert!(idle_lb(&s) > lb0, "the NOHZ idle balance ran from SCHED_SOFTIRQ");
    assert!(s.idle_state(3).is_some());
}
