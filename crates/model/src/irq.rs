//! Interrupt handling: IPIs (call-function flush, reschedule), hrtimers and the scheduler tick
//! (`sched_tick()` → `task_tick_fair()` → `sched_balance_trigger()`), softirqs at irq exit, and
//! preemption on return to user space.
//!
//! Phases of `Frame::Irq`: 0 entry, 1 sources, 2 timers/tick, 3 exit (softirqs, which run with
//! interrupts enabled), 5 back from softirqs, 4 return (interrupts stay off until the return
//! itself, so a new IPI cannot nest into the exit path).

use crate::exec::{Ev, Flow, Frame};
use crate::sim::Sim;
use crate::state::Mode;

impl Sim {
    pub(crate) fn irq_frame(&mut self, cpu: usize, phase: u8) -> Flow {
        match phase {
            0 => self.busy(cpu, self.c.irq_entry_exit, Frame::Irq { phase: 1 }),
            1 => {
                if std::mem::take(&mut self.cpus[cpu].pend_ipi) && !self.cpus[cpu].csd.is_empty() {
                    return self.call(cpu, Frame::Irq { phase: 2 }, Frame::Csd { phase: 0, n: 0 });
                }
                self.set_top(cpu, Frame::Irq { phase: 2 });
                Flow::Again
            }
            2 => {
                if let Some(task) = self.cpus[cpu].pend_timers.pop() {
                    // hrtimer_wakeup() → wake_up_process(): a non-sync wakeup from irq context.
                    self.set_top(cpu, Frame::Irq { phase: 2 });
                    self.start_ttwu(cpu, task, false);
                    return Flow::Again;
                }
                if std::mem::take(&mut self.cpus[cpu].pend_tick) {
                    self.task_tick(cpu);
                    return self.busy(cpu, self.c.tick, Frame::Irq { phase: 3 });
                }
                self.set_top(cpu, Frame::Irq { phase: 3 });
                Flow::Again
            }
            3 => {
                if self.cpus[cpu].softirq_pending {
                    self.cpus[cpu].irqs_off -= 1;
                    return self.run_softirq(cpu, Frame::Irq { phase: 5 });
                }
                self.set_top(cpu, Frame::Irq { phase: 4 });
                Flow::Again
            }
            5 => {
                self.cpus[cpu].irqs_off += 1;
                self.set_top(cpu, Frame::Irq { phase: 4 });
                Flow::Again
            }
            4 => {
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
            _ => unreachable!("irq phase {phase}"),
        }
    }

    /// The tick event: an interrupt on a CPU whose tick runs; a stopped tick (NOHZ idle) is not
    /// re-armed.
    pub(crate) fn tick_event(&mut self, cpu: usize) {
        let c = &mut self.cpus[cpu];
        if c.mode == Mode::Idle && self.f.NOHZ_IDLE_BALANCE {
            c.tick_armed = false;
            return;
        }
        self.note_irq_arrival(cpu);
        self.cpus[cpu].pend_tick = true;
        let next = self.now() + self.t.tick_nsec();
        self.q.push(next, Ev::Tick { cpu: cpu as u32 });
        self.raise_irq(cpu);
    }

    /// Re-arms the tick of a CPU leaving idle, on the global jiffy grid.
    pub(crate) fn restart_tick(&mut self, cpu: usize) {
        if self.cpus[cpu].tick_armed {
            return;
        }
        self.cpus[cpu].tick_armed = true;
        let next = self.t.next_tick(self.now());
        self.q.push(next, Ev::Tick { cpu: cpu as u32 });
    }

    /// `sched_tick()` → `task_tick_fair()` + `sched_balance_trigger()`.
    fn task_tick(&mut self, cpu: usize) {
        let now = self.now();
        let curr = self.curr(cpu);
        if !self.tasks[curr as usize].is_idle {
            let expired = self.cpus[cpu].cfs.update_curr(&mut self.tasks, now);
            let resched = if self.f.EEVDF {
                expired
            } else {
                let se = &self.tasks[curr as usize].se;
                let ran = se.sum_exec_runtime - se.prev_sum_exec;
                self.cpus[cpu].cfs.cfs_check_preempt_tick(&self.tasks, &self.t, ran)
            };
            if resched {
                self.resched_curr(cpu, cpu);
            }
            self.update_load_avg(cpu, curr);
        } else {
            self.update_load_avg(cpu, crate::state::NO_TASK);
        }
        // sched_balance_trigger()
        if self.jiffies() >= self.cpus[cpu].next_balance {
            self.cpus[cpu].softirq_pending = true;
        }
        self.nohz_balancer_kick(cpu);
    }
}
