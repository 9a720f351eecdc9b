//! The haltpoll governor (`drivers/cpuidle/governors/haltpoll.c`) with the cpuidle-haltpoll
//! driver (`drivers/cpuidle/cpuidle-haltpoll.c`): what a KVM guest runs when the host hints
//! KVM_HINTS_REALTIME (or `cpuidle_haltpoll.force=1`).
//!
//! The driver has two states, POLL and "haltpoll idle" (HLT, 1 µs). The governor polls after a
//! halt and halts after a poll that ran out of time; the poll window (`dev->poll_limit_ns`,
//! which `poll_idle()` then uses as its time limit) grows when a halt was short enough that
//! polling would have caught the wakeup, and shrinks after a long halt. On a cost profile with
//! more states the halt is state 1; on one without a POLL state (the built-in `host` profile,
//! HLT only) there is nothing to poll and every pass halts.

use super::{SelectInput, Selection, Wakeup};
use wakesim_engine::Time;

/// `guest_halt_poll_ns` (haltpoll.c, module parameter, 200 µs): the longest poll window, and
/// the longest halt that still grows it.
pub const GUEST_HALT_POLL_NS: Time = 200_000;
/// `guest_halt_poll_shrink` (2): divisor of the window after a longer halt.
pub const GUEST_HALT_POLL_SHRINK: Time = 2;
/// `guest_halt_poll_grow` (2): multiplier of the window after a short halt.
pub const GUEST_HALT_POLL_GROW: Time = 2;
/// `guest_halt_poll_grow_start` (50 µs): the first window; a shrunk window below it is 0.
pub const GUEST_HALT_POLL_GROW_START: Time = 50_000;
/// `guest_halt_poll_allow_shrink` (true).
pub const GUEST_HALT_POLL_ALLOW_SHRINK: bool = true;

/// haltpoll's fields of `struct cpuidle_device`.
#[derive(Clone, Debug, Default)]
pub struct Haltpoll {
    /// `dev->poll_limit_ns`: the poll window; 0 = do not poll (`haltpoll_enable_device()`).
    pub poll_limit_ns: Time,
    /// `dev->last_state_idx`.
    pub last_state: usize,
    /// `dev->poll_time_limit`: the last poll ran out of time.
    pub poll_time_limit: bool,
}

impl Haltpoll {
    /// `haltpoll_enable_device()`: no poll window yet.
    pub fn new() -> Haltpoll {
        Haltpoll::default()
    }

    /// `haltpoll_select()`: poll after a halt or after a poll that a wakeup ended; halt after a
    /// poll that ran out of time, or while the window is 0. The tick stops only for a halt.
    pub fn select(&mut self, inp: &SelectInput) -> Selection {
        let halt = 1.min(inp.states.len() - 1);
        if inp.latency_req == 0 {
            return Selection { state: 0, stop_tick: false };
        }
        if self.poll_limit_ns == 0 {
            return Selection { state: halt, stop_tick: true };
        }
        if self.last_state == 0 && self.poll_time_limit {
            return Selection { state: halt, stop_tick: true };
        }
        Selection { state: 0, stop_tick: false }
    }

    /// `haltpoll_reflect()`: after a halt, `adjust_poll_limit()` with its residency.
    pub fn reflect(&mut self, w: &Wakeup) {
        self.last_state = w.state;
        self.poll_time_limit = w.poll_time_limit;
        if w.state != 0 {
            self.adjust_poll_limit(w.residency);
        }
    }

    /// `adjust_poll_limit()`: a halt longer than the window but within `guest_halt_poll_ns`
    /// grows it (× grow, at least grow_start, at most guest_halt_poll_ns); a longer halt shrinks
    /// it (÷ shrink, to 0 below grow_start).
    pub fn adjust_poll_limit(&mut self, block_ns: Time) {
        if block_ns > self.poll_limit_ns && block_ns <= GUEST_HALT_POLL_NS {
            let val = (self.poll_limit_ns * GUEST_HALT_POLL_GROW).clamp(GUEST_HALT_POLL_GROW_START, GUEST_HALT_POLL_NS);
            self.poll_limit_ns = val;
        } else if block_ns > GUEST_HALT_POLL_NS && GUEST_HALT_POLL_ALLOW_SHRINK {
            let mut val = self.poll_limit_ns / GUEST_HALT_POLL_SHRINK;
            if val < GUEST_HALT_POLL_GROW_START {
                val = 0;
            }
            self.poll_limit_ns = val;
        }
    }
}
