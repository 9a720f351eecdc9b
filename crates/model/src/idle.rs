//! The idle loop (`do_idle()`, kernel/sched/idle.c): governor state selection, polling vs
//! C-states, the exit latency, the call-function flush, and `schedule_idle()`.
//!
//! Every pass into a state costs `idle_select` (tick_nohz_idle_enter + the governor), paid with
//! TIF_POLLING_NRFLAG set on x86 so wakers still only write the flag; leaving the loop for
//! `schedule_idle()` costs `idle_exit` (cpuidle_reflect + tick_nohz_idle_exit). An interrupt
//! taken in the POLL state (`poll_idle()`, interrupts on) returns into the same poll loop: no
//! exit, no re-selection — which is why a real IPI to a polling CPU can beat a flag write that
//! forces the whole exit, schedule_idle and re-entry (the CSD_POLL revert's ipistorm gain).
//!
//! The loop is `Frame::Idle`, walked through its [`IdlePhase`]s by `do_idle()`.

use crate::exec::{Ev, Flow, Frame};
use crate::sim::Sim;
use crate::ttwu::CsdPhase;
use crate::state::Mode;
use wakesim_engine::Time;
use crate::trace::trace_ev;
use wakesim_machine::Arch;
use wakesim_trace::TraceEvent;

/// Where `do_idle()` resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdlePhase {
    /// Loop top: flush, softirqs, `need_resched()`, else select a state.
    LoopTop,
    /// The governor has run (`idle_select` paid): enter the state, unless woken meanwhile.
    Selected,
    /// In an idle state; the executor resumes here on a wakeup or an interrupt.
    InState,
    /// Back from an interrupt taken inside `poll_idle()`.
    PollIrqReturn,
    /// Woken: the state's exit latency is paid.
    Woken,
    /// Leaving the loop (`idle_exit` paid): clear polling, flush, then schedule or loop.
    Leaving,
    /// `schedule_idle()`.
    ScheduleIdle,
    /// Back from `schedule_idle()`.
    Rescheduled,
}

impl Sim {
    /// Governor: the deepest state whose target residency fits the predicted idle length (menu
    /// governor in spirit; prediction = EWMA of this CPU's recent idle periods, weight 1/8 [EST]: the real menu governor also uses the next timer event and a
    /// correction factor, which are not modelled; this is why long idles pick the deepest state).
    fn select_idle_state(&self, cpu: usize, at_least: usize) -> usize {
        let pred = self.cpus[cpu].idle_predict;
        let states = &self.c.idle_states;
        let mut k = at_least.min(states.len() - 1);
        for (i, s) in states.iter().enumerate().skip(at_least) {
            if s.target_residency <= pred {
                k = i;
            }
        }
        k
    }

    /// In cpuidle's POLL state (`poll_idle()`): state 0, polling, no exit latency, with deeper
    /// states to fall back to.
    fn in_poll_loop(&self, cpu: usize) -> bool {
        let c = &self.cpus[cpu];
        c.idle_state == 0 && c.polling && self.c.has_poll_loop()
    }

    /// Enters state `k`; the POLL state ends at `poll_until` at the latest (cpuidle_poll_time()).
    fn enter_idle_state(&mut self, cpu: usize, k: usize, poll_until: Time) {
        let now = self.now();
        let st = &self.c.idle_states[k];
        let polling = st.polling && self.m.arch == Arch::X86;
        let poll_loop = k == 0 && self.c.has_poll_loop();
        trace_ev!(self, TraceEvent::IdleEnter { cpu: cpu as u32, state: k as u8 });
        let c = &mut self.cpus[cpu];
        c.mode = Mode::Idle;
        c.idle_state = k;
        c.polling = polling;
        c.gen = c.gen.wrapping_add(1);
        if poll_loop {
            c.poll_until = poll_until;
            let gen = c.gen;
            self.q.push_slot(cpu, poll_until.max(now), Ev::PollTimeout { cpu: cpu as u32, gen });
        }
    }

    /// `do_idle()`: the idle task's loop, one step per call (`IdlePhase`).
    pub(crate) fn do_idle(&mut self, cpu: usize, phase: IdlePhase) -> Flow {
        match phase {
            IdlePhase::LoopTop => {
                if !self.cpus[cpu].csd.is_empty() {
                    return self.call(cpu, Frame::Idle { phase: IdlePhase::LoopTop }, Frame::Csd { phase: CsdPhase::Start });
                }
                if self.cpus[cpu].softirq_pending {
                    return self.run_softirq(cpu, Frame::Idle { phase: IdlePhase::LoopTop });
                }
                if self.cpus[cpu].need_resched {
                    self.set_top(cpu, Frame::Idle { phase: IdlePhase::ScheduleIdle });
                    return Flow::Again;
                }
                if self.cpus[cpu].debt > 0 {
                    // Work owed from the last handlers is done before the CPU idles.
                    return self.busy(cpu, 0, Frame::Idle { phase: IdlePhase::LoopTop });
                }
                let now = self.now();
                self.cpus[cpu].idle_enter = now;
                self.nohz_enter_idle(cpu);
                // __current_set_polling() comes first in do_idle(): on x86 the governor runs with
                // the flag set (arm64 has no TIF_POLLING_NRFLAG).
                self.cpus[cpu].poll_exit = self.m.arch == Arch::X86;
                self.busy(cpu, self.c.idle_select, Frame::Idle { phase: IdlePhase::Selected })
            }
            IdlePhase::Selected => {
                if self.cpus[cpu].need_resched || !self.cpus[cpu].csd.is_empty() {
                    // Woken while selecting: the loop's need_resched() check sees it.
                    self.set_top(cpu, Frame::Idle { phase: IdlePhase::Woken });
                    return Flow::Again;
                }
                self.cpus[cpu].poll_exit = false;
                let k = self.select_idle_state(cpu, 0);
                self.enter_idle_state(cpu, k, self.now() + self.c.poll_limit);
                self.set_top(cpu, Frame::Idle { phase: IdlePhase::InState });
                Flow::Wait
            }
            IdlePhase::InState => {
                let c = &self.cpus[cpu];
                let irq = c.irq_pending();
                if !(c.need_resched || irq) {
                    return Flow::Wait; // spurious
                }
                let resched = c.need_resched;
                trace_ev!(self, TraceEvent::IdleExit { cpu: cpu as u32 });
                if !resched && self.in_poll_loop(cpu) {
                    // poll_idle() runs with interrupts on: the handler runs and the loop goes on.
                    let c = &mut self.cpus[cpu];
                    c.poll_exit = true;
                    c.polling = false;
                    return self.busy(cpu, 0, Frame::Idle { phase: IdlePhase::PollIrqReturn });
                }
                let c = &self.cpus[cpu];
                let now = self.now();
                let observed = now - c.idle_enter;
                let lat = self.c.idle_states[c.idle_state].exit_latency;
                let c = &mut self.cpus[cpu];
                c.idle_predict = (7 * c.idle_predict + observed) / 8;
                // Leaving a polling state (flag write or interrupt): TIF_POLLING_NRFLAG stays set
                // until the loop clears it to flush or to schedule (or re-enters a state).
                c.poll_exit = c.polling;
                c.polling = false;
                self.wake.cost_idle_exit += lat;
                self.busy(cpu, lat, Frame::Idle { phase: IdlePhase::Woken })
            }
            IdlePhase::PollIrqReturn => {
                if self.cpus[cpu].need_resched {
                    // poll_idle() returns; the governor learns the whole stay (menu_update()).
                    let observed = self.now() - self.cpus[cpu].idle_enter;
                    let c = &mut self.cpus[cpu];
                    c.idle_predict = (7 * c.idle_predict + observed) / 8;
                    c.poll_exit = true;
                    self.set_top(cpu, Frame::Idle { phase: IdlePhase::Woken });
                    return Flow::Again;
                }
                // Back in poll_idle() with what is left of its time limit.
                self.cpus[cpu].poll_exit = false;
                self.enter_idle_state(cpu, 0, self.cpus[cpu].poll_until);
                self.set_top(cpu, Frame::Idle { phase: IdlePhase::InState });
                Flow::Wait
            }
            IdlePhase::Woken => {
                if self.cpus[cpu].need_resched {
                    // Leaving the loop: cpuidle_reflect() + tick_nohz_idle_exit(), still polling.
                    return self.busy(cpu, self.c.idle_exit, Frame::Idle { phase: IdlePhase::Leaving });
                }
                self.set_top(cpu, Frame::Idle { phase: IdlePhase::Leaving });
                Flow::Again
            }
            IdlePhase::Leaving => {
                // Pending interrupts were taken by the executor before we got here; polling
                // ends now (current_clr_polling before the flush / schedule_idle).
                self.cpus[cpu].poll_exit = false;
                if !self.cpus[cpu].csd.is_empty() {
                    return self.call(cpu, Frame::Idle { phase: IdlePhase::Leaving }, Frame::Csd { phase: CsdPhase::Start });
                }
                if self.cpus[cpu].softirq_pending {
                    return self.run_softirq(cpu, Frame::Idle { phase: IdlePhase::Leaving });
                }
                self.set_top(cpu, Frame::Idle { phase: if self.cpus[cpu].need_resched { IdlePhase::ScheduleIdle } else { IdlePhase::LoopTop } });
                Flow::Again
            }
            IdlePhase::ScheduleIdle => {
                // Leaving the idle loop to schedule: tick_nohz_idle_exit() restarts the tick.
                self.restart_tick(cpu);
                let idle = self.cpus[cpu].idle_task;
                self.cpus[cpu].kicked_without_task = self.cpus[cpu].nr_running == 0;
                self.call(cpu, Frame::Idle { phase: IdlePhase::Rescheduled }, Self::schedule_frame(idle, false))
            }
            IdlePhase::Rescheduled => {
                self.set_top(cpu, Frame::Idle { phase: IdlePhase::LoopTop });
                Flow::Again
            }
        }
    }

    /// The POLL state's time limit expired: re-select among the non-polling-loop states.
    pub(crate) fn poll_timeout(&mut self, cpu: usize) {
        let k = self.select_idle_state(cpu, 1);
        self.enter_idle_state(cpu, k, 0);
    }
}
