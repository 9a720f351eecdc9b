//! Invariants checked after every event in tests and debug builds (TigerBeetle habit): a task
//! is on at most one runqueue, runqueue counts match their contents, the running task is the
//! one the CPU executes, no task is lost.

use crate::sim::Sim;
use crate::state::{TState, NO_TASK};
use wakesim_engine::invariant;

impl Sim {
    /// Cheap checks run after every event.
    pub(crate) fn check_invariants_light(&self) {
        for (i, c) in self.cpus.iter().enumerate() {
            let nr = c.cfs.nr_running();
            invariant!(c.nr_running == nr, "cpu {i}: nr_running {} != cfs entities {nr}", c.nr_running);
            if c.cfs.curr != NO_TASK && c.cfs.curr_on_rq {
                invariant!(self.se[c.cfs.curr as usize].on_rq, "cpu {i}: cfs curr not on_rq");
            }
            invariant!(c.avail_idle == self.available_idle(i), "cpu {i}: cached idle state is stale");
        }
        for (l, llc) in self.llcs.iter().enumerate() {
            let n = self.llc_cpus[l].iter().filter(|&&c| self.cpus[c as usize].avail_idle).count() as u32;
            invariant!(llc.nr_avail_idle == n, "llc {l}: idle count {} != {n}", llc.nr_avail_idle);
            // SIS_LLC_BUSY's enum sd_state: one state at a time.
            invariant!(!(llc.has_idle_cores && llc.is_busy), "llc {l}: has idle cores and fully busy at once");
        }
    }

    /// Full check: every live task is in exactly one place (running, queued on one rq, on one
    /// wakelist, in transit, or blocked).
    pub fn check_invariants_full(&self) {
        self.check_cpu_locks();
        let mut seen = vec![0u32; self.tasks.len()];
        for (i, c) in self.cpus.iter().enumerate() {
            for &t in &c.cfs.queued {
                seen[t as usize] += 1;
                invariant!(self.tasks[t as usize].cpu as usize == i, "task {} queued on cpu {i} but task_cpu {}", self.tasks[t as usize].name, self.tasks[t as usize].cpu);
            }
            if c.cfs.curr != NO_TASK && c.cfs.curr_on_rq {
                seen[c.cfs.curr as usize] += 1;
            }
            for e in &c.csd {
                if let crate::state::Csd::Ttwu(t) = e {
                    seen[*t as usize] += 1;
                }
            }
        }
        for (t, task) in self.tasks.iter().enumerate().skip(self.first_task as usize) {
            let n = seen[t];
            invariant!(n <= 1, "task {} is on {n} runqueues/wakelists", task.name);
            if task.state == TState::Dead || (task.state == TState::Sleeping && !self.se[t].on_rq) || task.migrating {
                // A task that has just exited is still its CPU's curr until its last
                // __schedule() (do_task_dead()) deactivates it, which may wait for the rq lock.
                let exiting = task.state == TState::Dead && self.cpus[task.cpu as usize].cfs.curr as usize == t;
                invariant!(n == 0 || task.state == TState::Sleeping || exiting, "task {} ({:?}) still queued", task.name, task.state);
            }
        }
    }
}
