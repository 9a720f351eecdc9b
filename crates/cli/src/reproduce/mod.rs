//! `wakesim reproduce`: every published result of the mailing-list changes, rerun over seeds
//! and set beside its published figure.
//!
//! * [`spec`]: the `reproduce/*.toml` specs (format in `reproduce/README.md`), read and checked;
//! * [`run`]: rows grouped into `wakesim compare` experiments and run through compare's
//!   machinery (plan, paired seeds, `--out` store and resume, one `--jobs` pool);
//! * [`render`]: each row judged (direction, size band, absolute level) and the markdown
//!   document that `--write-docs docs/results.md` writes.

pub mod render;
pub mod run;
pub mod sensitivity;
pub mod spec;

use crate::args::ReproduceArgs;
use crate::compare::plan::shell_quote;
use crate::output::{check_writable, write_atomic};
use crate::UserError;
use std::path::Path;

/// The command line as the document's header shows it: what decides the table (not `--out`,
/// `--jobs` or `--strict`).
fn shown_command(a: &ReproduceArgs) -> String {
    let mut v: Vec<String> = vec!["wakesim".into(), "reproduce".into()];
    v.extend(a.names.iter().cloned());
    if a.quick {
        v.push("--quick".into());
    }
    if let Some(n) = a.seeds {
        v.extend(["--seeds".into(), n.to_string()]);
    }
    if let Some(d) = &a.specs {
        v.extend(["--specs".into(), d.display().to_string()]);
    }
    if !a.sensitivity.is_empty() {
        v.extend(["--sensitivity".into(), a.sensitivity.join(",")]);
        v.extend(["--factors".into(), a.factors.iter().map(|f| f.to_string()).collect::<Vec<_>>().join(",")]);
    }
    if let Some(p) = &a.write_docs {
        v.extend(["--write-docs".into(), p.display().to_string()]);
    }
    v.iter().map(|x| shell_quote(x)).collect::<Vec<_>>().join(" ")
}

/// Links from a document at `path` (relative to the source tree's root) back to that root:
/// `docs/results.md` → `../`.
fn root_from(path: Option<&Path>) -> String {
    match path {
        Some(p) if p.is_relative() => {
            let depth = p.parent().map_or(0, |d| d.components().filter(|c| matches!(c, std::path::Component::Normal(_))).count());
            "../".repeat(depth)
        }
        _ => String::new(),
    }
}

pub fn reproduce(a: ReproduceArgs) -> Result<(), UserError> {
    let jobs = match a.jobs {
        Some(0) => return Err(UserError("--jobs must be at least 1".into())),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if a.seeds == Some(0) {
        return Err(UserError("--seeds must be at least 1".into()));
    }
    if let Some(p) = &a.write_docs {
        check_writable(p)?;
    }
    if let Some(d) = &a.out {
        if d.exists() && !d.is_dir() {
            return Err(UserError(format!("--out {}: exists and is not a directory", d.display())));
        }
    }
    let dir = spec::spec_dir(a.specs.as_deref())?;
    let specs = spec::load_dir(&dir)?;
    let rows = spec::select(&specs, &a.names)?;
    if a.list {
        for s in &specs {
            crate::outln!("{}  {} — {}, “{}”, {}", s.stem, s.change, s.author, s.title, s.date);
            for r in s.rows.iter().filter(|r| rows.iter().any(|x| x.id == r.id)) {
                crate::outln!("  {:<36} {} on {}, {}, {}", r.id, r.benchmark, r.machine, r.kernel, r.variant);
            }
        }
        return Ok(());
    }
    let opts = run::Options { quick: a.quick, seeds: a.seeds, jobs, out: a.out.clone(), cost_scale: None };
    if !a.sensitivity.is_empty() {
        let doc = sensitivity::reproduce(&a, &rows, &opts, &shown_command(&a), root_from(a.write_docs.as_deref()))?;
        crate::outp!("{doc}");
        if let Some(p) = &a.write_docs {
            write_atomic(p, &doc)?;
        }
        return Ok(());
    }
    let (exps, at) = run::group(&rows, &opts)?;
    if let Some(d) = &a.out {
        std::fs::create_dir_all(d).map_err(|e| UserError(format!("cannot create {}: {e}", d.display())))?;
    }
    let records = run::run(&exps, opts.jobs)?;
    let mut judged = Vec::new();
    for (r, &(e, v)) in rows.iter().zip(&at) {
        let m = run::measure(r, &records[e][0], &records[e][v])?;
        let comparable = run::size(r, &opts) == &r.full;
        judged.push(render::judge(r, exps[e].label.clone(), m, comparable));
    }
    let seeds = (exps.iter().map(|e| e.seeds).min().unwrap_or(0), exps.iter().map(|e| e.seeds).max().unwrap_or(0));
    let ctx = render::Context {
        command: shown_command(&a),
        quick: a.quick,
        seeds,
        subset: !a.names.is_empty(),
        specs: &specs,
        root: root_from(a.write_docs.as_deref()),
    };
    let doc = render::document(&ctx, &judged, &exps);
    crate::outp!("{doc}");
    if let Some(p) = &a.write_docs {
        write_atomic(p, &doc)?;
    }
    if let Some(d) = &a.out {
        write_atomic(&d.join("results.md"), &doc)?;
        let json = serde_json::json!({
            "command": ctx.command,
            "quick": a.quick,
            "experiments": exps.iter().map(|e| serde_json::json!({
                "label": e.label, "command": e.command_line(), "rows": e.rows, "variants": e.variants, "seeds": e.seeds,
                "dir": e.dir.as_ref().map(|d| d.display().to_string()),
            })).collect::<Vec<_>>(),
            "rows": judged.iter().map(|j| serde_json::json!({
                "id": j.row.id, "change": j.row.change, "benchmark": j.row.benchmark, "machine": j.row.machine,
                "kernel": j.row.kernel, "baseline": j.row.baseline, "variant": j.row.variant, "experiment": j.exp,
                "unit": j.m.unit, "baseline_values": j.m.baseline, "variant_values": j.m.variant, "change_values": j.m.change,
                "baseline_median": j.base.0, "variant_median": j.var.0, "change_median": j.change.0,
                "direction": j.row.direction.word(), "direction_ok": j.direction_ok, "in_band": j.in_band,
                "band": [j.row.band.0, j.row.band.1], "unexplained": j.unexplained(), "cause": j.row.cause,
            })).collect::<Vec<_>>(),
        });
        let text = serde_json::to_string_pretty(&json).map_err(|e| UserError(format!("cannot serialise results: {e}")))?;
        write_atomic(&d.join("reproduce.json"), &(text + "\n"))?;
    }
    if a.strict {
        let bad: Vec<&str> = judged.iter().filter(|j| j.unexplained()).map(|j| j.row.id.as_str()).collect();
        if !bad.is_empty() {
            return Err(UserError(format!(
                "--strict: {} row{} outside {} band or in the wrong direction without a cause in {} spec (UNEXPLAINED): {}",
                bad.len(),
                if bad.len() == 1 { " is" } else { "s are" },
                if bad.len() == 1 { "its" } else { "their" },
                if bad.len() == 1 { "its" } else { "their" },
                bad.join(", ")
            )));
        }
    }
    Ok(())
}
