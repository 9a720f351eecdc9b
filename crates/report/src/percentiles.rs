//! Latency percentile tables side by side, one per sweep point and distribution, in
//! schbench's own layout (`  50.0th:` rows, `*` on the 99th as schbench stars it), with one
//! column per variant: the percentile averaged over runs and its gain over the baseline.
//!
//! ```text
//! Wakeup Latencies percentiles (usec), clients-1
//!                                 baseline                  sh_rq
//!           20.0th:        5.00 (   0.00%)        4.00 (  20.00%)
//!         * 99.0th:       31.00 (   0.00%)       25.00 (  19.35%)
//! ```

use crate::summary::{gain, Summary};
use crate::Grid;

/// The percentiles schbench prints (`schbench.c`: `plist[] = { 20, 50, 90, 99, 99.9 }`).
pub const SCHBENCH_PERCENTILES: [f64; 5] = [20.0, 50.0, 90.0, 99.0, 99.9];

/// Names of the latency distributions the runs carry, in the order of the first run.
pub fn latency_names(g: &Grid) -> Vec<String> {
    g.cells
        .iter()
        .flat_map(|p| p.iter().flat_map(|v| v.iter()))
        .next()
        .map(|r| r.latencies.iter().map(|l| l.name.clone()).collect())
        .unwrap_or_default()
}

/// Mean over the runs of (point, variant) of distribution `name` at percentile `q`.
pub fn mean_at(g: &Grid, point: usize, variant: usize, name: &str, q: f64) -> f64 {
    let xs: Vec<f64> = g.cells[point][variant]
        .iter()
        .filter_map(|r| r.latencies.iter().find(|l| l.name == name))
        .filter_map(|l| l.points.iter().find(|(p, _)| (p - q).abs() < 1e-9).map(|x| x.1))
        .collect();
    Summary::of(&xs).amean
}

/// All tables; `include_model` also tabulates the model's own wakeup latency.
pub fn render(g: &Grid, include_model: bool) -> String {
    let mut s = String::new();
    for name in latency_names(g) {
        if !include_model && name == crate::MODEL_WAKEUP_LATENCY {
            continue;
        }
        let unit = g.cells[0][0].first().and_then(|r| r.latencies.iter().find(|l| l.name == name)).map_or("", |l| l.unit.as_str()).to_string();
        for p in 0..g.cells.len() {
            if !s.is_empty() {
                s.push('\n');
            }
            s += &format!("{name} percentiles ({unit}), {}\n{:<18}", g.point_label(p), "");
            for v in &g.variants {
                s += &format!("{v:>23}");
            }
            s.push('\n');
            for q in SCHBENCH_PERCENTILES {
                let star = if q == 99.0 { '*' } else { ' ' };
                s += &format!("{:>10}{star} {:>4.1}th:", "", q);
                let base = mean_at(g, p, 0, &name, q);
                for v in 0..g.variants.len() {
                    let x = mean_at(g, p, v, &name, q);
                    let pct = if v == 0 { 0.0 } else { gain(base, x, false) };
                    s += &format!("{x:>12.2} ({pct:>7.2}%)");
                }
                s.push('\n');
            }
        }
    }
    s
}
