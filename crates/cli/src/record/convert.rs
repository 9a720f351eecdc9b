//! From a recording's events to each task's steps: what it did at which point of its own CPU
//! time, with the dependency structure kept.
//!
//! * A task's **CPU time** is the sum of its running stretches (switch in → switch out).
//! * **Channels** (`chans`): the pipes and sockets the wakeups reveal. Every read and write on
//!   them becomes `recv`/`send` of the bytes it moved, at its point; a read that blocked is the
//!   `recv` at the block, as is a poll/epoll/select block whose next read took the data. The
//!   replay then blocks and wakes on them by itself.
//! * Any other **block** is a switch out with a sleeping state (S, D, …). The first
//!   `sched_waking` of the task after it decides what it becomes:
//!   - woken by another recorded task (in process context, or in the soft interrupt a loopback
//!     send runs on the sender's CPU): a **dependency**, the same object in both programs. A
//!     read, recv, poll/epoll/select, accept/connect or wait4 (the kernel wakes these with
//!     WF_SYNC) becomes `recv` on a channel of the pair, and the waker's point a `send` of the
//!     bytes it wrote; a futex wait or anything else becomes `wait` on a futex of the pair and
//!     the waker's point a `wake` (a semaphore post, so the pair cannot lose a wakeup when the
//!     simulated order differs).
//!   - woken from a hard interrupt, a kernel thread, or a task outside the recording: a timed
//!     **sleep** of the time it stayed blocked (nanosleep, a timeout, I/O, a signal from
//!     outside).
//! * A **fork** of a recorded task: the child's program starts with `wait` on a futex of its own
//!   and the parent posts it at the fork (every task of a task file exists from time 0).
//! * An **exit** ends the program (after the wakeups the exit itself does, e.g. of a parent in
//!   `wait4`); a task still blocked when the recording ends ends at that block.
//!
//! A wakeup of a task that had not yet switched out (it was still on its CPU, or runnable) is
//! no dependency: neither side gets an op. A block that ends without a recorded wakeup (a
//! signal interrupted it before it switched out) is dropped.

mod mutexes;

use super::chans::{self, Plan};
use super::events::{Class, Ctx, Ev, Kind, Recording, State};
use std::collections::{BTreeMap, HashMap, HashSet};
use wakesim_workloads::ChanKind;

/// Which tasks are the workload: these and every task they fork in the recording.
#[derive(Clone, Debug)]
pub enum Roots {
    Pids(Vec<u32>),
    Comms(Vec<String>),
}

/// One thing a task did, at a point of its own CPU time.
#[derive(Clone, Debug, PartialEq)]
pub enum Act {
    /// Post futex `futex` (a waker's side of a futex-like dependency, or a fork).
    Post { futex: usize },
    /// Wait on futex `futex`; `spawn`: the start of a forked task (no block was recorded).
    Wait { futex: usize, spawn: bool },
    /// A write; `blocks`: it blocked (a full buffer); `wakes`: it woke a reader.
    Send { chan: usize, bytes: u64, blocks: bool, wakes: bool },
    /// A read; `blocks`: it blocked (or is a poll/epoll block and the read after it).
    Recv { chan: usize, bytes: u64, blocks: bool },
    /// Blocked this long, woken from outside the recorded tasks.
    Sleep { ns: u64 },
    /// `pthread_mutex_lock` (from the lock log); `blocks`: it slept in `futex_wait` on the word.
    Lock { mutex: usize, blocks: bool },
    /// `pthread_mutex_unlock`; `syscall`: it made the `futex_wake` syscall (word 2); `wakes`:
    /// that woke a task.
    Unlock { mutex: usize, syscall: bool, wakes: bool },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The task's on-CPU ns from its start to this point.
    pub cpu: u64,
    pub act: Act,
    /// The blocking syscall or cause, for the task file's comment ("" for wakers).
    pub note: &'static str,
}

#[derive(Clone, Debug)]
pub struct TaskOut {
    pub pid: u32,
    pub comm: String,
    /// Thread-group id, where the recording says.
    pub tgid: Option<u32>,
    /// Nice value from the kernel priority (`prio - 120`), if a normal-class priority.
    pub nice: Option<i32>,
    pub steps: Vec<Step>,
    /// Its on-CPU ns from start to exit (or the end of the recording).
    pub end_cpu: u64,
    /// Not the workload: another task that ran meanwhile (`--others`).
    pub background: bool,
}

/// A channel of the task file.
#[derive(Clone, Debug, PartialEq)]
pub struct ChanOut {
    pub name: String,
    pub kind: ChanKind,
    /// Bytes it holds, where the default for its kind is not enough.
    pub capacity: Option<u64>,
}

/// What the recording says happened, for the comparison with a replay.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    /// From the first event of a recorded task to the last task's exit, ns.
    pub run_ns: u64,
    /// `sched_waking` of recorded tasks.
    pub wakeups: u64,
    /// `sched_migrate_task` of recorded tasks.
    pub migrations: u64,
    /// Switches out with a sleeping state (nvcsw).
    pub voluntary: u64,
    /// Their total on-CPU time, ns.
    pub cpu_ns: u64,
    pub tasks: usize,
    pub forks: u64,
    /// Blocks by what they became: channel, futex, sleep (timer), sleep (I/O), …
    pub blocks: BTreeMap<&'static str, u64>,
    /// Pipes and sockets reconstructed, and their reads and writes.
    pub channels: usize,
    pub channel_ops: u64,
    /// Blocks that ended without a recorded wakeup (dropped).
    pub unwoken: u64,
    /// Tasks still blocked when the recording ended.
    pub blocked_at_end: u64,
    /// CPU time other tasks (not the idle task) used during the recorded run, ns: load the
    /// replay does not have.
    pub other_ns: u64,
}

#[derive(Debug)]
pub struct Converted {
    pub tasks: Vec<TaskOut>,
    pub chans: Vec<ChanOut>,
    pub futexes: Vec<String>,
    /// The pthread mutexes of the lock log, `m.<process>.<address>`.
    pub mutexes: Vec<String>,
    pub figures: Figures,
    /// Whether the recording had syscall events (else every dependency is a futex).
    pub syscalls: bool,
}

#[derive(Clone, Copy, Debug)]
struct Sys {
    class: Class,
    name: &'static str,
    args: [u64; 4],
    /// This syscall is a read of a channel: (channel, bytes, CPU time at its entry).
    read: Option<(usize, u64, u64)>,
    /// It is a write of a channel: the index of its `Send` step.
    send_step: Option<usize>,
    /// A `futex_wait` on the word of the mutex whose `Lock` step this is.
    lock_step: Option<usize>,
    /// A `futex_wake` on the word of the mutex whose `Unlock` step this is.
    unlock_step: Option<usize>,
}

#[derive(Clone, Copy, Debug)]
struct Blocked {
    ts: u64,
    cpu: u64,
    sys: Option<Sys>,
    state: char,
    /// The op that stands for this block, if one does: its wakeup then needs no op.
    by: Option<BlockOp>,
}

/// What stands for a block: a channel's `send`/`recv`, or a `lock` (a sleep on a mutex's word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockOp {
    Channel,
    Mutex,
}

impl BlockOp {
    /// Its name in the figures' block counts.
    fn name(self) -> &'static str {
        match self {
            BlockOp::Channel => "channel",
            BlockOp::Mutex => "mutex",
        }
    }
}

/// A wakeup: when, from which context, and the recorded task that did it (its pid, CPU time
/// then and syscall), if one did.
#[derive(Clone, Copy, Debug)]
struct Wake {
    ts: u64,
    ctx: Ctx,
    waker: Option<(u32, u64, Option<Sys>)>,
}

#[derive(Debug, Default)]
struct Task {
    /// A wakeup that came while it was still on its CPU: it ends the block it switches out to.
    early: Option<Wake>,
    cpu: u64,
    since: Option<u64>,
    sys: Option<Sys>,
    blocked: Option<Blocked>,
    exited: Option<(u64, u64)>,
    steps: Vec<Step>,
    prio: Option<i32>,
    last_ts: u64,
    /// Mutexes it holds (lock log), with their nesting depth.
    held: BTreeMap<usize, u32>,
    /// Its last `Lock` and `Unlock` steps and their words, for the futex calls they make.
    lock_at: Option<(usize, u64)>,
    unlock_at: Option<(usize, u64)>,
    /// In `pthread_cond_wait`: the mutex it takes back before returning, and its word.
    relock: Option<(usize, u64)>,
}

impl Task {
    fn cpu_at(&self, ts: u64) -> u64 {
        self.cpu + self.since.map_or(0, |s| ts.saturating_sub(s))
    }
}

/// The workload's pids: the roots and everything they fork in the recording.
pub fn select(rec: &Recording, roots: &Roots) -> HashSet<u32> {
    let mut set: HashSet<u32> = match roots {
        Roots::Pids(p) => p.iter().copied().collect(),
        Roots::Comms(c) => rec.comms.iter().filter(|(_, n)| c.iter().any(|x| x == *n)).map(|(&p, _)| p).collect(),
    };
    set.remove(&0);
    for e in &rec.events {
        if let Kind::Fork { parent, child } = e.kind {
            if set.contains(&parent) {
                set.insert(child);
            }
        }
    }
    set
}

/// The busiest comms of a recording (by switches in), for an error that asks which tasks to take.
pub fn busiest_comms(rec: &Recording, n: usize) -> Vec<(String, usize)> {
    let mut by: HashMap<&str, HashSet<u32>> = HashMap::new();
    for e in &rec.events {
        if let Kind::Switch { next, .. } = e.kind {
            if next != 0 {
                if let Some(c) = rec.comms.get(&next) {
                    by.entry(c).or_default().insert(next);
                }
            }
        }
    }
    let mut v: Vec<(String, usize)> = by.into_iter().map(|(c, p)| (c.to_string(), p.len())).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(n);
    v
}

/// Bytes a waker's syscall wrote (write, pwrite64, sendto: the third argument), else 64; at
/// most a pipe's capacity.
fn bytes_of(sys: Option<Sys>) -> u64 {
    match sys {
        Some(s) if matches!(s.name, "write" | "pwrite64" | "sendto") => s.args[2].clamp(1, 65536),
        Some(s) if s.class == Class::Wait => 1,
        _ => 64,
    }
}

/// A sleeping task's cause when nobody recorded woke it.
fn outside_cause(b: &Blocked, ctx: Ctx) -> &'static str {
    match b.sys.map(|s| s.class) {
        Some(Class::Sleep) => "sleep (timer)",
        Some(Class::Futex | Class::FutexWait | Class::Poll | Class::Signal) if ctx == Ctx::HardIrq => "sleep (timeout)",
        _ if b.state == 'D' => "sleep (I/O)",
        _ => "sleep (woken from outside)",
    }
}

/// The default capacity of a channel kind (crates/workloads/src/defaults.rs).
fn default_capacity(k: ChanKind) -> u64 {
    wakesim_workloads::defaults::default_capacity(k)
}

struct Conv<'a> {
    rec: &'a Recording,
    plan: &'a Plan,
    /// The workload's tasks: the figures count these only.
    workload: &'a HashSet<u32>,
    /// Events before this (the workload's first) only keep the other tasks' bookkeeping.
    t0: u64,
    tasks: HashMap<u32, Task>,
    order: Vec<u32>,
    chans: Vec<ChanOut>,
    chan_ix: HashMap<(u32, u32), usize>,
    futexes: Vec<String>,
    futex_ix: HashMap<(u32, u32, bool), usize>,
    mutexes: Vec<String>,
    mutex_ix: HashMap<(u32, u64), usize>,
    fig: Figures,
    t_start: Option<u64>,
    wakings: bool,
    /// Reads taken by the poll block before them.
    skip: HashSet<usize>,
    /// The line of the event being converted (for the debug output).
    line: u32,
    /// Per CPU: a task outside the workload running since.
    other_since: HashMap<u32, u64>,
    /// Stretches other tasks ran.
    other: Vec<(u64, u64)>,
}

impl<'a> Conv<'a> {
    fn task(&mut self, pid: u32, ts: u64) -> &mut Task {
        if !self.tasks.contains_key(&pid) {
            if self.workload.contains(&pid) {
                self.t_start.get_or_insert(ts);
            }
            self.order.push(pid);
        }
        let t = self.tasks.entry(pid).or_default();
        t.last_ts = t.last_ts.max(ts);
        t
    }

    /// The channel of the pair (`w` wakes `t`).
    fn chan(&mut self, w: u32, t: u32, kind: ChanKind) -> usize {
        let n = self.chans.len();
        let i = *self.chan_ix.entry((w, t)).or_insert(n);
        if i == n {
            self.chans.push(ChanOut { name: format!("c.{w}.{t}"), kind, capacity: None });
        }
        i
    }

    /// The futex of the pair (`w` wakes `t`), or with `spawn` the one `w` starts its child `t` with.
    fn futex(&mut self, w: u32, t: u32, spawn: bool) -> usize {
        let n = self.futexes.len();
        let i = *self.futex_ix.entry((w, t, spawn)).or_insert(n);
        if i == n {
            self.futexes.push(if spawn { format!("spawn.{t}") } else { format!("f.{w}.{t}") });
        }
        i
    }

    fn push(&mut self, pid: u32, step: Step) -> usize {
        let steps = &mut self.tasks.get_mut(&pid).expect("task").steps;
        if std::env::var_os("WAKESIM_RECORD_DEBUG").is_some() && steps.last().is_some_and(|l| l.cpu > step.cpu) {
            eprintln!("out of order at line {}: pid {pid} {:?} after {:?}", self.line, step, steps.last());
        }
        steps.push(step);
        steps.len() - 1
    }

    fn event(&mut self, i: usize, e: &Ev, set: &HashSet<u32>) {
        self.line = e.line;
        let sel = |p: u32| set.contains(&p);
        let counts = |p: u32| self.workload.contains(&p);
        if let Kind::Switch { next, .. } = e.kind {
            if let Some(s) = self.other_since.remove(&e.cpu) {
                self.other.push((s, e.ts));
            }
            if next != 0 && !counts(next) {
                self.other_since.insert(e.cpu, e.ts);
            }
        }
        if e.ts < self.t0 {
            return;
        }
        if sel(e.pid) && !matches!(e.kind, Kind::Switch { .. }) {
            // The task whose event this is runs (tracefs can miss a switch to a task the wakelist
            // just woke): a block it has not seen the end of is over.
            let counts = self.workload.contains(&e.pid);
            let t = self.task(e.pid, e.ts);
            if t.since.is_none() {
                t.since = Some(e.ts);
                if let Some(b) = t.blocked.take() {
                    match t.early.take() {
                        Some(w) => self.resolve(e.pid, b, w),
                        None => self.fig.unwoken += u64::from(counts),
                    }
                }
            }
        }
        match e.kind {
            Kind::Switch { prev, prev_state, next, next_prio, .. } => {
                if sel(prev) {
                    self.switch_out(prev, prev_state, e.ts);
                }
                if sel(next) {
                    let t = self.task(next, e.ts);
                    let unwoken = t.blocked.take().is_some();
                    t.since = Some(e.ts);
                    t.prio = Some(next_prio);
                    self.fig.unwoken += u64::from(unwoken && counts(next));
                }
            }
            Kind::Waking { pid } => self.waking(e, pid, set),
            Kind::Wakeup { pid } if !self.wakings => self.waking(e, pid, set),
            Kind::Fork { parent, child } if sel(child) => {
                self.fig.forks += u64::from(counts(child));
                let spawned = sel(parent);
                if spawned {
                    let p = self.task(parent, e.ts);
                    p.since.get_or_insert(e.ts);
                    let cpu = p.cpu_at(e.ts);
                    let f = self.futex(parent, child, true);
                    self.push(parent, Step { cpu, act: Act::Post { futex: f }, note: "" });
                }
                let fresh = !self.tasks.contains_key(&child);
                self.task(child, e.ts);
                if spawned && fresh {
                    let f = self.futex_ix[&(parent, child, true)];
                    self.push(child, Step { cpu: 0, act: Act::Wait { futex: f, spawn: true }, note: "fork" });
                }
            }
            Kind::Exit { pid } if sel(pid) => {
                let t = self.task(pid, e.ts);
                if t.exited.is_none() {
                    let cpu = t.cpu_at(e.ts);
                    t.exited = Some((e.ts, cpu));
                }
            }
            Kind::Migrate { pid } if counts(pid) => self.fig.migrations += 1,
            Kind::MutexLock { .. } | Kind::MutexUnlock { .. } | Kind::CondWait { .. } | Kind::CondWaitRet { .. } if sel(e.pid) => self.mutex_call(e),
            Kind::SysEnter { call, args } if sel(e.pid) && e.ctx != Ctx::HardIrq => {
                let (write, read) = (self.plan.writes.get(&i).copied(), self.plan.reads.get(&i).copied());
                let t = self.task(e.pid, e.ts);
                t.since.get_or_insert(e.ts);
                let cpu = t.cpu_at(e.ts);
                t.early = None;
                let mut s = Sys { class: call.class(), name: call.name(), args, read: None, send_step: None, lock_step: None, unlock_step: None };
                if s.class == Class::Futex && self.mutex_ix.contains_key(&(self.process(e.pid), args[0])) {
                    self.mutex_futex(e.pid, &mut s, cpu);
                }
                if let Some((o, bytes)) = write {
                    self.fig.channel_ops += u64::from(counts(e.pid));
                    s.send_step = Some(self.push(e.pid, Step { cpu, act: Act::Send { chan: o, bytes, blocks: false, wakes: false }, note: "" }));
                }
                if let Some((o, bytes)) = read.filter(|_| !self.skip.contains(&i)) {
                    s.read = Some((o, bytes, cpu));
                }
                self.tasks.get_mut(&e.pid).expect("task").sys = Some(s);
            }
            Kind::SysExit { .. } if sel(e.pid) && e.ctx != Ctx::HardIrq => {
                let t = self.task(e.pid, e.ts);
                if let Some((o, bytes, cpu)) = t.sys.take().and_then(|s| s.read) {
                    // A read that found its data: at its entry.
                    self.fig.channel_ops += u64::from(counts(e.pid));
                    self.push(e.pid, Step { cpu, act: Act::Recv { chan: o, bytes, blocks: false }, note: "" });
                }
            }
            _ => {}
        }
    }

    fn switch_out(&mut self, pid: u32, state: State, ts: u64) {
        let plan = self.plan;
        self.task(pid, ts);
        let t = self.tasks.get_mut(&pid).expect("task");
        if let Some(s) = t.since.take() {
            t.cpu += ts.saturating_sub(s);
        }
        if t.exited.is_some() {
            return;
        }
        let early = t.early.take();
        let c = match state {
            State::Blocked(c) => c,
            State::Dead => {
                t.exited = Some((ts, t.cpu));
                return;
            }
            State::Running => return,
        };
        let counts = self.workload.contains(&pid);
        self.fig.voluntary += u64::from(counts);
        let cpu = t.cpu;
        let mut b = Blocked { ts, cpu, sys: t.sys, state: c, by: None };
        let mut step = None;
        if let Some(s) = t.sys.as_mut() {
            if let Some((o, bytes, _)) = s.read.take() {
                // The read blocks: its recv is here.
                step = Some((Act::Recv { chan: o, bytes, blocks: true }, s.name));
            } else if let Some(k) = s.send_step {
                // The write blocks on a full buffer: its send already stands for it.
                if let Some(Step { act: Act::Send { blocks, .. }, .. }) = t.steps.get_mut(k) {
                    *blocks = true;
                }
                b.by = Some(BlockOp::Channel);
            } else if let Some(k) = s.lock_step {
                // Asleep on the mutex's word: its Lock stands for the block.
                if let Some(Step { act: Act::Lock { blocks, .. }, .. }) = t.steps.get_mut(k) {
                    *blocks = true;
                }
                b.by = Some(BlockOp::Mutex);
            } else if s.class == Class::Poll {
                if let Some(&r) = plan.poll_reads.get(&(pid, ts)) {
                    // Waiting for the data its next read takes.
                    let (o, bytes) = plan.reads[&r];
                    step = Some((Act::Recv { chan: o, bytes, blocks: true }, s.name));
                    self.skip.insert(r);
                }
            }
        }
        if let Some((act, note)) = step {
            b.by = Some(BlockOp::Channel);
            self.fig.channel_ops += u64::from(counts);
            self.push(pid, Step { cpu, act, note });
        }
        match early {
            // Already woken: the block ends at once (its waker's op is where it woke it).
            Some(w) => self.resolve(pid, b, w),
            None => self.tasks.get_mut(&pid).expect("task").blocked = Some(b),
        }
    }

    fn waking(&mut self, e: &Ev, wakee: u32, set: &HashSet<u32>) {
        if !set.contains(&wakee) {
            return;
        }
        self.fig.wakeups += u64::from(self.workload.contains(&wakee));
        let h = e.pid;
        // A channel write or a mutex unlock's futex_wake that wakes anyone pays for the wakeup.
        let op = self.tasks.get(&h).and_then(|w| w.sys).and_then(|s| s.send_step.or(s.unlock_step));
        if let Some(k) = op.filter(|_| set.contains(&h) && e.ctx != Ctx::HardIrq) {
            if let Some(Step { act: Act::Send { wakes, .. } | Act::Unlock { wakes, .. }, .. }) = self.tasks.get_mut(&h).and_then(|w| w.steps.get_mut(k)) {
                *wakes = true;
            }
        }
        // Who woke it: another recorded task doing it (in process context, or in the soft
        // interrupt of its loopback send), else nobody recorded.
        let waker_sys = self.tasks.get(&h).and_then(|w| w.sys);
        let in_send = waker_sys.is_some_and(|s| matches!(s.class, Class::Write | Class::Send));
        let by_task = (set.contains(&h) && h != wakee && h != 0)
            && match e.ctx {
                Ctx::Task | Ctx::Unknown => true,
                Ctx::SoftIrq => in_send,
                Ctx::HardIrq => false,
            };
        let waker = if by_task {
            let w = self.task(h, e.ts);
            w.since.get_or_insert(e.ts);
            Some((h, w.cpu_at(e.ts), waker_sys))
        } else {
            None
        };
        let wake = Wake { ts: e.ts, ctx: e.ctx, waker };
        let start = self.t_start.unwrap_or(e.ts);
        let fresh = !self.tasks.contains_key(&wakee);
        let t = self.task(wakee, e.ts);
        if fresh {
            // First seen being woken: it was blocked since the start.
            t.blocked = Some(Blocked { ts: start, cpu: 0, sys: None, state: 'S', by: None });
        }
        match t.blocked.take() {
            Some(b) => self.resolve(wakee, b, wake),
            // Woken while still on its CPU, before it switched out: if it now does switch out
            // asleep (a wakeup queued while it was descheduling), this wakeup ends that block.
            None => t.early = Some(wake),
        }
    }

    /// A block of `wakee` ended by `w`: the ops of both sides.
    fn resolve(&mut self, wakee: u32, b: Blocked, w: Wake) {
        let counts = u64::from(self.workload.contains(&wakee));
        if let Some(op) = b.by {
            if counts > 0 {
                *self.fig.blocks.entry(op.name()).or_default() += counts;
            }
            return;
        }
        let tclass = b.sys.map(|s| s.class);
        let note = b.sys.map_or(if b.state == 'D' { "D" } else { "" }, |s| s.name);
        // A sleep inside a critical section (glibc's condvar-internal lock, taken while the
        // mutex is held) stays a timed sleep: as a pair it could deadlock a replay whose tasks
        // take the mutex in another order than the recording did.
        let holds = self.tasks.get(&wakee).is_some_and(|t| !t.held.is_empty());
        let w = if holds && w.waker.is_some() { Wake { waker: None, ctx: Ctx::Task, ..w } } else { w };
        let Some((h, wcpu, waker_sys)) = w.waker else {
            let cause = if holds { "sleep (in a critical section)" } else { outside_cause(&b, w.ctx) };
            if counts > 0 {
                *self.fig.blocks.entry(cause).or_default() += counts;
            }
            let ns = w.ts.saturating_sub(b.ts).max(1);
            self.push(wakee, Step { cpu: b.cpu, act: Act::Sleep { ns }, note: if note.is_empty() { cause } else { note } });
            return;
        };
        let wclass = waker_sys.map(|s| s.class);
        let sync = matches!(tclass, Some(Class::Read | Class::Recv | Class::Poll | Class::Accept | Class::Connect | Class::Wait))
            || (matches!(tclass, None | Some(Class::Other)) && matches!(wclass, Some(Class::Write | Class::Send)));
        if sync {
            let kind = if w.ctx == Ctx::SoftIrq {
                ChanKind::TcpLoopback
            } else if matches!(tclass, Some(Class::Recv | Class::Accept | Class::Connect)) || wclass == Some(Class::Send) {
                ChanKind::UnixStream
            } else {
                ChanKind::Pipe
            };
            let bytes = if tclass == Some(Class::Wait) { 1 } else { bytes_of(waker_sys) };
            let c = self.chan(h, wakee, kind);
            if counts > 0 {
                *self.fig.blocks.entry("channel").or_default() += counts;
            }
            self.push(h, Step { cpu: wcpu, act: Act::Send { chan: c, bytes, blocks: false, wakes: true }, note: "" });
            self.push(wakee, Step { cpu: b.cpu, act: Act::Recv { chan: c, bytes, blocks: true }, note });
        } else {
            let f = self.futex(h, wakee, false);
            if counts > 0 {
                *self.fig.blocks.entry("futex").or_default() += counts;
            }
            self.push(h, Step { cpu: wcpu, act: Act::Post { futex: f }, note: "" });
            self.push(wakee, Step { cpu: b.cpu, act: Act::Wait { futex: f, spawn: false }, note });
        }
    }
}

/// The first time the recording touches a task of `sel`.
fn first_touch(rec: &Recording, sel: &HashSet<u32>) -> u64 {
    let touches = |e: &Ev| {
        sel.contains(&e.pid)
            || match e.kind {
                Kind::Switch { prev, next, .. } => sel.contains(&prev) || sel.contains(&next),
                Kind::Waking { pid } | Kind::Wakeup { pid } | Kind::WakeupNew { pid } | Kind::Exit { pid } | Kind::Migrate { pid } => sel.contains(&pid),
                Kind::Fork { parent, child } => sel.contains(&parent) || sel.contains(&child),
                _ => false,
            }
    };
    rec.events.iter().find(|e| touches(e)).map_or(0, |e| e.ts)
}

/// Converts the recording's tasks in `sel` (see [`select`]); with `others`, every other task
/// that ran from the workload's start on as well, as background (the figures count `sel` only).
pub fn convert(rec: &Recording, sel: HashSet<u32>, others: bool) -> Converted {
    let wakings = rec.events.iter().any(|e| matches!(e.kind, Kind::Waking { .. }));
    let syscalls = rec.events.iter().any(|e| matches!(e.kind, Kind::SysEnter { .. }));
    let t0 = if others { first_touch(rec, &sel) } else { 0 };
    let workload = sel.clone();
    let mut sel = sel;
    if others {
        for e in rec.events.iter().filter(|e| e.ts >= t0) {
            if let Kind::Switch { prev, next, .. } = e.kind {
                for p in [prev, next] {
                    if p != 0 && p != super::events::UNKNOWN_PID {
                        sel.insert(p);
                    }
                }
            }
        }
    }
    let plan = chans::plan(rec, &sel);
    let chans = plan
        .objs
        .iter()
        .map(|o| {
            let def = default_capacity(o.kind);
            // Room for what stays unread at the end; loopback TCP autotunes beyond its default.
            let need = if o.kind == ChanKind::TcpLoopback { (4 * o.max_buffered).max(o.left + 65536) } else { o.left + 65536 };
            let cap = (need > def && (o.left > def / 2 || o.kind == ChanKind::TcpLoopback)).then_some(need);
            // A unix stream socket holds sk_sndbuf's worth of skbs, each charged its truesize:
            // 278 writes of 100 B, not 212992 / 100 (crates/workloads/src/defaults.rs).
            let cap = match (o.kind, cap) {
                (ChanKind::UnixStream, None) if o.mean_write > 0 => {
                    // At least what the recording held at once, and the largest write (written
                    // in chunks of at most MAX_OP_BYTES).
                    let largest = o.max_write.min(super::emit::MAX_OP_BYTES);
                    Some(wakesim_workloads::defaults::unix_stream_capacity(o.mean_write).max(o.max_buffered).max(o.left + largest).max(largest))
                }
                _ => cap,
            };
            ChanOut { name: o.name.clone(), kind: o.kind, capacity: cap }
        })
        .collect();
    let mut c = Conv {
        rec,
        plan: &plan,
        workload: &workload,
        t0,
        tasks: HashMap::new(),
        order: Vec::new(),
        chans,
        chan_ix: HashMap::new(),
        futexes: Vec::new(),
        futex_ix: HashMap::new(),
        mutexes: Vec::new(),
        mutex_ix: HashMap::new(),
        fig: Figures { channels: plan.objs.len(), ..Figures::default() },
        t_start: None,
        wakings,
        skip: HashSet::new(),
        line: 0,
        other_since: HashMap::new(),
        other: Vec::new(),
    };
    // The lock log's mutexes first: a futex call on one's word is the mutex's, whenever it comes.
    for e in &rec.events {
        if let (Kind::MutexLock { m } | Kind::MutexUnlock { m } | Kind::CondWait { m } | Kind::CondWaitRet { m }, true) = (&e.kind, sel.contains(&e.pid)) {
            c.mutex(e.pid, *m);
        }
    }
    for (i, e) in rec.events.iter().enumerate() {
        c.event(i, e, &sel);
    }
    let last = rec.events.last().map_or(0, |e| e.ts);
    let start = c.t_start.unwrap_or(0);
    let mut end = start;
    let mut tasks = Vec::new();
    for pid in std::mem::take(&mut c.order) {
        let mut t = c.tasks.remove(&pid).expect("task");
        let counts = workload.contains(&pid);
        let (end_ts, end_cpu) = match (t.exited, t.blocked) {
            (Some(x), _) => x,
            (None, Some(b)) => {
                c.fig.blocked_at_end += u64::from(counts);
                // A channel op that stood for the last block waits for what never came.
                if b.by == Some(BlockOp::Channel) {
                    if let Some(k) = t.steps.iter().rposition(|s| matches!(s.act, Act::Recv { blocks: true, .. }) && s.cpu == b.cpu) {
                        t.steps.remove(k);
                    }
                }
                (b.ts, b.cpu)
            }
            (None, None) => (last, t.cpu_at(last)),
        };
        if counts {
            end = end.max(end_ts);
        }
        let end_cpu = end_cpu.max(t.steps.last().map_or(0, |s| s.cpu));
        if counts {
            c.fig.cpu_ns += end_cpu;
            c.fig.tasks += 1;
        }
        let nice = t.prio.filter(|p| (100..140).contains(p)).map(|p| p - 120);
        t.steps.sort_by_key(|s| s.cpu);
        // What it still holds at its end is released there: a replay must not leave the
        // others waiting for a task that is gone.
        for (&mx, _) in &t.held {
            t.steps.push(Step { cpu: end_cpu, act: Act::Unlock { mutex: mx, syscall: false, wakes: false }, note: "held at the end" });
        }
        tasks.push(TaskOut {
            pid,
            comm: c.rec.comms.get(&pid).cloned().unwrap_or_else(|| "task".into()),
            tgid: c.rec.tgid.get(&pid).copied(),
            nice,
            steps: t.steps,
            end_cpu,
            background: !counts,
        });
    }
    c.fig.run_ns = end - start;
    c.fig.other_ns = c.other.iter().map(|&(a, b)| b.min(end).saturating_sub(a.max(start))).sum();
    Converted { tasks, chans: c.chans, futexes: c.futexes, mutexes: c.mutexes, figures: c.fig, syscalls }
}

/// Whether the programs can all finish, whatever the timing: posts and sends run ahead, waits
/// and recvs wait for them (channels unbounded). A conversion that cannot (a bug, or a recording
/// whose events contradict each other) names the first task that would wait forever.
pub fn stuck(c: &Converted) -> Option<String> {
    let mut pc = vec![0usize; c.tasks.len()];
    let mut sem = vec![0u64; c.futexes.len()];
    let mut buf = vec![0u64; c.chans.len()];
    let mut owner: Vec<Option<usize>> = vec![None; c.mutexes.len()];
    loop {
        let mut moved = false;
        for (k, t) in c.tasks.iter().enumerate() {
            while let Some(s) = t.steps.get(pc[k]) {
                match s.act {
                    Act::Post { futex } => sem[futex] += 1,
                    Act::Wait { futex, .. } if sem[futex] == 0 => break,
                    Act::Wait { futex, .. } => sem[futex] -= 1,
                    Act::Send { chan, bytes, .. } => buf[chan] += bytes,
                    Act::Recv { chan, bytes, .. } if buf[chan] < bytes => break,
                    Act::Recv { chan, bytes, .. } => buf[chan] -= bytes,
                    Act::Sleep { .. } => {}
                    Act::Lock { mutex, .. } if owner[mutex].is_some_and(|o| o != k) => break,
                    Act::Lock { mutex, .. } => owner[mutex] = Some(k),
                    Act::Unlock { mutex, .. } => owner[mutex] = None,
                }
                pc[k] += 1;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    let (k, t) = c.tasks.iter().enumerate().find(|(k, t)| pc[*k] < t.steps.len())?;
    let what = match t.steps[pc[k]].act {
        Act::Wait { futex, .. } => format!("wait {}", c.futexes[futex]),
        Act::Recv { chan, bytes, .. } => format!("recv {} {bytes}", c.chans[chan].name),
        Act::Lock { mutex, .. } => format!("lock {}", c.mutexes[mutex]),
        _ => "an op".into(),
    };
    Some(format!("task {}-{} would wait forever at its op {} ({what})", t.comm, t.pid, pc[k] + 1))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::record::events::parse;

    /// A tracefs line at `us` µs after 100 s.
    pub(crate) fn l(task: &str, cpu: u32, flags: &str, us: u64, text: &str) -> String {
        format!("{task:>16} [{cpu:03}] {flags} {}.{:06}: {text}\n", 100 + us / 1_000_000, us % 1_000_000)
    }

    pub(crate) fn sw(prev: (&str, u32), state: &str, next: (&str, u32)) -> String {
        format!(
            "sched_switch: prev_comm={} prev_pid={} prev_prio=120 prev_state={state} ==> next_comm={} next_pid={} next_prio=120",
            prev.0, prev.1, next.0, next.1
        )
    }

    /// app-100 forks app-101; 101 blocks in read until 100 writes 64 bytes (then 100 writes 32
    /// more, which 101 reads later without blocking), then in a futex wait until 100's
    /// FUTEX_WAKE, then sleeps 1 ms (woken from a hard interrupt) and exits, waking 100 out of
    /// wait4. An unrelated task runs 4 µs on CPU 1; a kworker wakes nobody of ours.
    pub(crate) fn synthetic_trace() -> String {
        let (idle0, idle1, app, kid) = (("swapper/0", 0), ("swapper/1", 0), ("app", 100), ("app", 101));
        let mut s = String::from("# tracer: nop\n#\n# entries-in-buffer/entries-written: 30/30   #P:2\n");
        s += &l("<idle>-0", 0, "d..2.", 0, &sw(idle0, "R", app));
        s += &l("app-100", 0, ".....", 10, "sched_process_fork: comm=app pid=100 child_comm=app child_pid=101");
        s += &l("app-100", 0, "d..2.", 11, "sched_wakeup_new: comm=app pid=101 prio=120 target_cpu=001");
        s += &l("<idle>-0", 1, "d..2.", 20, &sw(idle1, "R", kid));
        s += &l("app-101", 1, ".....", 24, "sys_read(fd: 3, buf: 0x7ffd, count: 0x1000)");
        s += &l("app-101", 1, "d..2.", 25, &sw(kid, "S", idle1));
        s += &l("<idle>-0", 1, "d..2.", 26, &sw(idle1, "R", ("other", 200)));
        s += &l("other-200", 1, "d..2.", 30, &sw(("other", 200), "S", idle1));
        s += &l("kworker/0:1-9", 0, "d..3.", 35, "sched_waking: comm=rcu_preempt pid=15 prio=120 target_cpu=000");
        s += &l("app-100", 0, ".....", 40, "sys_write(fd: 4, buf: 0x7ffd, count: 0x40)");
        s += &l("app-100", 0, "d..3.", 41, "sched_waking: comm=app pid=101 prio=120 target_cpu=001");
        s += &l("app-100", 0, ".....", 42, "sys_write -> 0x40");
        s += &l("<idle>-0", 1, "d..2.", 45, &sw(idle1, "R", kid));
        s += &l("app-101", 1, ".....", 46, "sys_read -> 0x40");
        s += &l("app-100", 0, ".....", 52, "sys_write(fd: 4, buf: 0x7ffd, count: 0x20)");
        s += &l("app-100", 0, ".....", 53, "sys_write -> 0x20");
        s += &l("app-101", 1, ".....", 49, "sys_futex(uaddr: 0x5560, op: 0x80, val: 0, utime: 0, uaddr2: 0, val3: 0)");
        s += &l("app-101", 1, "d..2.", 50, &sw(kid, "S", idle1));
        s += &l("app-100", 0, ".....", 60, "sys_futex(uaddr: 0x5560, op: 0x81, val: 1, utime: 0, uaddr2: 0, val3: 0)");
        s += &l("app-100", 0, "d..3.", 61, "sched_waking: comm=app pid=101 prio=120 target_cpu=001");
        s += &l("<idle>-0", 1, "d..2.", 62, &sw(idle1, "R", kid));
        s += &l("app-100", 0, ".....", 63, "sys_futex -> 0x1");
        s += &l("app-100", 0, ".....", 64, "sys_wait4(upid: 0xffffffffffffffff, stat_addr: 0x7ffd, options: 0, ru: 0)");
        s += &l("app-100", 0, "d..2.", 66, &sw(app, "S", idle0));
        s += &l("app-101", 1, ".....", 67, "sys_read(fd: 3, buf: 0x7ffd, count: 0x1000)");
        s += &l("app-101", 1, ".....", 68, "sys_read -> 0x20");
        s += &l("app-101", 1, ".....", 70, "sys_clock_nanosleep(which_clock: 0, flags: 0, rqtp: 0x7ffd, rmtp: 0)");
        s += &l("app-101", 1, "d..2.", 71, &sw(kid, "S", idle1));
        s += &l("<idle>-0", 1, "d.h3.", 1071, "sched_waking: comm=app pid=101 prio=120 target_cpu=001");
        s += &l("<idle>-0", 1, "d..2.", 1072, &sw(idle1, "R", kid));
        s += &l("app-101", 1, ".....", 1080, "sched_process_exit: comm=app pid=101 prio=120 group_dead=false");
        s += &l("app-101", 1, "d..3.", 1081, "sched_waking: comm=app pid=100 prio=120 target_cpu=000");
        s += &l("app-101", 1, "d..2.", 1082, &sw(kid, "X", idle1));
        s += &l("<idle>-0", 0, "d..2.", 1085, &sw(idle0, "R", app));
        s += &l("app-100", 0, ".....", 1095, "sched_process_exit: comm=app pid=100 prio=120 group_dead=true");
        s += &l("app-100", 0, "d..2.", 1096, &sw(app, "X", idle0));
        s
    }

    fn steps(t: &TaskOut) -> Vec<(u64, Act, &'static str)> {
        t.steps.iter().map(|s| (s.cpu, s.act.clone(), s.note)).collect()
    }

    #[test]
    fn a_synthetic_trace_keeps_its_pipe_its_chain_its_sleep_its_fork_and_its_exit_wakeup() {
        let rec = parse(&synthetic_trace(), "t").unwrap();
        let c = convert(&rec, select(&rec, &Roots::Pids(vec![100])), false);
        let names: Vec<&str> = c.chans.iter().map(|c| c.name.as_str()).collect();
        // The pipe 100 writes on fd 4 and 101 reads on fd 3, found by the wakeup; wait4's pair.
        assert_eq!(names, ["ch.101.3", "c.101.100"]);
        assert_eq!((c.chans[0].kind, c.chans[0].capacity), (ChanKind::Pipe, None));
        assert_eq!(c.futexes, ["spawn.101", "f.100.101"]);
        let (p, k) = (&c.tasks[0], &c.tasks[1]);
        assert_eq!((p.pid, k.pid, p.comm.as_str()), (100, 101, "app"));
        assert_eq!(
            steps(p),
            [
                (10_000, Act::Post { futex: 0 }, ""),
                // Every write of the pipe, at its entry; the first woke the reader.
                (40_000, Act::Send { chan: 0, bytes: 64, blocks: false, wakes: true }, ""),
                (52_000, Act::Send { chan: 0, bytes: 32, blocks: false, wakes: false }, ""),
                (61_000, Act::Post { futex: 1 }, ""),
                (66_000, Act::Recv { chan: 1, bytes: 1, blocks: true }, "wait4"),
            ]
        );
        assert_eq!(p.end_cpu, 76_000, "66 µs, then 10 µs until its exit");
        assert_eq!(
            steps(k),
            [
                (0, Act::Wait { futex: 0, spawn: true }, "fork"),
                // The read that blocked is the recv at the block; the later one found its data.
                (5_000, Act::Recv { chan: 0, bytes: 64, blocks: true }, "read"),
                (10_000, Act::Wait { futex: 1, spawn: false }, "futex"),
                (15_000, Act::Recv { chan: 0, bytes: 32, blocks: false }, ""),
                (19_000, Act::Sleep { ns: 1_000_000 }, "clock_nanosleep"),
                // The exit's wakeup of the parent comes after the exit event: before the end.
                (28_000, Act::Send { chan: 1, bytes: 1, blocks: false, wakes: true }, ""),
            ]
        );
        let f = &c.figures;
        assert_eq!((f.run_ns, f.wakeups, f.voluntary, f.cpu_ns, f.tasks, f.forks, f.other_ns), (1_095_000, 4, 4, 104_000, 2, 1, 4_000));
        assert_eq!((f.channels, f.channel_ops), (1, 4));
        let blocks: Vec<(&str, u64)> = f.blocks.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(blocks, [("channel", 2), ("futex", 1), ("sleep (timer)", 1)]);
        assert!(c.syscalls);
    }

    #[test]
    fn a_read_and_write_pair_with_an_af_unix_sock_event_is_a_unix_socket_of_skb_capacity() {
        // The same trace, with the sock event the kernel emits inside a write on a unix socket.
        let exit = l("app-100", 0, ".....", 42, "sys_write -> 0x40");
        let sock = l("app-100", 0, ".....", 42, "sock_send_length: sk address = 00000000deadbeef, family = 0x1 protocol = 0x0, length = 64, error = 0, flags = 0x0");
        let t = synthetic_trace().replace(&exit, &(sock + &exit));
        assert!(t.contains("sock_send_length"));
        let rec = parse(&t, "t").unwrap();
        let c = convert(&rec, select(&rec, &Roots::Pids(vec![100])), false);
        assert_eq!(c.chans[0].name, "ch.101.3");
        // Two writes of 64 and 32 B: a mean of 48 B, whose skb charges 256 + 512 B of the
        // socket's 212992: 278 writes' worth, 13,344 B, not 212,992.
        let expect = wakesim_workloads::defaults::unix_stream_capacity(48);
        assert_eq!((c.chans[0].kind, c.chans[0].capacity), (ChanKind::UnixStream, Some(expect)));
        assert_eq!(expect, 278 * 48);
    }

    #[test]
    fn without_syscall_exits_the_pipe_is_a_pair_of_the_blocked_read() {
        let text: String = synthetic_trace().lines().filter(|l| !l.contains(" -> ")).map(|l| format!("{l}\n")).collect();
        let rec = parse(&text, "t").unwrap();
        let c = convert(&rec, select(&rec, &Roots::Pids(vec![100])), false);
        let names: Vec<&str> = c.chans.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["c.100.101", "c.101.100"]);
        assert_eq!(steps(&c.tasks[1])[1], (5_000, Act::Recv { chan: 0, bytes: 64, blocks: true }, "read"));
        assert_eq!(steps(&c.tasks[0])[1], (41_000, Act::Send { chan: 0, bytes: 64, blocks: false, wakes: true }, ""));
        assert_eq!(c.figures.channels, 0);
    }

    #[test]
    fn siblings_share_their_parents_descriptors_until_it_closes_them() {
        // p-10 forks readers r-11 and the writers w-12 and w-13, closes fd 5, forks w-14. w-12's
        // write on fd 5 wakes r-11 reading fd 3; w-13 writes fd 5 without waking anyone (the same
        // pipe, inherited); w-14's fd 5 is another file (written after the close). r-11 reads
        // all of w-12's and w-13's bytes.
        let mut s = String::new();
        let fork = |c: u32| format!("sched_process_fork: comm=p pid=10 child_comm=x child_pid={c}");
        s += &l("p-10", 0, ".....", 1, &fork(11));
        s += &l("p-10", 0, ".....", 2, &fork(12));
        s += &l("p-10", 0, ".....", 3, &fork(13));
        s += &l("p-10", 0, ".....", 4, "sys_close(fd: 5)");
        s += &l("p-10", 0, ".....", 5, &fork(14));
        s += &l("<idle>-0", 1, "d..2.", 6, &sw(("swapper/1", 0), "R", ("r", 11)));
        s += &l("r-11", 1, ".....", 7, "sys_read(fd: 3, buf: 0x1, count: 0x100)");
        s += &l("r-11", 1, "d..2.", 8, &sw(("r", 11), "S", ("w", 12)));
        s += &l("w-12", 1, ".....", 9, "sys_write(fd: 5, buf: 0x1, count: 0x10)");
        s += &l("w-12", 1, "d..3.", 10, "sched_waking: comm=r pid=11 prio=120 target_cpu=001");
        s += &l("w-12", 1, ".....", 11, "sys_write -> 0x10");
        s += &l("w-12", 1, "d..2.", 12, &sw(("w", 12), "X", ("w", 13)));
        s += &l("w-13", 1, ".....", 13, "sys_write(fd: 5, buf: 0x1, count: 0x20)");
        s += &l("w-13", 1, ".....", 14, "sys_write -> 0x20");
        s += &l("w-13", 1, "d..2.", 15, &sw(("w", 13), "X", ("w", 14)));
        s += &l("w-14", 1, ".....", 16, "sys_write(fd: 5, buf: 0x1, count: 0x40)");
        s += &l("w-14", 1, ".....", 17, "sys_write -> 0x40");
        s += &l("w-14", 1, "d..2.", 18, &sw(("w", 14), "X", ("r", 11)));
        s += &l("r-11", 1, ".....", 19, "sys_read -> 0x10");
        s += &l("r-11", 1, ".....", 20, "sys_read(fd: 3, buf: 0x1, count: 0x100)");
        s += &l("r-11", 1, ".....", 21, "sys_read -> 0x20");
        let rec = parse(&s, "t").unwrap();
        let sel = select(&rec, &Roots::Pids(vec![10]));
        let plan = chans::plan(&rec, &sel);
        assert_eq!(plan.objs.len(), 1);
        assert_eq!((plan.objs[0].name.as_str(), plan.objs[0].left), ("ch.11.3", 0));
        let mut w: Vec<u64> = plan.writes.values().map(|&(_, b)| b).collect();
        w.sort_unstable();
        assert_eq!(w, [0x10, 0x20], "w-14's write after the close is not the pipe's");
        assert_eq!(plan.reads.len(), 2);
        // Had r-11 read more than the mapped writes gave it, the pipe would be left to the pairs.
        let more = s.replace("sys_read -> 0x20", "sys_read -> 0x21");
        let rec = parse(&more, "t").unwrap();
        assert!(chans::plan(&rec, &sel).objs.is_empty());
    }

    #[test]
    fn a_wakeup_before_the_switch_out_ends_that_block_and_a_missed_switch_in_is_inferred() {
        // 101 is woken by 100 while still descheduling (the wakelist race: the waking is traced
        // before its switch out), and tracefs misses 101's switch back in: its next event shows
        // it running. Both sides keep the futex pair, in time order, and nothing deadlocks.
        let (idle1, a, b) = (("swapper/1", 0), ("app", 100), ("app", 101));
        let mut s = String::new();
        s += &l("<idle>-0", 0, "d..2.", 0, &sw(("swapper/0", 0), "R", a));
        s += &l("<idle>-0", 1, "d..2.", 0, &sw(idle1, "R", b));
        s += &l("app-101", 1, ".....", 10, "sys_futex(uaddr: 0x5560, op: 0x80, val: 0, utime: 0, uaddr2: 0, val3: 0)");
        s += &l("app-100", 0, ".....", 11, "sys_futex(uaddr: 0x5560, op: 0x81, val: 1, utime: 0, uaddr2: 0, val3: 0)");
        s += &l("app-100", 0, "d..2.", 12, "sched_waking: comm=app pid=101 prio=120 target_cpu=001");
        s += &l("app-101", 1, "d..2.", 12, &sw(b, "S", idle1));
        s += &l("app-100", 0, ".....", 13, "sys_futex -> 0x1");
        s += &l("app-101", 1, ".....", 20, "sys_futex -> 0x0");
        s += &l("app-101", 1, ".....", 21, "sys_futex(uaddr: 0x5570, op: 0x81, val: 1, utime: 0, uaddr2: 0, val3: 0)");
        s += &l("app-101", 1, "d..2.", 30, &sw(b, "X", idle1));
        s += &l("app-100", 0, "d..2.", 40, &sw(a, "X", ("swapper/0", 0)));
        let rec = parse(&s, "t").unwrap();
        let c = convert(&rec, select(&rec, &Roots::Pids(vec![100, 101])), false);
        let by = |pid| c.tasks.iter().find(|t| t.pid == pid).unwrap();
        assert_eq!(steps(by(100)), [(12_000, Act::Post { futex: 0 }, "")]);
        assert_eq!(steps(by(101)), [(12_000, Act::Wait { futex: 0, spawn: false }, "futex")]);
        assert_eq!(by(101).end_cpu, 22_000, "12 µs before the block, 10 after the missed switch in");
        assert_eq!((c.figures.unwoken, c.figures.wakeups, c.figures.voluntary), (0, 1, 1));
        assert_eq!(stuck(&c), None);
    }

    #[test]
    fn programs_that_wait_on_each_other_are_reported_as_stuck() {
        let rec = parse(&synthetic_trace(), "t").unwrap();
        let mut c = convert(&rec, select(&rec, &Roots::Pids(vec![100])), false);
        assert_eq!(stuck(&c), None);
        // The parent's futex post moved after its wait4, which needs the child's exit: a cycle.
        let p = &mut c.tasks[0].steps;
        let post = p.remove(3);
        p.push(post);
        let why = stuck(&c).unwrap();
        assert_eq!(why, "task app-100 would wait forever at its op 4 (recv c.101.100 1)");
    }

    #[test]
    fn only_the_root_and_its_descendants_are_taken() {
        let rec = parse(&synthetic_trace(), "t").unwrap();
        assert_eq!(select(&rec, &Roots::Pids(vec![101])), HashSet::from([101]));
        assert_eq!(select(&rec, &Roots::Comms(vec!["app".into()])), HashSet::from([100, 101]));
        assert!(select(&rec, &Roots::Comms(vec!["nosuch".into()])).is_empty());
        // Converting only the child: the parent is outside, so its wakeups become sleeps.
        let c = convert(&rec, select(&rec, &Roots::Pids(vec![101])), false);
        assert_eq!(c.tasks.len(), 1);
        assert!(c.tasks[0].steps.iter().all(|s| matches!(s.act, Act::Sleep { .. })), "{:?}", c.tasks[0].steps);
        assert_eq!(busiest_comms(&rec, 2), [("app".to_string(), 2), ("other".to_string(), 1)]);
    }

    #[test]
    fn perf_script_without_syscalls_gives_futex_pairs_and_ends_at_the_dead_switch() {
        let pl = |task: &str, cpu: u32, us: u64, text: &str| format!("{task:>16} [{cpu:03}] {}.{:09}: sched:{text}\n", 100, us * 1000);
        let (idle0, idle1, a, b) = (("swapper/0", 0), ("swapper/1", 0), ("app", 100), ("app", 101));
        let text = [
            pl("swapper     0", 0, 0, &sw(idle0, "R", a)),
            pl("swapper     0", 1, 0, &sw(idle1, "R", b)),
            pl("app   101", 1, 5, &sw(b, "S", idle1)),
            pl("app   100", 0, 10, "sched_waking: comm=app pid=101 prio=120 target_cpu=001"),
            pl("swapper     0", 1, 12, &sw(idle1, "R", b)),
            pl("app   100", 0, 15, &sw(a, "S", idle0)),
            pl("app   101", 1, 20, "sched_waking: comm=app pid=100 prio=120 target_cpu=000"),
            pl("swapper     0", 0, 21, &sw(idle0, "R", a)),
            pl("app   101", 1, 30, &sw(b, "X", idle1)),
            pl("app   100", 0, 40, &sw(a, "X", idle0)),
        ]
        .concat();
        let rec = parse(&text, "p").unwrap();
        let c = convert(&rec, select(&rec, &Roots::Comms(vec!["app".into()])), false);
        assert!(!c.syscalls);
        assert_eq!(c.futexes, ["f.100.101", "f.101.100"]);
        let by = |pid| c.tasks.iter().find(|t| t.pid == pid).unwrap();
        assert_eq!(steps(by(100)), [(10_000, Act::Post { futex: 0 }, ""), (15_000, Act::Wait { futex: 1, spawn: false }, "")]);
        assert_eq!(steps(by(101)), [(5_000, Act::Wait { futex: 0, spawn: false }, ""), (13_000, Act::Post { futex: 1 }, "")]);
        assert_eq!((by(100).end_cpu, by(101).end_cpu), (34_000, 23_000));
        assert_eq!((c.figures.run_ns, c.figures.wakeups, c.figures.voluntary), (40_000, 2, 2));
    }
}
