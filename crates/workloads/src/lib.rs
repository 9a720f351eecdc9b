//! # wakesim-workloads: task graphs and the benchmarks built from them
//!
//! A workload is a set of tasks, each running a small [`Program`] in the behaviour language
//! ([`Op`]), plus the channels and futexes they share. The model interprets the programs: every
//! `Send`/`Recv` is a syscall with pipe or socket semantics (blocking, sync wakeups), every
//! `FutexWake` a non-sync wakeup, every `Sleep` a timer wakeup.
//!
//! Workloads come from two places:
//! * built-in benchmarks, built from the benchmark's own command line
//!   ([`from_command_line`], registry in [`mod@bench`]), each rendering the [`Outcome`] the way the
//!   real tool prints it;
//! * user task files in TOML ([`load_task_file`], format in `FORMAT.md`).

mod args;
pub mod bench;
mod counts;
mod cpulist;
pub mod defaults;
mod error;
mod lang;
pub mod marks;
pub mod taskfile;

pub use bench::{from_command_line, known_tools};
pub use counts::{op_counts, OpCounts};
pub use error::WorkloadError;
pub use lang::*;
pub use taskfile::{from_toml_str, load_task_file};
