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
use wakesim_model::state::{Entity, Task, TaskId, NO_TASK};
use wakesim_model::Features;

mod balance;
mod show;
mod switch;
mod wake;

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

/// Defaults for a trace whose kernel is not at hand: this development VM's 6.18 (2 CPUs), whose
/// `se.slice` in `/proc/self/sched` is 1.4 ms (0.7 ms normalized × 2) and whose CONFIG_HZ is 250.
pub const DEFAULT_SLICE_US: u64 = 1400;
pub const DEFAULT_HZ: u64 = 250;

impl Options {
    pub fn new(comm: &str) -> Options {
        Options {
            comm: comm.to_string(),
            slice_ns: DEFAULT_SLICE_US * 1000,
            hz: DEFAULT_HZ,
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
    /// The tasks' scheduling entities, indexed like `tasks`: what the cfs_rqs work on.
    se: Vec<Entity>,
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

/// Events remembered per CPU for `--show` (enough to see the wakeups and switches before a pick).
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
            se: Vec::new(),
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
        self.tasks.push(Task::standalone(&pid.to_string()));
        self.se.push(Entity { slice: self.o.slice_ns as i64, ..Entity::standalone() });
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
        if !self.se[t as usize].on_rq {
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
        cpu.rq.update_curr(&mut self.se, cpu.clock);
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
        let (on_rq, w) = (self.se[w as usize].on_rq, &self.tasks[w as usize]);
        self.in_group(pid) && on_rq && w.delayed && w.cpu as usize == c
    }
}
