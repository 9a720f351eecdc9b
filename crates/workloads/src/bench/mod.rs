//! Built-in benchmarks, built from the command line the user would type.
//!
//! Adding a benchmark = one module that builds a [`Workload`] from its flags and renders the
//! tool's own output, plus one entry in [`TOOLS`]. Wrappers common to every tool (`taskset`) and
//! perf bench's own options (`perf bench -f simple …`) are handled here, before dispatch.

pub mod perf;
pub mod perf_pipe;
mod taskset;

use crate::{Workload, WorkloadError};
pub use perf::PerfFormat;

/// What a tool's builder gets.
pub struct Invocation<'a> {
    /// The matched registry entry.
    pub tool: &'static Tool,
    /// The arguments after the command words (`-l 1000` in `perf bench sched pipe -l 1000`).
    pub args: &'a [String],
    /// `perf bench`'s own options (defaults for tools that are not perf benches).
    pub perf: perf::BenchOpts,
}

/// One modelled benchmark.
pub struct Tool {
    /// Display name, e.g. `perf bench sched pipe`.
    pub name: &'static str,
    /// Command words that select it; the first is compared by basename (`/usr/bin/perf`).
    pub command: &'static [&'static str],
    /// One-line flag summary for `wakesim workloads`.
    pub flags: &'static str,
    pub build: fn(&Invocation) -> Result<Workload, WorkloadError>,
}

/// The registry. One line per benchmark.
pub static TOOLS: &[Tool] = &[perf_pipe::TOOL];

/// `(name, flag summary)` of every modelled benchmark.
pub fn known_tools() -> Vec<(&'static str, &'static str)> {
    TOOLS.iter().map(|t| (t.name, t.flags)).collect()
}

fn known_names() -> String {
    TOOLS.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
}

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

/// Builds a workload from a benchmark command line as typed after `wakesim run --`, e.g.
/// `["taskset", "-c", "0-3", "perf", "bench", "sched", "pipe", "-l", "100000"]`.
pub fn from_command_line(args: &[String]) -> Result<Workload, WorkloadError> {
    let args = match args.first() {
        Some(a) if a == "--" => &args[1..],
        _ => args,
    };
    let (pin, rest) = taskset::strip(args)?;
    let Some(first) = rest.first() else {
        return Err(WorkloadError::UnknownTool {
            tool: String::new(),
            known: known_names(),
        });
    };
    let (words, perf) =
        if basename(first) == "perf" && rest.get(1).map(String::as_str) == Some("bench") {
            perf::strip_bench_opts(rest)?
        } else {
            (rest.to_vec(), perf::BenchOpts::default())
        };
    let tool = TOOLS
        .iter()
        .filter(|t| {
            t.command.len() <= words.len()
                && t.command.iter().zip(&words).enumerate().all(|(i, (c, w))| {
                    if i == 0 {
                        basename(w) == *c
                    } else {
                        w == c
                    }
                })
        })
        .max_by_key(|t| t.command.len());
    let Some(tool) = tool else {
        // Name as much of the command as looks like command words (up to the first flag).
        let shown: Vec<&str> = words
            .iter()
            .take_while(|w| !w.starts_with('-'))
            .take(4)
            .enumerate()
            .map(|(i, w)| if i == 0 { basename(w) } else { w.as_str() })
            .collect();
        return Err(WorkloadError::UnknownTool {
            tool: shown.join(" "),
            known: known_names(),
        });
    };
    let inv = Invocation {
        tool,
        args: &words[tool.command.len()..],
        perf,
    };
    let mut w = (tool.build)(&inv)?;
    if let Some(set) = pin {
        // taskset sets the affinity that forked tasks inherit; a benchmark that pins its own
        // tasks (sched_setaffinity after fork) replaces it, so explicit masks are kept.
        for t in &mut w.tasks {
            if t.allowed.is_none() {
                t.allowed = Some(set);
            }
        }
    }
    Ok(w)
}
