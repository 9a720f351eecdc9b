//! The idle loop (`do_idle()`, kernel/sched/idle.c): the cpuidle governor's choice
//! (`cpuidle_idle_call()`), the tick decision, polling vs C-states, the exit latency, the
//! call-function flush, and `schedule_idle()`.
//!
//! Every pass into a state costs `idle_select` (tick_nohz_idle_enter + the governor), paid with
//! TIF_POLLING_NRFLAG set on x86 so wakers still only write the flag; leaving the loop for
//! `schedule_idle()` costs `idle_exit` (cpuidle_reflect + tick_nohz_idle_exit). An interrupt
//! taken in the POLL state (`poll_idle()`, interrupts on) returns into the same poll loop: no
//! exit, no re-selection — which is why a real IPI to a polling CPU can beat a flag write that
//! forces the whole exit, schedule_idle and re-entry (the CSD_POLL revert's ipistorm gain).
//!
//! The governor (`cpuidle`, chosen per machine or with `--governor`) runs at the end of the
//! `idle_select` step. It is given the time till the CPU's next timer and next tick
//! (`tick_nohz_get_sleep_length()`) and whether the tick is already stopped; its `stop_tick`
//! then stops the tick (`tick_nohz_idle_stop_tick()`: the CPU joins the NOHZ idle mask,
//! `nohz_balance_enter_idle()`) or keeps it running (`tick_nohz_idle_retain_tick()`: the tick
//! wakes the idle CPU every period, which runs the tick's work and selects again). A stopped
//! tick stays stopped until the CPU leaves the idle loop. When the POLL state's time limit
//! (`cpuidle_poll_time()`, or haltpoll's window) runs out, `poll_idle()` returns and the loop
//! selects again. The EWMA predictor (`--governor ewma`) keeps its own older rules: the tick
//! stops at every idle entry and the POLL time-out re-selects at once among deeper states.
//!
//! The loop is `Frame::Idle`, walked through its [`IdlePhase`]s by `do_idle()`.

use crate::cpuidle::{Governor, SelectInput, Wakeup, LATENCY_REQ_NONE};
use crate::exec::{Ev, Flow, Frame};
use crate::sim::Sim;
use crate::ttwu::CsdPhase;
use crate::state::Mode;
use wakesim_engine::Time;
use crate::trace::trace_ev;
use wakesim_machine::Arch;
use wakesim_trace::TraceEvent;

/// The next timer event when the CPU has none armed: the softlockup watchdog's hrtimer,
/// armed on every CPU every `watchdog_thresh` × 2/5 = 4 s (kernel/watchdog.c), which the model
/// does not simulate. Every governor decision it enters is far beyond the deepest residency.
pub const NO_TIMER: Time = 4_000_000_000;

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
    /// Whether this CPU runs the EWMA predictor, which keeps the model's older idle rules.
    fn ewma(&self, cpu: usize) -> bool {
        matches!(self.cpus[cpu].gov, Governor::Ewma(_))
    }

    /// In cpuidle's POLL state (`poll_idle()`): state 0, polling, no exit latency, with deeper
    /// states to fall back to.
    fn in_poll_loop(&self, cpu: usize) -> bool {
        let c = &self.cpus[cpu];
        c.idle_state == 0 && c.polling && self.c.has_poll_loop()
    }

    /// Enters state `k`; the POLL state ends at `poll_until` at the latest (its time limit).
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

    /// The CPU's next tick while its tick runs: on the jiffy grid, shifted by its `tick_skew`
    /// (as `restart_tick()` arms it).
    fn next_tick_of(&self, cpu: usize) -> Time {
        let skew = self.cpus[cpu].tick_skew;
        self.t.next_tick(self.now().saturating_sub(skew)) + skew
    }

    /// `tick_nohz_get_sleep_length()`: the time till the CPU's closest timer event ignoring the
    /// tick, and (`*delta_next`) till its next clock event — the tick too while it runs. When
    /// the tick cannot be stopped (no NOHZ idle) or must stay because a timer falls within the
    /// next tick period (`tick_nohz_next_event()`), both are the latter.
    pub(crate) fn tick_nohz_get_sleep_length(&self, cpu: usize) -> (Time, Time) {
        let now = self.now();
        let c = &self.cpus[cpu];
        let timer = c.timers.iter().min().map_or(NO_TIMER, |&t| t.saturating_sub(now).min(NO_TIMER));
        if c.tick_stopped {
            return (timer, timer);
        }
        let delta_next = timer.min(self.next_tick_of(cpu) - now);
        if !self.f.NOHZ_IDLE_BALANCE || timer <= self.t.tick_nsec() {
            return (delta_next, delta_next);
        }
        (timer, delta_next)
    }

    /// `cpuidle_select()` and the tick decision after it: `tick_nohz_idle_stop_tick()` when the
    /// governor asks or the tick is stopped already (the first stop of the idle period enters
    /// the NOHZ idle mask: `nohz_balance_enter_idle()`), else `tick_nohz_idle_retain_tick()`
    /// (the tick runs on; a CPU that never had one, at boot, gets it). Without NOHZ idle the
    /// tick never stops. Returns the state.
    fn cpuidle_select(&mut self, cpu: usize) -> usize {
        let (sleep_length, delta_tick) = self.tick_nohz_get_sleep_length(cpu);
        let inp = SelectInput {
            states: &self.c.idle_states,
            sleep_length,
            delta_tick,
            tick_stopped: self.cpus[cpu].tick_stopped,
            latency_req: LATENCY_REQ_NONE,
            tick_nsec: self.t.tick_nsec(),
            now: self.now(),
        };
        let sel = self.cpus[cpu].gov.select(&inp);
        if self.f.NOHZ_IDLE_BALANCE && (sel.stop_tick || self.cpus[cpu].tick_stopped) {
            if !self.cpus[cpu].tick_stopped {
                self.cpus[cpu].tick_stopped = true;
                self.nohz_enter_idle(cpu);
            }
        } else {
            self.restart_tick(cpu);
        }
        sel.state
    }

    /// `cpuidle_reflect()`: the governor learns the stay that ended (`idle_state_at` to
    /// `idle_state_end`), whether the tick ran meanwhile (`tick_nohz_idle_got_tick()`) and
    /// whether POLL ran out of time.
    fn cpuidle_reflect(&mut self, cpu: usize) {
        let now = self.now();
        let tick_nsec = self.t.tick_nsec();
        let c = &mut self.cpus[cpu];
        if !std::mem::take(&mut c.idle_reflect) {
            return;
        }
        let residency = c.idle_state_end - c.idle_state_at;
        c.idle_usage.record(&self.c.idle_states, c.idle_state, residency);
        let w = Wakeup {
            state: c.idle_state,
            residency,
            tick: std::mem::take(&mut c.got_idle_tick),
            poll_time_limit: std::mem::take(&mut c.poll_time_limit),
            now,
            tick_nsec,
        };
        c.gov.reflect(&self.c.idle_states, &w);
    }

    /// `do_idle()`: the idle task's loop, one step per call (`IdlePhase`).
    pub(crate) fn do_idle(&mut self, cpu: usize, phase: IdlePhase) -> Flow {
        match phase {
            IdlePhase::LoopTop => {
                // The loop looks only at need_resched(): a call-single entry queued while this
                // CPU was on its way here waits for its IPI (or the flag write of a waker that
                // found it polling), as in do_idle().
                if self.cpus[cpu].softirq_pending {
                    return self.run_softirq(cpu, Frame::Idle { phase: IdlePhase::LoopTop });
                }
                if self.cpus[cpu].need_resched {
                    // Out of the loop: the flush, then schedule_idle().
                    self.set_top(cpu, Frame::Idle { phase: IdlePhase::Leaving });
                    return Flow::Again;
                }
                if self.cpus[cpu].debt > 0 {
                    // Work owed from the last handlers is done before the CPU idles.
                    return self.busy(cpu, 0, Frame::Idle { phase: IdlePhase::LoopTop });
                }
                let now = self.now();
                self.cpus[cpu].idle_enter = now;
                if self.ewma(cpu) {
                    // The EWMA's rule: every idle entry stops the tick.
                    self.cpus[cpu].tick_stopped = self.f.NOHZ_IDLE_BALANCE;
                    self.nohz_enter_idle(cpu);
                }
                // __current_set_polling() comes first in do_idle(): on x86 the governor runs with
                // the flag set (arm64 has no TIF_POLLING_NRFLAG).
                self.cpus[cpu].poll_exit = self.m.arch == Arch::X86;
                self.busy(cpu, self.c.idle_select, Frame::Idle { phase: IdlePhase::Selected })
            }
            IdlePhase::Selected => {
                // The governor and the tick decision happened during the step (a wakeup that
                // arrived meanwhile finds them done, as call_cpuidle()'s need_resched() check).
                let k = if self.ewma(cpu) { None } else { Some(self.cpuidle_select(cpu)) };
                if self.cpus[cpu].need_resched {
                    // Woken while selecting: the loop's need_resched() check sees it.
                    self.set_top(cpu, Frame::Idle { phase: IdlePhase::Woken });
                    return Flow::Again;
                }
                self.cpus[cpu].poll_exit = false;
                let now = self.now();
                let k = match k {
                    Some(k) => k,
                    None => {
                        let c = &self.cpus[cpu];
                        let Governor::Ewma(e) = &c.gov else { unreachable!() };
                        e.select(&self.c.idle_states, 0)
                    }
                };
                let c = &self.cpus[cpu];
                wakesim_engine::invariant!(
                    c.csd.is_empty() || c.ipis_in_flight > 0,
                    "CPU {cpu} enters an idle state with {} call-single entries queued and no IPI on its way",
                    c.csd.len()
                );
                let limit = self.cpus[cpu].gov.poll_limit().unwrap_or(self.c.poll_limit);
                self.enter_idle_state(cpu, k, now + limit);
                let c = &mut self.cpus[cpu];
                c.idle_state_at = now;
                c.idle_reflect = true;
                c.idle_usage.selects += 1;
                c.idle_usage.tick_kept += u64::from(!c.tick_stopped);
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
                if let Governor::Ewma(e) = &mut c.gov {
                    e.update(observed);
                }
                // cpuidle_enter_state()'s time_end: when the CPU runs again.
                c.idle_state_end = now + lat;
                // Leaving a polling state (flag write or interrupt): TIF_POLLING_NRFLAG stays set
                // until the loop clears it to flush or to schedule (or re-enters a state).
                c.poll_exit = c.polling;
                c.polling = false;
                self.wake.cost_idle_exit += lat;
                self.busy(cpu, lat, Frame::Idle { phase: IdlePhase::Woken })
            }
            IdlePhase::PollIrqReturn => {
                if self.cpus[cpu].need_resched {
                    // poll_idle() returns; the governor learns the whole stay.
                    let now = self.now();
                    let observed = now - self.cpus[cpu].idle_enter;
                    let c = &mut self.cpus[cpu];
                    if let Governor::Ewma(e) = &mut c.gov {
                        e.update(observed);
                    }
                    c.idle_state_end = now;
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
                // The interrupt that woke the CPU has run (interrupts come on before the
                // reflect, in cpuidle_enter_state()).
                self.cpuidle_reflect(cpu);
                if self.cpus[cpu].need_resched {
                    // Leaving the loop: cpuidle_reflect() + tick_nohz_idle_exit(), still polling.
                    return self.busy(cpu, self.c.idle_exit, Frame::Idle { phase: IdlePhase::Leaving });
                }
                self.set_top(cpu, Frame::Idle { phase: IdlePhase::Leaving });
                Flow::Again
            }
            IdlePhase::Leaving => {
                // Pending interrupts were taken by the executor before we got here; polling
                // ends now (current_clr_polling before the flush / schedule_idle). Only a CPU
                // leaving the loop (NEED_RESCHED) flushes its call-single queue here; one that
                // goes round again (woken by a tick or device interrupt) leaves queued entries
                // to their IPI.
                self.cpus[cpu].poll_exit = false;
                if self.cpus[cpu].need_resched && !self.cpus[cpu].csd.is_empty() {
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
                self.cpus[cpu].tick_stopped = false;
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

    /// The POLL state's time limit expired (`poll_idle()` sets `dev->poll_time_limit`).
    /// poll_idle() returns, the governor is told, and `do_idle()` goes round to select again.
    /// The EWMA instead re-selects at once among the states below POLL.
    pub(crate) fn poll_timeout(&mut self, cpu: usize) {
        if let Governor::Ewma(e) = &self.cpus[cpu].gov {
            let k = e.select(&self.c.idle_states, 1);
            let now = self.now();
            let c = &mut self.cpus[cpu];
            c.idle_usage.record(&self.c.idle_states, 0, now - c.idle_state_at);
            c.idle_state_at = now;
            self.enter_idle_state(cpu, k, 0);
            return;
        }
        trace_ev!(self, TraceEvent::IdleExit { cpu: cpu as u32 });
        let now = self.now();
        let c = &mut self.cpus[cpu];
        c.idle_state_end = now;
        c.poll_time_limit = true;
        // Still polling (TIF_POLLING_NRFLAG) on the way round the loop.
        c.polling = false;
        c.poll_exit = true;
        c.mode = Mode::Kernel;
        self.cpuidle_reflect(cpu);
        self.set_top(cpu, Frame::Idle { phase: IdlePhase::LoopTop });
        self.resume(cpu);
    }

    /// The idle-state counters summed over CPUs, for the run's statistics.
    pub(crate) fn idle_stats(&self) -> wakesim_stats::IdleStats {
        let mut st: Vec<wakesim_stats::IdleStateStat> = self
            .c
            .idle_states
            .iter()
            .map(|s| wakesim_stats::IdleStateStat { name: s.name.clone(), ..Default::default() })
            .collect();
        let (mut selects, mut tick_kept) = (0, 0);
        for c in &self.cpus {
            selects += c.idle_usage.selects;
            tick_kept += c.idle_usage.tick_kept;
            for (t, u) in st.iter_mut().zip(&c.idle_usage.states) {
                t.usage += u.usage;
                t.time_ns += u.time;
                t.above += u.above;
                t.below += u.below;
            }
        }
        wakesim_stats::IdleStats { governor: self.cpus[0].gov.kind().name().to_string(), states: st, selects, tick_kept }
    }
}
