//! Counter structures. Plain integers updated in place by the model.

use serde::Serialize;

/// `cpu_idle_type` index used for per-domain load-balance counters.
/// Order of the schedstat v15 text: IDLE, NOT_IDLE (busy), NEWLY_IDLE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum IdleType {
    Idle = 0,
    Busy = 1,
    NewlyIdle = 2,
}

/// Per-CPU line of /proc/schedstat (`cpu<N> yld_count 0 sched_count sched_goidle ttwu_count
/// ttwu_local rq_cpu_time run_delay pcount`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct CpuSchedstat {
    pub yld_count: u64,
    pub sched_count: u64,
    pub sched_goidle: u64,
    /// Wakeups issued by this CPU.
    pub ttwu_count: u64,
    /// Wakeups issued by this CPU to itself.
    pub ttwu_local: u64,
    /// Sum of task run time on this CPU, ns.
    pub rq_cpu_time: u64,
    /// Sum of time tasks spent runnable but waiting on this CPU's runqueue, ns.
    pub run_delay: u64,
    /// Number of timeslices run on this CPU.
    pub pcount: u64,
}

/// Per-domain line of /proc/schedstat. Arrays are indexed by [`IdleType`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct DomainSchedstat {
    pub lb_count: [u64; 3],
    pub lb_balanced: [u64; 3],
    pub lb_failed: [u64; 3],
    pub lb_imbalance: [u64; 3],
    pub lb_gained: [u64; 3],
    pub lb_hot_gained: [u64; 3],
    pub lb_nobusyq: [u64; 3],
    pub lb_nobusyg: [u64; 3],
    pub alb_count: u64,
    pub alb_failed: u64,
    pub alb_pushed: u64,
    pub sbe_count: u64,
    pub sbe_balanced: u64,
    pub sbe_pushed: u64,
    pub sbf_count: u64,
    pub sbf_balanced: u64,
    pub sbf_pushed: u64,
    pub ttwu_wake_remote: u64,
    pub ttwu_move_affine: u64,
    pub ttwu_move_balance: u64,
}

/// Where `select_idle_sibling()` found its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SisOutcome {
    Target = 0,
    Prev = 1,
    KthreadStack = 2,
    Recent = 3,
    SmtSibling = 4,
    IdleCore = 5,
    IdleCpu = 6,
    Fallback = 7,
}

impl SisOutcome {
    pub const ALL: [SisOutcome; 8] = [
        SisOutcome::Target,
        SisOutcome::Prev,
        SisOutcome::KthreadStack,
        SisOutcome::Recent,
        SisOutcome::SmtSibling,
        SisOutcome::IdleCore,
        SisOutcome::IdleCpu,
        SisOutcome::Fallback,
    ];
    pub fn name(self) -> &'static str {
        match self {
            SisOutcome::Target => "target",
            SisOutcome::Prev => "prev",
            SisOutcome::KthreadStack => "kthread_stack",
            SisOutcome::Recent => "recent",
            SisOutcome::SmtSibling => "smt_sibling",
            SisOutcome::IdleCore => "idle_core",
            SisOutcome::IdleCpu => "idle_cpu",
            SisOutcome::Fallback => "none_found",
        }
    }
}

/// Wakeup-path counters beyond schedstat (machine totals).
#[derive(Clone, Debug, Default, Serialize)]
pub struct WakeStats {
    /// try_to_wake_up() calls that woke a task.
    pub wakeups: u64,
    pub wakeups_sync: u64,
    /// Wakeups whose task changed CPU (WF_MIGRATED).
    pub wakeups_migrated: u64,
    /// Real IPIs sent (call-function and reschedule).
    pub ipis_sent: u64,
    pub ipis_call_function: u64,
    pub ipis_resched: u64,
    /// Wakes of polling idle CPUs by a flag write (sched_wake_idle_without_ipi).
    pub poll_wakes: u64,
    /// Tasks queued on a remote wakelist (ttwu_queue_wakelist).
    pub wakelist_queued: u64,
    /// Wakelist queueings that found the list non-empty (no new IPI needed).
    pub wakelist_batched: u64,
    /// Direct enqueues by the waker under the target rq lock.
    pub direct_enqueue: u64,
    /// Direct enqueues onto a remote runqueue (remote rq lock taken by the waker).
    pub remote_enqueue: u64,
    /// select_idle_cpu() invocations / CPUs probed / idle CPU found.
    pub sis_scans: u64,
    pub sis_probes: u64,
    pub sis_found: u64,
    /// Outcome of select_idle_sibling(), indexed by [`SisOutcome`].
    pub sis_outcome: [u64; 8],
    /// wake_affine() attempts and affine results (target = waker CPU).
    pub affine_attempts: u64,
    pub affine_moves: u64,
    /// wake_wide() said "spread".
    pub wake_wide: u64,
    /// Wakeup preemptions (resched of the target's current task by a wakee).
    pub wakeup_preemptions: u64,
    /// Task migrations by cause.
    pub migrations_wakeup: u64,
    pub migrations_balance: u64,
    /// Migrations by distance class (index = Dist::index()).
    pub migrations_by_dist: [u64; 6],
    /// Time waker CPUs spent in the wakeup path, split by phase, ns.
    pub cost_select: u64,
    pub cost_scan: u64,
    pub cost_remote_lock: u64,
    pub cost_ipi_send: u64,
    /// Time target CPUs spent exiting idle states, ns.
    pub cost_idle_exit: u64,
    /// Time spent in newidle balance, ns.
    pub cost_newidle: u64,
    /// Extra user time charged for cold caches after migration, ns.
    pub cost_migration: u64,
    /// rq lock acquisitions / contended acquisitions / total spin time, ns.
    pub rq_lock_acquires: u64,
    pub rq_lock_contended: u64,
    pub rq_lock_spin: u64,
    /// Interrupt handling deferred because interrupts were disabled, and total deferral, ns.
    pub irq_deferred: u64,
    pub irq_defer_time: u64,
}

/// Newly-idle balancing at one domain level (summed over CPUs).
#[derive(Clone, Debug, Default, Serialize)]
pub struct NewidleLevel {
    pub name: String,
    /// Times sched_balance_newidle() reached this level and balanced it.
    pub calls: u64,
    /// Wall time those passes took, ns (what feeds max_newidle_lb_cost).
    pub cost: u64,
    /// Passes that pulled a task.
    pub pulled: u64,
}

/// Newidle entry points (summed over CPUs).
#[derive(Clone, Debug, Default, Serialize)]
pub struct NewidleStats {
    /// sched_balance_newidle() entered.
    pub entered: u64,
    /// Returned at the overload / avg_idle gate.
    pub gated: u64,
    /// Entered from the idle task after a kick that enqueued nothing (IPI-only wakeups).
    pub from_idle_no_task: u64,
    pub levels: Vec<NewidleLevel>,
}
