//! From a recording's events to each task's steps: what it did at which point of its own CPU
//! time, with the dependency structure kept.
//!
//! * A task's **CPU time** is the sum of its running stretches (switch in → switch out).
//! * A **block** is a switch out with a sleeping state (S, D, …). The first `sched_waking` of
//!   the task after it decides what the block becomes:
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
    Send { chan: usize, bytes: u64 },
    Recv { chan: usize, bytes: u64 },
    /// Blocked this long, woken from outside the recorded tasks.
    Sleep { ns: u64 },
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
    /// Channel names and kinds.
    pub chans: Vec<(String, ChanKind)>,
    pub futexes: Vec<String>,
    pub figures: Figures,
    /// Whether the recording had syscall events (else every dependency is a futex).
    pub syscalls: bool,
}

#[derive(Clone, Copy, Debug)]
struct Sys {
    class: Class,
    name: &'static str,
    args: [u64; 4],
}

#[derive(Clone, Copy, Debug)]
struct Blocked {
    ts: u64,
    cpu: u64,
    sys: Option<Sys>,
    state: char,
}

#[derive(Debug, Default)]
struct Task {
    cpu: u64,
    since: Option<u64>,
    sys: Option<Sys>,
    blocked: Option<Blocked>,
    exited: Option<(u64, u64)>,
    steps: Vec<Step>,
    prio: Option<i32>,
    last_ts: u64,
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
        Some(Class::Read | Class::Recv | Class::Sync | Class::Aio | Class::Accept | Class::Connect) | None if b.state == 'D' => "sleep (I/O)",
        _ if b.state == 'D' => "sleep (I/O)",
        _ => "sleep (woken from outside)",
    }
}

struct Conv<'a> {
    rec: &'a Recording,
    tasks: HashMap<u32, Task>,
    order: Vec<u32>,
    chans: Vec<(String, ChanKind)>,
    chan_ix: HashMap<(u32, u32), usize>,
    futexes: Vec<String>,
    futex_ix: HashMap<(u32, u32, bool), usize>,
    fig: Figures,
    t_start: Option<u64>,
    wakings: bool,
    /// Per CPU: a task outside the workload running since.
    other_since: HashMap<u32, u64>,
    /// Stretches other tasks ran.
    other: Vec<(u64, u64)>,
}

impl<'a> Conv<'a> {
    fn task(&mut self, pid: u32, ts: u64) -> &mut Task {
        if !self.tasks.contains_key(&pid) {
            self.t_start.get_or_insert(ts);
            self.order.push(pid);
        }
        let t = self.tasks.entry(pid).or_default();
        t.last_ts = t.last_ts.max(ts);
        t
    }

    fn chan(&mut self, w: u32, t: u32, kind: ChanKind) -> usize {
        let n = self.chans.len();
        let i = *self.chan_ix.entry((w, t)).or_insert(n);
        if i == n {
            self.chans.push((format!("c.{w}.{t}"), kind));
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

    fn push(&mut self, pid: u32, step: Step) {
        self.tasks.get_mut(&pid).expect("task").steps.push(step);
    }

    fn event(&mut self, e: &Ev, set: &HashSet<u32>) {
        let sel = |p: u32| set.contains(&p);
        match e.kind {
            Kind::Switch { prev, prev_state, next, next_prio, .. } => {
                if let Some(s) = self.other_since.remove(&e.cpu) {
                    self.other.push((s, e.ts));
                }
                if next != 0 && !sel(next) {
                    self.other_since.insert(e.cpu, e.ts);
                }
                if sel(prev) {
                    let t = self.task(prev, e.ts);
                    if let Some(s) = t.since.take() {
                        t.cpu += e.ts.saturating_sub(s);
                    }
                    if t.exited.is_none() {
                        match prev_state {
                            State::Blocked(c) => {
                                t.blocked = Some(Blocked { ts: e.ts, cpu: t.cpu, sys: t.sys, state: c });
                                self.fig.voluntary += 1;
                            }
                            State::Dead => t.exited = Some((e.ts, t.cpu)),
                            State::Running => {}
                        }
                    }
                }
                if sel(next) {
                    let t = self.task(next, e.ts);
                    let unwoken = t.blocked.take().is_some();
                    t.since = Some(e.ts);
                    t.prio = Some(next_prio);
                    self.fig.unwoken += u64::from(unwoken);
                }
            }
            Kind::Waking { pid } => self.waking(e, pid, set),
            Kind::Wakeup { pid } if !self.wakings => self.waking(e, pid, set),
            Kind::Fork { parent, child } if sel(child) => {
                self.fig.forks += 1;
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
            Kind::Migrate { pid } if sel(pid) => self.fig.migrations += 1,
            Kind::SysEnter { call, args } if sel(e.pid) && e.ctx != Ctx::HardIrq => {
                let t = self.task(e.pid, e.ts);
                t.sys = Some(Sys { class: call.class(), name: call.name(), args });
            }
            Kind::SysExit { .. } if sel(e.pid) && e.ctx != Ctx::HardIrq => {
                self.task(e.pid, e.ts).sys = None;
            }
            _ => {}
        }
    }

    fn waking(&mut self, e: &Ev, wakee: u32, set: &HashSet<u32>) {
        if !set.contains(&wakee) {
            return;
        }
        self.fig.wakeups += 1;
        let start = self.t_start.unwrap_or(e.ts);
        let fresh = !self.tasks.contains_key(&wakee);
        let t = self.task(wakee, e.ts);
        if fresh {
            // First seen being woken: it was blocked since the start.
            t.blocked = Some(Blocked { ts: start, cpu: 0, sys: None, state: 'S' });
        }
        let Some(b) = t.blocked.take() else { return };
        let h = e.pid;
        let waker_sys = self.tasks.get(&h).and_then(|w| w.sys);
        let in_send = waker_sys.is_some_and(|s| matches!(s.class, Class::Write | Class::Send));
        let waker = (set.contains(&h) && h != wakee && h != 0)
            && match e.ctx {
                Ctx::Task | Ctx::Unknown => true,
                Ctx::SoftIrq => in_send,
                Ctx::HardIrq => false,
            };
        let tclass = b.sys.map(|s| s.class);
        let note = b.sys.map_or(if b.state == 'D' { "D" } else { "" }, |s| s.name);
        if !waker {
            let cause = outside_cause(&b, e.ctx);
            *self.fig.blocks.entry(cause).or_default() += 1;
            let ns = e.ts.saturating_sub(b.ts).max(1);
            self.push(wakee, Step { cpu: b.cpu, act: Act::Sleep { ns }, note: if note.is_empty() { cause } else { note } });
            return;
        }
        let w = self.task(h, e.ts);
        w.since.get_or_insert(e.ts);
        let wcpu = w.cpu_at(e.ts);
        let wclass = waker_sys.map(|s| s.class);
        let sync = matches!(tclass, Some(Class::Read | Class::Recv | Class::Poll | Class::Accept | Class::Connect | Class::Wait))
            || (matches!(tclass, None | Some(Class::Other)) && matches!(wclass, Some(Class::Write | Class::Send)));
        if sync {
            let kind = if e.ctx == Ctx::SoftIrq {
                ChanKind::TcpLoopback
            } else if matches!(tclass, Some(Class::Recv | Class::Accept | Class::Connect)) || wclass == Some(Class::Send) {
                ChanKind::UnixStream
            } else {
                ChanKind::Pipe
            };
            let bytes = if tclass == Some(Class::Wait) { 1 } else { bytes_of(waker_sys) };
            let c = self.chan(h, wakee, kind);
            *self.fig.blocks.entry("channel").or_default() += 1;
            self.push(h, Step { cpu: wcpu, act: Act::Send { chan: c, bytes }, note: "" });
            self.push(wakee, Step { cpu: b.cpu, act: Act::Recv { chan: c, bytes }, note });
        } else {
            let f = self.futex(h, wakee, false);
            *self.fig.blocks.entry("futex").or_default() += 1;
            self.push(h, Step { cpu: wcpu, act: Act::Post { futex: f }, note: "" });
            self.push(wakee, Step { cpu: b.cpu, act: Act::Wait { futex: f, spawn: false }, note });
        }
    }
}

/// Converts the recording's tasks in `sel` (see [`select`]).
pub fn convert(rec: &Recording, sel: HashSet<u32>) -> Converted {
    let wakings = rec.events.iter().any(|e| matches!(e.kind, Kind::Waking { .. }));
    let syscalls = rec.events.iter().any(|e| matches!(e.kind, Kind::SysEnter { .. }));
    let mut c = Conv {
        rec,
        tasks: HashMap::new(),
        order: Vec::new(),
        chans: Vec::new(),
        chan_ix: HashMap::new(),
        futexes: Vec::new(),
        futex_ix: HashMap::new(),
        fig: Figures::default(),
        t_start: None,
        wakings,
        other_since: HashMap::new(),
        other: Vec::new(),
    };
    for e in &rec.events {
        c.event(e, &sel);
    }
    let last = rec.events.last().map_or(0, |e| e.ts);
    let start = c.t_start.unwrap_or(0);
    let mut end = start;
    let mut tasks = Vec::new();
    for pid in std::mem::take(&mut c.order) {
        let mut t = c.tasks.remove(&pid).expect("task");
        let (end_ts, end_cpu) = match (t.exited, t.blocked) {
            (Some(x), _) => x,
            (None, Some(b)) => {
                c.fig.blocked_at_end += 1;
                (b.ts, b.cpu)
            }
            (None, None) => (last, t.cpu_at(last)),
        };
        end = end.max(end_ts);
        let end_cpu = end_cpu.max(t.steps.last().map_or(0, |s| s.cpu));
        c.fig.cpu_ns += end_cpu;
        let nice = t.prio.filter(|p| (100..140).contains(p)).map(|p| p - 120);
        t.steps.sort_by_key(|s| s.cpu);
        tasks.push(TaskOut {
            pid,
            comm: c.rec.comms.get(&pid).cloned().unwrap_or_else(|| "task".into()),
            tgid: c.rec.tgid.get(&pid).copied(),
            nice,
            steps: t.steps,
            end_cpu,
        });
    }
    c.fig.run_ns = end - start;
    c.fig.other_ns = c.other.iter().map(|&(a, b)| b.min(end).saturating_sub(a.max(start))).sum();
    c.fig.tasks = tasks.len();
    Converted { tasks, chans: c.chans, futexes: c.futexes, figures: c.fig, syscalls }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::record::events::parse;

    /// A tracefs line at `us` µs after 100 s.
    fn l(task: &str, cpu: u32, flags: &str, us: u64, text: &str) -> String {
        format!("{task:>16} [{cpu:03}] {flags} {}.{:06}: {text}\n", 100 + us / 1_000_000, us % 1_000_000)
    }

    fn sw(prev: (&str, u32), state: &str, next: (&str, u32)) -> String {
        format!(
            "sched_switch: prev_comm={} prev_pid={} prev_prio=120 prev_state={state} ==> next_comm={} next_pid={} next_prio=120",
            prev.0, prev.1, next.0, next.1
        )
    }

    /// app-100 forks app-101; 101 blocks in read until 100 writes 64 bytes, then in a futex
    /// wait until 100's FUTEX_WAKE, then sleeps 1 ms (woken from a hard interrupt) and exits,
    /// waking 100 out of wait4. An unrelated task runs 4 µs on CPU 1; a kworker wakes nobody
    /// of ours.
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
        s += &l("app-101", 1, ".....", 49, "sys_futex(uaddr: 0x5560, op: 0x80, val: 0, utime: 0, uaddr2: 0, val3: 0)");
        s += &l("app-101", 1, "d..2.", 50, &sw(kid, "S", idle1));
        s += &l("app-100", 0, ".....", 60, "sys_futex(uaddr: 0x5560, op: 0x81, val: 1, utime: 0, uaddr2: 0, val3: 0)");
        s += &l("app-100", 0, "d..3.", 61, "sched_waking: comm=app pid=101 prio=120 target_cpu=001");
        s += &l("<idle>-0", 1, "d..2.", 62, &sw(idle1, "R", kid));
        s += &l("app-100", 0, ".....", 63, "sys_futex -> 0x1");
        s += &l("app-100", 0, ".....", 64, "sys_wait4(upid: 0xffffffffffffffff, stat_addr: 0x7ffd, options: 0, ru: 0)");
        s += &l("app-100", 0, "d..2.", 66, &sw(app, "S", idle0));
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
    fn a_synthetic_trace_keeps_its_chain_its_sleep_its_fork_and_its_exit_wakeup() {
        let rec = parse(&synthetic_trace(), "t").unwrap();
        let c = convert(&rec, select(&rec, &Roots::Pids(vec![100])));
        let names: Vec<&str> = c.chans.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["c.100.101", "c.101.100"]);
        assert_eq!(c.chans[0].1, ChanKind::Pipe);
        assert_eq!(c.futexes, ["spawn.101", "f.100.101"]);
        let (p, k) = (&c.tasks[0], &c.tasks[1]);
        assert_eq!((p.pid, k.pid, p.comm.as_str()), (100, 101, "app"));
        assert_eq!(
            steps(p),
            [
                (10_000, Act::Post { futex: 0 }, ""),
                (41_000, Act::Send { chan: 0, bytes: 64 }, ""),
                (61_000, Act::Post { futex: 1 }, ""),
                (66_000, Act::Recv { chan: 1, bytes: 1 }, "wait4"),
            ]
        );
        assert_eq!(p.end_cpu, 76_000, "66 µs, then 10 µs until its exit");
        assert_eq!(
            steps(k),
            [
                (0, Act::Wait { futex: 0, spawn: true }, "fork"),
                (5_000, Act::Recv { chan: 0, bytes: 64 }, "read"),
                (10_000, Act::Wait { futex: 1, spawn: false }, "futex"),
                (19_000, Act::Sleep { ns: 1_000_000 }, "clock_nanosleep"),
                // The exit's wakeup of the parent comes after the exit event: before the end.
                (28_000, Act::Send { chan: 1, bytes: 1 }, ""),
            ]
        );
        let f = &c.figures;
        assert_eq!((f.run_ns, f.wakeups, f.voluntary, f.cpu_ns, f.tasks, f.forks, f.other_ns), (1_095_000, 4, 4, 104_000, 2, 1, 4_000));
        let blocks: Vec<(&str, u64)> = f.blocks.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(blocks, [("channel", 2), ("futex", 1), ("sleep (timer)", 1)]);
        assert!(c.syscalls);
    }

    #[test]
    fn only_the_root_and_its_descendants_are_taken() {
        let rec = parse(&synthetic_trace(), "t").unwrap();
        assert_eq!(select(&rec, &Roots::Pids(vec![101])), HashSet::from([101]));
        assert_eq!(select(&rec, &Roots::Comms(vec!["app".into()])), HashSet::from([100, 101]));
        assert!(select(&rec, &Roots::Comms(vec!["nosuch".into()])).is_empty());
        // Converting only the child: the parent is outside, so its wakeups become sleeps.
        let c = convert(&rec, select(&rec, &Roots::Pids(vec![101])));
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
        let c = convert(&rec, select(&rec, &Roots::Comms(vec!["app".into()])));
        assert!(!c.syscalls);
        assert_eq!(c.futexes, ["f.100.101", "f.101.100"]);
        let by = |pid| c.tasks.iter().find(|t| t.pid == pid).unwrap();
        assert_eq!(steps(by(100)), [(10_000, Act::Post { futex: 0 }, ""), (15_000, Act::Wait { futex: 1, spawn: false }, "")]);
        assert_eq!(steps(by(101)), [(5_000, Act::Wait { futex: 0, spawn: false }, ""), (13_000, Act::Post { futex: 1 }, "")]);
        assert_eq!((by(100).end_cpu, by(101).end_cpu), (34_000, 23_000));
        assert_eq!((c.figures.run_ns, c.figures.wakeups, c.figures.voluntary), (40_000, 2, 2));
    }
}
