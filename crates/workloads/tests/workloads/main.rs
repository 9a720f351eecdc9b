//! The workloads: command lines and task files become task graphs, each benchmark's graph,
//! arithmetic and output match the real tool, and the mailing-list changes move the benchmarks
//! the way their authors reported.

mod benchmarks;
mod changes;
mod command_line;
mod common;
mod robustness;
mod taskfile;
