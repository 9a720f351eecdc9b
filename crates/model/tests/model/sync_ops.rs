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
