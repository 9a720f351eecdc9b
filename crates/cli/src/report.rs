//! `wakesim report DIR`: the self-contained HTML report of a `compare --out DIR`.

use crate::args::ReportArgs;
use crate::compare::{grid, plan::shell_quote, store};
use crate::output::write_atomic;
use crate::UserError;
use wakesim_report::html::{render, Page};
use wakesim_report::timeline::Timeline;

pub fn report(a: ReportArgs) -> Result<(), UserError> {
    let file = store::read_experiment(&a.dir)?;
    let exp = &file.experiment;
    let plan = exp.plan();
    let st = store::Store { dir: a.dir.clone() };
    let mut slots = Vec::with_capacity(plan.len());
    for r in &plan {
        slots.push(st.load(exp, r)?);
    }
    let missing = slots.iter().filter(|s| s.is_none()).count();
    if missing > 0 {
        return Err(UserError(format!(
            "{}: {missing} of {} runs are not finished; rerun the same `wakesim compare` to complete them",
            a.dir.display(),
            plan.len()
        )));
    }
    let trace_path = a.dir.join("trace.json");
    let timeline = if trace_path.exists() {
        let text = std::fs::read_to_string(&trace_path).map_err(|e| UserError(format!("cannot read {}: {e}", trace_path.display())))?;
        Some(Timeline::parse(&text).map_err(|e| UserError(format!("{}: {e}", trace_path.display())))?)
    } else {
        None
    };
    let g = grid(exp, &plan, slots);
    let mut notes = vec![file.argv.iter().map(|s| shell_quote(s)).collect::<Vec<_>>().join(" ")];
    notes.push(format!("machine {}, kernel {}, {} runs per point from seed {}", exp.machine, exp.kernel, exp.runs, exp.base_seed));
    for v in &exp.variants {
        notes.push(format!("{}: {}", v.name, if v.spec.is_empty() { "the kernel profile" } else { &v.spec }));
    }
    let page = Page { title: format!("wakesim compare: {} on {}", exp.workload, exp.machine), notes, grid: &g, timeline: timeline.as_ref() };
    let out = a.output.clone().unwrap_or_else(|| a.dir.join("report.html"));
    write_atomic(&out, &render(&page))?;
    eprintln!("wakesim: wrote {}", out.display());
    Ok(())
}
