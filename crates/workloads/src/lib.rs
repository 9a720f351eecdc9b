//! # wakesim-workloads: task graphs and the benchmarks built from them
//!
//! A workload is a set of tasks, each running a small [`Program`] in the behaviour language
//! ([`Op`]), plus the channels and futexes they share. The model interprets the programs: every
//! `Send`/`Recv` is a syscall with pipe or socket semantics (blocking, sync wakeups), every
//! `FutexWake` a non-sync wakeup, every `Sleep` a timer wakeup.
//!
//! Built-in benchmarks (`perf bench sched pipe`, ...) are functions that build a [`Workload`]
//! from the benchmark's own command line, and format the run's [`Outcome`] the way the real tool
//! prints it.

mod lang;

pub use lang::*;
