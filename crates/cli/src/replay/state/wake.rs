//! Wakeups (`sched_wakeup[_new]`): placement or the delayed requeue, and the preemption check.

use super::*;

impl<'a> Replay<'a> {
    // ---- sched_wakeup[_new] -----------------------------------------------------------------

    #[allow(clippy::too_many_arguments)]
    pub(super) fn wakeup(
        &mut self,
        cpu: usize,
        waker: u32,
        pid: u32,
        target: usize,
        new: bool,
        ipi_here: Option<u32>,
        deferred: &mut Option<(usize, TaskId, u64)>,
    ) {
        if !self.in_group(pid) {
            return;
        }
        let p = self.task(pid);
        let delayed = self.se[p as usize].on_rq && self.tasks[p as usize].delayed;
        if !delayed {
            // No requeue to come before the waker's update_curr(): charge it now.
            if let Some(d) = deferred.take() {
                self.charge(d.0, d.1, d.2);
            }
        }
        if delayed {
            // Rule 4, ttwu_runnable() → enqueue_task(ENQUEUE_DELAYED) → requeue_delayed_entity():
            // DELAY_ZERO re-places a delayed entity whose lag turned positive at V with lag 0.
            // Only update_rq_clock() ran before: the waker's update_curr() (its runtime line,
            // held back in `deferred`) comes after, in check_preempt_wakeup_fair().
            let c = self.tasks[p as usize].cpu as usize;
            self.counts.delayed_requeues += 1;
            self.tasks[p as usize].delayed = false;
            let rq = &mut self.cpus[c].rq;
            if self.f.DELAY_ZERO
                && rq.v(&self.se) - self.se[p as usize].vruntime > 0
                && rq.queued.contains(&p)
            {
                rq.dequeue_queued(&mut self.se, p, self.tick);
                self.se[p as usize].vlag = 0;
                self.place(c, p, false);
            }
            if let Some((dc, dt, d)) = deferred.take() {
                if dc == c {
                    self.counts.requeue_before_update_curr += 1;
                }
                self.charge(dc, dt, d);
            }
        } else if self.se[p as usize].on_rq {
            self.counts.wakeup_of_queued += 1;
            return;
        } else {
            // ttwu_do_activate() → enqueue_entity() → place_entity() with the saved lag;
            // wake_up_new_task(): lag 0, half a slice to the deadline.
            if new {
                self.se[p as usize].vlag = 0;
            }
            self.place(target, p, new);
        }
        // Rule 5, check_preempt_wakeup_fair(): preempt iff the wakee is now __pick_eevdf().
        let cu = self.cpus[target].running;
        if cu == NO_TASK || cu == p {
            return;
        }
        let model = self.cpus[target].rq.pick(&self.se, &self.f) == p;
        if target != cpu {
            let kernel = ipi_here == Some(target as u32);
            let w = if delayed {
                &mut self.counts.wake_remote_delayed
            } else {
                &mut self.counts.wake_remote_placed
            };
            w.add(kernel, model);
        } else {
            self.pend_local[cpu] = Some((waker, model, delayed));
        }
    }
}
