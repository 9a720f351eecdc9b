//! Wakeup placement: `select_task_rq_fair()` with `record_wakee()`, `wake_wide()` and
//! `wake_affine()` (kernel/sched/fair.c). The idle-sibling search is in `sis.rs`.

use crate::sim::Sim;
use crate::state::{TaskId, NO_TASK};
use wakesim_machine::SdFlags;
use wakesim_engine::Time;

/// The result of a placement decision and what it cost the waker.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    pub cpu: u32,
    /// CPU time the waker spent deciding (fixed part + remote line reads + scan probes).
    pub cost: Time,
}

impl Sim {
    /// `record_wakee()`: runs in the waker's context.
    fn record_wakee(&mut self, waker: TaskId, p: TaskId) {
        let j = self.jiffies();
        let hz = self.t.hz;
        let w = &mut self.tasks[waker as usize];
        if j > w.wakee_flip_decay_ts + hz {
            w.wakee_flips >>= 1;
            w.wakee_flip_decay_ts = j;
        }
        if w.last_wakee != p {
            w.last_wakee = p;
            w.wakee_flips += 1;
        }
    }

    /// `wake_wide()`: 1 when the waker/wakee flip counts say the wakeup pattern is wider than
    /// one LLC (spread instead of pulling the wakee to the waker).
    fn wake_wide(&self, cpu: usize, waker: TaskId, p: TaskId) -> bool {
        let mut master = self.tasks[waker as usize].wakee_flips;
        let mut slave = self.tasks[p as usize].wakee_flips;
        let factor = self.m.llc_size[cpu];
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave * factor)
    }

    /// `available_idle_cpu()` (no vCPU preemption in the model).
    #[inline]
    pub(crate) fn available_idle(&self, c: usize) -> bool {
        let cpu = &self.cpus[c];
        cpu.curr == cpu.idle_task && cpu.nr_running == 0 && !cpu.ttwu_pending
    }

    /// Re-derives the cached idle state of `c` after a change of curr, nr_running or
    /// ttwu_pending, keeping the LLC's count of idle CPUs exact.
    pub(crate) fn refresh_idle(&mut self, c: usize) {
        let now = self.available_idle(c);
        if now != self.cpus[c].avail_idle {
            self.cpus[c].avail_idle = now;
            let l = self.cpus[c].llc as usize;
            if now {
                self.llcs[l].nr_avail_idle += 1;
            } else {
                self.llcs[l].nr_avail_idle -= 1;
            }
        }
        self.waste_refresh(c);
    }

    /// `cpu_load()`: the root cfs_rq's PELT load_avg (incl. blocked load).
    pub(crate) fn cpu_load(&self, c: usize) -> u64 {
        self.cpus[c].cfs.avg.load_avg
    }

    /// `wake_affine_idle()`.
    fn wake_affine_idle(&self, this: usize, prev: usize, sync: bool) -> Option<usize> {
        if self.available_idle(this) && self.m.share_cache(this, prev) {
            return Some(if self.available_idle(prev) { prev } else { this });
        }
        if sync && self.cpus[this].nr_running == 1 {
            return Some(this);
        }
        if self.f.WA_IDLE_PREV && self.available_idle(prev) {
            return Some(prev);
        }
        None
    }

    /// `wake_affine_weight()`; the tie rule is the WA_WEIGHT_NOEQUAL feature (Mel Gorman 2018:
    /// strict `<`, and sync wakeups add 1 on prev's side so an exact tie still stacks).
    fn wake_affine_weight(&self, level: usize, p: TaskId, waker: TaskId, this: usize, prev: usize, sync: bool) -> Option<usize> {
        let mut this_eff = self.cpu_load(this) as i64;
        if sync {
            let cur = self.tasks[waker as usize].avg.load_avg as i64;
            if cur > this_eff {
                return Some(this);
            }
            this_eff -= cur;
        }
        let tl = self.tasks[p as usize].avg.load_avg as i64;
        this_eff += tl;
        if self.f.WA_BIAS {
            this_eff *= 100;
        }
        this_eff *= self.cpus[prev].capacity as i64;
        let mut prev_eff = self.cpu_load(prev) as i64 - tl;
        if self.f.WA_BIAS {
            let pct = self.m.domains[this][level].imbalance_pct as i64;
            prev_eff *= 100 + (pct - 100) / 2;
        }
        prev_eff *= self.cpus[this].capacity as i64;
        if self.f.WA_WEIGHT_NOEQUAL {
            if sync {
                prev_eff += 1;
            }
            (this_eff < prev_eff).then_some(this)
        } else {
            (this_eff <= prev_eff).then_some(this)
        }
    }

    /// `wake_affine()`: returns the target (waker CPU or prev) and counts ttwu_move_affine.
    fn wake_affine(&mut self, level: usize, p: TaskId, waker: TaskId, this: usize, prev: usize, sync: bool) -> usize {
        let mut t = None;
        if self.f.WA_IDLE {
            t = self.wake_affine_idle(this, prev, sync);
        }
        if self.f.WA_WEIGHT && t.is_none() {
            t = self.wake_affine_weight(level, p, waker, this, prev, sync);
        }
        self.wake.affine_attempts += 1;
        if t != Some(this) {
            return prev;
        }
        self.dstat[this][level].ttwu_move_affine += 1;
        self.wake.affine_moves += 1;
        this
    }

    /// `select_task_rq_fair()` for a wakeup (WF_TTWU) issued on `cpu` by its current task.
    pub(crate) fn select_task_rq_fair(&mut self, cpu: usize, p: TaskId, sync: bool) -> Placement {
        let prev = self.tasks[p as usize].cpu as usize;
        let waker = self.curr(cpu);
        let mut cost = self.c.select_base;
        self.tasks[p as usize].scan_resume = None;
        if self.tasks[p as usize].nr_cpus_allowed == 1 {
            // select_task_rq(): a task with one allowed CPU skips the class hook.
            let only = self.tasks[p as usize].allowed.first().unwrap_or(prev);
            return Placement { cpu: only as u32, cost };
        }
        let want_affine;
        if waker != NO_TASK && !self.tasks[waker as usize].is_idle {
            self.record_wakee(waker, p);
            let wide = self.wake_wide(cpu, waker, p);
            if wide {
                self.wake.wake_wide += 1;
            }
            want_affine = !wide && self.tasks[p as usize].allowed.contains(cpu);
        } else {
            // Wakeups from interrupt context on an idle CPU: current is the idle task, whose
            // wakee bookkeeping the kernel also updates; it never makes wake_wide true here.
            want_affine = self.tasks[p as usize].allowed.contains(cpu);
        }
        let mut new_cpu = prev;
        if want_affine {
            for level in 0..self.m.domains[cpu].len() {
                let sd = &self.m.domains[cpu][level];
                if sd.has(SdFlags::WAKE_AFFINE) && sd.span.contains(prev) {
                    if cpu != prev {
                        // Reads of the remote prev rq's load line.
                        cost += self.line_xfer(cpu, prev);
                        new_cpu = self.wake_affine(level, p, waker, cpu, prev, sync);
                    }
                    break;
                }
            }
        }
        let (target, scan_cost) = self.select_idle_sibling(cpu, p, prev, new_cpu);
        self.wake.cost_select += cost;
        self.wake.cost_scan += scan_cost;
        Placement { cpu: target as u32, cost: cost + scan_cost }
    }
}
