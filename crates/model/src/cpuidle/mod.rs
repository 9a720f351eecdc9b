//! cpuidle governors (`drivers/cpuidle/governors/`): which idle state a CPU enters and whether
//! it stops its tick. One module per governor, named after its file: [`menu`], [`teo`],
//! [`haltpoll`], and the model's first predictor [`ewma`] kept as a labelled option.
//!
//! A governor is per-CPU data with two steps, as the kernel's `struct cpuidle_governor` has:
//! `select` (`cpuidle_select()`: given the driver's states and what the tick code reports, the
//! state to enter and whether to stop the tick) and `reflect` (`cpuidle_reflect()` plus the
//! update the governor runs with it: what the stay that ended teaches). Neither sees the
//! simulator: `idle.rs` gathers the inputs (`tick_nohz_get_sleep_length()`, the tick's state)
//! and applies the outputs (the tick decision, the POLL state's time limit), so each rule is
//! testable on its own (`crates/model/tests/model/cpuidle.rs`).
//!
//! The idle states are the cost profile's ([`IdleState`]); state 0 is the POLL state
//! (`CPUIDLE_FLAG_POLLING`, `poll_idle()`) when it has no exit latency and deeper states follow
//! ([`poll_state`], as `CostProfile::has_poll_loop()`). A profile's `polling` flag is something
//! else: TIF_POLLING_NRFLAG, which x86 MWAIT states keep set too.

pub mod ewma;
pub mod haltpoll;
pub mod menu;
pub mod teo;

pub use wakesim_machine::GovernorKind;

use wakesim_costs::IdleState;
use wakesim_engine::Time;

/// `CPUIDLE_STATE_MAX` (include/linux/cpuidle.h, 10): the most states a driver has (cost
/// profiles are checked against it).
pub use wakesim_costs::CPUIDLE_STATE_MAX;

/// `KTIME_MAX`: "no timer" in the governors' arithmetic.
pub const KTIME_MAX: Time = i64::MAX as Time;

/// `RESIDENCY_THRESHOLD_NS` (drivers/cpuidle/governors/gov.h, 15 µs): below it the governors
/// do not look up the next timer event.
pub const RESIDENCY_THRESHOLD_NS: Time = 15_000;

/// `cpuidle_governor_latency_req()` without a PM QoS request: `PM_QOS_RESUME_LATENCY_NO_CONSTRAINT`
/// (S32_MAX µs), in ns.
pub const LATENCY_REQ_NONE: Time = i32::MAX as Time * 1_000;

/// The driver's state `i` is the POLL state (`CPUIDLE_FLAG_POLLING`): state 0, no exit latency,
/// deeper states after it.
pub fn poll_state(states: &[IdleState], i: usize) -> bool {
    i == 0 && states.len() > 1 && states[0].exit_latency == 0
}

/// What `cpuidle_select()` is given.
#[derive(Clone, Copy, Debug)]
pub struct SelectInput<'a> {
    /// The driver's states, shallowest first.
    pub states: &'a [IdleState],
    /// `tick_nohz_get_sleep_length()`: time till the closest timer event, the tick not counted
    /// (it would be stopped) — unless the tick cannot be stopped, then as `delta_tick`.
    pub sleep_length: Time,
    /// Its `*delta_next`: time till the CPU's next clock event, the tick included while it runs.
    pub delta_tick: Time,
    /// `tick_nohz_tick_stopped()`: the tick was stopped on an earlier pass of this idle period.
    pub tick_stopped: bool,
    /// `cpuidle_governor_latency_req()`, ns ([`LATENCY_REQ_NONE`] without a PM QoS request).
    pub latency_req: Time,
    /// `TICK_NSEC`.
    pub tick_nsec: Time,
    /// `local_clock()` at selection (teo measures the time span to the reflect).
    pub now: Time,
}

/// What `cpuidle_select()` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The state to enter.
    pub state: usize,
    /// `*stop_tick`: false keeps the tick running through this idle pass.
    pub stop_tick: bool,
}

/// What the governor learns when a stay ends (`cpuidle_reflect()` and the update it triggers).
#[derive(Clone, Copy, Debug)]
pub struct Wakeup {
    /// The state that was entered.
    pub state: usize,
    /// `dev->last_residency_ns`: from entering the state until the CPU ran again (the exit
    /// latency included).
    pub residency: Time,
    /// `tick_nohz_idle_got_tick()`: the tick's interrupt ran during the stay.
    pub tick: bool,
    /// `dev->poll_time_limit`: the POLL state ran out of time (`poll_idle()`).
    pub poll_time_limit: bool,
    /// `local_clock()` at the reflect.
    pub now: Time,
    /// `TICK_NSEC`.
    pub tick_nsec: Time,
}

/// One CPU's governor and its data (`struct menu_device`, `struct teo_cpu`, haltpoll's fields
/// of `struct cpuidle_device`).
#[derive(Clone, Debug)]
pub enum Governor {
    Menu(menu::Menu),
    Teo(teo::Teo),
    Haltpoll(haltpoll::Haltpoll),
    Ewma(ewma::Ewma),
}

impl Governor {
    /// The governor's data as its `enable` callback leaves it.
    pub fn new(kind: GovernorKind) -> Governor {
        match kind {
            GovernorKind::Menu => Governor::Menu(menu::Menu::new()),
            GovernorKind::Teo => Governor::Teo(teo::Teo::new()),
            GovernorKind::Haltpoll => Governor::Haltpoll(haltpoll::Haltpoll::new()),
            GovernorKind::Ewma => Governor::Ewma(ewma::Ewma::default()),
        }
    }

    pub fn kind(&self) -> GovernorKind {
        match self {
            Governor::Menu(_) => GovernorKind::Menu,
            Governor::Teo(_) => GovernorKind::Teo,
            Governor::Haltpoll(_) => GovernorKind::Haltpoll,
            Governor::Ewma(_) => GovernorKind::Ewma,
        }
    }

    /// `cpuidle_select()`.
    pub fn select(&mut self, inp: &SelectInput) -> Selection {
        match self {
            Governor::Menu(g) => g.select(inp),
            Governor::Teo(g) => g.select(inp),
            Governor::Haltpoll(g) => g.select(inp),
            Governor::Ewma(g) => Selection { state: g.select(inp.states, 0), stop_tick: true },
        }
    }

    /// `cpuidle_reflect()` and the governor's update from it.
    pub fn reflect(&mut self, states: &[IdleState], w: &Wakeup) {
        match self {
            Governor::Menu(g) => g.reflect(states, w),
            Governor::Teo(g) => g.reflect(states, w),
            Governor::Haltpoll(g) => g.reflect(w),
            // The EWMA learns at the wakeup itself, from the loop's entry (`idle.rs`).
            Governor::Ewma(_) => {}
        }
    }

    /// The POLL state's time limit this governor sets (`dev->poll_limit_ns`, which
    /// `cpuidle_poll_time()` returns when non-zero): haltpoll's adaptive window. `None`: the
    /// driver's default (`CostProfile::poll_limit`).
    pub fn poll_limit(&self) -> Option<Time> {
        match self {
            Governor::Haltpoll(g) if g.poll_limit_ns > 0 => Some(g.poll_limit_ns),
            _ => None,
        }
    }
}

/// `struct cpuidle_state_usage` (`/sys/devices/system/cpu/cpuN/cpuidle/stateK/`): entries, time,
/// and the misses `cpuidle_enter_state()` counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateUsage {
    /// `usage`: stays (entries that reached the state).
    pub usage: u64,
    /// `time`: their residency, ns.
    pub time: Time,
    /// `above`: stays shorter than the state's target residency while a shallower state was
    /// available (the state was too deep).
    pub above: u64,
    /// `below`: stays long enough, after the exit latency, for the next deeper state (too
    /// shallow).
    pub below: u64,
}

/// One CPU's idle-state accounting: per state, and the governor's tick decisions.
#[derive(Clone, Debug, Default)]
pub struct IdleCounters {
    pub states: [StateUsage; CPUIDLE_STATE_MAX],
    /// Stays entered on the governor's choice, and those during which the tick kept running.
    pub selects: u64,
    pub tick_kept: u64,
}

impl IdleCounters {
    /// A stay of `diff` ns in state `k` ended (`cpuidle_enter_state()`'s accounting).
    pub fn record(&mut self, states: &[IdleState], k: usize, diff: Time) {
        let u = &mut self.states[k];
        u.usage += 1;
        u.time += diff;
        if diff < states[k].target_residency {
            if k > 0 {
                u.above += 1;
            }
        } else if let Some(deeper) = states.get(k + 1) {
            if diff.saturating_sub(states[k].exit_latency) >= deeper.target_residency {
                u.below += 1;
            }
        }
    }
}
