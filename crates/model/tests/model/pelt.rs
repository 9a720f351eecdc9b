//! PELT end to end: signals of running, sleeping and migrating tasks as the scheduler sees them
//! (kernel/sched/pelt.c: ___update_load_sum(), ___update_load_avg(); the uses in fair.c).

use crate::common::*;
use wakesim_engine::{MSEC, SEC};
use wakesim_model::pelt::LOAD_AVG_MAX;
use wakesim_workloads::{Dur, Op};

#[test]
fn running_task_util_reaches_half_capacity_after_32ms() {
    // The task first sleeps 1 s so that whatever its signals started at has decayed to ~0
    // (2^-30), then runs without a break.
    let t = pinned(task("hog", vec![sleep(SEC), compute(200 * MSEC), Op::Exit]), &[2]);
    let mut s = sim("test-smt2", v6_6(), &workload(vec![t], 0, 0), 1);
    s.step_until(SEC);
    assert!(s.sync_task_pelt(0).util_avg <= 2, "decayed while asleep");
    s.step_until(SEC + 32 * MSEC);
    assert_eq!(s.running(2), Some(0));
    let a = s.sync_task_pelt(0);
    // 1024·(1 − y^(32 ms / 1.024 ms)) ≈ 503.
    assert!((470..=540).contains(&a.util_avg), "util_avg after 32 ms: {}", a.util_avg);
    let cpu = s.sync_cpu_pelt(2);
    assert!((470..=540).contains(&cpu.util_avg), "the CPU's util follows its only task: {}", cpu.util_avg);
    s.step_until(SEC + 200 * MSEC - MSEC);
    let a = s.sync_task_pelt(0);
    assert!(a.util_avg >= 1000, "converges to capacity: {}", a.util_avg);
}

#[test]
fn sleeping_task_util_halves_every_32ms() {
    let t = pinned(task("t", vec![compute(300 * MSEC), sleep(200 * MSEC), Op::Exit]), &[1]);
    let mut s = sim("test-smt2", v6_6(), &workload(vec![t], 0, 0), 1);
    s.step_until(300 * MSEC + 100_000);
    let u0 = s.sync_task_pelt(0).util_avg;
    assert!(u0 > 1000);
    s.step_until(300 * MSEC + 100_000 + 32 * 1024 * 1024);
    let u1 = s.sync_task_pelt(0).util_avg;
    let r = u1 as f64 / u0 as f64;
    assert!((0.45..0.56).contains(&r), "after 32 periods asleep: {u0} -> {u1}");
}

#[test]

fn running_task_load_avg_tracks_its_weight() {
    // __update_load_avg_se(): ___update_load_sum(.., load = !!se->on_rq, ..) then
    // ___update_load_avg(sa, se_weight(se)): an always-runnable task's load_avg → its weight.
    let tasks = vec![
        pinned(task("n0", vec![compute(300 * MSEC), Op::Exit]), &[1]),
        nice(pinned(task("n5", vec![compute(300 * MSEC), Op::Exit]), &[2]), 5),
    ];
    let mut s = sim("test-smt2", v6_6(), &workload(tasks, 0, 0), 1);
    s.step_until(250 * MSEC);
    let l0 = s.sync_task_pelt(0).load_avg;
    let l5 = s.sync_task_pelt(1).load_avg;
    assert!((950..=1024).contains(&l0), "nice 0 load_avg {l0} (weight 1024)");
    assert!((310..=335).contains(&l5), "nice 5 load_avg {l5} (weight 335)");
    // The CPU's load is the sum over its tasks: one nice-0 task → ~1024.
    let c = s.sync_cpu_pelt(1).load_avg;
    assert!((950..=1024).contains(&c), "cpu load_avg {c}");
    assert!(l0.abs_diff(c) <= 30, "task load {l0} vs its CPU's {c}");
}

#[test]

fn cfs_rq_load_sum_and_load_avg_agree_across_migrations() {
    // After attach_entity_load_avg(): cfs load_avg += se.load_avg and cfs load_sum += se_weight ·
    // se.load_sum = se.load_avg · divider, so load_avg ≈ load_sum / divider at all times.
    let busy = |n: String| {
        task(&n, vec![
            Op::LoopStart { count: 30, end: 3 },
            Op::Compute(Dur::Uniform { lo: MSEC, hi: 5 * MSEC }),
            Op::Sleep(Dur::Uniform { lo: MSEC, hi: 5 * MSEC }),
            Op::LoopEnd { start: 0 },
            Op::Exit,
        ])
    };
    let tasks = (0..12).map(|i| busy(format!("t{i}"))).collect();
    let mut s = sim("test-smt2", v6_6(), &workload(tasks, 0, 0), 3);
    let mut worst = (0u64, 0u64, 0usize, 0u64);
    s.step_until_with(150 * MSEC, |s, t, _| {
        for c in 0..s.nr_cpus() {
            let a = s.cpus[c].cfs.avg;
            let div = LOAD_AVG_MAX - 1024 + a.period_contrib;
            let from_sum = a.load_sum / div;
            // Within a period load_sum grows before load_avg is recomputed: allow 5 % + 16.
            let tol = a.load_avg.max(from_sum) / 20 + 16;
            if a.load_avg.abs_diff(from_sum) > tol && a.load_avg.abs_diff(from_sum) > worst.0.abs_diff(worst.1) {
                worst = (a.load_avg, from_sum, c, t);
            }
        }
    });
    assert!(s.wake.migrations_wakeup + s.wake.migrations_balance > 0, "the test needs migrations");
    assert_eq!(worst, (0, 0, 0, 0), "(load_avg, load_sum/divider, cpu, time) disagree");
}

#[test]

fn new_task_starts_with_full_load_and_half_the_spare_capacity_as_util() {
    let t = pinned(task("new", vec![compute(10 * MSEC), Op::Exit]), &[3]);
    let mut s = sim("test-smt2", v6_6(), &workload(vec![t], 0, 0), 1);
    s.step_until(10_000);
    let a = s.tasks[s.task_id(0) as usize].avg;
    assert!(a.load_avg >= 1000, "load_avg = scale_load_down(weight) at fork: {}", a.load_avg);
    assert!((500..=512).contains(&a.util_avg), "(capacity − cfs util)/2 on an empty CPU: {}", a.util_avg);
}

/// A pipe ping-pong pair in task group 1, both tasks pinned to `cpus`, run for 20 ms; the
/// run's `tg->load_avg` updates.
fn grouped_pair_tg_updates(cpus: [usize; 2]) -> u64 {
    grouped_pair_tg_stats(cpus).tg_updates
}

/// The same pair's wakeup-path counters (the `tg->load_avg` line's writes and stale reads).
fn grouped_pair_tg_stats(cpus: [usize; 2]) -> wakesim_stats::WakeStats {
    let mut wl = ping_pong(1, 1_000_000);
    for (t, cpu) in wl.tasks.iter_mut().zip(cpus) {
        t.group = 1;
        t.allowed = Some(wakesim_machine::CpuSet::from_cpus([cpu]));
    }
    sim_with("test-2x4", &wl, 1, |cfg| cfg.duration_cap = 20 * MSEC).run().stats.wake
}

#[test]
fn a_grouped_cfs_rq_propagates_its_load_once_a_pelt_period_not_at_every_enqueue() {
    // update_load_avg(): update_tg_load_avg() runs when update_cfs_rq_load_avg() decayed, that
    // is once a PELT period (1024 × 1024 ns) at most, or at an attach or detach. Two tasks
    // ping-ponging on one CPU enqueue and dequeue hundreds of thousands of times in 20 ms and
    // never migrate: at most one update per period, about 19.
    let updates = grouped_pair_tg_updates([2, 2]);
    assert!(updates <= 20 * MSEC / 1_048_576 + 2, "{updates} tg->load_avg updates in 20 ms on one CPU");
    // On two CPUs each cfs_rq propagates on its own: at most twice as many.
    let updates = grouped_pair_tg_updates([2, 4]);
    assert!(updates <= 2 * (20 * MSEC / 1_048_576 + 2), "{updates} tg->load_avg updates in 20 ms on two CPUs");
}

#[test]
fn a_grouped_task_attached_to_a_cpu_propagates_its_load_at_once() {
    // enqueue_entity() → update_load_avg(DO_ATTACH): attach_entity_load_avg() then
    // update_tg_load_avg(), without waiting for a PELT period. Six new tasks of one group on six
    // idle CPUs, stopped before any period ends: six updates of tg->load_avg.
    let mut wl = hogs(6, 10 * MSEC);
    for t in &mut wl.tasks {
        t.group = 1;
    }
    let r = sim_with("test-2x4", &wl, 1, |cfg| cfg.duration_cap = 500_000).run();
    assert!(r.stats.wake.tg_updates >= 6, "{} updates after six attaches", r.stats.wake.tg_updates);
}

#[test]
fn a_group_on_one_cpu_reads_tg_load_avg_from_its_own_cache() {
    // update_cfs_group() reads tg->load_avg at every enqueue and dequeue; with only one CPU
    // writing it, that CPU's copy is always current: no read pulls the line.
    let w = grouped_pair_tg_stats([2, 2]);
    assert!(w.tg_updates > 0, "the pair's cfs_rq propagates its load");
    assert_eq!(w.tg_read_misses, 0, "stale reads of a line only this CPU writes");
}

#[test]
fn a_group_on_two_cpus_pulls_tg_load_avg_back_after_the_other_cpus_writes() {
    // Each CPU's write invalidates the other's copy, so its next update_cfs_group() read pulls
    // the line over: at least one stale read, and never more than there were writes (a copy
    // goes stale only through another CPU's write).
    let w = grouped_pair_tg_stats([2, 4]);
    assert!(w.tg_read_misses >= 1, "no stale read with two writers ({} writes)", w.tg_updates);
    assert!(w.tg_read_misses <= w.tg_updates, "{} stale reads after {} writes", w.tg_read_misses, w.tg_updates);
}

#[test]
fn the_first_read_after_a_write_holds_the_line_and_later_readers_share_it() {
    use wakesim_model::data::ReadMostlyLine;
    let mut l = ReadMostlyLine::new(4);
    // CPU 1 writes at t=100: 50 ns transfer, the line is busy until 150; only CPU 1 is current.
    assert_eq!(l.write(1, 100, 50, 0), 50);
    assert!(l.is_current(1) && !l.is_current(2));
    // The first read (CPU 2 at 120) waits 30 ns for the write and holds the line for its own
    // 40 ns transfer, downgrading the writer's copy: busy until 190.
    assert_eq!(l.read(2, 120, 40), 70);
    assert_eq!(l.line.free_at, 190);
    assert!(l.is_current(2));
    // The next reader waits for that downgrade only, then shares the line without holding it.
    assert_eq!(l.read(3, 130, 40), 100);
    assert_eq!(l.read(0, 200, 40), 40);
    assert_eq!((l.read_misses, l.read_wait, l.line.free_at), (3, 90, 190));
    // The writer is still the owner; the next write invalidates the copies and holds the line.
    assert_eq!(l.line.owner, 1);
    assert_eq!(l.write(2, 200, 50, 0), 50);
    assert!(!l.shared && !l.is_current(3));
    assert_eq!(l.version, 2);
}

/// Task A computes 100 ms on CPU 1 and then blocks on a pipe; CPU 1 idles. After 64 ms B, on
/// CPU 5 in the other LLC, writes to the pipe and keeps running, so A's wakeup moves it to
/// CPU 5 off its idle CPU. Returns A's util_avg as it blocked and as it arrived on CPU 5.
fn util_before_and_after_a_wakeup_off_an_idle_cpu(f: wakesim_model::Features) -> (u64, u64) {
    let a = start_on(pinned(task("a", vec![compute(100 * MSEC), Op::Recv { chan: 0, bytes: 1 }, Op::Exit]), &[1, 5]), 1);
    let b = start_on(pinned(task("b", vec![sleep(164 * MSEC), Op::Send { chan: 0, bytes: 1 }, compute(10 * MSEC), Op::Exit]), &[5]), 5);
    let mut s = sim("test-2x4", f, &workload(vec![a, b], 1, 0), 1);
    step_until_cond(&mut s, 150 * MSEC, "A blocks", |s| s.running(1).is_none() && s.now() > 100 * MSEC);
    let before = s.sync_task_pelt(0).util_avg;
    step_until_cond(&mut s, 200 * MSEC, "A queued on CPU 5", |s| s.task_cpu(0) == 5 && (s.nr_running(5) == 2 || s.running(5) == Some(0)));
    assert!(s.now() < 165 * MSEC, "A arrived at {} ns", s.now());
    (before, s.sync_task_pelt(0).util_avg)
}

#[test]
fn a_wakee_migrating_off_an_idle_cpu_arrives_with_its_sleep_decayed() {
    // migrate_se_pelt_lag() (v6.0, e2f3e35f1f5a): the old cfs_rq was last updated when A
    // blocked, so its sums are decayed to an estimate of now from the idle rq's clocks: 64 ms
    // at PELT's 32 ms half-life leave a quarter.
    let (before, after) = util_before_and_after_a_wakeup_off_an_idle_cpu(v6_6());
    assert!(before > 850, "util after 100 ms of running: {before}");
    let r = after as f64 / before as f64;
    assert!((0.2..0.3).contains(&r), "{before} -> {after} after 64 ms asleep (2^-2 = 0.25)");
}

#[test]
fn before_v6_0_a_wakee_migrating_off_an_idle_cpu_keeps_the_util_it_slept_with() {
    // remove_entity_load_avg()'s sync_entity_load_avg() brings the sums only to the old
    // cfs_rq's last update (A's dequeue), and attach_entity_load_avg() on the new CPU takes
    // them as they are: the sleep is never decayed (the inflation e2f3e35f1f5a fixed).
    let (before, after) = util_before_and_after_a_wakeup_off_an_idle_cpu(feat("-MIGRATE_PELT_LAG"));
    assert!(after as f64 >= 0.95 * before as f64, "{before} -> {after}");
}
