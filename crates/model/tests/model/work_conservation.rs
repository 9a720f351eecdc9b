//! The work-conservation checker (`wakesim_model::waste`, after Lozi et al., "The Linux
//! Scheduler: a Decade of Wasted Cores", EuroSys 2016): it flags the paper's overload-on-wakeup
//! bug, stays at zero where nothing waits, ignores what affinity forbids, and changes nothing.

use super::common::*;
use wakesim_engine::{Time, MSEC};
use wakesim_model::waste::DEFAULT_WASTED_THRESHOLD;
use wakesim_model::{Features, RunResult, Sim};
use wakesim_workloads::Workload;

const OVERLOAD: &str = include_str!("../../../../examples/overload-on-wakeup.toml");

fn overload() -> Workload {
    wakesim_workloads::from_toml_str(OVERLOAD, "overload-on-wakeup.toml").expect("example parses")
}

fn run_for(machine: &str, f: Features, wl: &Workload, cap: Time, threshold: Time) -> RunResult {
    let mut cfg = config(machine, f, 1);
    cfg.duration_cap = cap;
    Sim::new(cfg, wl).expect("sim").with_wasted_threshold(threshold).run()
}

fn newest() -> Features {
    Features::for_kernel(wakesim_model::features::NEWEST_KERNEL).unwrap()
}

#[test]
fn overload_on_wakeup_is_flagged_with_a_bounded_total() {
    let wl = overload();
    for (kernel, f) in [("v6.6", v6_6()), ("newest", newest())] {
        let r = run_for("test-2x4", f, &wl, 200 * MSEC, DEFAULT_WASTED_THRESHOLD);
        let w = &r.stats.wasted;
        assert_eq!(w.threshold_ns, DEFAULT_WASTED_THRESHOLD);
        assert!(w.intervals >= 5, "{kernel}: {w:?}");
        assert!(w.wasted_ns >= 10 * MSEC, "{kernel}: {w:?}");
        // Waste needs a waiting task that may run anywhere: the producer or the consumer (the
        // hogs are pinned to LLC 0). Each ns one of them waits can idle at most the 15 other CPUs.
        let movable_wait: u64 = r.stats.tasks.iter().filter(|t| !t.name.starts_with("hog")).map(|t| t.wait_ns).sum();
        assert!(w.wasted_ns <= 15 * movable_wait, "{kernel}: wasted {} vs waits {movable_wait}", w.wasted_ns);
        assert!(!w.worst.is_empty() && w.worst.len() <= 5);
        for pair in w.worst.windows(2) {
            assert!(pair[0].dur_ns >= pair[1].dur_ns, "worst intervals are sorted");
        }
        for iv in &w.worst {
            assert!(iv.dur_ns > DEFAULT_WASTED_THRESHOLD && iv.start_ns + iv.dur_ns <= 200 * MSEC, "{iv:?}");
            assert_ne!(iv.idle_cpu, iv.waiting_cpu);
            // LLC 1 (4-7,12-15) shares only the PKG domain with LLC 0.
            let llc1 = |c: u32| (4..8).contains(&(c % 8));
            if llc1(iv.idle_cpu) != llc1(iv.waiting_cpu) {
                assert_eq!(iv.level, "PKG", "{iv:?}");
            }
        }
    }
}

#[test]
fn a_higher_threshold_flags_fewer_intervals() {
    let wl = overload();
    let counts: Vec<(u64, u64)> = [0, DEFAULT_WASTED_THRESHOLD, 2 * MSEC, 50 * MSEC]
        .iter()
        .map(|&t| {
            let w = run_for("test-2x4", newest(), &wl, 100 * MSEC, t).stats.wasted;
            (w.intervals, w.wasted_ns)
        })
        .collect();
    for p in counts.windows(2) {
        assert!(p[0].0 >= p[1].0 && p[0].1 >= p[1].1, "{counts:?}");
    }
    assert!(counts[0].0 > counts[2].0, "{counts:?}");
    assert_eq!(counts[3], (0, 0), "no single wait lasts 50 ms: {counts:?}");
}

#[test]
fn perf_bench_sched_pipe_on_an_idle_machine_wastes_nothing() {
    let wl = wakesim_workloads::from_command_line(&["perf", "bench", "sched", "pipe", "-l", "20000"].map(String::from)).unwrap();
    for f in [v6_6(), newest()] {
        let w = run("test-smt2", f, &wl, 1).stats.wasted;
        assert_eq!((w.intervals, w.wasted_ns), (0, 0), "{w:?}");
    }
}

#[test]
fn tasks_pinned_to_one_cpu_are_not_waste() {
    // Two hogs pinned to CPU 0 on an otherwise idle machine: one always waits, but it may run
    // nowhere else, so no idle CPU is wasted.
    let wl = workload(vec![pinned(task("a", vec![compute(20 * MSEC)]), &[0]), pinned(task("b", vec![compute(20 * MSEC)]), &[0])], 0, 0);
    let r = run("test-smt2", v6_6(), &wl, 1);
    assert!(r.stats.tasks.iter().map(|t| t.wait_ns).sum::<u64>() > 10 * MSEC);
    assert_eq!(r.stats.wasted.intervals, 0, "{:?}", r.stats.wasted);
}

#[test]
fn the_checker_is_an_observer() {
    // Thresholds 0 (everything is an interval) and MAX (nothing is) give the same run.
    let wl = overload();
    let a = run_for("test-2x4", newest(), &wl, 50 * MSEC, 0);
    let b = run_for("test-2x4", newest(), &wl, 50 * MSEC, Time::MAX);
    assert!(a.stats.wasted.intervals > 0);
    assert_eq!(b.stats.wasted.intervals, 0);
    assert_eq!(a.events, b.events);
    assert_eq!(a.outcome.end_time, b.outcome.end_time);
    let (mut sa, mut sb) = (a.stats.clone(), b.stats.clone());
    sa.wasted = Default::default();
    sb.wasted = Default::default();
    assert_eq!(sa.to_json(), sb.to_json());
}
