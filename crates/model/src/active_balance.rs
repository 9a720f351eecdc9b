//! Active balancing (kernel/sched/fair.c): `need_active_balance()`, the kick in
//! `load_balance()` / `sched_balance_rq()` (`stop_one_cpu_nowait()`), and the stopper's
//! `active_load_balance_cpu_stop()` with its `detach_one_task()` / `attach_one_task()`.
//!
//! A balance pass can only detach queued tasks. When the imbalance is in tasks (`migrate_task`:
//! the local group has spare CPUs) and the busiest CPU runs its only task, or every queued one
//! is cache-hot, the pass fails; after more than `cache_nice_tries + 2` failures of periodic
//! balancing (`imbalanced_active_balance()`, v5.10; before that the same count for any
//! imbalance) the balancer sets the busiest rq's `active_balance` and wakes its stopper. The
//! stopper (stop class, above every fair task) preempts the running task, detaches the least
//! recently run task that may run on the destination, cache-hot or not (`LBF_ACTIVE_LB`,
//! v5.13; before it the failure count had the same effect), and attaches it there.
//!
//! The model runs the stopper's work inside the busiest CPU's `__schedule()`, whose pick it
//! would win: one more context switch, the stopper's rq lock and the detach. The kernel's
//! stopper has a stack of its own, the model's tasks share none, so the attach to the
//! destination (`Frame::ActivePush`) runs once the CPU has switched away from the detached
//! task: after the newidle pass and the switch to the next task that in the kernel follow it.

use crate::balance::LbPhase;
use crate::exec::{Flow, Frame};
use crate::locks::LockId;
use crate::sim::Sim;
use crate::state::{TaskId, NO_TASK};
use wakesim_engine::Time;

/// Where `attach_one_task()` resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushPhase {
    /// Take the destination's rq lock.
    Lock,
    /// `attach_task()`'s cost under it.
    Attach,
    /// Enqueue, preemption check, unlock.
    Done,
}

impl Sim {
    /// `need_active_balance()` → `imbalanced_active_balance()`: tasks to even out and more
    /// than `cache_nice_tries + 2` failed periodic passes at this level.
    pub(crate) fn need_active_balance(&self, dst: usize, level: usize, migrate_task: bool) -> bool {
        self.f.ACTIVE_BALANCE
            && migrate_task
            && self.doms[dst][level].nr_balance_failed > self.m.domains[dst][level].cache_nice_tries + 2
    }

    /// The kick, with the busiest rq's lock held: unless busiest's current task may not run on
    /// `dst` (then LBF_ALL_PINNED, `out_one_pinned`), set `active_balance` and `push_cpu` and,
    /// if no push is pending yet, wake the stopper (`LbPhase::ActiveWake`).
    pub(crate) fn kick_active_balance(&mut self, cpu: usize, f: Frame) -> Flow {
        let Frame::Lb { dst, level, idle, src, mt, .. } = f else { unreachable!() };
        let (d, l, s) = (dst as usize, level as usize, src as usize);
        let curr = self.cpus[s].curr;
        if self.tasks[curr as usize].is_idle || !self.tasks[curr as usize].allowed.contains(d) {
            self.lock_release(cpu, LockId::Rq(src));
            self.lb_back_off(d, l, idle, true);
            return Flow::Pop;
        }
        let started = !self.cpus[s].active_balance;
        if started {
            self.cpus[s].active_balance = true;
            self.cpus[s].push_cpu = dst;
        }
        // The flag and push_cpu are written in busiest's rq line.
        let cost = self.line_xfer(cpu, s);
        self.lock_release(cpu, LockId::Rq(src));
        // need_active_balance() still holds: "We were unbalanced, so reset the balancing
        // interval".
        self.lb_unbalanced_interval(d, l);
        if !started {
            return self.busy(cpu, cost, Frame::Lb { phase: LbPhase::Balanced, dst, level, idle, src, mt });
        }
        // stop_one_cpu_nowait() → cpu_stop_queue_work(): the work goes on busiest's stopper
        // list (its line) and wake_up_process() enqueues the stopper there under its rq lock.
        let wake = self.c.ttwu_base + self.c.rq_lock + self.c.enqueue + self.line_xfer(cpu, s);
        self.busy(cpu, cost + wake, Frame::Lb { phase: LbPhase::ActiveWake, dst, level, idle, src, mt })
    }

    /// `wakeup_preempt()` of the woken stopper: the stop class preempts whatever busiest runs.
    pub(crate) fn wake_stopper(&mut self, cpu: usize, busiest: usize) -> Flow {
        self.resched_curr(cpu, busiest);
        Flow::Pop
    }

    /// `active_load_balance_cpu_stop()`, run by `__schedule()` on `cpu` (its rq lock held, any
    /// blocking `prev` already dequeued) when the stopper is runnable. Returns the stopper's
    /// cost up to the detach; the detached task, if any, waits in `push_task`.
    pub(crate) fn active_load_balance_cpu_stop(&mut self, cpu: usize, prev: TaskId) -> Time {
        let dst = self.cpus[cpu].push_cpu as usize;
        self.cpus[cpu].active_balance = false;
        self.cpus[cpu].stopper_ran = true;
        // context_switch() to the stopper: a still-runnable prev goes back into the tree.
        if self.cpus[cpu].cfs.curr == prev && self.cpus[cpu].cfs.curr_on_rq {
            let now = self.now();
            self.cpus[cpu].cfs.put_prev(&mut self.se, prev);
            self.tasks[prev as usize].enqueued_at = now;
            self.shared_runq_push(cpu, prev);
        }
        // The switch to the stopper and its rq_lock_irq(busiest_rq).
        let mut cost = self.c.context_switch + self.c.rq_lock;
        // "Is there any task to move?" (rq->nr_running counts the stopper itself.)
        if self.cpus[cpu].nr_running == 0 {
            return cost;
        }
        // The lowest domain of the target spanning this CPU.
        let Some(l) = self.m.domains[dst].iter().position(|sd| sd.span.contains(cpu)) else { return cost };
        self.dstat[dst][l].alb_count += 1;
        match self.detach_one_task(cpu, dst, prev) {
            Some(t) => {
                self.deactivate_queued(cpu, t);
                self.tasks[t as usize].migrating = true;
                self.set_task_cpu(t, dst);
                self.dstat[dst][l].alb_pushed += 1;
                // "Active balancing done, reset the failure counter."
                self.doms[dst][l].nr_balance_failed = 0;
                self.cpus[cpu].push_task = t;
                cost += self.c.migrate_task;
            }
            None => self.dstat[dst][l].alb_failed += 1,
        }
        cost
    }

    /// A kick that landed while this CPU's rq lock was free inside a `__schedule()` past its
    /// stopper check (newidle drops the lock): the stopper is runnable here, so the CPU
    /// schedules again rather than clear NEED_RESCHED under it.
    pub(crate) fn resched_for_stopper(&mut self, cpu: usize) {
        if self.cpus[cpu].active_balance {
            self.cpus[cpu].need_resched = true;
        }
    }

    /// The stopper's pending attach, as the frame that runs it on `cpu`'s current stack.
    pub(crate) fn take_active_push(&mut self, cpu: usize) -> Option<Frame> {
        let task = std::mem::replace(&mut self.cpus[cpu].push_task, NO_TASK);
        (task != NO_TASK).then(|| Frame::ActivePush { phase: PushPhase::Lock, task, dst: self.tasks[task as usize].cpu })
    }

    /// `detach_one_task()`: the least recently run queued task that may run on `dst`;
    /// `can_migrate_task()` under LBF_ACTIVE_LB ignores cache hotness. `prev` is off the CPU
    /// in the kernel by now (the stopper runs), though the model switches it out later.
    fn detach_one_task(&self, src: usize, dst: usize, prev: TaskId) -> Option<TaskId> {
        self.cpus[src]
            .cfs
            .queued
            .iter()
            .copied()
            .filter(|&t| {
                let p = &self.tasks[t as usize];
                p.allowed.contains(dst) && (!p.on_cpu || t == prev) && !p.delayed
            })
            .min_by_key(|&t| (self.se[t as usize].exec_start, t))
    }

    /// `attach_one_task()` of the stopper's detached task, once `cpu` has switched away from it:
    /// `Frame::ActivePush`, one step per call (`PushPhase`).
    pub(crate) fn attach_one_task(&mut self, cpu: usize, f: Frame) -> Flow {
        let Frame::ActivePush { phase, task, dst } = f else { unreachable!() };
        let fr = |phase: PushPhase| Frame::ActivePush { phase, task, dst };
        let d = dst as usize;
        match phase {
            PushPhase::Lock => self.call(cpu, fr(PushPhase::Attach), Frame::Lock { lock: LockId::Rq(dst), granted: false }),
            PushPhase::Attach => {
                // As attach_tasks() in a balance pass: enqueue and preemption check in the
                // destination rq's lines (migrate_task covered the PELT detach/attach).
                let cost = self.c.wakeup_preempt + self.line_xfer(cpu, d);
                self.busy(cpu, cost, fr(PushPhase::Done))
            }
            PushPhase::Done => {
                self.tasks[task as usize].migrating = false;
                self.activate_task(d, task, true, false);
                self.wakeup_preempt(cpu, d, task);
                self.lock_release(cpu, LockId::Rq(dst));
                self.wake.migrations_balance += 1;
                Flow::Pop
            }
        }
    }
}
