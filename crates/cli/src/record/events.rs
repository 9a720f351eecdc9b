//! Reading a recording: tracefs text (`cat /sys/kernel/tracing/trace`, what `wakesim record`
//! captures) or `perf script` text (from `perf sched record`), into one list of events.
//!
//! tracefs: `<comm>-<pid> [(<tgid>)] [<cpu>] [<flags>] <secs.usecs>: <event>: <fields>`, syscall
//! events as `sys_write(fd: 1, buf: 0x55.., count: 2)` and `sys_write -> 0x2`; the flags' third
//! character says whether the event came from a hard or soft interrupt (`d.h2.`, `d.s4.`).
//! perf script: `<comm> <tid>|<pid>/<tid> [<cpu>] <secs.frac>: <sys>:<event>: <fields>`, with no
//! interrupt context (so every waker is taken to be the task that was running).
//!
//! Comment lines (`#`) and blank lines are skipped; any other line that is not an event is an
//! error naming its line, and so is a lost-events marker (`CPU:1 [LOST 12 EVENTS]`).

use crate::replay::parse::{comm_before, field, num};
use std::collections::HashMap;

/// Where an event was emitted from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctx {
    /// Process context: the header's task did it.
    Task,
    SoftIrq,
    HardIrq,
    /// The format does not say (perf script).
    Unknown,
}

/// `prev_state` of a switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// R, R+: preempted, still runnable.
    Running,
    /// S, D, I, T, …: blocked; the letter.
    Blocked(char),
    /// X, Z: exiting.
    Dead,
}

/// What a blocking or waking system call is, as the conversion needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Futex,
    FutexWait,
    FutexWake,
    Read,
    Write,
    Recv,
    Send,
    Poll,
    Sleep,
    Wait,
    Accept,
    Connect,
    Signal,
    Sync,
    Aio,
    Other,
}

/// The system calls that get a class; any other name is `Class::Other`.
const CALLS: &[(&str, Class)] = &[
    ("futex", Class::Futex),
    ("futex_wait", Class::FutexWait),
    ("futex_waitv", Class::FutexWait),
    ("futex_wake", Class::FutexWake),
    ("read", Class::Read),
    ("readv", Class::Read),
    ("pread64", Class::Read),
    ("preadv", Class::Read),
    ("preadv2", Class::Read),
    ("write", Class::Write),
    ("writev", Class::Write),
    ("pwrite64", Class::Write),
    ("pwritev", Class::Write),
    ("pwritev2", Class::Write),
    ("recvfrom", Class::Recv),
    ("recvmsg", Class::Recv),
    ("recvmmsg", Class::Recv),
    ("sendto", Class::Send),
    ("sendmsg", Class::Send),
    ("sendmmsg", Class::Send),
    ("poll", Class::Poll),
    ("ppoll", Class::Poll),
    ("select", Class::Poll),
    ("pselect6", Class::Poll),
    ("epoll_wait", Class::Poll),
    ("epoll_pwait", Class::Poll),
    ("epoll_pwait2", Class::Poll),
    ("nanosleep", Class::Sleep),
    ("clock_nanosleep", Class::Sleep),
    ("wait4", Class::Wait),
    ("waitid", Class::Wait),
    ("accept", Class::Accept),
    ("accept4", Class::Accept),
    ("connect", Class::Connect),
    ("pause", Class::Signal),
    ("rt_sigsuspend", Class::Signal),
    ("rt_sigtimedwait", Class::Signal),
    ("fsync", Class::Sync),
    ("fdatasync", Class::Sync),
    ("sync_file_range", Class::Sync),
    ("io_uring_enter", Class::Aio),
    ("io_getevents", Class::Aio),
    ("io_pgetevents", Class::Aio),
    // Not blocking, but they end a file descriptor (channel reconstruction: `chans`).
    ("close", Class::Other),
    ("dup2", Class::Other),
    ("dup3", Class::Other),
];

/// The syscall tracepoints `wakesim record` enables (entry and exit of each, where the kernel
/// has them).
pub fn traced_calls() -> impl Iterator<Item = &'static str> {
    CALLS.iter().map(|&(n, _)| n)
}

/// A system call: its name (index into `CALLS`, or `None` for one not listed) and class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call(Option<u8>);

impl Call {
    pub fn named(name: &str) -> Call {
        Call(CALLS.iter().position(|&(n, _)| n == name).map(|i| i as u8))
    }
    pub fn class(self) -> Class {
        self.0.map_or(Class::Other, |i| CALLS[i as usize].1)
    }
    pub fn name(self) -> &'static str {
        self.0.map_or("syscall", |i| CALLS[i as usize].0)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Switch { prev: u32, prev_prio: i32, prev_state: State, next: u32, next_prio: i32 },
    /// `sched_waking`: in the waker's context.
    Waking { pid: u32 },
    /// `sched_wakeup`: used as a waking when the recording has no `sched_waking`.
    Wakeup { pid: u32 },
    WakeupNew { pid: u32 },
    Fork { parent: u32, child: u32 },
    Exit { pid: u32 },
    Migrate { pid: u32 },
    /// Entry of a system call: its first four arguments.
    SysEnter { call: Call, args: [u64; 4] },
    /// Exit of a system call with its return value (bytes read or written, or -errno).
    SysExit { call: Call, ret: i64 },
    /// `sock_send_length` / `sock_recv_length` (v6.3+): a socket's send or receive returned, in
    /// the syscall that made it; the socket's address family (`AF_UNIX` = 1, `AF_INET` = 2).
    SockLen { family: u16 },
    /// The lock log's events (`record`'s LD_PRELOAD library, `locklog`): a task called
    /// `pthread_mutex_lock` (or a `trylock` that succeeded), `pthread_mutex_unlock`, or entered
    /// or returned from `pthread_cond_wait` with mutex `m` (the address of its futex word).
    MutexLock { m: u64 },
    MutexUnlock { m: u64 },
    CondWait { m: u64 },
    CondWaitRet { m: u64 },
    /// Any other event.
    Other,
}

impl Kind {
    /// Order among events of the same µs (the lock log's ns are cut to the trace's µs): a
    /// call's entry before the syscalls it makes, `pthread_cond_wait`'s return after them.
    fn same_us_rank(&self) -> u8 {
        match self {
            Kind::MutexLock { .. } | Kind::MutexUnlock { .. } | Kind::CondWait { .. } => 0,
            Kind::CondWaitRet { .. } => 2,
            _ => 1,
        }
    }
}

/// One event: when, on which CPU, by which task (the header's), in which context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ev {
    /// ns (tracefs prints µs).
    pub ts: u64,
    pub cpu: u32,
    pub pid: u32,
    pub ctx: Ctx,
    /// 1-based line in the recording.
    pub line: u32,
    pub kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Tracefs,
    PerfScript,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Tracefs => "tracefs text",
            Format::PerfScript => "perf script text",
        }
    }
}

/// A parsed recording, events in file order (tracefs with the global clock and perf script both
/// print in time order).
#[derive(Debug)]
pub struct Recording {
    pub events: Vec<Ev>,
    /// The last comm seen for each pid (after an exec, the new one).
    pub comms: HashMap<u32, String>,
    /// Thread-group id of each pid, where the recording says (tracefs `record-tgid`, perf
    /// `pid/tid`).
    pub tgid: HashMap<u32, u32>,
    pub format: Format,
    /// `#P:<n>` of a tracefs header.
    pub header_cpus: Option<u32>,
}

/// Parses a whole recording; `name` is what errors call it.
pub fn parse(text: &str, name: &str) -> Result<Recording, String> {
    let mut r = Recording { events: Vec::new(), comms: HashMap::new(), tgid: HashMap::new(), format: Format::Tracefs, header_cpus: None };
    let mut format = None;
    for (i, l) in text.lines().enumerate() {
        let line = i as u32 + 1;
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with('#') {
            if t.contains("#P:") {
                r.header_cpus = crate::replay::parse::header_cpus(t);
            }
            continue;
        }
        if t.starts_with("CPU:") && t.contains("[LOST") {
            return Err(format!("{name}:{line}: the recording lost events ({t}): record a shorter run or with a larger buffer"));
        }
        let Some((h, f)) = header(l) else {
            let shown: String = t.chars().take(80).collect();
            return Err(format!("{name}:{line}: not an event line of a tracefs or perf script recording: '{shown}'"));
        };
        if *format.get_or_insert(f) != f {
            return Err(format!("{name}:{line}: a {} line in a {} recording", f.name(), format.map_or("", |f| f.name())));
        }
        // The lock log's lines name no comm (`<...>`, as tracefs does for one it lost).
        if h.comm != "<...>" {
            r.comms.insert(h.pid, h.comm.to_string());
        }
        if let Some(g) = h.tgid {
            r.tgid.insert(h.pid, g);
        }
        let kind = event(h.text, &mut r.comms).map_err(|e| format!("{name}:{line}: {e}"))?;
        r.events.push(Ev { ts: h.ts, cpu: h.cpu, pid: h.pid, ctx: h.ctx, line, kind });
    }
    r.format = format.unwrap_or(Format::Tracefs);
    if r.events.iter().any(|e| e.kind.same_us_rank() != 1) {
        merge_lock_log(&mut r.events);
    }
    Ok(r)
}

/// Merges the lock log's events (after the trace's, in time order) into the trace's. The trace
/// has µs, the log had ns: within a µs a call's entry goes before the trace's events and a
/// return after them, but never before an earlier call of the same thread (a `pthread_cond_wait`
/// that returns and is called again within one µs keeps that order).
fn merge_lock_log(events: &mut Vec<Ev>) {
    let mut last: HashMap<u32, (u64, u8)> = HashMap::new();
    let mut keyed: Vec<((u64, u8), usize, Ev)> = std::mem::take(events)
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let mut k = (e.ts, e.kind.same_us_rank());
            if k.1 != 1 {
                let l = last.entry(e.pid).or_insert(k);
                k = k.max(*l);
                *l = k;
            }
            (k, i, e)
        })
        .collect();
    keyed.sort_by_key(|(k, i, _)| (*k, *i));
    *events = keyed.into_iter().map(|(_, _, e)| e).collect();
}

/// The parts of an event line before the event's own text.
struct Header<'a> {
    comm: &'a str,
    pid: u32,
    tgid: Option<u32>,
    cpu: u32,
    ctx: Ctx,
    ts: u64,
    text: &'a str,
}

/// The pid of a task perf has no record of (`-1`).
pub const UNKNOWN_PID: u32 = u32::MAX;

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `secs.frac` (6 or 9 fractional digits, or anything up to 9) → ns.
fn timestamp_ns(ts: &str) -> Option<u64> {
    let (s, frac) = ts.split_once('.')?;
    if !digits(s) || !digits(frac) || frac.len() > 9 {
        return None;
    }
    let scale = 10u64.pow(9 - frac.len() as u32);
    s.parse::<u64>().ok()?.checked_mul(1_000_000_000)?.checked_add(frac.parse::<u64>().ok()? * scale)
}

/// Finds the header: the first ` [<cpu>] ` whose left side ends in a task (`comm-pid`,
/// `comm-pid (tgid)`, `comm pid`, `comm pid/tid`) and whose right side is `[flags] ts: text`.
fn header(l: &str) -> Option<(Header<'_>, Format)> {
    let mut from = 0;
    while let Some(off) = l[from..].find(" [") {
        let i = from + off;
        from = i + 2;
        let after = &l[i + 2..];
        let Some(close) = after.find(']') else { break };
        if !digits(&after[..close]) {
            continue;
        }
        let Ok(cpu) = after[..close].parse::<u32>() else { continue };
        let Some((comm, pid, tgid, fmt)) = task(l[..i].trim_end()) else { continue };
        let rest = after[close + 1..].trim_start();
        // [flags] ts: text
        let (first, tail) = rest.split_once(' ').unwrap_or((rest, ""));
        let (flags, ts_tok, text) = match first.strip_suffix(':').and_then(timestamp_ns) {
            Some(ts) => (None, ts, tail),
            None => {
                let tail = tail.trim_start();
                let (tok, text) = tail.split_once(' ').unwrap_or((tail, ""));
                let Some(ts) = tok.strip_suffix(':').and_then(timestamp_ns) else { continue };
                (Some(first), ts, text)
            }
        };
        let ctx = match (fmt, flags) {
            (Format::PerfScript, _) | (_, None) => Ctx::Unknown,
            (Format::Tracefs, Some(f)) => match f.chars().nth(2) {
                Some('h' | 'H' | 'z' | 'Z') => Ctx::HardIrq,
                Some('s') => Ctx::SoftIrq,
                _ => Ctx::Task,
            },
        };
        return Some((Header { comm, pid, tgid, cpu, ctx, ts: ts_tok, text: text.trim_start() }, fmt));
    }
    None
}

/// The task before ` [cpu]`: tracefs `comm-pid` or `comm-pid (tgid)`; perf `comm tid` or
/// `comm pid/tid`.
fn task(left: &str) -> Option<(&str, u32, Option<u32>, Format)> {
    let (left, tgid_col) = match left.strip_suffix(')') {
        Some(l) => {
            let open = l.rfind('(')?;
            let inner = l[open + 1..].trim();
            (l[..open].trim_end(), Some(inner.parse::<u32>().ok()))
        }
        None => (left, None),
    };
    let (head, last) = match left.rsplit_once(char::is_whitespace) {
        Some((h, l)) => (h.trim_end(), l),
        None => ("", left),
    };
    if tgid_col.is_none() {
        // perf prints -1 for a thread it has no record of.
        let id = |t: &str| if t == "-1" { Some(UNKNOWN_PID) } else { t.parse().ok().filter(|_| digits(t)) };
        if let Some((p, t)) = last.split_once('/') {
            if let (Some(p), Some(t), false) = (id(p), id(t), head.is_empty()) {
                return Some((head.trim_start(), t, Some(p).filter(|&p| p != UNKNOWN_PID), Format::PerfScript));
            }
        }
        if let (Some(t), false) = (id(last), head.is_empty()) {
            return Some((head.trim_start(), t, None, Format::PerfScript));
        }
    }
    let dash = left.rfind('-')?;
    let pid = &left[dash + 1..];
    if !digits(pid) {
        return None;
    }
    Some((left[..dash].trim_start(), pid.parse().ok()?, tgid_col.flatten(), Format::Tracefs))
}

/// A syscall argument: hex, with or without `0x` (tracefs prints small values bare).
fn hex(v: &str) -> u64 {
    let v = v.trim();
    let v = v.strip_prefix("0x").unwrap_or(v);
    u64::from_str_radix(v, 16).unwrap_or(0)
}

/// `fd: 0x1, buf: 0x55.., count: 0x40` → the first four values.
fn args(s: &str) -> [u64; 4] {
    let mut a = [0u64; 4];
    for (k, part) in s.split(", ").take(4).enumerate() {
        a[k] = hex(part.rsplit(':').next().unwrap_or(""));
    }
    a
}

fn state(s: &str) -> State {
    match s.chars().next() {
        Some('R') | None => State::Running,
        Some('X' | 'Z') => State::Dead,
        Some(c) => State::Blocked(c),
    }
}

/// The event after the header's timestamp; comms it names update `comms`.
fn event(text: &str, comms: &mut HashMap<u32, String>) -> Result<Kind, String> {
    // tracefs syscall events: `sys_write(fd: 1, ...)`, `sys_write -> 0x2`.
    if let Some(rest) = text.strip_prefix("sys_") {
        if let Some(p) = rest.find('(') {
            if !rest[..p].contains([' ', ':']) {
                let inner = rest[p + 1..].trim_end().trim_end_matches(')');
                return Ok(Kind::SysEnter { call: Call::named(&rest[..p]), args: args(inner) });
            }
        }
        if let Some((n, r)) = rest.split_once(" -> ") {
            if !n.contains([' ', ':']) {
                return Ok(Kind::SysExit { call: Call::named(n), ret: hex(r) as i64 });
            }
        }
    }
    let (name, f) = match text.split_once(": ") {
        Some((n, f)) => (n, f.trim()),
        None => (text.trim_end().trim_end_matches(':'), ""),
    };
    // perf: `sched:sched_switch`, `syscalls:sys_enter_write`.
    let name = name.rsplit(':').next().unwrap_or(name).trim();
    if let Some(n) = name.strip_prefix("sys_enter_") {
        return Ok(Kind::SysEnter { call: Call::named(n), args: args(f) });
    }
    if let Some(n) = name.strip_prefix("sys_exit_") {
        return Ok(Kind::SysExit { call: Call::named(n), ret: hex(f) as i64 });
    }
    let bad = |what: &str| format!("{name} without {what}: '{}'", f.chars().take(80).collect::<String>());
    let mut comm = |pid: u32, c: Option<&str>| {
        if let Some(c) = c {
            comms.insert(pid, c.to_string());
        }
    };
    Ok(match name {
        "sched_switch" => {
            let (prev, next) = f.split_once(" ==> ").ok_or_else(|| bad("'==>'"))?;
            if prev.contains("prev_pid=") {
                let p: u32 = num(prev, "prev_pid").ok_or_else(|| bad("prev_pid"))?;
                let n: u32 = num(next, "next_pid").ok_or_else(|| bad("next_pid"))?;
                comm(p, comm_before(prev, "prev_comm", "prev_pid"));
                comm(n, comm_before(next, "next_comm", "next_pid"));
                Kind::Switch {
                    prev: p,
                    prev_prio: num(prev, "prev_prio").unwrap_or(120),
                    prev_state: state(field(prev, "prev_state").ok_or_else(|| bad("prev_state"))?),
                    next: n,
                    next_prio: num(next, "next_prio").unwrap_or(120),
                }
            } else {
                // libtraceevent's plugin: `comm:pid [prio] S ==> comm:pid [prio]`.
                let side = |s: &str| -> Option<(String, u32, i32, String)> {
                    let open = s.rfind(" [")?;
                    let (task, rest) = (&s[..open], &s[open + 2..]);
                    let (prio, st) = rest.split_once(']')?;
                    let (c, p) = task.rsplit_once(':')?;
                    Some((c.trim().to_string(), p.parse().ok()?, prio.trim().parse().ok()?, st.trim().to_string()))
                };
                let (pc, p, pp, st) = side(prev).ok_or_else(|| bad("a task"))?;
                let (nc, n, np, _) = side(&(next.to_string() + " ")).ok_or_else(|| bad("a next task"))?;
                comm(p, Some(&pc));
                comm(n, Some(&nc));
                Kind::Switch { prev: p, prev_prio: pp, prev_state: state(&st), next: n, next_prio: np }
            }
        }
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
            let pid: u32 = num(f, "pid").ok_or_else(|| bad("pid"))?;
            comm(pid, comm_before(f, "comm", "pid"));
            match name {
                "sched_waking" => Kind::Waking { pid },
                "sched_wakeup" => Kind::Wakeup { pid },
                _ => Kind::WakeupNew { pid },
            }
        }
        "sched_process_fork" => {
            let parent: u32 = num(f, "pid").ok_or_else(|| bad("pid"))?;
            let child: u32 = num(f, "child_pid").ok_or_else(|| bad("child_pid"))?;
            comm(child, comm_before(f, "child_comm", "child_pid"));
            Kind::Fork { parent, child }
        }
        "sched_process_exit" => Kind::Exit { pid: num(f, "pid").ok_or_else(|| bad("pid"))? },
        "sched_migrate_task" => Kind::Migrate { pid: num(f, "pid").ok_or_else(|| bad("pid"))? },
        "wakesim_mutex_lock" | "wakesim_mutex_unlock" | "wakesim_cond_wait" | "wakesim_cond_wait_ret" => {
            let m = f.split_whitespace().find_map(|kv| kv.strip_prefix("m=")).map(hex).ok_or_else(|| bad("m="))?;
            match name {
                "wakesim_mutex_lock" => Kind::MutexLock { m },
                "wakesim_mutex_unlock" => Kind::MutexUnlock { m },
                "wakesim_cond_wait" => Kind::CondWait { m },
                _ => Kind::CondWaitRet { m },
            }
        }
        "sock_send_length" | "sock_recv_length" => Kind::SockLen { family: sock_family(f).ok_or_else(|| bad("family"))? },
        _ => Kind::Other,
    })
}

/// The `family = ...` field of a sock event: `AF_INET`, `AF_INET6`, or the number the
/// tracepoint's `__print_symbolic` leaves (`0x1` for `AF_UNIX`).
fn sock_family(f: &str) -> Option<u16> {
    let v = f.split("family = ").nth(1)?.split([' ', ',']).next()?;
    match v {
        "AF_INET" => Some(2),
        "AF_INET6" => Some(10),
        "AF_UNIX" | "AF_LOCAL" => Some(1),
        _ => match v.strip_prefix("0x") {
            Some(h) => u16::from_str_radix(h, 16).ok(),
            None => v.parse().ok(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_log_calls_go_before_the_trace_events_of_their_microsecond_and_returns_after() {
        let t = |us: u32, text: &str| format!("app-101 (    100) [001] ..... 100.{us:06}: {text}\n");
        let mut s = t(10, "sys_futex(uaddr: 0x6008, op: 0x189, val: 0, utime: 0, uaddr2: 0, val3: 0)");
        s += &t(12, "sys_futex(uaddr: 0x5000, op: 0x80, val: 2, utime: 0, uaddr2: 0, val3: 0)");
        // The log, appended: a pthread_cond_wait() that returns and is called again in one µs.
        let log = |us: u32, call: &str| format!("<...>-101 (    100) [001] ..... 100.{us:06}: wakesim_{call}: m=0x5000\n");
        s += &(log(10, "cond_wait_ret") + &log(10, "cond_wait") + &log(12, "mutex_lock"));
        let r = parse(&s, "t").unwrap();
        let order: Vec<(u64, &str)> = r
            .events
            .iter()
            .map(|e| {
                let k = match e.kind {
                    Kind::SysEnter { .. } => "futex",
                    Kind::CondWaitRet { m: 0x5000 } => "ret",
                    Kind::CondWait { m: 0x5000 } => "wait",
                    Kind::MutexLock { m: 0x5000 } => "lock",
                    _ => "?",
                };
                (e.ts / 1000 - 100_000_000, k)
            })
            .collect();
        assert_eq!(order, [(10, "futex"), (10, "ret"), (10, "wait"), (12, "lock"), (12, "futex")]);
        assert_eq!(r.comms.get(&101).map(String::as_str), Some("app"), "the log's `<...>` names no comm");
    }

    #[test]
    fn sock_length_events_give_the_address_family() {
        let unix = one("  perf-7 [001] ..... 1.000001: sock_send_length: sk address = 00000000deadbeef, family = 0x1 protocol = 0x0, length = 100, error = 0, flags = 0x0");
        assert_eq!(unix.kind, Kind::SockLen { family: 1 });
        let tcp = one("  netperf-7 [001] ..... 1.000001: sock_recv_length: sk address = 00000000deadbeef, family = AF_INET protocol = IPPROTO_TCP, length = 1, error = 0, flags = 0x0");
        assert_eq!(tcp.kind, Kind::SockLen { family: 2 });
    }

    fn one(l: &str) -> Ev {
        let r = parse(l, "t").unwrap();
        assert_eq!(r.events.len(), 1, "{l}");
        r.events[0].clone()
    }

    #[test]
    fn tracefs_lines_with_and_without_tgid_give_task_cpu_context_and_ns() {
        let e = one("           sleep-13651   [001] d.h3. 11870.268073: sched_waking: comm=sleep pid=13651 prio=120 target_cpu=001");
        assert_eq!((e.pid, e.cpu, e.ctx, e.ts), (13651, 1, Ctx::HardIrq, 11870268073000));
        assert_eq!(e.kind, Kind::Waking { pid: 13651 });
        let r = parse("  kworker/0:2-vir-55 (     55) [000] d.s4. 1.000002: sched_waking: comm=a b pid=7 prio=120 target_cpu=000\n  x-9 (-------) [001] ..... 1.5: sched_process_exit: comm=x pid=9 prio=120 group_dead=true\n", "t").unwrap();
        assert_eq!((r.events[0].pid, r.events[0].ctx, r.tgid.get(&55)), (55, Ctx::SoftIrq, Some(&55)));
        assert_eq!(r.comms[&7], "a b");
        assert_eq!(r.comms[&55], "kworker/0:2-vir");
        assert_eq!((r.events[1].kind.clone(), r.events[1].ts, r.tgid.get(&9)), (Kind::Exit { pid: 9 }, 1_500_000_000, None));
    }

    #[test]
    fn syscall_events_in_both_notations() {
        let e = one("  sleep-13651 [001] ..... 11870.257724: sys_futex(uaddr: 0x7f9d84036a4c, op: 0x81, val: 0x7fffffff, utime: 0, uaddr2: 3, val3: 0)");
        let Kind::SysEnter { call, args } = e.kind else { panic!() };
        assert_eq!((call.name(), call.class(), args), ("futex", Class::Futex, [0x7f9d84036a4c, 0x81, 0x7fffffff, 0]));
        assert_eq!(one(" sleep-1 [001] ..... 1.0: sys_read -> 0x340").kind, Kind::SysExit { call: Call::named("read"), ret: 0x340 });
        assert_eq!(one(" x-1 [001] ..... 1.0: sys_read -> 0xfffffffffffffff5").kind, Kind::SysExit { call: Call::named("read"), ret: -11 });
        assert_eq!(one(" x 1 [001] 1.0: syscalls:sys_exit_write: 0x64").kind, Kind::SysExit { call: Call::named("write"), ret: 100 });
        // Older kernels print hex without 0x; perf names the event sys_enter_*.
        let e = one("  x-1 [000] .... 1.0: sys_write(fd: 4, buf: 7ffc31a9, count: 40)");
        assert_eq!(e.kind, Kind::SysEnter { call: Call::named("write"), args: [4, 0x7ffc31a9, 0x40, 0] });
        let e = one("  bash 100/101 [000] 1.000000100: syscalls:sys_enter_clock_nanosleep: which_clock: 0x00000000, flags: 0x00000000, rqtp: 0x7ffd, rmtp: 0x0");
        assert_eq!((e.pid, e.ts, e.ctx), (101, 1_000_000_100, Ctx::Unknown));
        assert_eq!(Call::named("clock_nanosleep").class(), Class::Sleep);
        assert!(matches!(e.kind, Kind::SysEnter { call, .. } if call.class() == Class::Sleep));
        assert_eq!(Call::named("mmap").class(), Class::Other);
    }

    #[test]
    fn perf_script_switches_in_both_notations_and_forks() {
        let r = parse(
            "            bash 13778 [001] 11877.485768:       sched:sched_switch: prev_comm=bash prev_pid=13778 prev_prio=120 prev_state=R+ ==> next_comm=rcu_preempt next_pid=15 next_prio=98\n\
             Web Content 7/8 [000] 2.000000001: sched:sched_switch: Web Content:8 [120] S ==> swapper/0:0 [120]\n\
             bash 13778 [001] 11877.486796: sched:sched_process_fork: comm=bash pid=13778 child_comm=cat child_pid=13786\n",
            "p",
        )
        .unwrap();
        assert_eq!(r.format, Format::PerfScript);
        assert_eq!(r.events[0].kind, Kind::Switch { prev: 13778, prev_prio: 120, prev_state: State::Running, next: 15, next_prio: 98 });
        assert_eq!(r.events[1].kind, Kind::Switch { prev: 8, prev_prio: 120, prev_state: State::Blocked('S'), next: 0, next_prio: 120 });
        assert_eq!((r.events[1].pid, r.tgid[&8], r.comms[&8].as_str()), (8, 7, "Web Content"));
        assert_eq!(r.events[2].kind, Kind::Fork { parent: 13778, child: 13786 });
        assert_eq!(r.comms[&13786], "cat");
        // A thread perf has no record of.
        let e = one("             :-1 29573/-1    [001] 14031.710635456: sched:sched_stat_runtime: comm=opt 1 pid=29782 runtime=20781 [ns]");
        assert_eq!((e.pid, e.kind), (UNKNOWN_PID, Kind::Other));
    }

    #[test]
    fn a_line_that_is_not_an_event_or_a_lost_marker_names_its_line() {
        let e = parse("# tracer: nop\n  x-1 [000] d..2. 1.000001: sched_waking: comm=y pid=2 prio=120 target_cpu=000\nhello world\n", "rec.txt").unwrap_err();
        assert!(e.starts_with("rec.txt:3: not an event line") && e.contains("hello world"), "{e}");
        let e = parse("  x-1 [000] d..2. 1.000001: sched_waking: comm=y pid=2\nCPU:1 [LOST 12 EVENTS]\n", "rec.txt").unwrap_err();
        assert!(e.starts_with("rec.txt:2: the recording lost events"), "{e}");
        let e = parse("  x-1 [000] d..2. 1.000001: sched_switch: prev_comm=x prev_pid=1\n", "rec.txt").unwrap_err();
        assert!(e.starts_with("rec.txt:1: sched_switch without"), "{e}");
    }
}
