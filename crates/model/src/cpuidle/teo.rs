//! The timer events oriented governor (`drivers/cpuidle/governors/teo.c`) as in v6.11–v6.13:
//! after Christian Loehle's 2024 series (util-awareness and the "recent" metric removed, the
//! sleep length looked up when intercepts pick state 0) and before the 2025 rework.
//!
//! Each state has a bin, from its target residency to the next state's. After every wakeup the
//! bin the measured idle duration falls into gets a "hit" when it is the bin of the sleep
//! length (the timer woke the CPU on time) or an "intercept" otherwise (something woke it
//! earlier); all metrics decay by 1/8 per update. Selection starts from the deepest state and
//! goes shallower where intercepts below it outweigh the rest, then caps the candidate by the
//! time till the next timer.

use super::{poll_state, SelectInput, Selection, Wakeup, CPUIDLE_STATE_MAX, KTIME_MAX, RESIDENCY_THRESHOLD_NS};
use wakesim_costs::IdleState;
use wakesim_engine::Time;

/// `PULSE` (teo.c, 1024): what an event adds to a metric.
pub const PULSE: u32 = 1024;
/// `DECAY_SHIFT` (teo.c, 3): each update keeps 7/8 of every metric.
pub const DECAY_SHIFT: u32 = 3;
/// `struct teo_bin`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TeoBin {
    pub intercepts: u32,
    pub hits: u32,
}

/// `struct teo_cpu`, with the device fields teo reads (`last_state_idx`, `last_residency_ns`).
#[derive(Clone, Debug, Default)]
pub struct Teo {
    /// `time_span_ns`: at selection the clock, after the reflect the time from selection to
    /// reflect (or the sleep length when a safety net woke the CPU).
    pub time_span_ns: Time,
    /// `sleep_length_ns`: the time till the closest timer at selection (`KTIME_MAX` when not
    /// looked up).
    pub sleep_length_ns: Time,
    pub state_bins: [TeoBin; CPUIDLE_STATE_MAX],
    /// `total`: the sum of every bin's metrics plus `tick_hits` and the last PULSE.
    pub total: u32,
    /// `tick_hits`: "hits" beyond TICK_NSEC when the deepest state's residency is below it.
    pub tick_hits: u32,
    /// `dev->last_state_idx` (`None` = -1: no stay to learn from) and `dev->last_residency_ns`.
    pub last_state: Option<usize>,
    pub last_residency: Time,
}

/// `teo_state_ok()`: with the tick stopped only states at least a tick deep will do.
fn state_ok(states: &[IdleState], i: usize, inp: &SelectInput) -> bool {
    !inp.tick_stopped || states[i].target_residency >= inp.tick_nsec
}

/// `teo_find_shallower_state()`: from `idx` down, the first state whose target residency fits
/// `duration` (else the shallowest tried); `no_poll` skips the POLL state.
fn find_shallower_state(states: &[IdleState], mut idx: usize, duration: Time, no_poll: bool) -> usize {
    for i in (0..idx).rev() {
        if no_poll && poll_state(states, i) {
            continue;
        }
        idx = i;
        if states[i].target_residency <= duration {
            break;
        }
    }
    idx
}

impl Teo {
    /// `teo_enable_device()`: everything zero.
    pub fn new() -> Teo {
        Teo::default()
    }

    /// `teo_update()`: decay every metric, then count the stay that ended as a hit of the
    /// sleep length's bin or an intercept of the measured duration's bin.
    pub fn update(&mut self, states: &[IdleState], tick_nsec: Time) {
        let Some(last) = self.last_state else { return };
        let measured_ns = if self.time_span_ns >= self.sleep_length_ns {
            // A safety net woke the CPU, or the wakeup came close enough to the expected timer:
            // count it as a sleep till that timer.
            Time::MAX
        } else {
            // The exit latency's average share: half of it.
            let lat = states[last].exit_latency;
            let m = self.last_residency;
            if m >= lat {
                m - lat / 2
            } else {
                m / 2
            }
        };
        self.total = 0;
        let (mut idx_timer, mut idx_duration) = (0, 0);
        for (i, s) in states.iter().enumerate() {
            let bin = &mut self.state_bins[i];
            bin.hits -= bin.hits >> DECAY_SHIFT;
            bin.intercepts -= bin.intercepts >> DECAY_SHIFT;
            self.total += bin.hits + bin.intercepts;
            if s.target_residency <= self.sleep_length_ns {
                idx_timer = i;
                if s.target_residency <= measured_ns {
                    idx_duration = i;
                }
            }
        }
        // The deepest state shallower than the tick: an extra hits-only bin beyond it, to help
        // decide whether to stop the tick.
        let deepest = states[states.len() - 1].target_residency;
        if deepest < tick_nsec {
            self.tick_hits -= self.tick_hits >> DECAY_SHIFT;
            self.total += self.tick_hits;
            if tick_nsec <= self.sleep_length_ns {
                idx_timer = states.len();
                if tick_nsec <= measured_ns {
                    self.tick_hits += PULSE;
                    self.total += PULSE;
                    return;
                }
            }
        }
        if idx_timer == idx_duration {
            self.state_bins[idx_timer].hits += PULSE;
        } else {
            self.state_bins[idx_duration].intercepts += PULSE;
        }
        self.total += PULSE;
    }

    /// `teo_select()` (after `teo_update()` for the last stay).
    pub fn select(&mut self, inp: &SelectInput) -> Selection {
        let states = inp.states;
        let tick = inp.tick_nsec;
        self.update(states, tick);
        self.last_state = None;
        self.time_span_ns = inp.now;
        self.sleep_length_ns = KTIME_MAX; // in case the lookup is skipped
        let out_tick = |state| Selection { state, stop_tick: false };
        if states.len() < 2 {
            return out_tick(0);
        }
        // Sums of the metrics below each state, for the deepest (the candidate).
        let (mut intercept_sum, mut hit_sum) = (0u32, 0u32);
        let (mut idx_intercept_sum, mut idx_hit_sum) = (0u32, 0u32);
        let mut constraint_idx = 0;
        let idx0 = 0;
        let mut idx = 0;
        for i in 1..states.len() {
            intercept_sum += self.state_bins[i - 1].intercepts;
            hit_sum += self.state_bins[i - 1].hits;
            idx = i;
            if states[i].exit_latency <= inp.latency_req {
                constraint_idx = i;
            }
            idx_intercept_sum = intercept_sum;
            idx_hit_sum = hit_sum;
        }
        let tick_intercept_sum = intercept_sum + self.state_bins[states.len() - 1].intercepts;
        // Intercepts below the candidate outweigh the hits and intercepts from it up: look for
        // the deepest state whose residency the idle duration did not fall short of in over
        // half the relevant cases.
        let prev_intercept_idx = idx;
        if 2 * idx_intercept_sum > self.total.wrapping_sub(idx_hit_sum) {
            let mut first_suitable_idx = idx;
            let mut sum = 0u32;
            for i in (0..idx).rev() {
                sum += self.state_bins[i].intercepts;
                if 2 * sum > idx_intercept_sum {
                    idx = if state_ok(states, i, inp) { i } else { first_suitable_idx };
                    break;
                }
                if !state_ok(states, i, inp) {
                    // Too shallow for a stopped tick; an alternative found already may still do.
                    if first_suitable_idx != idx {
                        continue;
                    }
                    break;
                }
                first_suitable_idx = i;
            }
        }
        if idx == 0 && prev_intercept_idx != 0 {
            // Intercepts chose state 0: look the sleep length up anyway, so that the next update
            // knows whether the guess was right.
            self.sleep_length_ns = inp.sleep_length;
            return out_tick(0);
        }
        // The latency constraint.
        idx = idx.min(constraint_idx);
        // State 0: an immediate non-timer wakeup is expected; no timer check.
        if idx == 0 {
            return out_tick(0);
        }
        // A shallow candidate after a polling state 0: no timer check either.
        if poll_state(states, 0) && states[idx].target_residency < RESIDENCY_THRESHOLD_NS {
            return out_tick(idx);
        }
        let mut duration_ns = inp.sleep_length;
        let delta_tick = inp.delta_tick;
        self.sleep_length_ns = duration_ns;
        // The closest timer comes before the candidate's target residency: go shallower.
        if states[idx].target_residency > duration_ns {
            let i = find_shallower_state(states, idx, duration_ns, false);
            if state_ok(states, i, inp) {
                idx = i;
            }
        }
        // A state shallower than the tick, and intercepts before the tick the clear majority:
        // do not stop the tick.
        if states[idx].target_residency < tick && tick_intercept_sum > self.total / 2 + self.total / 8 {
            duration_ns = tick / 2;
        }
        // Stop the tick unless the state polls or the expected idle is shorter than a tick.
        if (!poll_state(states, idx) && duration_ns >= tick) || inp.tick_stopped {
            return Selection { state: idx, stop_tick: true };
        }
        // The tick stays: the state must fit before the next clock event, the tick included.
        if idx > idx0 && states[idx].target_residency > delta_tick {
            idx = find_shallower_state(states, idx, delta_tick, false);
        }
        out_tick(idx)
    }

    /// `teo_reflect()`: note the stay for the next update; a wakeup by a safety net (POLL's time
    /// limit, or the tick while the timer was beyond it) counts as a sleep of the whole sleep
    /// length.
    pub fn reflect(&mut self, _states: &[IdleState], w: &Wakeup) {
        self.last_state = Some(w.state);
        self.last_residency = w.residency;
        if w.poll_time_limit || (w.tick && self.sleep_length_ns > w.tick_nsec) {
            self.time_span_ns = self.sleep_length_ns;
        } else {
            self.time_span_ns = w.now - self.time_span_ns;
        }
    }
}
