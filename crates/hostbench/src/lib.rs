//! # wakesim-hostbench: measuring the machine wakesim runs on
//!
//! Two jobs, both with real threads, processes, pipes, sockets and futexes on this kernel:
//!
//! * [`calib`]: the microbenchmarks behind `wakesim calibrate` — a cheap syscall, pipe copies of
//!   small and large writes, a pipe ping-pong pinned to one CPU (threads and processes), and a
//!   futex ping-pong between two pinned CPUs per distance class, with the target CPU idle or kept
//!   busy by a `SCHED_IDLE` spinner; [`handoff`]: a pipe or socket handed between two pinned
//!   CPUs without sleeping; [`queued`]: socket messages queued deep enough to leave the cache;
//!   [`stream`]: how a socket stream's cost splits between its sender and its receiver;
//!   [`reuse`]: a buffer two CPUs take turns on, how many line misses a streaming copy overlaps;
//!   [`lb_scan`]: a balance pass's walk over other CPUs' runqueues, how many line transfers one
//!   CPU of it costs; [`jitter`]: how much single calls of one path vary (the noise profile's
//!   `cost_jitter`).
//!   Each is repeated; [`Summary`] gives median and spread. [`noise`]: the machine's background
//!   activity (the osnoise tracer, tracefs events, or a self-timing loop) and the noise profile
//!   it makes.
//! * [`native`]: the load generators behind `wakesim native` and `wakesim validate`. They run a
//!   [`wakesim_workloads::Workload`] — the same task graph the simulator runs, built from the same
//!   command line — on the real kernel, so both sides print the same output format.
//!
//! Linux only (`sched_setaffinity`, futexes, `pidfd_open`).

pub mod calib;
pub mod handoff;
pub mod jitter;
pub mod lb_scan;
pub mod native;
pub mod noise;
pub mod queued;
pub mod reuse;
pub mod stream;
mod summary;
pub mod sys;
mod turns;

pub use summary::Summary;
