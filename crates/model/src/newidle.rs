//! Newly-idle balancing: `sched_balance_newidle()` (kernel/sched/fair.c, v6.6 form), called from
//! `pick_next_task_fair()` with the rq lock held and interrupts off. It gates on the root-domain
//! overload flag and on `avg_idle` against the lowest domain's `max_newidle_lb_cost`, drops the rq
//! lock, walks the domains bottom-up while the accumulated cost fits in `avg_idle`, and feeds
//! the measured wall time of each level back into `max_newidle_lb_cost` (decaying max, 1 %/s).
//!
//! A call is `Frame::Newidle`, walked through its [`NewidlePhase`]s by `sched_balance_newidle()`.
//!
//! SHARED_RUNQ v3 pulls from the shared runqueue before any gate and gates the rest on the
//! LLC's parent domain; the gated (v4) form pulls only after the gates, counts the pull's time
//! in the newidle cost, skips the levels at and below the LLC, and not with a wakeup pending.

use crate::imbalance::MigrationType;
use crate::balance::{LbPhase, IDLE_NEWLY};
use crate::exec::{Flow, Frame};
use crate::locks::LockId;
use crate::shared_runq::SharedRunqPhase;
use crate::sim::Sim;
use wakesim_engine::Time;
use wakesim_machine::SdFlags;

/// Where `sched_balance_newidle()` resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewidlePhase {
    /// Entry (SHARED_RUNQ v3 pulls first).
    Entry,
    /// Back from the ungated (v3) SHARED_RUNQ pull.
    SharedRunqPulled,
    /// The gates: `rd->overload`, `avg_idle` against `max_newidle_lb_cost`.
    Gates,
    /// Back from the gated (v4) SHARED_RUNQ pull.
    SharedRunqGatedPulled,
    /// `raw_spin_rq_unlock()` and `update_blocked_averages()`.
    Unlock,
    /// The domain walk: balance this level if the accumulated cost still fits.
    Level,
    /// Back from one level's `sched_balance_rq()`: account its cost, stop or go on.
    LevelDone,
    /// Retake the rq lock.
    Relock,
    /// Done: `max_idle_balance_cost`, `idle_stamp`.
    Done,
}

impl Sim {
    /// `update_newidle_cost()`: returns whether the max decayed. With NEWIDLE_COST_BUMP a new max
    /// is capped at `sysctl_sched_migration_cost` + 200 ns (155213a2aed4: "we don't want things
    /// to grow out of control").
    pub(crate) fn update_newidle_cost(&mut self, cpu: usize, level: usize, cost: Time) -> bool {
        let j = self.jiffies();
        let hz = self.t.hz;
        let cap = if self.f.NEWIDLE_COST_BUMP { self.t.migration_cost + 200 } else { Time::MAX };
        let d = &mut self.doms[cpu][level];
        if cost > d.max_newidle_lb_cost {
            d.max_newidle_lb_cost = cost.min(cap);
            d.last_decay_max_lb_cost = j;
        } else if j > d.last_decay_max_lb_cost + hz {
            d.max_newidle_lb_cost = d.max_newidle_lb_cost * 253 / 256;
            d.last_decay_max_lb_cost = j;
            return true;
        }
        false
    }

    /// `sched_balance_newidle()` (`newidle_balance()` before v6.10) on `cpu`, one step per call
    /// (`NewidlePhase`).
    pub(crate) fn sched_balance_newidle(&mut self, cpu: usize, f: Frame) -> Flow {
        let Frame::Newidle { phase, level, t0, tl, cost_sum, pulled } = f else { unreachable!() };
        let fr = |phase: NewidlePhase, level: u8, tl: Time, cost_sum: Time, pulled: bool| Frame::Newidle { phase, level, t0, tl, cost_sum, pulled };
        match phase {
            NewidlePhase::Entry => {
                self.newidle.entered += 1;
                if self.cpus[cpu].kicked_without_task && self.tasks[self.curr(cpu) as usize].is_idle {
                    self.newidle.from_idle_no_task += 1;
                }
                if self.cpus[cpu].ttwu_pending {
                    return Flow::Pop;
                }
                if self.f.SHARED_RUNQ && !self.f.SHARED_RUNQ_GATED {
                    let pull = Frame::SharedRunqPull { phase: SharedRunqPhase::Pick, task: crate::state::NO_TASK, src: 0 };
                    return self.call(cpu, fr(NewidlePhase::SharedRunqPulled, 0, 0, 0, false), pull);
                }
                self.set_top(cpu, fr(NewidlePhase::Gates, 0, 0, 0, false));
                Flow::Again
            }
            NewidlePhase::SharedRunqPulled => {
                if self.cpus[cpu].lb_moved > 0 {
                    return Flow::Pop; // v3: the shared runqueue gave us a task
                }
                self.set_top(cpu, fr(NewidlePhase::Gates, 0, 0, 0, false));
                Flow::Again
            }
            NewidlePhase::Gates => {
                let now = self.now();
                // The fixed part (misfit update, clock, gate reads, nohz_newidle_balance checks).
                self.charge(cpu, self.c.newidle_gate);
                self.cpus[cpu].idle_stamp = now.max(1);
                let nlev = self.m.domains[cpu].len();
                // v3 gates on the LLC's parent domain; mainline on the lowest domain.
                let gate_level = if self.f.SHARED_RUNQ && !self.f.SHARED_RUNQ_GATED {
                    self.m.sd_llc[cpu].map(|l| l as usize + 1).filter(|&l| l < nlev).unwrap_or(0)
                } else {
                    0
                };
                let gate_cost = if nlev > 0 { self.doms[cpu][gate_level].max_newidle_lb_cost } else { 0 };
                if nlev == 0 || !self.rd_overloaded || (self.f.NEWIDLE_COST_GATE && self.cpus[cpu].avg_idle < gate_cost) {
                    self.newidle.gated += 1;
                    return Flow::Pop;
                }
                if self.f.SHARED_RUNQ_GATED {
                    if self.cpus[cpu].ttwu_pending {
                        return Flow::Pop;
                    }
                    let pull = Frame::SharedRunqPull { phase: SharedRunqPhase::Pick, task: crate::state::NO_TASK, src: 0 };
                    return self.call(cpu, Frame::Newidle { phase: NewidlePhase::SharedRunqGatedPulled, level: 0, t0: now, tl: now, cost_sum: 0, pulled: false }, pull);
                }
                self.set_top(cpu, Frame::Newidle { phase: NewidlePhase::Unlock, level: 0, t0: now, tl: now, cost_sum: 0, pulled: false });
                Flow::Again
            }
            NewidlePhase::SharedRunqGatedPulled => {
                // The gated pull's time counts as newidle cost at the LLC level.
                let c = self.now() - t0;
                if let Some(l) = self.m.sd_llc[cpu] {
                    self.update_newidle_cost(cpu, l as usize, c);
                }
                if self.cpus[cpu].lb_moved > 0 {
                    self.cpus[cpu].idle_stamp = 0;
                    self.wake.cost_newidle += c;
                    return Flow::Pop;
                }
                self.set_top(cpu, Frame::Newidle { phase: NewidlePhase::Unlock, level: 0, t0, tl: t0, cost_sum: c, pulled: false });
                Flow::Again
            }
            NewidlePhase::Unlock => {
                // raw_spin_rq_unlock(): other CPUs may enqueue here now; interrupts stay off.
                self.lock_release(cpu, LockId::Rq(cpu as u32));
                self.cpus[cpu].irqs_off += 1;
                let cost = self.c.update_blocked;
                // The kernel reads t0 here, before update_blocked_averages(): the work this CPU
                // still owes (the gates, schedule()'s path so far) was done before it.
                let level_start = self.now() + self.cpus[cpu].debt;
                self.busy(cpu, cost, Frame::Newidle { phase: NewidlePhase::Level, level: 0, t0, tl: level_start, cost_sum, pulled: false })
            }
            NewidlePhase::Level => {
                let l = level as usize;
                if l >= self.m.domains[cpu].len() || self.cpus[cpu].avg_idle < cost_sum + self.doms[cpu][l].max_newidle_lb_cost {
                    self.set_top(cpu, fr(NewidlePhase::Relock, level, tl, cost_sum, pulled));
                    return Flow::Again;
                }
                let below_llc = self.m.domains[cpu][l].span.is_subset_of(&self.m.llc_span[cpu]);
                if !self.m.domains[cpu][l].has(SdFlags::BALANCE_NEWIDLE) || (self.f.SHARED_RUNQ_GATED && below_llc) {
                    self.set_top(cpu, fr(NewidlePhase::Level, level + 1, tl, cost_sum, pulled));
                    return Flow::Again;
                }
                // A level's cost runs from `tl`: for the first level that balances, from before
                // update_blocked_averages() (v5.16, 9e9af819db5d: "Take this time into account
                // in the cost of the 1st load balance of a newly idle cpu"), then from the last
                // level's end (`t0 = t1`).
                let lb = Frame::Lb { phase: LbPhase::Decide, dst: cpu as u32, level, idle: IDLE_NEWLY, src: 0, mt: MigrationType::Task };
                self.call(cpu, fr(NewidlePhase::LevelDone, level, tl, cost_sum, pulled), lb)
            }
            NewidlePhase::LevelDone => {
                let l = level as usize;
                // saturating: with cost jitter (host profiles) the owed work paid before t0 may
                // have run shorter than charged.
                let c = self.now().saturating_sub(tl);
                let moved = self.cpus[cpu].lb_moved > 0;
                // NEWIDLE_COST_BUMP: "Failing newidle means it is not effective; bump the cost so
                // we end up doing less of it" (155213a2aed4). The walk's own sum keeps the real cost.
                let recorded = if self.f.NEWIDLE_COST_BUMP && !moved { self.doms[cpu][l].max_newidle_lb_cost * 3 / 2 } else { c };
                self.update_newidle_cost(cpu, l, recorded);
                if let Some(s) = self.newidle.levels.get_mut(l) {
                    s.calls += 1;
                    s.cost += c;
                }
                if moved {
                    if let Some(s) = self.newidle.levels.get_mut(l) {
                        s.pulled += 1;
                    }
                }
                let pulled = pulled || moved;
                let cost_sum = cost_sum + c;
                let rq = &self.cpus[cpu];
                let stop = pulled || rq.nr_running > 0 || rq.ttwu_pending;
                let t1 = self.now();
                self.set_top(cpu, fr(if stop { NewidlePhase::Relock } else { NewidlePhase::Level }, level + 1, t1, cost_sum, pulled));
                Flow::Again
            }
            NewidlePhase::Relock => {
                self.cpus[cpu].irqs_off -= 1;
                self.call(cpu, fr(NewidlePhase::Done, level, tl, cost_sum, pulled), Frame::Lock { lock: LockId::Rq(cpu as u32), granted: false })
            }
            NewidlePhase::Done => {
                let now = self.now();
                let rq = &mut self.cpus[cpu];
                if cost_sum > rq.max_idle_balance_cost {
                    rq.max_idle_balance_cost = cost_sum;
                }
                if pulled || rq.cfs.nr_running() > 0 {
                    rq.idle_stamp = 0;
                }
                self.wake.cost_newidle += now - t0;
                Flow::Pop
            }
        }
    }
}
