//! `__schedule()` and `pick_next_task_fair()` (kernel/sched/core.c, fair.c): deactivate a
//! blocking task, pick the EEVDF choice, run newly-idle balancing when nothing is runnable, and
//! switch context. Interrupts are off from entry to the end of the switch; the rq lock is held
//! except while newidle balancing has dropped it.
//!
//! A call is `Frame::Sched`, walked through its [`SchedPhase`]s by `__schedule()`.

use crate::exec::{Flow, Frame};
use crate::locks::LockId;
use crate::newidle::NewidlePhase;
use crate::sim::Sim;
use crate::state::{Mode, TState, TaskId, NO_TASK};
use crate::trace::trace_ev;
use wakesim_engine::invariant;
use wakesim_trace::TraceEvent;

/// Where `__schedule()` resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedPhase {
    /// Entry: interrupts off, take the rq lock.
    Entry,
    /// The rq lock is held: deactivate a blocking prev, SM_IDLE, or newidle when nothing runs.
    Locked,
    /// Back from `sched_balance_newidle()`.
    NewidleDone,
    /// `pick_next_task()` and the context switch's cost.
    Pick,
    /// The switch is paid: `finish_task_switch()`.
    FinishSwitch,
    /// prev resumes here when it is switched back in.
    SwitchedIn,
}

impl Sim {
    pub(crate) fn schedule_frame(prev: TaskId, preempt: bool) -> Frame {
        Frame::Sched { phase: SchedPhase::Entry, prev, next: NO_TASK, preempt }
    }

    /// `__schedule()` on `cpu` for the frame's `prev`, one step per call (`SchedPhase`).
    pub(crate) fn __schedule(&mut self, cpu: usize, f: Frame) -> Flow {
        let Frame::Sched { phase, prev, next, preempt } = f else { unreachable!() };
        let fr = |phase: SchedPhase, next: TaskId| Frame::Sched { phase, prev, next, preempt };
        match phase {
            SchedPhase::Entry => {
                self.cpus[cpu].irqs_off += 1;
                self.call(cpu, fr(SchedPhase::Locked, NO_TASK), Frame::Lock { lock: LockId::Rq(cpu as u32), granted: false })
            }
            SchedPhase::Locked => {
                self.sched[cpu].sched_count += 1;
                let stopper = self.cpus[cpu].active_balance;
                if self.f.SM_IDLE && self.tasks[prev as usize].is_idle && !preempt && self.cpus[cpu].nr_running == 0 && !stopper {
                    // SM_IDLE (v6.12): schedule_idle() with nothing runnable goes straight back
                    // to idle, skipping pick_next_task() and so newidle balancing.
                    self.cpus[cpu].need_resched = false;
                    self.lock_release(cpu, LockId::Rq(cpu as u32));
                    self.cpus[cpu].irqs_off -= 1;
                    return self.busy(cpu, 0, fr(SchedPhase::SwitchedIn, prev));
                }
                let mut cost = self.c.pick;
                let p = &self.tasks[prev as usize];
                if !p.is_idle && p.state != TState::Runnable && self.cpus[cpu].cfs.curr == prev && self.cpus[cpu].cfs.curr_on_rq {
                    self.deactivate_curr(cpu);
                    cost += self.c.dequeue;
                }
                self.drain_delayed(cpu);
                if !self.tasks[prev as usize].is_idle && self.cpus[cpu].cfs.curr == prev && self.cpus[cpu].cfs.curr_on_rq {
                    let now = self.now();
                    if self.cpus[cpu].cfs.update_curr(&mut self.se, now) {
                        // deadline passed: handled by the pick below
                    }
                }
                if stopper {
                    // The stop class is picked first: the stopper runs, then schedules again
                    // (from itself, so not as the idle task).
                    cost += self.active_load_balance_cpu_stop(cpu, prev);
                }
                if self.cpus[cpu].cfs.nr_running() == 0 {
                    if self.f.NEWIDLE_SKIP_IPI && self.tasks[prev as usize].is_idle && !stopper {
                        // K Prateek Nayak's RFC (2024): entered from the idle task, skip newidle.
                        return self.busy(cpu, cost, fr(SchedPhase::Pick, NO_TASK));
                    }
                    // pick_next_task_fair() found nothing: sched_balance_newidle().
                    self.charge(cpu, cost);
                    trace_ev!(self, TraceEvent::NewidleStart { cpu: cpu as u32 });
                    let ni = Frame::Newidle { phase: NewidlePhase::Entry, level: 0, t0: 0, tl: 0, cost_sum: 0, pulled: false };
                    return self.call(cpu, fr(SchedPhase::NewidleDone, NO_TASK), ni);
                }
                self.busy(cpu, cost, fr(SchedPhase::Pick, NO_TASK))
            }
            SchedPhase::NewidleDone => {
                trace_ev!(self, TraceEvent::NewidleEnd { cpu: cpu as u32, pulled: self.cpus[cpu].cfs.nr_running() > 0 });
                self.set_top(cpu, fr(SchedPhase::Pick, NO_TASK));
                Flow::Again
            }
            SchedPhase::Pick => {
                let stopper_ran = std::mem::take(&mut self.cpus[cpu].stopper_ran);
                let nxt = self.pick_next(cpu, prev);
                if nxt == prev && self.tasks[prev as usize].is_idle {
                    // pick_next_task_idle() → set_next_task_idle() even when idle stays.
                    self.sched[cpu].sched_goidle += 1;
                    self.update_idle_core(cpu);
                }
                if nxt == prev {
                    if stopper_ran {
                        // The stopper's switch back to prev.
                        self.charge(cpu, self.c.context_switch);
                    }
                    self.cpus[cpu].need_resched = false;
                    self.resched_for_stopper(cpu);
                    self.lock_release(cpu, LockId::Rq(cpu as u32));
                    self.cpus[cpu].irqs_off -= 1;
                    if let Some(push) = self.take_active_push(cpu) {
                        // prev runs on after the stopper: the push replaces this frame.
                        self.set_top(cpu, push);
                        return Flow::Again;
                    }
                    return Flow::Pop;
                }
                let mut cost = self.c.context_switch;
                let next_task = &self.tasks[nxt as usize];
                if !next_task.is_idle {
                    // context_switch() → switch_mm_irqs_off() reloads the page tables only when
                    // the CPU's active mm differs from next's; switching to idle keeps it lazily,
                    // so a CPU that idles between two runs of one process pays no mm switch.
                    let mm = next_task.mm;
                    if self.cpus[cpu].active_mm != Some(mm) {
                        cost += self.c.context_switch_mm;
                    }
                    self.cpus[cpu].active_mm = Some(mm);
                    // set_next_entity(), sched_info_arrive(): a task another CPU enqueued comes
                    // with its lines there.
                    cost += self.take_task_lines(cpu, nxt);
                }
                let pen = std::mem::take(&mut self.tasks[nxt as usize].migrate_penalty);
                self.wake.cost_migration += pen;
                self.busy(cpu, cost + pen, fr(SchedPhase::FinishSwitch, nxt))
            }
            SchedPhase::FinishSwitch => {
                self.finish_switch(cpu, prev, next);
                self.resched_for_stopper(cpu);
                if let Some(push) = self.take_active_push(cpu) {
                    self.push(cpu, push);
                }
                Flow::Again
            }
            SchedPhase::SwitchedIn => Flow::Pop,
        }
    }

    /// `pick_next_entity()` with DELAY_DEQUEUE: a delayed entity that would be picked is dequeued
    /// for real and the pick repeats.
    fn drain_delayed(&mut self, cpu: usize) {
        if !self.f.DELAY_DEQUEUE {
            return;
        }
        let f = self.f;
        loop {
            if self.cpus[cpu].cfs.nr_running() == 0 {
                return;
            }
            let t = self.cpus[cpu].cfs.pick(&self.se, &f);
            if t == NO_TASK || !self.tasks[t as usize].delayed {
                return;
            }
            self.finish_delayed_dequeue(cpu, t);
        }
    }

    /// `pick_next_task_fair()` with `put_prev_entity()` / `set_next_entity()`; the idle task if
    /// nothing is runnable.
    fn pick_next(&mut self, cpu: usize, prev: TaskId) -> TaskId {
        self.drain_delayed(cpu);
        let now = self.now();
        let f = self.f;
        let c = &mut self.cpus[cpu];
        if c.cfs.nr_running() == 0 {
            c.cfs.curr = NO_TASK;
            c.cfs.curr_on_rq = false;
            return c.idle_task;
        }
        let next = c.cfs.pick(&self.se, &f);
        if next == prev && c.cfs.curr == prev && c.cfs.curr_on_rq {
            return prev;
        }
        if c.cfs.curr != NO_TASK {
            if c.cfs.curr_on_rq {
                let pc = c.cfs.curr;
                c.cfs.put_prev(&mut self.se, pc);
                self.tasks[pc as usize].enqueued_at = now;
                self.shared_runq_push(cpu, pc);
            } else {
                c.cfs.curr = NO_TASK;
            }
        }
        let c = &mut self.cpus[cpu];
        c.cfs.set_next(&mut self.se, next, now);
        self.shared_runq_retract(cpu, next);
        next
    }

    /// `finish_task_switch()`: the CPU now runs `next`; release the rq lock, enable interrupts.
    fn finish_switch(&mut self, cpu: usize, prev: TaskId, next: TaskId) {
        let now = self.now();
        // prev's frame resumes at `SwitchedIn` when it is switched back in.
        self.set_top(cpu, Frame::Sched { phase: SchedPhase::SwitchedIn, prev, next, preempt: false });
        let was_idle = self.tasks[prev as usize].is_idle;
        {
            let p = &mut self.tasks[prev as usize];
            p.on_cpu = false;
            if !p.is_idle {
                self.sched[cpu].rq_cpu_time += now - p.switched_in;
                // __schedule(): `switch_count` is nvcsw when prev blocked, nivcsw otherwise.
                if p.state == TState::Runnable {
                    p.counters.nivcsw += 1;
                } else {
                    p.counters.nvcsw += 1;
                }
            }
        }
        let n = &mut self.tasks[next as usize];
        n.on_cpu = true;
        n.switched_in = now;
        n.counters.nr_switches += 1;
        let is_idle = n.is_idle;
        if !is_idle {
            let delay = now - n.enqueued_at;
            n.counters.wait_time += delay;
            self.sched[cpu].run_delay += delay;
            self.run_delay.record(delay);
            self.sched[cpu].pcount += 1;
            if n.wake_start > 0 {
                self.wakeup_lat.record(now - n.wake_start);
                n.wake_start = 0;
            }
        }
        invariant!(n.cpu as usize == cpu || is_idle, "task {} runs on cpu {cpu} but task_cpu is {}", n.name, n.cpu);
        self.switch_stack(cpu, next);
        self.cpus[cpu].need_resched = false;
        trace_ev!(self, TraceEvent::Switch { cpu: cpu as u32, prev, next });
        self.refresh_idle(cpu);
        if self.tasks[prev as usize].state == TState::Dead {
            self.tasks[prev as usize].stack.clear();
        }
        self.lock_release(cpu, LockId::Rq(cpu as u32));
        self.cpus[cpu].irqs_off -= 1;
        self.cpus[cpu].mode = Mode::Kernel;
        if is_idle {
            self.sched[cpu].sched_goidle += 1;
            self.update_idle_core(cpu);
            if self.f.SIS_FILTER && !self.f.SIS_LLC_BUSY {
                // v6's hook; the v5 filter (with SIS_LLC_BUSY) is updated in __update_idle_core().
                self.sis_filter_idle_enter(cpu);
            }
        }
        if is_idle != was_idle {
            self.smt_changed(cpu);
        }
    }
}
