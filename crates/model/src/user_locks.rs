//! Per-CPU user-space spinlocks: schbench's `lock_this_cpu()` (masoncl/schbench `schbench.c`,
//! "add per-cpu spin locking during the work", 2023), the ops `CpuSpinLock` / `CpuSpinUnlock`.
//!
//! ```c
//! again: cpu = sched_getcpu(); lock = &per_cpu_locks[cpu].lock;
//!        while (pthread_mutex_trylock(lock) != 0) nop;
//!        if (sched_getcpu() != cpu) { pthread_mutex_unlock(lock); goto again; }
//! ```
//!
//! Everything happens in user space, so it is user compute to the kernel: a spinner burns its
//! slice (vruntime, busy time) and is preempted by the tick or a wakeup like any user code.
//! That is the point of the lock (Chris Mason): two workers stacked on one CPU, the tick
//! preempts the holder mid-work, and the other one spins away its slice.
//!
//! Mechanism, per lock (array `set`, CPU `cpu`) = index `set * nr_cpus + cpu`:
//! * trying: free → taken at once, and the `trylock` pays the transfer of the lock's cache
//!   line from the CPU that last wrote it (user compute); then the `sched_getcpu()` check:
//!   on another CPU than the lock's, unlock and start over with this CPU's lock;
//! * held → the task spins: user compute of [`SPIN_FOREVER`], listed on the lock. It keeps
//!   spinning on the lock it sampled if it is migrated, as the real loop does;
//! * unlock: the holder clears the lock (user store; paying the line transfer only if it
//!   migrated while holding). A spinner running in user space right then has its spin cut
//!   to its next `trylock` (1 ns: the loop is a few instructions); a spinner preempted or in
//!   an interrupt handler re-tries when it returns to user space ([`Sim::cpu_spin_resumable`]).
//!   No futex: `trylock` spinners never sleep, so the unlock wakes nobody.
//!
//! Not modelled: the failed `trylock`s of a spinner on another CPU than the holder's pull the
//! line away and back (only the acquisition pays a transfer); schbench's `per_cpu_lock` is
//! `__attribute__((aligned))` (16 bytes on x86-64 without `-march`: a 48-byte stride for the
//! 40-byte `pthread_mutex_t`), so neighbouring CPUs' locks share lines — here each lock has
//! its own line.

use crate::exec::Flow;
use crate::sim::Sim;
use crate::state::{Mode, TaskId, NO_TASK};
use wakesim_engine::{invariant, Time};

/// User compute standing for "spin until something changes" (2^50 ns, 13 days): the spin
/// ends when the unlock cuts it short or the task re-checks after being interrupted.
pub const SPIN_FOREVER: Time = 1 << 50;

/// What a task's current `CpuSpinLock` op is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuLockStep {
    /// Not in `lock_this_cpu()`.
    Idle,
    /// Spinning on this lock (index into `Sim::cpu_locks`).
    Spin(u32),
    /// Took this lock; the `trylock`'s line transfer is under way, then `sched_getcpu()`.
    Check(u32),
}

/// One per-CPU lock.
#[derive(Clone, Debug)]
pub struct CpuLock {
    pub holder: TaskId,
    /// CPU that last wrote the lock's cache line (its owner).
    pub last_cpu: u32,
    /// Tasks spinning on it, in arrival order.
    pub spinners: Vec<TaskId>,
}

impl CpuLock {
    pub fn new(cpu: u32) -> Self {
        CpuLock { holder: NO_TASK, last_cpu: cpu, spinners: Vec::new() }
    }
}

impl Sim {
    /// One pass of `lock_this_cpu()` for `t` running on `cpu` (op `CpuSpinLock { set }`):
    /// `None` when the task holds the lock of the CPU it runs on and its program moves on,
    /// else the flow of the user compute it started (the line transfer, or the spin).
    pub(crate) fn cpu_spin_lock(&mut self, cpu: usize, t: TaskId, set: u32) -> Option<Flow> {
        let n = self.nr_cpus();
        let mut unlock_cost = 0;
        if let CpuLockStep::Check(l) = self.tasks[t as usize].cpu_lock_step {
            // `cur_cpu = sched_getcpu()` after the trylock succeeded.
            self.tasks[t as usize].cpu_lock_step = CpuLockStep::Idle;
            if l as usize % n == cpu {
                self.tasks[t as usize].pc += 1;
                return None;
            }
            // "we got the lock but we migrated": unlock and start over with this CPU's lock.
            self.wake.cpu_lock_migrated += 1;
            unlock_cost = self.cpu_unlock(cpu, t, l);
        }
        let task = &self.tasks[t as usize];
        invariant!(
            !task.cpu_locks_held.iter().any(|&h| h as usize / n == set as usize),
            "task {} takes a second lock of CPU-lock array {set} (a trylock on its own lock spins forever)",
            task.name
        );
        let l = match task.cpu_lock_step {
            CpuLockStep::Spin(l) => l,
            _ => set * n as u32 + cpu as u32, // sched_getcpu()
        };
        Some(self.cpu_trylock(cpu, t, l, unlock_cost))
    }

    /// `pthread_mutex_trylock()` in its spin loop: take lock `l` if free, else spin on it.
    /// `before`: user time owed by what the task just did (an unlock's line transfer).
    fn cpu_trylock(&mut self, cpu: usize, t: TaskId, l: u32, before: Time) -> Flow {
        let lock = &mut self.cpu_locks[l as usize];
        let task = &mut self.tasks[t as usize];
        if lock.holder == NO_TASK {
            lock.holder = t;
            let spun = task.cpu_lock_step == CpuLockStep::Spin(l);
            if spun {
                lock.spinners.retain(|&s| s != t);
                self.wake.cpu_lock_contended += 1;
            }
            self.wake.cpu_lock_acquires += 1;
            let from = std::mem::replace(&mut lock.last_cpu, cpu as u32) as usize;
            task.cpu_locks_held.push(l);
            task.cpu_lock_step = CpuLockStep::Check(l);
            // The successful cmpxchg takes the line exclusive on this CPU.
            task.compute_left = before + crate::mesh::line_xfer(&self.m, &self.c, &self.mesh_off, from, cpu).max(1);
            return self.start_user(cpu);
        }
        if task.cpu_lock_step != CpuLockStep::Spin(l) {
            lock.spinners.push(t);
            task.cpu_lock_step = CpuLockStep::Spin(l);
        }
        task.compute_left = SPIN_FOREVER;
        self.start_user(cpu)
    }

    /// `pthread_mutex_unlock()` of the lock `t` holds in `set` (op `CpuSpinUnlock`): returns
    /// the user compute the store costs (a line transfer if `t` migrated while holding).
    pub(crate) fn cpu_spin_unlock(&mut self, cpu: usize, t: TaskId, set: u32) -> Time {
        let n = self.nr_cpus() as u32;
        let held = self.tasks[t as usize].cpu_locks_held.iter().copied().find(|&l| l / n == set);
        invariant!(held.is_some(), "task {} unlocks a CPU lock of set {set} it does not hold", self.tasks[t as usize].name);
        match held {
            Some(l) => self.cpu_unlock(cpu, t, l),
            None => 0,
        }
    }

    /// Releases lock `l` held by `t` on `cpu`; spinners running in user space right now see it
    /// at their next trylock. Returns the cost of the releasing store.
    fn cpu_unlock(&mut self, cpu: usize, t: TaskId, l: u32) -> Time {
        let lock = &mut self.cpu_locks[l as usize];
        invariant!(lock.holder == t, "task {t} releases CPU lock {l} held by {}", lock.holder);
        lock.holder = NO_TASK;
        let from = std::mem::replace(&mut lock.last_cpu, cpu as u32) as usize;
        self.tasks[t as usize].cpu_locks_held.retain(|&h| h != l);
        for i in 0..self.cpu_locks[l as usize].spinners.len() {
            let s = self.cpu_locks[l as usize].spinners[i];
            let sc = self.tasks[s as usize].cpu as usize;
            let c = &self.cpus[sc];
            if c.curr == s && c.mode == Mode::User && c.irqs_off == 0 {
                self.suspend_user(sc);
                self.tasks[s as usize].compute_left = 1;
                self.start_user(sc);
            }
        }
        self.line_xfer(from, cpu)
    }

    /// Whether `t`, back in user space in the middle of a spin, must re-try at once because
    /// its lock was released while it was preempted or handling an interrupt.
    pub(crate) fn cpu_spin_resumable(&self, t: TaskId) -> bool {
        match self.tasks[t as usize].cpu_lock_step {
            CpuLockStep::Spin(l) => self.cpu_locks[l as usize].holder == NO_TASK,
            _ => false,
        }
    }

    /// Accounts `ns` of user time of `t` (ended or interrupted): spin time if it was spinning.
    #[inline]
    pub(crate) fn note_user_time(&mut self, t: usize, ns: Time) {
        if let CpuLockStep::Spin(_) = self.tasks[t].cpu_lock_step {
            self.wake.cpu_lock_spin += ns;
        }
    }

    /// Full check: a lock's holder lists it as held and is not dead, its spinners are
    /// spinning on it, and every held lock names its holder.
    pub(crate) fn check_cpu_locks(&self) {
        for (l, lock) in self.cpu_locks.iter().enumerate() {
            if lock.holder != NO_TASK {
                let h = &self.tasks[lock.holder as usize];
                invariant!(h.cpu_locks_held.contains(&(l as u32)), "CPU lock {l}: holder {} does not list it", h.name);
                invariant!(h.exit_time.is_none(), "CPU lock {l}: held by {}, which exited", h.name);
            }
            for &s in &lock.spinners {
                let st = self.tasks[s as usize].cpu_lock_step;
                invariant!(st == CpuLockStep::Spin(l as u32), "CPU lock {l}: spinner {} is {st:?}", self.tasks[s as usize].name);
            }
        }
        for (t, task) in self.tasks.iter().enumerate() {
            for &l in &task.cpu_locks_held {
                invariant!(self.cpu_locks[l as usize].holder == t as TaskId, "task {} lists CPU lock {l} it does not hold", task.name);
            }
        }
    }
}
