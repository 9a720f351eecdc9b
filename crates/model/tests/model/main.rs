//! The model's behaviour tests, one module per mechanism: each test drives the simulator on a
//! small machine and checks what the kernel code it models would do.

mod active_balance;
mod call_function;
mod changes;
mod channels;
mod common;
mod contention;
mod context_switch;
mod cpuidle;
mod detach;
mod determinism;
mod enqueue_lines;
mod fair;
mod fork;
mod futex;
mod idle_scan;
mod invariants;
mod mesh;
mod migrate_claim;
mod newidle;
mod noise;
mod nohz;
mod pelt;
mod scan_recheck;
mod scenarios;
mod sync_ops;
mod trace;
mod user_locks;
mod wakeup;
mod work_conservation;
