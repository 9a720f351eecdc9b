//! A small builder for task programs: loops are opened and closed by name-free nesting, and the
//! `LoopStart`/`LoopEnd` indices are patched in when a loop closes.

use crate::{Dur, Op, Program};
use wakesim_engine::Time;

/// `loop forever`: the count the task-file syntax uses for it.
pub const FOREVER: u64 = u64::MAX;

#[derive(Default)]
pub struct Prog {
    ops: Vec<Op>,
    open: Vec<usize>,
}

impl Prog {
    pub fn new() -> Self {
        Prog::default()
    }

    pub fn op(&mut self, op: Op) -> &mut Self {
        self.ops.push(op);
        self
    }

    pub fn compute(&mut self, ns: Time) -> &mut Self {
        if ns > 0 {
            self.ops.push(Op::Compute(Dur::Fixed(ns)));
        }
        self
    }

    pub fn send(&mut self, chan: u32, bytes: u64) -> &mut Self {
        self.op(Op::Send { chan, bytes })
    }

    /// A datagram send: dropped, not blocked, when the receiver's buffer is full.
    pub fn send_dgram(&mut self, chan: u32, bytes: u64) -> &mut Self {
        self.op(Op::SendDgram { chan, bytes })
    }

    pub fn recv(&mut self, chan: u32, bytes: u64) -> &mut Self {
        self.op(Op::Recv { chan, bytes })
    }

    pub fn wait(&mut self, futex: u32) -> &mut Self {
        self.op(Op::FutexWait { futex })
    }

    pub fn wake(&mut self, futex: u32, n: u32) -> &mut Self {
        self.op(Op::FutexWake { futex, n })
    }

    /// A write to a polled pipe: a sync wake of every waiter, and later waits pass.
    pub fn wake_all_sync(&mut self, futex: u32) -> &mut Self {
        self.op(Op::FutexWakeAllSync { futex })
    }

    pub fn mark(&mut self, id: u32) -> &mut Self {
        self.op(Op::Mark(id))
    }

    /// Opens `loop count {`; a count of 0 skips the body.
    pub fn repeat(&mut self, count: u64) -> &mut Self {
        self.open.push(self.ops.len());
        self.ops.push(Op::LoopStart { count, end: 0 });
        self
    }

    /// Closes the innermost open loop.
    pub fn end(&mut self) -> &mut Self {
        let start = self.open.pop().expect("Prog::end without repeat");
        let end = self.ops.len() as u32;
        if let Op::LoopStart { end: e, .. } = &mut self.ops[start] {
            *e = end;
        }
        self.ops.push(Op::LoopEnd { start: start as u32 });
        self
    }

    /// The program, with every loop closed and a final `Exit`.
    pub fn build(&mut self) -> Program {
        assert!(self.open.is_empty(), "Prog::build with an open loop");
        let mut ops = std::mem::take(&mut self.ops);
        if ops.last() != Some(&Op::Exit) {
            ops.push(Op::Exit);
        }
        ops
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_are_patched() {
        let p = Prog::new().repeat(3).mark(1).repeat(2).mark(2).end().end().build();
        assert_eq!(
            p,
            vec![
                Op::LoopStart { count: 3, end: 5 },
                Op::Mark(1),
                Op::LoopStart { count: 2, end: 4 },
                Op::Mark(2),
                Op::LoopEnd { start: 2 },
                Op::LoopEnd { start: 0 },
                Op::Exit
            ]
        );
        let c = crate::op_counts(&p);
        assert_eq!(c.marks, 3 + 6);
    }
}
