//! Interrupt handling: IPIs (call-function flush, reschedule), hrtimers and the scheduler tick
//! (`sched_tick()` → `task_tick_fair()` → `sched_balance_trigger()`), softirqs at irq exit, and
//! preemption on return to user space.
//!
//! An interrupt is `Frame::Irq`, walked through its [`IrqPhase`]s by `handle_irq()`.

use crate::exec::{Ev, Flow, Frame};
use crate::sim::Sim;
use crate::ttwu::CsdPhase;
use crate::state::Mode;

/// Where an interrupt's handling resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrqPhase {
    /// `irqentry_enter()` … `irq_exit_rcu()`'s fixed cost (`irq_entry_exit`).
    Entry,
    /// The sources: an IPI flushes the call-single queue.
    Sources,
    /// Expired hrtimers (one wakeup each), then the tick.
    TimersAndTick,
    /// Irq exit: softirqs, which run with interrupts enabled.
    Exit,
    /// Back from softirqs: interrupts off again.
    SoftirqDone,
    /// The return: interrupts stay off until the return itself, so a new IPI cannot nest into
    /// the exit path; to user space with NEED_RESCHED it schedules.
    Return,
}

impl Sim {
    /// An interrupt on `cpu` (the `sysvec_*` entry of an IPI, the local timer), one step per call.
    pub(crate) fn handle_irq(&mut self, cpu: usize, phase: IrqPhase) -> Flow {
        match phase {
            IrqPhase::Entry => self.busy(cpu, self.c.irq_entry_exit, Frame::Irq { phase: IrqPhase::Sources }),
            IrqPhase::Sources => {
                if std::mem::take(&mut self.cpus[cpu].pend_ipi) && !self.cpus[cpu].csd.is_empty() {
                    return self.call(cpu, Frame::Irq { phase: IrqPhase::TimersAndTick }, Frame::Csd { phase: CsdPhase::Start });
                }
                if std::mem::take(&mut self.cpus[cpu].pend_dev_count) > 0 {
                    // Device handlers (background sources): their hard-irq time, in one step.
                    let d = std::mem::take(&mut self.cpus[cpu].pend_dev);
                    return self.busy(cpu, d, Frame::Irq { phase: IrqPhase::TimersAndTick });
                }
                self.set_top(cpu, Frame::Irq { phase: IrqPhase::TimersAndTick });
                Flow::Again
            }
            IrqPhase::TimersAndTick => {
                if let Some(task) = self.cpus[cpu].pend_timers.pop() {
                    // hrtimer_wakeup() → wake_up_process(): a non-sync wakeup from irq context.
                    self.set_top(cpu, Frame::Irq { phase: IrqPhase::TimersAndTick });
                    self.start_ttwu(cpu, task, false);
                    return Flow::Again;
                }
                if std::mem::take(&mut self.cpus[cpu].pend_tick) {
                    self.task_tick(cpu);
                    return self.busy(cpu, self.c.tick, Frame::Irq { phase: IrqPhase::Exit });
                }
                self.set_top(cpu, Frame::Irq { phase: IrqPhase::Exit });
                Flow::Again
            }
            IrqPhase::Exit => {
                if self.cpus[cpu].softirq_pending {
                    self.cpus[cpu].irqs_off -= 1;
                    return self.run_softirq(cpu, Frame::Irq { phase: IrqPhase::SoftirqDone });
                }
                self.set_top(cpu, Frame::Irq { phase: IrqPhase::Return });
                Flow::Again
            }
            IrqPhase::SoftirqDone => {
                self.cpus[cpu].irqs_off += 1;
                self.set_top(cpu, Frame::Irq { phase: IrqPhase::Return });
                Flow::Again
            }
            IrqPhase::Return => {
                self.cpus[cpu].irqs_off -= 1;
                // Return from interrupt: to user space with NEED_RESCHED → preempt (the kernel
                // itself is not preempted: PREEMPT_NONE/VOLUNTARY server configuration).
                let t = self.curr(cpu) as usize;
                let n = self.tasks[t].stack.len();
                let below_user = n >= 2 && self.tasks[t].stack[n - 2] == Frame::User;
                if below_user && self.cpus[cpu].need_resched {
                    let prev = self.curr(cpu);
                    self.set_top(cpu, Self::schedule_frame(prev, true));
                    return Flow::Again;
                }
                Flow::Pop
            }
        }
    }

    /// The tick event: an interrupt on a CPU whose tick runs; a tick the idle governor stopped
    /// (NOHZ idle, `Cpu::tick_stopped`) is not re-armed.
    pub(crate) fn tick_event(&mut self, cpu: usize) {
        let c = &mut self.cpus[cpu];
        if c.mode == Mode::Idle && c.tick_stopped {
            c.tick_armed = false;
            return;
        }
        self.note_irq_arrival(cpu);
        self.cpus[cpu].pend_tick = true;
        let next = self.now() + self.t.tick_nsec();
        self.q.push(next, Ev::Tick { cpu: cpu as u32 });
        self.raise_irq(cpu);
    }

    /// Re-arms the tick of a CPU leaving idle, on the jiffy grid (`tick_nohz_restart()`).
    pub(crate) fn restart_tick(&mut self, cpu: usize) {
        if self.cpus[cpu].tick_armed {
            return;
        }
        self.cpus[cpu].tick_armed = true;
        // On the jiffy grid, shifted by this CPU's `skew_tick` offset.
        let skew = self.cpus[cpu].tick_skew;
        let next = self.t.next_tick(self.now().saturating_sub(skew)) + skew;
        self.q.push(next, Ev::Tick { cpu: cpu as u32 });
    }

    /// `sched_tick()` → `task_tick_fair()` + `sched_balance_trigger()`.
    fn task_tick(&mut self, cpu: usize) {
        let now = self.now();
        let curr = self.curr(cpu);
        if !self.tasks[curr as usize].is_idle {
            let expired = self.cpus[cpu].cfs.update_curr(&mut self.se, now);
            let resched = if self.f.EEVDF {
                expired
            } else {
                let se = &self.se[curr as usize];
                let ran = se.sum_exec_runtime - se.prev_sum_exec;
                self.cpus[cpu].cfs.cfs_check_preempt_tick(&self.se, &self.t, ran)
            };
            if resched {
                self.resched_curr(cpu, cpu);
            }
            // entity_tick() for each level: update_load_avg(UPDATE_TG), update_cfs_group().
            self.update_load_avg(cpu, curr);
            self.update_cfs_group(cpu, curr);
        } else {
            self.update_load_avg(cpu, crate::state::NO_TASK);
            // tick_sched_timer() in the idle loop: ts->got_idle_tick for the governor.
            self.cpus[cpu].got_idle_tick = true;
        }
        // sched_balance_trigger()
        if self.jiffies() >= self.cpus[cpu].next_balance {
            self.cpus[cpu].softirq_pending = true;
        }
        self.nohz_balancer_kick(cpu);
    }
}
