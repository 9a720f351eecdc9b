//! Spinlocks as FIFO resources (MODELING.md "Shared state has a location").
//!
//! The holder's CPU is busy for the hold time; waiters spin (their CPUs are busy, interrupts
//! off) and acquire in arrival order, as a queued spinlock hands off. Each acquisition pays the
//! transfer of the lock's cache line from the previous holder's CPU.

use std::collections::VecDeque;

/// Which lock (rq locks are indexed by CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockId {
    Rq(u32),
}

#[derive(Clone, Debug)]
pub struct SpinLock {
    pub holder: Option<u32>,
    pub waiters: VecDeque<u32>,
    /// CPU that last held the lock (owner of its cache line).
    pub last_cpu: u32,
    pub acquisitions: u64,
    pub contended: u64,
}

impl SpinLock {
    pub fn new(home_cpu: u32) -> Self {
        SpinLock { holder: None, waiters: VecDeque::new(), last_cpu: home_cpu, acquisitions: 0, contended: 0 }
    }
}

use crate::exec::{Flow, Frame};
use crate::sim::Sim;
use crate::state::Mode;

impl Sim {
    fn lock_mut(&mut self, id: LockId) -> &mut SpinLock {
        match id {
            LockId::Rq(c) => &mut self.cpus[c as usize].lock,
        }
    }

    /// `raw_spin_lock_irqsave()`: acquire now if free (paying the line transfer from the last
    /// holder), else queue and spin. Interrupts stay off until the matching release.
    pub(crate) fn lock_acquire(&mut self, cpu: usize, id: LockId) -> Flow {
        self.cpus[cpu].irqs_off += 1;
        self.wake.rq_lock_acquires += 1;
        let l = self.lock_mut(id);
        l.acquisitions += 1;
        if l.holder.is_none() {
            // Uncontended: taken at once; the acquisition (plus the line transfer from the last
            // holder) is paid in the CPU's next step, while it holds the lock.
            l.holder = Some(cpu as u32);
            let from = std::mem::replace(&mut l.last_cpu, cpu as u32) as usize;
            let cost = self.c.rq_lock + self.c.line.get(self.m.dist(from, cpu));
            self.charge(cpu, cost);
            return Flow::Pop;
        }
        l.contended += 1;
        l.waiters.push_back(cpu as u32);
        self.wake.rq_lock_contended += 1;
        let now = self.now();
        let c = &mut self.cpus[cpu];
        c.mode = Mode::Spin;
        c.step_end = now; // spin start, for accounting
        self.set_top(cpu, Frame::Lock { lock: id, granted: false });
        Flow::Wait
    }


    /// `raw_spin_unlock_irqrestore()`: hand the lock to the first waiter, which resumes after the
    /// line transfer.
    pub(crate) fn lock_release(&mut self, cpu: usize, id: LockId) {
        let now = self.now();
        let l = self.lock_mut(id);
        invariant_holder(l, cpu, id);
        l.holder = None;
        if let Some(next) = l.waiters.pop_front() {
            l.holder = Some(next);
            l.last_cpu = next;
            let next = next as usize;
            let spin = now.saturating_sub(self.cpus[next].step_end);
            self.wake.rq_lock_spin += spin;
            self.cpus[next].busy_time += spin;
            let cost = self.c.rq_lock + self.c.line.get(self.m.dist(cpu, next));
            self.busy(next, cost, Frame::Lock { lock: id, granted: true });
        }
        let c = &mut self.cpus[cpu];
        debug_assert!(c.irqs_off > 0);
        c.irqs_off = c.irqs_off.saturating_sub(1);
    }

    pub(crate) fn holds(&self, cpu: usize, id: LockId) -> bool {
        match id {
            LockId::Rq(c) => self.cpus[c as usize].lock.holder == Some(cpu as u32),
        }
    }
}

fn invariant_holder(l: &SpinLock, cpu: usize, id: LockId) {
    wakesim_engine::invariant!(l.holder == Some(cpu as u32), "cpu {cpu} releases {id:?} held by {:?}", l.holder);
}
