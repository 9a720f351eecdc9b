//! The recording's pipes and sockets, reconstructed from its wakeups, so that every read and
//! write on them (not only those that blocked or woke someone) becomes a channel op and the
//! replay's blocking on them is its own.
//!
//! A **channel** is a file descriptor a process reads: (reader's thread group, fd). The evidence
//! that a writer's fd feeds it is a wakeup: a task in `write`/`send*` on fd G wakes a task
//! blocked in `read`/`recv*` on fd F (or in poll/epoll/select, then reading F first with data).
//! A writer's fd maps to a channel by its own evidence, or else by a sibling's: processes forked
//! by one parent while its fd G stood for one object (no `close`/`dup2` of G by the parent between
//! their forks) inherit the same object (perf bench's senders write to every receiver of their
//! group through the same fd numbers, which the next group reuses); a writer fd with evidence
//! for two channels maps to neither.
//!
//! A channel is used only if the recording is consistent with it: read in time order, its mapped
//! writes (counted at their entry) always cover its reads (counted at their exit). A channel a
//! writer outside the recording (or an unmapped fd) fed fails that and is left to the pairs of
//! `convert`. Needs the syscall events with their return values (bytes read and written).
//! `WAKESIM_RECORD_DEBUG=1` prints every channel found, and whether it was consistent, on stderr.

use super::events::{Class, Ctx, Kind, Recording};
use std::collections::{HashMap, HashSet};
use wakesim_workloads::ChanKind;

/// A channel: its name in the task file, kind and the bytes its writes leave unread at the end.
#[derive(Clone, Debug, PartialEq)]
pub struct Obj {
    pub name: String,
    pub kind: ChanKind,
    /// Largest amount buffered at any time in the recording, bytes.
    pub max_buffered: u64,
    pub left: u64,
    /// Mean and largest bytes per write (a unix socket's room is counted in skbs, not bytes).
    pub mean_write: u64,
    pub max_write: u64,
}

/// `AF_UNIX` in the sock events' `family`.
const AF_UNIX: u16 = 1;

/// Which syscalls are channel ops.
#[derive(Debug, Default)]
pub struct Plan {
    pub objs: Vec<Obj>,
    /// Event index of a read's entry → (channel, bytes it read).
    pub reads: HashMap<usize, (usize, u64)>,
    /// Event index of a write's entry → (channel, bytes it wrote).
    pub writes: HashMap<usize, (usize, u64)>,
    /// A block in poll/epoll/select (task, block time) → the entry of the read that took the data
    /// it waited for.
    pub poll_reads: HashMap<(u32, u64), usize>,
}

fn is_read(c: Class) -> bool {
    matches!(c, Class::Read | Class::Recv)
}

fn is_write(c: Class) -> bool {
    matches!(c, Class::Write | Class::Send)
}

#[derive(Clone, Copy)]
struct Cur {
    idx: usize,
    class: Class,
    name: &'static str,
    fd: u64,
}

/// Builds the plan for the tasks in `sel`.
pub fn plan(rec: &Recording, sel: &HashSet<u32>) -> Plan {
    let proc = |pid: u32| rec.tgid.get(&pid).copied().unwrap_or(pid);
    // 1. Each syscall's return value; the evidence.
    let mut ret: HashMap<usize, i64> = HashMap::new();
    let mut cur: HashMap<u32, Cur> = HashMap::new();
    let mut blocked: HashMap<u32, (u64, Option<Cur>)> = HashMap::new();
    // (writer proc, fd) → reader (proc, fd) → kind
    let mut evidence: HashMap<(u32, u64), HashMap<(u32, u64), ChanKind>> = HashMap::new();
    // A poll-blocked task woken by a writer: its next read with data says which fd it waited on.
    let mut pending_poll: HashMap<u32, ((u32, u64), ChanKind, (u32, u64))> = HashMap::new();
    let mut poll_candidates: Vec<((u32, u64), usize, ((u32, u64), ChanKind))> = Vec::new();
    let mut parent: HashMap<u32, (u32, u64)> = HashMap::new();
    // When each process closed (or dup2'ed over) each fd.
    let mut closes: HashMap<(u32, u64), Vec<u64>> = HashMap::new();
    // (proc, fd) → the address family a sock event inside a read or write on it named: the fd
    // is a socket (a `read`/`write` on a unix socket looks like a pipe's otherwise).
    let mut sock_fds: HashMap<(u32, u64), u16> = HashMap::new();
    for (i, e) in rec.events.iter().enumerate() {
        match e.kind {
            Kind::SockLen { family } if sel.contains(&e.pid) => {
                if let Some(c) = cur.get(&e.pid).filter(|c| is_read(c.class) || is_write(c.class)) {
                    sock_fds.insert((proc(e.pid), c.fd), family);
                }
            }
            Kind::SysEnter { call, args } if sel.contains(&e.pid) && e.ctx != Ctx::HardIrq => {
                match call.name() {
                    "close" => closes.entry((proc(e.pid), args[0])).or_default().push(e.ts),
                    "dup2" | "dup3" => closes.entry((proc(e.pid), args[1])).or_default().push(e.ts),
                    _ => {}
                }
                let c = Cur { idx: i, class: call.class(), name: call.name(), fd: args[0] };
                cur.insert(e.pid, c);
                if is_read(c.class) {
                    if let Some((w, kind, blk)) = pending_poll.remove(&e.pid) {
                        poll_candidates.push((blk, i, (w, kind)));
                        // Resolved at the exit if it read data; else the next read is tried.
                        pending_poll.insert(e.pid, (w, kind, blk));
                    }
                }
            }
            Kind::SysExit { ret: r, .. } if sel.contains(&e.pid) && e.ctx != Ctx::HardIrq => {
                if let Some(c) = cur.remove(&e.pid) {
                    ret.insert(c.idx, r);
                    if is_read(c.class) && r > 0 {
                        if let Some((w, kind, _)) = pending_poll.remove(&e.pid) {
                            evidence.entry(w).or_default().insert((proc(e.pid), c.fd), kind);
                        }
                    }
                }
            }
            Kind::Switch { prev, prev_state: super::events::State::Blocked(_), .. } if sel.contains(&prev) => {
                blocked.insert(prev, (e.ts, cur.get(&prev).copied()));
                pending_poll.remove(&prev);
            }
            Kind::Switch { next, .. } if sel.contains(&next) => {
                blocked.remove(&next);
            }
            Kind::Waking { pid } | Kind::Wakeup { pid } if sel.contains(&pid) && sel.contains(&e.pid) && e.pid != pid => {
                let Some((bts, bsys)) = blocked.remove(&pid) else { continue };
                let Some(w) = cur.get(&e.pid).copied().filter(|c| is_write(c.class)) else { continue };
                if e.ctx == Ctx::HardIrq {
                    continue;
                }
                let kind = if e.ctx == Ctx::SoftIrq {
                    ChanKind::TcpLoopback
                } else if w.name.starts_with("send") || bsys.is_some_and(|b| b.name.starts_with("recv")) {
                    ChanKind::UnixStream
                } else {
                    ChanKind::Pipe
                };
                let wk = (proc(e.pid), w.fd);
                match bsys {
                    Some(b) if is_read(b.class) => {
                        evidence.entry(wk).or_default().insert((proc(pid), b.fd), kind);
                    }
                    Some(b) if b.class == Class::Poll => {
                        pending_poll.insert(pid, (wk, kind, (pid, bts)));
                    }
                    _ => {}
                }
            }
            Kind::Fork { parent: p, child } => {
                parent.insert(child, (p, e.ts));
            }
            _ => {}
        }
    }

    // 2. Writer fds → channels: own evidence if unambiguous, else the siblings'.
    let mut objs: Vec<Obj> = Vec::new();
    let mut obj_ix: HashMap<(u32, u64), usize> = HashMap::new();
    let mut direct: HashMap<(u32, u64), usize> = HashMap::new();
    let mut ambiguous: HashSet<(u32, u64)> = HashSet::new();
    let mut keys: Vec<_> = evidence.keys().copied().collect();
    keys.sort_unstable();
    for w in keys {
        let readers = &evidence[&w];
        if readers.len() != 1 {
            ambiguous.insert(w);
            continue;
        }
        let (&r, &kind) = readers.iter().next().expect("one reader");
        let n = objs.len();
        let o = *obj_ix.entry(r).or_insert(n);
        if o == n {
            objs.push(Obj { name: format!("ch.{}.{}", r.0, r.1), kind, max_buffered: 0, left: 0, mean_write: 0, max_write: 0 });
        } else if kind == ChanKind::TcpLoopback {
            objs[o].kind = kind;
        }
        // read()/write() on a unix socket: the sock events say what the syscall names cannot.
        if objs[o].kind == ChanKind::Pipe && (sock_fds.get(&r) == Some(&AF_UNIX) || sock_fds.get(&w) == Some(&AF_UNIX)) {
            objs[o].kind = ChanKind::UnixStream;
        }
        direct.insert(w, o);
    }
    // What process `wp`'s fd inherited: (parent process, fd, how often the parent had closed
    // that fd before the fork).
    let inherited = |wp: u32, fd: u64| -> Option<(u32, u64, usize)> {
        let &(pp, at) = parent.get(&wp)?;
        let pp = proc(pp);
        let n = closes.get(&(pp, fd)).map_or(0, |v| v.iter().filter(|&&t| t < at).count());
        Some((pp, fd, n))
    };
    let mut by_family: HashMap<(u32, u64, usize), Option<usize>> = HashMap::new();
    for (&(wp, fd), &o) in &direct {
        if let Some(k) = inherited(wp, fd) {
            let e = by_family.entry(k).or_insert(Some(o));
            if *e != Some(o) {
                *e = None;
            }
        }
    }
    let writer_obj = |wp: u32, fd: u64| -> Option<usize> {
        if let Some(&o) = direct.get(&(wp, fd)) {
            return Some(o);
        }
        if ambiguous.contains(&(wp, fd)) {
            return None;
        }
        by_family.get(&inherited(wp, fd)?).copied().flatten()
    };
    // 3. Every read and write on a channel, checked in time order.
    let mut reads = HashMap::new();
    let mut writes = HashMap::new();
    let mut buffered: Vec<i64> = vec![0; objs.len()];
    let mut broken: Vec<bool> = vec![false; objs.len()];
    let mut max: Vec<i64> = vec![0; objs.len()];
    let mut written: Vec<(u64, u64, u64)> = vec![(0, 0, 0); objs.len()];
    let mut open: HashMap<u32, (usize, u64, Class)> = HashMap::new();
    for (i, e) in rec.events.iter().enumerate() {
        match e.kind {
            Kind::SysEnter { call, args } if sel.contains(&e.pid) && e.ctx != Ctx::HardIrq => {
                let class = call.class();
                open.insert(e.pid, (i, args[0], class));
                if is_write(class) {
                    let bytes = match ret.get(&i) {
                        Some(&r) if r > 0 => r as u64,
                        Some(_) => 0,
                        None if matches!(call.name(), "write" | "pwrite64" | "sendto") => args[2],
                        None => 0,
                    };
                    if let (Some(o), true) = (writer_obj(proc(e.pid), args[0]), bytes > 0) {
                        writes.insert(i, (o, bytes));
                        written[o].0 += bytes;
                        written[o].1 += 1;
                        written[o].2 = written[o].2.max(bytes);
                        buffered[o] += bytes as i64;
                        max[o] = max[o].max(buffered[o]);
                    }
                }
            }
            Kind::SysExit { ret: r, .. } if sel.contains(&e.pid) && e.ctx != Ctx::HardIrq => {
                if let Some((idx, fd, class)) = open.remove(&e.pid) {
                    if is_read(class) && r > 0 {
                        if let Some(&o) = obj_ix.get(&(proc(e.pid), fd)) {
                            reads.insert(idx, (o, r as u64));
                            buffered[o] -= r;
                            broken[o] |= buffered[o] < 0;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    // The poll blocks whose next read with data took from the channel the waker wrote to.
    let mut poll_reads: HashMap<(u32, u64), usize> = HashMap::new();
    for (blk, idx, (w, _)) in poll_candidates {
        if let (Some(&(o, _)), Some(wo)) = (reads.get(&idx), writer_obj(w.0, w.1)) {
            if o == wo {
                poll_reads.entry(blk).or_insert(idx);
            }
        }
    }
    if std::env::var_os("WAKESIM_RECORD_DEBUG").is_some() {
        for (o, obj) in objs.iter().enumerate() {
            eprintln!("channel {} kind {:?} broken {} buffered {} max {}", obj.name, obj.kind, broken[o], buffered[o], max[o]);
        }
        eprintln!("evidence {} direct {} ambiguous {} family {:?}", evidence.len(), direct.len(), ambiguous.len(), by_family);
    }
    // 4. Only the consistent channels, renumbered.
    let mut new_ix: Vec<Option<usize>> = vec![None; objs.len()];
    let mut kept = Vec::new();
    let mut has_reads = vec![false; broken.len()];
    for &(o, _) in reads.values() {
        has_reads[o] = true;
    }
    for (o, obj) in objs.into_iter().enumerate() {
        if !broken[o] && has_reads[o] {
            new_ix[o] = Some(kept.len());
            let mean_write = written[o].0.checked_div(written[o].1).unwrap_or(0);
            kept.push(Obj { max_buffered: max[o].max(0) as u64, left: buffered[o].max(0) as u64, mean_write, max_write: written[o].2, ..obj });
        }
    }
    let remap = |m: HashMap<usize, (usize, u64)>| -> HashMap<usize, (usize, u64)> { m.into_iter().filter_map(|(i, (o, b))| Some((i, (new_ix[o]?, b)))).collect() };
    let reads = remap(reads);
    let poll_reads = poll_reads.into_iter().filter(|(_, idx)| reads.contains_key(idx)).collect();
    Plan { objs: kept, reads, writes: remap(writes), poll_reads }
}
