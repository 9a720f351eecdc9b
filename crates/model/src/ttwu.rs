//! `try_to_wake_up()` and the enqueue side (kernel/sched/core.c, v6.6): `ttwu_runnable()`,
//! `select_task_rq()`, `ttwu_queue()` with `ttwu_queue_cond()` / `ttwu_queue_wakelist()`,
//! `send_call_function_single_ipi()` (flag write to a polling idle CPU, else an IPI),
//! `resched_curr()`, `wakeup_preempt()`, `ttwu_do_activate()` and `sched_ttwu_pending()`.
//!
//! The waker's CPU pays for selection, the remote rq lock and the enqueue (direct path) or for
//! the llist_add and the IPI send (wakelist path); the target pays for the IPI, its idle exit
//! and its own enqueue.

use crate::exec::{Ev, Flow, Frame};
use crate::locks::LockId;
use crate::sim::Sim;
use crate::syscalls::SysPhase;
use crate::state::{Csd, Mode, TState, TaskId, NO_TASK};
use crate::trace::trace_ev;
use wakesim_engine::invariant;
use wakesim_trace::{IpiKind, TraceEvent, WakeHow};

/// Where `try_to_wake_up()` resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TtwuPhase {
    /// Entry: `ttwu_runnable()`, the `p->on_cpu` wait, or `select_task_rq()`.
    Start,
    /// CPU selected: `set_task_cpu()`, then `ttwu_queue()` (wakelist or remote lock).
    Queue,
    /// `set_task_cpu()`'s `migrate_task_rq_fair()` is paid: now `ttwu_queue()` claims the CPU.
    Claim,
    /// `ttwu_queue_cond()` has read the target's rq line: `__ttwu_queue_wakelist()` claims the
    /// CPU (`ttwu_pending`) and queues the wakee.
    Wakelist,
    /// The target's rq lock is held: `ttwu_do_activate()`'s cost.
    Locked,
    /// Enqueued and preemption checked: unlock.
    Activate,
    /// Finished: `ttwu_stat()`.
    Done,
    /// `ttwu_runnable()` holds the task's rq lock.
    RunnableLocked,
    /// `ttwu_runnable()` done: unlock.
    RunnableDone,
}

/// Where `flush_smp_call_function_queue()` resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsdPhase {
    /// Entry: anything queued, and is a wakelist entry among it (then lock the rq)?
    Start,
    /// The own rq lock is held for `sched_ttwu_pending()`.
    RqLocked,
    /// `sched_ttwu_pending()`'s enqueues are paid: activate them and run the other functions.
    Activate,
    /// Only functions were queued: run them.
    FuncsDone,
}

impl Sim {
    /// Starts `try_to_wake_up(p)` on `cpu` (pushes the frame; the caller returns `Flow::Again`).
    pub(crate) fn start_ttwu(&mut self, cpu: usize, p: TaskId, sync: bool) {
        self.push(cpu, Frame::Ttwu { p, phase: TtwuPhase::Start, target: 0, sync, fork: false });
    }

    /// `try_to_wake_up(p)` on the waker's `cpu`, one step per call (`TtwuPhase`).
    pub(crate) fn try_to_wake_up(&mut self, cpu: usize, f: Frame) -> Flow {
        let Frame::Ttwu { p, phase, target, sync, fork } = f else { unreachable!() };
        let fr = |phase: TtwuPhase, target: u32| Frame::Ttwu { p, phase, target, sync, fork };
        match phase {
            TtwuPhase::Start => {
                if self.tasks[p as usize].state != TState::Sleeping {
                    return Flow::Pop; // already woken (or running): nothing to do
                }
                self.tasks[p as usize].wake_start = self.now();
                if self.se[p as usize].on_rq {
                    // ttwu_runnable(): it has not finished blocking; keep it queued.
                    let rq = self.tasks[p as usize].cpu;
                    return self.call(cpu, fr(TtwuPhase::RunnableLocked, rq), Frame::Lock { lock: LockId::Rq(rq), granted: false });
                }
                if self.tasks[p as usize].on_cpu {
                    // Still being switched out on its CPU: the WF_ON_CPU wakelist, else spin on
                    // p->on_cpu (smp_cond_load_acquire) until the switch completes.
                    let pc = self.tasks[p as usize].cpu as usize;
                    if self.f.TTWU_QUEUE && self.ttwu_queue_cond(cpu, p, pc, true) {
                        // As in ttwu_queue(): the claim lands after ttwu_queue_cond()'s read
                        // of the target's rq line.
                        self.tasks[p as usize].state = TState::Waking;
                        self.tasks[p as usize].remote_wakeup = false;
                        let cost = self.c.ttwu_base + self.line_xfer(cpu, pc);
                        return self.busy(cpu, cost, fr(TtwuPhase::Wakelist, pc as u32));
                    }
                    let wait = self.cpus[pc].step_end.saturating_sub(self.now()).max(self.c.rq_lock);
                    return self.busy(cpu, wait, fr(TtwuPhase::Start, 0));
                }
                self.tasks[p as usize].state = TState::Waking;
                let pl = self.select_task_rq_fair(cpu, p, sync);
                self.busy(cpu, self.c.ttwu_base + pl.cost, fr(TtwuPhase::Queue, pl.cpu))
            }
            TtwuPhase::Queue => {
                // The idle scan's CPU is read when the scan reaches it: now.
                if let Some((again, cost)) = self.sis_recheck(cpu, p) {
                    return self.busy(cpu, cost, fr(TtwuPhase::Queue, again as u32));
                }
                let target = target as usize;
                let old = self.tasks[p as usize].cpu as usize;
                if old != target {
                    self.wake.wakeups_migrated += 1;
                    self.wake.migrations_wakeup += 1;
                    // set_task_cpu() runs migrate_task_rq_fair() before ttwu_queue(): until
                    // its reads of the old cfs_rq are done the target is not yet claimed, and
                    // other wakers may still find it idle.
                    let cost = self.migrate_task_rq_fair(cpu, p, old);
                    self.set_task_cpu(p, target);
                    return self.busy(cpu, cost, fr(TtwuPhase::Claim, target as u32));
                }
                self.ttwu_queue(cpu, f, target, false)
            }
            TtwuPhase::Claim => self.ttwu_queue(cpu, f, target as usize, true),
            TtwuPhase::Wakelist => {
                self.ttwu_queue_wakelist(cpu, p, target as usize);
                self.busy(cpu, self.c.wakelist_queue, fr(TtwuPhase::Done, target))
            }
            TtwuPhase::Locked => {
                // Enqueue and preemption check under the (possibly remote) rq lock; the rq's
                // lines are read/written from the waker's CPU.
                let t = target as usize;
                let line = self.line_xfer(cpu, t);
                if t != cpu {
                    self.wake.remote_enqueue += 1;
                }
                self.wake.direct_enqueue += 1;
                let lines = self.enqueue_line_count(p) * line + self.take_task_lines(cpu, p);
                let cost = self.c.enqueue + self.c.wakeup_preempt + lines;
                self.busy(cpu, cost, fr(TtwuPhase::Activate, target))
            }
            TtwuPhase::Activate => {
                let t = target as usize;
                let how = if t == cpu { WakeHow::Local } else { WakeHow::RemoteEnqueue };
                trace_ev!(self, self.wake_event(cpu, p, t, how));
                let migrated = std::mem::take(&mut self.tasks[p as usize].remote_wakeup);
                self.ttwu_do_activate(cpu, t, p, migrated);
                if t != cpu {
                    self.wake.cost_remote_lock += self.now() - self.cpus[cpu].ttwu_lock_from;
                }
                self.lock_release(cpu, LockId::Rq(target));
                self.set_top(cpu, fr(TtwuPhase::Done, target));
                Flow::Again
            }
            TtwuPhase::Done => {
                self.ttwu_stat(cpu, p, target as usize, sync);
                Flow::Pop
            }
            TtwuPhase::RunnableLocked => {
                let rq = target as usize;
                if self.se[p as usize].on_rq {
                    self.wake.wakeups_queued += 1;
                    trace_ev!(self, self.wake_event(cpu, p, rq, WakeHow::Runnable));
                    if self.tasks[p as usize].delayed {
                        self.requeue_delayed(rq, p);
                    }
                    self.tasks[p as usize].state = TState::Runnable;
                    if self.cpus[rq].curr != p {
                        self.wakeup_preempt(cpu, rq, p);
                    }
                    let cost = self.c.wakeup_preempt + self.line_xfer(cpu, rq);
                    return self.busy(cpu, cost, fr(TtwuPhase::RunnableDone, target));
                }
                // It finished blocking meanwhile: drop the lock and take the full path.
                self.lock_release(cpu, LockId::Rq(target));
                self.set_top(cpu, fr(TtwuPhase::Start, 0));
                Flow::Again
            }
            TtwuPhase::RunnableDone => {
                self.lock_release(cpu, LockId::Rq(target));
                if self.tasks[p as usize].state == TState::Runnable && self.tasks[p as usize].wake_start > 0 {
                    self.ttwu_stat(cpu, p, target as usize, sync);
                }
                Flow::Pop
            }
        }
    }

    /// `ttwu_queue()`: hands `p` to `target`'s wakelist (claiming the CPU through its
    /// `ttwu_pending`) or takes `target`'s rq lock to enqueue it directly. `f` is the waker's
    /// `try_to_wake_up()` frame.
    fn ttwu_queue(&mut self, cpu: usize, f: Frame, target: usize, migrated: bool) -> Flow {
        let Frame::Ttwu { p, sync, fork, .. } = f else { unreachable!() };
        let fr = |phase: TtwuPhase| Frame::Ttwu { p, phase, target: target as u32, sync, fork };
        // WF_MIGRATED, kept on the task until the wakelist or the enqueue consumes it.
        self.tasks[p as usize].remote_wakeup = migrated;
        if self.f.TTWU_QUEUE && self.ttwu_queue_cond(cpu, p, target, false) {
            // The wakee's CPU is claimed when the waker's write of its ttwu_pending lands, after
            // the transfer of the target's rq line (ttwu_queue_cond() reads its nr_running).
            return self.busy(cpu, self.line_xfer(cpu, target), fr(TtwuPhase::Wakelist));
        }
        self.cpus[cpu].ttwu_lock_from = self.now();
        self.call(cpu, fr(TtwuPhase::Locked), Frame::Lock { lock: LockId::Rq(target as u32), granted: false })
    }

    /// `ttwu_queue_cond()`: whether the waker hands the enqueue to the target CPU. `on_cpu` is the
    /// WF_ON_CPU case (the wakee is still descheduling on `target`).
    pub(crate) fn ttwu_queue_cond(&self, this: usize, _p: TaskId, target: usize, on_cpu: bool) -> bool {
        if !self.m.share_cache(this, target) {
            return true; // cross-LLC: always offload (avoid bouncing remote rq lines)
        }
        if target == this {
            return false;
        }
        if self.f.TTWU_QUEUE_IDLE {
            // v6.0 (f3dd3f674555): whenever the target runqueue is empty.
            return self.cpus[target].nr_running == 0;
        }
        // v5.8..v5.19 (2ebb17717550): only if the wakee is still descheduling there and the
        // target runs at most one task; before v5.8 never within an LLC (518cd6234178).
        self.f.TTWU_QUEUE_ON_CPU && on_cpu && self.cpus[target].nr_running <= 1
    }

    /// `__ttwu_queue_wakelist()`: push `p` on `target`'s call_single_queue, mark ttwu_pending,
    /// and kick the target if the list was empty. The caller pays the target's rq line and has
    /// set `remote_wakeup` (WF_MIGRATED), which `sched_ttwu_pending()` consumes.
    fn ttwu_queue_wakelist(&mut self, this: usize, p: TaskId, target: usize) {
        self.wake.wakelist_queued += 1;
        trace_ev!(self, self.wake_event(this, p, target, WakeHow::Wakelist));
        let c = &mut self.cpus[target];
        c.ttwu_pending = true;
        let was_empty = c.csd.is_empty();
        c.csd.push_back(Csd::Ttwu(p));
        self.refresh_idle(target);
        if was_empty {
            self.send_call_function_single_ipi(this, target);
        } else {
            self.wake.wakelist_batched += 1;
        }
    }

    /// `smp_call_function_single()` from `this`: a local call runs at once; a remote one is
    /// queued on the target's call_single_queue, which is kicked if it was empty.
    pub(crate) fn smp_call_function_single(&mut self, this: usize, target: usize, waiter: TaskId) {
        if target == this {
            self.charge(this, self.c.call_function);
            return;
        }
        let c = &mut self.cpus[target];
        let was_empty = c.csd.is_empty();
        c.csd.push_back(Csd::Func { from: this as u32, waiter });
        let line = self.line_xfer(this, target);
        self.charge(this, self.c.wakelist_queue + line);
        if was_empty {
            self.send_call_function_single_ipi(this, target);
        }
    }

    /// A queued function ran on `cpu`: a waiting caller sees the csd unlocked after the line
    /// transfer and stops spinning.
    fn csd_func_done(&mut self, cpu: usize, from: u32, waiter: TaskId) {
        self.charge(cpu, self.c.call_function);
        if waiter != NO_TASK {
            let from = from as usize;
            wakesim_engine::invariant!(self.curr(from) == waiter, "csd waiter is not running on its CPU");
            let left = &mut self.tasks[waiter as usize].csd_pending;
            *left = left.saturating_sub(1);
            if *left > 0 {
                return; // smp_call_function(): still waiting for other CPUs
            }
            let line = self.line_xfer(cpu, from);
            self.busy(from, line, Frame::Sys { phase: SysPhase::Done });
        }
    }

    /// Whether `cpu`'s idle task has TIF_POLLING_NRFLAG set: in the idle loop outside a
    /// non-polling C-state.
    pub(crate) fn is_polling(&self, cpu: usize) -> bool {
        let c = &self.cpus[cpu];
        // do_idle() sets TIF_POLLING_NRFLAG while it waits (poll state or x86 MWAIT) and keeps it
        // through the exit and any interrupt handled there; it clears it before flushing the
        // call-single queue and calling schedule_idle(), which therefore need real IPIs.
        c.curr == c.idle_task && ((c.mode == Mode::Idle && c.polling) || c.poll_exit)
    }

    /// `send_call_function_single_ipi()`: a flag write if the target polls (CSD_POLL, v5.8),
    /// else a real IPI.
    pub(crate) fn send_call_function_single_ipi(&mut self, this: usize, target: usize) {
        if self.f.CSD_POLL && self.is_polling(target) {
            self.poll_wake(this, target);
        } else {
            self.wake.ipis_call_function += 1;
            self.send_ipi(this, target, IpiKind::CallFunction);
        }
    }

    /// Sets NEED_RESCHED on a polling idle CPU; it notices after the flag line's transfer.
    fn poll_wake(&mut self, this: usize, target: usize) {
        self.cpus[target].need_resched = true;
        self.wake.poll_wakes += 1;
        trace_ev!(self, TraceEvent::PollWake { cpu: this as u32, to: target as u32 });
        let lat = self.line_xfer(this, target);
        self.charge(this, lat);
        self.q.push(self.now() + lat, Ev::PollWake { cpu: target as u32 });
    }

    fn send_ipi(&mut self, this: usize, target: usize, kind: IpiKind) {
        trace_ev!(self, TraceEvent::IpiSend { cpu: this as u32, to: target as u32, kind });
        self.wake.ipis_sent += 1;
        self.charge(this, self.c.ipi_send);
        self.wake.cost_ipi_send += self.c.ipi_send;
        let at = self.now() + self.c.ipi_send + self.c.ipi_delivery.get(self.m.dist(this, target));
        self.cpus[target].ipis_in_flight += 1;
        self.q.push(at, Ev::Ipi { cpu: target as u32, kind });
    }

    /// `resched_curr()`, executed by `this` for runqueue `target`.
    pub(crate) fn resched_curr(&mut self, this: usize, target: usize) {
        if self.cpus[target].need_resched {
            return;
        }
        if target == this {
            self.cpus[target].need_resched = true;
            return;
        }
        if self.is_polling(target) {
            self.poll_wake(this, target);
        } else {
            self.cpus[target].need_resched = true;
            self.wake.ipis_resched += 1;
            self.send_ipi(this, target, IpiKind::Reschedule);
        }
    }

    /// `wakeup_preempt()` / `check_preempt_wakeup_fair()` (EEVDF: preempt if the wakee is now
    /// the pick).
    pub(crate) fn wakeup_preempt(&mut self, this: usize, rq: usize, p: TaskId) {
        let curr = self.cpus[rq].curr;
        if self.tasks[curr as usize].is_idle {
            self.resched_curr(this, rq);
            return;
        }
        if curr == p || self.cpus[rq].need_resched || !self.f.WAKEUP_PREEMPTION {
            return;
        }
        let now = self.now();
        let mut resched = self.cpus[rq].cfs.update_curr(&mut self.se, now) && self.f.EEVDF;
        if !resched {
            let f = self.f;
            resched = if f.EEVDF {
                self.cpus[rq].cfs.pick_eevdf(&self.se, &f) == p
            } else {
                self.cpus[rq].cfs.cfs_wakeup_preempts(&self.se, p, &self.t)
            };
            if resched {
                self.wake.wakeup_preemptions += 1;
            }
        }
        if resched {
            self.resched_curr(this, rq);
        }
    }

    /// `ttwu_do_activate()`: enqueue, preemption check, avg_idle update. `rq` lock is held by `this`.
    pub(crate) fn ttwu_do_activate(&mut self, this: usize, rq: usize, p: TaskId, migrated: bool) {
        invariant!(self.holds(this, LockId::Rq(rq as u32)), "ttwu_do_activate without rq lock");
        self.activate_task(rq, p, migrated, false);
        self.tasks[p as usize].state = TState::Runnable;
        self.wakeup_preempt(this, rq, p);
        let now = self.now();
        let c = &mut self.cpus[rq];
        if c.idle_stamp != 0 {
            let delta = now.saturating_sub(c.idle_stamp);
            let avg = c.avg_idle as i64;
            let na = avg + (delta as i64 - avg) / 8;
            c.avg_idle = (na.max(0) as u64).min(2 * c.max_idle_balance_cost);
            c.idle_stamp = 0;
            // SIS_PROP bookkeeping (v5.13–v6.6): wake_avg_idle starts at half of avg_idle.
            c.wake_stamp = self.t.jiffies(now);
            c.wake_avg_idle = c.avg_idle / 2;
        }
    }

    /// The trace event of `cpu`'s current task waking `p` onto `target`.
    fn wake_event(&self, cpu: usize, p: TaskId, target: usize, how: WakeHow) -> TraceEvent {
        TraceEvent::Wakeup { cpu: cpu as u32, waker: self.curr(cpu), wakee: p, target: target as u32, how }
    }

    /// `ttwu_stat()`: counters on the waker's CPU.
    fn ttwu_stat(&mut self, this: usize, p: TaskId, target: usize, sync: bool) {
        self.wake.wakeups += 1;
        if sync {
            self.wake.wakeups_sync += 1;
        }
        self.sched[this].ttwu_count += 1;
        self.tasks[p as usize].counters.nr_wakeups += 1;
        if target == this {
            self.sched[this].ttwu_local += 1;
        } else if let Some(l) = self.m.lowest_common_level(this, target) {
            self.dstat[this][l].ttwu_wake_remote += 1;
        }
    }

    /// `flush_smp_call_function_queue()` on `cpu`: `sched_ttwu_pending()` for the wakelist and
    /// the other queued functions (`CsdPhase`).
    pub(crate) fn flush_smp_call_function_queue(&mut self, cpu: usize, phase: CsdPhase) -> Flow {
        match phase {
            CsdPhase::Start => {
                if self.cpus[cpu].csd.is_empty() {
                    return Flow::Pop;
                }
                if self.cpus[cpu].csd.iter().any(|c| matches!(c, Csd::Ttwu(_))) {
                    if !self.f.TTWU_PENDING_AFTER_ENQUEUE {
                        // Before v6.2 (d6962c4fe8f9) sched_ttwu_pending() clears the flag
                        // before it takes the rq lock: until the enqueues, idle_cpu() sees an
                        // idle CPU and wakers may choose it again.
                        self.cpus[cpu].ttwu_pending = false;
                        self.refresh_idle(cpu);
                    }
                    return self.call(cpu, Frame::Csd { phase: CsdPhase::RqLocked }, Frame::Lock { lock: LockId::Rq(cpu as u32), granted: false });
                }
                self.busy(cpu, self.c.csd_flush, Frame::Csd { phase: CsdPhase::FuncsDone })
            }
            CsdPhase::RqLocked => {
                let mut cost = self.c.csd_flush;
                for i in 0..self.cpus[cpu].csd.len() {
                    if let Csd::Ttwu(p) = self.cpus[cpu].csd[i] {
                        // sched_ttwu_pending(): the target enqueues on its own rq, pulling only
                        // the wakee's own lines (none if it last ran here).
                        cost += self.c.enqueue + self.c.wakeup_preempt + self.take_task_lines(cpu, p);
                    }
                }
                self.busy(cpu, cost, Frame::Csd { phase: CsdPhase::Activate })
            }
            CsdPhase::Activate => {
                while let Some(e) = self.cpus[cpu].csd.pop_front() {
                    match e {
                        Csd::Ttwu(p) => {
                            let migrated = std::mem::take(&mut self.tasks[p as usize].remote_wakeup);
                            self.ttwu_do_activate(cpu, cpu, p, migrated);
                        }
                        Csd::IlbKick => self.nohz_csd_func(cpu),
                        Csd::Func { from, waiter } => self.csd_func_done(cpu, from, waiter),
                    }
                }
                // v6.2 on: cleared once a task is enqueued (nr_running then keeps idle_cpu()
                // false); before, this clears what wakelist entries arrived during the flush set.
                self.cpus[cpu].ttwu_pending = false;
                self.refresh_idle(cpu);
                self.lock_release(cpu, LockId::Rq(cpu as u32));
                Flow::Pop
            }
            CsdPhase::FuncsDone => {
                while let Some(e) = self.cpus[cpu].csd.pop_front() {
                    if let Csd::IlbKick = e {
                        self.nohz_csd_func(cpu);
                    } else if let Csd::Func { from, waiter } = e {
                        self.csd_func_done(cpu, from, waiter);
                    } else {
                        // A ttwu entry arrived during the flush: handle it in a new pass.
                        self.cpus[cpu].csd.push_front(e);
                        self.set_top(cpu, Frame::Csd { phase: CsdPhase::Start });
                        return Flow::Again;
                    }
                }
                Flow::Pop
            }
        }
    }
}
