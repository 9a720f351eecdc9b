//! The data layer: the plain state the mechanisms work on, each type with its own methods and
//! no knowledge of `Sim`, of time passing or of who pays. The `impl Sim` modules (`lines`,
//! `locks`, `sis_filter`, `shared_runq`, ...) are the mechanism: they decide when a CPU touches
//! this state and charge it for doing so.
//!
//! | module | kernel |
//! |---|---|
//! | [`line`] | a cache line (or a group that moves together) written under a short lock |
//! | [`spinlock`] | `raw_spinlock_t` (a queued spinlock: FIFO hand-off) |
//! | [`sis_filter`] | SIS_FILTER's per-LLC idle mask and per-CPU sibling-scan flag |
//! | [`shared_runq`] | SHARED_RUNQ's `struct shared_runq` shards |

pub mod line;
pub mod shared_runq;
pub mod sis_filter;
pub mod spinlock;

pub use line::{ReadMostlyLine, SharedLine};
pub use shared_runq::SharedRunq;
pub use sis_filter::{SisFilter, SisFilterCpu};
pub use spinlock::SpinLock;
