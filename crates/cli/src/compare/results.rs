//! The tidy tables of `--out DIR`: `results.csv`/`.json` (one row per run and metric) and
//! `summary.csv`/`.json` (statistics per point, variant and metric, with the gain over the
//! baseline and Welch's p-value), ready for pandas or polars. `features` is the variant's
//! change as given (`+SHARED_RUNQ`), `features_on` every feature the run had on.

use super::plan::{shell_quote, Experiment};
use crate::output::write_atomic;
use crate::UserError;
use serde_json::{Map, Value};
use std::path::Path;
use wakesim_report::summary::{gain, mean_name, welch_p, Summary, ALPHA};
use wakesim_report::Grid;

/// Column order of a row (sweep columns go after `workload`).
fn write_tables(dir: &Path, name: &str, head: &[String], rows: &[Vec<Value>]) -> Result<(), UserError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| UserError(format!("cannot write {name}.csv: {e}"));
    w.write_record(head).map_err(err)?;
    for r in rows {
        w.write_record(r.iter().map(|v| match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            v => v.to_string(),
        }))
        .map_err(err)?;
    }
    let bytes = w.into_inner().map_err(|e| UserError(format!("cannot write {name}.csv: {e}")))?;
    write_atomic(&dir.join(format!("{name}.csv")), &String::from_utf8_lossy(&bytes))?;
    let objs: Vec<Value> = rows.iter().map(|r| Value::Object(head.iter().cloned().zip(r.iter().cloned()).collect::<Map<String, Value>>())).collect();
    let text = serde_json::to_string_pretty(&objs).map_err(|e| UserError(format!("cannot write {name}.json: {e}")))?;
    write_atomic(&dir.join(format!("{name}.json")), &(text + "\n"))
}

fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// Writes results.*, summary.* and commands.txt.
pub fn write_all(dir: &Path, exp: &Experiment, argv: &[String], g: &Grid) -> Result<(), UserError> {
    let points = exp.points();
    let sweep_names: Vec<String> = exp.sweeps.iter().map(|(n, _)| n.clone()).collect();
    let common = |p: usize, v: usize| -> Vec<Value> {
        let mut row = vec![
            Value::String(exp.machine.clone()),
            Value::String(exp.kernel.clone()),
            Value::String(exp.variants[v].name.clone()),
            Value::String(exp.variants[v].spec.clone()),
            Value::String(exp.variants[v].features.join(",")),
            Value::String(exp.command_at(&points[p]).join(" ")),
        ];
        row.extend(points[p].iter().map(|x| Value::String(x.clone())));
        row
    };
    let mut head: Vec<String> = ["machine", "kernel", "variant", "features", "features_on", "workload"].iter().map(|s| s.to_string()).collect();
    head.extend(sweep_names.iter().cloned());
    let mut rhead = head.clone();
    rhead.extend(["run", "seed", "metric", "unit", "higher_is_better", "value"].iter().map(|s| s.to_string()));
    let mut rows = Vec::new();
    for (p, per_v) in g.cells.iter().enumerate() {
        for (v, runs) in per_v.iter().enumerate() {
            for (k, r) in runs.iter().enumerate() {
                for m in &r.metrics {
                    let mut row = common(p, v);
                    row.extend([Value::from(k), Value::from(exp.base_seed.wrapping_add(k as u64)), Value::String(m.name.clone()), Value::String(m.unit.clone()), Value::Bool(m.higher_is_better), num(m.value)]);
                    rows.push(row);
                }
            }
        }
    }
    write_tables(dir, "results", &rhead, &rows)?;
    let mut shead = head.clone();
    shead.extend(
        ["metric", "unit", "higher_is_better", "runs", "mean_kind", "mean", "amean", "hmean", "stddev", "cv_pct", "min", "max", "gain_pct", "welch_p", "significant"].iter().map(|s| s.to_string()),
    );
    let mut srows = Vec::new();
    for (name, unit, hib) in g.metric_kinds() {
        for p in 0..g.cells.len() {
            let base = g.values(p, 0, &name);
            let bm = Summary::of(&base).mean(hib);
            for v in 0..g.variants.len() {
                let xs = g.values(p, v, &name);
                let s = Summary::of(&xs);
                let pv = if v == 0 { None } else { welch_p(&base, &xs) };
                let mut row = common(p, v);
                row.extend([
                    Value::String(name.clone()),
                    Value::String(unit.clone()),
                    Value::Bool(hib),
                    Value::from(s.n),
                    Value::String(mean_name(hib).into()),
                    num(s.mean(hib)),
                    num(s.amean),
                    num(s.hmean),
                    num(s.stddev),
                    num(s.cv),
                    num(s.min),
                    num(s.max),
                    num(if v == 0 { 0.0 } else { gain(bm, s.mean(hib), hib) }),
                    pv.map_or(Value::Null, num),
                    Value::Bool(pv.is_some_and(|p| p < ALPHA)),
                ]);
                srows.push(row);
            }
        }
    }
    write_tables(dir, "summary", &shead, &srows)?;
    let mut cmds = String::from("# The compare command, then each run's equivalent `wakesim run` in plan order.\n");
    cmds += &argv.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ");
    cmds.push('\n');
    for r in exp.plan() {
        cmds += &exp.run_argv(&r).iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ");
        cmds.push('\n');
    }
    write_atomic(&dir.join("commands.txt"), &cmds)
}
