//! Argument definitions (clap derive).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "wakesim", version, about = "A discrete-event simulator of the Linux scheduler's task-wakeup path")]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Run one simulation: the benchmark's own output, then a statistics summary.
    Run(RunArgs),
    /// List machine presets, or show one's CPU layout and sched-domain hierarchy.
    Machines(MachinesArgs),
    /// List the workloads (benchmarks) and the flags each accepts.
    Workloads,
    /// List the model's feature flags (kernel/sched/features.h style) and their value per kernel.
    Features,
    /// List the kernel profiles and what differs between them.
    Kernels,
    /// Measure the engine: simulated events per second and simulated time per wall second.
    Bench(BenchArgs),
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Machine: a preset name (see `wakesim machines`), `host`, or a machine TOML file.
    #[arg(long, default_value = "xeon-8269cy")]
    pub machine: String,
    /// Cost-profile overrides (TOML) on top of the machine's profile.
    #[arg(long)]
    pub costs: Option<PathBuf>,
    /// Kernel profile whose mainline behaviour to model (see `wakesim kernels`; default: the newest).
    #[arg(long, default_value = wakesim_model::features::NEWEST_KERNEL)]
    pub kernel: String,
    /// Feature changes on top of the kernel profile: `+NAME,-NAME`.
    #[arg(long, allow_hyphen_values = true)]
    pub features: Option<String>,
    /// Seed of every random stream of the run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Stop after this many simulated seconds even if the workload has not finished.
    #[arg(long, default_value_t = 60.0, allow_negative_numbers = true)]
    pub duration: f64,
    /// Write everything (metric, statistics, engine figures) to this JSON file, atomically.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Load the workload from a task-graph file instead of a command line.
    #[arg(long, conflicts_with = "command")]
    pub tasks: Option<PathBuf>,
    /// Run N independent instances of the benchmark side by side (UnixBench `Run -c N`,
    /// mmtests' N netperf pairs); the benchmark aggregates them as those harnesses do.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub copies: u32,
    /// Also print the /proc/schedstat dump (version 15 or 16).
    #[arg(long, value_name = "VERSION")]
    pub schedstat: Option<u32>,
    /// Write the run's schedule to FILE in Chrome JSON trace format (opens in ui.perfetto.dev):
    /// per-CPU task and idle slices, wakeup arrows, IPIs.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Trace only simulated milliseconds START to END (with --trace).
    #[arg(long, value_name = "START,END", requires = "trace", allow_hyphen_values = true)]
    pub trace_window: Option<String>,
    /// Keep at most N trace events; recording stops there (with --trace).
    #[arg(long, value_name = "N", requires = "trace", default_value_t = wakesim_model::TraceOpts::DEFAULT_LIMIT)]
    pub trace_limit: usize,
    /// The benchmark's command line, after `--` (default: perf bench sched pipe -l 100000).
    #[arg(last = true)]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct MachinesArgs {
    #[command(subcommand)]
    pub what: Option<MachinesCmd>,
}

#[derive(Subcommand, Debug)]
pub enum MachinesCmd {
    /// Print a machine's CPU layout and its sched domains as the kernel's debug output does.
    Show {
        name: String,
        /// Print every CPU's domains, not only representative ones.
        #[arg(long)]
        all: bool,
    },
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Reference scenario: `104` (xeon-8269cy), `512` (epyc-9754), `512x4096` (epyc-9754 with
    /// 4,096 tasks: the memory reference), or `all`.
    #[arg(long, default_value = "all")]
    pub scenario: String,
    /// Simulated seconds per scenario.
    #[arg(long, default_value_t = 0.02, allow_negative_numbers = true)]
    pub seconds: f64,
}
