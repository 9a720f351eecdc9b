//! `wakesim replay`: replay a real kernel's scheduler trace (tracefs text, `trace_clock=global`)
//! through the model's EEVDF code, and count where the model's decisions differ from the
//! kernel's: at every context switch the pick, at every wakeup the preemption.
//!
//! `parse` reads the trace, `state` replays it, `report` prints, `record` makes a trace on this
//! machine (`--record -- CMD`).

pub(crate) mod parse;
pub(crate) mod record;
mod report;
mod state;

use crate::args::ReplayArgs;
use crate::output::{check_writable, write_atomic};
use crate::UserError;
use std::io::Read;
use std::path::Path;

pub use state::{Counts, Options, DEFAULT_HZ, DEFAULT_SLICE_US};

pub fn replay(a: ReplayArgs) -> Result<(), UserError> {
    if let Some(p) = &a.json {
        check_writable(p)?;
    }
    let host = a.record;
    let slice_us = match a.slice_us {
        Some(s) => s,
        None if host => wakesim_machine::kconfig::running_base_slice_ns()
            .map_or(DEFAULT_SLICE_US, |ns| ns / 1000),
        None => DEFAULT_SLICE_US,
    };
    let hz = match a.hz {
        Some(h) => h,
        None if host => wakesim_machine::kconfig::running_kernel_hz().unwrap_or(DEFAULT_HZ),
        None => DEFAULT_HZ,
    };
    if slice_us == 0 || hz == 0 {
        return Err(UserError("--slice-us and --hz must be positive".into()));
    }
    let (file, comm) = if a.record {
        if a.file.is_some() {
            return Err(UserError(
                "--record takes the command after `--`, not a trace file".into(),
            ));
        }
        let out = a.out.clone().unwrap_or_else(|| "replay-trace.txt".into());
        let comm = match &a.comm {
            Some(c) => c.clone(),
            None => a
                .command
                .first()
                .map(|c| {
                    Path::new(c)
                        .file_name()
                        .map_or(c.clone(), |n| n.to_string_lossy().into_owned())
                })
                .unwrap_or_default(),
        };
        record::record(&a.command, &out)?;
        (out, comm)
    } else {
        let Some(f) = a.file.clone() else {
            return Err(UserError(
                "wakesim replay needs a trace FILE, or --record -- CMD".into(),
            ));
        };
        if !a.command.is_empty() {
            return Err(UserError("a command after `--` needs --record".into()));
        }
        (f, a.comm.clone().unwrap_or_else(|| "hackbench".into()))
    };
    let text = read_text(&file)?;
    let mut o = Options::new(&comm);
    o.slice_ns = slice_us * 1000;
    o.hz = hz;
    o.show = a.show;
    o.requeue_first = !a.no_requeue_first;
    o.reverse_attach = !a.forward_attach;
    o.newidle_purge = !a.no_newidle_purge;
    let (counts, shown) =
        run(&text, &o).map_err(|e| UserError(format!("{}: {e}", file.display())))?;
    crate::outp!("{}", report::text(&counts, &comm, &shown));
    if let Some(p) = &a.json {
        let name = file.display().to_string();
        let doc = report::Json {
            wakesim_version: env!("CARGO_PKG_VERSION"),
            file: &name,
            comm: &comm,
            slice_ns: o.slice_ns,
            hz: o.hz,
            pick_agreement: counts.pick_ratio(),
            counts: &counts,
        };
        let text = serde_json::to_string_pretty(&doc)
            .map_err(|e| UserError(format!("cannot serialise results: {e}")))?;
        write_atomic(p, &(text + "\n"))?;
    }
    Ok(())
}

/// A trace file's text; gzip-compressed files are read through.
pub(crate) fn read_text(path: &Path) -> Result<String, UserError> {
    let bytes = std::fs::read(path)
        .map_err(|e| UserError(format!("cannot read {}: {e}", path.display())))?;
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .map_err(|e| UserError(format!("{}: bad gzip data: {e}", path.display())))?;
        out
    } else {
        bytes
    };
    String::from_utf8(bytes).map_err(|_| {
        UserError(format!(
            "{}: not a tracefs text trace (not UTF-8 text)",
            path.display()
        ))
    })
}

/// Replays a trace's text; an error if it holds no usable events.
pub fn run(text: &str, o: &Options) -> Result<(Counts, Vec<String>), String> {
    let tr = parse::parse_trace(text);
    let sched = tr
        .lines
        .iter()
        .filter(|l| matches!(l.event, parse::Event::Switch { .. }))
        .count();
    if sched == 0 {
        return Err(format!(
            "not a tracefs scheduler trace: no sched_switch lines ({} event lines, {} unreadable lines)",
            tr.lines.len(),
            tr.malformed
        ));
    }
    let r = state::Replay::new(&tr, o.clone());
    if r.group_size() == 0 {
        return Err(format!(
            "no task named '{}' in the trace (set --comm)",
            o.comm
        ));
    }
    Ok(r.run())
}
