//! The simulated kernel state: tasks, per-CPU runqueues and executors, domains, LLC-shared data.
//! Arenas indexed by small integers; no allocation per event once warmed up.

use crate::eevdf::CfsRq;
use crate::exec::Frame;
use crate::data::SpinLock;
use crate::pelt::SchedAvg;
use crate::tunables::Tunables;
use std::collections::VecDeque;
use wakesim_engine::{stream_id, RngStream, Time};
use wakesim_machine::CpuSet;

pub type TaskId = u32;
pub const NO_TASK: TaskId = u32::MAX;
pub const NO_CPU: u32 = u32::MAX;
/// No channel (`Task::sock_owned`).
pub const NO_CHAN: u32 = u32::MAX;

/// `p->__state`, reduced to what the wakeup path distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TState {
    /// TASK_RUNNING: running or runnable (or being migrated).
    Runnable,
    /// TASK_INTERRUPTIBLE: blocked, waiting for a wakeup.
    Sleeping,
    /// TASK_WAKING: a waker is placing it (select_task_rq to enqueue).
    Waking,
    /// Exited (TASK_DEAD).
    Dead,
}

/// A `struct sched_entity` (EEVDF quantities in virtual ns). A task's entity is kept in the
/// entity arena `Sim::se` at the task's id, apart from the `Task`, so that the runqueue code
/// (`CfsRq`) reads dense entities and nothing else.
#[derive(Clone, Copy, Debug, Default)]
pub struct Entity {
    /// `se->load.weight` (from the nice value: `sched_prio_to_weight`).
    pub weight: u64,
    /// `se->on_rq`: in its runqueue's tree or running as its `curr` (a delayed entity too). The
    /// model's `p->on_rq` (TASK_ON_RQ_QUEUED) is the same flag.
    pub on_rq: bool,
    /// `se->avg.util_est`: the task's estimated utilisation, summed into `cfs_rq->avg.util_est`
    /// while it is queued.
    pub util_est: u64,
    pub vruntime: i64,
    pub deadline: i64,
    pub slice: i64,
    pub vlag: i64,
    /// Deadline stashed at pick time for RUN_TO_PARITY ("protect_slice").
    pub protect_deadline: Option<i64>,
    pub exec_start: Time,
    pub sum_exec_runtime: Time,
    /// sum_exec_runtime when last picked (CFS tick preemption measures the slice from here).
    pub prev_sum_exec: Time,
    /// When it last went into its runqueue's tree (that runqueue's insertion count): the rb-tree
    /// puts an entity after those with an equal key, so of two equal deadlines (EEVDF) or
    /// vruntimes (CFS) the one inserted first is the leftmost and is picked first.
    pub tree_seq: u64,
}

/// Per-task statistics (`/proc/<pid>/sched` subset).
#[derive(Clone, Debug, Default)]
pub struct TaskCounters {
    pub nr_wakeups: u64,
    pub nr_migrations: u64,
    pub nr_switches: u64,
    /// Switched out blocked (`nvcsw`) or still runnable, i.e. preempted (`nivcsw`), as
    /// `__schedule()` counts them from `prev_state`.
    pub nvcsw: u64,
    pub nivcsw: u64,
    pub wait_time: Time,
}

/// A `task_struct`, reduced to what the model uses; its `sched_entity` is kept apart, at the
/// same index of `Sim::se` ([`Entity`]).
pub struct Task {
    pub name: String,
    /// The idle task ("swapper/N") of CPU N.
    pub is_idle: bool,
    /// Index of the task's program in `Sim::programs` (unused for idle tasks).
    pub prog: u32,
    pub pc: u32,
    /// Remaining iterations of each active loop, innermost last.
    pub loops: Vec<u64>,
    pub state: TState,
    pub on_cpu: bool,
    /// Detached by the load balancer, not yet attached (on_rq = TASK_ON_RQ_MIGRATING).
    pub migrating: bool,
    /// Blocked but still queued (DELAY_DEQUEUE, `se.sched_delayed`).
    pub delayed: bool,
    /// task_cpu(p).
    pub cpu: u32,
    pub recent_used_cpu: u32,
    /// CPU the workload pinned the task's start to (`NO_CPU`: fork placement decides).
    pub start_cpu: u32,
    pub allowed: CpuSet,
    pub nr_cpus_allowed: u32,
    pub mm: u32,
    pub group: u32,
    /// `p->se.avg` (the entity's own fields are in `Sim::se`; see [`Entity`]).
    pub avg: SchedAvg,
    pub last_wakee: TaskId,
    pub wakee_flips: u32,
    pub wakee_flip_decay_ts: u64,
    /// The task's kernel stack of continuations (see `exec`).
    pub stack: Vec<Frame>,
    /// Remaining user work of an interrupted or ongoing Compute, in ns at full speed.
    pub compute_left: Time,
    /// Cold-cache penalty to pay at the next switch-in, ns.
    pub migrate_penalty: Time,
    /// The CPU whose cache holds the task's scheduling lines (`p->on_rq`, `p->se`,
    /// `p->sched_info`): the last to enqueue or run it. [`NO_CPU`] before it first runs.
    pub sched_lines: u32,
    /// p->sched_remote_wakeup.
    pub remote_wakeup: bool,
    /// When the current wakeup started (try_to_wake_up entry), for the wakeup latency.
    pub wake_start: Time,
    /// When the task last became runnable-and-waiting (for run_delay).
    pub enqueued_at: Time,
    pub rng: RngStream,
    pub counters: TaskCounters,
    pub exit_time: Option<Time>,
    /// When the task was last switched in (for rq_cpu_time).
    pub switched_in: Time,
    /// Task a pipe/socket syscall in progress is about to wake, and whether with WF_SYNC.
    pub sys_wake: TaskId,
    pub sys_wake_sync: bool,
    /// The pipe/socket op in progress was charged only its check before sleeping
    /// (`Chan::wait_cost`): if it goes ahead after all, its work is still owed.
    pub chan_work_owed: bool,
    /// The loopback TCP channel whose socket this task owns (`lock_sock()` inside a send that
    /// goes ahead), [`NO_CHAN`] outside one; and the ACK work queued on that socket's backlog
    /// meanwhile, which the task runs in `release_sock()` on its way back to user space.
    pub sock_owned: u32,
    pub backlog: Time,
    /// Called functions this task still waits for (`csd_lock_wait()` on each).
    pub csd_pending: u32,
    /// Tasks a futex wake, barrier release or unlock is waking, one try_to_wake_up each.
    pub wake_list: VecDeque<TaskId>,
    /// Next period boundary of the task's periodic timer (0 = not started).
    pub timer_next: Time,
    /// Core throughput with both SMT siblings busy, for this task's code.
    pub smt_throughput: f64,
    /// What the task's current `CpuSpinLock` op is doing (`user_locks`).
    pub cpu_lock_step: crate::user_locks::CpuLockStep,
    /// Per-CPU user locks the task holds (indices into `Sim::cpu_locks`).
    pub cpu_locks_held: Vec<u32>,
    /// In `__lll_lock_wait()`: it takes the mutex with the futex word at 2 (`pthread_mutex`).
    pub lock_waited: bool,
    /// The current wakeup's idle scan returned a CPU it read last (see [`ScanResume`]).
    pub scan_resume: Option<ScanResume>,
}

/// Where a `select_idle_cpu()` scan stood when its loop returned a CPU. The model runs a scan at
/// once when the wakeup starts, but the kernel reads each CPU when its probe comes, so the CPU
/// a scan returns is read at the scan's end. `try_to_wake_up()` reads it again when the scan's
/// cost has passed; if another wakeup claimed it meanwhile, the scan goes on past it with what
/// is left of its depth, as the kernel's would have.
#[derive(Clone, Copy, Debug)]
pub struct ScanResume {
    /// `select_idle_sibling()`'s target: where the scan started, and its fallback.
    pub target: u32,
    /// The CPU the loop returned (for an idle core, the core's CPU it returned), and the CPU of
    /// the scan's order it was at (the same, but for the v6 filter's sibling scan).
    pub found: u32,
    pub at: u32,
    /// The depth left after `found`'s visit.
    pub nr: i64,
    pub has_idle_core: bool,
    /// An idle-core scan's first idle CPU before `found` (`idle_cpu`), if any.
    pub idle_cpu: Option<u32>,
    pub kind: ScanKind,
}

/// Which loop a [`ScanResume`] goes on with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanKind {
    /// The LLC's CPUs (`select_idle_cpu()`, with SIS_UTIL or SIS_PROP depths).
    Llc { prop: bool },
    /// The v5 filter's mask of idle CPUs (SIS_FILTER with SIS_LLC_BUSY).
    FilterV5,
    /// The v6 filter's mask (SIS_FILTER alone), in its sibling-scan mode or not.
    FilterV6 { scan_sibling: bool },
}

/// Function-call CSDs queued on a CPU's `call_single_queue` (the ttwu wakelist shares it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Csd {
    /// A task on the wakelist (sched_ttwu_pending).
    Ttwu(TaskId),
    /// A function call (smp_call_function_single) from `from`; `waiter` spins until it ran.
    Func { from: u32, waiter: TaskId },
    /// The NOHZ idle-balance kick (nohz_csd_func).
    IlbKick,
}

/// What a CPU is doing right now (docs/model.md: each CPU is a serial executor).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Running a task's user code (interruptible at any instant).
    User,
    /// Kernel work for `step_end - now` more ns.
    Kernel,
    /// Spinning on a lock (busy, interrupts off).
    Spin,
    /// In an idle state, waiting for a wakeup.
    Idle,
}

/// One CPU: its executor state and its runqueue (`struct rq`).
pub struct Cpu {
    // --- executor ---
    pub mode: Mode,
    pub gen: u32,
    pub step_end: Time,
    /// Nesting depth of interrupt-disabled regions.
    pub irqs_off: u32,
    /// IPIs sent to this CPU that have not arrived yet (for the idle loop's invariant: a queued
    /// call-single entry always has a kick on its way or a NEED_RESCHED that will flush it).
    pub ipis_in_flight: u32,
    /// Pending interrupt sources.
    pub pend_ipi: bool,
    pub pend_tick: bool,
    pub pend_timers: Vec<TaskId>,
    /// Device interrupts pending (background `noise` sources) and their handlers' total time.
    pub pend_dev_count: u32,
    pub pend_dev: Time,
    pub pend_since: Time,
    /// A softirq (SCHED_SOFTIRQ) was raised and runs at irq exit.
    pub softirq_pending: bool,
    pub nohz_balance_pending: bool,
    /// Cost owed by the CPU for work done inside the last state change (IPI sends etc.),
    /// added to its next step.
    pub debt: Time,
    /// When this CPU's `try_to_wake_up()` asked for a remote rq lock to enqueue directly: the
    /// start of the waker's `cost_remote_lock` (the spin, the acquisition and the enqueue).
    pub ttwu_lock_from: Time,
    /// User compute segment bookkeeping.
    pub user_start: Time,
    pub user_speed: f64,
    /// TIF_NEED_RESCHED of the current task.
    pub need_resched: bool,
    /// Current idle state index and whether it polls (TIF_POLLING_NRFLAG).
    pub idle_state: usize,
    pub polling: bool,
    /// Left a polling idle state and still polling (exit latency, interrupt handling) until the
    /// idle loop clears the flag to flush or schedule.
    pub poll_exit: bool,
    /// When the current POLL-state stay ends at the latest (`cpuidle_poll_time()`).
    pub poll_until: Time,
    /// The address space loaded on this CPU (`rq->curr->active_mm`): the idle task borrows the
    /// last one (`enter_lazy_tlb()`), so it outlives the task that brought it. None at boot.
    pub active_mm: Option<u32>,
    pub idle_enter: Time,
    /// This CPU's cpuidle governor and its data (`cpuidle`).
    pub gov: crate::cpuidle::Governor,
    /// When the governor's state was entered (`cpuidle_enter_state()`'s time_start) and when
    /// the stay ended (time_end: the wakeup plus the exit latency), and whether it still waits
    /// for `cpuidle_reflect()`.
    pub idle_state_at: Time,
    pub idle_state_end: Time,
    pub idle_reflect: bool,
    /// The POLL state ran out of time (`dev->poll_time_limit`).
    pub poll_time_limit: bool,
    /// Expiry times of the hrtimers armed on this CPU (sleeping tasks' timers), for
    /// `tick_nohz_get_sleep_length()`; an entry leaves when its timer fires.
    pub timers: Vec<Time>,
    /// The tick is stopped for this idle period (`ts->tick_stopped`): set by the governor's
    /// decision, cleared when the CPU leaves the idle loop (`tick_nohz_idle_exit()`).
    pub tick_stopped: bool,
    /// The tick's interrupt ran while the CPU idled (`ts->got_idle_tick`), read and cleared by
    /// `tick_nohz_idle_got_tick()` at the reflect.
    pub got_idle_tick: bool,
    /// Per-state usage and the tick decisions (the `cpuidle/stateK/` counters).
    pub idle_usage: crate::cpuidle::IdleCounters,
    /// Whether a tick event is outstanding.
    pub tick_armed: bool,
    /// This CPU's tick offset from the jiffy grid: 0, or with `skew_tick=1`
    /// `cpu × (TICK_NSEC / 2) / nr_cpus` (`tick_setup_sched_timer()`).
    pub tick_skew: Time,
    // --- runqueue ---
    pub curr: TaskId,
    pub idle_task: TaskId,
    /// The top frame of `curr`'s kernel stack, held here while `curr` runs (the executor reads
    /// it on every step; the slot in the task's own stack is stale until the task switches out).
    pub top: Frame,
    /// rq->nr_running (fair tasks queued, including the running one).
    pub nr_running: u32,
    pub cfs: CfsRq,
    pub lock: SpinLock,
    pub ttwu_pending: bool,
    pub csd: VecDeque<Csd>,
    pub idle_stamp: Time,
    pub avg_idle: Time,
    pub max_idle_balance_cost: Time,
    /// Jiffies at which periodic balancing is next due.
    pub next_balance: u64,
    pub capacity: u64,
    /// In the NOHZ idle mask (tick stopped).
    pub nohz_idle: bool,
    /// Whether the last schedule() entered the idle path with nothing enqueued by the kick.
    pub kicked_without_task: bool,
    /// Result of the last load_balance pass run by this CPU (tasks moved).
    pub lb_moved: u32,
    pub lb_continue: bool,
    /// `env->imbalance` of the pass this CPU runs (its unit is the pass's migration type).
    pub lb_imbalance: u64,
    /// Tasks `detach_tasks()` took for the pass this CPU runs, until `attach_tasks()`.
    pub lb_detached: Vec<TaskId>,
    /// Scratch for `detach_tasks()`'s walk order (kept to spare an allocation per pass).
    pub lb_order: Vec<(Time, TaskId)>,
    /// `rq->active_balance`: a balancer asked this CPU's stopper to push a task to `push_cpu`;
    /// set until the stopper has run (`active_load_balance_cpu_stop()`).
    pub active_balance: bool,
    pub push_cpu: u32,
    /// The task the stopper detached, attached to `push_cpu` once this CPU has switched away
    /// from it ([`crate::exec::Frame::ActivePush`]); `NO_TASK` otherwise.
    pub push_task: TaskId,
    /// The stopper ran in the `__schedule()` in progress (its switch back is still owed if
    /// that schedule keeps its task).
    pub stopper_ran: bool,
    /// Index of this CPU's LLC in `Sim::llcs`.
    pub llc: u32,
    /// Cached `available_idle_cpu()`, kept in step with the LLC's idle count.
    pub avail_idle: bool,
    /// Load this CPU last added to the task group's `tg->load_avg` (`tg_load_avg_contrib`).
    pub tg_load_contrib: u64,
    /// A grouped task's load left this cfs_rq (`cfs_rq->removed`): its next load update
    /// propagates to the group.
    pub tg_removed: bool,
    pub tg_last_update: Time,
    /// SIS_FILTER's per-CPU state.
    pub sis_filter: crate::data::SisFilterCpu,
    /// SIS_PROP: `wake_avg_idle` and its jiffies stamp.
    pub wake_avg_idle: Time,
    pub wake_stamp: u64,
    /// Accumulated time in each mode, for utilisation reports.
    pub busy_time: Time,
}

impl Task {
    /// A task that belongs to no simulation, for code that keeps tasks beside a
    /// [`crate::eevdf::CfsRq`] it drives directly (a trace replay, tests); its id is its index
    /// in the caller's vector, its entity ([`Entity::standalone`]) at the same index of theirs.
    pub fn standalone(name: &str) -> Task {
        Task::new(name.to_string(), false, 0, CpuSet::from_cpus([0]), 0, 1, 0, 1, 0)
    }

    /// A task (or, `is_idle`, CPU `cpu`'s idle task) of program `prog`, before it first runs:
    /// `copy_process()`/`sched_fork()` state. Its random stream is the `n`th of its kind for
    /// `seed`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        is_idle: bool,
        prog: u32,
        allowed: CpuSet,
        cpu: u32,
        mm: u32,
        group: u32,
        seed: u64,
        n: u64,
    ) -> Task {
        Task {
            name,
            is_idle,
            prog,
            pc: 0,
            loops: Vec::new(),
            state: TState::Runnable,
            on_cpu: false,
            migrating: false,
            delayed: false,
            cpu,
            recent_used_cpu: cpu,
            start_cpu: NO_CPU,
            nr_cpus_allowed: allowed.weight() as u32,
            allowed,
            mm,
            group,
            avg: SchedAvg::new(0),
            last_wakee: NO_TASK,
            wakee_flips: 0,
            wakee_flip_decay_ts: 0,
            stack: Vec::with_capacity(8),
            compute_left: 0,
            migrate_penalty: 0,
            sched_lines: NO_CPU,
            remote_wakeup: false,
            wake_start: 0,
            enqueued_at: 0,
            rng: RngStream::new(seed, stream_id(if is_idle { "idle" } else { "task" }), n),
            counters: Default::default(),
            exit_time: None,
            switched_in: 0,
            sys_wake: NO_TASK,
            sys_wake_sync: false,
            chan_work_owed: false,
            sock_owned: NO_CHAN,
            backlog: 0,
            csd_pending: 0,
            wake_list: VecDeque::new(),
            timer_next: 0,
            smt_throughput: 1.15,
            cpu_lock_step: crate::user_locks::CpuLockStep::Idle,
            cpu_locks_held: Vec::new(),
            lock_waited: false,
            scan_resume: None,
        }
    }
}

impl Entity {
    /// A task's entity before its first enqueue: weight `weight`, slice `slice` (ns).
    pub fn new(weight: u64, slice: i64) -> Entity {
        Entity { weight, slice, ..Default::default() }
    }

    /// A nice-0 entity that belongs to no simulation (see [`Task::standalone`]): base slice as
    /// on a 1-CPU machine; callers set `slice` as they need.
    pub fn standalone() -> Entity {
        Entity::new(crate::tunables::NICE_0_LOAD, Tunables::for_cpus(1).base_slice as i64)
    }
}

impl Cpu {
    /// Whether an interrupt source is pending (an IPI, the tick, an hrtimer, a device).
    #[inline]
    pub fn irq_pending(&self) -> bool {
        self.pend_ipi || self.pend_tick || !self.pend_timers.is_empty() || self.pend_dev_count > 0
    }

    /// CPU `cpu` at boot (`sched_init()`), running its idle task `idle_task`, in LLC `llc` (an
    /// index into `Sim::llcs`), its idle states chosen by `governor`.
    pub fn new(cpu: u32, idle_task: TaskId, llc: u32, t: &Tunables, governor: crate::cpuidle::GovernorKind) -> Cpu {
        Cpu {
            mode: Mode::Idle,
            gen: 0,
            step_end: 0,
            irqs_off: 0,
            ipis_in_flight: 0,
            pend_ipi: false,
            pend_tick: false,
            pend_timers: Vec::new(),
            pend_dev_count: 0,
            pend_dev: 0,
            pend_since: 0,
            softirq_pending: false,
            nohz_balance_pending: false,
            debt: 0,
            ttwu_lock_from: 0,
            user_start: 0,
            user_speed: 1.0,
            need_resched: false,
            idle_state: 0,
            polling: false,
            poll_exit: false,
            poll_until: 0,
            active_mm: None,
            idle_enter: 0,
            gov: crate::cpuidle::Governor::new(governor),
            idle_state_at: 0,
            idle_state_end: 0,
            idle_reflect: false,
            poll_time_limit: false,
            timers: Vec::new(),
            tick_stopped: false,
            got_idle_tick: false,
            idle_usage: Default::default(),
            tick_armed: false,
            tick_skew: 0,
            curr: idle_task,
            idle_task,
            top: Frame::Idle { phase: crate::idle::IdlePhase::LoopTop },
            nr_running: 0,
            cfs: CfsRq::new(),
            lock: SpinLock::new(cpu),
            ttwu_pending: false,
            csd: VecDeque::new(),
            idle_stamp: 0,
            // rq->avg_idle = 2*sysctl_sched_migration_cost; max_idle_balance_cost = migration_cost (sched_init).
            avg_idle: 2 * t.migration_cost,
            max_idle_balance_cost: t.migration_cost,
            next_balance: 0,
            capacity: crate::tunables::CAPACITY,
            nohz_idle: false,
            kicked_without_task: false,
            lb_moved: 0,
            lb_continue: true,
            lb_imbalance: 0,
            lb_detached: Vec::new(),
            lb_order: Vec::new(),
            active_balance: false,
            push_cpu: NO_CPU,
            push_task: NO_TASK,
            stopper_ran: false,
            llc,
            avail_idle: true,
            tg_load_contrib: 0,
            tg_removed: false,
            tg_last_update: 0,
            wake_avg_idle: 0,
            sis_filter: Default::default(),
            wake_stamp: 0,
            busy_time: 0,
        }
    }
}

/// `sd_llc_shared`: one cache line per LLC.
#[derive(Clone, Debug)]
pub struct LlcShared {
    pub span: CpuSet,
    pub has_idle_cores: bool,
    /// SIS_LLC_BUSY: `sd_is_busy`, the third state of the patch's `enum sd_state` (never set
    /// together with `has_idle_cores`).
    pub is_busy: bool,
    /// SIS_UTIL depth, written at the periodic LLC-level balance.
    pub nr_idle_scan: u32,
    pub nr_busy_cpus: u32,
    /// Number of CPUs of the LLC that are `available_idle_cpu()` right now (model bookkeeping,
    /// not a kernel field: lets a scan of a fully busy LLC be charged without probing each CPU).
    pub nr_avail_idle: u32,
    /// SIS_PROP: `sd_llc->avg_scan_cost`, EWMA (1/8) of the scan's duration.
    pub avg_scan_cost: Time,
    /// SIS_FILTER's mask and its line.
    pub sis_filter: crate::data::SisFilter,
    /// Which CPU last wrote the line (for transfer costs).
    pub line_owner: u32,
}

/// Mutable per-CPU, per-level sched_domain state.
#[derive(Clone, Debug, Default)]
pub struct DomState {
    pub balance_interval_ms: u64,
    /// Jiffies of the last periodic balance.
    pub last_balance: u64,
    pub nr_balance_failed: u32,
    pub max_newidle_lb_cost: Time,
    pub last_decay_max_lb_cost: u64,
    /// Sum of remote-line costs of reading every rq in the span from this CPU (precomputed).
    pub scan_cost: Time,
}

/// A pipe or socket: bytes buffered and the tasks waiting on it.
#[derive(Clone, Debug, Default)]
pub struct Chan {
    pub capacity: u64,
    pub bytes: u64,
    pub readers: VecDeque<TaskId>,
    pub writers: VecDeque<TaskId>,
    /// WF_SYNC on wakeups (pipes, unix sockets, loopback TCP/UDP). A loopback receiver is woken
    /// from NET_RX softirq on the sender's CPU, which is where the sender's syscall runs the
    /// wakeup anyway; the softirq's work is part of `tcp_send`/`udp_send`.
    pub sync: bool,
    /// Per-message protocol cost on the sender and on the receiver (cost profile by kind).
    pub send_cost: Time,
    pub recv_cost: Time,
    /// An op that finds nothing to read (no room to write) and sleeps: its check before it
    /// does (`pipe_wait` / `sock_wait`).
    pub wait_cost: Time,
    /// The lines both ends write (`pipe->mutex`, ring indices, slot, data; or the socket's
    /// queue lock and skb): their owner, and until when the current op holds them.
    pub line: crate::data::SharedLine,
    /// How many lines an op on another CPU than `line.owner` pulls over (`pipe_lines` /
    /// `sock_lines`).
    pub lines: u64,
    /// Unix stream socket: blocked writers wait in `sock_alloc_send_pskb()` (non-exclusive) and
    /// `unix_write_space()` wakes them all once the queue is down to a quarter of the send
    /// buffer (`unix_writable()`: `wmem_alloc << 2 <= sk_sndbuf`). Otherwise (pipes: exclusive
    /// `wr_wait`) a read that makes room wakes one writer.
    pub wake_writers_at_quarter: bool,
    /// Each write is an skb (sockets: it occupies its truesize until read; a pipe write
    /// occupies its bytes in the page), what the reader pays for a message that left the cache
    /// meanwhile (`sock_msg_cold`; pipes 0), and the messages queued.
    pub skb: bool,
    pub msg_cold: Time,
    /// Lines a reader on another CPU pulls over per message (`pipe_msg_lines` / `sock_msg_lines`).
    pub msg_lines: u64,
    /// Loopback TCP: each message's data sits in its sender's page frag (`sk_page_frag()`,
    /// filled by `tcp_sendmsg_locked()`), a stream of lines apart from the skb: a reader on
    /// another CPU streams them in (`stream_read_overlap`), and the sender reuses the page once
    /// its skbs are freed (`skb_page_frag_refill()`), writing lines the reader last held
    /// (`stream_write_overlap`). `frag_reader` is the CPU whose read last touched the frag
    /// ([`NO_CPU`] when the writer holds it).
    pub frags: bool,
    pub frag_reader: u32,
    pub msgs: VecDeque<Msg>,
    /// Datagrams dropped because the buffer was full (`SendDgram`).
    pub dropped: u64,
}

impl Chan {
    /// A write of `bytes` finds no room and (unless it is a datagram) sleeps: less than `bytes`
    /// free while something is queued (an empty channel takes any write).
    pub fn full_for(&self, bytes: u64) -> bool {
        self.capacity - self.bytes.min(self.capacity) < bytes && self.bytes > 0
    }

    /// A read of `bytes` finds too little queued and sleeps.
    pub fn empty_for(&self, bytes: u64) -> bool {
        self.bytes < bytes
    }
}

/// A message queued on a channel: its writer's CPU and task, the CPU's message-memory count
/// (`Sim::msg_written`) when it was written, its unread bytes, and whether a read has touched
/// it (a partly read message is in the reader's cache).
#[derive(Clone, Copy, Debug)]
pub struct Msg {
    pub cpu: u32,
    pub writer: TaskId,
    pub stamp: u64,
    pub bytes: u64,
    pub read: bool,
}

/// A barrier: arrivals so far in this round and the tasks waiting.
#[derive(Clone, Debug, Default)]
pub struct Barrier {
    pub arrived: u32,
    pub waiters: VecDeque<TaskId>,
}

/// A pthread mutex (`pthread_mutex`): its owner, whether its futex word is 2 ("waiters may
/// sleep": the unlock must make the wake syscall), and the tasks asleep in `futex_wait` on it.
#[derive(Clone, Debug, Default)]
pub struct Mutex {
    pub owner: Option<TaskId>,
    pub contended: bool,
    pub waiters: VecDeque<TaskId>,
}

/// A futex with semaphore semantics.
#[derive(Clone, Debug, Default)]
pub struct Futex {
    /// Semaphore posts (`FutexWake`) not yet consumed by a wait.
    pub pending: u64,
    /// Set by `FutexWakeAllSync` (the byte stays in the polled pipe): waits pass.
    pub signalled: bool,
    pub waiters: VecDeque<TaskId>,
    /// The futex's hash bucket (lock, waiter count, chain head), the waiter's `futex_q` and the
    /// futex word (`kernel/futex/`): written by the waiter when it queues and by the waker when it
    /// unqueues it, so a wake from another CPU pulls them over (`futex_lines` of them).
    pub line: crate::data::SharedLine,
}

/// NOHZ idle-balance global state (`struct nohz`).
#[derive(Clone, Debug, Default)]
pub struct Nohz {
    pub idle_cpus: CpuSet,
    pub nr_cpus: u32,
    /// Jiffies of the next due idle balance.
    pub next_balance: u64,
}
