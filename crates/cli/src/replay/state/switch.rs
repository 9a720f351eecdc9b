//! Placement, removal and the pick at a context switch (`sched_switch`).

use super::*;

impl<'a> Replay<'a> {
    // ---- placement and removal --------------------------------------------------------------

    /// `enqueue_entity()` → `place_entity()`: lag placement at V (lag ignored on an empty
    /// cfs_rq); `initial`: `wake_up_new_task()`, PLACE_DEADLINE_INITIAL.
    pub(super) fn place(&mut self, c: usize, t: TaskId, initial: bool) {
        let slice = self.o.slice_ns as i64;
        self.tasks[t as usize].cpu = c as u32;
        self.cpus[c]
            .rq
            .enqueue(&mut self.se, t, &self.f, initial, slice);
    }

    /// `dequeue_entities()` of a delayed entity (`finish_delayed_dequeue_entity()`): DELAY_ZERO
    /// drops a positive lag.
    pub(super) fn finish_delayed(&mut self, c: usize, t: TaskId) {
        let rq = &mut self.cpus[c].rq;
        self.tasks[t as usize].delayed = false;
        if !rq.queued.contains(&t) {
            return;
        }
        rq.dequeue_queued(&mut self.se, t, self.tick);
        let se = &mut self.se[t as usize];
        if self.f.DELAY_ZERO && se.vlag > 0 {
            se.vlag = 0;
        }
        self.counts.delayed_dequeued += 1;
    }

    /// Takes `t` off whatever rq holds it, running or not (the trace says it is elsewhere).
    pub(super) fn detach_any(&mut self, t: TaskId) {
        let c = self.tasks[t as usize].cpu as usize;
        let cpu = &mut self.cpus[c];
        if cpu.rq.curr == t {
            if cpu.rq.curr_on_rq {
                cpu.rq.dequeue_curr(&mut self.se, self.tick);
            }
            cpu.rq.curr = NO_TASK;
            cpu.rq.curr_on_rq = false;
            if cpu.running == t {
                cpu.running = NO_TASK;
            }
        } else if cpu.rq.queued.contains(&t) {
            cpu.rq.dequeue_queued(&mut self.se, t, self.tick);
        }
        self.se[t as usize].on_rq = false;
        self.tasks[t as usize].delayed = false;
    }

    /// `put_prev_entity()`: the previous entity goes back into the tree if still queued.
    pub(super) fn put_prev(&mut self, c: usize) {
        let rq = &mut self.cpus[c].rq;
        if rq.curr != NO_TASK {
            if rq.curr_on_rq {
                let p = rq.curr;
                rq.put_prev(&mut self.se, p);
            } else {
                rq.curr = NO_TASK;
            }
        }
    }

    /// `set_next_entity()`: out of the tree as cfs_rq->curr; RUN_TO_PARITY protects it up to
    /// its deadline (rule 3).
    pub(super) fn set_next(&mut self, c: usize, t: TaskId) {
        self.put_prev(c);
        let cpu = &mut self.cpus[c];
        if cpu.rq.queued.contains(&t) {
            cpu.rq.set_next(&mut self.se, t, cpu.clock);
        }
        cpu.running = t;
    }

    pub(super) fn implicit_switch_in(&mut self, cpu: usize, t: TaskId) {
        self.counts.implicit_switch_ins += 1;
        if self.se[t as usize].on_rq && self.tasks[t as usize].cpu as usize != cpu {
            self.detach_any(t);
        }
        if !self.se[t as usize].on_rq {
            self.place(cpu, t, false);
        }
        // It runs, so it is not blocked.
        if self.tasks[t as usize].delayed {
            self.tasks[t as usize].delayed = false;
        }
        self.set_next(cpu, t);
    }

    // ---- sched_switch -----------------------------------------------------------------------

    /// Rule 2, `dequeue_entity()` with DEQUEUE_SLEEP: an ineligible task stays queued, delayed
    /// (DELAY_DEQUEUE); an eligible one leaves with its lag saved (`update_entity_lag()`).
    /// `X`/`Z`: `do_exit()`, dequeued for good.
    pub(super) fn block(&mut self, t: TaskId, state: &str) {
        let c = self.tasks[t as usize].cpu as usize;
        let rq = &mut self.cpus[c].rq;
        let is_curr = rq.curr == t && rq.curr_on_rq;
        let in_tree = rq.queued.contains(&t);
        if !is_curr && !in_tree {
            return;
        }
        if state.starts_with('X') || state.starts_with('Z') {
            if is_curr {
                rq.dequeue_curr(&mut self.se, self.tick);
            } else {
                rq.dequeue_queued(&mut self.se, t, self.tick);
                self.tasks[t as usize].delayed = false;
            }
            return;
        }
        self.counts.blocked += 1;
        let eligible = rq.eligible(&self.se, self.se[t as usize].vruntime);
        if eligible {
            if is_curr {
                rq.dequeue_curr(&mut self.se, self.tick);
            } else {
                rq.dequeue_queued(&mut self.se, t, self.tick);
            }
            self.tasks[t as usize].delayed = false;
        } else {
            self.counts.blocked_delayed += 1;
            self.tasks[t as usize].delayed = true;
            // As the model's deactivate_curr(): the delayed entity goes back into the tree
            // (the kernel keeps it as an ineligible, hence unpickable, cfs_rq->curr until
            // put_prev_entity(); __pick_eevdf() sees the same candidates).
            if is_curr {
                rq.put_prev(&mut self.se, t);
            }
        }
    }

    /// `pick_next_entity()`: `__pick_eevdf()` with prev still cfs_rq->curr; a picked delayed
    /// entity is dequeued for good (DEQUEUE_DELAYED) and the pick repeats.
    pub(super) fn pick(&mut self, c: usize) -> TaskId {
        loop {
            let rq = &self.cpus[c].rq;
            if rq.nr_running() == 0 {
                return NO_TASK;
            }
            let p = rq.pick(&self.se, &self.f);
            if p != NO_TASK && self.tasks[p as usize].delayed {
                self.finish_delayed(c, p);
                continue;
            }
            return p;
        }
    }

    /// `pick_task_fair()` found nothing: every delayed entity was picked and dequeued.
    pub(super) fn purge_delayed(&mut self, c: usize) {
        let delayed: Vec<TaskId> = self.cpus[c]
            .rq
            .queued
            .iter()
            .copied()
            .filter(|&t| self.tasks[t as usize].delayed)
            .collect();
        for t in delayed {
            self.finish_delayed(c, t);
        }
    }

    pub(super) fn switch(&mut self, cpu: usize, prev: u32, state: &str, next: u32) {
        if let Some((waker, model, delayed)) = self.pend_local[cpu] {
            if waker == prev {
                self.pend_local[cpu] = None;
                let w = if delayed {
                    &mut self.counts.wake_local_delayed
                } else {
                    &mut self.counts.wake_local_placed
                };
                w.add(state.starts_with('R'), model);
            }
        }
        if self.in_group(prev) {
            let p = self.task(prev);
            if !self.early_blocked.remove(&(cpu, p)) {
                if !self.se[p as usize].on_rq {
                    // First sight: it ran without the replay knowing.
                    self.place(cpu, p, false);
                }
                if !state.starts_with('R') {
                    self.block(p, state);
                }
            }
        }
        let pick = self.pick(cpu);
        if !self.in_group(next) {
            if next == 0 {
                // The idle task: pick_task_fair() found nothing here, so it picked and
                // dequeued every delayed entity.
                self.purge_delayed(cpu);
            }
            self.put_prev(cpu);
            self.cpus[cpu].running = NO_TASK;
            return;
        }
        let n = self.task(next);
        if self.se[n as usize].on_rq && self.tasks[n as usize].cpu as usize != cpu {
            self.counts.next_on_other_cpu += 1;
            self.detach_any(n);
        }
        if !self.se[n as usize].on_rq {
            self.counts.picks_unchecked += 1;
            self.place(cpu, n, false);
        } else {
            self.counts.picks += 1;
            if pick == n {
                self.counts.picks_agree += 1;
            } else if self.shown.len() < self.o.show {
                let s = self.describe(cpu, prev, state, next, pick);
                self.shown.push(s);
            }
        }
        // The kernel runs it, so it is not blocked (a delayed entity is never run).
        self.tasks[n as usize].delayed = false;
        self.set_next(cpu, n);
    }
}
