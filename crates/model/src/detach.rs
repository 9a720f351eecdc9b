//! What one balance pass moves: `detach_tasks()` under the busiest rq's lock and
//! `attach_tasks()` under the destination's (kernel/sched/fair.c, v5.5 onwards), with
//! `can_migrate_task()` / `task_hot()`.

use crate::balance::{IDLE_BUSY, IDLE_NEWLY};
use crate::imbalance::MigrationType;
use crate::sim::Sim;
use crate::state::TaskId;
use wakesim_engine::Time;
use wakesim_machine::SdFlags;

impl Sim {
    /// `can_migrate_task()` for a task queued on another CPU: allowed on `dst`, not running
    /// (nor delayed-dequeued), and not cache-hot (`task_hot()`: ran within
    /// `sysctl_sched_migration_cost`; SMT siblings share their caches) unless this level's
    /// balancing has failed more than `cache_nice_tries` times. `Some(hot)` if it may move.
    fn can_migrate_task(&self, t: TaskId, dst: usize, level: usize) -> Option<bool> {
        let (p, se) = (&self.tasks[t as usize], &self.se[t as usize]);
        if !p.allowed.contains(dst) || p.on_cpu || p.delayed {
            return None;
        }
        let sd = &self.m.domains[dst][level];
        let hot = self.f.CACHE_HOT
            && !sd.has(SdFlags::SHARE_CPUCAPACITY)
            && self.now().saturating_sub(se.exec_start) < self.t.migration_cost;
        (!hot || self.doms[dst][level].nr_balance_failed > sd.cache_nice_tries).then_some(hot)
    }

    /// `task_util_est()`: max(util_avg, util_est) with UTIL_EST.
    fn task_util_est(&self, t: TaskId) -> u64 {
        let util = self.tasks[t as usize].avg.util_avg;
        if self.f.UTIL_EST {
            util.max(self.se[t as usize].util_est)
        } else {
            util
        }
    }

    /// `detach_tasks()` from `src` for `dst`, run by `cpu` holding `src`'s lock, with
    /// `env->imbalance` in `cpu.lb_imbalance`. Walks `src`'s tasks from the least recently run
    /// (the tail of `cfs_tasks`), at most `loop_max = min(sysctl_sched_nr_migrate,
    /// nr_running)` of them, and detaches each that may move and fits the imbalance in its
    /// unit, until the imbalance is used up or (idle balancing) `src` would be left with one
    /// task. Newidle stops after the first, as CONFIG_PREEMPTION kernels (the distributions'
    /// PREEMPT_DYNAMIC builds) do. The detached tasks are left in `cpu.lb_detached`; returns
    /// the time their detaching took.
    pub(crate) fn detach_tasks(&mut self, cpu: usize, src: usize, dst: usize, level: usize, idle: u8, mt: MigrationType) -> Time {
        self.cpus[cpu].lb_detached.clear();
        let mut imb = self.cpus[cpu].lb_imbalance as i64;
        if self.cpus[src].nr_running <= 1 || imb <= 0 {
            return 0;
        }
        let mut order = std::mem::take(&mut self.cpus[cpu].lb_order);
        order.clear();
        order.extend(self.cpus[src].cfs.queued.iter().map(|&t| (self.se[t as usize].exec_start, t)));
        order.sort_unstable();
        let loop_max = (self.t.nr_migrate as usize).min(self.cpus[src].nr_running as usize);
        let failed = self.doms[dst][level].nr_balance_failed;
        let mut cost = 0;
        for (visited, &(_, t)) in order.iter().enumerate() {
            if (idle != IDLE_BUSY && self.cpus[src].nr_running <= 1) || visited >= loop_max {
                break;
            }
            let Some(hot) = self.can_migrate_task(t, dst, level) else { continue };
            match mt {
                MigrationType::Load => {
                    // task_h_load() as the task's own load_avg: the model's runqueue load is
                    // flat (a task group costs its shared-line updates but does not rescale
                    // load), so both are in one unit. LB_MIN (off, as in features.h) skips
                    // loads below 16 until balancing has failed.
                    let load = self.tasks[t as usize].avg.load_avg.max(1) as i64;
                    if (self.f.LB_MIN && load < 16 && failed == 0) || (load >> failed.min(63)) > imb {
                        continue;
                    }
                    imb -= load;
                }
                MigrationType::Util => {
                    let util = self.task_util_est(t) as i64;
                    if util > imb {
                        continue;
                    }
                    imb -= util;
                }
                MigrationType::Task => imb -= 1,
            }
            if hot {
                self.dstat[dst][level].lb_hot_gained[idle as usize] += 1;
            }
            self.deactivate_queued(src, t);
            self.tasks[t as usize].migrating = true;
            self.set_task_cpu(t, dst);
            cost += self.c.migrate_task + self.line_xfer(cpu, src);
            self.cpus[cpu].lb_detached.push(t);
            if idle == IDLE_NEWLY || imb <= 0 {
                break;
            }
        }
        self.cpus[cpu].lb_order = order;
        cost
    }

    /// `attach_tasks()`: each detached task enqueued on `dst` (held) with its preemption
    /// check, the last detached first (`detach_tasks()` adds each at the head of `env->tasks`,
    /// which `attach_tasks()` empties from the head). Returns how many.
    pub(crate) fn attach_tasks(&mut self, cpu: usize, dst: usize) -> u32 {
        let detached = std::mem::take(&mut self.cpus[cpu].lb_detached);
        for &t in detached.iter().rev() {
            self.tasks[t as usize].migrating = false;
            self.activate_task(dst, t, true, false);
            self.wakeup_preempt(cpu, dst, t);
        }
        let n = detached.len() as u32;
        // Keep the buffer's capacity for the next pass.
        self.cpus[cpu].lb_detached = detached;
        self.cpus[cpu].lb_detached.clear();
        n
    }
}
