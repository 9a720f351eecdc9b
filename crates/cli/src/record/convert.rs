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

mod handlers;
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
pub(crate) mod tests;
