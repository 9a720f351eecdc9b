//! The menu governor (`drivers/cpuidle/governors/menu.c`), v6.12: what x86 and arm64 server
//! kernels with CONFIG_NO_HZ_IDLE run by default.
//!
//! The expected idle length is the smaller of two predictions: the time till the next timer
//! event scaled by a learned correction factor (one per order of magnitude of that time), and
//! the "typical interval" of the last eight idle periods when they are regular enough. The
//! deepest state whose target residency fits it (and whose exit latency fits the latency
//! requirement) is chosen; then the tick rules decide whether the tick stops. v6.12 removed the
//! iowait influence (commit 38f83090f515, "cpuidle: menu: Remove iowait influence": no
//! performance multiplier, 6 buckets instead of 12); the model has no iowait either.
//!
//! Integer arithmetic as in the kernel (µs intervals, RESOLUTION-scaled factors), so decisions
//! match it to the nanosecond.

use super::{poll_state, SelectInput, Selection, Wakeup, KTIME_MAX, RESIDENCY_THRESHOLD_NS};
use wakesim_costs::IdleState;
use wakesim_engine::Time;

/// `BUCKETS` (menu.c, 6 since v6.12; 12 before, half of them for iowait).
pub const BUCKETS: usize = 6;
/// `INTERVAL_SHIFT` / `INTERVALS` (menu.c): eight idle periods for the typical interval.
pub const INTERVAL_SHIFT: u32 = 3;
pub const INTERVALS: usize = 1 << INTERVAL_SHIFT;
/// `RESOLUTION` (menu.c, 1024): the correction factor's fixed-point unit.
pub const RESOLUTION: u64 = 1024;
/// `DECAY` (menu.c, 8): each update keeps 7/8 of the factor; a factor of 1.0 is
/// `RESOLUTION * DECAY`.
pub const DECAY: u64 = 8;
/// `MAX_INTERESTING` (menu.c, 50 ms): longer sleeps count as perfect predictions.
pub const MAX_INTERESTING: Time = 50_000 * 1_000;

/// `struct menu_device`.
#[derive(Clone, Debug)]
pub struct Menu {
    /// `next_timer_ns` of the last selection (`KTIME_MAX` when it was not looked up).
    pub next_timer_ns: Time,
    /// `bucket`: the correction-factor bucket of the last selection.
    pub bucket: usize,
    /// `correction_factor[]`, RESOLUTION × DECAY = 1.0.
    pub correction_factor: [u32; BUCKETS],
    /// `intervals[]`: the last idle periods, µs (ring, `interval_ptr` next).
    pub intervals: [u32; INTERVALS],
    pub interval_ptr: usize,
}

impl Default for Menu {
    fn default() -> Self {
        Menu::new()
    }
}

/// `which_bucket()`: the correction factor's bucket for an expected duration, by order of
/// magnitude from 10 µs to 100 ms.
pub fn which_bucket(duration_ns: Time) -> usize {
    match duration_ns {
        d if d < 10_000 => 0,
        d if d < 100_000 => 1,
        d if d < 1_000_000 => 2,
        d if d < 10_000_000 => 3,
        d if d < 100_000_000 => 4,
        _ => 5,
    }
}

impl Menu {
    /// `menu_enable_device()`: every factor 1.0, no intervals yet.
    pub fn new() -> Menu {
        Menu {
            next_timer_ns: 0,
            bucket: 0,
            correction_factor: [(RESOLUTION * DECAY) as u32; BUCKETS],
            intervals: [0; INTERVALS],
            interval_ptr: 0,
        }
    }

    /// `get_typical_interval()`: the average of the recorded intervals, µs, when their spread
    /// is small (variance ≤ 400 µs², or average > 6 standard deviations with at least 3/4 of
    /// the samples left), dropping the largest sample and retrying while more than 3/4 remain;
    /// else `u32::MAX` (no prediction).
    pub fn get_typical_interval(&self) -> u32 {
        let mut thresh = i32::MAX as u32; // discard outliers above this value
        loop {
            let (mut max, mut sum, mut divisor) = (0u32, 0u64, 0u64);
            for &v in self.intervals.iter().filter(|&&v| v <= thresh) {
                sum += v as u64;
                divisor += 1;
                max = max.max(v);
            }
            if max == 0 {
                return u32::MAX;
            }
            let avg = if divisor == INTERVALS as u64 { sum >> INTERVAL_SHIFT } else { sum / divisor };
            let mut variance = 0u64;
            for &v in self.intervals.iter().filter(|&&v| v <= thresh) {
                let diff = v as i64 - avg as i64;
                variance = variance.wrapping_add(diff.wrapping_mul(diff) as u64);
            }
            if divisor == INTERVALS as u64 {
                variance >>= INTERVAL_SHIFT;
            } else {
                variance /= divisor;
            }
            if variance <= u64::MAX / 36
                && ((avg * avg > variance * 36 && divisor * 4 >= INTERVALS as u64 * 3) || variance <= 400)
            {
                return avg as u32;
            }
            if divisor * 4 <= INTERVALS as u64 * 3 {
                return u32::MAX;
            }
            thresh = max - 1;
        }
    }

    /// `menu_select()`.
    pub fn select(&mut self, inp: &SelectInput) -> Selection {
        let states = inp.states;
        let tick = inp.tick_nsec;
        let mut latency_req = inp.latency_req;
        let delta_tick;
        // The shortest expected idle interval first: the timer is looked up only when the
        // typical interval is not already short.
        let mut predicted_ns = self.get_typical_interval() as Time * 1_000;
        if predicted_ns > RESIDENCY_THRESHOLD_NS {
            self.next_timer_ns = inp.sleep_length;
            delta_tick = inp.delta_tick;
            self.bucket = which_bucket(self.next_timer_ns);
            // next_timer × correction factor, rounded to the µs.
            let unit = RESOLUTION * DECAY * 1_000;
            let timer_us = ((unit / 2) as u128 + self.next_timer_ns as u128 * self.correction_factor[self.bucket] as u128)
                / unit as u128;
            predicted_ns = predicted_ns.min(timer_us as Time * 1_000);
        } else {
            // The timer is not looked up: assume it far away and the tick half a period away.
            self.next_timer_ns = KTIME_MAX;
            delta_tick = tick / 2;
            self.bucket = which_bucket(KTIME_MAX);
        }
        // State 0 is used no matter what: return it, keeping the tick if it polls.
        if states.len() <= 1
            || latency_req == 0
            || self.next_timer_ns < states[1].target_residency
            || latency_req < states[1].exit_latency
        {
            return Selection { state: 0, stop_tick: !poll_state(states, 0) };
        }
        if inp.tick_stopped {
            // A stopped tick makes a short misprediction costly (stuck in a shallow state till
            // the next timer): use the time till that timer.
            if predicted_ns < tick {
                predicted_ns = self.next_timer_ns;
            }
        } else if latency_req > predicted_ns {
            latency_req = predicted_ns;
        }
        // The deepest state within the prediction and the latency limit.
        let mut idx: Option<usize> = None;
        for (i, s) in states.iter().enumerate() {
            let cur = *idx.get_or_insert(i);
            if s.target_residency > predicted_ns {
                // Use a real idle state rather than polling when the timer leaves room for it.
                if poll_state(states, cur) && s.exit_latency <= latency_req && s.target_residency <= self.next_timer_ns {
                    predicted_ns = s.target_residency;
                    idx = Some(i);
                    break;
                }
                if predicted_ns < tick {
                    break;
                }
                if !inp.tick_stopped {
                    // Shallow so far: waking early does no harm, keep the tick and let the
                    // governor run again at the next loop.
                    predicted_ns = states[cur].target_residency;
                    break;
                }
                // Tick stopped and a shallow choice: take this state if it fits the time till
                // the next clock event, not to be stuck in the shallow one.
                let pick = if states[cur].target_residency < tick && s.target_residency <= delta_tick { i } else { cur };
                return Selection { state: pick, stop_tick: true };
            }
            if s.exit_latency > latency_req {
                break;
            }
            idx = Some(i);
        }
        let mut idx = idx.unwrap_or(0);
        let mut stop_tick = true;
        // Keep the tick for a polling state or a prediction shorter than the tick period; then
        // the state must also fit before the next clock event (the tick included).
        if (poll_state(states, idx) || predicted_ns < tick) && !inp.tick_stopped {
            stop_tick = false;
            if idx > 0 && states[idx].target_residency > delta_tick {
                for i in (0..idx).rev() {
                    idx = i;
                    if states[i].target_residency <= delta_tick {
                        break;
                    }
                }
            }
        }
        Selection { state: idx, stop_tick }
    }

    /// `menu_reflect()` then `menu_update()` (which the kernel runs at the next selection, with
    /// the same data): how long the CPU really slept, fed into the correction factor of the
    /// selection's bucket and into the interval ring.
    pub fn reflect(&mut self, states: &[IdleState], w: &Wakeup) {
        let target = &states[w.state];
        let mut measured_ns = if w.tick && self.next_timer_ns > w.tick_nsec {
            // The tick (kept after all) woke the CPU while the timer was beyond it: the
            // prediction was short; assume a long (not endless) sleep.
            9 * MAX_INTERESTING / 10
        } else if poll_state(states, w.state) && w.poll_time_limit {
            // POLL ran out of time: a better prediction would have slept till the timer.
            self.next_timer_ns
        } else {
            // The measured residency less the exit latency (half of it when shorter than twice
            // the latency: the state may not have been reached).
            let m = w.residency;
            if m > 2 * target.exit_latency {
                m - target.exit_latency
            } else {
                m / 2
            }
        };
        // The factor never exceeds 1.0.
        measured_ns = measured_ns.min(self.next_timer_ns);
        let mut new_factor = self.correction_factor[self.bucket] as u64;
        new_factor -= new_factor / DECAY;
        if self.next_timer_ns > 0 && measured_ns < MAX_INTERESTING {
            new_factor += RESOLUTION * measured_ns / self.next_timer_ns;
        } else {
            new_factor += RESOLUTION; // idle so long it counts as a perfect prediction
        }
        self.correction_factor[self.bucket] = new_factor as u32;
        // ktime_to_us() into an unsigned int, truncated as C truncates (v6.12 stores KTIME_MAX's
        // µs this way after a POLL time-out without a timer lookup).
        self.intervals[self.interval_ptr] = (measured_ns / 1_000) as u32;
        self.interval_ptr = (self.interval_ptr + 1) % INTERVALS;
    }
}
