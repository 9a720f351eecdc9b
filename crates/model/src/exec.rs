//! The CPU executor: how time belongs to CPUs (docs/model.md, "Time belongs to CPUs").
//!
//! Each task owns a kernel stack of continuation [`Frame`]s, as a real task owns a kernel stack.
//! A CPU always executes the top frame of its current task's stack. A frame handler reads and
//! changes kernel state at the instant it runs, then either occupies the CPU for a step (`busy`:
//! the CPU is unavailable until the step's end, when the frame resumes), waits for a lock
//! (spinning, busy), or finishes (its parent resumes at once). A context switch simply makes
//! another task's stack the one the CPU executes.
//!
//! Interrupts (IPIs, the tick, timers) interrupt user code at any instant; in kernel code they are
//! taken at the next step boundary where interrupts are enabled, so interrupt-disabled regions
//! (rq-locked sections, `__schedule`, newidle balancing) delay them, as docs/model.md requires.

use crate::imbalance::MigrationType;
use crate::balance::LbPhase;
use crate::idle::IdlePhase;
use crate::irq::IrqPhase;
use crate::locks::LockId;
use crate::newidle::NewidlePhase;
use crate::periodic::PeriodicPhase;
use crate::schedule::SchedPhase;
use crate::shared_runq::SharedRunqPhase;
use crate::syscalls::SysPhase;
use crate::ttwu::{CsdPhase, TtwuPhase};
use crate::sim::Sim;
use crate::state::{Mode, TaskId};
use wakesim_engine::{invariant, Time};

/// Events of the discrete-event loop.
#[derive(Clone, Copy, Debug)]
pub enum Ev {
    /// The current step of `cpu` ends (ignored if `gen` is stale).
    Step { cpu: u32, gen: u32 },
    /// A call-function or reschedule IPI arrives at `cpu`.
    Ipi { cpu: u32, kind: wakesim_trace::IpiKind },
    /// A store to a polling idle CPU's thread flags becomes visible there.
    PollWake { cpu: u32 },
    /// The POLL idle state's time limit expired; the governor re-selects.
    PollTimeout { cpu: u32, gen: u32 },
    /// The periodic scheduler tick of `cpu`.
    Tick { cpu: u32 },
    /// An hrtimer armed by `task` on `cpu` expires.
    Timer { cpu: u32, task: TaskId },
    /// A task is forked and woken for the first time (wake_up_new_task) by `cpu`.
    Spawn { task: TaskId },
    /// Background interrupt source `src` (`noise`) fires.
    DevIrq { src: u32 },
}

/// A continuation on a task's kernel stack: which mechanism runs, and at which of its named
/// resumption points (`phase`) it continues when the CPU next executes it. Each mechanism's
/// phases are an enum in its own module, next to the handler that walks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// Bottom of a workload task's stack: user space running the task's program.
    User,
    /// A system call of the current program op (send, recv, futex, sleep, exit): `do_syscall_64`.
    Sys { phase: SysPhase },
    /// `try_to_wake_up(p)` running on this CPU.
    Ttwu { p: TaskId, phase: TtwuPhase, target: u32, sync: bool, fork: bool },
    /// `__schedule()`; `prev` is the task that called it.
    Sched { phase: SchedPhase, prev: TaskId, next: TaskId, preempt: bool },
    /// `sched_balance_newidle()` (`newidle_balance()` before v6.10).
    Newidle { phase: NewidlePhase, level: u8, t0: Time, tl: Time, cost_sum: Time, pulled: bool },
    /// One `sched_balance_rq()` (`load_balance()` before v6.10) pass pulling to `dst` at domain
    /// `level` of `dst`.
    Lb { phase: LbPhase, dst: u32, level: u8, idle: u8, src: u32, mt: MigrationType },
    /// The stopper's `attach_one_task()` of `task` to `dst`, run once the CPU has switched away
    /// from the task it detached (`active_load_balance_cpu_stop()`).
    ActivePush { phase: crate::active_balance::PushPhase, task: TaskId, dst: u32 },
    /// `sched_balance_domains()` (`rebalance_domains()` before v6.10) for `cpu`: periodic
    /// balancing, or NOHZ balancing on behalf of it.
    Periodic { phase: PeriodicPhase, cpu: u32, level: u8, idle: u8 },
    /// `_nohz_idle_balance()`: walks the idle CPUs from `next` on, balancing for each.
    NohzBalance { next: u32 },
    /// An interrupt: entry, its sources, softirqs and the return.
    Irq { phase: IrqPhase },
    /// SHARED_RUNQ: `shared_runq_pick_next_task()` pulls the head of the LLC's shared runqueue
    /// over to this CPU.
    SharedRunqPull { phase: SharedRunqPhase, task: TaskId, src: u32 },
    /// `flush_smp_call_function_queue()` incl. `sched_ttwu_pending()`.
    Csd { phase: CsdPhase },
    /// Bottom of an idle task's stack: `do_idle()`.
    Idle { phase: IdlePhase },
    /// Spinning until `lock` is granted; pops when held.
    Lock { lock: LockId, granted: bool },
}

/// What a frame handler asks of the executor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// The CPU is occupied (a step or a lock wait is outstanding, or it idles).
    Wait,
    /// This frame is finished: pop it and resume the parent now.
    Pop,
    /// The stack changed (a frame was pushed, or the CPU switched tasks): resume the new top.
    Again,
}

impl Sim {
    #[inline]
    pub(crate) fn curr(&self, cpu: usize) -> TaskId {
        self.cpus[cpu].curr
    }

    #[inline]
    pub(crate) fn top(&self, cpu: usize) -> Frame {
        self.cpus[cpu].top
    }

    #[inline]
    pub(crate) fn set_top(&mut self, cpu: usize, f: Frame) {
        self.cpus[cpu].top = f;
    }

    #[inline]
    pub(crate) fn push(&mut self, cpu: usize, f: Frame) {
        let t = self.cpus[cpu].curr as usize;
        let top = std::mem::replace(&mut self.cpus[cpu].top, f);
        let stack = &mut self.tasks[t].stack;
        *stack.last_mut().expect("empty kernel stack") = top;
        stack.push(f);
        invariant!(stack.len() < 32, "kernel stack overflow on cpu {cpu}: {:?}", stack);
    }

    /// Pops the top frame of `cpu`'s current task; the frame below becomes the top.
    #[inline]
    fn pop(&mut self, cpu: usize) {
        let t = self.cpus[cpu].curr as usize;
        let stack = &mut self.tasks[t].stack;
        stack.pop();
        invariant!(!stack.is_empty(), "task {} ran off its stack", self.tasks[t].name);
        self.cpus[cpu].top = *stack.last().expect("empty kernel stack");
    }

    /// The CPU starts executing `next`'s kernel stack: the running task's top frame goes back
    /// to its stack, `next`'s is loaded (`Cpu::top`).
    pub(crate) fn switch_stack(&mut self, cpu: usize, next: TaskId) {
        let c = &mut self.cpus[cpu];
        let prev = std::mem::replace(&mut c.curr, next) as usize;
        *self.tasks[prev].stack.last_mut().expect("empty kernel stack") = c.top;
        c.top = *self.tasks[next as usize].stack.last().expect("empty kernel stack");
    }

    /// Replaces the top frame by `resume_as` (the caller's next phase) and pushes `child` above it.
    #[inline]
    pub(crate) fn call(&mut self, cpu: usize, resume_as: Frame, child: Frame) -> Flow {
        self.set_top(cpu, resume_as);
        self.push(cpu, child);
        Flow::Again
    }

    /// Adds cost owed by `cpu` for work done inside an instantaneous state change (an IPI sent
    /// from inside a handler, say); it is paid in the CPU's next step. A function that charges
    /// a cost does not also return it (see `lines` for the convention).
    #[inline]
    pub(crate) fn charge(&mut self, cpu: usize, cost: Time) {
        self.cpus[cpu].debt += cost;
    }

    /// Occupies `cpu` with kernel work for `dur` (plus any debt), then resumes the top frame,
    /// which `resume_as` has set to the phase to resume at.
    pub(crate) fn busy(&mut self, cpu: usize, dur: Time, resume_as: Frame) -> Flow {
        self.set_top(cpu, resume_as);
        let c = &mut self.cpus[cpu];
        let mut d = dur + std::mem::take(&mut c.debt);
        if d == 0 {
            // Nothing to wait for: continue at once (no event).
            return Flow::Again;
        }
        if let Some(j) = &mut self.jitter {
            d = j.apply(cpu, d);
        }
        let c = &mut self.cpus[cpu];
        c.mode = Mode::Kernel;
        c.gen = c.gen.wrapping_add(1);
        c.step_end = self.q.now() + d;
        c.busy_time += d;
        let gen = c.gen;
        self.q.push_slot(cpu, self.q.now() + d, Ev::Step { cpu: cpu as u32, gen });
        Flow::Wait
    }

    /// Whether an interrupt is pending and can be taken now.
    #[inline]
    fn irq_deliverable(&self, cpu: usize) -> bool {
        let c = &self.cpus[cpu];
        c.irqs_off == 0 && c.irq_pending()
    }

    /// Runs `cpu` until it is occupied: the heart of the executor.
    pub(crate) fn resume(&mut self, cpu: usize) {
        let mut guard = 0u32;
        loop {
            guard += 1;
            invariant!(guard < 100_000, "cpu {cpu} spins without consuming time: {:?}", self.tasks[self.curr(cpu) as usize].stack);
            // An idle CPU in a state takes its interrupt when it wakes (do_idle() resumes).
            if self.irq_deliverable(cpu) && !matches!(self.top(cpu), Frame::Idle { phase: IdlePhase::InState }) {
                self.enter_irq(cpu);
            }
            let f = self.top(cpu);
            let flow = match f {
                Frame::User => self.user_frame(cpu),
                Frame::Sys { phase } => self.do_syscall_64(cpu, phase),
                Frame::Ttwu { .. } => self.try_to_wake_up(cpu, f),
                Frame::Sched { .. } => self.__schedule(cpu, f),
                Frame::Newidle { .. } => self.sched_balance_newidle(cpu, f),
                Frame::Lb { .. } => self.sched_balance_rq(cpu, f),
                Frame::ActivePush { .. } => self.attach_one_task(cpu, f),
                Frame::Periodic { .. } => self.sched_balance_domains(cpu, f),
                Frame::NohzBalance { next } => self._nohz_idle_balance(cpu, next),
                Frame::Irq { phase } => self.handle_irq(cpu, phase),
                Frame::Csd { phase } => self.flush_smp_call_function_queue(cpu, phase),
                Frame::SharedRunqPull { .. } => self.shared_runq_pick_next_task(cpu, f),
                Frame::Idle { phase } => self.do_idle(cpu, phase),
                Frame::Lock { lock, granted } => self.lock_frame(cpu, lock, granted),
            };
            match flow {
                Flow::Wait => return,
                Flow::Again => {}
                Flow::Pop => self.pop(cpu),
            }
        }
    }

    /// Takes a pending interrupt now: user work is suspended, the handler frame is pushed.
    fn enter_irq(&mut self, cpu: usize) {
        let now = self.now();
        if self.cpus[cpu].mode == Mode::User {
            self.suspend_user(cpu);
        }
        let c = &mut self.cpus[cpu];
        if c.pend_since < now {
            self.wake.irq_deferred += 1;
            self.wake.irq_defer_time += now - c.pend_since;
        }
        c.irqs_off += 1;
        self.push(cpu, Frame::Irq { phase: IrqPhase::Entry });
    }

    /// Records when the first of the currently pending interrupt sources arrived; call before
    /// setting a pending flag.
    pub(crate) fn note_irq_arrival(&mut self, cpu: usize) {
        let now = self.now();
        let c = &mut self.cpus[cpu];
        if !c.irq_pending() {
            c.pend_since = now;
        }
    }

    /// If the CPU can take a pending interrupt now, takes it.
    pub(crate) fn raise_irq(&mut self, cpu: usize) {
        let c = &self.cpus[cpu];
        match c.mode {
            // User code is interrupted at once; an idle CPU wakes; kernel steps finish first.
            Mode::User if c.irqs_off == 0 => self.resume(cpu),
            Mode::Idle => self.resume(cpu),
            _ => {}
        }
    }

    /// Event dispatch.
    pub(crate) fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Step { cpu, gen } => {
                let cpu = cpu as usize;
                if self.cpus[cpu].gen != gen {
                    return; // superseded (user work interrupted and rescheduled)
                }
                if self.cpus[cpu].mode == Mode::User {
                    self.finish_user(cpu);
                }
                self.cpus[cpu].mode = Mode::Kernel;
                self.resume(cpu);
            }
            Ev::Ipi { cpu, kind } => {
                crate::trace::trace_ev!(self, wakesim_trace::TraceEvent::IpiRecv { cpu, kind });
                self.note_irq_arrival(cpu as usize);
                self.cpus[cpu as usize].ipis_in_flight -= 1;
                self.cpus[cpu as usize].pend_ipi = true;
                self.raise_irq(cpu as usize);
            }
            Ev::PollWake { cpu } => {
                // The flag write is visible: a polling idle CPU leaves its idle loop.
                if self.cpus[cpu as usize].mode == Mode::Idle {
                    self.resume(cpu as usize);
                }
            }
            Ev::PollTimeout { cpu, gen } => {
                let c = cpu as usize;
                if self.cpus[c].gen == gen && self.cpus[c].mode == Mode::Idle {
                    self.poll_timeout(c);
                }
            }
            Ev::Tick { cpu } => self.tick_event(cpu as usize),
            Ev::Timer { cpu, task } => {
                self.hrtimer_expired(cpu as usize);
                self.note_irq_arrival(cpu as usize);
                self.cpus[cpu as usize].pend_timers.push(task);
                self.raise_irq(cpu as usize);
            }
            Ev::Spawn { task } => self.spawn(task),
            Ev::DevIrq { src } => self.dev_irq(src as usize),
        }
    }

    /// Arms a sleeping task's hrtimer on `cpu` to expire at `at` (`hrtimer_start()`); the CPU
    /// keeps its expiry for `tick_nohz_get_sleep_length()`.
    pub(crate) fn hrtimer_start(&mut self, cpu: usize, at: Time, task: TaskId) {
        self.cpus[cpu].timers.push(at);
        self.q.push(at, Ev::Timer { cpu: cpu as u32, task });
    }

    /// An hrtimer of `cpu` fires now: its expiry leaves the CPU's list.
    fn hrtimer_expired(&mut self, cpu: usize) {
        let now = self.now();
        let timers = &mut self.cpus[cpu].timers;
        if let Some(i) = timers.iter().position(|&t| t <= now) {
            timers.swap_remove(i);
        }
    }

    /// The `Lock` frame: phase "not granted yet" tries to acquire; the grant resumes it.
    fn lock_frame(&mut self, cpu: usize, lock: LockId, granted: bool) -> Flow {
        if granted {
            return Flow::Pop;
        }
        self.lock_acquire(cpu, lock)
    }
}
