//! # wakesim-model: the Linux scheduler's wakeup path as a discrete-event model
//!
//! One module per kernel mechanism, named after it, as in `kernel/sched/`:
//!
//! | module | kernel |
//! |---|---|
//! | [`exec`](crate::exec) | the CPU as a serial executor; tasks' kernel stacks of continuations |
//! | `ttwu` | `try_to_wake_up`, `ttwu_queue_wakelist`, `sched_ttwu_pending`, IPIs vs polling |
//! | `select` | `select_task_rq_fair`, `wake_wide`, `wake_affine` |
//! | `sis` | `select_idle_sibling`, `select_idle_cpu`, SIS_UTIL, `has_idle_cores` |
//! | `schedule` | `__schedule`, `pick_next_task_fair`, context switch |
//! | `eevdf` | EEVDF: `avg_vruntime`, `place_entity`, `pick_eevdf`, `update_curr` |
//! | `idle` | `do_idle`, idle-state governor, `schedule_idle` |
//! | `newidle` | `sched_balance_newidle` |
//! | `balance` | `load_balance` / `sched_balance_rq` |
//! | `periodic` | `sched_balance_domains`, NOHZ idle balancing |
//! | `pelt` | per-entity load tracking |
//! | `enqueue` | `enqueue_task_fair` / `dequeue_task_fair`, `set_task_cpu`, task-group load |
//! | `irq` | interrupts, the tick, softirqs, preemption on return to user |
//! | `syscalls` | the behaviour language: compute, pipes/sockets, futexes, sleeps, exit |
//! | `locks` | rq locks as FIFO spinlocks with cache-line hand-off |
//! | `features` | the feature registry (features.h) |

mod balance;
pub mod eevdf;
mod enqueue;
pub mod exec;
pub mod features;
mod idle;
mod invariants;
mod irq;
pub mod locks;
mod newidle;
pub mod pelt;
mod periodic;
mod run;
mod schedule;
mod select;
mod sim;
mod sis;
pub mod state;
mod syscalls;
mod ttwu;
pub mod tunables;

pub use features::Features;
pub use run::RunResult;
pub use sim::{Config, Sim};
