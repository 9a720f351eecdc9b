//! PELT: per-entity load tracking (kernel/sched/pelt.c), integer arithmetic as the kernel does it.
//!
//! Time is in 1024 ns "PELT µs"; a period is 1024 of those (≈1.048 ms); contributions decay by
//! `y` per period with `y^32 = 1/2` (LOAD_AVG_PERIOD = 32). Signals are kept for tasks (their
//! `sched_entity`) and for each CPU's root cfs_rq, where wake_affine_weight (load), SIS_UTIL and
//! the load balancer (util, runnable, load) read them.

use wakesim_engine::Time;

/// LOAD_AVG_PERIOD (sched-pelt.h).
pub const LOAD_AVG_PERIOD: u64 = 32;
/// LOAD_AVG_MAX (sched-pelt.h): the maximum of the geometric series Σ 1024·y^n.
pub const LOAD_AVG_MAX: u64 = 47742;
/// SCHED_CAPACITY_SHIFT.
const CAP_SHIFT: u32 = 10;

/// `runnable_avg_yN_inv[n]` = y^n · 2^32, computed the way Documentation/scheduler/sched-pelt.c
/// generates the kernel table (y = 0.5^(1/32)), capped at 0xffffffff for n = 0.
fn yn_inv(n: u64) -> u64 {
    static TABLE: std::sync::OnceLock<[u64; 32]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let y = 0.5f64.powf(1.0 / 32.0);
        let mut t = [0u64; 32];
        for (i, v) in t.iter_mut().enumerate() {
            *v = ((y.powi(i as i32) * 4294967296.0) as u64).min(0xffff_ffff);
        }
        t
    })[n as usize]
}

/// `decay_load(val, n)`: val · y^n.
pub fn decay_load(mut val: u64, n: u64) -> u64 {
    if n > LOAD_AVG_PERIOD * 63 {
        return 0;
    }
    let mut local_n = n;
    if local_n >= LOAD_AVG_PERIOD {
        val >>= local_n / LOAD_AVG_PERIOD;
        local_n %= LOAD_AVG_PERIOD;
    }
    ((val as u128 * yn_inv(local_n) as u128) >> 32) as u64
}

/// `__accumulate_pelt_segments()`.
fn accumulate_segments(periods: u64, d1: u64, d3: u64) -> u64 {
    let c1 = decay_load(d1, periods);
    let c2 = LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, periods) - 1024;
    c1 + c2 + d3
}

/// `struct sched_avg`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedAvg {
    pub last_update_time: Time,
    pub load_sum: u64,
    pub runnable_sum: u64,
    pub util_sum: u64,
    pub period_contrib: u64,
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
}

impl SchedAvg {
    pub fn new(now: Time) -> Self {
        SchedAvg { last_update_time: now, ..Default::default() }
    }

    /// `___update_load_sum()` + `___update_load_avg()`. `load` is the weight (tasks: the task's
    /// weight if on_rq; cfs_rq: Σ queued weights, and the avg is then computed with weight 1),
    /// `runnable` the number of runnable entities, `running` whether it is running.
    /// Returns true if at least one period boundary was crossed.
    pub fn update(&mut self, now: Time, load: u64, runnable: u64, running: bool, avg_weight: u64) -> bool {
        if now < self.last_update_time {
            self.last_update_time = now;
            return false;
        }
        let delta = (now - self.last_update_time) >> 10;
        if delta == 0 {
            return false;
        }
        self.last_update_time += delta << 10;
        let (runnable, running) = if load == 0 { (0, false) } else { (runnable, running) };
        // accumulate_sum()
        let mut contrib = delta;
        let mut d = delta + self.period_contrib;
        let periods = d / 1024;
        if periods > 0 {
            self.load_sum = decay_load(self.load_sum, periods);
            self.runnable_sum = decay_load(self.runnable_sum, periods);
            self.util_sum = decay_load(self.util_sum, periods);
            d %= 1024;
            if load > 0 {
                contrib = accumulate_segments(periods, 1024 - self.period_contrib, d);
            }
        }
        self.period_contrib = d;
        if load > 0 {
            self.load_sum += load * contrib;
        }
        if runnable > 0 {
            self.runnable_sum += (runnable * contrib) << CAP_SHIFT;
        }
        if running {
            self.util_sum += contrib << CAP_SHIFT;
        }
        if periods == 0 {
            return false;
        }
        // ___update_load_avg()
        let divider = LOAD_AVG_MAX - 1024 + self.period_contrib;
        self.load_avg = avg_weight * self.load_sum / divider;
        self.runnable_avg = self.runnable_sum / divider;
        self.util_avg = self.util_sum / divider;
        true
    }

    /// `attach_entity_load_avg()`: aligns the task's window with the cfs_rq's, re-derives its
    /// sums from its averages, and adds both to the cfs_rq (the cfs_rq's load_sum is weighted).
    pub fn attach(&mut self, se: &mut SchedAvg, se_weight: u64) {
        let divider = LOAD_AVG_MAX - 1024 + self.period_contrib;
        se.last_update_time = self.last_update_time;
        se.period_contrib = self.period_contrib;
        se.util_sum = se.util_avg * divider;
        se.runnable_sum = se.runnable_avg * divider;
        se.load_sum = (se.load_avg * divider / se_weight.max(1)).max(1);
        self.load_avg += se.load_avg;
        self.load_sum += se_weight * se.load_sum;
        self.util_avg += se.util_avg;
        self.util_sum += se.util_sum;
        self.runnable_avg += se.runnable_avg;
        self.runnable_sum += se.runnable_sum;
    }

    /// `detach_entity_load_avg()` / the `removed` path of `remove_entity_load_avg()`.
    pub fn detach(&mut self, se: &SchedAvg, se_weight: u64) {
        // sub_positive(), then the PELT_MIN_DIVIDER floors of update_cfs_rq_load_avg().
        let min_div = LOAD_AVG_MAX - 1024;
        self.load_avg = self.load_avg.saturating_sub(se.load_avg);
        self.load_sum = self.load_sum.saturating_sub(se_weight * se.load_sum).max(self.load_avg * min_div);
        self.util_avg = self.util_avg.saturating_sub(se.util_avg);
        self.util_sum = self.util_sum.saturating_sub(se.util_sum).max(self.util_avg * min_div);
        self.runnable_avg = self.runnable_avg.saturating_sub(se.runnable_avg);
        self.runnable_sum = self.runnable_sum.saturating_sub(se.runnable_sum).max(self.runnable_avg * min_div);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wakesim_engine::MSEC;

    #[test]
    fn always_running_task_reaches_half_capacity_after_32ms() {
        let mut a = SchedAvg::new(0);
        let mut t = 0;
        while t < 32 * MSEC {
            t += MSEC / 4;
            a.update(t, 1024, 1, true, 1024);
        }
        // y^32 = 1/2: from zero, util after ~32 ms is about half of SCHED_CAPACITY_SCALE.
        assert!((470..=530).contains(&a.util_avg), "util_avg {}", a.util_avg);
    }

    #[test]
    fn always_running_task_converges_to_full_capacity() {
        let mut a = SchedAvg::new(0);
        let mut t = 0;
        while t < 400 * MSEC {
            t += MSEC;
            a.update(t, 1024, 1, true, 1024);
        }
        assert!(a.util_avg >= 1000, "util_avg {}", a.util_avg);
        assert!(a.load_avg >= 1000, "load_avg {}", a.load_avg);
    }

    #[test]
    fn blocked_signal_halves_every_32_periods() {
        let mut a = SchedAvg::new(0);
        let mut t = 0;
        while t < 400 * MSEC {
            t += MSEC;
            a.update(t, 1024, 1, true, 1024);
        }
        let before = a.util_avg;
        // 32 periods of 1024 µs-units = 33.55 ms of sleep.
        a.update(t + 32 * 1024 * 1024, 0, 0, false, 1024);
        let ratio = a.util_avg as f64 / before as f64;
        assert!((0.45..0.55).contains(&ratio), "ratio {ratio}");
    }

    #[test]
    fn decay_load_matches_half_life() {
        // y^32 = 1/2; the kernel's table caps y^0 at 0xffffffff, hence the -1.
        assert!(((1 << 19) - 1..=1 << 19).contains(&decay_load(1 << 20, 32)));
        assert!(decay_load(1000, 0) >= 999);
    }
}
