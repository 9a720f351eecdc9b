//! The normalized table of AMD's LKML replies (K Prateek Nayak's format): per sweep point, each
//! variant's mean as a ratio to the baseline's, `[pct imp]` (its gain, positive = better) and
//! `(CV)` (its own coefficient of variation, percent).
//!
//! ```text
//! ==================================================================
//! Test          : tbench
//! Units         : Normalized Throughput (MB/sec)
//! Interpretation: Higher is better
//! Statistic     : HMean
//! ==================================================================
//! Clients:    baseline[pct imp](CV)    sh_rq[pct imp](CV)
//!     1     1.00 [ 0.00]( 0.36)     1.02 [ 1.75]( 0.40)
//! ```

use crate::summary::{gain, Summary};
use crate::Grid;

const RULE: &str = "==================================================================";

/// One block per metric.
pub fn render(g: &Grid) -> String {
    let mut s = String::new();
    for (name, unit, hib) in g.metric_kinds() {
        if !s.is_empty() {
            s.push('\n');
        }
        let stat = if hib { "HMean" } else { "AMean" };
        let interp = if hib { "Higher is better" } else { "Lower is better" };
        s += &format!("{RULE}\nTest          : {}\nUnits         : Normalized {name} ({unit})\nInterpretation: {interp}\nStatistic     : {stat}\n{RULE}\n", g.workload);
        let head = if g.sweeps.is_empty() {
            "Point:".to_string()
        } else {
            let n = g.sweeps.join(",");
            let mut c = n.chars();
            c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default() + ":"
        };
        let values: Vec<String> = (0..g.cells.len()).map(|p| g.point_values(p)).collect();
        let w0 = values.iter().map(String::len).max().unwrap_or(1).max(5);
        // Names end one column before their cells, as in the original.
        s += &head;
        let mut col = head.len();
        for (i, v) in g.variants.iter().enumerate() {
            // Each name ends one column before its cells end (w0 + 24·(i+1)).
            let text = format!("{v}[pct imp](CV)");
            let end = w0 + 24 * (i + 1) - 1;
            let w = end.saturating_sub(col).max(text.len() + 1);
            s += &format!("{text:>w$}");
            col += w;
        }
        s.push('\n');
        for (p, label) in values.iter().enumerate() {
            let base = Summary::of(&g.values(p, 0, &name)).mean(hib);
            s += &format!("{label:>w0$}");
            for v in 0..g.variants.len() {
                let sum = Summary::of(&g.values(p, v, &name));
                let m = sum.mean(hib);
                let ratio = if base != 0.0 { m / base } else { f64::NAN };
                let pct = if v == 0 { 0.0 } else { gain(base, m, hib) };
                s += &format!("{ratio:>9.2} [{pct:>5.2}]({:>5.2})", sum.cv);
            }
            s.push('\n');
        }
    }
    s
}
