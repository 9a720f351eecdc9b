//! Fork placement, the wakeup slow path: `find_idlest_cpu()` (`sched_balance_find_dst_cpu()`
//! since v6.10), `find_idlest_group()` with `update_sg_wakeup_stats()` and
//! `update_pick_idlest()`, and `find_idlest_group_cpu()` (kernel/sched/fair.c, v6.x), plus
//! `adjust_numa_imbalance()`, which load balancing shares.
//!
//! `wake_up_new_task()` calls `select_task_rq_fair(WF_FORK)`: the highest domain of the parent's
//! CPU with SD_BALANCE_FORK, then down the hierarchy the idlest group and its idlest CPU. The
//! local group wins unless another is plainly idler, so children forked in a loop that block at
//! once stay near their parent; `update_pick_idlest()`'s group_util tie-break (3edecfef0285,
//! v5.9) spreads them over cores, and on an SD_NUMA level the local node keeps a task while it
//! runs at most `imb_numa_nr` tasks and its idle CPUs trail the other node's by at most
//! `NUMA_IMBALANCE_MIN` (cb29a5c19d2d, v5.19).
//!
//! Stated simplifications: no asymmetric capacity, misfit or core-scheduling cookies; no
//! CONFIG_NUMA_BALANCING preferred node (a new task has none). Every profile places forks by
//! these v5.19+ rules: v4.15's `find_idlest_group()` compared runnable load with an
//! imbalance_pct margin instead (not modelled); it too keeps forks on a local node with room.

use crate::balance::{group_classify, GroupType};
use crate::sim::Sim;
use crate::state::{Mode, TaskId};
use wakesim_machine::{CpuSet, SdFlags};

/// `NUMA_IMBALANCE_MIN`: a pair of communicating tasks stays on one node.
const NUMA_IMBALANCE_MIN: u64 = 2;

/// `adjust_numa_imbalance()` (v5.19, cb29a5c19d2d): below `imb_numa_nr` running tasks on the
/// destination, an imbalance of up to `NUMA_IMBALANCE_MIN` is left alone.
pub(crate) fn adjust_numa_imbalance(imbalance: u64, dst_running: u64, imb_numa_nr: u64) -> u64 {
    if dst_running > imb_numa_nr || imbalance > NUMA_IMBALANCE_MIN {
        imbalance
    } else {
        0
    }
}

/// `struct sg_lb_stats` as `update_sg_wakeup_stats()` fills it.
#[derive(Clone, Copy, Debug)]
struct WakeupStats {
    util: u64,
    nr: u64,
    idle_cpus: u64,
    avg_load: u64,
    kind: GroupType,
}

impl Sim {
    /// `update_sg_wakeup_stats()` for a task not yet on any runqueue. `parent` is running the
    /// fork: it is the current task there, so that CPU is neither idle nor empty.
    fn update_sg_wakeup_stats(&self, span: &CpuSet, pct: u64, parent: usize) -> WakeupStats {
        let (mut load, mut util, mut runnable, mut nr, mut idle_cpus, mut cap, mut weight) = (0, 0, 0, 0, 0, 0, 0);
        for c in span.iter() {
            let rq = &self.cpus[c];
            let running = rq.nr_running as u64 + (c == parent) as u64;
            load += self.cpu_load(c);
            util += self.cpu_util(c);
            runnable += rq.cfs.avg.runnable_avg;
            nr += running;
            idle_cpus += (running == 0 && self.available_idle(c)) as u64;
            cap += rq.capacity;
            weight += 1;
        }
        let kind = group_classify(pct, nr, weight, cap, util, runnable);
        // avg_load only means something for a fully busy or overloaded group.
        let avg_load = if kind == GroupType::HasSpare { 0 } else { load * 1024 / cap.max(1) };
        WakeupStats { util, nr, idle_cpus, avg_load, kind }
    }

    /// `find_idlest_group()`: the group of `sd` (level `level` of `this`) to push `p` to, or
    /// `None` to stay in the local group.
    fn find_idlest_group(&self, this: usize, level: usize, p: TaskId, parent: usize) -> Option<CpuSet> {
        let sd = &self.m.domains[this][level];
        let pct = sd.imbalance_pct as u64;
        let allowed = &self.tasks[p as usize].allowed;
        let mut local: Option<WakeupStats> = None;
        let mut idlest: Option<(WakeupStats, &CpuSet)> = None;
        for (gi, g) in sd.groups.iter().enumerate() {
            if !g.span.intersects(allowed) {
                continue;
            }
            let s = self.update_sg_wakeup_stats(&g.span, pct, parent);
            if gi == 0 {
                local = Some(s);
                continue;
            }
            // update_pick_idlest()
            let better = match &idlest {
                None => true,
                Some((i, _)) => {
                    if s.kind != i.kind {
                        s.kind < i.kind
                    } else if s.kind == GroupType::HasSpare {
                        // Most idle CPUs, then the lowest group_util (3edecfef0285).
                        i.idle_cpus < s.idle_cpus || (i.idle_cpus == s.idle_cpus && i.util > s.util)
                    } else {
                        i.avg_load > s.avg_load
                    }
                }
            };
            if better {
                idlest = Some((s, &g.span));
            }
        }
        let (idl, span) = idlest?;
        let Some(loc) = local else { return Some(span.clone()) };
        if loc.kind < idl.kind {
            return None;
        }
        if loc.kind > idl.kind {
            return Some(span.clone());
        }
        match loc.kind {
            GroupType::Overloaded | GroupType::FullyBusy => {
                // scale_load_down(NICE_0_LOAD) * (imbalance_pct - 100) / 100
                let imbalance = 1024 * (pct - 100) / 100;
                if sd.has(SdFlags::NUMA) && idl.avg_load + imbalance >= loc.avg_load {
                    return None;
                }
                if idl.avg_load >= loc.avg_load + imbalance || 100 * loc.avg_load <= pct * idl.avg_load {
                    return None;
                }
            }
            GroupType::HasSpare => {
                if sd.has(SdFlags::NUMA) {
                    let span_allowed = sd.groups[0].span.weight_and(allowed) as u64;
                    let imb_numa_nr = (sd.imb_numa_nr as u64).min(span_allowed);
                    let imbalance = loc.idle_cpus.abs_diff(idl.idle_cpus);
                    if adjust_numa_imbalance(imbalance, loc.nr + 1, imb_numa_nr) == 0 {
                        return None;
                    }
                }
                if loc.idle_cpus >= idl.idle_cpus {
                    return None;
                }
            }
        }
        Some(span.clone())
    }

    /// `find_idlest_group_cpu()`: an idle CPU of the group in the shallowest idle state (the
    /// most recently idled one on a tie, `rq->idle_stamp`), else the least loaded CPU.
    fn find_idlest_group_cpu(&self, span: &CpuSet, p: TaskId, this: usize, parent: usize) -> usize {
        if span.weight() == 1 {
            return span.first().unwrap_or(this);
        }
        let mut min_load = u64::MAX;
        let mut min_exit = u64::MAX;
        let mut latest_idle = 0;
        let mut least_loaded = this;
        let mut shallowest: Option<usize> = None;
        for c in span.and(&self.tasks[p as usize].allowed).iter() {
            if c != parent && self.available_idle(c) {
                let rq = &self.cpus[c];
                // idle_get_state(): the state the CPU sits in, if it entered one.
                let exit = (rq.mode == Mode::Idle).then(|| self.c.idle_states[rq.idle_state].exit_latency);
                match exit {
                    Some(lat) if lat < min_exit => {
                        min_exit = lat;
                        latest_idle = rq.idle_stamp;
                        shallowest = Some(c);
                    }
                    _ if (exit.is_none() || exit == Some(min_exit)) && rq.idle_stamp > latest_idle => {
                        latest_idle = rq.idle_stamp;
                        shallowest = Some(c);
                    }
                    _ => {}
                }
            } else if shallowest.is_none() {
                let load = self.cpu_load(c);
                if load < min_load {
                    min_load = load;
                    least_loaded = c;
                }
            }
        }
        shallowest.unwrap_or(least_loaded)
    }

    /// Fork placement (`wake_up_new_task()` → `select_task_rq_fair(WF_FORK)` →
    /// `find_idlest_cpu()`), from the parent's CPU `parent`.
    pub(crate) fn find_idlest_cpu(&self, parent: usize, p: TaskId) -> usize {
        let doms = &self.m.domains[parent];
        // select_task_rq_fair(): the highest domain with SD_BALANCE_FORK (the walk stops at the
        // first level without it, as want_affine is off for a fork).
        let Some(top) = doms.iter().take_while(|sd| sd.has(SdFlags::BALANCE_FORK)).count().checked_sub(1) else {
            return parent;
        };
        if !doms[top].span.intersects(&self.tasks[p as usize].allowed) {
            return parent;
        }
        let (mut cpu, mut level, mut new_cpu) = (parent, Some(top), parent);
        while let Some(l) = level {
            let sd = &self.m.domains[cpu][l];
            if !sd.has(SdFlags::BALANCE_FORK) {
                level = l.checked_sub(1);
                continue;
            }
            let Some(group) = self.find_idlest_group(cpu, l, p, parent) else {
                level = l.checked_sub(1);
                continue;
            };
            new_cpu = self.find_idlest_group_cpu(&group, p, cpu, parent);
            if new_cpu == cpu {
                level = l.checked_sub(1);
                continue;
            }
            // Go on at the levels of new_cpu below this one's weight.
            let weight = sd.span_weight;
            cpu = new_cpu;
            level = self.m.domains[cpu].iter().take_while(|d| d.span_weight < weight).enumerate().filter(|(_, d)| d.has(SdFlags::BALANCE_FORK)).map(|(i, _)| i).last();
        }
        new_cpu
    }
}

#[cfg(test)]
mod tests {
    use super::adjust_numa_imbalance;

    #[test]
    fn adjust_numa_imbalance_keeps_a_pair_local_only_below_imb_numa_nr() {
        // A pair (imbalance 2) stays while the destination would run at most imb_numa_nr.
        assert_eq!(adjust_numa_imbalance(2, 1, 6), 0);
        assert_eq!(adjust_numa_imbalance(2, 6, 6), 0);
        assert_eq!(adjust_numa_imbalance(2, 7, 6), 2);
        // Three or more is always balanced.
        assert_eq!(adjust_numa_imbalance(3, 1, 6), 3);
    }
}
