//! `raw_spinlock_t` as a queued spinlock: a holder, FIFO waiters, and the CPU whose cache holds
//! the lock's line. See `locks` for the mechanism (spinning, interrupts off, costs).

use std::collections::VecDeque;

/// A `raw_spinlock_t` (qspinlock): waiters acquire in arrival order.
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

    /// `cpu` tries to take the lock. If it is free, `cpu` holds it and the CPU whose cache held
    /// the lock's line (the last holder) is returned; otherwise `cpu` queues behind the other
    /// waiters and `None` is returned.
    #[inline]
    pub fn acquire_or_queue(&mut self, cpu: u32) -> Option<u32> {
        self.acquisitions += 1;
        if self.holder.is_none() {
            self.holder = Some(cpu);
            return Some(std::mem::replace(&mut self.last_cpu, cpu));
        }
        self.contended += 1;
        self.waiters.push_back(cpu);
        None
    }

    /// The holder releases the lock: the first waiter, if any, now holds it and is returned
    /// (the line moves from the releasing CPU to it).
    #[inline]
    pub fn release(&mut self) -> Option<u32> {
        self.holder = None;
        let next = self.waiters.pop_front()?;
        self.holder = Some(next);
        self.last_cpu = next;
        Some(next)
    }
}
