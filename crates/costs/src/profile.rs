//! The cost profile structure. Units: nanoseconds unless the name says otherwise.

use serde::{Deserialize, Serialize};
use wakesim_machine::Dist;

/// A cost that depends on the distance between two CPUs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineCosts {
    pub local: u64,
    pub smt: u64,
    pub cluster: u64,
    pub llc: u64,
    pub cross_llc: u64,
    pub cross_node: u64,
}

impl LineCosts {
    #[inline]
    pub fn get(&self, d: Dist) -> u64 {
        match d {
            Dist::Local => self.local,
            Dist::Smt => self.smt,
            Dist::Cluster => self.cluster,
            Dist::Llc => self.llc,
            Dist::CrossLlc => self.cross_llc,
            Dist::CrossNode => self.cross_node,
        }
    }
}

/// One cpuidle state (`drivers/idle/intel_idle.c` / ACPI _CST tables).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdleState {
    pub name: String,
    /// Exit latency, ns.
    pub exit_latency: u64,
    /// Target residency, ns: the governor picks the deepest state whose residency fits the
    /// predicted idle length.
    pub target_residency: u64,
    /// Whether a CPU in this state is woken by a store to its thread flags (TIF_POLLING_NRFLAG set:
    /// the POLL state and, on x86, MWAIT states), so wakers need no IPI.
    pub polling: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostProfile {
    pub name: String,
    /// Cache-line transfer (read of a line owned elsewhere / RFO), by distance.
    pub line: LineCosts,
    /// IPI: sender's cost (ICR write + CSD queueing).
    pub ipi_send: u64,
    /// IPI: delivery latency from send to the target's interrupt entry, by distance.
    pub ipi_delivery: LineCosts,
    /// Interrupt entry + exit on the receiving CPU (handler body charged separately).
    pub irq_entry_exit: u64,
    /// Idle states, shallowest first. State 0 is normally POLL.
    pub idle_states: Vec<IdleState>,
    /// How long the POLL state spins before the governor re-selects a deeper state.
    pub poll_limit: u64,
    /// `__schedule()` + context switch (same mm); charged on the switching CPU.
    pub context_switch: u64,
    /// Extra for switching to a different mm (CR3/TLB).
    pub context_switch_mm: u64,
    /// Syscall entry + exit.
    pub syscall: u64,
    /// Copy cost per byte for pipe/socket data, in picoseconds per byte.
    pub copy_ps_per_byte: u64,
    /// Uncontended rq lock acquire + release on a line already owned locally.
    pub rq_lock: u64,
    /// `enqueue_task_fair()` incl. PELT update for one level, under the rq lock.
    pub enqueue: u64,
    /// `dequeue_task_fair()`.
    pub dequeue: u64,
    /// `wakeup_preempt()` check.
    pub wakeup_preempt: u64,
    /// `pick_next_task_fair()` without balancing.
    pub pick: u64,
    /// `try_to_wake_up()` fixed part (pi_lock, state checks, ttwu_stat).
    pub ttwu_base: u64,
    /// `select_task_rq_fair()` fixed part (record_wakee, wake_affine arithmetic).
    pub select_base: u64,
    /// `select_idle_cpu()` per probed CPU, on top of the line transfer of the probed rq.
    pub sis_probe: u64,
    /// llist_add onto a remote call_single_queue + ttwu_pending write (waker side).
    pub wakelist_queue: u64,
    /// `sched_ttwu_pending()` / CSD flush fixed part on the target.
    pub csd_flush: u64,
    /// `update_sd_lb_stats()` per CPU in the span (reads that CPU's rq line).
    pub lb_stats_per_cpu: u64,
    /// Fixed part of one `load_balance()` pass.
    pub lb_base: u64,
    /// detach + attach of one task (excl. locks).
    pub migrate_task: u64,
    /// `update_blocked_averages()` per leaf cfs_rq.
    pub update_blocked: u64,
    /// Tick handler (`sched_tick` → `task_tick_fair`).
    pub tick: u64,
    /// `tg->load_avg` atomic update when the line is held elsewhere (plus the line transfer).
    pub tg_load_update: u64,
    /// Cold-cache penalty after a migration, as extra user time on the next run, by distance moved.
    pub migration_penalty: LineCosts,
    /// Throughput of a core with two busy SMT siblings relative to one busy thread (e.g. 1.15).
    pub smt_throughput: f64,
}

impl CostProfile {
    /// Time to copy `bytes` bytes.
    #[inline]
    pub fn copy(&self, bytes: u64) -> u64 {
        bytes * self.copy_ps_per_byte / 1000
    }
}
