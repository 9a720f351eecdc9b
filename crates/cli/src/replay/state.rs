//! The replay proper: each CPU's cfs_rq of the benchmark's task group, rebuilt with the model's
//! own [`CfsRq`] from the kernel's events and charged the kernel's own runtimes, checked against
//! the kernel's picks and wakeup preemptions.
//!
//! Each rule names the 6.18 kernel function it mirrors (kernel/sched/fair.c unless said
//! otherwise). The EEVDF arithmetic is the model's: placement, V, eligibility, deadlines and
//! the pick are `CfsRq` calls, used the way `Sim` uses them (`enqueue.rs`, `schedule.rs`,
//! `ttwu.rs`).

use super::parse::{Event, Line, Trace};
use serde::Serialize;
use std::collections::{HashMap, HashSet, VecDeque};
use wakesim_model::eevdf::CfsRq;
use wakesim_model::state::{Task, TaskId, NO_TASK};
use wakesim_model::Features;

/// What to replay and how. The three `*` switches exist to prove each rule matters (tests).
#[derive(Clone, Debug)]
pub struct Options {
    /// The benchmark's tasks: every pid with this comm.
    pub comm: String,
    /// `sysctl_sched_base_slice`, ns.
    pub slice_ns: u64,
    /// CONFIG_HZ (the lag clamp is max(2·slice, TICK_NSEC)).
    pub hz: u64,
    /// Disagreements to describe (`--show`).
    pub show: usize,
    /// * A delayed wakee is requeued before the waker's `update_curr()` (rule 4).
    pub requeue_first: bool,
    /// * A balance pass attaches its detached tasks in reverse order (rule 6).
    pub reverse_attach: bool,
    /// * A newidle pull comes after prev's dequeue and the purge of delayed entities (rule 7).
    pub newidle_purge: bool,
}

impl Options {
    pub fn new(comm: &str) -> Options {
        Options {
            comm: comm.to_string(),
            slice_ns: 1_400_000,
            hz: 250,
            show: 0,
            requeue_first: true,
            reverse_attach: true,
            newidle_purge: true,
        }
    }
}

/// Wakeup-preemption agreement of one kind of wakeup.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct WakeCount {
    pub n: u64,
    /// The kernel preempted (remote: a `wakeup_preempt` IPI; local: the waker's next switch-out
    /// is `R`, approximate).
    pub kernel_preempt: u64,
    /// The model's `pick_eevdf()` is the wakee.
    pub model_preempt: u64,
    pub agree: u64,
}

impl WakeCount {
    fn add(&mut self, kernel: bool, model: bool) {
        self.n += 1;
        self.kernel_preempt += kernel as u64;
        self.model_preempt += model as u64;
        self.agree += (kernel == model) as u64;
    }
    pub fn merged(a: WakeCount, b: WakeCount) -> WakeCount {
        WakeCount {
            n: a.n + b.n,
            kernel_preempt: a.kernel_preempt + b.kernel_preempt,
            model_preempt: a.model_preempt + b.model_preempt,
            agree: a.agree + b.agree,
        }
    }
}

/// Everything the replay counts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counts {
    pub cpus: u32,
    pub tasks: u32,
    pub events: u64,
    pub malformed_lines: u64,
    pub trace_seconds: f64,
    /// Context switches to a group task the replay knew: the model's pick vs the kernel's.
    pub picks: u64,
    pub picks_agree: u64,
    /// Switches to a group task the replay had never seen queued (placed, not checked).
    pub picks_unchecked: u64,
    pub wake_local_placed: WakeCount,
    pub wake_local_delayed: WakeCount,
    pub wake_remote_placed: WakeCount,
    pub wake_remote_delayed: WakeCount,
    /// Wakeups of a delayed task (`requeue_delayed_entity()`), and of those how many had the
    /// waker's runtime line applied after the requeue.
    pub delayed_requeues: u64,
    pub requeue_before_update_curr: u64,
    /// Blocking switch-outs, and of those how many stayed queued (DELAY_DEQUEUE).
    pub blocked: u64,
    pub blocked_delayed: u64,
    /// Delayed entities dequeued for good when picked (or purged before a newidle pull).
    pub delayed_dequeued: u64,
    pub load_balance_moves: u64,
    pub newidle_early_blocks: u64,
    /// Where the replay's state and the trace disagree on who runs where.
    pub implicit_switch_ins: u64,
    pub running_not_curr: u64,
    pub runtime_not_curr: u64,
    pub next_on_other_cpu: u64,
    pub wakeup_of_queued: u64,
    pub migrate_delayed: u64,
}

impl Counts {
    pub fn pick_ratio(&self) -> f64 {
        self.picks_agree as f64 / self.picks.max(1) as f64
    }
}

struct Cpu {
    rq: CfsRq,
    /// Synthetic clock: advances only by the current task's traced runtimes, so `update_curr()`
    /// charges exactly the kernel's `runtime`.
    clock: u64,
    /// The running group task (the trace's view), or NO_TASK (idle or another group's task).
    running: TaskId,
    /// What happened here lately, for --show.
    hist: VecDeque<String>,
}

/// A load-balance migration between `detach_task()` and `attach_task()`.
struct Detached {
    emitter_cpu: usize,
    dest: usize,
    task: TaskId,
    /// PLACE_REL_DEADLINE: deadline − vruntime at detach.
    rel_deadline: i64,
}

pub struct Replay<'a> {
    lines: &'a [Line],
    o: Options,
    f: Features,
    tick: i64,
    tasks: Vec<Task>,
    ids: HashMap<u32, TaskId>,
    pids: Vec<u32>,
    group: HashSet<u32>,
    cpus: Vec<Cpu>,
    /// Per line: the next `sched_switch` line on the same CPU.
    next_switch: Vec<Option<usize>>,
    /// Per line: the next line on the same CPU that is not an IPI.
    next_on_cpu: Vec<Option<usize>>,
    /// Per emitting CPU: a runtime held back until the delayed wakee it precedes is requeued.
    deferred: Vec<Option<(usize, TaskId, u64)>>,
    /// (cpu, task) blocked early by a newidle pull; its switch-out must not block it again.
    early_blocked: HashSet<(usize, TaskId)>,
    detached: Vec<Detached>,
    /// Per CPU: the target of a `wakeup_preempt` IPI that was this CPU's previous line.
    last_ipi: Vec<Option<u32>>,
    /// Per CPU: a local wakeup awaiting the waker's next switch-out (waker pid, model, delayed).
    pend_local: Vec<Option<(u32, bool, bool)>>,
    pub counts: Counts,
    /// Descriptions of the first `show` pick disagreements.
    pub shown: Vec<String>,
}

const HIST: usize = 12;

impl<'a> Replay<'a> {
    pub fn new(tr: &'a Trace, o: Options) -> Replay<'a> {
        let lines = &tr.lines[..];
        let mut group = HashSet::new();
        let mut ncpu = tr.header_cpus.unwrap_or(0) as usize;
        for l in lines {
            ncpu = ncpu.max(l.cpu as usize + 1);
            if l.comm == o.comm {
                group.insert(l.pid);
            }
            match &l.event {
                Event::Switch {
                    prev_comm,
                    prev_pid,
                    next_comm,
                    next_pid,
                    ..
                } => {
                    if *prev_comm == o.comm {
                        group.insert(*prev_pid);
                    }
                    if *next_comm == o.comm {
                        group.insert(*next_pid);
                    }
                }
                Event::Wakeup {
                    comm, pid, target, ..
                } => {
                    ncpu = ncpu.max(*target as usize + 1);
                    if *comm == o.comm {
                        group.insert(*pid);
                    }
                }
                Event::Runtime { comm, pid, .. } if *comm == o.comm => {
                    group.insert(*pid);
                }
                Event::Migrate {
                    comm,
                    pid,
                    orig,
                    dest,
                } => {
                    ncpu = ncpu.max(*orig.max(dest) as usize + 1);
                    if *comm == o.comm {
                        group.insert(*pid);
                    }
                }
                _ => {}
            }
        }
        group.remove(&0); // the idle tasks
        let (mut next_switch, mut next_on_cpu) = (vec![None; lines.len()], vec![None; lines.len()]);
        let (mut sw, mut any) = (vec![None; ncpu], vec![None; ncpu]);
        for (i, l) in lines.iter().enumerate().rev() {
            let c = l.cpu as usize;
            next_switch[i] = sw[c];
            next_on_cpu[i] = any[c];
            match l.event {
                Event::Switch { .. } => sw[c] = Some(i),
                Event::Ipi { .. } => continue,
                _ => {}
            }
            any[c] = Some(i);
        }
        let mut f = Features::for_kernel("v6.12").expect("the v6.12 profile exists");
        f.DELAY_DEQUEUE = true;
        f.DELAY_ZERO = true;
        let t0 = lines.first().map_or(0, |l| l.ts_us);
        let t1 = lines.last().map_or(0, |l| l.ts_us);
        let counts = Counts {
            cpus: ncpu as u32,
            events: lines.len() as u64,
            malformed_lines: tr.malformed as u64,
            trace_seconds: (t1 - t0) as f64 / 1e6,
            ..Default::default()
        };
        Replay {
            lines,
            tick: (1_000_000_000 / o.hz.max(1)) as i64,
            o,
            f,
            tasks: Vec::new(),
            ids: HashMap::new(),
            pids: Vec::new(),
            group,
            cpus: (0..ncpu)
                .map(|_| Cpu {
                    rq: CfsRq::new(),
                    clock: 0,
                    running: NO_TASK,
                    hist: VecDeque::new(),
                })
                .collect(),
            next_switch,
            next_on_cpu,
            deferred: vec![None; ncpu],
            early_blocked: HashSet::new(),
            detached: Vec::new(),
            last_ipi: vec![None; ncpu],
            pend_local: vec![None; ncpu],
            counts,
            shown: Vec::new(),
        }
    }

    pub fn group_size(&self) -> usize {
        self.group.len()
    }

    pub fn run(mut self) -> (Counts, Vec<String>) {
        for i in 0..self.lines.len() {
            self.line(i);
        }
        self.flush_attach();
        self.counts.tasks = self.group.len() as u32;
        (self.counts, self.shown)
    }

    fn in_group(&self, pid: u32) -> bool {
        self.group.contains(&pid)
    }

    /// The replay's task for a group pid, made on first sight.
    fn task(&mut self, pid: u32) -> TaskId {
        if let Some(&t) = self.ids.get(&pid) {
            return t;
        }
        let id = self.tasks.len() as TaskId;
        let mut t = Task::standalone(&pid.to_string());
        t.se.slice = self.o.slice_ns as i64;
        self.tasks.push(t);
        self.ids.insert(pid, id);
        self.pids.push(pid);
        id
    }

    fn known(&self, pid: u32) -> Option<TaskId> {
        self.ids.get(&pid).copied()
    }

    fn line(&mut self, i: usize) {
        let lines = self.lines;
        let l = &lines[i];
        let cpu = l.cpu as usize;
        let ipi_here = self.last_ipi[cpu].take();
        let is_ipi = matches!(l.event, Event::Ipi { .. });
        if self.o.show > 0 && !is_ipi {
            self.remember(l);
        }
        // The balancing CPU went on to something else: its attach_tasks() is done. (Before
        // rule 8: the task it runs next may be one it pulled.)
        let is_migrate = matches!(l.event, Event::Migrate { .. });
        if !is_migrate && self.detached.first().is_some_and(|d| d.emitter_cpu == cpu) {
            self.flush_attach();
        }
        // A runtime held back for a requeue that did not come is charged now.
        let deferred = if is_ipi {
            None
        } else {
            self.deferred[cpu].take()
        };
        // Rule 8: this kernel does not always trace the switch from the idle task; a group task
        // seen emitting on a CPU the replay holds idle was switched in there.
        if self.in_group(l.pid) {
            let switched_in_here =
                matches!(l.event, Event::Switch { next_pid, .. } if next_pid == l.pid);
            let t = self.task(l.pid);
            if self.cpus[cpu].running != t && !switched_in_here {
                if self.cpus[cpu].running == NO_TASK {
                    self.implicit_switch_in(cpu, t);
                } else {
                    self.counts.running_not_curr += 1;
                }
            }
        }
        match &l.event {
            Event::Ipi {
                cpu: target,
                callsite,
            } => {
                if callsite.starts_with("wakeup_preempt+") {
                    self.last_ipi[cpu] = Some(*target);
                }
                return;
            }
            Event::Runtime { pid, runtime, .. } => {
                if let Some(d) = deferred {
                    self.charge(d.0, d.1, d.2);
                }
                self.runtime(i, *pid, *runtime);
                return;
            }
            _ => {}
        }
        // attach_tasks() runs when the balance pass's run of migrations ends.
        if !self.detached.is_empty() && !matches!(l.event, Event::Migrate { .. }) {
            self.flush_attach();
        }
        let mut deferred = deferred;
        if !matches!(l.event, Event::Wakeup { .. }) {
            if let Some(d) = deferred.take() {
                self.charge(d.0, d.1, d.2);
            }
        }
        match l.event.clone() {
            Event::Migrate {
                pid, orig, dest, ..
            } => self.migrate(i, pid, orig as usize, dest as usize),
            Event::Switch {
                prev_pid,
                prev_state,
                next_pid,
                ..
            } => self.switch(cpu, prev_pid, &prev_state, next_pid),
            Event::Wakeup {
                pid, target, new, ..
            } => self.wakeup(
                cpu,
                l.pid,
                pid,
                target as usize,
                new,
                ipi_here,
                &mut deferred,
            ),
            _ => {}
        }
        // Not consumed by a requeue: charged late, but nothing read this rq meanwhile.
        if let Some(d) = deferred {
            self.charge(d.0, d.1, d.2);
        }
    }

    fn remember(&mut self, l: &Line) {
        let s = format!(
            "{}.{:06} [{}] {}",
            l.ts_us / 1_000_000,
            l.ts_us % 1_000_000,
            l.cpu,
            l.text
        );
        let mut at = vec![l.cpu as usize];
        match l.event {
            Event::Wakeup { target, .. } => at.push(target as usize),
            Event::Migrate { orig, dest, .. } => at.extend([orig as usize, dest as usize]),
            _ => {}
        }
        at.sort_unstable();
        at.dedup();
        for c in at {
            let h = &mut self.cpus[c].hist;
            h.push_back(s.clone());
            if h.len() > HIST {
                h.pop_front();
            }
        }
    }

    // ---- sched_stat_runtime ----------------------------------------------------------------

    /// Rule 1, `update_curr()`: the task's cfs_rq charges it the traced runtime.
    fn runtime(&mut self, i: usize, pid: u32, d: u64) {
        if !self.in_group(pid) {
            return;
        }
        let Some(t) = self.known(pid) else { return };
        if !self.tasks[t as usize].on_rq {
            return;
        }
        let c = self.tasks[t as usize].cpu as usize;
        if self.cpus[c].rq.curr != t {
            self.counts.runtime_not_curr += 1;
            return;
        }
        // Rule 4: this is check_preempt_wakeup_fair()'s update_curr() for a delayed wakee on
        // this rq; ttwu_runnable() → requeue_delayed_entity() ran before it.
        if self.o.requeue_first && self.precedes_delayed_wakeup(i, c) {
            self.deferred[self.lines[i].cpu as usize] = Some((c, t, d));
            return;
        }
        self.charge(c, t, d);
    }

    fn charge(&mut self, c: usize, t: TaskId, d: u64) {
        let cpu = &mut self.cpus[c];
        if cpu.rq.curr != t {
            self.counts.runtime_not_curr += 1;
            return;
        }
        cpu.clock += d;
        cpu.rq.update_curr(&mut self.tasks, cpu.clock);
    }

    /// Whether line `i`'s CPU next (IPIs aside) wakes a delayed task queued on rq `c`.
    fn precedes_delayed_wakeup(&self, i: usize, c: usize) -> bool {
        let Some(j) = self.next_on_cpu[i] else {
            return false;
        };
        let Event::Wakeup {
            pid, new: false, ..
        } = self.lines[j].event
        else {
            return false;
        };
        let Some(w) = self.known(pid) else {
            return false;
        };
        let w = &self.tasks[w as usize];
        self.in_group(pid) && w.on_rq && w.delayed && w.cpu as usize == c
    }

    // ---- placement and removal --------------------------------------------------------------

    /// `enqueue_entity()` → `place_entity()`: lag placement at V (lag ignored on an empty
    /// cfs_rq); `initial`: `wake_up_new_task()`, PLACE_DEADLINE_INITIAL.
    fn place(&mut self, c: usize, t: TaskId, initial: bool) {
        let slice = self.o.slice_ns as i64;
        self.tasks[t as usize].cpu = c as u32;
        self.cpus[c]
            .rq
            .enqueue(&mut self.tasks, t, &self.f, initial, slice);
    }

    /// `dequeue_entities()` of a delayed entity (`finish_delayed_dequeue_entity()`): DELAY_ZERO
    /// drops a positive lag.
    fn finish_delayed(&mut self, c: usize, t: TaskId) {
        let rq = &mut self.cpus[c].rq;
        self.tasks[t as usize].delayed = false;
        if !rq.queued.contains(&t) {
            return;
        }
        rq.dequeue_queued(&mut self.tasks, t, self.tick);
        let se = &mut self.tasks[t as usize].se;
        if self.f.DELAY_ZERO && se.vlag > 0 {
            se.vlag = 0;
        }
        self.counts.delayed_dequeued += 1;
    }

    /// Takes `t` off whatever rq holds it, running or not (the trace says it is elsewhere).
    fn detach_any(&mut self, t: TaskId) {
        let c = self.tasks[t as usize].cpu as usize;
        let cpu = &mut self.cpus[c];
        if cpu.rq.curr == t {
            if cpu.rq.curr_on_rq {
                cpu.rq.dequeue_curr(&mut self.tasks, self.tick);
            }
            cpu.rq.curr = NO_TASK;
            cpu.rq.curr_on_rq = false;
            if cpu.running == t {
                cpu.running = NO_TASK;
            }
        } else if cpu.rq.queued.contains(&t) {
            cpu.rq.dequeue_queued(&mut self.tasks, t, self.tick);
        }
        let p = &mut self.tasks[t as usize];
        p.on_rq = false;
        p.delayed = false;
    }

    /// `put_prev_entity()`: the previous entity goes back into the tree if still queued.
    fn put_prev(&mut self, c: usize) {
        let rq = &mut self.cpus[c].rq;
        if rq.curr != NO_TASK {
            if rq.curr_on_rq {
                let p = rq.curr;
                rq.put_prev(&mut self.tasks, p);
            } else {
                rq.curr = NO_TASK;
            }
        }
    }

    /// `set_next_entity()`: out of the tree as cfs_rq->curr; RUN_TO_PARITY protects it up to
    /// its deadline (rule 3).
    fn set_next(&mut self, c: usize, t: TaskId) {
        self.put_prev(c);
        let cpu = &mut self.cpus[c];
        if cpu.rq.queued.contains(&t) {
            cpu.rq.set_next(&mut self.tasks, t, cpu.clock);
        }
        cpu.running = t;
    }

    fn implicit_switch_in(&mut self, cpu: usize, t: TaskId) {
        self.counts.implicit_switch_ins += 1;
        if self.tasks[t as usize].on_rq && self.tasks[t as usize].cpu as usize != cpu {
            self.detach_any(t);
        }
        if !self.tasks[t as usize].on_rq {
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
    fn block(&mut self, t: TaskId, state: &str) {
        let c = self.tasks[t as usize].cpu as usize;
        let rq = &mut self.cpus[c].rq;
        let is_curr = rq.curr == t && rq.curr_on_rq;
        let in_tree = rq.queued.contains(&t);
        if !is_curr && !in_tree {
            return;
        }
        if state.starts_with('X') || state.starts_with('Z') {
            if is_curr {
                rq.dequeue_curr(&mut self.tasks, self.tick);
            } else {
                rq.dequeue_queued(&mut self.tasks, t, self.tick);
                self.tasks[t as usize].delayed = false;
            }
            return;
        }
        self.counts.blocked += 1;
        let eligible = rq.eligible(&self.tasks, self.tasks[t as usize].se.vruntime);
        if eligible {
            if is_curr {
                rq.dequeue_curr(&mut self.tasks, self.tick);
            } else {
                rq.dequeue_queued(&mut self.tasks, t, self.tick);
            }
            self.tasks[t as usize].delayed = false;
        } else {
            self.counts.blocked_delayed += 1;
            self.tasks[t as usize].delayed = true;
            // As the model's deactivate_curr(): the delayed entity goes back into the tree
            // (the kernel keeps it as an ineligible, hence unpickable, cfs_rq->curr until
            // put_prev_entity(); __pick_eevdf() sees the same candidates).
            if is_curr {
                rq.put_prev(&mut self.tasks, t);
            }
        }
    }

    /// `pick_next_entity()`: `__pick_eevdf()` with prev still cfs_rq->curr; a picked delayed
    /// entity is dequeued for good (DEQUEUE_DELAYED) and the pick repeats.
    fn pick(&mut self, c: usize) -> TaskId {
        loop {
            let rq = &self.cpus[c].rq;
            if rq.nr_running() == 0 {
                return NO_TASK;
            }
            let p = rq.pick(&self.tasks, &self.f);
            if p != NO_TASK && self.tasks[p as usize].delayed {
                self.finish_delayed(c, p);
                continue;
            }
            return p;
        }
    }

    /// `pick_task_fair()` found nothing: every delayed entity was picked and dequeued.
    fn purge_delayed(&mut self, c: usize) {
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

    fn switch(&mut self, cpu: usize, prev: u32, state: &str, next: u32) {
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
                if !self.tasks[p as usize].on_rq {
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
        if self.tasks[n as usize].on_rq && self.tasks[n as usize].cpu as usize != cpu {
            self.counts.next_on_other_cpu += 1;
            self.detach_any(n);
        }
        if !self.tasks[n as usize].on_rq {
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

    // ---- sched_wakeup[_new] -----------------------------------------------------------------

    #[allow(clippy::too_many_arguments)]
    fn wakeup(
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
        let delayed = self.tasks[p as usize].on_rq && self.tasks[p as usize].delayed;
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
                && rq.v(&self.tasks) - self.tasks[p as usize].se.vruntime > 0
                && rq.queued.contains(&p)
            {
                rq.dequeue_queued(&mut self.tasks, p, self.tick);
                self.tasks[p as usize].se.vlag = 0;
                self.place(c, p, false);
            }
            if let Some((dc, dt, d)) = deferred.take() {
                if dc == c {
                    self.counts.requeue_before_update_curr += 1;
                }
                self.charge(dc, dt, d);
            }
        } else if self.tasks[p as usize].on_rq {
            self.counts.wakeup_of_queued += 1;
            return;
        } else {
            // ttwu_do_activate() → enqueue_entity() → place_entity() with the saved lag;
            // wake_up_new_task(): lag 0, half a slice to the deadline.
            if new {
                self.tasks[p as usize].se.vlag = 0;
            }
            self.place(target, p, new);
        }
        // Rule 5, check_preempt_wakeup_fair(): preempt iff the wakee is now __pick_eevdf().
        let cu = self.cpus[target].running;
        if cu == NO_TASK || cu == p {
            return;
        }
        let model = self.cpus[target].rq.pick(&self.tasks, &self.f) == p;
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

    // ---- sched_migrate_task -----------------------------------------------------------------

    fn migrate(&mut self, i: usize, pid: u32, orig: usize, dest: usize) {
        if !self.in_group(pid) {
            return;
        }
        let Some(p) = self.known(pid) else { return };
        let lines = self.lines;
        let l = &lines[i];
        let (cpu, emitter) = (l.cpu as usize, l.pid);
        let runnable = self.tasks[p as usize].on_rq && !self.tasks[p as usize].delayed;
        if self.o.newidle_purge && runnable && dest == cpu && emitter != 0 {
            self.newidle_pull(i, cpu, emitter);
        }
        if runnable {
            // Rule 6, detach_task() → dequeue_entity() without DEQUEUE_SLEEP: lag against the
            // source's V; PLACE_REL_DEADLINE keeps deadline − vruntime.
            let se = &self.tasks[p as usize].se;
            let rel_deadline = se.deadline - se.vruntime;
            let from = self.tasks[p as usize].cpu as usize;
            if self.cpus[from].rq.queued.contains(&p) {
                self.cpus[from]
                    .rq
                    .dequeue_queued(&mut self.tasks, p, self.tick);
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
        } else if self.tasks[p as usize].on_rq {
            // A delayed (blocked) task moved: it leaves its rq for good.
            self.counts.migrate_delayed += 1;
            let c = self.tasks[p as usize].cpu as usize;
            self.finish_delayed(c, p);
            self.tasks[p as usize].on_rq = false;
        }
        // A sleeping task just moves; its saved lag goes with it.
        let _ = orig;
        self.tasks[p as usize].cpu = dest as u32;
    }

    /// Rule 7: a pull by `sched_balance_newidle()` inside a blocking task's `schedule()` comes
    /// after `__schedule()` dequeued prev and `pick_task_fair()` found nothing, i.e. after
    /// every delayed entity here was picked and dequeued (DELAY_ZERO). The migration line is
    /// emitted by the task whose next switch on this CPU has it as a blocking prev.
    fn newidle_pull(&mut self, i: usize, cpu: usize, emitter: u32) {
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
        if !self.early_blocked.contains(&(cpu, pp)) && self.tasks[pp as usize].on_rq {
            self.block(pp, &state);
            self.early_blocked.insert((cpu, pp));
            self.counts.newidle_early_blocks += 1;
        }
        self.purge_delayed(cpu);
    }

    /// `attach_tasks()`: `detach_tasks()` list_add()ed each task at the head of env->tasks and
    /// attach_tasks() takes from the head, so the last detached is attached first. Each is
    /// placed with its lag and its relative deadline (`place_entity()`, PLACE_REL_DEADLINE).
    fn flush_attach(&mut self) {
        let mut batch = std::mem::take(&mut self.detached);
        if self.o.reverse_attach {
            batch.reverse();
        }
        for d in batch {
            if self.tasks[d.task as usize].on_rq {
                continue;
            }
            self.place(d.dest, d.task, false);
            let se = &mut self.tasks[d.task as usize].se;
            // The deadline is not part of the rq's sums: setting it after placing is exact.
            se.deadline = se.vruntime + d.rel_deadline;
        }
    }

    // ---- --show -------------------------------------------------------------------------------

    fn describe(&self, cpu: usize, prev: u32, state: &str, next: u32, pick: TaskId) -> String {
        let l = self.cpus[cpu].hist.back().cloned().unwrap_or_default();
        let rq = &self.cpus[cpu].rq;
        let v = rq.v(&self.tasks);
        let pick_pid = if pick == NO_TASK {
            "none".to_string()
        } else {
            self.pids[pick as usize].to_string()
        };
        let mut s = format!("cpu {cpu}: prev {prev} ({state}) -> kernel picked {next}, model picked {pick_pid}\n  at {l}\n");
        let mut ents: Vec<TaskId> = rq.queued.clone();
        if rq.curr != NO_TASK && rq.curr_on_rq {
            ents.push(rq.curr);
        }
        ents.sort_by_key(|&t| {
            (
                self.tasks[t as usize].se.deadline,
                self.tasks[t as usize].se.tree_seq,
            )
        });
        s += "  the replay's cfs_rq (by deadline):\n       pid        v-V        d-V\n";
        for t in ents {
            let se = &self.tasks[t as usize].se;
            let pid = self.pids[t as usize];
            let mut tags = Vec::new();
            if rq.eligible(&self.tasks, se.vruntime) {
                tags.push("eligible");
            }
            if self.tasks[t as usize].delayed {
                tags.push("delayed");
            }
            if t == rq.curr {
                tags.push("curr");
            }
            if pid == next {
                tags.push("<- kernel");
            }
            if t == pick {
                tags.push("<- model");
            }
            s += &format!(
                "  {pid:>8} {:>10} {:>10}  {}\n",
                se.vruntime - v,
                se.deadline - v,
                tags.join(" ")
            );
        }
        s += &format!("  last events on cpu {cpu}:\n");
        for h in &self.cpus[cpu].hist {
            s += &format!("    {h}\n");
        }
        s
    }
}
