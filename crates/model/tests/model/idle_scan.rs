//! select_idle_sibling(): the target/prev/recent shortcuts, the SMT-sibling and idle-core
//! searches, the has_idle_cores hint, and SIS_UTIL's scan depth nr_idle_scan
//! (kernel/sched/fair.c: select_idle_sibling(), select_idle_cpu(), select_idle_core(),
//! update_idle_cpu_scan()).

use crate::common::*;
use wakesim_engine::{MSEC, USEC};
use wakesim_model::Sim;
use wakesim_stats::SisOutcome;
use wakesim_workloads::Op;

fn hog(name: &str, cpu: usize) -> wakesim_workloads::TaskSpec {
    pinned(task(name, vec![compute(400 * MSEC), Op::Exit]), &[cpu])
}

/// test-smt2 (cores {c, c+4}) with pinned hogs on `busy`; task 0, R, sleeps forever after
/// starting on `r_cpu` (it is the wakee whose placement the tests compute). Stepped to 3 ms.
pub(crate) fn state(busy: &[usize], r_cpu: u32) -> (Sim, usize) {
    // R first: on a shared CPU it runs first (equal initial deadlines: the first inserted) and blocks at once.
    let mut tasks = vec![start_on(task("R", vec![Op::FutexWait { futex: 0 }, Op::Exit]), r_cpu)];
    tasks.extend(busy.iter().map(|&c| hog(&format!("hog{c}"), c)));
    let r = 0;
    let mut s = sim("test-smt2", v6_6(), &workload(tasks, 0, 1), 1);
    s.step_until(3 * MSEC);
    for &c in busy {
        assert!(!s.is_available_idle(c), "cpu {c} busy");
    }
    assert_eq!(s.task_cpu(r), r_cpu as usize);
    (s, r)
}

pub(crate) fn outcome(s: &Sim, o: SisOutcome) -> u64 {
    s.wake.sis_outcome[o as usize]
}

#[test]
fn sis_returns_prev_when_prev_is_idle_and_shares_the_llc() {
    let (mut s, r) = state(&[0, 3], 5);
    assert!(s.is_available_idle(5));
    let n = outcome(&s, SisOutcome::Prev);
    let (cpu, cost) = s.select_idle_sibling_for(0, r, 5, 0);
    assert_eq!(cpu, 5);
    assert_eq!(outcome(&s, SisOutcome::Prev), n + 1);
    assert!(cost > 0, "probing target and prev costs the waker");
}

#[test]
fn sis_returns_an_idle_target_before_looking_at_prev() {
    let (mut s, r) = state(&[0, 3], 5);
    let n = outcome(&s, SisOutcome::Target);
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 2).0, 2);
    assert_eq!(outcome(&s, SisOutcome::Target), n + 1);
}

#[test]
fn sis_ignores_an_idle_prev_in_another_llc() {
    // test-2x4: LLC 0 = {0-3, 8-11}, LLC 1 = {4-7, 12-15}; prev 5 idle but not cache-affine.
    let tasks = vec![hog("hog0", 0), start_on(task("R", vec![Op::FutexWait { futex: 0 }, Op::Exit]), 5)];
    let mut s = sim("test-2x4", v6_6(), &workload(tasks, 0, 1), 1);
    s.step_until(3 * MSEC);
    assert!(s.is_available_idle(5));
    let (cpu, _) = s.select_idle_sibling_for(0, 1, 5, 0);
    assert_ne!(cpu, 5);
    assert!(s.m.share_cache(cpu, 0), "the search stays in the target's LLC: got {cpu}");
}

#[test]
fn sis_takes_the_idle_smt_sibling_of_prev_when_no_idle_core_is_hinted() {
    // target 0 and prev 5 busy; prev's sibling 1 idle.
    let (mut s, r) = state(&[0, 5], 5);
    s.llcs[0].has_idle_cores = false;
    let n = outcome(&s, SisOutcome::SmtSibling);
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 1);
    assert_eq!(outcome(&s, SisOutcome::SmtSibling), n + 1);
}

#[test]
fn sis_finds_a_fully_idle_core_when_the_hint_says_one_exists() {
    // Cores {0,4} {1,5} {2,6} {3,7}: 0 and 5 busy, so cores {2,6} and {3,7} are idle. The scan
    // starts after the target (CPU 1 first) and returns the first whole idle core: CPU 2.
    let (mut s, r) = state(&[0, 5], 5);
    s.llcs[0].has_idle_cores = true;
    let n = outcome(&s, SisOutcome::IdleCore);
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 2);
    assert_eq!(outcome(&s, SisOutcome::IdleCore), n + 1);
    assert!(s.llc_has_idle_cores(0), "the hint was right: kept");
}

#[test]
fn a_wrong_idle_core_hint_costs_a_full_scan_then_is_cleared() {
    // One busy thread per core (0, 5, 2, 7): no idle core, idle threads 1, 3, 4, 6.
    let (mut s, r) = state(&[0, 5, 2, 7], 5);
    s.llcs[0].has_idle_cores = true;
    let probes = s.wake.sis_probes;
    let (cpu, _) = s.select_idle_sibling_for(0, r, 5, 0);
    assert!(!s.llc_has_idle_cores(0), "cleared after a fruitless idle-core scan");
    assert_eq!(cpu, 1, "falls back to the first idle thread seen (CPU 1, right after the target)");
    assert!(s.wake.sis_probes - probes >= 4, "the scan probed every core: {}", s.wake.sis_probes - probes);
}

#[test]
fn has_idle_cores_is_set_when_a_cpu_goes_idle_with_all_siblings_idle() {
    // R starts alone on CPU 5 (sibling 1 idle) and blocks at once: CPU 5 switches to idle.
    let tasks = vec![hog("hog0", 0), start_on(task("R", vec![Op::FutexWait { futex: 0 }, Op::Exit]), 5)];
    let mut s = sim("test-smt2", v6_6(), &workload(tasks, 0, 1), 1);
    assert!(!s.llc_has_idle_cores(0));
    s.step_until(100 * USEC);
    assert!(s.is_available_idle(5));
    assert!(s.llc_has_idle_cores(0), "set by __update_idle_core() on CPU 5's switch to idle");
}

/// Hogs on 0–6 and R (prev 5) asleep: the only idle CPU is 7, seventh in the scan order from
/// target 0 (1, 2, ..., 7). Its sibling 3 is busy, so there is no idle core.
fn one_idle_cpu() -> (Sim, usize) {
    let (mut s, r) = state(&[0, 1, 2, 3, 4, 5, 6], 5);
    assert!(s.is_available_idle(7));
    s.llcs[0].has_idle_cores = false;
    (s, r)
}

/// `select_idle_cpu()`'s probes overlap their rq-line misses: each pays `sis_probe_line_pct` of
/// its transfer and the loop's last probe, whose answer ends it, the rest of its own. With 100 %
/// every probe pays one transfer (the charge before the share); a loop of one probe pays a whole
/// transfer at any share.
#[test]
fn the_idle_scan_loop_pays_its_share_of_each_probe_line_and_the_last_in_full() {
    let cost = |depth: u32, pct: u64| {
        let (mut s, r) = one_idle_cpu();
        s.llcs[0].nr_idle_scan = depth;
        s.c.sis_probe_line_pct = pct;
        let (cpu, cost) = s.select_idle_sibling_for(0, r, 5, 0);
        let lines: Vec<u64> = (1..=depth as usize).map(|c| s.line_transfer(0, c)).collect();
        (cpu, cost, lines)
    };
    // Seven probes, CPUs 1..7, the last (7) idle.
    let ((c100, k100, lines), (c31, k31, _)) = (cost(7, 100), cost(7, 31));
    assert_eq!((c100, c31), (7, 7));
    let share = |l: u64| (l * 31 + 50) / 100;
    let (sum, last) = (lines.iter().sum::<u64>(), lines[6]);
    assert!(sum > 0 && last > 0, "the probed lines are another core's");
    assert_eq!(k100 - k31, sum - share(sum) - (last - share(last)), "six probes' lines overlap, the last is waited for");
    // One probe (CPU 1, busy): its whole line at either share.
    let ((_, one100, _), (_, one31, _)) = (cost(1, 100), cost(1, 31));
    assert_eq!(one100, one31);
}

#[test]
fn sis_util_scans_at_most_nr_idle_scan_cpus() {
    for (depth, expect) in [(6u32, 0usize), (7, 7)] {
        let (mut s, r) = one_idle_cpu();
        s.llcs[0].nr_idle_scan = depth;
        let (p0, sc0) = (s.wake.sis_probes, s.wake.sis_scans);
        let (cpu, _) = s.select_idle_sibling_for(0, r, 5, 0);
        assert_eq!(s.wake.sis_scans, sc0 + 1);
        // sis_probes counts select_idle_cpu()'s probes only.
        let scanned = s.wake.sis_probes - p0;
        if expect == 0 {
            assert_eq!(cpu, 0, "nothing found within {depth} CPUs: stack on the target");
            assert_eq!(scanned, depth as u64, "exactly nr_idle_scan CPUs probed");
        } else {
            assert_eq!(cpu, expect, "CPU 7 is the {depth}th CPU scanned");
            assert_eq!(scanned, 7);
        }
    }
}

#[test]
fn sis_util_zero_depth_scans_nothing_even_with_an_idle_cpu() {
    let (mut s, r) = one_idle_cpu();
    s.llcs[0].nr_idle_scan = 0;
    let (p0, sc0, f0) = (s.wake.sis_probes, s.wake.sis_scans, outcome(&s, SisOutcome::Fallback));
    let (cpu, _) = s.select_idle_sibling_for(0, r, 5, 0);
    assert_eq!(cpu, 0, "target, although CPU 7 is idle");
    assert_eq!(s.wake.sis_scans, sc0, "select_idle_cpu() returned before scanning");
    assert_eq!(s.wake.sis_probes, p0);
    assert_eq!(outcome(&s, SisOutcome::Fallback), f0 + 1);
    // With SIS_UTIL off the whole LLC is scanned and CPU 7 is found.
    s.f.SIS_UTIL = false;
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 7);
}

#[test]
fn sis_util_idle_core_scans_for_an_idle_core_at_zero_depth() {
    // Hogs on every CPU but core 3 ({3, 7}): an idle core, seen from target 0 after 1 and 2.
    let (mut s, r) = state(&[0, 1, 2, 4, 5, 6], 5);
    assert!(s.is_available_idle(3) && s.is_available_idle(7));
    s.llcs[0].nr_idle_scan = 0;
    s.llcs[0].has_idle_cores = true;
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 0, "v6.0: SIS_UTIL's zero depth returns before the scan");
    s.llcs[0].has_idle_cores = true;
    s.f.SIS_UTIL_IDLE_CORE = true;
    let sc0 = s.wake.sis_scans;
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 3, "the idle core is found although the depth is zero");
    assert_eq!(s.wake.sis_scans, sc0 + 1);
    // Without the hint the zero depth still stops the scan.
    s.llcs[0].has_idle_cores = false;
    let sc1 = s.wake.sis_scans;
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 0);
    assert_eq!(s.wake.sis_scans, sc1, "no scan without has_idle_cores");
}

#[test]
fn sis_idle_core_limit_scans_two_cores_at_zero_depth_and_all_of_them_above_it() {
    // v5 2/5 on test-smt2: the idle core {3, 7} is the third core after target 0 (cores 1, 2, 3).
    let (mut s, r) = state(&[0, 1, 2, 4, 5, 6], 5);
    s.f.SIS_IDLE_CORE_LIMIT = true;
    s.llcs[0].nr_idle_scan = 0;
    s.llcs[0].has_idle_cores = true;
    let p0 = s.wake.sis_probes;
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 0, "zero depth: cores 1 and 2 only, then the target");
    assert_eq!(s.wake.sis_probes - p0, 4, "two cores of two threads probed");
    assert!(!s.llc_has_idle_cores(0), "the cut-short scan reaches the hint's update and clears it");
    // A depth above zero makes the idle-core scan whole again.
    s.llcs[0].nr_idle_scan = 1;
    s.llcs[0].has_idle_cores = true;
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 3);
    // Core 2 ({2, 6}) idle instead: within the two cores of the speculative scan.
    let (mut s, r) = state(&[0, 1, 3, 4, 5, 7], 5);
    s.f.SIS_IDLE_CORE_LIMIT = true;
    s.llcs[0].nr_idle_scan = 0;
    s.llcs[0].has_idle_cores = true;
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 2);
}

#[test]
fn sis_llc_busy_skips_the_scan_after_a_failed_one_until_a_cpu_goes_idle() {
    // v5 4/5 on test-smt2 with all 8 CPUs busy (R sleeps, its CPU 5 runs a hog).
    let (mut s, r) = state(&[0, 1, 2, 3, 4, 5, 6, 7], 5);
    s.f.SIS_LLC_BUSY = true;
    // A scan cut short by its depth returns -1 before the state's update (without 2/5).
    s.llcs[0].nr_idle_scan = 2;
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 0);
    assert!(!s.llc_is_busy(0), "a depth-limited scan returns before the update");
    // A scan that outlasts the LLC (depth 8, nr 9) ends the loop and marks the LLC busy.
    s.llcs[0].nr_idle_scan = 8;
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 0);
    assert!(s.llc_is_busy(0), "a failed full scan marks the LLC fully busy");
    let (sc, pr) = (s.wake.sis_scans, s.wake.sis_probes);
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 0);
    assert_eq!((s.wake.sis_scans, s.wake.sis_probes), (sc, pr), "a busy LLC is not scanned");
    // A CPU entering idle ends the state; with a wakeup pending (3/5) it does not.
    s.f.SIS_IDLE_CORE_PENDING = true;
    s.cpus[3].ttwu_pending = true;
    s.update_idle_core_at(3);
    assert!(s.llc_is_busy(0), "3/5: no update while a wakeup is pending");
    s.cpus[3].ttwu_pending = false;
    s.update_idle_core_at(3);
    assert!(!s.llc_is_busy(0) && !s.llc_has_idle_cores(0), "sibling 7 busy: has idle CPUs");
    // With 2/5 a scan cut short by its depth marks the LLC busy as well.
    s.f.SIS_IDLE_CORE_LIMIT = true;
    s.llcs[0].nr_idle_scan = 2;
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 0);
    assert!(s.llc_is_busy(0));
}

#[test]
fn sis_filter_v5_scans_only_its_mask_and_empties_it_when_the_llc_goes_busy() {
    // CPUs 3 and 7 idle (core 3); the filter holds CPU 2 only (busy: a stale bit).
    let (mut s, r) = state(&[0, 1, 2, 4, 5, 6], 5);
    s.llcs[0].has_idle_cores = true; // core 3 went idle: the scan is an idle-core scan
    s.f.SIS_FILTER = true;
    s.f.SIS_LLC_BUSY = true;
    s.llcs[0].nr_idle_scan = 8;
    s.llcs[0].sis_filter.mask = wakesim_machine::CpuSet::new();
    s.llcs[0].sis_filter.mask.set(2);
    let pr = s.wake.sis_probes;
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 0, "3 and 7 are idle but not in the filter");
    assert_eq!(s.wake.sis_probes - pr, 2, "only the mask's CPU's core (two threads) is probed");
    assert!(s.llc_is_busy(0), "the failed scan marks the LLC busy");
    assert!(s.llcs[0].sis_filter.mask.is_empty(), "and empties the filter (clear_idle_cpus)");
    // CPU 3 entering idle joins the filter and, its sibling 7 idle, sets "has idle cores".
    s.update_idle_core_at(3);
    assert!(s.llcs[0].sis_filter.mask.contains(3));
    assert!(s.llc_has_idle_cores(0) && !s.llc_is_busy(0));
    // CPU 7 entering idle does not join: its idle sibling 3 is present.
    s.update_idle_core_at(7);
    assert!(!s.llcs[0].sis_filter.mask.contains(7));
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 3, "the idle core is found through the filter");
}

#[test]
fn nr_idle_scan_follows_the_kernel_formula_on_a_16_cpu_llc() {
    // update_idle_cpu_scan() (kernel/sched/fair.c) worked through: w = 16, imbalance_pct = 117: x = 512 → nr = 10; x ≥ 848
    // (≈83 %) → nr = 0. epyc-7763's LLC (a CCX) is 8 cores × 2 threads.
    let wl = workload(vec![task("t", vec![Op::Exit])], 0, 0);
    let mut s = sim("epyc-7763", v6_6(), &wl, 1);
    let lvl = s.llc_level(0);
    assert_eq!(s.m.llc_size[0], 16);
    assert_eq!(s.m.domains[0][lvl].imbalance_pct, 117);
    let span: Vec<usize> = s.m.llc_span[0].iter().collect();
    for (x, want) in [(0u64, 16u32), (512, 10), (847, 1), (848, 0), (1024, 0)] {
        for &c in &span {
            s.cpus[c].cfs.avg.util_avg = x;
            s.cpus[c].cfs.util_est = 0;
        }
        s.update_idle_cpu_scan_at(0, lvl);
        assert_eq!(s.llc_nr_idle_scan(0), want, "average util {x}");
    }
}

#[test]
fn llc_utilisation_above_85_percent_turns_the_idle_scan_off() {
    // 7 of 8 CPUs always busy (87.5 %): the periodic LLC balance (here the NOHZ idle balancer
    // working for idle CPU 7) writes nr_idle_scan = 0; with 6 of 8 (75 %) it stays positive.
    let cases: [(usize, fn(u32) -> bool); 2] = [(7, |n| n == 0), (6, |n| (1..=3).contains(&n))];
    for (nbusy, ok) in cases {
        let tasks = (0..nbusy).map(|c| hog(&format!("hog{c}"), c)).collect();
        let mut s = sim("test-smt2", v6_6(), &workload(tasks, 0, 0), 1);
        assert_eq!(s.llc_nr_idle_scan(0), 8, "starts at the LLC size");
        s.step_until(200 * MSEC);
        let util: u64 = (0..8).map(|c| s.cpu_util_cfs(c)).sum::<u64>() / 8;
        assert!(ok(s.llc_nr_idle_scan(0)), "{nbusy} busy CPUs, avg util {util}: nr_idle_scan {}", s.llc_nr_idle_scan(0));
    }
}

#[test]
fn sis_returns_an_idle_recently_used_cpu_and_remembers_prev_instead() {
    // target 0 and prev 5 busy, prev's sibling 1 busy, recent_used_cpu 3 idle.
    let (mut s, r) = state(&[0, 5, 1], 5);
    let p = s.task_id(r) as usize;
    s.tasks[p].recent_used_cpu = 3;
    let n = outcome(&s, SisOutcome::Recent);
    assert_eq!(s.select_idle_sibling_for(0, r, 5, 0).0, 3);
    assert_eq!(outcome(&s, SisOutcome::Recent), n + 1);
    assert_eq!(s.tasks[p].recent_used_cpu, 5, "p->recent_used_cpu = prev");
}

#[test]

fn recent_used_cpu_is_the_previous_wakeups_prev_after_the_task_ran_elsewhere() {
    // R sleeps on CPU 5; hog5 then takes CPU 5; W (CPU 0) wakes R, which lands on another
    // idle CPU X. After R ran on X, recent_used_cpu must still be 5 (the prev of that wakeup).
    let tasks = vec![
        start_on(task("R", vec![Op::FutexWait { futex: 0 }, compute(100 * USEC), Op::FutexWait { futex: 0 }, Op::Exit]), 5),
        pinned(task("W", vec![compute(5 * MSEC), Op::FutexWake { futex: 0, n: 1 }, compute(5 * MSEC), Op::FutexWake { futex: 0, n: 1 }, Op::Exit]), &[0]),
        pinned(task("hog5", vec![sleep(MSEC), compute(20 * MSEC), Op::Exit]), &[5]),
    ];
    let mut s = sim("test-smt2", v6_6(), &workload(tasks, 0, 1), 1);
    s.step_until(4 * MSEC);
    assert_eq!(s.task_cpu(0), 5);
    let sw = s.tasks[s.task_id(0) as usize].counters.nr_switches;
    step_until_cond(&mut s, 8 * MSEC, "R ran after its wakeup and blocked again", |s| {
        let t = &s.tasks[s.task_id(0) as usize];
        t.counters.nr_switches > sw && t.state == wakesim_model::state::TState::Sleeping && !t.on_cpu
    });
    let x = s.task_cpu(0);
    assert_ne!(x, 5, "R was placed away from its busy prev");
    assert_eq!(s.tasks[s.task_id(0) as usize].recent_used_cpu, 5, "recent_used_cpu after running on CPU {x}");
}

#[test]

fn a_partial_scan_costs_the_same_whether_or_not_an_idle_cpu_lies_beyond_it() {
    // nr_idle_scan = 4 from target 0 probes CPUs 1, 2, 3 and 4 (4 is the waker's SMT sibling)
    // and finds nothing in both states; only CPU 7 differs (busy / idle), outside the scan.
    let cost = |busy: &[usize]| {
        let (mut s, r) = state(busy, 5);
        s.llcs[0].has_idle_cores = false;
        s.llcs[0].nr_idle_scan = 4;
        let p0 = s.wake.sis_probes;
        let (cpu, c) = s.select_idle_sibling_for(0, r, 5, 0);
        assert_eq!((cpu, s.wake.sis_probes - p0), (0, 4));
        c
    };
    let all_busy = cost(&[0, 1, 2, 3, 4, 5, 6, 7]);
    let cpu7_idle = cost(&[0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(all_busy, cpu7_idle, "same probes, same cost");
}
