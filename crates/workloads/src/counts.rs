//! How many times each operation of a program executes, with loop counts multiplied out.
//!
//! Used to check task files (a channel whose readers want more bytes than its writers send can
//! never finish) and by tests and reports. All arithmetic saturates, so `loop forever` counts are
//! `u64::MAX` rather than an overflow.

use crate::{Op, Program};

/// Executed-operation totals of one program (or summed over several).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpCounts {
    pub computes: u64,
    pub sleeps: u64,
    pub futex_waits: u64,
    pub futex_wakes: u64,
    pub marks: u64,
    pub call_funcs: u64,
    pub barriers: u64,
    pub locks: u64,
    /// Per-CPU spinlock takes and releases (`CpuSpinLock`, `CpuSpinUnlock`).
    pub cpu_locks: u64,
    /// Per channel index: `(sends, bytes sent)`.
    pub sent: Vec<(u64, u64)>,
    /// Per channel index: `(recvs, bytes received)`.
    pub received: Vec<(u64, u64)>,
}

impl OpCounts {
    /// Total `Send` operations over all channels.
    pub fn sends(&self) -> u64 {
        self.sent.iter().fold(0u64, |a, s| a.saturating_add(s.0))
    }

    /// Total `Recv` operations over all channels.
    pub fn recvs(&self) -> u64 {
        self.received
            .iter()
            .fold(0u64, |a, s| a.saturating_add(s.0))
    }

    /// Adds `other` to `self`.
    pub fn add(&mut self, other: &OpCounts) {
        self.add_scaled(other, 1);
    }

    fn add_scaled(&mut self, o: &OpCounts, k: u64) {
        let m = |x: u64| x.saturating_mul(k);
        self.computes = self.computes.saturating_add(m(o.computes));
        self.sleeps = self.sleeps.saturating_add(m(o.sleeps));
        self.futex_waits = self.futex_waits.saturating_add(m(o.futex_waits));
        self.futex_wakes = self.futex_wakes.saturating_add(m(o.futex_wakes));
        self.marks = self.marks.saturating_add(m(o.marks));
        self.call_funcs = self.call_funcs.saturating_add(m(o.call_funcs));
        self.barriers = self.barriers.saturating_add(m(o.barriers));
        self.locks = self.locks.saturating_add(m(o.locks));
        self.cpu_locks = self.cpu_locks.saturating_add(m(o.cpu_locks));
        add_vec(&mut self.sent, &o.sent, k);
        add_vec(&mut self.received, &o.received, k);
    }
}

fn add_vec(dst: &mut Vec<(u64, u64)>, src: &[(u64, u64)], k: u64) {
    if dst.len() < src.len() {
        dst.resize(src.len(), (0, 0));
    }
    for (d, s) in dst.iter_mut().zip(src) {
        d.0 = d.0.saturating_add(s.0.saturating_mul(k));
        d.1 = d.1.saturating_add(s.1.saturating_mul(k));
    }
}

fn bump(v: &mut Vec<(u64, u64)>, chan: u32, bytes: u64) {
    let c = chan as usize;
    if v.len() <= c {
        v.resize(c + 1, (0, 0));
    }
    v[c].0 = v[c].0.saturating_add(1);
    v[c].1 = v[c].1.saturating_add(bytes);
}

/// Counts the operations one run of `program` executes. An `Exit` inside a loop ends the count
/// in the first iteration, as it ends the task. Malformed loop indices stop the walk (no panic).
pub fn op_counts(program: &Program) -> OpCounts {
    let mut acc = OpCounts::default();
    walk(program, 0, program.len(), &mut acc, 0);
    acc
}

/// Walks `prog[pc..end]` once; returns true if an `Exit` was reached.
fn walk(prog: &Program, mut pc: usize, end: usize, acc: &mut OpCounts, depth: usize) -> bool {
    if depth > 1024 {
        return true;
    }
    while pc < end {
        let Some(op) = prog.get(pc) else { return true };
        match *op {
            Op::Compute(_) => acc.computes = acc.computes.saturating_add(1),
            Op::Sleep(_) | Op::SleepUntilNext { .. } => acc.sleeps = acc.sleeps.saturating_add(1),
            Op::CallFunc { .. } | Op::CallFuncAll { .. } => acc.call_funcs = acc.call_funcs.saturating_add(1),
            Op::Barrier { .. } => acc.barriers = acc.barriers.saturating_add(1),
            Op::Lock { .. } | Op::Unlock { .. } => acc.locks = acc.locks.saturating_add(1),
            Op::CpuSpinLock { .. } | Op::CpuSpinUnlock { .. } => acc.cpu_locks = acc.cpu_locks.saturating_add(1),
            Op::FutexWait { .. } => acc.futex_waits = acc.futex_waits.saturating_add(1),
            Op::FutexWake { .. } | Op::FutexWakeWaiters { .. } | Op::FutexWakeAllSync { .. } => {
                acc.futex_wakes = acc.futex_wakes.saturating_add(1)
            }
            Op::Mark(_) => acc.marks = acc.marks.saturating_add(1),
            Op::Send { chan, bytes } | Op::SendDgram { chan, bytes } => bump(&mut acc.sent, chan, bytes),
            Op::Recv { chan, bytes } => bump(&mut acc.received, chan, bytes),
            Op::Exit => return true,
            Op::LoopEnd { .. } => return true, // only reached if malformed
            Op::LoopStart { count, end: e } => {
                let e = e as usize;
                if e <= pc || e >= end {
                    return true;
                }
                let mut body = OpCounts::default();
                let exited = walk(prog, pc + 1, e, &mut body, depth + 1);
                if exited {
                    acc.add_scaled(&body, u64::from(count > 0));
                    return true;
                }
                acc.add_scaled(&body, count);
                pc = e;
            }
        }
        pc += 1;
    }
    false
}
