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
//! | `sis_filter` | SIS_FILTER: Abel Wu's per-LLC idle-core mask (2022); its state is [`data::SisFilter`] |
//! | `schedule` | `__schedule`, `pick_next_task_fair`, context switch |
//! | [`eevdf`] | `struct cfs_rq` ([`eevdf::CfsRq`]) over the `struct sched_entity` arena `Sim::se`; EEVDF: `avg_vruntime`, `place_entity`, `pick_eevdf`, `update_curr` |
//! | `cfs` | pre-EEVDF CFS (≤ v6.5): sleeper credit, `check_preempt_tick`, `wakeup_gran` |
//! | `idle` | `do_idle`, idle-state governor, `schedule_idle` |
//! | `newidle` | `sched_balance_newidle` (`newidle_balance` before v6.10) |
//! | `shared_runq` | SHARED_RUNQ: David Vernet's per-LLC sharded FIFO (2023); its state is [`data::SharedRunq`] |
//! | `balance` | `sched_balance_rq` (`load_balance` before v6.10) |
//! | `periodic` | `sched_balance_domains` (`rebalance_domains`), `_nohz_idle_balance` |
//! | `pelt` | per-entity load tracking |
//! | `enqueue` | `enqueue_task_fair` / `dequeue_task_fair`, `set_task_cpu`, task-group load |
//! | `irq` | `handle_irq`: interrupts, the tick, softirqs, preemption on return to user |
//! | `syscalls` | `do_syscall_64`: the behaviour language's compute, pipes/sockets, futexes, sleeps, exit |
//! | [`state`] | `task_struct` (`Task`), `struct sched_entity` (`Entity`), `struct rq` (`Cpu`), `sd_llc_shared` (`LlcShared`), `struct nohz`, pipes, futexes |
//! | [`data`] | the data layer: plain state types with their own methods and no `Sim` (`SharedLine`, `SpinLock` = `raw_spinlock_t`, `SisFilter`, `SharedRunq`), used by `lines`, `locks`, `sis_filter`, `shared_runq` |
//! | `mesh` | a core's place on its die's mesh: per-core offsets to its cache-line transfers (`Sim::line_xfer`) |
//! | `locks` | rq locks as FIFO spinlocks with cache-line hand-off |
//! | `lines` | shared cache lines and short locks: owner, transfer, serialised writers; a channel's lines and each message's (read on another CPU, or evicted) |
//! | `pthread_mutex` | glibc's pthread mutex: user-space fast path, `futex_wait`/`futex_wake` when contended, no hand-off |
//! | [`user_locks`] | schbench's per-CPU user-space spinlock (`lock_this_cpu`) |
//! | `features` | the feature registry (features.h) |
//! | [`trace`] | the optional schedule recorder behind `wakesim run --trace` |
//! | [`waste`] | the work-conservation checker (Lozi et al. 2016): idle CPUs while work waits nearby |
//!
//! ## A first simulation
//!
//! A run needs a machine (topology + sched domains), a cost profile, the feature flags, a seed
//! and a workload. Here two tasks ping-pong over two pipes, as `perf bench sched pipe` does, on
//! the 8-CPU test machine:
//!
//! ```
//! use wakesim_model::{Config, Features, Sim};
//!
//! let machine = wakesim_machine::preset("test-smt2").unwrap();
//! let costs = wakesim_costs::profile_for(&machine.cost_profile).unwrap();
//! let wl = wakesim_workloads::from_command_line(
//!     &["perf", "bench", "sched", "pipe", "-l", "1000"].map(String::from),
//! )
//! .unwrap();
//! let cfg = Config { machine, costs, features: Features::default(), seed: 1, duration_cap: 1_000_000_000, noise: wakesim_model::NoiseProfile::none(), governor: wakesim_model::GovernorKind::Ewma, task_groups: wakesim_model::TaskGroups::Root };
//! let result = Sim::new(cfg, &wl).unwrap().run();
//!
//! // The benchmark's own output, as perf prints it...
//! assert!(wl.reporter.render(&result.outcome).contains("usecs/op"));
//! // ...and the statistics that explain it: every round trip is two sync wakeups (the very
//! // first message may find its reader not yet asleep).
//! let w = result.stats.wake.wakeups_sync;
//! assert!((1998..=2000).contains(&w), "{w}");
//! ```
//!
//! ## How time is charged
//!
//! Read [`exec`] first: every mechanism is a continuation ("frame") on the kernel stack of the
//! task the CPU runs, resumed at one of its mechanism's named phases by the handler named after
//! the kernel function (`try_to_wake_up`, `__schedule`, `do_idle`, ...); a frame occupies its
//! CPU for each step it takes, so a waker that scans 16 CPUs and locks a remote runqueue
//! finishes its own work later, and a CPU busy balancing with interrupts off takes the next
//! IPI later. Nothing is added to a result afterwards.

mod active_balance;
pub mod autogroup;
mod balance;
mod cfs;
mod detach;
pub mod cpuidle;
pub mod data;
pub mod eevdf;
mod enqueue;
pub mod exec;
pub mod features;
mod find_idlest;
mod idle;
mod imbalance;
mod invariants;
mod irq;
mod jitter;
mod lines;
mod mesh;
pub mod locks;
mod newidle;
pub mod noise;
pub mod pelt;
mod periodic;
mod pthread_mutex;
mod read_costs;
mod run;
mod schedule;
mod select;
mod shared_runq;
mod sim;
mod sis;
mod sis_filter;
pub mod state;
mod syscalls;
pub mod trace;
mod ttwu;
pub mod tunables;
pub mod user_locks;
pub mod waste;
#[doc(hidden)] pub mod testkit;

pub use autogroup::TaskGroups;
pub use cpuidle::GovernorKind;
pub use features::Features;
pub use wakesim_machine::NoiseProfile;
pub use run::RunResult;
pub use sim::{Config, Sim};
pub use trace::{run_with_trace, TraceOpts};
pub use wakesim_trace::{IpiKind, LbResult, Trace, TraceEvent, WakeHow};
