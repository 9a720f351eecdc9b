//! A schedstat diff in the style of sched-scoreboard and `perf sched stats diff`: the per-CPU
//! counters summed over CPUs, then each domain level's load-balance and wakeup counters, for
//! the baseline and each variant (mean per run), with the percentage change. In each variant's
//! column the three largest changes of at least 5 % are marked `<<<` (among rows that are at
//! least 5 % of their section's largest value). Counters that are zero
//! in every column are left out.

use crate::summary::Summary;
use crate::{Grid, RunRecord};
use wakesim_stats::{DomainSchedstat, IdleType};

/// Changes below this (percent) are never marked.
pub const MARK_MIN_PCT: f64 = 5.0;
/// Rows whose values are both below this share of their section's largest value are never
/// marked: a counter going from 1 to 0 is a 100 % change of nothing.
pub const MARK_MIN_SHARE: f64 = 0.05;
/// How many of a column's largest changes are marked.
pub const MARK_TOP: usize = 3;

/// A row: its label and how to read its value from one run.
type Getter = Box<dyn Fn(&RunRecord) -> f64>;
/// A section: its title and rows.
type Section = (String, Vec<(String, Getter)>);

/// The CPU-totals section, then one section per domain level.
fn sections(levels: &[String]) -> Vec<Section> {
    fn cpu(label: &str, f: fn(&RunRecord) -> f64) -> (String, Getter) {
        (label.to_string(), Box::new(f))
    }
    let mut out: Vec<Section> = vec![(
        "CPU totals (all CPUs)".into(),
        vec![
            cpu("schedule() calls        (sched_count)", |r| r.cpu_totals.sched_count as f64),
            cpu("switches to idle       (sched_goidle)", |r| r.cpu_totals.sched_goidle as f64),
            cpu("wakeups issued           (ttwu_count)", |r| r.cpu_totals.ttwu_count as f64),
            cpu("wakeups on own CPU       (ttwu_local)", |r| r.cpu_totals.ttwu_local as f64),
            cpu("run time, ms            (rq_cpu_time)", |r| r.cpu_totals.rq_cpu_time as f64 / 1e6),
            cpu("wait time, ms             (run_delay)", |r| r.cpu_totals.run_delay as f64 / 1e6),
            cpu("timeslices                   (pcount)", |r| r.cpu_totals.pcount as f64),
            // The work-conservation checker (not a schedstat): idle CPUs beside waiting tasks.
            cpu("wasted idle CPU time, ms     (wasted)", |r| r.wasted_ns as f64 / 1e6),
            cpu("wasted intervals > threshold (wasted)", |r| r.wasted_intervals as f64),
        ],
    )];
    for level in levels {
        // One counter of this level's domain (summed over CPUs), 0 if a run has no such level.
        let field = |f: fn(&DomainSchedstat) -> u64| -> Getter {
            let lv = level.clone();
            Box::new(move |r: &RunRecord| r.domains.iter().find(|(n, _)| *n == lv).map_or(0.0, |(_, d)| f(d) as f64))
        };
        let rows: Vec<(String, Getter)> = vec![
            ("newidle  load_balance() calls".into(), field(|d| d.lb_count[IdleType::NewlyIdle as usize])),
            ("newidle    found balanced".into(), field(|d| d.lb_balanced[IdleType::NewlyIdle as usize])),
            ("newidle    failed".into(), field(|d| d.lb_failed[IdleType::NewlyIdle as usize])),
            ("newidle    pulled tasks".into(), field(|d| d.lb_gained[IdleType::NewlyIdle as usize])),
            ("busy     load_balance() calls".into(), field(|d| d.lb_count[IdleType::Busy as usize])),
            ("busy       found balanced".into(), field(|d| d.lb_balanced[IdleType::Busy as usize])),
            ("busy       failed".into(), field(|d| d.lb_failed[IdleType::Busy as usize])),
            ("busy       pulled tasks".into(), field(|d| d.lb_gained[IdleType::Busy as usize])),
            ("idle     load_balance() calls".into(), field(|d| d.lb_count[IdleType::Idle as usize])),
            ("idle       found balanced".into(), field(|d| d.lb_balanced[IdleType::Idle as usize])),
            ("idle       failed".into(), field(|d| d.lb_failed[IdleType::Idle as usize])),
            ("idle       pulled tasks".into(), field(|d| d.lb_gained[IdleType::Idle as usize])),
            ("wakeups of tasks last on another CPU (ttwu_wake_remote)".into(), field(|d| d.ttwu_wake_remote)),
            ("affine wakeups              (ttwu_move_affine)".into(), field(|d| d.ttwu_move_affine)),
        ];
        out.push((format!("Domain {level} (summed over CPUs)"), rows));
    }
    out
}

/// Percentage change from `b` to `x`; None when both are zero, +inf from zero.
fn change(b: f64, x: f64) -> Option<f64> {
    if b == 0.0 {
        return if x == 0.0 { None } else { Some(f64::INFINITY) };
    }
    Some((x - b) / b.abs() * 100.0)
}

/// One diff per sweep point.
pub fn render(g: &Grid) -> String {
    let mut s = String::new();
    for p in 0..g.cells.len() {
        let mut levels: Vec<String> = Vec::new();
        for r in g.cells[p].iter().flatten() {
            for (n, _) in &r.domains {
                if !levels.contains(n) {
                    levels.push(n.clone());
                }
            }
        }
        let sections = sections(&levels);
        // values[section][row][variant]
        let values: Vec<Vec<Vec<f64>>> = sections
            .iter()
            .map(|(_, rows)| rows.iter().map(|(_, f)| (0..g.variants.len()).map(|v| Summary::of(&g.cells[p][v].iter().map(f).collect::<Vec<_>>()).amean).collect()).collect())
            .collect();
        // Marks: per variant, the MARK_TOP largest |change| ≥ MARK_MIN_PCT.
        let mut marked = vec![Vec::new(); g.variants.len()];
        for (v, m) in marked.iter_mut().enumerate().skip(1) {
            let mut all: Vec<(f64, usize, usize)> = Vec::new();
            for (si, sec) in values.iter().enumerate() {
                let big = sec.iter().map(|r| r[0].max(r[v])).fold(0.0, f64::max);
                for (ri, row) in sec.iter().enumerate() {
                    if row[0].max(row[v]) < MARK_MIN_SHARE * big {
                        continue; // 1 → 0 is -100 % but says nothing
                    }
                    if let Some(c) = change(row[0], row[v]) {
                        let a = if c.is_finite() { c.abs() } else { f64::MAX };
                        if a >= MARK_MIN_PCT {
                            all.push((a, si, ri));
                        }
                    }
                }
            }
            all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
            *m = all.into_iter().take(MARK_TOP).map(|(_, si, ri)| (si, ri)).collect();
        }
        if !s.is_empty() {
            s.push('\n');
        }
        let runs = g.cells[p].first().map_or(0, Vec::len);
        s += &format!("schedstat diff, {} (mean of {runs} runs)\n", g.point_label(p));
        let lw = 58;
        s += &format!("{:<lw$}{:>14}", "", g.variants[0]);
        for v in &g.variants[1..] {
            s += &format!("{v:>14} {:>9}    ", "change");
        }
        s = s.trim_end().to_string() + "\n";
        for (si, (title, rows)) in sections.iter().enumerate() {
            s += &format!("{title}\n");
            for (ri, (label, _)) in rows.iter().enumerate() {
                let row = &values[si][ri];
                if row.iter().all(|&x| x == 0.0) {
                    continue; // a counter no variant moved (e.g. busy balancing in a short run)
                }
                let mut line = format!("  {label:<w$}{:>14.2}", row[0], w = lw - 2);
                for v in 1..g.variants.len() {
                    let c = match change(row[0], row[v]) {
                        None => "-".to_string(),
                        Some(c) if c.is_infinite() => "new".to_string(),
                        Some(c) => format!("{c:+.2}%"),
                    };
                    let mark = if marked[v].contains(&(si, ri)) { " <<<" } else { "    " };
                    line += &format!("{:>14.2} {c:>9}{mark}", row[v]);
                }
                s += line.trim_end();
                s.push('\n');
            }
        }
    }
    s
}
