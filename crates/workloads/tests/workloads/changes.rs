//! Issue 3's benchmark-level checks at reduced size: the changes move the benchmarks the way
//! their authors reported, on the machine and kernel they were measured on.

use crate::common::*;
use wakesim_machine::CpuSet;
use wakesim_model::{Config, Features, RunResult, Sim};
use wakesim_workloads::{Dur, Op, TaskSpec, Workload};

fn run_on(machine: &str, kernel: &str, changes: &[&str], cmd: &str, cap_s: f64) -> (RunResult, f64) {
    run_wl(machine, kernel, changes, build(machine, cmd), cap_s)
}

fn run_wl(machine: &str, kernel: &str, changes: &[&str], w: Workload, cap_s: f64) -> (RunResult, f64) {
    let m = wakesim_machine::preset(machine).unwrap();
    let costs = wakesim_costs::profile_for(&m.cost_profile).unwrap();
    let mut f = Features::for_kernel(kernel).unwrap();
    f.apply(&changes.join(",")).unwrap();
    let cap = (cap_s * 1e9) as u64;
    let cap = w.duration.map_or(cap, |d| d.min(cap));
    let cfg = Config { machine: m, costs, features: f, seed: 1, duration_cap: cap, noise: wakesim_model::NoiseProfile::none(), governor: wakesim_model::GovernorKind::Ewma, task_groups: wakesim_model::TaskGroups::Root };
    let r = Sim::new(cfg, &w).unwrap().run();
    let metric = w.reporter.metric(&r.outcome).value;
    (r, metric)
}

/// Tianchen Ding (2022): the idle-target wakelist raised UnixBench pipe-based context switching
/// by 11 % and made hackbench faster on an 8269CY with v5.19. The 11 % was measured with 104
/// copies (`wakesim reproduce ttwu-queue-idle/context1` checks that size); one copy, as here,
/// can only show the direction: how much it gains depends on the pair of cores it lands on
/// (their mesh offsets). A short hackbench run is dominated by where the start's wakeups land,
/// so for hackbench it checks the mechanism instead: wakers stop taking the target's rq lock.
#[test]
fn ttwu_queue_idle_speeds_up_context_switching_and_hackbench_wakers_on_xeon_8269cy() {
    let (_, base) = run_on("xeon-8269cy", "v5.19", &[], "context1 1", 2.0);
    let (_, chg) = run_on("xeon-8269cy", "v5.19", &["+TTWU_QUEUE_IDLE"], "context1 1", 2.0);
    assert!(chg > base, "context1 lps {base} -> {chg}");
    // Share of wakeups the waker enqueued under the target's rq lock.
    let remote_locked = |changes: &[&str]| {
        let (r, _) = run_on("xeon-8269cy", "v5.19", changes, "hackbench -g 1 -l 1000", 10.0);
        r.stats.wake.remote_enqueue as f64 / r.stats.wake.wakeups as f64
    };
    let (base, chg) = (remote_locked(&[]), remote_locked(&["+TTWU_QUEUE_IDLE"]));
    assert!(chg < 0.5 * base, "wakeups enqueued under a remote rq lock {base:.3} -> {chg:.3}");
}

/// Tianchen Ding (2022): with the idle-target wakelist, old schbench -m 2 -t 8 on an 8269CY
/// had lower wakeup latency at every percentile (p50/p90/p99/p99.9 10/16/17/23 µs -> 6/9/10/14):
/// each message thread wakes its 8 workers in a row, and each wake no longer takes the target's
/// rq lock and enqueues remotely, so the later workers of a batch start sooner.
#[test]
fn ttwu_queue_idle_lowers_old_schbench_wakeup_latency_on_xeon_8269cy() {
    let pct = |changes: &[&str]| {
        let w = build("xeon-8269cy", "schbench --v1 -m 2 -t 8 -r 7");
        let (r, _) = run_wl("xeon-8269cy", "v5.19", changes, w, 10.0);
        let out = build("xeon-8269cy", "schbench --v1 -m 2 -t 8 -r 7").reporter.render(&r.outcome);
        // The final table: "\t  50.0th: 9          (506 samples)" … "99.9th".
        let table = &out[out.rfind("Latency percentiles").expect("a percentile table")..];
        let v: Vec<u64> = table
            .lines()
            .filter_map(|l| l.split_once("th:").map(|(_, r)| r.split_whitespace().next().unwrap().parse().unwrap()))
            .collect();
        assert_eq!(v.len(), 7, "{out}");
        v
    };
    let (base, chg) = (pct(&[]), pct(&["+TTWU_QUEUE_IDLE"]));
    assert!(base.iter().zip(&chg).all(|(b, c)| c <= b), "p50..p99.9 {base:?} -> {chg:?}");
    assert!(chg[0] < base[0] && chg[2] < base[2], "p50 and p90 drop: {base:?} -> {chg:?}");
}

/// Abel Wu (2022): the SIS filter series (v5, all five patches: what its cover letter measured)
/// made hackbench process-pipes much faster in the overloaded range on a 2x24x2 Xeon 8260 with
/// v6.0.
#[test]
fn sis_filter_series_speeds_up_overloaded_hackbench_pipes_on_xeon_8260() {
    // 1000 loops, not fewer: in the first few hundred the run is its start-up (960 tasks forked
    // and placed), where the filter's effect is a few percent either way by seed.
    let series = ["+SIS_UTIL_IDLE_CORE", "+SIS_IDLE_CORE_LIMIT", "+SIS_IDLE_CORE_PENDING", "+SIS_LLC_BUSY", "+SIS_FILTER"];
    let (_, base) = run_on("xeon-8260", "v6.0", &[], "hackbench -p -g 24 -l 1000", 10.0);
    let (_, chg) = run_on("xeon-8260", "v6.0", &series, "hackbench -p -g 24 -l 1000", 10.0);
    assert!(chg < base * 0.95, "hackbench -p -g 24 time {base} -> {chg}");
    // Neutral while the LLCs have idle CPUs to find (1 group = 40 tasks on 96 CPUs): after the
    // start every wakeup goes back to the previous CPU, so select_idle_cpu() — the only place
    // the filter acts — is off the path in both runs. (The run times may still differ: one
    // receiver that hardly ever sleeps sets the run, and which one, and how often it waits,
    // follows from the few scans around the start.)
    let (b, _) = run_on("xeon-8260", "v6.0", &[], "hackbench -p -g 1 -l 10000", 10.0);
    let (c, _) = run_on("xeon-8260", "v6.0", &series, "hackbench -p -g 1 -l 10000", 10.0);
    for (r, name) in [(&b, "base"), (&c, "series")] {
        let w = &r.stats.wake;
        assert!(w.wakeups > 100_000, "{name}: {} wakeups", w.wakeups);
        assert!(w.sis_scans * 1000 < w.wakeups, "{name}: {} idle scans in {} wakeups", w.sis_scans, w.wakeups);
        assert!(w.migrations_wakeup * 1000 < w.wakeups, "{name}: {} wakeup migrations", w.migrations_wakeup);
    }
}

const IPISTORM: &str = "ipistorm numipi=3000 single=1 offset=8 cpulist=8 wait=1";

/// K Prateek Nayak (SM_IDLE, v6.12; the 2024 RFC before it): an IPI-only kick of a polling idle
/// CPU ran schedule_idle() and pick_next_task_fair() for nothing. On an otherwise idle EPYC
/// (root domain not overloaded, so newidle returns at its first gate) skipping the pick saves
/// that pass and skipping only newidle saves its gate; a real IPI instead of the flag write
/// (-CSD_POLL) is slower, since the IPI costs more than the idle re-entry it avoids.
#[test]
fn ipistorm_on_an_idle_epyc_gains_from_skipping_the_pick_on_ipi_only_kicks() {
    let (_, base) = run_on("epyc-9754", "v6.7", &[], IPISTORM, 1.0);
    let (_, skip) = run_on("epyc-9754", "v6.7", &["+NEWIDLE_SKIP_IPI"], IPISTORM, 1.0);
    let (_, sm_idle) = run_on("epyc-9754", "v6.7", &["+SM_IDLE"], IPISTORM, 1.0);
    let (_, revert) = run_on("epyc-9754", "v6.7", &["-CSD_POLL"], IPISTORM, 1.0);
    eprintln!("idle epyc-9754 v6.7 ipistorm numipi=3000: base {base:.6} s, +NEWIDLE_SKIP_IPI {skip:.6} s, +SM_IDLE {sm_idle:.6} s, -CSD_POLL {revert:.6} s");
    // With numipi, ipistorm's metric is the elapsed time: lower is better.
    assert!(skip < base * 0.98, "NEWIDLE_SKIP_IPI elapsed {base} -> {skip}");
    assert!(sm_idle < skip * 0.95, "SM_IDLE skips more than newidle: {skip} vs {sm_idle}");
    assert!(revert > base, "-CSD_POLL elapsed {base} -> {revert}");
}

/// The same on a busy EPYC: two tasks share one far CPU, so the root domain stays overloaded and
/// every IPI-only kick runs newidle balancing with interrupts off, up the domains while the
/// target's avg_idle allows. This is the situation of the RFC's numbers (ipistorm −45 % with
/// the skip; −34 % even with the revert, which avoids schedule_idle altogether).
#[test]
fn ipistorm_on_a_busy_epyc_is_much_faster_without_newidle_on_ipi_only_kicks() {
    let busy = || {
        let mut w = build("epyc-9754", IPISTORM);
        for i in 0..2 {
            let mut t = TaskSpec::new(format!("hog-{i}"), vec![Op::Compute(Dur::Fixed(2_000_000_000)), Op::Exit]);
            t.allowed = Some(CpuSet::from_cpus([200]));
            w.tasks.push(t);
        }
        w
    };
    // The hogs outlive the storm (the run ends at the cap), so time the storm by its marks.
    let elapsed = |r: &RunResult| {
        let start = r.outcome.marks.iter().filter(|m| m.mark == 0).map(|m| m.time).min().expect("storm started");
        let end = r.outcome.marks.iter().filter(|m| m.mark == 1).map(|m| m.time).max().expect("storm finished");
        (end - start) as f64 / 1e9
    };
    let (b, _) = run_wl("epyc-9754", "v6.7", &[], busy(), 1.5);
    let (s, _) = run_wl("epyc-9754", "v6.7", &["+NEWIDLE_SKIP_IPI"], busy(), 1.5);
    let (r, _) = run_wl("epyc-9754", "v6.7", &["-CSD_POLL"], busy(), 1.5);
    assert!(b.stats.newidle.levels.iter().any(|l| l.calls > 1000), "newidle balances on the kicks");
    let (base, skip, revert) = (elapsed(&b), elapsed(&s), elapsed(&r));
    eprintln!("busy epyc-9754 v6.7 ipistorm numipi=3000: base {base:.6} s, +NEWIDLE_SKIP_IPI {skip:.6} s, -CSD_POLL {revert:.6} s");
    assert!(skip < base * 0.6, "NEWIDLE_SKIP_IPI elapsed {base} -> {skip}");
    assert!(revert < base * 0.8, "-CSD_POLL elapsed {base} -> {revert}");
    assert!(revert > skip, "the revert gains less than the skip: {revert} vs {skip}");
}

/// K Prateek Nayak (2024): the CSD_POLL revert cost netperf/tbench ~9–11 % (IPI-less wakeups of
/// polling CPUs are valuable), while skipping newidle on IPI-only kicks left them unchanged.
#[test]
fn netperf_and_tbench_are_unchanged_by_newidle_skip_ipi_and_slower_without_csd_poll_on_epyc_9754() {
    let cmd = "netperf -t TCP_RR -l -8000";
    let (_, base) = run_on("epyc-9754", "v6.7", &[], cmd, 5.0);
    let (_, skip) = run_on("epyc-9754", "v6.7", &["+NEWIDLE_SKIP_IPI"], cmd, 5.0);
    let (_, revert) = run_on("epyc-9754", "v6.7", &["-CSD_POLL"], cmd, 5.0);
    // Transactions per second: higher is better.
    assert!((skip / base - 1.0).abs() < 0.02, "NEWIDLE_SKIP_IPI {base} -> {skip}");
    assert!(revert < base * 0.95, "-CSD_POLL {base} -> {revert}");
    // tbench: MB/sec, higher is better.
    let cmd = "tbench -t 1 --warmup 0 1";
    let (_, base) = run_on("epyc-9754", "v6.7", &[], cmd, 5.0);
    let (_, skip) = run_on("epyc-9754", "v6.7", &["+NEWIDLE_SKIP_IPI"], cmd, 5.0);
    let (_, revert) = run_on("epyc-9754", "v6.7", &["-CSD_POLL"], cmd, 5.0);
    assert!(base > 0.0 && (skip / base - 1.0).abs() < 0.02, "tbench NEWIDLE_SKIP_IPI {base} -> {skip}");
    assert!(revert < base * 0.95, "tbench -CSD_POLL {base} -> {revert}");
}
