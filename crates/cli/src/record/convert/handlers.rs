//! The conversion's event handlers: each recorded event (a switch, a syscall's entry and
//! exit, a wakeup, a fork or exit) updates its task's state and adds the steps it implies; a
//! block meets its wakeup in `resolve`, which decides what the pair becomes (module docs of
//! `convert`).

use super::*;

impl Conv<'_> {
    pub(super) fn event(&mut self, i: usize, e: &Ev, set: &HashSet<u32>) {
        self.line = e.line;
        let sel = |p: u32| set.contains(&p);
        let counts = |p: u32| self.workload.contains(&p);
        if let Kind::Switch { next, .. } = e.kind {
            if let Some(s) = self.other_since.remove(&e.cpu) {
                self.other.push((s, e.ts));
            }
            if next != 0 && !counts(next) {
                self.other_since.insert(e.cpu, e.ts);
            }
        }
        if e.ts < self.t0 {
            return;
        }
        if sel(e.pid) && !matches!(e.kind, Kind::Switch { .. }) {
            // The task whose event this is runs (tracefs can miss a switch to a task the wakelist
            // just woke): a block it has not seen the end of is over.
            let counts = self.workload.contains(&e.pid);
            let t = self.task(e.pid, e.ts);
            if t.since.is_none() {
                t.since = Some(e.ts);
                if let Some(b) = t.blocked.take() {
                    match t.early.take() {
                        Some(w) => self.resolve(e.pid, b, w),
                        None => self.fig.unwoken += u64::from(counts),
                    }
                }
            }
        }
        match e.kind {
            Kind::Switch { prev, prev_state, next, next_prio, .. } => {
                if sel(prev) {
                    self.switch_out(prev, prev_state, e.ts);
                }
                if sel(next) {
                    let t = self.task(next, e.ts);
                    let unwoken = t.blocked.take().is_some();
                    t.since = Some(e.ts);
                    t.prio = Some(next_prio);
                    self.fig.unwoken += u64::from(unwoken && counts(next));
                }
            }
            Kind::Waking { pid } => self.waking(e, pid, set),
            Kind::Wakeup { pid } if !self.wakings => self.waking(e, pid, set),
            Kind::Fork { parent, child } if sel(child) => {
                self.fig.forks += u64::from(counts(child));
                let spawned = sel(parent);
                if spawned {
                    let p = self.task(parent, e.ts);
                    p.since.get_or_insert(e.ts);
                    let cpu = p.cpu_at(e.ts);
                    let f = self.futex(parent, child, true);
                    self.push(parent, Step { cpu, act: Act::Post { futex: f }, note: "" });
                }
                let fresh = !self.tasks.contains_key(&child);
                self.task(child, e.ts);
                if spawned && fresh {
                    let f = self.futex_ix[&(parent, child, true)];
                    self.push(child, Step { cpu: 0, act: Act::Wait { futex: f, spawn: true }, note: "fork" });
                }
            }
            Kind::Exit { pid } if sel(pid) => {
                let t = self.task(pid, e.ts);
                if t.exited.is_none() {
                    let cpu = t.cpu_at(e.ts);
                    t.exited = Some((e.ts, cpu));
                }
            }
            Kind::Migrate { pid } if counts(pid) => self.fig.migrations += 1,
            Kind::MutexLock { .. } | Kind::MutexUnlock { .. } | Kind::CondWait { .. } | Kind::CondWaitRet { .. } if sel(e.pid) => self.mutex_call(e),
            Kind::SysEnter { call, args } if sel(e.pid) && e.ctx != Ctx::HardIrq => {
                let (write, read) = (self.plan.writes.get(&i).copied(), self.plan.reads.get(&i).copied());
                let t = self.task(e.pid, e.ts);
                t.since.get_or_insert(e.ts);
                let cpu = t.cpu_at(e.ts);
                t.early = None;
                let mut s = Sys { class: call.class(), name: call.name(), args, read: None, send_step: None, lock_step: None, unlock_step: None };
                if s.class == Class::Futex && self.mutex_ix.contains_key(&(self.process(e.pid), args[0])) {
                    self.mutex_futex(e.pid, &mut s, cpu);
                }
                if let Some((o, bytes)) = write {
                    self.fig.channel_ops += u64::from(counts(e.pid));
                    s.send_step = Some(self.push(e.pid, Step { cpu, act: Act::Send { chan: o, bytes, blocks: false, wakes: false }, note: "" }));
                }
                if let Some((o, bytes)) = read.filter(|_| !self.skip.contains(&i)) {
                    s.read = Some((o, bytes, cpu));
                }
                self.tasks.get_mut(&e.pid).expect("task").sys = Some(s);
            }
            Kind::SysExit { .. } if sel(e.pid) && e.ctx != Ctx::HardIrq => {
                let t = self.task(e.pid, e.ts);
                if let Some((o, bytes, cpu)) = t.sys.take().and_then(|s| s.read) {
                    // A read that found its data: at its entry.
                    self.fig.channel_ops += u64::from(counts(e.pid));
                    self.push(e.pid, Step { cpu, act: Act::Recv { chan: o, bytes, blocks: false }, note: "" });
                }
            }
            _ => {}
        }
    }

    pub(super) fn switch_out(&mut self, pid: u32, state: State, ts: u64) {
        let plan = self.plan;
        self.task(pid, ts);
        let t = self.tasks.get_mut(&pid).expect("task");
        if let Some(s) = t.since.take() {
            t.cpu += ts.saturating_sub(s);
        }
        if t.exited.is_some() {
            return;
        }
        let early = t.early.take();
        let c = match state {
            State::Blocked(c) => c,
            State::Dead => {
                t.exited = Some((ts, t.cpu));
                return;
            }
            State::Running => return,
        };
        let counts = self.workload.contains(&pid);
        self.fig.voluntary += u64::from(counts);
        let cpu = t.cpu;
        let mut b = Blocked { ts, cpu, sys: t.sys, state: c, by: None };
        let mut step = None;
        if let Some(s) = t.sys.as_mut() {
            if let Some((o, bytes, _)) = s.read.take() {
                // The read blocks: its recv is here.
                step = Some((Act::Recv { chan: o, bytes, blocks: true }, s.name));
            } else if let Some(k) = s.send_step {
                // The write blocks on a full buffer: its send already stands for it.
                if let Some(Step { act: Act::Send { blocks, .. }, .. }) = t.steps.get_mut(k) {
                    *blocks = true;
                }
                b.by = Some(BlockOp::Channel);
            } else if let Some(k) = s.lock_step {
                // Asleep on the mutex's word: its Lock stands for the block.
                if let Some(Step { act: Act::Lock { blocks, .. }, .. }) = t.steps.get_mut(k) {
                    *blocks = true;
                }
                b.by = Some(BlockOp::Mutex);
            } else if s.class == Class::Poll {
                if let Some(&r) = plan.poll_reads.get(&(pid, ts)) {
                    // Waiting for the data its next read takes.
                    let (o, bytes) = plan.reads[&r];
                    step = Some((Act::Recv { chan: o, bytes, blocks: true }, s.name));
                    self.skip.insert(r);
                }
            }
        }
        if let Some((act, note)) = step {
            b.by = Some(BlockOp::Channel);
            self.fig.channel_ops += u64::from(counts);
            self.push(pid, Step { cpu, act, note });
        }
        match early {
            // Already woken: the block ends at once (its waker's op is where it woke it).
            Some(w) => self.resolve(pid, b, w),
            None => self.tasks.get_mut(&pid).expect("task").blocked = Some(b),
        }
    }

    pub(super) fn waking(&mut self, e: &Ev, wakee: u32, set: &HashSet<u32>) {
        if !set.contains(&wakee) {
            return;
        }
        self.fig.wakeups += u64::from(self.workload.contains(&wakee));
        let h = e.pid;
        // A channel write or a mutex unlock's futex_wake that wakes anyone pays for the wakeup.
        let op = self.tasks.get(&h).and_then(|w| w.sys).and_then(|s| s.send_step.or(s.unlock_step));
        if let Some(k) = op.filter(|_| set.contains(&h) && e.ctx != Ctx::HardIrq) {
            if let Some(Step { act: Act::Send { wakes, .. } | Act::Unlock { wakes, .. }, .. }) = self.tasks.get_mut(&h).and_then(|w| w.steps.get_mut(k)) {
                *wakes = true;
            }
        }
        // Who woke it: another recorded task doing it (in process context, or in the soft
        // interrupt of its loopback send), else nobody recorded.
        let waker_sys = self.tasks.get(&h).and_then(|w| w.sys);
        let in_send = waker_sys.is_some_and(|s| matches!(s.class, Class::Write | Class::Send));
        let by_task = (set.contains(&h) && h != wakee && h != 0)
            && match e.ctx {
                Ctx::Task | Ctx::Unknown => true,
                Ctx::SoftIrq => in_send,
                Ctx::HardIrq => false,
            };
        let waker = if by_task {
            let w = self.task(h, e.ts);
            w.since.get_or_insert(e.ts);
            Some((h, w.cpu_at(e.ts), waker_sys))
        } else {
            None
        };
        let wake = Wake { ts: e.ts, ctx: e.ctx, waker };
        let start = self.t_start.unwrap_or(e.ts);
        let fresh = !self.tasks.contains_key(&wakee);
        let t = self.task(wakee, e.ts);
        if fresh {
            // First seen being woken: it was blocked since the start.
            t.blocked = Some(Blocked { ts: start, cpu: 0, sys: None, state: 'S', by: None });
        }
        match t.blocked.take() {
            Some(b) => self.resolve(wakee, b, wake),
            // Woken while still on its CPU, before it switched out: if it now does switch out
            // asleep (a wakeup queued while it was descheduling), this wakeup ends that block.
            None => t.early = Some(wake),
        }
    }

    /// A block of `wakee` ended by `w`: the ops of both sides.
    pub(super) fn resolve(&mut self, wakee: u32, b: Blocked, w: Wake) {
        let counts = u64::from(self.workload.contains(&wakee));
        if let Some(op) = b.by {
            if counts > 0 {
                *self.fig.blocks.entry(op.name()).or_default() += counts;
            }
            return;
        }
        let tclass = b.sys.map(|s| s.class);
        let note = b.sys.map_or(if b.state == 'D' { "D" } else { "" }, |s| s.name);
        // A sleep inside a critical section (glibc's condvar-internal lock, taken while the
        // mutex is held) stays a timed sleep: as a pair it could deadlock a replay whose tasks
        // take the mutex in another order than the recording did.
        let holds = self.tasks.get(&wakee).is_some_and(|t| !t.held.is_empty());
        let w = if holds && w.waker.is_some() { Wake { waker: None, ctx: Ctx::Task, ..w } } else { w };
        let Some((h, wcpu, waker_sys)) = w.waker else {
            let cause = if holds { "sleep (in a critical section)" } else { outside_cause(&b, w.ctx) };
            if counts > 0 {
                *self.fig.blocks.entry(cause).or_default() += counts;
            }
            let ns = w.ts.saturating_sub(b.ts).max(1);
            self.push(wakee, Step { cpu: b.cpu, act: Act::Sleep { ns }, note: if note.is_empty() { cause } else { note } });
            return;
        };
        let wclass = waker_sys.map(|s| s.class);
        let sync = matches!(tclass, Some(Class::Read | Class::Recv | Class::Poll | Class::Accept | Class::Connect | Class::Wait))
            || (matches!(tclass, None | Some(Class::Other)) && matches!(wclass, Some(Class::Write | Class::Send)));
        if sync {
            let kind = if w.ctx == Ctx::SoftIrq {
                ChanKind::TcpLoopback
            } else if matches!(tclass, Some(Class::Recv | Class::Accept | Class::Connect)) || wclass == Some(Class::Send) {
                ChanKind::UnixStream
            } else {
                ChanKind::Pipe
            };
            let bytes = if tclass == Some(Class::Wait) { 1 } else { bytes_of(waker_sys) };
            let c = self.chan(h, wakee, kind);
            if counts > 0 {
                *self.fig.blocks.entry("channel").or_default() += counts;
            }
            self.push(h, Step { cpu: wcpu, act: Act::Send { chan: c, bytes, blocks: false, wakes: true }, note: "" });
            self.push(wakee, Step { cpu: b.cpu, act: Act::Recv { chan: c, bytes, blocks: true }, note });
        } else {
            let f = self.futex(h, wakee, false);
            if counts > 0 {
                *self.fig.blocks.entry("futex").or_default() += counts;
            }
            self.push(h, Step { cpu: wcpu, act: Act::Post { futex: f }, note: "" });
            self.push(wakee, Step { cpu: b.cpu, act: Act::Wait { futex: f, spawn: false }, note });
        }
    }
}
