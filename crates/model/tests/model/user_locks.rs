//! Per-CPU user-space spinlocks (`CpuSpinLock`/`CpuSpinUnlock`, schbench's `lock_this_cpu()`):
//! stacked lockers burn user time spinning, spread ones never contend, and migration while
//! holding or spinning releases and re-takes the right locks.
use crate::common::*;
use wakesim_engine::{Time, MSEC, SEC, USEC};
use wakesim_model::RunResult;
use wakesim_workloads::{Op, TaskSpec};

const LOCK: Op = Op::CpuSpinLock { set: 0 };
const UNLOCK: Op = Op::CpuSpinUnlock { set: 0 };

/// `lock; compute work; unlock` (optionally without the lock ops).
fn locker(name: &str, work: Time, locked: bool) -> TaskSpec {
    let p = if locked { vec![LOCK, compute(work), UNLOCK, Op::Exit] } else { vec![compute(work), Op::Exit] };
    task(name, p)
}

fn user_time(r: &RunResult) -> Time {
    r.stats.tasks.iter().map(|t| t.runtime_ns).sum()
}

#[test]
fn two_lockers_stacked_on_one_cpu_spin_away_the_holders_preempted_time() {
    let work = 20 * MSEC;
    let wl = |locked| workload(vec![pinned(locker("a", work, locked), &[2]), pinned(locker("b", work, locked), &[2])], 0, 0);
    let r = run("test-2x4", v6_6(), &wl(true), 1);
    let free = run("test-2x4", v6_6(), &wl(false), 1);
    let w = &r.stats.wake;
    assert!(!r.outcome.capped);
    assert_eq!(w.cpu_lock_acquires, 2);
    // The tick preempts the holder mid-work; the other one then spins on its lock.
    assert!(w.cpu_lock_contended >= 1, "{w:?}");
    assert!(w.cpu_lock_spin >= MSEC, "spin {}", w.cpu_lock_spin);
    // Spinning is user time of the spinner: the CPU does both computes plus the spin.
    let ut = user_time(&r);
    assert!(ut >= 2 * work + w.cpu_lock_spin, "user time {ut} < computes + spin {}", w.cpu_lock_spin);
    assert!(ut <= 2 * work + w.cpu_lock_spin + MSEC, "user time {ut}: more than computes + spin");
    assert!(r.outcome.end_time >= free.outcome.end_time + w.cpu_lock_spin, "locked {} vs free {}", r.outcome.end_time, free.outcome.end_time);
    let fw = &free.stats.wake;
    assert_eq!((fw.cpu_lock_acquires, fw.cpu_lock_spin), (0, 0));
}

#[test]
fn lockers_on_different_cpus_take_different_locks_and_never_spin() {
    let work = 20 * MSEC;
    let wl = workload(vec![pinned(locker("a", work, true), &[2]), pinned(locker("b", work, true), &[5])], 0, 0);
    let r = run("test-2x4", v6_6(), &wl, 1);
    let w = &r.stats.wake;
    assert_eq!(w.cpu_lock_acquires, 2);
    assert_eq!((w.cpu_lock_contended, w.cpu_lock_spin, w.cpu_lock_migrated), (0, 0, 0));
    assert!(r.outcome.end_time < work + MSEC, "end {}", r.outcome.end_time);
}

#[test]
fn separate_lock_arrays_do_not_contend_on_one_cpu() {
    // Two processes' arrays (set 0 and set 1): the same CPU, different locks.
    let work = 20 * MSEC;
    let b = task("b", vec![Op::CpuSpinLock { set: 1 }, compute(work), Op::CpuSpinUnlock { set: 1 }, Op::Exit]);
    let wl = workload(vec![pinned(locker("a", work, true), &[2]), pinned(b, &[2])], 0, 0);
    let r = run("test-2x4", v6_6(), &wl, 1);
    assert_eq!(r.stats.wake.cpu_lock_acquires, 2);
    assert_eq!(r.stats.wake.cpu_lock_spin, 0);
}

/// CPU 0 hosts a holder (`a`, may run on 0-1, 60 ms under the lock) and a hog pinned there;
/// `d` pinned to CPU 0 wants the same lock. The balancer can only move `a` to the idle CPU 1.
fn holder_moves_workload() -> wakesim_workloads::Workload {
    let a = start_on(pinned(task("a", vec![LOCK, compute(60 * MSEC), Op::Mark(1), UNLOCK, Op::Exit]), &[0, 1]), 0);
    let hog = pinned(task("hog", vec![compute(80 * MSEC), Op::Exit]), &[0]);
    let d = pinned(task("d", vec![compute(100 * USEC), LOCK, Op::Mark(2), UNLOCK, Op::Exit]), &[0]);
    workload(vec![a, hog, d], 0, 0)
}

#[test]
fn a_holder_migrated_while_holding_releases_the_lock_it_took() {
    let wl = holder_moves_workload();
    let mut s = sim("test-2x4", v6_6(), &wl, 1);
    assert!(s.run_checked(5 * SEC, 16), "every task exits: d got the lock a released");
    assert!(s.tasks[s.task_id(0) as usize].counters.nr_migrations >= 1, "a moved while holding CPU 0's lock");
    let at = |m: u32| s.marks.iter().find(|r| r.mark == m).expect("mark").time;
    assert!(at(2) > at(1), "d took CPU 0's lock only after a released it ({} vs {})", at(2), at(1));
    assert_eq!(s.wake.cpu_lock_acquires, 2);
    assert_eq!(s.wake.cpu_lock_contended, 1);
    assert!(s.cpu_locks.iter().all(|l| l.holder == u32::MAX && l.spinners.is_empty()));
}

#[test]
fn a_spinner_migrated_to_an_idle_cpu_takes_the_old_lock_at_release_then_retries_on_its_own() {
    // `a` (pinned to CPU 0) holds CPU 0's lock for 30 ms. `d` may run on 0-1; it wakes at 1 ms
    // on CPU 0 (CPU 1 runs `hog`) and spins on CPU 0's lock. When `hog` exits, idle CPU 1
    // pulls `d`, which keeps spinning there on CPU 0's lock. At a's unlock its spin is cut
    // short: it takes CPU 0's lock from CPU 1, sees the migration, releases it and takes
    // CPU 1's.
    let a = pinned(task("a", vec![LOCK, compute(30 * MSEC), Op::Mark(1), UNLOCK, Op::Exit]), &[0]);
    let hog = pinned(task("hog", vec![compute(10 * MSEC), Op::Exit]), &[1]);
    let d = start_on(pinned(task("d", vec![sleep(MSEC), LOCK, Op::Mark(2), UNLOCK, Op::Exit]), &[0, 1]), 0);
    let wl = workload(vec![a, hog, d], 0, 0);
    let mut s = sim("test-2x4", v6_6(), &wl, 1);
    assert!(s.run_checked(5 * SEC, 16));
    let w = &s.wake;
    assert_eq!(w.cpu_lock_migrated, 1, "{w:?}");
    assert_eq!(w.cpu_lock_acquires, 3, "a's, d's of CPU 0's lock, d's of CPU 1's");
    assert_eq!(s.task_cpu(2), 1);
    // d was running (spinning) on CPU 1 at the release: it saw it within the line transfers.
    let at = |m: u32| s.marks.iter().find(|r| r.mark == m).expect("mark").time;
    assert!(at(2) > at(1) && at(2) - at(1) < 5 * USEC, "release {} -> d done {}", at(1), at(2));
    // It spun alone on CPU 1 from its migration (~10 ms) to the release (~30 ms).
    assert!(w.cpu_lock_spin > 15 * MSEC, "spin {}", w.cpu_lock_spin);
}

/// 16 unpinned tasks on 8 CPUs, each 20 × (sleep 200 µs, lock, 700 µs, unlock): stacking,
/// wakeup migrations and balancing all happen.
fn crowd() -> wakesim_workloads::Workload {
    let tasks = (0..16)
        .map(|i| task(&format!("w{i}"), vec![Op::LoopStart { count: 20, end: 5 }, sleep(200 * USEC), LOCK, compute(700 * USEC), UNLOCK, Op::LoopEnd { start: 0 }, Op::Exit]))
        .collect();
    workload(tasks, 0, 0)
}

#[test]
fn a_crowd_of_lockers_keeps_the_lock_invariants_after_every_event() {
    let mut s = sim("test-smt2", v6_6(), &crowd(), 3);
    assert!(s.run_checked(5 * SEC, 1), "finished");
    assert!(s.wake.cpu_lock_contended > 0);
    assert!(s.cpu_locks.iter().all(|l| l.holder == u32::MAX && l.spinners.is_empty()), "all released");
}

#[test]
fn cpu_lock_runs_are_deterministic_for_a_seed() {
    let a = run("test-smt2", v6_6(), &crowd(), 7);
    let b = run("test-smt2", v6_6(), &crowd(), 7);
    assert!(!a.outcome.capped);
    assert_eq!(a.outcome.end_time, b.outcome.end_time);
    assert_eq!(format!("{:?}", a.stats.wake), format!("{:?}", b.stats.wake));
    assert_eq!(a.stats.wake.cpu_lock_acquires - a.stats.wake.cpu_lock_migrated, 16 * 20);
    assert!(a.stats.wake.cpu_lock_contended > 0, "16 lockers on 8 CPUs contend");
}
