//! Determinism: the same seed gives the same run, bit for bit; another seed gives another run
//! (docs/model.md, "Determinism").

use crate::common::*;
use wakesim_model::Features;

fn stats_json(machine: &str, seed: u64, graph_seed: u64) -> (String, u64, u64) {
    let n = wakesim_machine::preset(machine).unwrap().nr_cpus();
    let r = run(machine, v6_6(), &random_graph(graph_seed, n), seed);
    assert!(!r.outcome.capped);
    (r.stats.to_json(), r.outcome.end_time, r.events)
}

#[test]
fn same_seed_gives_identical_statistics() {
    for (machine, seed) in [("test-2x4", 7u64), ("test-smt2", 1234)] {
        let a = stats_json(machine, seed, 3);
        let b = stats_json(machine, seed, 3);
        assert_eq!(a.1, b.1, "{machine} seed {seed}: end time");
        assert_eq!(a.2, b.2, "{machine} seed {seed}: event count");
        assert!(a.0 == b.0, "{machine} seed {seed}: statistics differ");
    }
}

#[test]
fn different_seeds_give_different_runs() {
    // The graph has random compute and sleep durations drawn from per-task streams.
    let a = stats_json("test-2x4", 1, 3);
    let b = stats_json("test-2x4", 2, 3);
    assert_ne!(a.1, b.1, "end times of seeds 1 and 2");
    assert!(a.0 != b.0);
}

#[test]
fn same_seed_gives_identical_statistics_on_a_large_machine() {
    let wl = ping_pong(8, 200);
    let a = run("xeon-8269cy", v6_6(), &wl, 9);
    let b = run("xeon-8269cy", v6_6(), &wl, 9);
    assert!(!a.outcome.capped);
    assert_eq!(a.outcome.end_time, b.outcome.end_time);
    assert!(a.stats.to_json() == b.stats.to_json());
}

#[test]
fn a_tasks_random_draws_do_not_depend_on_features_or_on_tasks_added_after_it() {
    use wakesim_engine::USEC;
    use wakesim_workloads::{Dur, Op};
    let x = || {
        task(
            "x",
            vec![
                Op::LoopStart { count: 50, end: 3 },
                Op::Compute(Dur::Exp { mean: 50 * USEC }),
                Op::Sleep(Dur::Exp { mean: 100 * USEC }),
                Op::LoopEnd { start: 0 },
                Op::Exit,
            ],
        )
    };
    // The state of x's stream after the run: every run draws the same 100 samples from it.
    let end_state = |f: Features, extra: bool| {
        let mut tasks = vec![x()];
        if extra {
            tasks.extend(random_graph(9, 8).tasks);
        }
        let mut s = sim("test-smt2", f, &workload(tasks, 16, 16), 4);
        assert!(s.run_checked(10 * wakesim_engine::SEC, 0));
        s.tasks[s.task_id(0) as usize].rng.clone().next_u64()
    };
    let base = end_state(v6_6(), false);
    assert_eq!(end_state(v6_6(), true), base, "other tasks added after x");
    assert_eq!(end_state(feat("-SIS_UTIL"), false), base, "a feature flipped");
    let mut other_seed = sim("test-smt2", v6_6(), &workload(vec![x()], 0, 0), 5);
    assert!(other_seed.run_checked(10 * wakesim_engine::SEC, 0));
    assert_ne!(other_seed.tasks[other_seed.task_id(0) as usize].rng.clone().next_u64(), base, "the seed matters");
}

#[test]
fn seeds_start_a_run_at_different_points_of_the_tick_so_fixed_workloads_vary_too() {
    // A pipe ping-pong draws no random numbers; only where the run starts in the tick period
    // differs between seeds, and pairs sharing CPUs meet the tick at different points.
    let wl = ping_pong(6, 2_000);
    let end = |seed| run("test-smt2", v6_6(), &wl, seed).outcome.end_time;
    let ends: Vec<_> = (1..=4).map(end).collect();
    assert!(ends.iter().any(|&e| e != ends[0]), "four seeds, one end time: {ends:?}");
    assert_eq!(end(3), ends[2], "the same seed still repeats exactly");
}

#[test]
fn the_tick_phase_of_seed_1_is_zero_and_every_phase_lies_inside_the_period() {
    let t = wakesim_model::tunables::Tunables::for_cpus(8);
    assert_eq!(t.phase_for_seed(1), 0);
    let phases: Vec<_> = (1..=8).map(|s| t.phase_for_seed(s)).collect();
    assert!(phases.iter().all(|&p| p < t.tick_nsec()), "{phases:?}");
    let mut d = phases.clone();
    d.sort_unstable();
    d.dedup();
    assert_eq!(d.len(), phases.len(), "distinct phases: {phases:?}");
}
