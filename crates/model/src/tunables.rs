//! Scheduler tunables and fixed kernel constants (kernel/sched/fair.c, sched.h, topology.c).

use wakesim_engine::{Time, MSEC, USEC};

#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Tunables {
    /// CONFIG_HZ. 1000 as on RHEL/Fedora and Ubuntu ≥ 24.10 server kernels.
    pub hz: u64,
    /// `sysctl_sched_base_slice`: 0.75 ms × (1 + ilog2(min(ncpus, 8))) (fair.c, v6.6–v6.14).
    pub base_slice: Time,
    /// `sysctl_sched_migration_cost` = 500 µs (fair.c).
    pub migration_cost: Time,
    /// `sysctl_sched_nr_migrate` = 32 (SCHED_NR_MIGRATE_BREAK, sched.h).
    pub nr_migrate: u32,
    /// CFS (≤ v6.5) `sysctl_sched_latency` = 6 ms × factor.
    pub cfs_latency: Time,
    /// CFS `sysctl_sched_min_granularity` = 0.75 ms × factor.
    pub cfs_min_gran: Time,
    /// CFS `sysctl_sched_wakeup_granularity` = 1 ms × factor.
    pub cfs_wakeup_gran: Time,
    /// Where in the tick period the run starts: every CPU's tick fires on one jiffy grid
    /// (`tick_setup_sched_timer()` without `skew_tick`), but a benchmark starts at an arbitrary
    /// point of it. The run's seed picks the phase ([`Tunables::phase_for_seed`]); it is the
    /// model's source of run-to-run variation for workloads that draw no random numbers.
    pub tick_offset: Time,
}

impl Tunables {
    /// Defaults for a machine of `ncpus` CPUs (`get_update_sysctl_factor()`, SCHED_TUNABLESCALING_LOG).
    pub fn for_cpus(ncpus: usize) -> Self {
        let factor = 1 + (ncpus.clamp(1, 8) as u64).ilog2() as u64;
        Tunables {
            hz: 1000,
            base_slice: 750 * USEC * factor,
            migration_cost: 500 * USEC,
            nr_migrate: 32,
            cfs_latency: 6 * MSEC * factor,
            cfs_min_gran: 750 * USEC * factor,
            cfs_wakeup_gran: 1000 * USEC * factor,
            tick_offset: 0,
        }
    }

    /// The tick phase of run `seed`: seed 1 starts on a tick boundary, later seeds step through
    /// the period by the golden ratio (a low-discrepancy sequence: a few seeds cover it evenly).
    pub fn phase_for_seed(&self, seed: u64) -> Time {
        const GOLDEN: f64 = 0.618_033_988_749_894_9;
        let frac = ((seed.saturating_sub(1)) as f64 * GOLDEN).fract();
        (frac * self.tick_nsec() as f64) as Time
    }

    pub fn tick_nsec(&self) -> Time {
        1_000_000_000 / self.hz
    }

    /// Converts milliseconds to jiffies (msecs_to_jiffies, rounding up).
    pub fn ms_to_jiffies(&self, ms: u64) -> u64 {
        (ms * self.hz).div_ceil(1000)
    }

    pub fn jiffies(&self, now: Time) -> u64 {
        (now + self.tick_offset) / self.tick_nsec()
    }

    /// The first tick of the jiffy grid after `now`.
    pub fn next_tick(&self, now: Time) -> Time {
        (self.jiffies(now) + 1) * self.tick_nsec() - self.tick_offset
    }
}

/// `sched_prio_to_weight[]` (kernel/sched/core.c): nice -20..19.
pub const PRIO_TO_WEIGHT: [u32; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121,
    2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23,
    18, 15,
];

pub fn nice_to_weight(nice: i32) -> u32 {
    PRIO_TO_WEIGHT[(nice.clamp(-20, 19) + 20) as usize]
}

/// NICE_0_LOAD after scale_load_down.
pub const NICE_0_LOAD: u64 = 1024;
/// SCHED_CAPACITY_SCALE.
pub const CAPACITY: u64 = 1024;
