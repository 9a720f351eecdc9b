//! Counter structures. Plain integers updated in place by the model.

use serde::{Deserialize, Serialize};

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
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WakeStats {
    /// try_to_wake_up() calls that woke a task.
    pub wakeups: u64,
    pub wakeups_sync: u64,
    /// Wakeups whose task changed CPU (WF_MIGRATED).
    pub wakeups_migrated: u64,
    /// Wakeups of tasks still on their runqueue (`ttwu_runnable`: no placement decision), e.g.
    /// tasks whose dequeue was delayed (DELAY_DEQUEUE).
    pub wakeups_queued: u64,
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
    /// Scans whose returned CPU another wakeup claimed before the scan reached it, and which
    /// went on past it (`Sim::sis_recheck`).
    pub sis_rescans: u64,
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
    /// SHARED_RUNQ: tasks popped from a shard, pulls completed, pops whose task had already
    /// run or moved; shard-lock acquisitions, contended ones and total wait, ns.
    pub shared_runq_pops: u64,
    pub shared_runq_pulls: u64,
    pub shared_runq_stale: u64,
    pub shard_lock_acquires: u64,
    pub shard_lock_contended: u64,
    pub shard_lock_wait: u64,
    /// Task-group load_avg line: updates, contended ones, total wait, ns.
    pub tg_updates: u64,
    pub tg_contended: u64,
    pub tg_wait: u64,
    /// Its reads (`update_cfs_group()`) that found the reader's copy stale, and their total
    /// wait, ns. Absent in files from before them: 0.
    #[serde(default)]
    pub tg_read_misses: u64,
    #[serde(default)]
    pub tg_read_wait: u64,
    /// Datagrams dropped at a full receive buffer (`UDP_MIB_RCVBUFERRORS`).
    pub dgram_drops: u64,
    /// Per-CPU user-space locks (schbench's `lock_this_cpu()`): acquisitions, those that had
    /// to spin first, user time spent spinning (ns), and acquisitions given back because the
    /// task had migrated since it sampled its CPU. Absent in files from before them: 0.
    #[serde(default)]
    pub cpu_lock_acquires: u64,
    #[serde(default)]
    pub cpu_lock_contended: u64,
    #[serde(default)]
    pub cpu_lock_spin: u64,
    #[serde(default)]
    pub cpu_lock_migrated: u64,
    /// Pipe and socket messages read; of them, read on another CPU than the one that wrote
    /// them, and read after they left the cache (`sock_msg_cold`).
    #[serde(default)]
    pub msgs_read: u64,
    #[serde(default)]
    pub msgs_cross_cpu: u64,
    #[serde(default)]
    pub msgs_cold: u64,
}

/// Newly-idle balancing at one domain level (summed over CPUs).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct NewidleStats {
    /// sched_balance_newidle() entered.
    pub entered: u64,
    /// Returned at the overload / avg_idle gate.
    pub gated: u64,
    /// Entered from the idle task after a kick that enqueued nothing (IPI-only wakeups).
    pub from_idle_no_task: u64,
    pub levels: Vec<NewidleLevel>,
}

impl IdleType {
    /// Array-index order (the v15 text order).
    pub const ALL: [IdleType; 3] = [IdleType::Idle, IdleType::Busy, IdleType::NewlyIdle];

    /// Kernel name of the idle type (`enum cpu_idle_type`).
    pub fn name(self) -> &'static str {
        match self {
            IdleType::Idle => "CPU_IDLE",
            IdleType::Busy => "CPU_NOT_IDLE",
            IdleType::NewlyIdle => "CPU_NEWLY_IDLE",
        }
    }

    /// Order of the three 8-counter groups in a `/proc/schedstat` domain line.
    ///
    /// `show_schedstat()` (kernel/sched/stats.c) prints `for (itype = 0; itype <
    /// CPU_MAX_IDLE_TYPES; itype++)`, so the order is the enum's:
    /// * v15: `CPU_IDLE = 0, CPU_NOT_IDLE, CPU_NEWLY_IDLE` → idle, busy, newly idle;
    /// * v16: Ingo Molnar's "sched/balancing: Change 'enum cpu_idle_type' to have more natural
    ///   definitions" (Mar 2024) made it `__CPU_NOT_IDLE = 0, CPU_IDLE, CPU_NEWLY_IDLE`, and
    ///   commit 11b0bfa5d463 ("sched/debug: Increase SCHEDSTAT_VERSION to 16", v6.10) bumped the
    ///   version → busy, idle, newly idle.
    ///
    /// Any version other than 15 gets the v16 order.
    pub fn schedstat_order(version: u32) -> [IdleType; 3] {
        if version == 15 {
            [IdleType::Idle, IdleType::Busy, IdleType::NewlyIdle]
        } else {
            [IdleType::Busy, IdleType::Idle, IdleType::NewlyIdle]
        }
    }
}

impl CpuSchedstat {
    /// Add `o`'s counters to `self` (machine totals, or summing repetitions).
    pub fn add(&mut self, o: &CpuSchedstat) {
        self.yld_count += o.yld_count;
        self.sched_count += o.sched_count;
        self.sched_goidle += o.sched_goidle;
        self.ttwu_count += o.ttwu_count;
        self.ttwu_local += o.ttwu_local;
        self.rq_cpu_time += o.rq_cpu_time;
        self.run_delay += o.run_delay;
        self.pcount += o.pcount;
    }
}

impl DomainSchedstat {
    /// Add `o`'s counters to `self`.
    pub fn add(&mut self, o: &DomainSchedstat) {
        for i in 0..3 {
            self.lb_count[i] += o.lb_count[i];
            self.lb_balanced[i] += o.lb_balanced[i];
            self.lb_failed[i] += o.lb_failed[i];
            self.lb_imbalance[i] += o.lb_imbalance[i];
            self.lb_gained[i] += o.lb_gained[i];
            self.lb_hot_gained[i] += o.lb_hot_gained[i];
            self.lb_nobusyq[i] += o.lb_nobusyq[i];
            self.lb_nobusyg[i] += o.lb_nobusyg[i];
        }
        self.alb_count += o.alb_count;
        self.alb_failed += o.alb_failed;
        self.alb_pushed += o.alb_pushed;
        self.sbe_count += o.sbe_count;
        self.sbe_balanced += o.sbe_balanced;
        self.sbe_pushed += o.sbe_pushed;
        self.sbf_count += o.sbf_count;
        self.sbf_balanced += o.sbf_balanced;
        self.sbf_pushed += o.sbf_pushed;
        self.ttwu_wake_remote += o.ttwu_wake_remote;
        self.ttwu_move_affine += o.ttwu_move_affine;
        self.ttwu_move_balance += o.ttwu_move_balance;
    }

    /// The 8 load-balance counters of one idle type, in `show_schedstat()` order: lb_count
    /// lb_balanced lb_failed lb_imbalance lb_gained lb_hot_gained lb_nobusyq lb_nobusyg.
    pub fn lb_fields(&self, t: IdleType) -> [u64; 8] {
        let i = t as usize;
        [
            self.lb_count[i],
            self.lb_balanced[i],
            self.lb_failed[i],
            self.lb_imbalance[i],
            self.lb_gained[i],
            self.lb_hot_gained[i],
            self.lb_nobusyq[i],
            self.lb_nobusyg[i],
        ]
    }

    /// The 12 trailing counters in `show_schedstat()` order: alb_count alb_failed alb_pushed
    /// sbe_count sbe_balanced sbe_pushed sbf_count sbf_balanced sbf_pushed ttwu_wake_remote
    /// ttwu_move_affine ttwu_move_balance.
    pub fn tail_fields(&self) -> [u64; 12] {
        [
            self.alb_count,
            self.alb_failed,
            self.alb_pushed,
            self.sbe_count,
            self.sbe_balanced,
            self.sbe_pushed,
            self.sbf_count,
            self.sbf_balanced,
            self.sbf_pushed,
            self.ttwu_wake_remote,
            self.ttwu_move_affine,
            self.ttwu_move_balance,
        ]
    }

    /// `load_balance()` calls over all idle types.
    pub fn lb_count_total(&self) -> u64 {
        self.lb_count.iter().sum()
    }
}

impl WakeStats {
    /// Add `o`'s counters to `self`.
    pub fn add(&mut self, o: &WakeStats) {
        macro_rules! sum {
            ($($f:ident),* $(,)?) => { $( self.$f += o.$f; )* };
        }
        sum!(
            wakeups,
            wakeups_sync,
            wakeups_migrated,
            wakeups_queued,
            ipis_sent,
            ipis_call_function,
            ipis_resched,
            poll_wakes,
            wakelist_queued,
            wakelist_batched,
            direct_enqueue,
            remote_enqueue,
            sis_scans,
            sis_probes,
            sis_found,
            sis_rescans,
            affine_attempts,
            affine_moves,
            wake_wide,
            wakeup_preemptions,
            migrations_wakeup,
            migrations_balance,
            cost_select,
            cost_scan,
            cost_remote_lock,
            cost_ipi_send,
            cost_idle_exit,
            cost_newidle,
            cost_migration,
            rq_lock_acquires,
            rq_lock_contended,
            rq_lock_spin,
            irq_deferred,
            irq_defer_time,
            shared_runq_pops,
            shared_runq_pulls,
            shared_runq_stale,
            shard_lock_acquires,
            shard_lock_contended,
            shard_lock_wait,
            tg_updates,
            tg_contended,
            tg_wait,
            tg_read_misses,
            tg_read_wait,
            dgram_drops,
        );
        for (a, b) in self.sis_outcome.iter_mut().zip(o.sis_outcome) {
            *a += b;
        }
        for (a, b) in self.migrations_by_dist.iter_mut().zip(o.migrations_by_dist) {
            *a += b;
        }
    }
}

impl NewidleStats {
    /// Add `o`'s counters to `self`; levels are matched by name (new names are appended).
    pub fn add(&mut self, o: &NewidleStats) {
        self.entered += o.entered;
        self.gated += o.gated;
        self.from_idle_no_task += o.from_idle_no_task;
        for l in &o.levels {
            match self.levels.iter_mut().find(|m| m.name == l.name) {
                Some(m) => {
                    m.calls += l.calls;
                    m.cost += l.cost;
                    m.pulled += l.pulled;
                }
                None => self.levels.push(l.clone()),
            }
        }
    }
}

/// One interval the work-conservation checker flagged: `idle_cpu` sat idle for `dur_ns` from
/// `start_ns` while `waiting_cpu`, in one of its sched domains, had a runnable task waiting.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WastedInterval {
    pub start_ns: u64,
    pub dur_ns: u64,
    pub idle_cpu: u32,
    /// A CPU with a waiting task when the interval ended (the one nearest `idle_cpu`).
    pub waiting_cpu: u32,
    /// The lowest domain level of `idle_cpu` whose span holds `waiting_cpu` (`SMT`, `MC`, ...).
    pub level: String,
}

/// The work-conservation checker (Lozi et al., "The Linux Scheduler: a Decade of Wasted
/// Cores", EuroSys 2016): idle CPUs while a CPU of their domains had a task waiting, for longer
/// than `threshold_ns`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WastedStats {
    pub threshold_ns: u64,
    /// Intervals longer than the threshold.
    pub intervals: u64,
    /// Their total length: idle CPU time while work waited, ns.
    pub wasted_ns: u64,
    /// The longest intervals, longest first (at most [`WastedStats::WORST`]).
    pub worst: Vec<WastedInterval>,
}

impl WastedStats {
    /// How many of the longest intervals are kept.
    pub const WORST: usize = 5;

    /// Counts an interval longer than the threshold and keeps it if it is among the longest.
    pub fn record(&mut self, iv: WastedInterval) {
        self.intervals += 1;
        self.wasted_ns += iv.dur_ns;
        if self.worst.len() < Self::WORST || iv.dur_ns > self.worst.last().map_or(0, |w| w.dur_ns) {
            let at = self.worst.iter().position(|w| w.dur_ns < iv.dur_ns).unwrap_or(self.worst.len());
            self.worst.insert(at, iv);
            self.worst.truncate(Self::WORST);
        }
    }
}

/// The background activity that ran beside the workload (`--noise`): which profile, and what
/// its tasks and interrupt sources took.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NoiseStats {
    /// Profile name (`none`, `server`, or the file's `name`).
    pub profile: String,
    /// The CPU the benchmark was launched from (drawn from the seed when a profile runs).
    pub launch_cpu: u32,
    /// Background tasks and interrupt sources.
    pub tasks: u64,
    pub irq_sources: u64,
    /// Wakeups of the background tasks and their CPU time, ns.
    pub task_wakeups: u64,
    pub task_runtime_ns: u64,
    /// Interrupts delivered and their handler time, ns.
    pub irqs: u64,
    pub irq_time_ns: u64,
}
