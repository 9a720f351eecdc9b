//! `activate_task()` / `deactivate_task()` (enqueue_task_fair / dequeue_task_fair), the PELT
//! updates at those call sites (`update_load_avg`), task-group load propagation
//! (`update_tg_load_avg` on the shared `tg->load_avg` line) and `set_task_cpu()`.

use crate::sim::Sim;
use crate::state::{TaskId, NO_CPU, NO_TASK};
use wakesim_engine::{invariant, Time};

impl Sim {
    /// `update_load_avg()` for CPU `cpu`'s root cfs_rq and, if given, one of its tasks. The
    /// group's load is propagated (`update_tg_load_avg()`, UPDATE_TG) only when the cfs_rq's
    /// average decayed: a PELT period boundary was crossed since its last update, or load
    /// removed by a task that left is folded in (`update_cfs_rq_load_avg()`'s `decayed`).
    /// Attaching a task that arrived propagates at once (`DO_ATTACH`, in `activate_task`).
    pub(crate) fn update_load_avg(&mut self, cpu: usize, p: TaskId) {
        let now = self.now();
        let c = &mut self.cpus[cpu];
        let running = c.cfs.curr != NO_TASK && c.cfs.curr_on_rq;
        let nr = c.cfs.nr_running() as u64;
        let decayed = c.cfs.avg.update(now, c.cfs.load, nr, running, 1);
        let removed = std::mem::take(&mut c.tg_removed);
        if p != NO_TASK {
            let is_curr = self.cpus[cpu].cfs.curr == p;
            let se = &self.se[p as usize];
            // __update_load_avg_se(): load = !!on_rq; the weight multiplies in ___update_load_avg.
            self.tasks[p as usize].avg.update(now, se.on_rq as u64, se.on_rq as u64, is_curr && se.on_rq, se.weight);
        }
        if removed || (decayed && self.in_task_group(p)) {
            self.update_tg_load_avg(cpu);
        }
    }

    /// Whether `p` is a task in a task group other than the root.
    pub(crate) fn in_task_group(&self, p: TaskId) -> bool {
        p != NO_TASK && self.tasks[p as usize].group != 0
    }

    /// `update_tg_load_avg()`: a task in a task group changes the group's global load_avg,
    /// one cache line shared by every CPU. Concurrent writers serialise on the line; each write
    /// pays the transfer from the previous writer (Aaron Lu 2023, research §10.4).
    fn update_tg_load_avg(&mut self, cpu: usize) {
        // Only when the cfs_rq's load moved by more than 1/64 of what it last contributed
        // (`update_tg_load_avg`, v6.6; the v6.7 1 ms rate limit is a kernel-profile matter).
        let now = self.now();
        if self.f.TG_LOAD_RATELIMIT && now.saturating_sub(self.cpus[cpu].tg_last_update) < wakesim_engine::MSEC {
            return; // v6.7: at most once per ms per cfs_rq
        }
        let load = self.cpus[cpu].cfs.avg.load_avg as i64;
        let contrib = self.cpus[cpu].tg_load_contrib as i64;
        if (load - contrib).abs() * 64 <= contrib {
            return;
        }
        self.cpus[cpu].tg_load_contrib = load as u64;
        self.cpus[cpu].tg_last_update = now;
        // The function's own work is CPU time; the line is held only for the atomic add, which
        // completes as the line arrives (its transfer).
        let transfer = self.line_xfer(cpu, self.tg_line.line.owner as usize);
        let cost = self.c.tg_load_update + self.tg_line.write(cpu, now, transfer, 0);
        self.charge(cpu, cost);
    }

    /// `update_cfs_group()` for the group entity of a task of a task group on `cpu`:
    /// `calc_group_shares()` reads `tg->load_avg` (`atomic_long_read()`) at every enqueue,
    /// dequeue and tick of the group's tasks, where `update_tg_load_avg()` writes it only when
    /// the load moved. A CPU whose copy is still current reads it from its own cache; one that
    /// another CPU's write has invalidated pulls it over (`ReadMostlyLine::read`) (Aaron Lu,
    /// 2023: on a 2-socket Sapphire Rapids this read side took 13.75 % of cycles under
    /// postgres_sysbench and ~25 % under netperf UDP_RR, more than the write side; research
    /// §10.4). The group entity's new weight itself is not modelled: a benchmark's tasks are the
    /// only busy group, so it changes no pick. Charges `cpu`; returns nothing.
    pub(crate) fn update_cfs_group(&mut self, cpu: usize, p: TaskId) {
        if !self.in_task_group(p) || self.tg_line.is_current(cpu) {
            return;
        }
        let transfer = self.line_xfer(cpu, self.tg_line.line.owner as usize);
        let cost = self.tg_line.read(cpu, self.now(), transfer);
        self.charge(cpu, cost);
    }

    /// How many lines of the target's runqueue a wakeup's enqueue of `p` touches
    /// (`enqueue_lines`), plus one task-group level's (`group_enqueue_lines`: the group's cfs_rq
    /// and entity there) if `p` is in a task group: `update_rq_clock()`, `enqueue_task_fair()`'s
    /// walk up the hierarchy and `wakeup_preempt()`. Counted on the kernel's struct layouts
    /// (cost profile).
    pub(crate) fn enqueue_line_count(&self, p: TaskId) -> u64 {
        self.c.enqueue_lines + if self.in_task_group(p) { self.c.group_enqueue_lines } else { 0 }
    }

    /// `cpu` enqueues or switches to `p` (`enqueue_entity()`, `set_next_entity()`,
    /// `sched_info_enqueue()`/`_arrive()`): it writes the task's own scheduling lines, pulling them
    /// from the CPU that wrote them last unless it holds them already. Returns the transfers'
    /// cost; `p`'s lines are then on `cpu`.
    pub(crate) fn take_task_lines(&mut self, cpu: usize, p: TaskId) -> Time {
        let from = std::mem::replace(&mut self.tasks[p as usize].sched_lines, cpu as u32);
        if from == NO_CPU || from as usize == cpu {
            return 0;
        }
        self.c.task_sched_lines * self.line_xfer(cpu, from as usize)
    }

    /// Writes `rd->overloaded` from `cpu`, paying the transfer of the root-domain line.
    pub(crate) fn write_rd_overloaded(&mut self, cpu: usize, v: bool) {
        let owner = std::mem::replace(&mut self.rd_line_owner, cpu as u32) as usize;
        let cost = self.line_xfer(cpu, owner);
        self.charge(cpu, cost);
        self.rd_overloaded = v;
    }

    /// `init_entity_runnable_average()` + `post_init_entity_util_avg()` for a forked task: its load
    /// starts at its full weight; its utilisation at the CPU's utilisation scaled by its share of
    /// the load, capped at half the CPU's spare capacity.
    fn init_task_pelt(&mut self, cpu: usize, p: TaskId) {
        let cfs = &self.cpus[cpu].cfs.avg;
        let cap = self.cpus[cpu].capacity;
        let cfs_util = cfs.util_avg;
        let spare = cap.saturating_sub(cfs_util) / 2;
        let w = self.se[p as usize].weight;
        let t = &mut self.tasks[p as usize];
        let util = if cfs_util > 0 { (cfs_util * w / (cfs.load_avg + 1)).min(spare) } else { spare };
        t.avg.load_avg = w;
        t.avg.util_avg = util;
        t.avg.runnable_avg = util;
        t.avg.last_update_time = self.q.now();
    }

    /// `activate_task()` → `enqueue_task_fair()`: PELT catch-up (and attach if migrated), EEVDF
    /// placement, nr_running, root-domain overload.
    pub(crate) fn activate_task(&mut self, cpu: usize, p: TaskId, migrated: bool, initial: bool) {
        invariant!(!self.se[p as usize].on_rq, "task {} enqueued twice", self.tasks[p as usize].name);
        invariant!(self.tasks[p as usize].cpu as usize == cpu, "task {} enqueued on cpu {cpu} but task_cpu is {}", self.tasks[p as usize].name, self.tasks[p as usize].cpu);
        let now = self.now();
        {
            let c = &mut self.cpus[cpu];
            if c.cfs.curr != NO_TASK {
                c.cfs.update_curr(&mut self.se, now);
            }
        }
        if migrated && !initial {
            // migrate_task_rq_fair() zeroed the task's last_update_time, so enqueue's
            // update_load_avg() does not age it: attach_entity_load_avg() takes its sums as
            // set_task_cpu() left them.
            self.update_load_avg(cpu, NO_TASK);
        } else {
            self.update_load_avg(cpu, p);
        }
        if migrated || initial {
            if initial {
                self.init_task_pelt(cpu, p);
            }
            let w = self.se[p as usize].weight;
            let mut avg = self.tasks[p as usize].avg;
            self.cpus[cpu].cfs.avg.attach(&mut avg, w);
            self.tasks[p as usize].avg = avg;
            // attach_entity_load_avg() + update_tg_load_avg() (DO_ATTACH).
            if self.in_task_group(p) {
                self.update_tg_load_avg(cpu);
            }
        }
        self.update_cfs_group(cpu, p);
        let slice = if self.f.EEVDF { self.t.base_slice } else { self.t.cfs_latency } as i64;
        let f = self.f;
        self.cpus[cpu].cfs.enqueue(&mut self.se, p, &f, initial, slice);
        self.shared_runq_push(cpu, p);
        let c = &mut self.cpus[cpu];
        c.nr_running += 1;
        if c.nr_running >= 2 && !self.rd_overloaded {
            // add_nr_running(): set_rd_overloaded() writes the root domain's shared line.
            self.write_rd_overloaded(cpu, true);
        }
        self.refresh_idle(cpu);
        self.tasks[p as usize].enqueued_at = now;
    }

    /// `deactivate_task()` of a task that is not running (migration by the balancer).
    pub(crate) fn deactivate_queued(&mut self, cpu: usize, p: TaskId) {
        self.update_load_avg(cpu, p);
        self.update_cfs_group(cpu, p);
        let tick = self.t.tick_nsec() as i64;
        self.cpus[cpu].cfs.dequeue_queued(&mut self.se, p, tick);
        self.shared_runq_retract(cpu, p);
        self.cpus[cpu].nr_running -= 1;
        self.refresh_idle(cpu);
        let now = self.now();
        let t = &mut self.tasks[p as usize];
        t.counters.wait_time += now - t.enqueued_at;
    }

    /// `deactivate_task()` of the running task when it blocks or exits (`DEQUEUE_SLEEP`);
    /// updates util_est (`util_est_update`, EWMA weight 1/4).
    pub(crate) fn deactivate_curr(&mut self, cpu: usize) {
        let p = self.cpus[cpu].cfs.curr;
        let now = self.now();
        self.cpus[cpu].cfs.update_curr(&mut self.se, now);
        self.update_load_avg(cpu, p);
        let v = self.se[p as usize].vruntime;
        // Only a sleep can be delayed: an exiting task (TASK_DEAD) is dequeued at once.
        let sleeping = self.tasks[p as usize].state == crate::state::TState::Sleeping;
        if self.f.DELAY_DEQUEUE && sleeping && !self.cpus[cpu].cfs.eligible(&self.se, v) {
            // DELAY_DEQUEUE (v6.12): an ineligible task that blocks stays in the tree, still
            // counted in nr_running and the load, until it is picked or woken.
            self.tasks[p as usize].delayed = true;
            self.cpus[cpu].cfs.put_prev(&mut self.se, p);
            self.tasks[p as usize].enqueued_at = now;
            self.waste_refresh(cpu);
            return;
        }
        // dequeue_entities() walks up to the group's entity only for a real dequeue (a delayed
        // one returns at the task's level): update_cfs_group() there.
        self.update_cfs_group(cpu, p);
        let tick = self.t.tick_nsec() as i64;
        self.cpus[cpu].cfs.dequeue_curr(&mut self.se, tick);
        self.cpus[cpu].nr_running -= 1;
        self.refresh_idle(cpu);
        if self.f.UTIL_EST {
            let se = &mut self.se[p as usize];
            let ue = se.util_est as i64;
            let ua = self.tasks[p as usize].avg.util_avg as i64;
            se.util_est = if ua > ue { ua as u64 } else { (ue + (ua - ue) / 4) as u64 };
        }
    }

    /// The pick chose a delayed task: finish its dequeue (DEQUEUE_DELAYED); DELAY_ZERO drops a
    /// positive lag.
    pub(crate) fn finish_delayed_dequeue(&mut self, cpu: usize, p: TaskId) {
        self.tasks[p as usize].delayed = false;
        let tick = self.t.tick_nsec() as i64;
        self.update_load_avg(cpu, p);
        self.update_cfs_group(cpu, p);
        self.cpus[cpu].cfs.dequeue_queued(&mut self.se, p, tick);
        self.shared_runq_retract(cpu, p);
        self.cpus[cpu].nr_running -= 1;
        self.refresh_idle(cpu);
        let se = &mut self.se[p as usize];
        if self.f.DELAY_ZERO && se.vlag > 0 {
            se.vlag = 0;
        }
    }

    /// A delayed task is woken (`requeue_delayed_entity`): it is runnable again where it is;
    /// DELAY_ZERO re-places it without positive lag.
    pub(crate) fn requeue_delayed(&mut self, cpu: usize, p: TaskId) {
        self.tasks[p as usize].delayed = false;
        if self.f.DELAY_ZERO {
            let v = self.cpus[cpu].cfs.v(&self.se);
            if v - self.se[p as usize].vruntime > 0 {
                let tick = self.t.tick_nsec() as i64;
                let slice = self.t.base_slice as i64;
                let f = self.f;
                self.cpus[cpu].cfs.dequeue_queued(&mut self.se, p, tick);
                self.se[p as usize].vlag = 0;
                self.cpus[cpu].cfs.enqueue(&mut self.se, p, &f, false, slice);
            }
        }
        self.waste_refresh(cpu);
    }

    /// `migrate_task_rq_fair()` for a wakeup of `p`, on the waker `this`:
    /// `remove_entity_load_avg()` reads the old cfs_rq's `avg.last_update_time`
    /// (`sync_entity_load_avg()`) and adds the task's load under its `removed.lock`, and CFS
    /// (until v6.5) first reads its `min_vruntime` to make the vruntime relative: lines of the
    /// old cfs_rq, which the old CPU last wrote (at the task's dequeue), one transfer each from
    /// there, plus the lock. Then, from v6.0, `migrate_se_pelt_lag()` when the old CPU is idle
    /// (below). Brings the wakee's PELT sums up as those two do; returns the cost;
    /// `set_task_cpu()` then moves the task.
    pub(crate) fn migrate_task_rq_fair(&mut self, this: usize, p: TaskId, old: usize) -> Time {
        // avg (+128) and removed (+192) lines; min_vruntime's (+0) too under CFS.
        let lines = if self.f.EEVDF { 2 } else { 3 };
        let mut cost = lines * self.line_xfer(this, old) + self.c.rq_lock;
        let lag = self.migrate_se_pelt_lag(p, old);
        // sync_entity_load_avg() brings the sums only to the old cfs_rq's last update, which
        // on an idle CPU may be long past, unless migrate_se_pelt_lag() estimates now; what is
        // not decayed here the new cfs_rq attaches as it is.
        let sync_to = if lag { self.q.now() } else { self.cpus[old].cfs.avg.last_update_time };
        let w = self.se[p as usize].weight;
        self.tasks[p as usize].avg.update(sync_to, 0, 0, false, w);
        if lag {
            // The old rq's clock line (clock_pelt_idle, clock_idle: written by `update_rq_clock_pelt()`
            // as it went idle) and its cfs_rq's `throttled_pelt_idle` (CONFIG_CFS_BANDWIDTH, as
            // distributions build), then `__update_load_avg_blocked_se()`: one entity's decay, the
            // arithmetic of one leaf cfs_rq's in update_blocked_averages(). Its read of
            // `rq->curr` is not counted: the wakeup's idle checks (`available_idle_cpu(prev)`)
            // have usually just read that line.
            cost += 2 * self.line_xfer(this, old) + self.c.update_blocked;
        }
        cost
    }

    /// Whether a wakeup migration of `p` off `old` runs `migrate_se_pelt_lag()`'s estimate
    /// (v6.0, e2f3e35f1f5a): the task's sums, brought to the old cfs_rq's last update, have not
    /// decayed to zero (`load_avg_is_decayed()`), and the old CPU runs its idle task, so that
    /// cfs_rq's clock may be far behind.
    fn migrate_se_pelt_lag(&self, p: TaskId, old: usize) -> bool {
        if !self.f.MIGRATE_PELT_LAG || self.cpus[old].curr != self.cpus[old].idle_task {
            return false;
        }
        let mut avg = self.tasks[p as usize].avg;
        avg.update(self.cpus[old].cfs.avg.last_update_time, 0, 0, false, self.se[p as usize].weight);
        avg.load_sum != 0 || avg.util_sum != 0 || avg.runnable_sum != 0
    }

    /// `set_task_cpu()` → `migrate_task_rq_fair()`: the task's PELT contribution leaves the old
    /// cfs_rq, it is attached at the next enqueue; the cold-cache penalty is by distance moved.
    pub(crate) fn set_task_cpu(&mut self, p: TaskId, new: usize) {
        let old = self.tasks[p as usize].cpu as usize;
        if old == new {
            return;
        }
        self.update_load_avg(old, NO_TASK);
        let (t, w) = (&mut self.tasks[p as usize], self.se[p as usize].weight);
        // A queued task (load balancing, SHARED_RUNQ: TASK_ON_RQ_MIGRATING) leaves through
        // `detach_entity_cfs_rq()`, its sums brought to now under the old rq's lock; a wakee's
        // were brought up by `migrate_task_rq_fair()` (`remove_entity_load_avg()`).
        if t.migrating {
            t.avg.update(self.q.now(), 0, 0, false, w);
        }
        let avg = t.avg;
        self.cpus[old].cfs.avg.detach(&avg, w);
        // remove_entity_load_avg(): the old cfs_rq folds the removed load in at its next
        // update, which then propagates to the group.
        if self.in_task_group(p) {
            self.cpus[old].tg_removed = true;
        }
        if !self.f.EEVDF {
            // CFS keeps vruntime relative to min_vruntime across runqueues
            // (migrate_task_rq_fair / enqueue_entity with ENQUEUE_MIGRATED).
            let delta = self.cpus[new].cfs.min_vruntime - self.cpus[old].cfs.min_vruntime;
            self.se[p as usize].vruntime += delta;
        }
        crate::trace::trace_ev!(self, wakesim_trace::TraceEvent::Migrate { task: p, from: old as u32, to: new as u32 });
        let d = self.m.dist(old, new);
        self.wake.migrations_by_dist[d.index()] += 1;
        let t = &mut self.tasks[p as usize];
        t.cpu = new as u32;
        t.counters.nr_migrations += 1;
        t.migrate_penalty += self.c.migration_penalty.get(d);
    }
}
