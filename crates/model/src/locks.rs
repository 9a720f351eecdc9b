//! Spinlocks as FIFO resources (docs/model.md, "Shared state has a location"): the mechanism
//! around [`SpinLock`] (`raw_spinlock_t`, in the data layer).
//!
//! The holder's CPU is busy for the hold time; waiters spin (their CPUs are busy, interrupts
//! off) and acquire in arrival order, as a queued spinlock hands off. Each acquisition pays the
//! transfer of the lock's cache line from the previous holder's CPU.

pub use crate::data::SpinLock;

/// Which lock (rq locks are indexed by CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockId {
    Rq(u32),
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
        if let Some(from) = self.lock_mut(id).acquire_or_queue(cpu as u32) {
            // Uncontended: taken at once; the acquisition (plus the line transfer from the last
            // holder) is paid in the CPU's next step, while it holds the lock.
            let cost = self.c.rq_lock + self.line_xfer(from as usize, cpu);
            self.charge(cpu, cost);
            return Flow::Pop;
        }
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
        if let Some(next) = l.release() {
            let next = next as usize;
            let spin = now.saturating_sub(self.cpus[next].step_end);
            self.wake.rq_lock_spin += spin;
            self.cpus[next].busy_time += spin;
            let cost = self.c.rq_lock + self.line_xfer(cpu, next);
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
