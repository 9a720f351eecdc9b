//! Where the time went: per variant, the wakeup path's cost per wakeup split by phase, and
//! where `select_idle_sibling()` placed the wakee — the "why" beside the tables' "what".
//!
//! Costs are totals over all runs divided by all wakeups (ns per wakeup), with each phase's
//! share of the total in parentheses. Placements are shares of all `select_idle_sibling()`
//! decisions.

use crate::Grid;
use wakesim_stats::{SisOutcome, WakeStats};

/// Reads one counter.
type Field = fn(&WakeStats) -> u64;

/// The cost phases: (label, field).
const COSTS: [(&str, Field); 7] = [
    ("select_task_rq (selection)", |w| w.cost_select),
    ("idle-CPU scan (select_idle_cpu)", |w| w.cost_scan),
    ("remote rq lock", |w| w.cost_remote_lock),
    ("IPI send", |w| w.cost_ipi_send),
    ("idle exit (target CPU)", |w| w.cost_idle_exit),
    ("newidle balance", |w| w.cost_newidle),
    ("migration penalty (cold cache)", |w| w.cost_migration),
];

/// The placement outcomes shown, by [`SisOutcome`]; the others are summed as "other".
const PLACES: [(&str, SisOutcome); 6] = [
    ("target (waker or prev CPU)", SisOutcome::Target),
    ("prev CPU", SisOutcome::Prev),
    ("recent_used_cpu", SisOutcome::Recent),
    ("idle core", SisOutcome::IdleCore),
    ("idle CPU", SisOutcome::IdleCpu),
    ("none found (target kept)", SisOutcome::Fallback),
];

/// Wake counters summed over the runs of (point, variant).
pub fn total(g: &Grid, point: usize, variant: usize) -> WakeStats {
    let mut w = WakeStats::default();
    for r in &g.cells[point][variant] {
        w.add(&r.wake);
    }
    w
}

/// Cost per wakeup of each phase, ns, and their sum.
pub fn per_wakeup(w: &WakeStats) -> (Vec<f64>, f64) {
    let n = w.wakeups.max(1) as f64;
    let v: Vec<f64> = COSTS.iter().map(|(_, f)| f(w) as f64 / n).collect();
    let t = v.iter().sum();
    (v, t)
}

/// One block per sweep point.
pub fn render(g: &Grid) -> String {
    let mut s = String::new();
    let lw = 34;
    for p in 0..g.cells.len() {
        let ws: Vec<WakeStats> = (0..g.variants.len()).map(|v| total(g, p, v)).collect();
        if !s.is_empty() {
            s.push('\n');
        }
        s += &format!("Where the wakeup time went, {} (ns per wakeup, share of the total)\n", g.point_label(p));
        s += &format!("{:<lw$}", "");
        for v in &g.variants {
            s += &format!("{v:>20}");
        }
        s.push('\n');
        let costs: Vec<(Vec<f64>, f64)> = ws.iter().map(per_wakeup).collect();
        for (i, (label, _)) in COSTS.iter().enumerate() {
            s += &format!("{label:<lw$}");
            for (v, t) in &costs {
                let share = if *t > 0.0 { v[i] / t * 100.0 } else { 0.0 };
                s += &format!("{:>10.1} ({share:>5.1}%)", v[i]);
            }
            s.push('\n');
        }
        s += &format!("{:<lw$}", "total");
        for (_, t) in &costs {
            s += &format!("{t:>10.1}         ");
        }
        s = s.trim_end().to_string() + "\n";
        s += &format!("{:<lw$}", "wakeups");
        for w in &ws {
            s += &format!("{:>20}", w.wakeups);
        }
        s.push('\n');
        for (label, f) in [("IPIs per wakeup", (|w: &WakeStats| w.ipis_sent) as Field), ("polling wakes per wakeup", |w| w.poll_wakes), ("migrating wakeups per wakeup", |w| w.wakeups_migrated)] {
            s += &format!("{label:<lw$}");
            for w in &ws {
                s += &format!("{:>20.3}", f(w) as f64 / w.wakeups.max(1) as f64);
            }
            s.push('\n');
        }
        s += "Placement (select_idle_sibling outcome, % of decisions)\n";
        let totals: Vec<u64> = ws.iter().map(|w| w.sis_outcome.iter().sum()).collect();
        let mut shown = [false; 8];
        for (label, o) in PLACES {
            shown[o as usize] = true;
            s += &format!("{label:<lw$}");
            for (w, t) in ws.iter().zip(&totals) {
                s += &format!("{:>19.1}%", w.sis_outcome[o as usize] as f64 / (*t).max(1) as f64 * 100.0);
            }
            s.push('\n');
        }
        s += &format!("{:<lw$}", "other (kthread stack, SMT sibling)");
        for (w, t) in ws.iter().zip(&totals) {
            let other: u64 = (0..8).filter(|&i| !shown[i]).map(|i| w.sis_outcome[i]).sum();
            s += &format!("{:>19.1}%", other as f64 / (*t).max(1) as f64 * 100.0);
        }
        s.push('\n');
    }
    s
}
