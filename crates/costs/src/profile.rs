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

    /// Sets the figure for distance `d` (the counterpart of [`get`](Self::get)).
    pub fn set(&mut self, d: Dist, v: u64) {
        *match d {
            Dist::Local => &mut self.local,
            Dist::Smt => &mut self.smt,
            Dist::Cluster => &mut self.cluster,
            Dist::Llc => &mut self.llc,
            Dist::CrossLlc => &mut self.cross_llc,
            Dist::CrossNode => &mut self.cross_node,
        } = v;
    }
}

/// `CPUIDLE_STATE_MAX` (include/linux/cpuidle.h): the most states a cpuidle driver registers.
pub const CPUIDLE_STATE_MAX: usize = 10;

/// One cpuidle state (`drivers/idle/intel_idle.c` / ACPI _CST tables).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdleState {
    pub name: String,
    /// Exit latency, ns.
    pub exit_latency: u64,
    /// Target residency, ns: the stay below which entering the state does not pay; the cpuidle
    /// governor picks the deepest state whose residency fits the predicted idle length.
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
    /// A core's position on its die's mesh, ns: every core gets a fixed offset in
    /// `-line_mesh_offset..=line_mesh_offset` that is added to each line transfer between it
    /// and another core (`line` from `cluster` on), so a pair of cores far from the die's centre
    /// pays up to twice this more than the `line` figure and a central pair as much less. 0: every
    /// pair of one distance costs the same. The model's `mesh` module draws the offsets.
    #[serde(default)]
    pub line_mesh_offset: u64,
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
    /// One pass of `do_idle()` into an idle state: `tick_nohz_idle_enter()`, the governor's
    /// `cpuidle_select()` (menu: next-timer lookup, state walk) and `cpuidle_enter_state()`
    /// bookkeeping. Paid with TIF_POLLING_NRFLAG already set, before the state is entered.
    pub idle_select: u64,
    /// Leaving `do_idle()` for `schedule_idle()`: `cpuidle_reflect()`, `tick_nohz_idle_exit()`.
    pub idle_exit: u64,
    /// `sched_balance_newidle()` when a gate (root-domain overload, `avg_idle`) returns early:
    /// misfit update, clock read, RCU domain walk start, `nohz_newidle_balance()` checks.
    pub newidle_gate: u64,
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
    /// Distinct cache lines of a runqueue, besides its lock's, that a wakeup's enqueue plus
    /// preemption check touches (the rq's clock, curr, cfs_tasks and idle_stamp lines, the root
    /// cfs_rq's sums, tree, PELT and removed lines): a waker enqueueing on a remote rq pays a
    /// line transfer for each. A count, not ns.
    pub enqueue_lines: u64,
    /// The lines of one task-group level on that CPU (the group's cfs_rq and its scheduling
    /// entity in the root cfs_rq) that the same enqueue touches for a task in a task group. A
    /// count.
    pub group_enqueue_lines: u64,
    /// A task's own scheduling lines (`p->on_rq`, `p->se`, `p->sched_info`), written by the CPU
    /// that last enqueued or ran it: the next CPU to do either pulls them over. A count.
    pub task_sched_lines: u64,
    /// `wakeup_preempt()` check.
    pub wakeup_preempt: u64,
    /// `pick_next_task_fair()` without balancing.
    pub pick: u64,
    /// `try_to_wake_up()` fixed part (pi_lock, state checks, ttwu_stat).
    pub ttwu_base: u64,
    /// `select_task_rq_fair()` fixed part (record_wakee, wake_affine arithmetic).
    pub select_base: u64,
    /// `select_idle_cpu()` per probed CPU, on top of the line transfer of the probed rq
    /// (the model charges `line.get(dist)` for that read separately).
    pub sis_probe: u64,
    /// What a probe of `select_idle_cpu()`'s loop pays for the probed rq's lines, in percent of
    /// one line transfer at its distance: the loop's next CPU does not wait for this one's
    /// lines, so an out-of-order core has several CPUs' misses in flight; the loop's last probe
    /// is waited for in full. 100 would be one transfer per probe, one after another.
    pub sis_probe_line_pct: u64,
    /// llist_add onto a remote call_single_queue + ttwu_pending write (waker side), excluding the
    /// transfers of the target's llist head / ttwu_pending lines (charged by distance).
    pub wakelist_queue: u64,
    /// `sched_ttwu_pending()` / CSD flush fixed part on the target.
    pub csd_flush: u64,
    /// `update_sd_lb_stats()` per CPU in the span: the arithmetic only; the reads of that CPU's
    /// rq lines are charged separately, `lb_walk_line_pct` of a transfer by distance.
    pub lb_stats_per_cpu: u64,
    /// What reading one CPU's rq costs that walk, in percent of one line transfer at its
    /// distance: `update_sg_lb_stats()` reads four lines of a busy CPU's rq and six of an idle
    /// one's, all addressed from `cpu_rq(i)`, so their misses overlap each other and the next
    /// CPUs'. 100 would be one transfer per CPU, one after another.
    pub lb_walk_line_pct: u64,
    /// Fixed part of one `load_balance()` pass.
    pub lb_base: u64,
    /// `detach_task()` + `attach_task()` of one task, including their dequeue/enqueue and the
    /// PELT detach/attach, excluding the two rq locks (charged as lock operations).
    pub migrate_task: u64,
    /// `update_blocked_averages()` per leaf cfs_rq.
    pub update_blocked: u64,
    /// Tick handler (`sched_tick` → `task_tick_fair`).
    pub tick: u64,
    /// `update_tg_load_avg()`'s CPU work; the `tg->load_avg` line is held only for its
    /// transfer, which (with any wait behind other CPUs' accesses) is paid apart.
    pub tg_load_update: u64,
    /// Cold-cache penalty after a migration, as extra user time on the next run, by distance moved.
    pub migration_penalty: LineCosts,
    /// Throughput of a core with two busy SMT siblings relative to one busy thread (e.g. 1.15).
    pub smt_throughput: f64,
    /// Per-message protocol work beyond the syscall and the copy, charged on the sending and on
    /// the receiving CPU: unix stream sockets, loopback TCP (incl. the NET_RX softirq that runs
    /// on the sender's CPU) and loopback UDP.
    pub unix_send: u64,
    pub unix_recv: u64,
    /// `pipe_write()` / `pipe_read()` work beyond the syscall and the copy, under `pipe->mutex`
    /// (ring head/tail update, buffer merge or slot setup, `was_empty`/`was_full` checks).
    pub pipe_send: u64,
    pub pipe_recv: u64,
    /// A read that finds its pipe / socket empty (or a write that finds it full), up to where it
    /// sleeps: the lock, the check and `prepare_to_wait()`, beyond the syscall. The op's own work
    /// (`pipe_recv`, `unix_recv`, …) is charged when it completes, after the wakeup.
    pub pipe_wait: u64,
    pub sock_wait: u64,
    /// The part of a socket op (unix stream, loopback TCP/UDP) done under the receive queue's
    /// lock, which both ends take: the sender's enqueue (`skb_queue_tail()` under
    /// `sk_receive_queue.lock`, at the end of its path), the receiver's dequeue (at the start of
    /// its). The rest of the op (skb allocation, copies, protocol work) touches only its own
    /// side's state, so the two ends overlap; a pipe op holds `pipe->mutex` throughout.
    pub sock_queue_hold: u64,
    /// Cache lines of a pipe's own state that both ends write, a count, not ns: `pipe->mutex`,
    /// the ring's head/tail word, the `pipe_buffer` slot. An op on a CPU other than the last one
    /// to touch the pipe pays a transfer for each.
    pub pipe_lines: u64,
    /// The same for a socket pair (unix stream, loopback TCP/UDP): the receive queue's lock and
    /// head, the peer's socket state and `sk_wmem_alloc`. A count, not ns.
    pub sock_lines: u64,
    /// Lines of one message that its writer leaves on its CPU and a reader on another CPU
    /// pulls over, a count per message: a pipe's data lines; a socket's skb, data head, and the
    /// slab's freelist that the remote free writes.
    pub pipe_msg_lines: u64,
    pub sock_msg_lines: u64,
    /// A CPU's private (L2) cache in bytes: a queued message stays cached until its writer's
    /// CPU has written this much newer message memory (a reuse-distance model). Bytes, not ns.
    pub private_cache_bytes: u64,
    /// Reading a socket message (skb and data head) that left the cache: the reader's extra
    /// time, ns. Pipes pay none: their data sits in pages the prefetcher streams.
    pub sock_msg_cold: u64,
    /// Line misses a CPU keeps in flight while it streams through a buffer whose lines another
    /// CPU holds, a count: reading (a loopback TCP receiver's `skb_copy_datagram_iter()` of the
    /// page frag its sender filled) and writing (the sender's copy into a frag page its receiver
    /// has just read, reused by `skb_page_frag_refill()`). Such a stream of `n` lines costs
    /// `n × line / overlap`, where the same `n` lines one after another would cost `n × line`.
    pub stream_read_overlap: u64,
    pub stream_write_overlap: u64,
    /// `futex_wait()`'s work beyond the syscall before it sleeps or returns: the futex key and
    /// hash, the hash bucket's lock and waiter count, the word read, queueing the `futex_q`.
    pub futex_wait: u64,
    /// `futex_wake()`'s work beyond the syscall: key, hash, bucket lock, the chain walk, and per
    /// woken waiter the unqueue, mark and `wake_q` add (the wakeup itself is charged as ttwu).
    pub futex_wake: u64,
    /// Cache lines of a futex that the waiter and the waker both write, a count: the hash
    /// bucket (lock, waiter count, chain head), the waiter's `futex_q`, the futex word. A wake
    /// from another CPU pulls them over, and the woken waiter pulls them back.
    pub futex_lines: u64,
    pub tcp_send: u64,
    pub tcp_recv: u64,
    /// A loopback TCP ACK processed from the sender's socket backlog: the receiver's ACK of a
    /// message arrives while the sender is inside a send and owns its socket, so
    /// `tcp_v4_rcv()` queues it (`tcp_add_backlog()`) and the sender runs
    /// `tcp_rcv_established()` → `tcp_ack()` in its `release_sock()`. An ACK processed in the
    /// receiver's softirq instead is part of `tcp_recv`.
    pub tcp_ack: u64,
    pub udp_send: u64,
    pub udp_recv: u64,
    /// The parent's `fork()` of a new process (`kernel_clone()`: `copy_process()` with its
    /// `copy_mm()`, then `wake_up_new_task()`), and its `clone()` of a thread (no mm copy): the
    /// time between two children a benchmark forks in a loop.
    pub fork: u64,
    pub clone_thread: u64,
    /// `smp_call_function_single()` on the sender beyond the queueing and the IPI send
    /// (csd lock, argument setup), and the handler body on the target.
    pub call_function: u64,
}

impl CostProfile {
    /// Time to copy `bytes` bytes.
    #[inline]
    pub fn copy(&self, bytes: u64) -> u64 {
        bytes * self.copy_ps_per_byte / 1000
    }

    /// State 0 is cpuidle's POLL loop (`poll_idle()`): no exit latency, and deeper states to
    /// fall back to when its time limit (`poll_limit`) runs out.
    pub fn has_poll_loop(&self) -> bool {
        self.idle_states.len() > 1 && self.idle_states[0].exit_latency == 0
    }
}

impl CostProfile {
    /// Check the invariants every profile must satisfy: one to `CPUIDLE_STATE_MAX` idle states,
    /// ordered by exit latency (shallowest first, as cpuidle drivers register them), non-empty
    /// state names, and `smt_throughput` in [1.0, 2.0].
    pub fn validate(&self) -> Result<(), crate::CostError> {
        self.check().map_err(|(_, msg)| {
            crate::CostError::Invalid(format!("cost profile '{}': {msg}", self.name))
        })
    }

    /// Like [`validate`](Self::validate), also naming the top-level key at fault (for file errors).
    pub(crate) fn check(&self) -> Result<(), (&'static str, String)> {
        if self.idle_states.is_empty() {
            return Err(("idle_states", "at least one idle state is required".into()));
        }
        if self.idle_states.len() > CPUIDLE_STATE_MAX {
            return Err(("idle_states", format!("at most {CPUIDLE_STATE_MAX} idle states (CPUIDLE_STATE_MAX), got {}", self.idle_states.len())));
        }
        for (i, st) in self.idle_states.iter().enumerate() {
            if st.name.trim().is_empty() {
                return Err(("idle_states", format!("idle_states[{i}]: empty name")));
            }
        }
        for w in self.idle_states.windows(2) {
            if w[1].exit_latency < w[0].exit_latency {
                return Err((
                    "idle_states",
                    format!(
                        "idle states must be ordered by exit latency (shallowest first): '{}' ({} ns) comes after '{}' ({} ns)",
                        w[1].name, w[1].exit_latency, w[0].name, w[0].exit_latency
                    ),
                ));
            }
        }
        if self.sis_probe_line_pct > 300 {
            return Err((
                "sis_probe_line_pct",
                format!("sis_probe_line_pct is at most 300 (the three lines of a probed rq one after another), got {}", self.sis_probe_line_pct),
            ));
        }
        if self.lb_walk_line_pct > 600 {
            return Err((
                "lb_walk_line_pct",
                format!("lb_walk_line_pct is at most 600 (the six lines of an idle CPU's rq one after another), got {}", self.lb_walk_line_pct),
            ));
        }
        for (key, v) in [("stream_read_overlap", self.stream_read_overlap), ("stream_write_overlap", self.stream_write_overlap)] {
            if v == 0 {
                return Err((key, format!("{key} counts line misses in flight, at least 1, got 0")));
            }
        }
        let t = self.smt_throughput;
        if !(1.0..=2.0).contains(&t) {
            return Err((
                "smt_throughput",
                format!("smt_throughput must be in [1.0, 2.0], got {t}"),
            ));
        }
        Ok(())
    }

    /// Whether any idle state polls (x86 POLL / MWAIT): if not, every wake of an idle CPU needs
    /// an IPI (arm64 WFI, a VM's HLT).
    pub fn has_polling_idle(&self) -> bool {
        self.idle_states.iter().any(|s| s.polling)
    }
}
