//! Periodic balancing (`sched_balance_domains()`, SCHED_SOFTIRQ) and NOHZ idle balancing
//! (`nohz_balancer_kick()` → `kick_ilb()` → `nohz_csd_func()` → `_nohz_idle_balance()`),
//! kernel/sched/fair.c v6.6.
//!
//! A pass is `Frame::Periodic`, walked through its [`PeriodicPhase`]s by
//! `sched_balance_domains()`; `Frame::NohzBalance` is `_nohz_idle_balance()`'s walk.

use crate::imbalance::MigrationType;
use crate::balance::{LbPhase, IDLE_BUSY, IDLE_IDLE};
use crate::exec::{Flow, Frame};
use crate::sim::Sim;
use crate::state::Csd;
use crate::trace::trace_ev;
use wakesim_trace::TraceEvent;

/// Where `sched_balance_domains()` resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeriodicPhase {
    /// `update_blocked_averages()`.
    UpdateBlocked,
    /// The level loop: balance each domain whose interval has passed.
    Level,
    /// Back from one level's `sched_balance_rq()`.
    LevelDone,
}

impl Sim {
    /// Runs pending softirqs (SCHED_SOFTIRQ) in the context of `resume_as`.
    pub(crate) fn run_softirq(&mut self, cpu: usize, resume_as: Frame) -> Flow {
        self.cpus[cpu].softirq_pending = false;
        if std::mem::take(&mut self.cpus[cpu].nohz_balance_pending) {
            return self.call(cpu, resume_as, Frame::NohzBalance { next: cpu as u32 + 1 });
        }
        let idle = if self.available_idle(cpu) { IDLE_IDLE } else { IDLE_BUSY };
        self.call(cpu, resume_as, Frame::Periodic { phase: PeriodicPhase::UpdateBlocked, cpu: cpu as u32, level: 0, idle })
    }

    /// `sd_interval()` in jiffies.
    fn sd_interval(&self, cpu: usize, level: usize, busy: bool) -> u64 {
        let sd = &self.m.domains[cpu][level];
        let mut ms = self.doms[cpu][level].balance_interval_ms;
        if busy {
            ms *= sd.busy_factor as u64;
        }
        let mut j = self.t.ms_to_jiffies(ms);
        if busy {
            j = j.saturating_sub(1);
        }
        let max = self.t.hz * self.nr_cpus() as u64 / 10;
        j.clamp(1, max.max(1))
    }

    /// `sched_balance_domains()` (`rebalance_domains()` before v6.10) for the frame's CPU, one
    /// step per call (`PeriodicPhase`).
    pub(crate) fn sched_balance_domains(&mut self, cpu: usize, f: Frame) -> Flow {
        let Frame::Periodic { phase, cpu: target, level, idle } = f else { unreachable!() };
        let t = target as usize;
        let fr = |phase: PeriodicPhase, level: u8| Frame::Periodic { phase, cpu: target, level, idle };
        match phase {
            PeriodicPhase::UpdateBlocked => {
                self.update_load_avg(t, crate::state::NO_TASK);
                self.busy(cpu, self.c.update_blocked, fr(PeriodicPhase::Level, 0))
            }
            PeriodicPhase::Level => {
                let l = level as usize;
                let j = self.jiffies();
                if l >= self.m.domains[t].len() {
                    // rq->next_balance = min over levels of last_balance + interval.
                    let busy = idle == IDLE_BUSY;
                    let mut next = j + 60 * self.t.hz;
                    let mut decayed = false;
                    let mut max_cost = 0;
                    for lv in 0..self.m.domains[t].len() {
                        decayed |= self.update_newidle_cost(t, lv, 0);
                        max_cost += self.doms[t][lv].max_newidle_lb_cost;
                        next = next.min(self.doms[t][lv].last_balance + self.sd_interval(t, lv, busy));
                    }
                    if decayed {
                        self.cpus[t].max_idle_balance_cost = max_cost.max(self.t.migration_cost);
                    }
                    self.cpus[t].next_balance = next;
                    return Flow::Pop;
                }
                let interval = self.sd_interval(t, l, idle == IDLE_BUSY);
                if j >= self.doms[t][l].last_balance + interval {
                    let lb = Frame::Lb { phase: LbPhase::Decide, dst: target, level, idle, src: 0, mt: MigrationType::Task };
                    return self.call(cpu, fr(PeriodicPhase::LevelDone, level), lb);
                }
                self.set_top(cpu, fr(PeriodicPhase::Level, level + 1));
                Flow::Again
            }
            PeriodicPhase::LevelDone => {
                self.doms[t][level as usize].last_balance = self.jiffies();
                if !self.cpus[cpu].lb_continue {
                    // should_we_balance() said another CPU balances this group: higher levels too.
                    self.set_top(cpu, fr(PeriodicPhase::Level, u8::MAX));
                    return Flow::Again;
                }
                self.set_top(cpu, fr(PeriodicPhase::Level, level + 1));
                Flow::Again
            }
        }
    }

    /// `nohz_balance_enter_idle()`: the tick stops; this CPU joins the NOHZ idle mask.
    pub(crate) fn nohz_enter_idle(&mut self, cpu: usize) {
        if !self.f.NOHZ_IDLE_BALANCE || self.cpus[cpu].nohz_idle {
            return;
        }
        self.cpus[cpu].nohz_idle = true;
        self.nohz.idle_cpus.set(cpu);
        self.nohz.nr_cpus += 1;
        let llc = self.cpus[cpu].llc as usize;
        self.llcs[llc].nr_busy_cpus = self.llcs[llc].nr_busy_cpus.saturating_sub(1);
    }

    /// `nohz_balance_exit_idle()`: at its first busy tick a CPU leaves the NOHZ idle mask and
    /// counts as busy in its LLC again.
    pub(crate) fn nohz_exit_idle(&mut self, cpu: usize) {
        if self.cpus[cpu].nohz_idle {
            self.cpus[cpu].nohz_idle = false;
            self.nohz.idle_cpus.clear(cpu);
            self.nohz.nr_cpus -= 1;
            let llc = self.cpus[cpu].llc as usize;
            self.llcs[llc].nr_busy_cpus += 1;
        }
    }

    /// `nohz_balancer_kick()` on a busy CPU's tick: kick an idle CPU to balance for all idle
    /// CPUs when this one is overloaded (nr_running ≥ 2) or its LLC has other busy CPUs.
    pub(crate) fn nohz_balancer_kick(&mut self, cpu: usize) {
        if !self.f.NOHZ_IDLE_BALANCE || self.available_idle(cpu) {
            return;
        }
        self.nohz_exit_idle(cpu);
        if self.nohz.nr_cpus == 0 {
            return;
        }
        let j = self.jiffies();
        if j < self.nohz.next_balance {
            return;
        }
        let llc = self.cpus[cpu].llc as usize;
        if !(self.cpus[cpu].nr_running >= 2 || self.llcs[llc].nr_busy_cpus > 1) {
            return;
        }
        // kick_ilb(): the first idle CPU of the NOHZ mask.
        self.nohz.next_balance = j + 1;
        let Some(ilb) = self.nohz.idle_cpus.iter().find(|&c| c != cpu && self.available_idle(c)) else { return };
        if self.cpus[ilb].csd.contains(&Csd::IlbKick) {
            return;
        }
        trace_ev!(self, TraceEvent::IlbKick { cpu: cpu as u32, to: ilb as u32 });
        let was_empty = self.cpus[ilb].csd.is_empty();
        self.cpus[ilb].csd.push_back(Csd::IlbKick);
        if was_empty {
            self.send_call_function_single_ipi(cpu, ilb);
        }
    }

    /// `nohz_csd_func()` (v6.6): only balances if the CPU is idle *and* NEED_RESCHED is clear, so
    /// a kick delivered by a flag write to a polling CPU (which sets NEED_RESCHED) is skipped —
    /// the behaviour Vincent Guittot pointed out in 2024 (research §5.3, §11.5).
    /// With ILB_POLLING_FIX (v6.13, ea9cffc0a154) `idle_cpu()` alone decides.
    pub(crate) fn nohz_csd_func(&mut self, cpu: usize) {
        if self.available_idle(cpu) && (self.f.ILB_POLLING_FIX || !self.cpus[cpu].need_resched) {
            self.cpus[cpu].nohz_balance_pending = true;
            self.cpus[cpu].softirq_pending = true;
        } else {
            trace_ev!(self, TraceEvent::IlbSkipped { cpu: cpu as u32 });
        }
    }

    /// `_nohz_idle_balance()`: balance on behalf of every NOHZ-idle CPU whose balance is due,
    /// starting after this CPU and ending with it; stop if this CPU got work: NEED_RESCHED
    /// (which a polling CPU's kick sets too), or with ILB_POLLING_FIX (v6.13, ff47a0acfcce) only NEED_RESCHED
    /// on a CPU that is no longer idle (`!idle_cpu(this_cpu) && need_resched()`).
    pub(crate) fn _nohz_idle_balance(&mut self, cpu: usize, next: u32) -> Flow {
        let n = self.nr_cpus() as u32;
        let got_work = if self.f.ILB_POLLING_FIX {
            !self.available_idle(cpu) && self.cpus[cpu].need_resched
        } else {
            self.cpus[cpu].need_resched
        };
        if got_work || self.cpus[cpu].nr_running > 0 {
            return Flow::Pop;
        }
        let j = self.jiffies();
        let end = cpu as u32 + n;
        let mut k = next;
        while k <= end {
            let c = (k % n) as usize;
            k += 1;
            if !(self.nohz.idle_cpus.contains(c) || c == cpu) {
                continue;
            }
            if j >= self.cpus[c].next_balance {
                let per = Frame::Periodic { phase: PeriodicPhase::UpdateBlocked, cpu: c as u32, level: 0, idle: IDLE_IDLE };
                return self.call(cpu, Frame::NohzBalance { next: k }, per);
            }
        }
        self.nohz.next_balance = j + 1;
        Flow::Pop
    }
}
