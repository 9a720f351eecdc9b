//! pthread mutexes as glibc implements the default (`PTHREAD_MUTEX_NORMAL`) kind: a futex
//! word and the lowlevellock protocol of `nptl/lowlevellock.c` (glibc 2.34+; the protocol is
//! Drepper's "Futexes Are Tricky", 2011, mutex take 2). The ops `Lock` / `Unlock`.
//!
//! * `pthread_mutex_lock()` → `lll_lock()`: a `cmpxchg` of the word 0 → 1 in user space. No
//!   syscall when the mutex is free.
//! * Taken: `__lll_lock_wait()` loops on `xchg(word, 2) != 0` → `futex_wait(word, 2)`. The
//!   futex syscall sleeps only if the word is still 2 when the kernel checks it (else EAGAIN
//!   and the loop retries in user space). A woken waiter is not handed the lock: it retries
//!   the `xchg` and sleeps again if another task barged in meanwhile.
//! * A task that went through `__lll_lock_wait()` takes the mutex with the word at 2 (its
//!   `xchg` wrote 2), so its unlock makes the wake syscall even when nobody sleeps any more.
//! * `pthread_mutex_unlock()` → `lll_unlock()`: `xchg(word, 0)` in user space; if the old
//!   value was 2, `__lll_unlock_wake()` = `futex_wake(word, 1)`: one waiter, a non-sync
//!   `try_to_wake_up`.
//!
//! The user-space atomics' time is part of the caller's compute (a recording's bursts hold
//! it); the syscalls cost `syscall` plus `futex_wait` / `futex_wake` of the cost profile.
//!
//! Not modelled: adaptive and recursive kinds, priority inheritance, the futex hash bucket's
//! lock and lines (mutex futexes use no `Futex` object), robust lists.

use crate::exec::{Flow, Frame};
use crate::syscalls::SysPhase;
use crate::sim::Sim;
use crate::state::TaskId;

impl Sim {
    /// `pthread_mutex_lock()` in user space: `None` if it took the mutex (the op is done), else
    /// the flow into `__lll_lock_wait()`'s `futex_wait` syscall (the op stays current, so the
    /// task retries it when the syscall returns).
    pub(crate) fn pthread_mutex_lock(&mut self, cpu: usize, t: TaskId, id: u32) -> Option<Flow> {
        let task = &mut self.tasks[t as usize];
        let mx = &mut self.mutexes[id as usize];
        if mx.owner.is_none() {
            mx.owner = Some(t);
            // __lll_lock_wait()'s xchg leaves 2 in the word.
            if std::mem::take(&mut task.lock_waited) {
                mx.contended = true;
            }
            task.pc += 1;
            return None;
        }
        task.lock_waited = true;
        mx.contended = true;
        Some(self.call(cpu, Frame::User, Frame::Sys { phase: SysPhase::Entry }))
    }

    /// `futex_wait(word, 2)` of `__lll_lock_wait()`, in the kernel: sleeps if the mutex is still
    /// held, else returns at once (EAGAIN) for user space to retry.
    pub(crate) fn lll_lock_wait(&mut self, id: u32, t: TaskId) -> bool {
        let mx = &mut self.mutexes[id as usize];
        if mx.owner.is_none() {
            return false;
        }
        mx.waiters.push_back(t);
        true
    }

    /// `pthread_mutex_unlock()` in user space: `None` if no wake is needed (the op is done),
    /// else the flow into `__lll_unlock_wake()`'s `futex_wake` syscall.
    pub(crate) fn pthread_mutex_unlock(&mut self, cpu: usize, t: TaskId, id: u32) -> Option<Flow> {
        let mx = &mut self.mutexes[id as usize];
        // A normal mutex does not check its owner: any unlock releases it.
        mx.owner = None;
        if !std::mem::take(&mut mx.contended) {
            self.tasks[t as usize].pc += 1;
            return None;
        }
        Some(self.call(cpu, Frame::User, Frame::Sys { phase: SysPhase::Entry }))
    }

    /// `futex_wake(word, 1)` of `__lll_unlock_wake()`, in the kernel: the first waiter (if any)
    /// goes on the task's wake list. The op is done.
    pub(crate) fn lll_unlock_wake(&mut self, id: u32, t: TaskId) {
        self.tasks[t as usize].pc += 1;
        if let Some(w) = self.mutexes[id as usize].waiters.pop_front() {
            self.tasks[t as usize].wake_list.push_back(w);
        }
    }
}
