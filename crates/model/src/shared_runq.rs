//! SHARED_RUNQ — David Vernet's shared runqueue (Meta, 2023, v3; not merged; research §11.1).
//!
//! Every LLC gets a FIFO of runnable tasks, sharded into groups of about six CPUs, each shard
//! with its own lock. v3 publishes a task whenever it is inserted into a CFS tree (wakeup,
//! migration in, preemption of the running task) and retracts it whenever it leaves the tree
//! (picked to run, migrated away), so every such event takes a shard lock. A CPU about to go
//! idle first pops the head of the LLC's shards and pulls that task over from its runqueue
//! (`shared_runq_pick_next_task`: drop the own rq lock, lock the source rq, `move_queued_task`),
//! before — v3 — or after — the "gated" v4 fixes — the usual newidle gates.
//!
//! A pull is `Frame::SharedRunqPull`, walked through its [`SharedRunqPhase`]s by
//! `shared_runq_pick_next_task()`.

use crate::exec::{Flow, Frame};
use crate::locks::LockId;
use crate::sim::Sim;
use crate::state::{TaskId, NO_TASK};

/// Cost of the list operation inside the shard lock, ns [EST: a list_add/list_del and two
/// pointer writes on lines already held].
const SHARD_OP: u64 = 20;



/// Where a `shared_runq_pick_next_task()` pull resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedRunqPhase {
    /// Pop the head of the LLC's shards; drop the own rq lock, lock the task's.
    Pick,
    /// The source rq is locked: `move_queued_task()` if the task is still movable.
    SourceLocked,
    /// Moved: unlock the source, relock our own.
    Moved,
    /// Our rq is relocked: activate the task here.
    Relocked,
    /// Attached.
    Attached,
}

impl Sim {
    fn shard_op(&mut self, cpu: usize, shard: usize) {
        let mut line = self.shared_runq.shards[shard].line;
        self.line_rmw(cpu, &mut line, SHARD_OP);
        self.shared_runq.shards[shard].line = line;
    }

    /// v3 `__enqueue_entity` hook: publish a migratable task on the home shard of `cpu`.
    pub(crate) fn shared_runq_push(&mut self, cpu: usize, p: TaskId) {
        if !self.f.SHARED_RUNQ || self.tasks[p as usize].nr_cpus_allowed <= 1 {
            return;
        }
        if self.shared_runq.queued_on[p as usize] != u32::MAX {
            return;
        }
        let s = self.shared_runq.home[cpu] as usize;
        self.shard_op(cpu, s);
        self.shared_runq.shards[s].tasks.push_back(p);
        self.shared_runq.queued_on[p as usize] = s as u32;
    }

    /// v3 `__dequeue_entity` hook: retract `p` (picked to run, or moved away) from its shard.
    pub(crate) fn shared_runq_retract(&mut self, cpu: usize, p: TaskId) {
        if !self.f.SHARED_RUNQ {
            return;
        }
        let s = self.shared_runq.queued_on[p as usize];
        if s == u32::MAX {
            return;
        }
        let s = s as usize;
        self.shard_op(cpu, s);
        let list = &mut self.shared_runq.shards[s].tasks;
        if let Some(i) = list.iter().position(|&t| t == p) {
            list.remove(i);
        }
        self.shared_runq.queued_on[p as usize] = u32::MAX;
    }

    /// `shared_runq_pick_next_task()`, first part: walk the LLC's shards from the home shard,
    /// peeking without the lock, locking a non-empty one and unlinking its head if it may run
    /// here.
    fn shared_runq_pop(&mut self, cpu: usize) -> TaskId {
        let l = self.cpus[cpu].llc as usize;
        let (base, n) = self.shared_runq.llc_shards[l];
        let home = self.shared_runq.home[cpu] - base;
        for k in 0..n {
            let s = (base + (home + k) % n) as usize;
            // Lockless peek: a read of the shard's line.
            let owner = self.shared_runq.shards[s].line.owner as usize;
            let peek = self.line_xfer(cpu, owner);
            self.charge(cpu, peek);
            if self.shared_runq.shards[s].tasks.is_empty() {
                continue;
            }
            self.shard_op(cpu, s);
            let head = self.shared_runq.shards[s].tasks.front().copied();
            match head {
                Some(p) if self.tasks[p as usize].allowed.contains(cpu) => {
                    self.shared_runq.shards[s].tasks.pop_front();
                    self.shared_runq.queued_on[p as usize] = u32::MAX;
                    self.wake.shared_runq_pops += 1;
                    return p;
                }
                _ => continue,
            }
        }
        NO_TASK
    }

    /// The pull, run with the own rq lock held on entry and on exit; `cpu.lb_moved` reports
    /// whether a task came over.
    /// `shared_runq_pick_next_task()`, one step per call (`SharedRunqPhase`).
    pub(crate) fn shared_runq_pick_next_task(&mut self, cpu: usize, f: Frame) -> Flow {
        let Frame::SharedRunqPull { phase, task, src } = f else { unreachable!() };
        let fr = |phase: SharedRunqPhase, task: TaskId, src: u32| Frame::SharedRunqPull { phase, task, src };
        match phase {
            SharedRunqPhase::Pick => {
                self.cpus[cpu].lb_moved = 0;
                let p = self.shared_runq_pop(cpu);
                if p == NO_TASK {
                    return Flow::Pop;
                }
                // Drop our rq lock, take the task's (task_rq_lock).
                self.lock_release(cpu, LockId::Rq(cpu as u32));
                self.cpus[cpu].irqs_off += 1;
                let s = self.tasks[p as usize].cpu;
                self.call(cpu, fr(SharedRunqPhase::SourceLocked, p, s), Frame::Lock { lock: LockId::Rq(s), granted: false })
            }
            SharedRunqPhase::SourceLocked => {
                let s = src as usize;
                let t = &self.tasks[task as usize];
                let movable = self.se[task as usize].on_rq && !t.on_cpu && t.cpu == src && !t.migrating && s != cpu;
                if !movable {
                    self.wake.shared_runq_stale += 1;
                    self.lock_release(cpu, LockId::Rq(src));
                    return self.call(cpu, fr(SharedRunqPhase::Relocked, NO_TASK, src), Frame::Lock { lock: LockId::Rq(cpu as u32), granted: false });
                }
                // move_queued_task(): deactivate on the source, set_task_cpu, activate here.
                self.deactivate_queued(s, task);
                self.tasks[task as usize].migrating = true;
                self.set_task_cpu(task, cpu);
                let cost = self.c.migrate_task + self.line_xfer(cpu, s);
                self.busy(cpu, cost, fr(SharedRunqPhase::Moved, task, src))
            }
            SharedRunqPhase::Moved => {
                self.lock_release(cpu, LockId::Rq(src));
                self.call(cpu, fr(SharedRunqPhase::Relocked, task, src), Frame::Lock { lock: LockId::Rq(cpu as u32), granted: false })
            }
            SharedRunqPhase::Relocked => {
                self.cpus[cpu].irqs_off -= 1;
                if task == NO_TASK {
                    return Flow::Pop;
                }
                self.tasks[task as usize].migrating = false;
                self.activate_task(cpu, task, true, false);
                self.wakeup_preempt(cpu, cpu, task);
                self.wake.migrations_balance += 1;
                self.wake.shared_runq_pulls += 1;
                self.cpus[cpu].lb_moved = 1;
                self.busy(cpu, self.c.wakeup_preempt, fr(SharedRunqPhase::Attached, task, src))
            }
            SharedRunqPhase::Attached => Flow::Pop,
        }
    }
}
