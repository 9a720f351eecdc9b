//! Migrations (`sched_migrate_task`): wakeup moves, load-balance detach/attach, newidle pulls.

use super::*;

impl<'a> Replay<'a> {
    // ---- sched_migrate_task -----------------------------------------------------------------

    pub(super) fn migrate(&mut self, i: usize, pid: u32, orig: usize, dest: usize) {
        if !self.in_group(pid) {
            return;
        }
        let Some(p) = self.known(pid) else { return };
        let lines = self.lines;
        let l = &lines[i];
        let (cpu, emitter) = (l.cpu as usize, l.pid);
        let runnable = self.se[p as usize].on_rq && !self.tasks[p as usize].delayed;
        if self.o.newidle_purge && runnable && dest == cpu && emitter != 0 {
            self.newidle_pull(i, cpu, emitter);
        }
        if runnable {
            // Rule 6, detach_task() → dequeue_entity() without DEQUEUE_SLEEP: lag against the
            // source's V; PLACE_REL_DEADLINE keeps deadline − vruntime.
            let se = &self.se[p as usize];
            let rel_deadline = se.deadline - se.vruntime;
            let from = self.tasks[p as usize].cpu as usize;
            if self.cpus[from].rq.queued.contains(&p) {
                self.cpus[from]
                    .rq
                    .dequeue_queued(&mut self.se, p, self.tick);
            } else {
                self.detach_any(p);
            }
            if self
                .detached
                .first()
                .is_some_and(|d| (d.emitter_cpu, d.dest) != (cpu, dest))
            {
                self.flush_attach();
            }
            self.detached.push(Detached {
                emitter_cpu: cpu,
                dest,
                task: p,
                rel_deadline,
            });
            self.counts.load_balance_moves += 1;
        } else if self.se[p as usize].on_rq {
            // A delayed (blocked) task moved: it leaves its rq for good.
            self.counts.migrate_delayed += 1;
            let c = self.tasks[p as usize].cpu as usize;
            self.finish_delayed(c, p);
            self.se[p as usize].on_rq = false;
        }
        // A sleeping task just moves; its saved lag goes with it.
        let _ = orig;
        self.tasks[p as usize].cpu = dest as u32;
    }

    /// Rule 7: a pull by `sched_balance_newidle()` inside a blocking task's `schedule()` comes
    /// after `__schedule()` dequeued prev and `pick_task_fair()` found nothing, i.e. after
    /// every delayed entity here was picked and dequeued (DELAY_ZERO). The migration line is
    /// emitted by the task whose next switch on this CPU has it as a blocking prev.
    pub(super) fn newidle_pull(&mut self, i: usize, cpu: usize, emitter: u32) {
        let Some(j) = self.next_switch[i] else { return };
        let Event::Switch {
            prev_pid,
            ref prev_state,
            ..
        } = self.lines[j].event
        else {
            return;
        };
        if prev_pid != emitter || !self.in_group(prev_pid) || prev_state.starts_with('R') {
            return;
        }
        let state = prev_state.clone();
        let pp = self.task(prev_pid);
        if !self.early_blocked.contains(&(cpu, pp)) && self.se[pp as usize].on_rq {
            self.block(pp, &state);
            self.early_blocked.insert((cpu, pp));
            self.counts.newidle_early_blocks += 1;
        }
        self.purge_delayed(cpu);
    }

    /// `attach_tasks()`: `detach_tasks()` list_add()ed each task at the head of env->tasks and
    /// attach_tasks() takes from the head, so the last detached is attached first. Each is
    /// placed with its lag and its relative deadline (`place_entity()`, PLACE_REL_DEADLINE).
    pub(super) fn flush_attach(&mut self) {
        let mut batch = std::mem::take(&mut self.detached);
        if self.o.reverse_attach {
            batch.reverse();
        }
        for d in batch {
            if self.se[d.task as usize].on_rq {
                continue;
            }
            self.place(d.dest, d.task, false);
            let se = &mut self.se[d.task as usize];
            // The deadline is not part of the rq's sums: setting it after placing is exact.
            se.deadline = se.vruntime + d.rel_deadline;
        }
    }
}
