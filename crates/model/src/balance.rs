//! One load-balancing pass: `load_balance()` / `sched_balance_rq()` (kernel/sched/fair.c):
//! `should_we_balance()`, group statistics and classification (`update_sg_lb_stats`,
//! `group_classify`), the `find_busiest_group()` decision and `find_busiest_queue()`, then
//! `detach_tasks()` under the source rq lock (`can_migrate_task`, `task_hot`) and
//! `attach_tasks()` under the destination's.
//!
//! When nothing can be detached (the busiest CPU runs its only task, or every queued one is
//! cache-hot) the pass fails; repeated failures to even out running tasks start active
//! balancing (`active_balance.rs`).
//!
//! Simplifications (stated, not hidden): no misfit/asym-packing/NUMA-fbq paths, and no retry
//! with another busiest CPU when all tasks of the first are pinned (`redo`); the imbalance is
//! expressed in tasks (half the difference, at least one), moved one per lock round trip. On
//! SD_NUMA levels `adjust_numa_imbalance()` applies (`find_idlest.rs`).
//!
//! A pass is `Frame::Lb`, walked through its [`LbPhase`]s by `sched_balance_rq()`.

use crate::exec::{Flow, Frame};
use crate::locks::LockId;
use crate::sim::Sim;
use crate::state::{TaskId, NO_CPU, NO_TASK};
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
struct GroupStats {
    nr: u64,
    idle_cpus: u64,
    load: u64,
    util: u64,
    runnable: u64,
    capacity: u64,
    weight: u64,
    /// Some CPU of the group has more than one runnable task (`sg_overloaded`).
    overloaded_cpu: bool,
    kind: GroupType,
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

    /// `find_busiest_group()` + `find_busiest_queue()`: returns the source CPU and whether the
    /// imbalance is in tasks (`migrate_task`, which a running task alone can make and only
    /// active balancing can move).
    fn find_busiest(&mut self, dst: usize, level: usize, idle: u8) -> Option<(usize, bool)> {
        let sd = &self.m.domains[dst][level];
        let pct = sd.imbalance_pct as u64;
        let numa_imb_nr = (sd.has(SdFlags::NUMA) && self.f.NUMA_IMBALANCE).then_some(sd.imb_numa_nr as u64);
        let prefer_sibling = level > 0 && self.m.domains[dst][level - 1].has(SdFlags::PREFER_SIBLING);
        let share_llc = sd.has(SdFlags::SHARE_LLC) || sd.has(SdFlags::SHARE_CPUCAPACITY);
        let local = self.group_stats(&sd.groups[0].span, pct);
        let mut busiest: Option<(usize, GroupStats)> = None;
        let (mut tot_load, mut tot_cap) = (local.load, local.capacity);
        let mut sd_any_over = false;
        for (gi, g) in sd.groups.iter().enumerate().skip(1) {
            let s = self.group_stats(&g.span, pct);
            tot_load += s.load;
            tot_cap += s.capacity;
            sd_any_over |= s.overloaded_cpu;
            if s.nr == 0 {
                continue;
            }
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
        // Decision matrix (research §7.4). calculate_imbalance() moves tasks (migrate_task)
        // when the local group has spare capacity, unless the busiest is overloaded above the
        // LLC (migrate_util there); otherwise load (migrate_load).
        let mt = local.kind == GroupType::HasSpare && (b.kind != GroupType::Overloaded || share_llc);
        let mut n: u64;
        if b.kind == GroupType::Overloaded {
            if local.kind == GroupType::Overloaded {
                let local_avg = local.load * 1024 / local.capacity.max(1);
                let b_avg = b.load * 1024 / b.capacity.max(1);
                let sd_avg = tot_load * 1024 / tot_cap.max(1);
                if b_avg * 100 <= pct * local_avg || local_avg >= sd_avg {
                    self.dstat[dst][level].lb_balanced[ix] += 1;
                    return None;
                }
            }
            n = (b.nr.saturating_sub(local.nr)) / 2;
        } else {
            if idle == IDLE_BUSY || local.kind != GroupType::HasSpare {
                self.dstat[dst][level].lb_balanced[ix] += 1;
                return None;
            }
            // calculate_imbalance(), local group has spare: the task or idle-CPU difference,
            // halved after the NUMA allowance (v6.x order).
            let imb = if prefer_sibling && b.nr > local.nr + 1 {
                b.nr - local.nr
            } else if b.weight > 1 && local.idle_cpus > b.idle_cpus + 1 && b.nr > 1 {
                local.idle_cpus - b.idle_cpus
            } else {
                0
            };
            let imb = match numa_imb_nr {
                Some(nr) if imb > 0 => crate::find_idlest::adjust_numa_imbalance(imb, local.nr + 1, nr),
                _ => imb,
            };
            if imb == 0 {
                self.dstat[dst][level].lb_balanced[ix] += 1;
                return None;
            }
            n = imb / 2;
        }
        n = n.max(1);
        self.dstat[dst][level].lb_imbalance[ix] += n;
        // find_busiest_queue(): the CPU with the most runnable tasks; for migrate_task one
        // running task is enough (load_balance() then finds nothing to detach), for load or
        // utilisation it must be able to give one up.
        let min_nr = if mt { 1 } else { 2 };
        let span = &self.m.domains[dst][level].groups[bgi].span;
        let src = span
            .iter()
            .filter(|&c| self.cpus[c].nr_running >= min_nr)
            .max_by_key(|&c| (self.cpus[c].nr_running, self.cpus[c].cfs.avg.load_avg, std::cmp::Reverse(c)));
        match src {
            Some(s) => Some((s, mt)),
            None => {
                self.dstat[dst][level].lb_nobusyq[ix] += 1;
                None
            }
        }
    }

    /// `detach_tasks()` candidate on `src` for `dst`: least recently run queued task that
    /// `can_migrate_task()` allows (allowed CPUs, not running, not cache-hot unless balancing
    /// keeps failing). Returns (task, was_hot).
    fn pick_detach(&self, src: usize, dst: usize, level: usize) -> Option<(TaskId, bool)> {
        let now = self.now();
        let rq = &self.cpus[src];
        if rq.nr_running <= 1 {
            return None;
        }
        let sd = &self.m.domains[dst][level];
        let failed = self.doms[dst][level].nr_balance_failed;
        let mut best: Option<(TaskId, bool)> = None;
        let mut best_key = (u64::MAX, u32::MAX);
        for &t in &rq.cfs.queued {
            let (p, se) = (&self.tasks[t as usize], &self.se[t as usize]);
            if !p.allowed.contains(dst) || p.on_cpu || p.delayed {
                continue;
            }
            let hot = self.f.CACHE_HOT
                && !sd.has(SdFlags::SHARE_CPUCAPACITY)
                && now.saturating_sub(se.exec_start) < self.t.migration_cost;
            if hot && failed <= sd.cache_nice_tries {
                continue;
            }
            let key = (se.exec_start, t);
            if key < best_key {
                best_key = key;
                best = Some((t, hot));
            }
        }
        best
    }

    /// One `sched_balance_rq()` (`load_balance()` before v6.10) pass, one step per call
    /// (`LbPhase`).
    pub(crate) fn sched_balance_rq(&mut self, cpu: usize, f: Frame) -> Flow {
        let Frame::Lb { phase, dst, level, idle, src, task, mt } = f else { unreachable!() };
        let (d, l, ix) = (dst as usize, level as usize, idle as usize);
        let fr = |phase: LbPhase, src: u32, task: TaskId| Frame::Lb { phase, dst, level, idle, src, task, mt };
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
                    Some((s, mt)) => {
                        let fr = |phase: LbPhase| Frame::Lb { phase, dst, level, idle, src: s as u32, task: NO_TASK, mt };
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
                        self.busy(cpu, cost, fr(LbPhase::Balanced, NO_CPU, NO_TASK))
                    }
                }
            }
            LbPhase::LockSource => self.call(cpu, fr(LbPhase::Detach, src, NO_TASK), Frame::Lock { lock: LockId::Rq(src), granted: false }),
            LbPhase::Detach => {
                let s = src as usize;
                match self.pick_detach(s, d, l) {
                    None => {
                        let all_pinned = self.all_pinned(s, d);
                        self.lock_release(cpu, LockId::Rq(src));
                        if all_pinned {
                            // LBF_ALL_PINNED: goto out_all_pinned.
                            self.dstat[d][l].lb_balanced[ix] += 1;
                            self.lb_balanced_interval(d, l, idle, true);
                            self.trace_lb_end(cpu, idle, LbResult::AllPinned, src);
                            return Flow::Pop;
                        }
                        self.set_top(cpu, fr(LbPhase::Failed, src, NO_TASK));
                        Flow::Again
                    }
                    Some((t, hot)) => {
                        if hot {
                            self.dstat[d][l].lb_hot_gained[ix] += 1;
                        }
                        self.deactivate_queued(s, t);
                        self.tasks[t as usize].migrating = true;
                        self.set_task_cpu(t, d);
                        let cost = self.c.migrate_task + self.line_xfer(cpu, s);
                        self.busy(cpu, cost, fr(LbPhase::LockDest, src, t))
                    }
                }
            }
            LbPhase::LockDest => {
                self.lock_release(cpu, LockId::Rq(src));
                self.call(cpu, fr(LbPhase::AttachCost, src, task), Frame::Lock { lock: LockId::Rq(dst), granted: false })
            }
            LbPhase::AttachCost => {
                // migrate_task already covers dequeue/enqueue and PELT detach/attach (costs crate).
                let cost = self.c.wakeup_preempt + self.line_xfer(cpu, d);
                self.busy(cpu, cost, fr(LbPhase::Attach, src, task))
            }
            LbPhase::Attach => {
                self.tasks[task as usize].migrating = false;
                self.activate_task(d, task, true, false);
                self.wakeup_preempt(cpu, d, task);
                self.lock_release(cpu, LockId::Rq(dst));
                self.dstat[d][l].lb_gained[ix] += 1;
                self.doms[d][l].nr_balance_failed = 0;
                self.lb_unbalanced_interval(d, l);
                self.wake.migrations_balance += 1;
                self.cpus[cpu].lb_moved += 1;
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
                if self.need_active_balance(d, l, mt) {
                    self.trace_lb_end(cpu, idle, LbResult::ActiveKick, src);
                    return self.call(cpu, fr(LbPhase::ActiveKick, src, NO_TASK), Frame::Lock { lock: LockId::Rq(src), granted: false });
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
