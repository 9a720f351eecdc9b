//! # wakesim-engine: time, events and determinism
//!
//! The engine knows nothing about schedulers. It gives the model three things:
//!
//! * [`Time`]: simulated nanoseconds since the start of a run (`u64`), with helpers.
//! * [`EventQueue`]: a priority queue ordered by `(time, sequence number)`. Two events at the
//!   same instant pop in the order they were pushed, never in hash or address order, so a run is
//!   a pure function of its inputs and seed. Popping asserts that the clock never goes back.
//! * [`RngStream`]: one seeded PCG stream per purpose (per task, per workload, per mechanism),
//!   derived from the run seed and a stream id with SplitMix64. Adding a stream for a new feature
//!   does not shift the numbers any other stream draws, so paired A/B runs stay paired.

mod queue;
mod rng;
mod time;

pub use queue::{EventQueue, QueueStats};
pub use rng::{stream_id, RngStream};
pub use time::*;

/// Whether invariant checks run: always in tests and debug builds, in release builds only with
/// the `invariants` feature.
pub const CHECKS: bool = cfg!(any(debug_assertions, feature = "invariants"));

/// Invariant check (TigerBeetle style: assert what must hold, everywhere). Free in release
/// builds unless the `invariants` feature is on.
#[macro_export]
macro_rules! invariant {
    ($cond:expr, $($arg:tt)+) => {
        if $crate::CHECKS && !$cond {
            panic!("invariant violated: {}", format_args!($($arg)+));
        }
    };
}
