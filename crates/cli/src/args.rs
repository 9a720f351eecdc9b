//! Argument definitions (clap derive).

use clap::{Args, Parser, Subcommand, ValueEnum};
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
    /// Paired A/B experiment: baseline vs. variants over a sweep, repeated, as mmtests and LKML
    /// tables, with the data and the commands written to --out DIR.
    Compare(CompareArgs),
    /// Write the self-contained HTML report of a `compare --out DIR`.
    Report(ReportArgs),
    /// Run a benchmark's task graph on this machine's real kernel and print its own output.
    Native(NativeArgs),
    /// Measure this machine and write a cost profile and a noise profile (its background
    /// activity) for `--machine host`.
    Calibrate(CalibrateArgs),
    /// Run benchmarks natively and in the simulator on `--machine host`; print measured vs predicted.
    Validate(ValidateArgs),
    /// Record a real run's scheduling behaviour (tracefs, root) or import a tracefs / perf
    /// script recording, and write it as a task file that `wakesim run --tasks FILE` replays
    /// on any simulated machine.
    Record(RecordArgs),
    /// Replay a real kernel's scheduler trace (tracefs, trace_clock=global) through the model's
    /// EEVDF code: does the model pick and preempt where the kernel did?
    Replay(ReplayArgs),
    /// Rerun every published result of the mailing-list changes (the specs in reproduce/) over
    /// seeds and print published vs wakesim, with each row's direction, size and cause.
    Reproduce(ReproduceArgs),
}

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Reproductions to run: a spec's name (every row of reproduce/NAME.toml) or NAME/ROW
    /// (default: all).
    pub names: Vec<String>,
    /// Reduced sizes (each row's `quick` table: smaller loops, shorter runs, 2 seeds): a smoke
    /// test, not the published setups.
    #[arg(long)]
    pub quick: bool,
    /// Seeds per row: the baseline and the variant each run seeds 1..N, paired (default: each
    /// row's `seeds`, else 5; with --quick each row's quick.seeds, else 2).
    #[arg(long, value_name = "N")]
    pub seeds: Option<u32>,
    /// Runs in parallel (default: the available cores). Results do not depend on it.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Keep every experiment's compare directory here (DIR/SPEC/ROW), with results.md and
    /// reproduce.json; rerunning resumes from it.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write the table as a markdown document (docs/results.md is written this way).
    #[arg(long, value_name = "PATH")]
    pub write_docs: Option<PathBuf>,
    /// The directory of reproduction specs (default: ./reproduce, else the source tree's).
    #[arg(long, value_name = "DIR")]
    pub specs: Option<PathBuf>,
    /// List the reproductions and their rows, run nothing.
    #[arg(long)]
    pub list: bool,
    /// Fail (exit 2, after writing everything) if a row is outside its band or in the wrong
    /// direction and its spec gives no cause: the table's UNEXPLAINED rows.
    #[arg(long)]
    pub strict: bool,
    /// KEY,…: instead of the results table, how each row's change moves when one cost constant
    /// is scaled by each of `--factors` (keys as `--cost-scale`'s: `idle_exit`, `ipi_delivery`,
    /// `idle_states`, …), every row rerun per key and factor; `--write-docs` writes that table.
    #[arg(long, value_delimiter = ',', value_name = "KEY,...")]
    pub sensitivity: Vec<String>,
    /// The factors of `--sensitivity` (default 0.5,2).
    #[arg(long, value_delimiter = ',', value_name = "F,...", default_value = "0.5,2", allow_negative_numbers = true)]
    pub factors: Vec<f64>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Machine: a preset name (see `wakesim machines`), `host`, or a machine TOML file.
    #[arg(long, default_value = "xeon-8269cy")]
    pub machine: String,
    /// Background activity: `none` (the quiet machine), `server` (the presets' default), or a
    /// noise-profile TOML file (docs/formats.md). Default: `server`, or on `--machine host` the
    /// profile `wakesim calibrate` measured here.
    #[arg(long, value_name = "none|server|FILE")]
    pub noise: Option<String>,
    /// Cost-profile overrides (TOML) on top of the machine's profile.
    #[arg(long)]
    pub costs: Option<PathBuf>,
    /// KEY=FACTOR: multiply one cost by FACTOR after `--costs` (a sensitivity study: `idle_exit=2`,
    /// `ipi_delivery=0.5`, `ipi_delivery.cross_node=2`, `idle_states=2`). Repeatable.
    #[arg(long = "cost-scale", value_name = "KEY=FACTOR")]
    pub cost_scale: Vec<String>,
    /// Kernel profile of the baseline (see `wakesim kernels`; default: the newest).
    #[arg(long, default_value = wakesim_model::features::NEWEST_KERNEL)]
    pub kernel: String,
    /// Feature changes of the baseline itself (`--features` syntax; default: none).
    #[arg(long, allow_hyphen_values = true, value_name = "SPEC")]
    pub baseline: Option<String>,
    /// The cpuidle governor of every variant: menu, teo, haltpoll or ewma (default: the
    /// machine's).
    #[arg(long, value_name = "NAME")]
    pub governor: Option<String>,
    /// The task group the benchmark runs in: `autogroup` (its session's, as distribution
    /// kernels run a benchmark started from a shell) or `root` (autogroup off, no cpu cgroup).
    #[arg(long, value_name = "SETUP", default_value = "autogroup")]
    pub cgroup: String,
    /// A variant: NAME=SPEC, SPEC in the `--features` syntax (`+A,-B`) applied on top of the
    /// baseline. Repeatable.
    #[arg(long = "variant", allow_hyphen_values = true, value_name = "NAME=SPEC")]
    pub variants: Vec<String>,
    /// Repetitions per variant and sweep point; run k uses seed `--seed` + k in every variant.
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// Seed of run 0 (run k uses seed + k).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Stop each run after this many simulated seconds even if the workload has not finished.
    #[arg(long, default_value_t = 60.0, allow_negative_numbers = true)]
    pub duration: f64,
    /// Run N independent instances of the benchmark side by side in every run, as
    /// `wakesim run --copies N` does.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub copies: u32,
    /// NAME=v1,v2,…: substitute each value for `{NAME}` in the command. Several sweeps form a grid.
    #[arg(long = "sweep", value_name = "NAME=V1,V2")]
    pub sweeps: Vec<String>,
    /// Tables to print: any of mmtests, normalized, percentiles, schedstat, breakdown, or all.
    #[arg(long, default_value = "all", value_name = "LIST")]
    pub format: String,
    /// Write the experiment, every finished run, tidy results and statistics here (resumable;
    /// rerun with a larger --runs to add seeds to it).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Runs in parallel (default: the available cores). Results do not depend on it.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Run each (point, variant, seed) as a task on the Dask cluster whose scheduler is at
    /// ADDRESS (`tcp://host:8786`), or on a LocalCluster sized to this machine (`local`).
    /// Needs --out DIR and the Python package (`pip install ./python`; WAKESIM_PYTHON names the
    /// interpreter, default python3). Results are byte-identical to a --jobs run.
    #[arg(long, value_name = "ADDRESS")]
    pub dask: Option<String>,
    /// The benchmark's command line, after `--`, with `{NAME}` for each sweep.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A directory written by `wakesim compare --out DIR`.
    pub dir: PathBuf,
    /// Where to write the HTML file (default: DIR/report.html).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}


#[derive(Args, Debug)]
pub struct NativeArgs {
    /// End the run after this many seconds even if the benchmark has not finished.
    #[arg(long, default_value_t = 60.0, allow_negative_numbers = true)]
    pub duration: f64,
    /// Seed of the tasks' random compute and sleep lengths.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the metric and output to this JSON file, atomically.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// The benchmark's command line, after `--` (as for `wakesim run`).
    #[arg(last = true)]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Where to write the profile (default: $XDG_CONFIG_HOME/wakesim/host-costs.toml, else
    /// ~/.config/wakesim/host-costs.toml; `--machine host` loads it from there).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Fewer rounds and repetitions (a few seconds; for tests, figures are noisier).
    #[arg(long)]
    pub quick: bool,
    /// Repetitions of each measurement (default 7, 3 with --quick).
    #[arg(long)]
    pub reps: Option<usize>,
    /// Where to write the measured background activity (noise profile). Default: beside the
    /// cost profile, host-noise.toml at the default location (`--machine host` runs use it),
    /// STEM-noise.toml beside `--out STEM.toml`.
    #[arg(long, value_name = "FILE")]
    pub noise_out: Option<PathBuf>,
    /// How long to measure the background activity, seconds (default 5, 1 with --quick); every
    /// allowed CPU is kept busy meanwhile.
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub noise_window: Option<f64>,
    /// How to measure it: the kernel's osnoise tracer; a self-timing loop on every CPU with
    /// tracefs events naming what interrupted it and a census of the threads that ran (both need
    /// root and tracefs); the loop alone; or the first of these that works here.
    #[arg(long, value_enum, default_value = "auto", value_name = "METHOD")]
    pub noise_method: NoiseMethod,
    /// Only measure the background activity; the cost profile is left as it is.
    #[arg(long)]
    pub noise_only: bool,
}

/// `calibrate --noise-method`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoiseMethod {
    Auto,
    Osnoise,
    Tracefs,
    Loop,
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Runs of each case, natively and simulated (different seeds).
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Cost profile for the simulator (default: the calibrated host profile if present).
    #[arg(long)]
    pub costs: Option<PathBuf>,
    /// Kernel profile of the simulator (see `wakesim kernels`; default: the newest).
    #[arg(long, default_value = wakesim_model::features::NEWEST_KERNEL)]
    pub kernel: String,
    /// Background activity of the simulator: `none`, `server`, or a noise-profile file
    /// (default: as `wakesim run --machine host`, the profile `wakesim calibrate` measured here).
    #[arg(long, value_name = "none|server|FILE")]
    pub noise: Option<String>,
    /// Smaller cases (loops ÷ 10) and fewer runs: a smoke test, not an accuracy figure.
    #[arg(long)]
    pub quick: bool,
    /// Only the cases whose name contains this text (e.g. `pipe`, `hackbench`).
    #[arg(long)]
    pub only: Option<String>,
    /// Write every figure to this JSON file, atomically.
    #[arg(long)]
    pub json: Option<PathBuf>,
}
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A tracefs text trace (`cat /sys/kernel/tracing/trace`, optionally gzipped) recorded with
    /// trace_clock=global and the events sched_switch, sched_wakeup, sched_wakeup_new,
    /// sched_stat_runtime, sched_migrate_task, ipi_send_cpu.
    pub file: Option<PathBuf>,
    /// The benchmark's tasks: every pid with this comm (default: hackbench, or with --record the
    /// command's name).
    #[arg(long)]
    pub comm: Option<String>,
    /// Base slice in µs (default 1400; with --record this machine's).
    #[arg(long, value_name = "N")]
    pub slice_us: Option<u64>,
    /// CONFIG_HZ (default 250; with --record this machine's).
    #[arg(long, value_name = "N")]
    pub hz: Option<u64>,
    /// Describe the first N pick disagreements: the replay's cfs_rq and the CPU's last events.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub show: usize,
    /// Write the counts to this JSON file, atomically.
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Record the command after `--` on this machine (root, tracefs), then replay it.
    #[arg(long)]
    pub record: bool,
    /// Where --record writes the trace (default: replay-trace.txt).
    #[arg(long, value_name = "FILE", requires = "record")]
    pub out: Option<PathBuf>,
    /// Rule switches for tests: apply the waker's runtime before requeueing a delayed wakee.
    #[arg(long, hide = true)]
    pub no_requeue_first: bool,
    /// Rule switch for tests: attach a balance pass's tasks in detach order.
    #[arg(long, hide = true)]
    pub forward_attach: bool,
    /// Rule switch for tests: no early dequeue of prev and purge of delayed before a newidle pull.
    #[arg(long, hide = true)]
    pub no_newidle_purge: bool,
    /// With --record: the command to trace, after `--`.
    #[arg(last = true)]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// Where to write the task file.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Convert a recording made elsewhere instead of running a command: tracefs text
    /// (`cat /sys/kernel/tracing/trace` with trace_clock global or mono; optionally gzipped) or the
    /// `perf script` text of a `perf sched record`. Needs --comm or --pid.
    #[arg(long, value_name = "TRACE")]
    pub import: Option<PathBuf>,
    /// With --import: the workload is these pids and every task they fork.
    #[arg(long, value_delimiter = ',', value_name = "PID,...")]
    pub pid: Vec<u32>,
    /// With --import: the workload is the tasks with these names and every task they fork.
    #[arg(long, value_delimiter = ',', value_name = "COMM,...")]
    pub comm: Vec<String>,
    /// The machine whose cost profile converts the bursts: the recording's (default: host,
    /// this machine, with the profile `wakesim calibrate` wrote).
    #[arg(long, default_value = "host")]
    pub machine: String,
    /// Cost-profile overrides (TOML) on top of the machine's profile.
    #[arg(long)]
    pub costs: Option<PathBuf>,
    /// Also write a live recording's tracefs text here (for a later --import).
    #[arg(long, value_name = "FILE")]
    pub keep_trace: Option<PathBuf>,
    /// Also convert every other task that ran during the recording, as background tasks
    /// (`other.*`, group "other"), so that a replay has the recording machine's other load; the
    /// recorded figures and the elapsed time stay the workload's.
    #[arg(long)]
    pub others: bool,
    /// Do not preload the lock log (the library that logs the command's pthread mutex and
    /// condvar calls, so that its mutexes replay as mutexes): every futex block is then a pair.
    #[arg(long)]
    pub no_lock_log: bool,
    /// The command to record, after `--`.
    #[arg(last = true)]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Machine: a preset name (see `wakesim machines`), `host`, or a machine TOML file.
    #[arg(long, default_value = "xeon-8269cy")]
    pub machine: String,
    /// Background activity: `none` (the quiet machine), `server` (the presets' default), or a
    /// noise-profile TOML file (docs/formats.md). Default: `server`, or on `--machine host` the
    /// profile `wakesim calibrate` measured here.
    #[arg(long, value_name = "none|server|FILE")]
    pub noise: Option<String>,
    /// Cost-profile overrides (TOML) on top of the machine's profile.
    #[arg(long)]
    pub costs: Option<PathBuf>,
    /// KEY=FACTOR: multiply one cost by FACTOR after `--costs` (a sensitivity study: `idle_exit=2`,
    /// `ipi_delivery=0.5`, `ipi_delivery.cross_node=2`, `idle_states=2`). Repeatable.
    #[arg(long = "cost-scale", value_name = "KEY=FACTOR")]
    pub cost_scale: Vec<String>,
    /// Kernel profile whose mainline behaviour to model (see `wakesim kernels`; default: the newest).
    #[arg(long, default_value = wakesim_model::features::NEWEST_KERNEL)]
    pub kernel: String,
    /// Feature changes on top of the kernel profile: `+NAME,-NAME`.
    #[arg(long, allow_hyphen_values = true)]
    pub features: Option<String>,
    /// The cpuidle governor: menu, teo, haltpoll or ewma (default: the machine's, as
    /// `wakesim machines show` names it).
    #[arg(long, value_name = "NAME")]
    pub governor: Option<String>,
    /// The task group the benchmark runs in: `autogroup` (its session's, as distribution
    /// kernels run a benchmark started from a shell) or `root` (autogroup off, no cpu cgroup).
    #[arg(long, value_name = "SETUP", default_value = "autogroup")]
    pub cgroup: String,
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
    /// Stretch every user-space compute burst by F (F > 1: a slower core than the one the
    /// workload's durations were written or recorded for; F < 1: a faster one). Kernel work
    /// still comes from the machine's cost profile. Typical use: a `wakesim record` task file
    /// replayed for a machine whose cores are F times slower.
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    pub cpu_scale: Option<f64>,
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
    /// Work-conservation checker: report a CPU idle while a task waits on a CPU of its sched
    /// domains for longer than DURATION (`4ms`, `500us`, `0.5ms`; default 0.5ms, sysctl_sched_migration_cost).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub wasted_threshold: Option<String>,
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
    /// 4,096 tasks: the memory reference), `768` (epyc-9965, the largest preset), or `all`.
    #[arg(long, default_value = "all")]
    pub scenario: String,
    /// Simulated seconds per scenario.
    #[arg(long, default_value_t = 0.02, allow_negative_numbers = true)]
    pub seconds: f64,
    /// Background activity, as `run --noise` takes it (`server`, `none`, a file). Default `none`,
    /// so that builds compare on the same work; `server` measures what the background costs.
    #[arg(long, default_value = "none")]
    pub noise: String,
}
