//! One load-balancing pass: `load_balance()` / `sched_balance_rq()` (kernel/sched/fair.c):
//! `should_we_balance()`, group statistics and classification (`update_sg_lb_stats`,
//! `group_classify`), the busiest group and `find_busiest_queue()` (the imbalance and its
//! migration type: `imbalance.rs`), then `detach_tasks()` under the source rq lock and
//! `attach_tasks()` under the destination's (`detach.rs`).
//!
//! When nothing can be detached (the busiest CPU runs its only task, or every queued one is
//! cache-hot) the pass fails; repeated failures to even out running tasks start active
//! balancing (`active_balance.rs`).
//!
//! Simplifications (stated, not hidden): no misfit/asym-packing/NUMA-fbq paths, no retry
//! with another busiest CPU when all tasks of the first are pinned (`redo`), and no
//! LBF_NEED_BREAK relock (a pass visits at most `sysctl_sched_nr_migrate` tasks, as the
//! kernel's does before that break). On SD_NUMA levels `adjust_numa_imbalance()` applies
//! (`find_idlest.rs`).
//!
//! A pass is `Frame::Lb`, walked through its [`LbPhase`]s by `sched_balance_rq()`.

use crate::exec::{Flow, Frame};
use crate::imbalance::{calculate_imbalance, ImbalanceEnv, MigrationType, SdStats};
use crate::locks::LockId;
use crate::sim::Sim;
use crate::state::{NO_CPU, NO_TASK};
use crate::trace::trace_ev;
use wakesim_machine::SdFlags;
use wakesim_stats::IdleType;
use wakesim_trace::{LbResult, TraceEvent};

/// Where a `sched_balance_rq()` pass resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbPhase {
    /// `should_we_balance()`, `find_busiest_group()` / `find_busiest_queue()` (cost paid).
    Decide,
    /// Take the busiest rq's lock.
    LockSource,
    /// `detach_tasks()` under the source lock.
    Detach,
    /// Unlock the source, lock the destination.
    LockDest,
    /// `attach_tasks()`'s cost under the destination lock.
    AttachCost,
    /// `attach_tasks()`: enqueue, preemption check, unlock.
    Attach,
    /// Nothing to pull: the domain is balanced.
    Balanced,
    /// Nothing could be detached (`ld_moved == 0`): count the failure, maybe start active
    /// balancing.
    Failed,
    /// `need_active_balance()` said yes: the busiest rq's lock is held.
    ActiveKick,
    /// The stopper's work is queued: wake it (`active_balance.rs`).
    ActiveWake,
}

/// `MAX_PINNED_INTERVAL`: the balance interval's ceiling when all tasks were pinned (ms).
const MAX_PINNED_INTERVAL: u64 = 512;

/// `enum group_type`, the subset the model classifies into, in the kernel's order (lower is
/// idler).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum GroupType {
    #[default]
    HasSpare,
    FullyBusy,
    Overloaded,
}

/// `group_classify()`: `group_is_overloaded()`, then `!group_has_capacity()` (imbalance_pct
/// `pct`), for a group running `nr` tasks on `weight` CPUs of total capacity `cap`.
pub(crate) fn group_classify(pct: u64, nr: u64, weight: u64, cap: u64, util: u64, runnable: u64) -> GroupType {
    let overloaded = nr > weight && (cap * 100 < util * pct || cap * pct < runnable * 100);
    let has_capacity = nr < weight || (cap * pct >= runnable * 100 && cap * 100 > util * pct);
    if overloaded {
        GroupType::Overloaded
    } else if !has_capacity {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

#[derive(Clone, Copy, Debug, Default)]
/// `struct sg_lb_stats`, the fields the model uses.
pub(crate) struct GroupStats {
    pub(crate) nr: u64,
    pub(crate) idle_cpus: u64,
    pub(crate) load: u64,
    pub(crate) util: u64,
    pub(crate) runnable: u64,
    pub(crate) capacity: u64,
    pub(crate) weight: u64,
    /// Some CPU of the group has more than one runnable task (`sg_overloaded`).
    pub(crate) overloaded_cpu: bool,
    pub(crate) kind: GroupType,
}

pub(crate) const IDLE_IDLE: u8 = IdleType::Idle as u8;
pub(crate) const IDLE_BUSY: u8 = IdleType::Busy as u8;
pub(crate) const IDLE_NEWLY: u8 = IdleType::NewlyIdle as u8;

impl Sim {
    fn group_stats(&self, span: &wakesim_machine::CpuSet, pct: u64) -> GroupStats {
        let mut g = GroupStats::default();
        for c in span.iter() {
            let rq = &self.cpus[c];
            g.nr += rq.nr_running as u64;
            g.idle_cpus += (rq.nr_running == 0 && self.available_idle(c)) as u64;
            g.load += rq.cfs.avg.load_avg;
            g.util += self.cpu_util(c);
            g.runnable += rq.cfs.avg.runnable_avg;
            g.capacity += rq.capacity;
            g.weight += 1;
            g.overloaded_cpu |= rq.nr_running > 1;
        }
        g.kind = group_classify(pct, g.nr, g.weight, g.capacity, g.util, g.runnable);
        g
    }

    /// `should_we_balance()`: newidle always may; otherwise the first idle CPU of the local group
    /// (or its balance CPU when none is idle) does the balancing for the group.
    fn should_we_balance(&self, dst: usize, level: usize, idle: u8) -> bool {
        if idle == IDLE_NEWLY {
            return self.cpus[dst].nr_running == 0 && !self.cpus[dst].ttwu_pending;
        }
        let g = &self.m.domains[dst][level].groups[0];
        for c in g.span.iter() {
            if self.available_idle(c) {
                return c == dst;
            }
        }
        g.balance_cpu as usize == dst
    }

    /// `find_busiest_group()` with `calculate_imbalance()`, then `find_busiest_queue()`: the
    /// source CPU, the migration type and `env->imbalance` in its unit (tasks, utilisation or
    /// load), as kernel/sched/fair.c (v6.0) decides them for the group types the model has.
    fn find_busiest(&mut self, dst: usize, level: usize, idle: u8) -> Option<(usize, MigrationType, u64)> {
        let sd = &self.m.domains[dst][level];
        let pct = sd.imbalance_pct as u64;
        let numa_imb_nr = (sd.has(SdFlags::NUMA) && self.f.NUMA_IMBALANCE).then_some(sd.imb_numa_nr as u64);
        // sds->prefer_sibling: the child domain's SD_PREFER_SIBLING.
        let prefer_sibling = level > 0 && self.m.domains[dst][level - 1].has(SdFlags::PREFER_SIBLING);
        let share_llc = sd.has(SdFlags::SHARE_LLC) || sd.has(SdFlags::SHARE_CPUCAPACITY);
        let local = self.group_stats(&sd.groups[0].span, pct);
        let mut busiest: Option<(usize, GroupStats)> = None;
        let mut sds = SdStats { load: local.load, capacity: local.capacity };
        let mut sd_any_over = false;
        for (gi, g) in sd.groups.iter().enumerate().skip(1) {
            let s = self.group_stats(&g.span, pct);
            sds.load += s.load;
            sds.capacity += s.capacity;
            sd_any_over |= s.overloaded_cpu;
            if s.nr == 0 {
                continue;
            }
            // update_sd_pick_busiest(): the higher group type; among overloaded groups the
            // highest avg_load; otherwise the fewest idle CPUs, then the most tasks.
            let better = match busiest {
                None => true,
                Some((_, b)) => {
                    if s.kind != b.kind {
                        s.kind > b.kind
                    } else if s.kind == GroupType::Overloaded {
                        s.load * b.capacity > b.load * s.capacity
                    } else {
                        (s.idle_cpus, std::cmp::Reverse(s.nr)) < (b.idle_cpus, std::cmp::Reverse(b.nr))
                    }
                }
            };
            if better {
                busiest = Some((gi, s));
            }
        }
        if level + 1 == self.m.domains[dst].len() {
            // update_sd_lb_stats() at the root domain rewrites rd->overloaded.
            let over = local.overloaded_cpu || sd_any_over;
            if over != self.rd_overloaded {
                self.write_rd_overloaded(dst, over);
            }
        }
        let ix = idle as usize;
        let Some((bgi, b)) = busiest else {
            self.dstat[dst][level].lb_nobusyg[ix] += 1;
            return None;
        };
        let env = ImbalanceEnv { pct, idle, prefer_sibling, share_llc, numa_imb_nr };
        let Some((mt, imb)) = calculate_imbalance(&local, &b, sds, &env) else {
            self.dstat[dst][level].lb_balanced[ix] += 1;
            return None;
        };
        self.dstat[dst][level].lb_imbalance[ix] += imb;
        // find_busiest_queue(), by migration type.
        let span = &self.m.domains[dst][level].groups[bgi].span;
        let mut src: Option<(usize, u64, u64)> = None; // (cpu, figure, capacity)
        for c in span.iter() {
            let rq = &self.cpus[c];
            let nr = rq.nr_running as u64;
            if nr == 0 {
                continue;
            }
            let (fig, cap) = match mt {
                // The highest load per capacity; a CPU whose one task outweighs the imbalance
                // is left alone (check_cpu_capacity() is not modelled).
                MigrationType::Load => {
                    let load = rq.cfs.avg.load_avg;
                    if nr == 1 && load > imb {
                        continue;
                    }
                    (load, rq.capacity)
                }
                // Never a CPU with one running task: nothing on it could be detached.
                MigrationType::Util if nr <= 1 => continue,
                MigrationType::Util => (self.cpu_util(c), 1),
                MigrationType::Task => (nr, 1),
            };
            // Strictly more: of equal ones the first CPU of the group.
            if src.is_none_or(|(_, bf, bc)| fig * bc > bf * cap) {
                src = Some((c, fig, cap));
            }
        }
        match src {
            Some((s, _, _)) => Some((s, mt, imb)),
            None => {
                self.dstat[dst][level].lb_nobusyq[ix] += 1;
                None
            }
        }
    }

    /// One `sched_balance_rq()` (`load_balance()` before v6.10) pass, one step per call
    /// (`LbPhase`).
    pub(crate) fn sched_balance_rq(&mut self, cpu: usize, f: Frame) -> Flow {
        let Frame::Lb { phase, dst, level, idle, src, mt } = f else { unreachable!() };
        let (d, l, ix) = (dst as usize, level as usize, idle as usize);
        let fr = |phase: LbPhase, src: u32| Frame::Lb { phase, dst, level, idle, src, mt };
        match phase {
            LbPhase::Decide => {
                self.cpus[cpu].lb_moved = 0;
                self.cpus[cpu].lb_continue = true;
                self.dstat[d][l].lb_count[ix] += 1;
                if idle != IDLE_NEWLY {
                    let level = self.waste.level_index(d, l);
                    trace_ev!(self, TraceEvent::BalanceStart { cpu: cpu as u32, dst, level, idle: idle == IDLE_IDLE });
                }
                if !self.should_we_balance(d, l, idle) {
                    // goto out_balanced.
                    self.cpus[cpu].lb_continue = false;
                    self.dstat[d][l].lb_balanced[ix] += 1;
                    self.lb_balanced_interval(d, l, idle, false);
                    self.trace_lb_end(cpu, idle, LbResult::NotThisCpu, NO_CPU);
                    return Flow::Pop;
                }
                if idle != IDLE_NEWLY {
                    self.update_idle_cpu_scan(d, l);
                }
                let cost = self.c.lb_base + self.doms[d][l].scan_cost;
                match self.find_busiest(d, l, idle) {
                    Some((s, mt, imb)) => {
                        self.cpus[cpu].lb_imbalance = imb;
                        let fr = |phase: LbPhase| Frame::Lb { phase, dst, level, idle, src: s as u32, mt };
                        if self.cpus[s].nr_running > 1 {
                            self.busy(cpu, cost, fr(LbPhase::LockSource))
                        } else {
                            // busiest->nr_running <= 1: nothing to detach, the group is still
                            // unbalanced (ld_moved stays 0).
                            self.busy(cpu, cost, fr(LbPhase::Failed))
                        }
                    }
                    None => {
                        self.lb_balanced_interval(d, l, idle, false);
                        self.busy(cpu, cost, fr(LbPhase::Balanced, NO_CPU))
                    }
                }
            }
            LbPhase::LockSource => self.call(cpu, fr(LbPhase::Detach, src), Frame::Lock { lock: LockId::Rq(src), granted: false }),
            LbPhase::Detach => {
                let s = src as usize;
                let cost = self.detach_tasks(cpu, s, d, l, idle, mt);
                if self.cpus[cpu].lb_detached.is_empty() {
                    let all_pinned = self.all_pinned(s, d);
                    self.lock_release(cpu, LockId::Rq(src));
                    if all_pinned {
                        // LBF_ALL_PINNED: goto out_all_pinned.
                        self.dstat[d][l].lb_balanced[ix] += 1;
                        self.lb_balanced_interval(d, l, idle, true);
                        self.trace_lb_end(cpu, idle, LbResult::AllPinned, src);
                        return Flow::Pop;
                    }
                    self.set_top(cpu, fr(LbPhase::Failed, src));
                    return Flow::Again;
                }
                self.busy(cpu, cost, fr(LbPhase::LockDest, src))
            }
            LbPhase::LockDest => {
                self.lock_release(cpu, LockId::Rq(src));
                self.call(cpu, fr(LbPhase::AttachCost, src), Frame::Lock { lock: LockId::Rq(dst), granted: false })
            }
            LbPhase::AttachCost => {
                // migrate_task already covers dequeue/enqueue and PELT detach/attach (costs
                // crate); per task the preemption check, and the destination's lines once.
                let n = self.cpus[cpu].lb_detached.len() as u64;
                let cost = n * self.c.wakeup_preempt + self.line_xfer(cpu, d);
                self.busy(cpu, cost, fr(LbPhase::Attach, src))
            }
            LbPhase::Attach => {
                let n = self.attach_tasks(cpu, d);
                self.lock_release(cpu, LockId::Rq(dst));
                self.dstat[d][l].lb_gained[ix] += n as u64;
                self.doms[d][l].nr_balance_failed = 0;
                self.lb_unbalanced_interval(d, l);
                self.wake.migrations_balance += n as u64;
                self.cpus[cpu].lb_moved += n;
                self.trace_lb_end(cpu, idle, LbResult::Moved, src);
                Flow::Pop
            }
            LbPhase::Balanced => {
                self.trace_lb_end(cpu, idle, LbResult::Balanced, NO_CPU);
                Flow::Pop
            }
            LbPhase::Failed => {
                self.dstat[d][l].lb_failed[ix] += 1;
                // Only periodic balancing counts failures: newidle is too frequent.
                if idle != IDLE_NEWLY {
                    self.doms[d][l].nr_balance_failed += 1;
                }
                if self.need_active_balance(d, l, mt == MigrationType::Task) {
                    self.trace_lb_end(cpu, idle, LbResult::ActiveKick, src);
                    return self.call(cpu, fr(LbPhase::ActiveKick, src), Frame::Lock { lock: LockId::Rq(src), granted: false });
                }
                self.lb_unbalanced_interval(d, l);
                self.trace_lb_end(cpu, idle, LbResult::Failed, src);
                Flow::Pop
            }
            LbPhase::ActiveKick => self.kick_active_balance(cpu, f),
            LbPhase::ActiveWake => self.wake_stopper(cpu, src as usize),
        }
    }

    /// A periodic pass's end, for the trace (newidle passes are traced as `sched_balance_newidle()`).
    fn trace_lb_end(&mut self, cpu: usize, idle: u8, result: LbResult, src: u32) {
        if idle != IDLE_NEWLY {
            trace_ev!(self, TraceEvent::BalanceEnd { cpu: cpu as u32, result, src });
        }
    }

    /// LBF_ALL_PINNED after `detach_tasks()`: no task of `src` (running or queued) may run on
    /// `dst`.
    fn all_pinned(&self, src: usize, dst: usize) -> bool {
        let rq = &self.cpus[src];
        let curr_allowed = rq.cfs.curr != NO_TASK && self.tasks[rq.cfs.curr as usize].allowed.contains(dst);
        !curr_allowed && !rq.cfs.queued.iter().any(|&t| self.tasks[t as usize].allowed.contains(dst))
    }

    /// `out_balanced` / `out_all_pinned`: the failure count resets and the interval backs off
    /// ([`Self::lb_back_off`]).
    pub(crate) fn lb_balanced_interval(&mut self, d: usize, l: usize, idle: u8, all_pinned: bool) {
        self.doms[d][l].nr_balance_failed = 0;
        self.lb_back_off(d, l, idle, all_pinned);
    }

    /// `out_one_pinned` (reached alone, it keeps the failure count): periodic balancing backs off
    /// (`balance_interval *= 2` up to `max_interval`, or up to `MAX_PINNED_INTERVAL` when
    /// everything was pinned); newidle leaves the interval alone.
    pub(crate) fn lb_back_off(&mut self, d: usize, l: usize, idle: u8, all_pinned: bool) {
        if idle == IDLE_NEWLY {
            return;
        }
        let max = self.m.domains[d][l].max_interval_ms as u64;
        let bi = &mut self.doms[d][l].balance_interval_ms;
        if (all_pinned && *bi < MAX_PINNED_INTERVAL) || *bi < max {
            *bi *= 2;
        }
    }

    /// An unbalanced outcome (tasks moved, or none could be): "We were unbalanced, so reset
    /// the balancing interval" to `min_interval`.
    pub(crate) fn lb_unbalanced_interval(&mut self, d: usize, l: usize) {
        self.doms[d][l].balance_interval_ms = self.m.domains[d][l].min_interval_ms as u64;
    }
}
