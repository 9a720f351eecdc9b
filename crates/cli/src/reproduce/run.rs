//! Running the selected rows: rows that differ only in their variant (or not at all) share one
//! `wakesim compare` experiment, whose command line is built, printed and parsed exactly as a
//! user would type it; the runs of every experiment go through compare's machinery (plan,
//! paired seeds, `--out` store and resume, `exec::run_one`) on one pool of `--jobs` threads.

use super::spec::{Figure, Row, Scale, Size};
use crate::compare::{self, exec, plan::shell_quote, Prepared};
use crate::UserError;
use std::path::PathBuf;
use wakesim_report::RunRecord;

/// How the rows are run.
pub struct Options {
    pub quick: bool,
    /// `--seeds N`; `None`: each row's `seeds` (default 5), in quick mode its `quick.seeds`
    /// (default 2).
    pub seeds: Option<u32>,
    pub jobs: usize,
    pub out: Option<PathBuf>,
    /// `--cost-scale KEY=FACTOR` for every experiment (`reproduce --sensitivity`).
    pub cost_scale: Option<String>,
}

/// One `wakesim compare` experiment and the rows it serves.
pub struct Experiment {
    /// `C1`, `C2`, … in the order of the rows.
    pub label: String,
    /// The rows' ids.
    pub rows: Vec<String>,
    /// The command as printed (no `--out`, no `--jobs`).
    pub argv: Vec<String>,
    /// `--out DIR/STEM/ROW` when `--out` is given.
    pub dir: Option<PathBuf>,
    /// Variant names, baseline first.
    pub variants: Vec<String>,
    pub seeds: u32,
}

impl Experiment {
    pub fn command_line(&self) -> String {
        self.argv.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ")
    }
}

/// The row's size in this mode.
pub fn size<'a>(r: &'a Row, o: &Options) -> &'a Size {
    if o.quick {
        &r.quick
    } else {
        &r.full
    }
}

/// Seeds per row unless `--seeds` or the row's spec says otherwise, in a full and a `--quick` run.
pub const SEEDS: u32 = 5;
pub const QUICK_SEEDS: u32 = 2;

fn seeds_of(r: &Row, o: &Options) -> u32 {
    match (o.seeds, o.quick) {
        (Some(n), _) => n,
        (None, true) => r.quick_seeds.unwrap_or(QUICK_SEEDS),
        (None, false) => r.seeds.unwrap_or(SEEDS),
    }
}

/// Groups rows into experiments: same machine, kernel, baseline, noise, governor, command,
/// copies and duration. Returns the experiments and, per row, (experiment, variant index).
pub fn group(rows: &[&Row], o: &Options) -> Result<(Vec<Experiment>, Vec<(usize, usize)>), UserError> {
    type Key = (String, String, String, Option<String>, Option<String>, Vec<String>, u32, String);
    let key = |r: &Row| -> Key {
        let s = size(r, o);
        (r.machine.clone(), r.kernel.clone(), r.baseline.clone(), r.noise.clone(), r.governor.clone(), s.command.clone(), s.copies, s.duration.to_string())
    };
    let mut keys: Vec<Key> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    let mut variants: Vec<Vec<(String, String)>> = Vec::new();
    let mut at = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let k = key(r);
        let e = match keys.iter().position(|x| *x == k) {
            Some(e) => e,
            None => {
                keys.push(k);
                members.push(Vec::new());
                variants.push(Vec::new());
                keys.len() - 1
            }
        };
        members[e].push(i);
        let v = match variants[e].iter().position(|(n, _)| *n == r.variant_name) {
            Some(v) if variants[e][v].1 == r.variant => v,
            Some(v) => {
                return Err(UserError(format!(
                    "{}:{}: key 'variant_name': rows {} and {} run the same benchmark with variant '{}' as {} and {}; give one of them another variant_name",
                    r.file, r.line, rows[members[e][0]].id, r.id, r.variant_name, variants[e][v].1, r.variant
                )))
            }
            None => {
                variants[e].push((r.variant_name.clone(), r.variant.clone()));
                variants[e].len() - 1
            }
        };
        at.push((e, v + 1));
    }
    let mut out = Vec::new();
    for (e, m) in members.iter().enumerate() {
        let first = rows[m[0]];
        let s = size(first, o);
        let seeds = m.iter().map(|&i| seeds_of(rows[i], o)).max().unwrap_or(1);
        let mut argv: Vec<String> = ["wakesim", "compare", "--machine", &first.machine, "--kernel", &first.kernel].iter().map(|s| s.to_string()).collect();
        if !first.baseline.is_empty() {
            argv.push(format!("--baseline={}", first.baseline));
        }
        if let Some(n) = &first.noise {
            argv.extend(["--noise".into(), n.clone()]);
        }
        if let Some(g) = &first.governor {
            argv.extend(["--governor".into(), g.clone()]);
        }
        if let Some(c) = &o.cost_scale {
            argv.extend(["--cost-scale".into(), c.clone()]);
        }
        for (name, spec) in &variants[e] {
            argv.extend(["--variant".into(), format!("{name}={spec}")]);
        }
        argv.extend(["--runs".into(), seeds.to_string(), "--seed".into(), "1".into()]);
        if s.copies != 1 {
            argv.extend(["--copies".into(), s.copies.to_string()]);
        }
        if s.duration != 60.0 {
            argv.extend(["--duration".into(), s.duration.to_string()]);
        }
        argv.extend(["--format".into(), "mmtests".into(), "--".into()]);
        argv.extend(s.command.iter().cloned());
        let dir = o.out.as_ref().map(|d| {
            let (stem, name) = first.id.split_once('/').unwrap_or((&first.id, "all"));
            d.join(stem).join(name)
        });
        out.push(Experiment {
            label: format!("C{}", e + 1),
            rows: m.iter().map(|&i| rows[i].id.clone()).collect(),
            argv,
            dir,
            variants: std::iter::once("baseline".to_string()).chain(variants[e].iter().map(|(n, _)| n.clone())).collect(),
            seeds,
        });
    }
    Ok((out, at))
}

/// Every experiment's runs, `records[experiment][variant][seed]`.
pub type Records = Vec<Vec<Vec<RunRecord>>>;

/// Runs (or, from `--out`, resumes) every experiment.
pub fn run(exps: &[Experiment], jobs: usize) -> Result<Records, UserError> {
    let mut prepared: Vec<(Prepared, Vec<String>)> = Vec::new();
    for e in exps {
        let mut argv = e.argv.clone();
        if let Some(d) = &e.dir {
            let at = argv.iter().position(|a| a == "--").unwrap_or(argv.len());
            argv.splice(at..at, ["--out".to_string(), d.display().to_string()]);
        }
        // experiment.json records the compare command that resumes this directory.
        crate::api::set_invocation(&argv);
        let a = compare::parse_args(&argv).map_err(|err| UserError(format!("{}: {}", e.command_line(), err.0)))?;
        let p = compare::prepare(&a)?;
        prepared.push((p, argv));
    }
    let setups: Vec<exec::Setup> = prepared.iter().map(|(p, _)| p.setup()).collect();
    let todo: Vec<(usize, &compare::plan::RunSpec)> = prepared.iter().enumerate().flat_map(|(e, (p, _))| p.todo.iter().map(move |r| (e, r))).collect();
    let mut slots: Vec<Vec<Option<RunRecord>>> = prepared.iter().map(|(p, _)| p.slots.clone()).collect();
    // One pool over every experiment's runs, in (experiment, plan) order.
    for (k, res) in exec::run_pool(&todo, jobs, |&(e, r)| exec::run_one(&setups[e], r)) {
        let (e, r) = todo[k];
        slots[e][r.index] = Some(res?);
    }
    let mut out = Vec::new();
    for (((p, argv), setup), slots) in prepared.iter().zip(&setups).zip(slots) {
        let g = compare::grid(&p.exp, &p.plan, slots);
        if let Some(s) = &p.store {
            // A complete compare directory: `wakesim report` draws it, `compare` resumes it.
            let trace = s.dir.join("trace.json");
            if !trace.exists() {
                exec::record_trace(setup, &p.plan[0], &trace)?;
            }
            compare::results::write_all(&s.dir, &p.exp, argv, &g)?;
        }
        let mut cells = g.cells.into_iter().next().unwrap_or_default();
        for (v, runs) in cells.iter().enumerate() {
            if runs.len() != p.exp.runs as usize {
                return Err(UserError(format!("experiment {}: variant {v} has {} of {} runs", p.exp.command.join(" "), runs.len(), p.exp.runs)));
            }
        }
        out.push(std::mem::take(&mut cells));
    }
    Ok(out)
}

/// The row's figure in one run.
pub fn figure(r: &Row, rec: &RunRecord) -> Result<(f64, String), UserError> {
    match &r.figure {
        Figure::Metric(None) => rec.metrics.first().map(|m| (m.value, m.unit.clone())).ok_or_else(|| UserError(format!("{}:{}: the runs report no metric", r.file, r.line))),
        Figure::Metric(Some(n)) => rec.metrics.iter().find(|m| &m.name == n).map(|m| (m.value, m.unit.clone())).ok_or_else(|| {
            let known: Vec<&str> = rec.metrics.iter().map(|m| m.name.as_str()).collect();
            UserError(format!("{}:{}: key 'metric': the benchmark has no metric '{n}' (it has: {})", r.file, r.figure_line, known.join(", ")))
        }),
        Figure::Latency { name, percentile } => {
            let l = rec.latencies.iter().find(|l| &l.name == name).ok_or_else(|| {
                let known: Vec<&str> = rec.latencies.iter().map(|l| l.name.as_str()).collect();
                UserError(format!("{}:{}: key 'latency': the benchmark has no latency distribution '{name}' (it has: {})", r.file, r.figure_line, known.join(", ")))
            })?;
            let v = l.points.iter().find(|(p, _)| p == percentile).map(|(_, v)| *v).ok_or_else(|| UserError(format!("{}:{}: key 'percentile': {percentile} not kept", r.file, r.figure_line)))?;
            Ok((v, l.unit.clone()))
        }
    }
}

/// One row's figures over the seeds.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Measured {
    pub unit: String,
    pub baseline: Vec<f64>,
    pub variant: Vec<f64>,
    /// Per seed, in the row's scale (percent change or ratio).
    pub change: Vec<f64>,
}

pub fn measure(r: &Row, base: &[RunRecord], var: &[RunRecord]) -> Result<Measured, UserError> {
    let mut m = Measured { unit: String::new(), baseline: Vec::new(), variant: Vec::new(), change: Vec::new() };
    for (b, v) in base.iter().zip(var) {
        let (bv, unit) = figure(r, b)?;
        let (vv, _) = figure(r, v)?;
        m.unit = unit;
        m.baseline.push(bv);
        m.variant.push(vv);
        m.change.push(match r.scale {
            Scale::Percent => (vv / bv - 1.0) * 100.0,
            Scale::Ratio => vv / bv,
        });
    }
    Ok(m)
}

/// The median (the mean of the middle two for an even count), min and max; NaN if any is NaN.
pub fn median_min_max(v: &[f64]) -> (f64, f64, f64) {
    if v.is_empty() || v.iter().any(|x| x.is_nan()) {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    let med = if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 };
    (med, s[0], s[n - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rows_own_seed_count_applies_unless_seeds_is_given() {
        let text = super::super::spec::tests::GOOD.replace("scale = \"ratio\"", "seeds = 12\nscale = \"ratio\"");
        let spec = super::super::spec::parse(&text, "x.toml", "x").unwrap();
        let r = &spec.rows[0];
        let o = |seeds, quick| Options { quick, seeds, jobs: 1, out: None, cost_scale: None };
        assert_eq!(seeds_of(r, &o(None, false)), 12);
        assert_eq!(seeds_of(r, &o(Some(3), false)), 3);
        assert_eq!(seeds_of(r, &o(None, true)), 1);
        let mut plain = r.clone();
        plain.seeds = None;
        assert_eq!(seeds_of(&plain, &o(None, false)), 5);
    }

    #[test]
    fn medians_take_the_middle_two_of_an_even_count() {
        assert_eq!(median_min_max(&[3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(median_min_max(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.0, 4.0));
        assert!(median_min_max(&[1.0, f64::NAN]).0.is_nan());
    }
}
