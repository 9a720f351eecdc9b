//! Pre-EEVDF CFS (≤ v6.5, kernel/sched/fair.c): placement with sleeper credit
//! (`place_entity` with GENTLE_FAIR_SLEEPERS and START_DEBIT), picking the leftmost vruntime,
//! wakeup preemption against `wakeup_gran()`, and tick preemption (`check_preempt_tick`) against
//! the ideal slice `sched_slice()`. Kernel profiles v4.15 … v6.5 use it (feature `EEVDF` off).
//!
//! Buddies (NEXT_BUDDY/LAST_BUDDY) are not modelled.

use crate::eevdf::{calc_delta_fair, CfsRq};
use crate::state::{Entity, TaskId, NO_TASK};
use crate::tunables::Tunables;
use wakesim_engine::Time;

/// `sched_nr_latency` = latency / min_granularity = 8.
const SCHED_NR_LATENCY: u64 = 8;

impl CfsRq {
    /// `place_entity()` (CFS): new tasks start one vslice after min_vruntime (START_DEBIT);
    /// waking tasks get at most half a latency period of credit (GENTLE_FAIR_SLEEPERS).
    pub(crate) fn enqueue_cfs(&mut self, se: &mut [Entity], t: TaskId, initial: bool, latency: i64) {
        let load = self.load + se[t as usize].weight;
        let p = &mut se[t as usize];
        let mut v = self.min_vruntime;
        if initial {
            // sched_vslice(): this task's share of the period, in virtual time.
            let period = latency.max(0) as u64;
            let s = (period * p.weight / load.max(1)) as i64;
            v += calc_delta_fair(s, p.weight);
            p.vruntime = v;
        } else {
            v -= latency / 2;
            p.vruntime = p.vruntime.max(v);
        }
        self.insert(se, t);
    }

    /// `pick_next_entity()` (CFS): the smallest vruntime, curr included.
    pub(crate) fn pick_cfs(&self, se: &[Entity]) -> TaskId {
        // The tree's leftmost: vruntime, then insertion (see `CfsRq::stamp`).
        let left = self.queued.iter().copied().min_by_key(|&t| {
            let e = &se[t as usize];
            (e.vruntime, e.tree_seq)
        });
        let curr = (self.curr != NO_TASK && self.curr_on_rq).then_some(self.curr);
        // `pick_next_entity()`: curr only if strictly before the leftmost (`entity_before()`).
        match (left, curr) {
            (Some(l), Some(c)) if se[c as usize].vruntime < se[l as usize].vruntime => c,
            (Some(l), _) => l,
            (None, c) => c.unwrap_or(NO_TASK),
        }
    }

    /// `wakeup_preempt_entity()`: the wakee preempts if curr is ahead by more than the wakee's
    /// wakeup granularity (scaled by its weight).
    pub(crate) fn cfs_wakeup_preempts(&self, se: &[Entity], p: TaskId, t: &Tunables) -> bool {
        if self.curr == NO_TASK || !self.curr_on_rq {
            return true;
        }
        let vdiff = se[self.curr as usize].vruntime - se[p as usize].vruntime;
        vdiff > 0 && vdiff > calc_delta_fair(t.cfs_wakeup_gran as i64, se[p as usize].weight)
    }

    /// `check_preempt_tick()`: resched when curr ran past its ideal slice, or is ahead of the
    /// leftmost task by more than that slice (after at least min_granularity).
    pub(crate) fn cfs_check_preempt_tick(&self, se: &[Entity], t: &Tunables, ran: Time) -> bool {
        if self.curr == NO_TASK || !self.curr_on_rq || self.nr_running() < 2 {
            return false;
        }
        let c = &se[self.curr as usize];
        let nr = self.nr_running() as u64;
        let period = if nr > SCHED_NR_LATENCY { nr * t.cfs_min_gran } else { t.cfs_latency };
        let ideal = period * c.weight / self.load.max(1);
        if ran > ideal {
            return true;
        }
        if ran < t.cfs_min_gran {
            return false;
        }
        let left = self.queued.iter().map(|&q| se[q as usize].vruntime).min();
        match left {
            Some(l) => c.vruntime - l > ideal as i64,
            None => false,
        }
    }
}
