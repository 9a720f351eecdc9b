//! The tables on small fixtures: format as the field prints it, statistics, marks.

use wakesim_report::{breakdown, html, mmtests, normalized, percentiles, schedstat_diff, timeline::Timeline, Grid, RunRecord};
use wakesim_stats::{CpuSchedstat, DomainSchedstat, WakeStats};
use wakesim_workloads::{LatencyPercentiles, Metric};

fn rec(tput: f64, time: f64, lat99: f64) -> RunRecord {
    RunRecord {
        metrics: vec![
            Metric { name: "Throughput".into(), unit: "MB/sec".into(), value: tput, higher_is_better: true },
            Metric { name: "Time".into(), unit: "s".into(), value: time, higher_is_better: false },
        ],
        latencies: vec![LatencyPercentiles {
            name: "Wakeup Latencies".into(),
            unit: "usec".into(),
            samples: 100,
            points: vec![(20.0, 5.0), (50.0, 8.0), (90.0, 20.0), (99.0, lat99), (99.9, 2.0 * lat99)],
        }],
        cpu_totals: CpuSchedstat { sched_count: 1000, sched_goidle: 100, ttwu_count: 500, ..Default::default() },
        domains: vec![("MC".into(), DomainSchedstat { lb_count: [10, 20, 30], ttwu_move_affine: 40, ..Default::default() })],
        wake: WakeStats { wakeups: 100, cost_select: 10_000, cost_scan: 30_000, sis_outcome: [50, 10, 0, 10, 0, 20, 10, 0], ipis_sent: 25, ..Default::default() },
        sim_time_ns: 1_000_000_000,
        ..Default::default()
    }
}

/// Two points (clients 1 and 8), baseline and "patched"; patched is +10 % throughput at 1
/// client (clearly significant) and equal at 8 clients.
fn grid() -> Grid {
    let base1 = vec![rec(100.0, 2.0, 30.0), rec(101.0, 2.1, 32.0), rec(99.0, 1.9, 31.0)];
    let pat1 = vec![rec(110.0, 1.8, 20.0), rec(111.0, 1.9, 22.0), rec(109.0, 1.7, 21.0)];
    let mut base8 = vec![rec(800.0, 4.0, 40.0), rec(810.0, 4.1, 40.0), rec(790.0, 3.9, 40.0)];
    for r in &mut base8 {
        r.domains[0].1.lb_failed[2] = 1; // 1 → 0 in the variant: -100 %, but negligible
    }
    let mut pat8 = vec![rec(805.0, 4.0, 40.0), rec(795.0, 4.2, 40.0), rec(800.0, 3.8, 40.0)];
    pat8[0].cpu_totals.sched_count = 2000;
    pat8[1].cpu_totals.sched_count = 2000;
    pat8[2].cpu_totals.sched_count = 2000;
    Grid {
        workload: "tbench".into(),
        variants: vec!["baseline".into(), "patched".into()],
        sweeps: vec!["clients".into()],
        points: vec![vec!["1".into()], vec!["8".into()]],
        cells: vec![vec![base1, pat1], vec![base8, pat8]],
    }
}

#[test]
fn mmtests_rows_use_hmean_for_throughput_amean_for_time_and_star_significant_gains() {
    let t = mmtests::render(&grid());
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[0], "tbench Throughput (MB/sec)");
    assert!(lines[1].ends_with("               baseline                patched"), "{t}");
    // Hmean of 100, 101, 99 = 99.99…; patched is ~10 % better and significant.
    let hmean1 = lines.iter().find(|l| l.starts_with("Hmean     clients-1")).unwrap();
    assert!(hmean1.contains("(   0.00%)"), "{hmean1}");
    assert!(hmean1.ends_with("*  10.00%*"), "{hmean1}");
    // At 8 clients the difference is not significant: parentheses, no star.
    let hmean8 = lines.iter().find(|l| l.starts_with("Hmean     clients-8")).unwrap();
    assert!(hmean8.ends_with("(   0.01%)"), "{hmean8}");
    for row in ["Stddev    clients-1", "CV        clients-8", "Min       clients-1", "Max       clients-8"] {
        assert!(lines.iter().any(|l| l.starts_with(row)), "{row} missing:\n{t}");
    }
    // Time is lower-is-better: Amean, 4 decimals (small values), a 10 % shorter time is +10 %;
    // with t = 2.45 on 4 df (p = 0.07) Welch does not call it significant: no star.
    let amean1 = lines.iter().find(|l| l.starts_with("Amean     clients-1")).unwrap();
    assert!(amean1.ends_with("      2.0000 (   0.00%)      1.8000 (  10.00%)"), "{amean1}");
    assert!(!t.contains("Amean     clients-1    100"), "throughput must not use Amean");
}

#[test]
fn normalized_table_matches_the_lkml_layout() {
    let t = normalized::render(&grid());
    let want_head = "==================================================================\nTest          : tbench\nUnits         : Normalized Throughput (MB/sec)\nInterpretation: Higher is better\nStatistic     : HMean\n==================================================================\n";
    assert!(t.starts_with(want_head), "{t}");
    let lines: Vec<&str> = t.lines().collect();
    // Each name ends one column before its cells (a name too long for that gets one space).
    assert_eq!(lines[6], "Clients: baseline[pct imp](CV)  patched[pct imp](CV)", "{t}");
    assert_eq!(lines[6].len() + 1, lines[7].len());
    // Row: point, then ratio [gain](CV) per variant; the baseline is 1.00 [ 0.00].
    assert!(lines[7].starts_with("    1     1.00 [ 0.00]( 1.00)     1.10 [10.00]( 0.91)"), "{}", lines[7]);
    assert!(t.contains("Interpretation: Lower is better\nStatistic     : AMean"));
}

#[test]
fn percentile_tables_put_variants_side_by_side_with_schbenchs_star() {
    let t = percentiles::render(&grid(), true);
    assert!(t.starts_with("Wakeup Latencies percentiles (usec), clients-1"), "{t}");
    let p99: Vec<&str> = t.lines().filter(|l| l.contains("99.0th:")).collect();
    assert_eq!(p99.len(), 2);
    // Mean p99 at 1 client: 31 → 21, a 32.26 % lower latency.
    assert!(p99[0].trim_start().starts_with("* 99.0th:"), "{}", p99[0]);
    assert!(p99[0].ends_with("31.00 (   0.00%)       21.00 (  32.26%)"), "{}", p99[0]);
    assert_eq!(t.matches("th:").count(), 2 * 5);
}

#[test]
fn schedstat_diff_shows_change_and_marks_the_largest() {
    let t = schedstat_diff::render(&grid());
    let at8 = &t[t.find("schedstat diff, clients-8").unwrap()..];
    let row = at8.lines().find(|l| l.contains("(sched_count)")).unwrap();
    assert!(row.contains("1000.00") && row.contains("2000.00") && row.contains("+100.00%"), "{row}");
    assert!(row.ends_with("<<<"), "the only change is marked: {row}");
    let goidle = at8.lines().find(|l| l.contains("(sched_goidle)")).unwrap();
    assert!(goidle.contains("+0.00%") && !goidle.ends_with("<<<"), "{goidle}");
    let failed = at8.lines().find(|l| l.contains("newidle    failed")).unwrap();
    assert!(failed.contains("-100.00%") && !failed.ends_with("<<<"), "a change of a negligible counter is not marked: {failed}");
    assert!(at8.contains("Domain MC (summed over CPUs)"));
    assert!(at8.lines().any(|l| l.contains("newidle  load_balance() calls") && l.contains("30.00")), "{at8}");
    assert!(at8.lines().any(|l| l.contains("(ttwu_move_affine)") && l.contains("40.00")));
}

#[test]
fn breakdown_gives_ns_per_wakeup_and_placement_shares() {
    let g = grid();
    let w = breakdown::total(&g, 0, 0);
    assert_eq!(w.wakeups, 300);
    let (v, total) = breakdown::per_wakeup(&w);
    assert_eq!((v[0], v[1], total), (100.0, 300.0, 400.0));
    let t = breakdown::render(&g);
    let sel = t.lines().find(|l| l.starts_with("select_task_rq (selection)")).unwrap();
    assert!(sel.contains("100.0 ( 25.0%)"), "{sel}");
    let core = t.lines().find(|l| l.starts_with("idle core")).unwrap();
    assert!(core.ends_with("20.0%"), "{core}");
    assert!(t.lines().any(|l| l.starts_with("IPIs per wakeup") && l.contains("0.250")));
}

#[test]
fn html_page_is_self_contained_and_declares_its_series() {
    let g = grid();
    let page = html::Page { title: "t <1>".into(), notes: vec!["wakesim compare …".into()], grid: &g, timeline: None };
    let s = html::render(&page);
    assert!(s.starts_with("<!DOCTYPE html>"));
    assert!(!s.contains("src=\"http") && !s.contains("href=\"http"), "no network resources");
    assert!(s.contains("<title>t &lt;1&gt;</title>"));
    assert!(s.contains("Chart.js v4.6.1"));
    // 2 metrics + 1 latency × 2 points, 2 variants each.
    let exp = html::expected_series(&page);
    assert_eq!(exp, vec![("metric-0".into(), 2), ("metric-1".into(), 2), ("cdf-0".into(), 2), ("cdf-1".into(), 2)]);
    let tl = Timeline::parse(r#"{"traceEvents":[{"ph":"X","pid":0,"tid":0,"ts":0,"dur":5,"name":"a"},{"ph":"X","pid":0,"tid":1,"ts":1,"dur":5,"name":"b"}]}"#).unwrap();
    let page = html::Page { timeline: Some(&tl), ..page };
    assert_eq!(html::expected_series(&page).last(), Some(&("timeline".to_string(), 2)));
    // The data block cannot close the script element early.
    let g2 = Grid { workload: "</script>".into(), ..g.clone() };
    let s2 = html::render(&html::Page { title: "x".into(), notes: vec![], grid: &g2, timeline: None });
    assert_eq!(s2.matches("</script>").count(), s.matches("</script>").count());
}

#[test]
fn runs_that_measured_nothing_are_left_out_of_the_statistics() {
    let mut g = grid();
    g.cells[0][0][1].metrics[0].value = f64::NAN;
    assert_eq!(g.values(0, 0, "Throughput"), vec![100.0, 99.0]);
    let t = mmtests::render(&g);
    let min = t.lines().find(|l| l.starts_with("Min       clients-1")).unwrap();
    assert!(min.contains("      99.00 (   0.00%)"), "{min}");
    // Nothing measured at all: NaN cells, never ±inf.
    for runs in g.cells[0].iter_mut() {
        for r in runs.iter_mut() {
            r.metrics[0].value = f64::NAN;
        }
    }
    let t = mmtests::render(&g);
    assert!(!t.contains("inf"), "{t}");
    assert!(t.lines().any(|l| l.starts_with("Max       clients-1") && l.contains("NaN")));
}

#[test]
fn schedstat_diff_has_a_wasted_row_when_the_checker_found_something() {
    let t = schedstat_diff::render(&grid());
    assert!(!t.contains("(wasted)"), "all-zero rows are left out:\n{t}");
    let mut g = grid();
    for run in g.cells[0][1].iter_mut() {
        run.wasted_ns = 12_000_000;
        run.wasted_intervals = 3;
    }
    let t = schedstat_diff::render(&g);
    let row = t.lines().find(|l| l.contains("wasted idle CPU time, ms")).expect("wasted row");
    assert!(row.contains("0.00") && row.contains("12.00") && row.contains("new"), "{row}");
    assert!(t.lines().any(|l| l.contains("wasted intervals > threshold") && l.contains("3.00")), "{t}");
}
