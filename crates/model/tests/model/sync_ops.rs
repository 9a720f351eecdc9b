//! The behaviour language's synchronisation and timer ops: barriers, mutexes, periodic timers.
use crate::common::*;
use wakesim_engine::{MSEC, USEC};
use wakesim_workloads::{Dur, Op, TaskSpec, Workload};

fn wl(tasks: Vec<TaskSpec>) -> Workload {
    Workload { name: "ops".into(), tasks, channels: vec![], futexes: 0, reporter: Box::new(Elapsed), duration: None }
}

#[test]
fn barrier_releases_all_parties_every_round() {
    let n = 6u32;
    let rounds = 50u64;
    let tasks = (0..n)
        .map(|i| {
            TaskSpec::new(
                format!("w{i}"),
                vec![
                    Op::LoopStart { count: rounds, end: 3 },
                    Op::Compute(Dur::Uniform { lo: 10 * USEC, hi: 50 * USEC }),
                    Op::Barrier { id: 0, parties: n },
                    Op::LoopEnd { start: 0 },
                    Op::Exit,
                ],
            )
        })
        .collect();
    let r = run("test-2x4", v6_6(), &wl(tasks), 3);
    assert!(!r.outcome.capped);
    assert_eq!(r.stats.wake.wakeups, (n as u64 - 1) * rounds);
}

#[test]
fn mutex_serialises_its_critical_sections() {
    // 4 tasks each hold the lock for 100 us, 20 times: at least 8 ms of serial time.
    let tasks = (0..4)
        .map(|i| {
            TaskSpec::new(
                format!("m{i}"),
                vec![
                    Op::LoopStart { count: 20, end: 4 },
                    Op::Lock { id: 0 },
                    Op::Compute(Dur::Fixed(100 * USEC)),
                    Op::Unlock { id: 0 },
                    Op::LoopEnd { start: 0 },
                    Op::Exit,
                ],
            )
        })
        .collect();
    let r = run("test-2x4", v6_6(), &wl(tasks), 1);
    assert!(!r.outcome.capped);
    assert!(r.outcome.end_time >= 8 * MSEC, "end {}", r.outcome.end_time);
}

/// One task taking and releasing an uncontended mutex costs nothing beyond its compute: glibc's
/// fast path is a user-space cmpxchg / xchg, no syscall (nptl/lowlevellock.c).
#[test]
fn an_uncontended_mutex_is_taken_and_released_in_user_space() {
    let body = |locked: bool| {
        let mut b = vec![Op::Compute(Dur::Fixed(USEC))];
        if locked {
            b = vec![Op::Lock { id: 0 }, Op::Compute(Dur::Fixed(USEC)), Op::Unlock { id: 0 }];
        }
        wl(vec![task("solo", looped(1000, b))])
    };
    let (plain, locked) = (run("test-2x4", v6_6(), &body(false), 1), run("test-2x4", v6_6(), &body(true), 1));
    assert_eq!(locked.stats.wake.wakeups, 0);
    assert_eq!(locked.outcome.end_time, plain.outcome.end_time, "no syscall was charged");
}

/// glibc does not hand a released mutex to the waiter it wakes (`__lll_lock_wait()` retries its
/// `xchg`): a task that comes to the free mutex before the woken waiter runs takes it, and the
/// waiter sleeps a second time. A hand-off would have given it to the waiter and put the
/// latecomer to sleep instead.
#[test]
fn a_woken_waiter_retries_and_a_task_that_comes_first_takes_the_mutex() {
    let holder = vec![Op::Lock { id: 0 }, Op::Compute(Dur::Fixed(100 * USEC)), Op::Unlock { id: 0 }, Op::Compute(Dur::Fixed(100 * USEC)), Op::Exit];
    // Blocks 10 us in, while the holder has it.
    let waiter = vec![Op::Compute(Dur::Fixed(10 * USEC)), Op::Lock { id: 0 }, Op::Unlock { id: 0 }, Op::Exit];
    // Comes 0.5 us after the release: the waiter's wakeup (syscall, ttwu, IPI, idle exit) takes longer.
    let barger = vec![Op::Compute(Dur::Fixed(100 * USEC + 500)), Op::Lock { id: 0 }, Op::Compute(Dur::Fixed(50 * USEC)), Op::Unlock { id: 0 }, Op::Exit];
    let w = wl(vec![pinned(task("holder", holder), &[0]), pinned(task("waiter", waiter), &[2]), pinned(task("barger", barger), &[4])]);
    let mut s = sim("test-2x4", v6_6(), &w, 1);
    assert!(s.run_checked(10 * MSEC, 1000), "all three finish");
    let t = |i: usize| &s.tasks[s.task_id(i) as usize];
    // (An exit counts as a voluntary switch unless the run ends with it: wakeups count sleeps.)
    assert_eq!(t(2).counters.nr_wakeups, 0, "the latecomer found the mutex free and never slept");
    assert_eq!(t(1).counters.nr_wakeups, 2, "the waiter slept, woke to a taken mutex and slept again");
    assert!(t(2).exit_time < t(1).exit_time, "the latecomer finished first");
}

#[test]
fn periodic_timer_keeps_the_period() {
    let t = TaskSpec::new(
        "periodic",
        vec![
            Op::LoopStart { count: 10, end: 3 },
            Op::Compute(Dur::Fixed(100 * USEC)),
            Op::SleepUntilNext { period: MSEC },
            Op::LoopEnd { start: 0 },
            Op::Exit,
        ],
    );
    let r = run("test-2x4", v6_6(), &wl(vec![t]), 1);
    let end = r.outcome.end_time;
    // Boundaries are counted from the first call (after 100 us of compute): 10 periods later.
    assert!((10 * MSEC + 100 * USEC..10 * MSEC + 400 * USEC).contains(&end), "end {end}");
}
