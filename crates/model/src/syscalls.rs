//! Task programs: user-space compute and the system calls of the behaviour language, with pipe
//! and socket semantics (fs/pipe.c, net/unix: a reader blocks on an empty buffer, a writer on a
//! full one; wakeups are WF_SYNC), futexes (non-sync `wake_up_q`), hrtimer sleeps and exit.
//! Per-CPU user-space spinlocks run here as user code, in `user_locks`.
//!
//! A system call is `Frame::Sys`, walked through its [`SysPhase`]s by `do_syscall_64()`.

use crate::exec::{Ev, Flow, Frame};
use crate::sim::Sim;
use crate::state::{Mode, Msg, TState, TaskId, NO_TASK};
use wakesim_engine::Time;
use wakesim_workloads::defaults::unix_skb_truesize;
use wakesim_workloads::{Dur, MarkRecord, Op};

/// Where a system call (`do_syscall_64()`) resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SysPhase {
    /// Syscall entry, plus a channel op's copy and work under its lock (or only its check when
    /// it will sleep: `pipe_wait` / `sock_wait`), or a futex op's bucket work.
    Entry,
    /// Execute the op (retried here after blocking).
    Execute,
    /// Woken on a pipe or socket: retake the channel's lock, do the op's work, then execute it.
    ChanRelock,
    /// Woken on a futex: `futex_unqueue()` pulls the futex's lines back, then return.
    FutexWoken,
    /// Wake the waiter the op found (`sys_wake`), sync or not.
    WakeOne,
    /// Wake every task on the wake list, one non-sync `try_to_wake_up()` each (`wake_up_q`).
    WakeList,
    /// Wake every task on the wake list with WF_SYNC (`__wake_up_sync_key`).
    WakeListSync,
    /// Spin until a called function has run (`csd_lock_wait()`); its completion resumes `Done`.
    CsdWait,
    /// Return to user space.
    Done,
}

impl Sim {
    fn cur_op(&self, t: TaskId) -> Option<Op> {
        let task = &self.tasks[t as usize];
        self.programs[task.prog as usize].get(task.pc as usize).cloned()
    }

    /// Draws a duration from the task's own RNG stream.
    fn sample(&mut self, t: TaskId, d: &Dur) -> Time {
        d.sample(&mut self.tasks[t as usize].rng)
    }

    /// Throughput share of `cpu`'s core: a busy SMT sibling leaves each thread
    /// `smt_throughput / 2` of a core (research §3.6).
    fn smt_speed(&self, cpu: usize) -> f64 {
        if !self.m.topo.smt_active() {
            return 1.0;
        }
        let busy = self.smt[cpu].iter().any(|&s| s as usize != cpu && self.cpus[s as usize].curr != self.cpus[s as usize].idle_task);
        if busy {
            self.tasks[self.curr(cpu) as usize].smt_throughput / 2.0
        } else {
            1.0
        }
    }

    /// Runs the current task's remaining user work.
    pub(crate) fn start_user(&mut self, cpu: usize) -> Flow {
        if self.cpus[cpu].debt > 0 {
            // Kernel work owed (e.g. by the syscall return path) runs before user code resumes.
            return self.busy(cpu, 0, Frame::User);
        }
        let t = self.curr(cpu) as usize;
        let speed = self.smt_speed(cpu);
        let dur = ((self.tasks[t].compute_left as f64) / speed).ceil() as Time;
        let now = self.now();
        let c = &mut self.cpus[cpu];
        c.mode = Mode::User;
        c.user_start = now;
        c.user_speed = speed;
        c.gen = c.gen.wrapping_add(1);
        let gen = c.gen;
        self.q.push_slot(cpu, now + dur.max(1), Ev::Step { cpu: cpu as u32, gen });
        Flow::Wait
    }

    pub(crate) fn finish_user(&mut self, cpu: usize) {
        let t = self.curr(cpu) as usize;
        self.tasks[t].compute_left = 0;
        let c = &mut self.cpus[cpu];
        let ran = self.q.now() - c.user_start;
        c.busy_time += ran;
        self.note_user_time(t, ran);
    }

    /// Stops user work at `now` (an interrupt, or a change of SMT speed), keeping what is left.
    pub(crate) fn suspend_user(&mut self, cpu: usize) {
        let now = self.now();
        let t = self.curr(cpu) as usize;
        let c = &mut self.cpus[cpu];
        let elapsed = now - c.user_start;
        let done = (elapsed as f64 * c.user_speed) as Time;
        c.busy_time += elapsed;
        c.gen = c.gen.wrapping_add(1);
        c.mode = Mode::Kernel;
        let left = &mut self.tasks[t].compute_left;
        *left = left.saturating_sub(done).max(1);
        self.note_user_time(t, elapsed);
    }

    /// A CPU started or stopped running a task: its SMT siblings' user work changes speed.
    pub(crate) fn smt_changed(&mut self, cpu: usize) {
        if !self.m.topo.smt_active() {
            return;
        }
        for i in 0..self.smt[cpu].len() {
            let s = self.smt[cpu][i] as usize;
            if s != cpu && self.cpus[s].mode == Mode::User && self.cpus[s].irqs_off == 0 {
                self.suspend_user(s);
                self.start_user(s);
            }
        }
    }

    /// Bottom frame of a task: interprets its program until it computes or enters the kernel.
    pub(crate) fn user_frame(&mut self, cpu: usize) -> Flow {
        let t = self.curr(cpu);
        // Back from a loopback TCP send: `__release_sock()` runs the ACKs queued on the backlog,
        // still owning the socket (ACKs arriving meanwhile join the backlog), then releases it.
        // Only a socket's owner has a backlog.
        let task = &mut self.tasks[t as usize];
        if task.sock_owned != crate::state::NO_CHAN {
            let backlog = std::mem::take(&mut task.backlog);
            if backlog > 0 {
                return self.busy(cpu, backlog, Frame::User);
            }
            task.sock_owned = crate::state::NO_CHAN;
        }
        if self.cpu_spin_resumable(t) {
            // Its lock was released while it was away from user space: the spin loop's next
            // trylock comes at once.
            self.tasks[t as usize].compute_left = 0;
        }
        if self.tasks[t as usize].compute_left > 0 {
            return self.start_user(cpu);
        }
        if self.cpus[cpu].need_resched {
            return self.call(cpu, Frame::User, Self::schedule_frame(t, true));
        }
        loop {
            let Some(op) = self.cur_op(t) else {
                // Falling off the end of a program is an exit.
                return self.call(cpu, Frame::User, Frame::Sys { phase: SysPhase::Entry });
            };
            let task = &mut self.tasks[t as usize];
            match op {
                Op::Compute(d) => {
                    task.pc += 1;
                    let w = self.sample(t, &d);
                    if w == 0 {
                        continue;
                    }
                    self.tasks[t as usize].compute_left = w;
                    return self.start_user(cpu);
                }
                Op::LoopStart { count, end } => {
                    if count == 0 {
                        task.pc = end + 1;
                    } else {
                        task.loops.push(count);
                        task.pc += 1;
                    }
                }
                Op::LoopEnd { start } => {
                    let left = task.loops.last_mut().expect("LoopEnd without LoopStart");
                    *left -= 1;
                    if *left > 0 {
                        task.pc = start + 1;
                    } else {
                        task.loops.pop();
                        task.pc += 1;
                    }
                }
                Op::Mark(id) => {
                    task.pc += 1;
                    let rec = MarkRecord { mark: id, task: t - self.first_task, time: self.q.now() };
                    self.marks.push(rec);
                }
                // User-space per-CPU locks (user_locks): no syscall.
                Op::CpuSpinLock { set } => {
                    if let Some(flow) = self.cpu_spin_lock(cpu, t, set) {
                        return flow;
                    }
                }
                // pthread mutexes (pthread_mutex): a syscall only when contended.
                Op::Lock { id } => {
                    if let Some(flow) = self.pthread_mutex_lock(cpu, t, id) {
                        return flow;
                    }
                }
                Op::Unlock { id } => {
                    if let Some(flow) = self.pthread_mutex_unlock(cpu, t, id) {
                        return flow;
                    }
                }
                Op::CpuSpinUnlock { set } => {
                    task.pc += 1;
                    let cost = self.cpu_spin_unlock(cpu, t, set);
                    if cost > 0 {
                        self.tasks[t as usize].compute_left = cost;
                        return self.start_user(cpu);
                    }
                }
                _ => return self.call(cpu, Frame::User, Frame::Sys { phase: SysPhase::Entry }),
            }
        }
    }

    /// The system call of the current op, one step per call (`SysPhase`).
    pub(crate) fn do_syscall_64(&mut self, cpu: usize, phase: SysPhase) -> Flow {
        let t = self.curr(cpu);
        match phase {
            SysPhase::Entry => {
                let op = self.cur_op(t);
                if let Some(op) = &op {
                    // The op's own work runs under the channel's lock, after the entry; that
                    // part (with any wait and line transfers) is charged by chan_rmw.
                    if let Some((chan, hold, owed)) = self.chan_op_work(op) {
                        self.tasks[t as usize].chan_work_owed = owed;
                        self.take_chan(cpu, op, chan, hold, self.c.syscall);
                        if !owed {
                            self.tcp_sendmsg(cpu, t, op);
                        }
                    }
                }
                if let Some((fx, wait)) = op.as_ref().and_then(futex_op) {
                    // futex_wait_setup() (key, bucket lock, word read, queueing) or futex_wake()
                    // (key, bucket lock, chain walk, unqueue and mark) after the entry, on the
                    // futex's lines: a wake pulls them from the waiter's CPU.
                    let hold = if wait { self.c.futex_wait } else { self.c.futex_wake };
                    self.futex_rmw(cpu, fx, hold, self.c.syscall);
                }
                // A kernel thread calling smp_call_function_single() makes no syscall.
                let cost = match op {
                    Some(Op::CallFunc { .. }) | Some(Op::CallFuncAll { .. }) => self.c.call_function,
                    Some(Op::Lock { .. }) => self.c.syscall + self.c.futex_wait,
                    Some(Op::Unlock { .. }) => self.c.syscall + self.c.futex_wake,
                    _ => self.c.syscall,
                };
                self.busy(cpu, cost, Frame::Sys { phase: SysPhase::Execute })
            }
            SysPhase::Execute => self.sys_execute(cpu, t),
            SysPhase::ChanRelock => {
                // Woken on a pipe or socket: the op retakes the channel's lock (pipe_read()'s
                // `mutex_lock(&pipe->mutex)` after `wait_event`), pulling its lines back from
                // the CPU of the end that woke it, and now does its work (or checks again).
                if let Some(op) = self.cur_op(t) {
                    if let Some((chan, hold, owed)) = self.chan_op_work(&op) {
                        self.tasks[t as usize].chan_work_owed = owed;
                        self.take_chan(cpu, &op, chan, hold, 0);
                        if !owed {
                            self.tcp_sendmsg(cpu, t, &op);
                        }
                    }
                }
                self.busy(cpu, 0, Frame::Sys { phase: SysPhase::Execute })
            }
            SysPhase::WakeOne => {
                let w = std::mem::replace(&mut self.tasks[t as usize].sys_wake, NO_TASK);
                let sync = self.tasks[t as usize].sys_wake_sync;
                self.set_top(cpu, Frame::Sys { phase: SysPhase::Done });
                self.start_ttwu(cpu, w, sync);
                Flow::Again
            }
            SysPhase::WakeList => {
                // One non-sync try_to_wake_up per task on the wake list (wake_up_q order).
                let Some(w) = self.tasks[t as usize].wake_list.pop_front() else { return Flow::Pop };
                self.set_top(cpu, Frame::Sys { phase: SysPhase::WakeList });
                self.start_ttwu(cpu, w, false);
                Flow::Again
            }
            SysPhase::WakeListSync => {
                // __wake_up_sync_key(): every task on the wake list, each with WF_SYNC.
                let Some(w) = self.tasks[t as usize].wake_list.pop_front() else { return Flow::Pop };
                self.set_top(cpu, Frame::Sys { phase: SysPhase::WakeListSync });
                self.start_ttwu(cpu, w, true);
                Flow::Again
            }
            SysPhase::Done => Flow::Pop,
            SysPhase::FutexWoken => {
                // Woken on a futex: futex_wait() returns through futex_unqueue(), reading the
                // `q->lock_ptr` the waker cleared, and user space rereads the futex word: the
                // futex's lines come back from the waker's CPU. The op is the one before `pc`.
                let task = &self.tasks[t as usize];
                if let Some(Op::FutexWait { futex }) = self.programs[task.prog as usize].get(task.pc as usize - 1).cloned() {
                    self.futex_rmw(cpu, futex, 0, 0);
                }
                self.busy(cpu, 0, Frame::Sys { phase: SysPhase::Done })
            }
            SysPhase::CsdWait => {
                // Still spinning: the completion resumes this frame at `Done`.
                self.cpus[cpu].mode = Mode::Spin;
                Flow::Wait
            }
        }
    }

    /// Blocks the current task: it is already on a wait queue; `resume_phase` runs when it is
    /// scheduled again.
    fn block(&mut self, cpu: usize, t: TaskId, resume_phase: SysPhase) -> Flow {
        self.tasks[t as usize].state = TState::Sleeping;
        self.call(cpu, Frame::Sys { phase: resume_phase }, Self::schedule_frame(t, false))
    }

    fn sys_execute(&mut self, cpu: usize, t: TaskId) -> Flow {
        let op = self.cur_op(t);
        match op {
            Some(op @ (Op::Send { chan, bytes } | Op::SendDgram { chan, bytes })) => {
                let ch = &mut self.chans[chan as usize];
                if ch.full_for(bytes) {
                    if matches!(op, Op::SendDgram { .. }) {
                        // Dropped at the full receive buffer; the sender goes on.
                        ch.dropped += 1;
                        self.wake.dgram_drops += 1;
                        self.tasks[t as usize].pc += 1;
                        return Flow::Pop;
                    }
                    ch.writers.push_back(t);
                    // sk_stream_wait_memory() sleeps with the socket released.
                    self.release_sock(cpu, t);
                    return self.block(cpu, t, SysPhase::ChanRelock);
                }
                ch.bytes += bytes;
                self.pay_owed_chan_work(cpu, t, &op);
                if self.chans[chan as usize].skb {
                    let work = self.chan_work(&op);
                    self.queue_skb(cpu, chan, work);
                }
                let ch = &mut self.chans[chan as usize];
                let stamp = self.msg_written[cpu];
                self.msg_written[cpu] += if ch.skb { unix_skb_truesize(bytes) } else { bytes };
                ch.msgs.push_back(Msg { cpu: cpu as u32, writer: t, stamp, bytes, read: false });
                self.tasks[t as usize].pc += 1;
                let sync = ch.sync;
                if let Some(r) = ch.readers.pop_front() {
                    self.tasks[t as usize].sys_wake = r;
                    self.tasks[t as usize].sys_wake_sync = sync;
                    self.set_top(cpu, Frame::Sys { phase: SysPhase::WakeOne });
                    return Flow::Again;
                }
                Flow::Pop
            }
            Some(Op::Recv { chan, bytes }) => {
                let ch = &mut self.chans[chan as usize];
                if ch.empty_for(bytes) {
                    ch.readers.push_back(t);
                    return self.block(cpu, t, SysPhase::ChanRelock);
                }
                ch.bytes -= bytes;
                self.tasks[t as usize].pc += 1;
                self.pay_owed_chan_work(cpu, t, &Op::Recv { chan, bytes });
                self.read_msgs(cpu, chan, bytes);
                let ch = &mut self.chans[chan as usize];
                let sync = ch.sync;
                if ch.wake_writers_at_quarter {
                    // unix_write_space(): every blocked writer, once a quarter full or less.
                    if ch.writers.is_empty() || ch.bytes * 4 > ch.capacity {
                        return Flow::Pop;
                    }
                    let task = &mut self.tasks[t as usize];
                    task.wake_list.extend(ch.writers.drain(..));
                    self.set_top(cpu, Frame::Sys { phase: SysPhase::WakeListSync });
                    return Flow::Again;
                }
                if let Some(w) = ch.writers.pop_front() {
                    self.tasks[t as usize].sys_wake = w;
                    self.tasks[t as usize].sys_wake_sync = sync;
                    self.set_top(cpu, Frame::Sys { phase: SysPhase::WakeOne });
                    return Flow::Again;
                }
                Flow::Pop
            }
            Some(Op::FutexWait { futex }) => {
                let fx = &mut self.futexes[futex as usize];
                if fx.signalled {
                    self.tasks[t as usize].pc += 1;
                    return Flow::Pop;
                }
                if fx.pending > 0 {
                    fx.pending -= 1;
                    self.tasks[t as usize].pc += 1;
                    return Flow::Pop;
                }
                fx.waiters.push_back(t);
                // Woken means the wait is satisfied: continue after the op.
                self.tasks[t as usize].pc += 1;
                self.block(cpu, t, SysPhase::FutexWoken)
            }
            Some(Op::FutexWake { futex, n }) => {
                self.tasks[t as usize].pc += 1;
                let fx = &mut self.futexes[futex as usize];
                let k = (n as usize).min(fx.waiters.len());
                // Semaphore semantics: wakes beyond the waiters stay pending.
                fx.pending += (n as usize - k) as u64;
                let task = &mut self.tasks[t as usize];
                task.wake_list.extend(fx.waiters.drain(..k));
                self.set_top(cpu, Frame::Sys { phase: SysPhase::WakeList });
                Flow::Again
            }
            Some(Op::FutexWakeWaiters { futex, n }) => {
                self.tasks[t as usize].pc += 1;
                let fx = &mut self.futexes[futex as usize];
                let k = (n as usize).min(fx.waiters.len());
                // Wakes beyond the current waiters are lost.
                let task = &mut self.tasks[t as usize];
                task.wake_list.extend(fx.waiters.drain(..k));
                self.set_top(cpu, Frame::Sys { phase: SysPhase::WakeList });
                Flow::Again
            }
            Some(Op::FutexWakeAllSync { futex }) => {
                self.tasks[t as usize].pc += 1;
                let fx = &mut self.futexes[futex as usize];
                fx.signalled = true;
                let task = &mut self.tasks[t as usize];
                task.wake_list.extend(fx.waiters.drain(..));
                self.set_top(cpu, Frame::Sys { phase: SysPhase::WakeListSync });
                Flow::Again
            }
            Some(Op::Barrier { id, parties }) => {
                self.tasks[t as usize].pc += 1;
                let b = &mut self.barriers[id as usize];
                b.arrived += 1;
                if b.arrived < parties {
                    b.waiters.push_back(t);
                    return self.block(cpu, t, SysPhase::Done);
                }
                b.arrived = 0;
                let task = &mut self.tasks[t as usize];
                task.wake_list.extend(b.waiters.drain(..));
                self.set_top(cpu, Frame::Sys { phase: SysPhase::WakeList });
                Flow::Again
            }
            Some(Op::Lock { id }) => {
                if self.lll_lock_wait(id, t) {
                    return self.block(cpu, t, SysPhase::Done);
                }
                Flow::Pop
            }
            Some(Op::Unlock { id }) => {
                self.lll_unlock_wake(id, t);
                self.set_top(cpu, Frame::Sys { phase: SysPhase::WakeList });
                Flow::Again
            }
            Some(Op::SleepUntilNext { period }) => {
                self.tasks[t as usize].pc += 1;
                let now = self.q.now();
                let task = &mut self.tasks[t as usize];
                if task.timer_next == 0 {
                    task.timer_next = now;
                }
                task.timer_next += period;
                let at = task.timer_next;
                if at <= now {
                    return Flow::Pop; // overran the period: no sleep (rt-app timer)
                }
                self.hrtimer_start(cpu, at, t);
                self.block(cpu, t, SysPhase::Done)
            }
            Some(Op::CallFuncAll { wait }) => {
                self.tasks[t as usize].pc += 1;
                // smp_call_function_many_cond(): queue on every other CPU, kick each, then wait
                // for each csd in turn.
                let n = self.nr_cpus();
                let waiter = if wait { t } else { NO_TASK };
                self.tasks[t as usize].csd_pending = if wait { n as u32 - 1 } else { 0 };
                for c in (0..n).filter(|&c| c != cpu) {
                    self.smp_call_function_single(cpu, c, waiter);
                }
                if wait && n > 1 {
                    self.cpus[cpu].mode = Mode::Spin;
                    self.set_top(cpu, Frame::Sys { phase: SysPhase::CsdWait });
                    return Flow::Wait;
                }
                Flow::Pop
            }
            Some(Op::CallFunc { cpu: target, wait }) => {
                self.tasks[t as usize].pc += 1;
                self.tasks[t as usize].csd_pending = u32::from(wait && target as usize != cpu);
                self.smp_call_function_single(cpu, target as usize, if wait { t } else { NO_TASK });
                if wait && target as usize != cpu {
                    self.cpus[cpu].mode = Mode::Spin;
                    self.set_top(cpu, Frame::Sys { phase: SysPhase::CsdWait });
                    return Flow::Wait;
                }
                Flow::Pop
            }
            Some(Op::Sleep(d)) => {
                self.tasks[t as usize].pc += 1;
                let dur = self.sample(t, &d);
                self.hrtimer_start(cpu, self.q.now() + dur, t);
                self.block(cpu, t, SysPhase::Done)
            }
            Some(Op::Exit) | None => {
                let now = self.now();
                let task = &mut self.tasks[t as usize];
                wakesim_engine::invariant!(task.cpu_locks_held.is_empty(), "task {} exits holding CPU locks {:?}", task.name, task.cpu_locks_held);
                task.state = TState::Dead;
                task.exit_time = Some(now);
                self.live_tasks -= 1;
                self.call(cpu, Frame::Sys { phase: SysPhase::Done }, Self::schedule_frame(t, false))
            }
            Some(other) => unreachable!("not a syscall op: {other:?}"),
        }
    }
}

/// A pipe or socket op: (channel, bytes, whether it writes).
/// The futex of a futex syscall and whether it is a wait (`FutexWakeAllSync` is a write to a
/// polled pipe, not a futex op).
fn futex_op(op: &Op) -> Option<(u32, bool)> {
    match *op {
        Op::FutexWait { futex } => Some((futex, true)),
        Op::FutexWake { futex, .. } | Op::FutexWakeWaiters { futex, .. } => Some((futex, false)),
        _ => None,
    }
}

impl Sim {
    /// A pipe or socket op's work under the channel's lock: its own work and copy if it can go
    /// ahead, else only the check before it sleeps (`wait_cost`), the rest coming after the
    /// wakeup (`Chan::full_for` / `empty_for`, as `sys_execute` decides). A datagram to a full
    /// buffer is dropped, not slept on. Returns (channel, time under its lock, whether the op's
    /// work is still owed).
    fn chan_op_work(&self, op: &Op) -> Option<(u32, Time, bool)> {
        let (chan, bytes, _) = chan_op(op)?;
        let ch = &self.chans[chan as usize];
        let blocks = match *op {
            Op::Send { .. } => ch.full_for(bytes),
            Op::Recv { .. } => ch.empty_for(bytes),
            _ => false,
        };
        Some(if blocks { (chan, ch.wait_cost, true) } else { (chan, self.chan_work(op), false) })
    }

    /// The op's `work` on channel `chan`, starting `after` ns from now: a pipe op holds
    /// `pipe->mutex` for all of it (fs/pipe.c `pipe_write()`/`pipe_read()`). A socket op holds
    /// the receive queue's lock only for the queue operation (`sock_queue_hold`), and the rest
    /// runs beside the other end: a receive takes it first, before its copy and free
    /// (`__skb_recv_udp()`, `skb_unlink()`); a send last, after building and (loopback)
    /// delivering its skb, so here it pays only the rest, and takes the lock when its skb is
    /// queued ([`Sim::queue_skb`]). Charges `cpu`; returns nothing.
    fn take_chan(&mut self, cpu: usize, op: &Op, chan: u32, work: Time, after: Time) {
        if !self.chans[chan as usize].skb {
            return self.chan_rmw(cpu, chan, work, after);
        }
        let locked = work.min(self.c.sock_queue_hold);
        if matches!(op, Op::Recv { .. }) {
            self.chan_rmw(cpu, chan, locked, after);
        }
        self.charge(cpu, work - locked);
    }

    /// A send's skb joins the receive queue: `skb_queue_tail()` under `sk_receive_queue.lock`
    /// (`unix_stream_sendmsg()`; loopback TCP/UDP from the NET_RX softirq on this CPU,
    /// `tcp_queue_rcv()`, `__udp_enqueue_schedule_skb()`), the end of the send's work.
    /// Charges `cpu`; returns nothing.
    fn queue_skb(&mut self, cpu: usize, chan: u32, work: Time) {
        let locked = work.min(self.c.sock_queue_hold);
        self.chan_rmw(cpu, chan, locked, 0);
    }

    /// A pipe or socket op's own work: its copy and the channel's per-message cost.
    fn chan_work(&self, op: &Op) -> Time {
        let Some((chan, bytes, send)) = chan_op(op) else { return 0 };
        let ch = &self.chans[chan as usize];
        self.c.copy(bytes) + if send { ch.send_cost } else { ch.recv_cost }
    }

    /// The op goes ahead although it was charged only its check (the channel changed while it
    /// held the lock): its work is paid in the CPU's next step.
    fn pay_owed_chan_work(&mut self, cpu: usize, t: TaskId, op: &Op) {
        if std::mem::take(&mut self.tasks[t as usize].chan_work_owed) {
            let mut w = self.chan_work(op);
            if let Some((chan, _, true)) = chan_op(op) {
                // A socket send's queueing part is charged by `queue_skb`.
                if self.chans[chan as usize].skb {
                    w -= w.min(self.c.sock_queue_hold);
                }
            }
            self.charge(cpu, w);
            self.tcp_sendmsg(cpu, t, op);
        }
    }
}

fn chan_op(op: &Op) -> Option<(u32, u64, bool)> {
    match *op {
        Op::Send { chan, bytes } | Op::SendDgram { chan, bytes } => Some((chan, bytes, true)),
        Op::Recv { chan, bytes } => Some((chan, bytes, false)),
        _ => None,
    }
}
