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
//! Phases of `Frame::Idle`: 0 loop top, 7 state selected (after `idle_select`), 1 in an idle
//! state, 2 woken (after the exit latency), 8 leaving the loop (after `idle_exit`), 4
//! schedule_idle, 5 back from schedule_idle, 6 back from an interrupt taken in the POLL state.

use crate::exec::{Ev, Flow, Frame};
use crate::sim::Sim;
use crate::state::Mode;
use wakesim_engine::Time;
use crate::trace::trace_ev;
use wakesim_machine::Arch;
use wakesim_trace::TraceEvent;

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
            self.q.push(poll_until.max(now), Ev::PollTimeout { cpu: cpu as u32, gen });
        }
    }

    pub(crate) fn idle_frame(&mut self, cpu: usize, phase: u8) -> Flow {
        match phase {
            0 => {
                if !self.cpus[cpu].csd.is_empty() {
                    return self.call(cpu, Frame::Idle { phase: 0 }, Frame::Csd { phase: 0, n: 0 });
                }
                if self.cpus[cpu].softirq_pending {
                    return self.run_softirq(cpu, Frame::Idle { phase: 0 });
                }
                if self.cpus[cpu].need_resched {
                    self.set_top(cpu, Frame::Idle { phase: 4 });
                    return Flow::Again;
                }
                if self.cpus[cpu].debt > 0 {
                    // Work owed from the last handlers is done before the CPU idles.
                    return self.busy(cpu, 0, Frame::Idle { phase: 0 });
                }
                let now = self.now();
                self.cpus[cpu].idle_enter = now;
                self.nohz_enter_idle(cpu);
                // __current_set_polling() comes first in do_idle(): on x86 the governor runs with
                // the flag set (arm64 has no TIF_POLLING_NRFLAG).
                self.cpus[cpu].poll_exit = self.m.arch == Arch::X86;
                self.busy(cpu, self.c.idle_select, Frame::Idle { phase: 7 })
            }
            7 => {
                if self.cpus[cpu].need_resched || !self.cpus[cpu].csd.is_empty() {
                    // Woken while selecting: the loop's need_resched() check sees it.
                    self.set_top(cpu, Frame::Idle { phase: 2 });
                    return Flow::Again;
                }
                self.cpus[cpu].poll_exit = false;
                let k = self.select_idle_state(cpu, 0);
                self.enter_idle_state(cpu, k, self.now() + self.c.poll_limit);
                self.set_top(cpu, Frame::Idle { phase: 1 });
                Flow::Wait
            }
            1 => {
                let c = &self.cpus[cpu];
                let irq = c.pend_ipi || c.pend_tick || !c.pend_timers.is_empty();
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
                    return self.busy(cpu, 0, Frame::Idle { phase: 6 });
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
                self.busy(cpu, lat, Frame::Idle { phase: 2 })
            }
            6 => {
                if self.cpus[cpu].need_resched {
                    // poll_idle() returns; the governor learns the whole stay (menu_update()).
                    let observed = self.now() - self.cpus[cpu].idle_enter;
                    let c = &mut self.cpus[cpu];
                    c.idle_predict = (7 * c.idle_predict + observed) / 8;
                    c.poll_exit = true;
                    self.set_top(cpu, Frame::Idle { phase: 2 });
                    return Flow::Again;
                }
                // Back in poll_idle() with what is left of its time limit.
                self.cpus[cpu].poll_exit = false;
                self.enter_idle_state(cpu, 0, self.cpus[cpu].poll_until);
                self.set_top(cpu, Frame::Idle { phase: 1 });
                Flow::Wait
            }
            2 => {
                if self.cpus[cpu].need_resched {
                    // Leaving the loop: cpuidle_reflect() + tick_nohz_idle_exit(), still polling.
                    return self.busy(cpu, self.c.idle_exit, Frame::Idle { phase: 8 });
                }
                self.set_top(cpu, Frame::Idle { phase: 8 });
                Flow::Again
            }
            8 => {
                // Pending interrupts were taken by the executor before we got here; polling
                // ends now (current_clr_polling before the flush / schedule_idle).
                self.cpus[cpu].poll_exit = false;
                if !self.cpus[cpu].csd.is_empty() {
                    return self.call(cpu, Frame::Idle { phase: 8 }, Frame::Csd { phase: 0, n: 0 });
                }
                if self.cpus[cpu].softirq_pending {
                    return self.run_softirq(cpu, Frame::Idle { phase: 8 });
                }
                self.set_top(cpu, Frame::Idle { phase: if self.cpus[cpu].need_resched { 4 } else { 0 } });
                Flow::Again
            }
            4 => {
                // Leaving the idle loop to schedule: tick_nohz_idle_exit() restarts the tick.
                self.restart_tick(cpu);
                let idle = self.cpus[cpu].idle_task;
                self.cpus[cpu].kicked_without_task = self.cpus[cpu].nr_running == 0;
                self.call(cpu, Frame::Idle { phase: 5 }, Self::schedule_frame(idle, false))
            }
            5 => {
                self.set_top(cpu, Frame::Idle { phase: 0 });
                Flow::Again
            }
            _ => unreachable!("idle phase {phase}"),
        }
    }

    /// The POLL state's time limit expired: re-select among the non-polling-loop states.
    pub(crate) fn poll_timeout(&mut self, cpu: usize) {
        let k = self.select_idle_state(cpu, 1);
        self.enter_idle_state(cpu, k, 0);
    }
}
