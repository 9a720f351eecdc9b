//! mmtests' `compare-kernels.sh` table: one block per metric, rows grouped by statistic, one
//! row per sweep point, each variant's value followed by its gain over the baseline.
//!
//! ```text
//! tbench Throughput (MB/sec)
//!                                 baseline                  sh_rq
//! Hmean     clients-1      389.38 (   0.00%)      401.15 *   3.02%*
//! ```
//!
//! Gains are mmtests' "better is positive": for a time, a decrease shows as a positive
//! percentage. The spread rows (Stddev, CV) count a decrease as better. A gain is wrapped in
//! `*…*` instead of `(…)` when Welch's t-test finds the means different at α = 0.05 (mean row
//! only, as mmtests does).

use crate::summary::{gain, mean_name, significant, Summary};
use crate::Grid;

/// Decimals for a block: 2 as mmtests prints most metrics; 4 when every value is below 10
/// (times in seconds, as mmtests prints hackbench); 6 when below 0.01.
fn decimals(xs: impl Iterator<Item = f64>) -> usize {
    let max = xs.filter(|x| x.is_finite()).fold(0.0f64, |m, x| m.max(x.abs()));
    if max >= 10.0 {
        2
    } else if max >= 0.01 {
        4
    } else {
        6
    }
}

/// One value cell: `      401.15 *   3.02%*` or `      389.38 (   0.00%)`.
fn cell(v: f64, pct: f64, star: bool, dp: usize) -> String {
    let (o, c) = if star { ('*', '*') } else { ('(', ')') };
    format!("{v:>12.dp$} {o}{pct:>7.2}%{c}")
}

/// The whole table: one block per metric the benchmark reports.
pub fn render(g: &Grid) -> String {
    let mut s = String::new();
    let labels: Vec<String> = (0..g.points.len().max(1)).map(|p| g.point_label(p)).collect();
    let lw = labels.iter().map(String::len).max().unwrap_or(3);
    for (name, unit, hib) in g.metric_kinds() {
        if !s.is_empty() {
            s.push('\n');
        }
        s += &format!("{} {} ({})\n", g.workload, name, unit);
        s += &" ".repeat(10 + lw);
        for v in &g.variants {
            s += &format!("{v:>23}");
        }
        s.push('\n');
        let sums: Vec<Vec<Summary>> = (0..g.cells.len())
            .map(|p| (0..g.variants.len()).map(|v| Summary::of(&g.values(p, v, &name))).collect())
            .collect();
        let dp = decimals(sums.iter().flatten().map(|x| x.mean(hib)));
        type Stat = fn(&Summary, bool) -> f64;
        let rows: [(&str, Stat, bool); 5] = [
            (mean_name(hib), |s, h| s.mean(h), true),
            ("Stddev", |s, _| s.stddev, false),
            ("CV", |s, _| s.cv, false),
            ("Min", |s, _| s.min, true),
            ("Max", |s, _| s.max, true),
        ];
        for (row, stat, follows_metric) in rows {
            for (p, label) in labels.iter().enumerate().take(g.cells.len()) {
                s += &format!("{row:<10}{label:<lw$}");
                let base = stat(&sums[p][0], hib);
                let base_vals = g.values(p, 0, &name);
                for (v, sum) in sums[p].iter().enumerate() {
                    let x = stat(sum, hib);
                    let pct = if v == 0 { 0.0 } else { gain(base, x, if follows_metric { hib } else { false }) };
                    let star = v > 0 && row == mean_name(hib) && significant(&base_vals, &g.values(p, v, &name));
                    s += &cell(x, pct, star, dp);
                }
                s.push('\n');
            }
        }
    }
    s
}
