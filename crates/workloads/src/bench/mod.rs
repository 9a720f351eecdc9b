//! Built-in benchmarks, built from the command line the user would type.
//!
//! Adding a benchmark = one module that builds a [`Workload`] from its flags and renders the
//! tool's own output, plus one entry in [`TOOLS`]. Wrappers common to every tool (`taskset`) and
//! perf bench's own options (`perf bench -f simple …`) are handled here, before dispatch.

pub mod copies;
pub mod hackbench;
pub mod ipistorm;
mod json;
pub mod netperf;
pub mod perf;
pub mod perf_pipe;
mod prog;
pub mod rtapp;
pub mod schbench;
pub mod schbench_old;
pub mod stats;
pub mod stream;
mod taskset;
pub mod tbench;
pub mod unixbench;

use crate::{Workload, WorkloadError};
pub use perf::PerfFormat;

/// What the builder knows about the run besides the command line.
///
/// `from_command_line` has no machine; benchmarks whose task graph depends on the CPU count
/// (ipistorm's targets `(cpu + offset) % nr_cpus`, STREAM's default `OMP_NUM_THREADS`,
/// schbench's default `-t` = ⌈nprocs/m⌉) read it from here. `wakesim run` fills it from the
/// machine and `--copies`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildContext {
    /// CPUs of the machine (`get_nprocs()` / `nr_cpu_ids`); `None` when unknown, in which case
    /// the benchmarks that need it ask for an explicit flag.
    pub nr_cpus: Option<u32>,
    /// Independent instances run side by side (`--copies N`), ≥ 1.
    pub copies: u32,
}

impl Default for BuildContext {
    fn default() -> Self {
        BuildContext { nr_cpus: None, copies: 1 }
    }
}

impl BuildContext {
    /// A context for a machine with `nr_cpus` CPUs and one copy.
    pub fn machine(nr_cpus: u32) -> Self {
        BuildContext { nr_cpus: Some(nr_cpus), copies: 1 }
    }

    /// The CPU count, or an error naming what needs it.
    pub fn cpus(&self, tool: &str, what: &str) -> Result<u32, WorkloadError> {
        self.nr_cpus.ok_or_else(|| {
            WorkloadError::arg(
                tool,
                format!("{what} depends on the machine's CPU count, which is not known here"),
            )
        })
    }
}

/// What a tool's builder gets.
pub struct Invocation<'a> {
    /// The matched registry entry.
    pub tool: &'static Tool,
    /// The arguments after the command words (`-l 1000` in `perf bench sched pipe -l 1000`).
    pub args: &'a [String],
    /// `perf bench`'s own options (defaults for tools that are not perf benches).
    pub perf: perf::BenchOpts,
    /// The machine's CPU count and the number of copies.
    pub ctx: BuildContext,
    /// Environment assignments given before the command (`OMP_NUM_THREADS=8 stream`).
    pub env: &'a [(String, String)],
    /// The command word as typed (`./schbench`, `hackbench`), for tools that print it.
    pub argv0: &'a str,
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
pub static TOOLS: &[Tool] = &[
    perf_pipe::TOOL,
    hackbench::PERF_TOOL,
    hackbench::RT_TOOL,
    schbench::TOOL,
    schbench_old::TOOL,
    tbench::TOOL,
    netperf::TOOL,
    unixbench::CONTEXT1,
    unixbench::PIPE,
    ipistorm::TOOL,
    ipistorm::INSMOD,
    stream::TOOL,
    rtapp::TOOL,
];

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
/// `["taskset", "-c", "0-3", "perf", "bench", "sched", "pipe", "-l", "100000"]`, without
/// knowing the machine (see [`from_command_line_with`]).
pub fn from_command_line(args: &[String]) -> Result<Workload, WorkloadError> {
    from_command_line_with(args, &BuildContext::default())
}

/// Splits leading `VAR=value` words and an `env VAR=value …` prefix off a command line.
fn strip_env(args: &[String]) -> (Vec<(String, String)>, &[String]) {
    let mut env = Vec::new();
    let mut i = 0;
    if args.first().map(|a| basename(a)) == Some("env") {
        i = 1;
    }
    while let Some(a) = args.get(i) {
        match a.split_once('=') {
            Some((k, v)) if !k.is_empty() && !k.starts_with('-') && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                env.push((k.to_string(), v.to_string()));
                i += 1;
            }
            _ => break,
        }
    }
    (env, &args[i..])
}

/// [`from_command_line`] with what the run knows: the machine's CPU count and `--copies`.
pub fn from_command_line_with(
    args: &[String],
    ctx: &BuildContext,
) -> Result<Workload, WorkloadError> {
    let args = match args.first() {
        Some(a) if a == "--" => &args[1..],
        _ => args,
    };
    if ctx.copies == 0 {
        return Err(WorkloadError::arg("wakesim", "--copies must be at least 1"));
    }
    let (env, args) = strip_env(args);
    let (pin, rest) = taskset::strip(args)?;
    let (env2, rest) = strip_env(rest);
    let env: Vec<(String, String)> = env.into_iter().chain(env2).collect();
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
        ctx: *ctx,
        env: &env,
        argv0: &words[0],
    };
    let mut w = (tool.build)(&inv)?;
    if let Some(set) = pin {
        // taskset sets the affinity that forked tasks inherit; a benchmark that pins its own
        // tasks (sched_setaffinity after fork) replaces it, so explicit masks are kept.
        for t in &mut w.tasks {
            if t.allowed.is_none() {
                t.allowed = Some(set.clone());
            }
        }
    }
    Ok(copies::replicate(w, ctx.copies))
}
