//! Compiling the declarations into a [`Workload`]: replicas, name resolution, loop indices and
//! the checks that catch a workload that could never finish.

use super::doc::{Doc, TaskDecl};
use super::ops::{expand, parse_stmt, Stmt, WakeKind};
use super::report::TaskFileReporter;
use super::toml_walk::Src;
use crate::counts::{op_counts, OpCounts};
use crate::defaults::default_capacity;
use crate::{ChanKind, ChannelSpec, Op, Program, TaskSpec, Workload, WorkloadError};
use std::collections::HashMap;

/// A declared name → (index, declaration line).
struct Names {
    what: &'static str,
    idx: HashMap<String, (u32, usize)>,
    order: Vec<String>,
}

impl Names {
    fn new(what: &'static str) -> Self {
        Names {
            what,
            idx: HashMap::new(),
            order: Vec::new(),
        }
    }

    /// Declares `template` × `count` (`{i}` expanded per replica).
    fn declare(
        &mut self,
        src: &Src,
        template: &str,
        count: u64,
        line: usize,
    ) -> Result<(), WorkloadError> {
        check_name(src, self.what, template, line)?;
        if count > 1 && !template.contains('{') {
            return Err(src.err_at_line(line, format!(
                "{} '{template}' has count {count} but no {{i}} in its name to tell the copies apart",
                self.what
            )));
        }
        for j in 0..count {
            let name = expand(template, j, count, false).map_err(|e| src.err_at_line(line, e))?;
            if let Some(&(_, first)) = self.idx.get(&name) {
                return Err(src.err_at_line(
                    line,
                    format!(
                        "{} '{name}' is declared twice (first at line {first})",
                        self.what
                    ),
                ));
            }
            self.idx
                .insert(name.clone(), (self.order.len() as u32, line));
            self.order.push(name);
        }
        Ok(())
    }

    fn lookup(&self, name: &str, template: &str, replica: u64) -> Result<u32, String> {
        if let Some(&(i, _)) = self.idx.get(name) {
            return Ok(i);
        }
        let mut known: Vec<&str> = self.order.iter().take(12).map(String::as_str).collect();
        if self.order.len() > 12 {
            known.push("...");
        }
        let known = if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        };
        let from = if name != template {
            format!(" (from '{template}' in replica {replica})")
        } else {
            String::new()
        };
        Err(format!(
            "unknown {} '{name}'{from}; declared: {known}",
            self.what
        ))
    }
}

fn check_name(src: &Src, what: &str, name: &str, line: usize) -> Result<(), WorkloadError> {
    if name.is_empty() || name.contains(char::is_whitespace) || name.contains('#') {
        return Err(src.err_at_line(
            line,
            format!("{what} name '{name}' must be non-empty, without spaces or '#'"),
        ));
    }
    Ok(())
}

pub(crate) fn build(src: &Src, doc: Doc) -> Result<Workload, WorkloadError> {
    let mut chans = Names::new("channel");
    let mut channels = Vec::new();
    let mut chan_lines = Vec::new();
    for d in &doc.channels {
        chans.declare(src, &d.name, d.count, d.line)?;
        let capacity = d.capacity.unwrap_or_else(|| default_capacity(d.kind));
        while channels.len() < chans.order.len() {
            let name = chans.order[channels.len()].clone();
            channels.push(ChannelSpec {
                name,
                kind: d.kind,
                capacity,
            });
            chan_lines.push(d.line);
        }
    }
    let mut futs = Names::new("futex");
    for d in &doc.futexes {
        futs.declare(src, &d.name, d.count, d.line)?;
    }

    let mut sync = SyncNames::default();
    let mut tasks: Vec<TaskSpec> = Vec::new();
    let mut task_lines: HashMap<String, usize> = HashMap::new();
    let mut mm_keys: Vec<Option<String>> = Vec::new();
    let mut groups: HashMap<String, u32> = HashMap::new();
    for d in &doc.tasks {
        let stmts = parse_program(src, d)?;
        for j in 0..d.count {
            let name = if d.name.contains('{') {
                expand(&d.name, j, d.count, false).map_err(|e| src.err_at_line(d.line, e))?
            } else if d.count > 1 {
                format!("{}.{j}", d.name)
            } else {
                d.name.clone()
            };
            if let Some(first) = task_lines.insert(name.clone(), d.line) {
                return Err(src.err_at_line(
                    d.line,
                    format!("task name '{name}' is used twice (first at line {first})"),
                ));
            }
            let program = compile(src, &stmts, j, d.count, &chans, &futs, &channels, &mut sync)?;
            let mut t = TaskSpec::new(name, program);
            // A task file's tasks exist from time 0 (FORMAT.md): nobody forks them.
            t.origin = crate::Origin::Existing;
            t.nice = d.nice;
            t.smt_throughput = d.smt_throughput;
            if let Some((tmpl, line)) = &d.cpus {
                let list =
                    expand(tmpl, j, d.count, false).map_err(|e| src.err_at_line(*line, e))?;
                let set = crate::cpulist::parse_cpu_list(&list)
                    .map_err(|e| src.err_at_line(*line, format!("'cpus': {e}")))?;
                if set.is_empty() {
                    return Err(src.err_at_line(*line, "'cpus' is empty"));
                }
                t.allowed = Some(set);
            }
            if let Some((c, line)) = d.start_cpu {
                if t.allowed.as_ref().is_some_and(|a| !a.contains(c as usize)) {
                    return Err(src.err_at_line(line, format!("'start_cpu' {c} is not in 'cpus'")));
                }
                t.start_cpu = Some(c as u32);
            }
            if let Some((tmpl, line)) = &d.group {
                let key = expand(tmpl, j, d.count, false).map_err(|e| src.err_at_line(*line, e))?;
                t.group = if key == "root" || key == "0" {
                    0
                } else {
                    let next = groups.len() as u32 + 1;
                    *groups.entry(key).or_insert(next)
                };
            }
            mm_keys.push(match &d.mm {
                None => None,
                Some((tmpl, line)) => {
                    Some(expand(tmpl, j, d.count, false).map_err(|e| src.err_at_line(*line, e))?)
                }
            });
            tasks.push(t);
        }
        if tasks.len() as i64 > super::doc::MAX_COUNT {
            return Err(src.err_at_line(
                d.line,
                format!("more than {} tasks in total", super::doc::MAX_COUNT),
            ));
        }
    }
    assign_mms(&mut tasks, &mm_keys);
    check_channel_balance(src, &tasks, &channels, &chan_lines)?;
    for (m, line) in [doc.start_mark, doc.end_mark].into_iter().flatten() {
        let used = tasks.iter().any(|t| t.program.contains(&Op::Mark(m)));
        if !used {
            return Err(src.err_at_line(
                line,
                format!("mark {m} is never recorded by any task's program"),
            ));
        }
    }
    let name = doc.name.clone().unwrap_or_else(|| {
        let base = src.path.rsplit('/').next().unwrap_or(src.path);
        base.strip_suffix(".toml").unwrap_or(base).to_string()
    });
    Ok(Workload {
        name,
        tasks,
        channels,
        futexes: futs.order.len() as u32,
        reporter: Box::new(TaskFileReporter {
            start_mark: doc.start_mark.map(|m| m.0),
            end_mark: doc.end_mark.map(|m| m.0),
        }),
        duration: None,
    })
}

/// Tasks naming the same `mm` share an address space (threads of one process); ids follow
/// first appearance from 1. A task without `mm` is a process of its own.
fn assign_mms(tasks: &mut [TaskSpec], keys: &[Option<String>]) {
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let mut next = 1u32;
    for (t, k) in tasks.iter_mut().zip(keys) {
        t.mm = match k {
            Some(k) => *ids.entry(k.as_str()).or_insert_with(|| {
                next += 1;
                next - 1
            }),
            None => {
                next += 1;
                next - 1
            }
        };
    }
}

/// Parses the program lines and checks that loops are balanced.
fn parse_program(src: &Src, d: &TaskDecl) -> Result<Vec<(usize, Stmt)>, WorkloadError> {
    let mut out = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for (line, text) in &d.program {
        let Some(s) = parse_stmt(text).map_err(|e| src.err_at_line(*line, e))? else {
            continue;
        };
        match s {
            Stmt::Loop(_) => open.push(*line),
            Stmt::End if open.pop().is_none() => {
                return Err(src.err_at_line(*line, "'}' without a matching 'loop'"));
            }
            _ => {}
        }
        out.push((*line, s));
    }
    if let Some(&line) = open.last() {
        return Err(src.err_at_line(line, "'loop' is never closed with '}'"));
    }
    if out.is_empty() {
        return Err(src.err_at_line(
            d.program_line,
            format!("the program of task '{}' is empty", d.name),
        ));
    }
    Ok(out)
}

/// Barrier, mutex and per-CPU lock-array names, declared by use: ids in order of first
/// appearance; a barrier keeps the party count (and line) it was first used with.
#[derive(Default)]
struct SyncNames {
    barriers: HashMap<String, (u32, u32, usize)>,
    mutexes: HashMap<String, u32>,
    cpu_lock_sets: HashMap<String, u32>,
}

/// Compiles the statements for replica `j` of `count`.
#[allow(clippy::too_many_arguments)]
fn compile(
    src: &Src,
    stmts: &[(usize, Stmt)],
    j: u64,
    count: u64,
    chans: &Names,
    futs: &Names,
    channels: &[ChannelSpec],
    sync: &mut SyncNames,
) -> Result<Program, WorkloadError> {
    let mut prog: Program = Vec::with_capacity(stmts.len() + 1);
    let mut open: Vec<usize> = Vec::new();
    for (line, s) in stmts {
        let at = |e: String| src.err_at_line(*line, e);
        let resolve = |names: &Names, tmpl: &str| -> Result<u32, WorkloadError> {
            let name = expand(tmpl, j, count, true).map_err(at)?;
            names.lookup(&name, tmpl, j).map_err(at)
        };
        let chan_op = |tmpl: &str, bytes: u64, verb: &str| -> Result<u32, WorkloadError> {
            let c = resolve(chans, tmpl)?;
            let ch = &channels[c as usize];
            if bytes > ch.capacity {
                return Err(at(format!(
                    "{verb} of {bytes} bytes can never complete: channel '{}' holds at most {} bytes",
                    ch.name, ch.capacity
                )));
            }
            Ok(c)
        };
        let op = match s {
            Stmt::Compute(d) => Op::Compute(d.clone()),
            Stmt::Sleep(d) => Op::Sleep(d.clone()),
            Stmt::Send { chan, bytes } => Op::Send {
                chan: chan_op(chan, *bytes, "a send")?,
                bytes: *bytes,
            },
            Stmt::SendDgram { chan, bytes } => Op::SendDgram {
                chan: chan_op(chan, *bytes, "a sendto")?,
                bytes: *bytes,
            },
            Stmt::Recv { chan, bytes } => Op::Recv {
                chan: chan_op(chan, *bytes, "a recv")?,
                bytes: *bytes,
            },
            Stmt::Wait { futex } => Op::FutexWait {
                futex: resolve(futs, futex)?,
            },
            Stmt::Wake { futex, n, kind } => {
                let futex = resolve(futs, futex)?;
                match kind {
                    WakeKind::Post => Op::FutexWake { futex, n: *n },
                    WakeKind::Waiters => Op::FutexWakeWaiters { futex, n: *n },
                    WakeKind::AllSync => Op::FutexWakeAllSync { futex },
                }
            }
            Stmt::Mark(m) => Op::Mark(*m),
            Stmt::Exit => Op::Exit,
            Stmt::Call { cpu, wait } if cpu == "all" => Op::CallFuncAll { wait: *wait },
            Stmt::Call { cpu, wait } => {
                let c = expand(cpu, j, count, false).map_err(at)?;
                let c: u32 = c.parse().map_err(|_| at(format!("'call' needs a CPU number, got '{c}'")))?;
                if c as usize >= wakesim_machine::MAX_CPUS {
                    return Err(at(format!("CPU {c} is not a CPU number")));
                }
                Op::CallFunc { cpu: c, wait: *wait }
            }
            Stmt::Barrier { name, parties } => {
                let n = expand(name, j, count, true).map_err(at)?;
                let next = sync.barriers.len() as u32;
                let &mut (id, p, first) = sync.barriers.entry(n.clone()).or_insert((next, *parties, *line));
                if p != *parties {
                    return Err(at(format!("barrier '{n}' has {parties} parties here but {p} at line {first}")));
                }
                Op::Barrier { id, parties: p }
            }
            Stmt::Lock { name } | Stmt::Unlock { name } => {
                let n = expand(name, j, count, true).map_err(at)?;
                let next = sync.mutexes.len() as u32;
                let id = *sync.mutexes.entry(n).or_insert(next);
                if matches!(s, Stmt::Lock { .. }) {
                    Op::Lock { id }
                } else {
                    Op::Unlock { id }
                }
            }
            Stmt::CpuLock { name } | Stmt::CpuUnlock { name } => {
                let n = expand(name, j, count, true).map_err(at)?;
                let next = sync.cpu_lock_sets.len() as u32;
                let set = *sync.cpu_lock_sets.entry(n).or_insert(next);
                if matches!(s, Stmt::CpuLock { .. }) {
                    Op::CpuSpinLock { set }
                } else {
                    Op::CpuSpinUnlock { set }
                }
            }
            Stmt::Every(p) => Op::SleepUntilNext { period: *p },
            Stmt::Loop(n) => {
                open.push(prog.len());
                Op::LoopStart { count: *n, end: 0 }
            }
            Stmt::End => {
                let Some(start) = open.pop() else {
                    return Err(at("'}' without a matching 'loop'".into()));
                };
                let end = prog.len();
                if let Some(Op::LoopStart { end: e, .. }) = prog.get_mut(start) {
                    *e = end as u32;
                }
                Op::LoopEnd {
                    start: start as u32,
                }
            }
        };
        prog.push(op);
    }
    if prog.last() != Some(&Op::Exit) {
        prog.push(Op::Exit);
    }
    if prog.len() > u32::MAX as usize {
        return Err(src.err_at_line(stmts.first().map_or(1, |s| s.0), "program too long"));
    }
    Ok(prog)
}

/// Readers wanting more bytes than writers send would block forever; so would writers leaving
/// more unread bytes than the buffer holds (except UDP, whose receiver drops instead).
fn check_channel_balance(
    src: &Src,
    tasks: &[TaskSpec],
    channels: &[ChannelSpec],
    lines: &[usize],
) -> Result<(), WorkloadError> {
    let mut total = OpCounts::default();
    for t in tasks {
        total.add(&op_counts(&t.program));
    }
    for (c, ch) in channels.iter().enumerate() {
        let sent = total.sent.get(c).map_or(0, |s| s.1);
        let recv = total.received.get(c).map_or(0, |s| s.1);
        if sent == u64::MAX || recv == u64::MAX {
            continue; // a `loop forever` side: runs until the duration cap
        }
        let line = lines.get(c).copied().unwrap_or(1);
        if recv > sent {
            return Err(src.err_at_line(line, format!(
                "channel '{}': the tasks read {recv} bytes but only {sent} are written, so a reader would block forever",
                ch.name
            )));
        }
        if ch.kind != ChanKind::UdpLoopback && sent - recv > ch.capacity {
            return Err(src.err_at_line(line, format!(
                "channel '{}': {sent} bytes are written but only {recv} read; the {} left over exceed its capacity of {} bytes, so a writer would block forever",
                ch.name, sent - recv, ch.capacity
            )));
        }
    }
    Ok(())
}
