//! # wakesim-trace: the schedule of a run, as events and as a Perfetto-readable file
//!
//! The model records a [`Trace`] when asked to (`wakesim_model::run_with_trace`): a time-ordered
//! list of [`TraceEvent`]s — context switches, wakeups and how they were delivered, IPIs sent and
//! received, polling wakes, idle-state entry and exit, newidle and periodic balancing, NOHZ
//! idle-balance kicks, migrations — plus the names needed to show them. This crate only holds
//! that data and turns it into a file; it knows nothing of how the events were produced.
//!
//! [`Trace::write_chrome_json`] writes the Chrome JSON trace-event format, which both the
//! Perfetto UI (<https://ui.perfetto.dev>) and `chrome://tracing` open; see [`chrome`] for the
//! exact shape.

pub mod chrome;

use wakesim_engine::Time;

/// How a wakeup put its wakee on a runqueue (`try_to_wake_up()`'s three ends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeHow {
    /// Queued on the target CPU's wakelist (`ttwu_queue_wakelist()`); the target enqueues it.
    Wakelist,
    /// The waker locked the target's runqueue and enqueued it there (`ttwu_do_activate()`).
    RemoteEnqueue,
    /// The waker enqueued it on its own runqueue.
    Local,
    /// The wakee had not finished blocking and was still queued (`ttwu_runnable()`).
    Runnable,
}

impl WakeHow {
    pub fn name(self) -> &'static str {
        match self {
            WakeHow::Wakelist => "wakelist",
            WakeHow::RemoteEnqueue => "remote enqueue",
            WakeHow::Local => "local",
            WakeHow::Runnable => "runnable",
        }
    }

    /// The name of the wakeup arrow in a trace viewer.
    pub fn flow_name(self) -> &'static str {
        match self {
            WakeHow::Wakelist => "wakeup (wakelist)",
            WakeHow::RemoteEnqueue => "wakeup (remote enqueue)",
            WakeHow::Local => "wakeup (local)",
            WakeHow::Runnable => "wakeup (runnable)",
        }
    }
}

/// The two IPIs of the wakeup path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpiKind {
    /// `send_call_function_single_ipi()`: flush the call-single queue (wakelist, function calls).
    CallFunction,
    /// `smp_send_reschedule()`: set NEED_RESCHED on a non-polling CPU.
    Reschedule,
}

impl IpiKind {
    pub fn name(self) -> &'static str {
        match self {
            IpiKind::CallFunction => "call-function",
            IpiKind::Reschedule => "reschedule",
        }
    }
}

/// How a periodic or NOHZ balance pass (`sched_balance_rq()`) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbResult {
    /// `should_we_balance()`: another CPU of the local group balances it (out_balanced).
    NotThisCpu,
    /// No imbalance, or no busiest queue (out_balanced).
    Balanced,
    /// Nothing on the busiest CPU may run on the destination (out_all_pinned).
    AllPinned,
    /// A task was detached from the busiest CPU and attached here.
    Moved,
    /// Unbalanced, but nothing could be detached (the busiest runs its only task, or its queued
    /// ones are cache-hot).
    Failed,
    /// Failed, and the busiest CPU's stopper was kicked to push its running task
    /// (`need_active_balance()`).
    ActiveKick,
}

impl LbResult {
    pub fn name(self) -> &'static str {
        match self {
            LbResult::NotThisCpu => "not this CPU",
            LbResult::Balanced => "balanced",
            LbResult::AllPinned => "all pinned",
            LbResult::Moved => "moved",
            LbResult::Failed => "failed",
            LbResult::ActiveKick => "active balance",
        }
    }
}

/// "Not in an idle state" in [`TraceEvent::Running`].
pub const NO_IDLE_STATE: u8 = u8::MAX;

/// One thing that happened on the simulated machine. Task ids index [`Trace::task_names`];
/// CPUs are logical CPU numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// `cpu` finished switching from `prev` to `next` (`finish_task_switch()`).
    Switch { cpu: u32, prev: u32, next: u32 },
    /// What `cpu` runs when the trace window opens (so the first slice has a start).
    Running { cpu: u32, task: u32, idle_state: u8 },
    /// `waker`, running on `cpu`, made `wakee` runnable on `target`.
    Wakeup { cpu: u32, waker: u32, wakee: u32, target: u32, how: WakeHow },
    /// `cpu` sent an IPI to `to`.
    IpiSend { cpu: u32, to: u32, kind: IpiKind },
    /// An IPI arrived at `cpu` (it is handled when interrupts are next enabled).
    IpiRecv { cpu: u32, kind: IpiKind },
    /// `cpu` woke the polling idle CPU `to` by writing its thread flags (no IPI).
    PollWake { cpu: u32, to: u32 },
    /// `cpu` entered idle state `state` (an index into [`Trace::idle_states`]).
    IdleEnter { cpu: u32, state: u8 },
    /// `cpu` left its idle state (the exit latency follows).
    IdleExit { cpu: u32 },
    /// `cpu` started newly-idle balancing (`sched_balance_newidle()`).
    NewidleStart { cpu: u32 },
    /// `cpu` finished newly-idle balancing; `pulled`: it found a task to run.
    NewidleEnd { cpu: u32, pulled: bool },
    /// `cpu` started a periodic balance pass (`sched_balance_rq()`, not newidle) for `dst`'s
    /// domain of level `level` (an index into [`Trace::level_names`]): `dst` is `cpu` itself,
    /// or for a NOHZ idle balance an idle CPU the kicked CPU balances for. `idle`: CPU_IDLE
    /// (else CPU_NOT_IDLE).
    BalanceStart { cpu: u32, dst: u32, level: u8, idle: bool },
    /// `cpu`'s balance pass ended; `src`: the busiest CPU it found (`u32::MAX`: none).
    BalanceEnd { cpu: u32, result: LbResult, src: u32 },
    /// `cpu`'s tick kicked the idle CPU `to` to balance for all NOHZ-idle CPUs (`kick_ilb()`).
    IlbKick { cpu: u32, to: u32 },
    /// The kicked `cpu` did not balance (`nohz_csd_func()` found it busy, or NEED_RESCHED set).
    IlbSkipped { cpu: u32 },
    /// `task` moved from `from` to `to` (`set_task_cpu()`), by a wakeup or a balancer.
    Migrate { task: u32, from: u32, to: u32 },
    /// The work-conservation checker closed an interval ending now: `cpu` sat idle since
    /// `start` while `waiting_cpu`, in its domain of level `level` (an index into
    /// [`Trace::level_names`]), had a task waiting, for longer than the threshold.
    Wasted { cpu: u32, waiting_cpu: u32, start: Time, level: u8 },
}

/// An event and its simulated time (ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamped {
    pub t: Time,
    pub ev: TraceEvent,
}

/// The recorded schedule of one run.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub nr_cpus: u32,
    /// Name of each task id. Ids below `nr_cpus` are the per-CPU idle tasks (`swapper/N`).
    pub task_names: Vec<String>,
    /// Names of the machine's idle states (`POLL`, `C1`, …), indexed by [`TraceEvent::IdleEnter`].
    pub idle_states: Vec<String>,
    /// Names of the sched-domain levels (`SMT`, `MC`, …), indexed by [`TraceEvent::Wasted`] and
    /// [`TraceEvent::BalanceStart`].
    pub level_names: Vec<String>,
    /// Events in time order.
    pub events: Vec<Stamped>,
    /// The recorded interval: events lie in `start..=end`.
    pub start: Time,
    pub end: Time,
    /// Recording stopped early because the event limit was reached; `end` is then the time of
    /// the last recorded event.
    pub truncated: bool,
}

impl Trace {
    /// Whether task id `t` is a CPU's idle task.
    pub fn is_idle_task(&self, t: u32) -> bool {
        t < self.nr_cpus
    }
}
