//! # wakesim-workloads: task graphs and the benchmarks built from them
//!
//! A workload is a set of tasks, each running a small [`Program`] in the behaviour language
//! ([`Op`]), plus the channels and futexes they share. The model interprets the programs: every
//! `Send`/`Recv` is a syscall with pipe or socket semantics (blocking, sync wakeups), every
//! futex wake a non-sync wakeup (`FutexWakeAllSync` a sync one), every `Sleep` a timer wakeup.
//!
//! Workloads come from three places:
//! * built-in benchmarks, built from the benchmark's own command line
//!   ([`from_command_line_with`] and a [`BuildContext`] carrying the machine's CPU count and
//!   `--copies`; registry in [`mod@bench`]), each rendering the [`Outcome`] the way the real
//!   tool prints it: hackbench, perf bench sched messaging/pipe, schbench (both versions),
//!   tbench, netperf, UnixBench context1/pipe, ipistorm, STREAM — see `BENCHMARKS.md`;
//! * rt-app JSON files (`rt-app FILE.json`, a documented subset);
//! * user task files in TOML ([`load_task_file`], format in `FORMAT.md`).
//!
//! A benchmark limited by its own run time (schbench `-r`, netperf `-l`, …) sets
//! [`Workload::duration`]; the run stops there or at the run's duration cap, whichever is first.

mod args;
pub mod bench;
mod counts;
mod cpulist;
pub mod defaults;
mod error;
mod lang;
pub mod marks;
pub mod taskfile;

pub use bench::{from_command_line, from_command_line_with, known_tools, BuildContext};
pub use counts::{op_counts, OpCounts};
pub use error::WorkloadError;
pub use lang::*;
pub use taskfile::{from_toml_str, load_task_file};
