//! Test hooks: drive the event loop one event at a time, read per-CPU and per-task state, and
//! call internal mechanisms on a state a test has set up. Used by the integration tests
//! (`tests/model/`); not a stable API.
//!
//! Stepping does not perturb a run: `step` dispatches exactly what `run()` would, in the same
//! order, and `step_until` marks the stopping time with a no-op event (a `PollTimeout` whose
//! generation cannot match), so the relative order of the model's own events is unchanged.

use crate::exec::Ev;
use crate::pelt::SchedAvg;
use crate::sim::Sim;
use crate::state::{Csd, Mode, TaskId};
use wakesim_engine::Time;

impl Sim {
    /// Whether `boot` ran (the spawns are queued).
    pub fn booted(&self) -> bool {
        self.q.stats().pushed > 0
    }

    /// What `run()` does before its loop: every CPU enters its idle loop and every workload task
    /// is queued for `wake_up_new_task` at time 0. Idempotent.
    pub fn boot(&mut self) {
        if self.booted() {
            return;
        }
        self.start_events();
    }

    /// Dispatches the next event (booting first if needed), with the light invariant checks
    /// `run()` makes. Returns the event and its time, or `None` if nothing is pending. The
    /// duration cap is not applied: the test decides how far to go.
    pub fn step(&mut self) -> Option<(Time, Ev)> {
        self.boot();
        let (t, ev) = self.q.pop()?;
        self.dispatch(ev);
        if wakesim_engine::CHECKS {
            self.check_invariants_light();
        }
        Some((t, ev))
    }

    /// Dispatches every event due before `t` (and those due at `t` queued before this call);
    /// afterwards `now() == t`. Returns the number of model events dispatched.
    pub fn step_until(&mut self, t: Time) -> u64 {
        self.step_until_with(t, |_, _, _| {})
    }

    /// `step_until` calling `f(sim, time, event)` after each dispatched model event.
    pub fn step_until_with(&mut self, t: Time, mut f: impl FnMut(&mut Sim, Time, Ev)) -> u64 {
        self.boot();
        assert!(t >= self.now(), "step_until({t}) is in the past (now {})", self.now());
        // A PollTimeout whose generation is 2^31 ahead of CPU 0's cannot match it: a no-op.
        let sentinel = self.cpus[0].gen.wrapping_add(1 << 31);
        self.q.push(t, Ev::PollTimeout { cpu: 0, gen: sentinel });
        let mut n = 0;
        while let Some((tt, ev)) = self.q.pop() {
            if let Ev::PollTimeout { cpu: 0, gen } = ev {
                if gen == sentinel && tt == t {
                    break;
                }
            }
            self.dispatch(ev);
            if wakesim_engine::CHECKS {
                self.check_invariants_light();
            }
            n += 1;
            f(self, tt, ev);
        }
        n
    }

    /// Dispatches up to `n` events; returns how many were dispatched.
    pub fn run_events(&mut self, n: u64) -> u64 {
        let mut k = 0;
        while k < n && self.step().is_some() {
            k += 1;
        }
        k
    }

    /// Steps until every task exited or `cap` is passed, checking that the clock never goes
    /// back after any event and running `check_invariants_full()` every `full_every` events (and
    /// at the end). Returns `true` if all tasks exited.
    pub fn run_checked(&mut self, cap: Time, full_every: u64) -> bool {
        self.boot();
        let mut last = self.now();
        let mut k = 0u64;
        while self.live_tasks > 0 {
            let Some((t, _)) = self.step() else { break };
            assert!(t >= last, "clock went back: {t} < {last}");
            assert_eq!(self.now(), t, "now() is not the dispatched event's time");
            last = t;
            k += 1;
            if full_every > 0 && k % full_every == 0 {
                self.check_invariants_full();
            }
            if t > cap {
                break;
            }
        }
        self.check_invariants_full();
        self.live_tasks == 0
    }

    /// Tasks that have not exited yet.
    pub fn live_tasks(&self) -> u32 {
        self.live_tasks
    }

    /// The TaskId of workload task `i` (the order of `Workload::tasks`).
    pub fn task_id(&self, i: usize) -> TaskId {
        self.first_task + i as TaskId
    }

    /// `task_cpu()` of workload task `i`.
    pub fn task_cpu(&self, i: usize) -> usize {
        self.tasks[self.task_id(i) as usize].cpu as usize
    }

    /// When the wakeup of workload task `i` now under way (or the last one) entered
    /// `try_to_wake_up()`.
    pub fn wake_started(&self, i: usize) -> Time {
        self.tasks[self.task_id(i) as usize].wake_start
    }

    /// Workload index of the task `cpu` is running, `None` if it runs its idle task.
    pub fn running(&self, cpu: usize) -> Option<usize> {
        let c = &self.cpus[cpu];
        (c.curr != c.idle_task).then(|| (c.curr - self.first_task) as usize)
    }

    /// `rq->nr_running` of `cpu`.
    pub fn nr_running(&self, cpu: usize) -> u32 {
        self.cpus[cpu].nr_running
    }

    /// What `cpu` is doing right now.
    pub fn cpu_mode(&self, cpu: usize) -> Mode {
        self.cpus[cpu].mode
    }

    /// `available_idle_cpu()`.
    pub fn is_available_idle(&self, cpu: usize) -> bool {
        self.available_idle(cpu)
    }

    /// What one cache-line transfer between `a` and `b` costs on this machine (`mesh::line_xfer`).
    pub fn line_transfer(&self, a: usize, b: usize) -> Time {
        self.line_xfer(a, b)
    }

    /// Whether `cpu`'s idle task has TIF_POLLING_NRFLAG set (a flag write wakes it, no IPI).
    pub fn is_polling_idle(&self, cpu: usize) -> bool {
        self.is_polling(cpu)
    }

    /// The idle state `cpu` is in, `None` if it is not idling.
    pub fn idle_state(&self, cpu: usize) -> Option<usize> {
        (self.cpus[cpu].mode == Mode::Idle).then_some(self.cpus[cpu].idle_state)
    }

    /// Whether a wakelist entry for workload task `i` is queued on `cpu`.
    pub fn on_wakelist(&self, cpu: usize, i: usize) -> bool {
        let p = self.task_id(i);
        self.cpus[cpu].csd.iter().any(|e| *e == Csd::Ttwu(p))
    }

    /// `sd_llc`'s level index for `cpu`.
    pub fn llc_level(&self, cpu: usize) -> usize {
        self.m.sd_llc[cpu].expect("cpu has an LLC domain") as usize
    }

    /// `sd_llc_shared->nr_idle_scan` of `cpu`'s LLC.
    pub fn llc_nr_idle_scan(&self, cpu: usize) -> u32 {
        self.llcs[self.cpus[cpu].llc as usize].nr_idle_scan
    }

    /// `sd_llc_shared->has_idle_cores` of `cpu`'s LLC.
    pub fn llc_has_idle_cores(&self, cpu: usize) -> bool {
        self.llcs[self.cpus[cpu].llc as usize].has_idle_cores
    }

    /// SIS_LLC_BUSY: `cpu`'s LLC is in the patch's `sd_is_busy` state.
    pub fn llc_is_busy(&self, cpu: usize) -> bool {
        self.llcs[self.cpus[cpu].llc as usize].is_busy
    }

    /// `update_idle_core(cpu_rq(cpu))`, as `set_next_task_idle()` runs it when `cpu` enters idle.
    pub fn update_idle_core_at(&mut self, cpu: usize) {
        self.update_idle_core(cpu);
    }

    /// `sd->max_newidle_lb_cost` of `cpu`'s domain at `level`.
    pub fn max_newidle_lb_cost(&self, cpu: usize, level: usize) -> Time {
        self.doms[cpu][level].max_newidle_lb_cost
    }

    /// `cpu_util_cfs()`.
    pub fn cpu_util_cfs(&self, cpu: usize) -> u64 {
        self.cpu_util(cpu)
    }

    /// Brings the PELT signals of workload task `i` (and of its CPU's cfs_rq) up to now, as
    /// `update_load_avg()` does at any scheduler event, and returns the task's.
    pub fn sync_task_pelt(&mut self, i: usize) -> SchedAvg {
        let p = self.task_id(i);
        let cpu = self.tasks[p as usize].cpu as usize;
        self.update_load_avg(cpu, p);
        self.tasks[p as usize].avg
    }

    /// Brings `cpu`'s cfs_rq PELT signals up to now and returns them.
    pub fn sync_cpu_pelt(&mut self, cpu: usize) -> SchedAvg {
        self.update_load_avg(cpu, crate::state::NO_TASK);
        self.cpus[cpu].cfs.avg
    }

    /// `select_idle_sibling(p, prev, target)` run by `this` for workload task `i`: (cpu, cost).
    pub fn select_idle_sibling_for(&mut self, this: usize, i: usize, prev: usize, target: usize) -> (usize, Time) {
        let p = self.task_id(i);
        self.select_idle_sibling(this, p, prev, target)
    }

    /// `select_task_rq_fair(p, task_cpu(p), WF_TTWU [| WF_SYNC])` run by `this`'s current task
    /// for workload task `i`: (cpu, cost).
    pub fn select_task_rq_for(&mut self, this: usize, i: usize, sync: bool) -> (usize, Time) {
        let p = self.task_id(i);
        let pl = self.select_task_rq_fair(this, p, sync);
        (pl.cpu as usize, pl.cost)
    }

    /// `try_to_wake_up()`'s second read of the CPU the idle scan returned for workload task `i`,
    /// run by `this` when the scan's cost has passed ([`Sim::sis_recheck`]).
    pub fn sis_recheck_for(&mut self, this: usize, i: usize) -> Option<(usize, Time)> {
        let p = self.task_id(i);
        self.sis_recheck(this, p)
    }

    /// Another wakeup claims idle `cpu`, as `ttwu_queue_wakelist()` does (`rq->ttwu_pending`).
    pub fn claim_idle_cpu(&mut self, cpu: usize) {
        assert!(self.available_idle(cpu), "CPU {cpu} is not idle");
        self.cpus[cpu].ttwu_pending = true;
        self.refresh_idle(cpu);
    }

    /// `update_idle_cpu_scan()` as the periodic balance of `cpu` at `level` runs it.
    pub fn update_idle_cpu_scan_at(&mut self, cpu: usize, level: usize) {
        self.update_idle_cpu_scan(cpu, level);
    }

    /// `poll_idle()` on `cpu` returns now on its time limit, as if `cpuidle_poll_time()` ran out
    /// at this instant (the CPU must be in the POLL state).
    pub fn poll_time_runs_out(&mut self, cpu: usize) {
        assert_eq!(self.idle_state(cpu), Some(0), "CPU {cpu} is not in the POLL state");
        self.poll_timeout(cpu);
    }

    /// `kick_ilb()` from `from` to `ilb`: queue the NOHZ idle-balance CSD and kick the CPU
    /// (a flag write if it polls, else an IPI), exactly as `nohz_balancer_kick()` ends. This is
    /// the model's only function-call CSD that carries no task (kernel/sched/fair.c: kick_ilb()).
    pub fn kick_ilb_csd(&mut self, from: usize, ilb: usize) {
        let was_empty = self.cpus[ilb].csd.is_empty();
        self.cpus[ilb].csd.push_back(Csd::IlbKick);
        if was_empty {
            self.send_call_function_single_ipi(from, ilb);
        }
    }
}
