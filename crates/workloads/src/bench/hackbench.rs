//! hackbench: rt-tests' `hackbench` (`woodsts/rt-tests@e6fb0b2:src/hackbench/hackbench.c`) and
//! `perf bench sched messaging` (`torvalds/linux@010e85f9:tools/perf/bench/sched-messaging.c`),
//! both Rusty Russell's hackbench.
//!
//! Task graph, per group: `fds` receivers, each owning one socketpair/pipe, and `fds` senders
//! that each write `loops` × `fds` messages of `datasize` bytes, one to every receiver in turn
//! (`for i < loops: for j < fds: write(out_fds[j])`); a receiver reads `fds × loops` messages.
//! Every child first writes one byte to the shared "ready" fd and polls the "wake" fd; main
//! reads one byte per child, takes the start time, writes one byte that wakes every poller,
//! then reaps every child and takes the stop time. Printed: rt-tests `Time: s.mmm`, perf
//! `Total time: s.mmm [sec]` (milliseconds truncated).
//!
//! Modelling choices:
//! * the "wake" fd releases all children at once: a futex wake of all of them (the real
//!   pipe/socket poll wakeup is a sync broadcast, which the language cannot express);
//! * reaping: a process exit wakes the parent in `wait()` with a sync wakeup
//!   (`__wake_up_parent`), modelled as a 1-byte pipe write per child that main reads; threads
//!   are joined in creation order (`pthread_join`, a non-sync futex wake per thread);
//! * buffer depth: a pipe holds 16 pages of ⌊4096/datasize⌋ merged writes; a unix socket
//!   ⌈sk_sndbuf/truesize⌉ writes ([`crate::defaults::unix_stream_capacity`]); `-i` TCP the
//!   receive buffer.

use super::perf::{self, BenchOpts, PerfFormat};
use super::prog::Prog;
use super::{Invocation, Tool};
use crate::args::{self, Opt};
use crate::defaults::{pipe_capacity_for, unix_stream_capacity, PIPE_CAPACITY, TCP_CAPACITY};
use crate::marks::measured_span;
use crate::{ChanKind, ChannelSpec, Metric, Outcome, Reporter, TaskSpec, Workload, WorkloadError};

pub(crate) const PERF_TOOL: Tool = Tool {
    name: "perf bench sched messaging",
    command: &["perf", "bench", "sched", "messaging"],
    flags: "-g/--group N (10), -l/--nr_loops N (100), -p/--pipe, -t/--thread; 20 fds, 100-byte \
            messages; perf bench -f/--format default|simple",
    build: build_perf,
};

pub(crate) const RT_TOOL: Tool = Tool {
    name: "hackbench",
    command: &["hackbench"],
    flags: "-g/--groups N (10), -f/--fds N (20), -l/--loops N (100), -s/--datasize BYTES (100), \
            -p/--pipe | -i/--inet (unix sockets), -T/--threads | -P/--process (rt-tests)",
    build: build_rt,
};

/// Mark main records when it takes the start time (after every child is ready).
pub const MARK_START: u32 = 0;
/// Mark main records after reaping the last child.
pub const MARK_END: u32 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavour {
    RtTests,
    Perf(PerfFormat),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub groups: u32,
    pub fds: u32,
    pub loops: u32,
    pub datasize: u32,
    pub kind: ChanKind,
    pub threads: bool,
    pub flavour: Flavour,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            groups: 10,
            fds: 20,
            loops: 100,
            datasize: 100,
            kind: ChanKind::UnixStream,
            threads: false,
            flavour: Flavour::RtTests,
        }
    }
}

const PERF_OPTS: &[Opt] = &[
    Opt { short: Some('p'), long: "pipe", value: false },
    Opt { short: Some('t'), long: "thread", value: false },
    Opt { short: Some('g'), long: "group", value: true },
    Opt { short: Some('l'), long: "nr_loops", value: true },
];

const RT_OPTS: &[Opt] = &[
    Opt { short: Some('f'), long: "fds", value: true },
    Opt { short: Some('F'), long: "fifo", value: false },
    Opt { short: Some('g'), long: "groups", value: true },
    Opt { short: Some('l'), long: "loops", value: true },
    Opt { short: Some('p'), long: "pipe", value: false },
    Opt { short: Some('i'), long: "inet", value: false },
    Opt { short: Some('s'), long: "datasize", value: true },
    Opt { short: Some('T'), long: "threads", value: false },
    Opt { short: Some('P'), long: "process", value: false },
];

/// A whole number in `1..=max` for `g`.
pub(crate) fn positive(tool: &str, g: &args::Given, max: u64) -> Result<u64, WorkloadError> {
    let n = args::int_value(tool, g)?;
    if n <= 0 || n as u64 > max {
        return Err(WorkloadError::arg(
            tool,
            format!("'{}' must be in 1..={max}, got {n}", g.spelled),
        ));
    }
    Ok(n as u64)
}

pub(crate) fn no_positional(tool: &str, p: &args::Parsed) -> Result<(), WorkloadError> {
    match p.positional.first() {
        Some(a) => Err(WorkloadError::arg(tool, format!("unexpected argument '{a}'"))),
        None => Ok(()),
    }
}

/// Caps that keep a typo from building millions of tasks (40 per group).
const MAX_GROUPS: u64 = 20_000;
const MAX_FDS: u64 = 1_000;

fn build_perf(inv: &Invocation) -> Result<Workload, WorkloadError> {
    Ok(workload(&parse_perf(inv.args, inv.perf)?))
}

fn build_rt(inv: &Invocation) -> Result<Workload, WorkloadError> {
    Ok(workload(&parse_rt(inv.args)?))
}

/// Parses `perf bench sched messaging` flags.
pub fn parse_perf(argv: &[String], perf: BenchOpts) -> Result<Options, WorkloadError> {
    let tool = PERF_TOOL.name;
    let p = args::parse(tool, argv, PERF_OPTS, false)?;
    no_positional(tool, &p)?;
    let mut o = Options { flavour: Flavour::Perf(perf.format), ..Options::default() };
    for g in &p.opts {
        match g.long {
            "pipe" => o.kind = ChanKind::Pipe,
            "thread" => o.threads = true,
            "group" => o.groups = positive(tool, g, MAX_GROUPS)? as u32,
            _ => o.loops = positive(tool, g, u64::from(u32::MAX))? as u32,
        }
    }
    Ok(o)
}

/// Parses rt-tests `hackbench` flags.
pub fn parse_rt(argv: &[String]) -> Result<Options, WorkloadError> {
    let tool = RT_TOOL.name;
    let p = args::parse(tool, argv, RT_OPTS, false)?;
    no_positional(tool, &p)?;
    let mut o = Options::default();
    let (mut pipe, mut inet) = (false, false);
    for g in &p.opts {
        match g.long {
            "fds" => o.fds = positive(tool, g, MAX_FDS)? as u32,
            "groups" => o.groups = positive(tool, g, MAX_GROUPS)? as u32,
            "loops" => o.loops = positive(tool, g, u64::from(u32::MAX))? as u32,
            "datasize" => o.datasize = positive(tool, g, 65_536)? as u32,
            "pipe" => pipe = true,
            "inet" => inet = true,
            "threads" => o.threads = true,
            "process" => o.threads = false,
            _ => {
                return Err(WorkloadError::arg(
                    tool,
                    format!("'{}' (SCHED_FIFO main thread) is not modelled", g.spelled),
                ))
            }
        }
    }
    if pipe && inet {
        return Err(WorkloadError::arg(tool, "--pipe|-p and --inet|-i cannot be used together"));
    }
    o.kind = if pipe {
        ChanKind::Pipe
    } else if inet {
        ChanKind::TcpLoopback
    } else {
        ChanKind::UnixStream
    };
    Ok(o)
}

/// Bytes of `datasize` writes a data channel of `kind` buffers before its writers block.
pub fn data_capacity(kind: ChanKind, datasize: u64) -> u64 {
    match kind {
        ChanKind::Pipe => pipe_capacity_for(datasize, PIPE_CAPACITY),
        ChanKind::UnixStream => unix_stream_capacity(datasize),
        ChanKind::TcpLoopback | ChanKind::UdpLoopback => TCP_CAPACITY.max(datasize),
    }
}

/// The task graph: task 0 is main, then per group `fds` receivers and `fds` senders (the
/// order the tools fork them in).
pub fn workload(o: &Options) -> Workload {
    let (g, f, d) = (o.groups, o.fds, u64::from(o.datasize));
    let children = 2 * g * f;
    // Channels: g*f data channels, then "ready" and "reap".
    let ready = g * f;
    let reap = ready + 1;
    let mut channels: Vec<ChannelSpec> = (0..g * f)
        .map(|c| ChannelSpec {
            name: format!("group{}.fd{}", c / f, c % f),
            kind: o.kind,
            capacity: data_capacity(o.kind, d),
        })
        .collect();
    channels.push(ChannelSpec { name: "ready".into(), kind: o.kind, capacity: default_cap(o.kind) });
    channels.push(ChannelSpec { name: "reap".into(), kind: ChanKind::Pipe, capacity: PIPE_CAPACITY });
    // Futex 0: the start signal; in thread mode 1 + i: thread i's exit (join).
    let go = 0u32;
    let mut tasks = Vec::with_capacity(children as usize + 1);
    let mut main = Prog::new();
    main.repeat(u64::from(children)).recv(ready, 1).end();
    // write(wakefd): every child polls it, so one sync wake of all of them (and a child that
    // polls late finds the byte there).
    main.mark(MARK_START).wake_all_sync(go);
    if o.threads {
        for i in 0..children {
            main.wait(1 + i);
        }
    } else {
        main.repeat(u64::from(children)).recv(reap, 1).end();
    }
    main.mark(MARK_END);
    tasks.push(TaskSpec { mm: 1, ..TaskSpec::new(main_name(o), main.build()) });
    let mut idx = 0u32;
    let finish = |p: &mut Prog, idx: u32| {
        if o.threads {
            p.wake(1 + idx, 1);
        } else {
            p.send(reap, 1);
        }
    };
    for grp in 0..g {
        for r in 0..f {
            let mut p = Prog::new();
            p.send(ready, 1).wait(go);
            p.repeat(u64::from(f) * u64::from(o.loops)).recv(grp * f + r, d).end();
            finish(&mut p, idx);
            tasks.push(TaskSpec::new(format!("receiver.{grp}.{r}"), p.build()));
            idx += 1;
        }
        for s in 0..f {
            let mut p = Prog::new();
            p.send(ready, 1).wait(go);
            p.repeat(u64::from(o.loops));
            for j in 0..f {
                p.send(grp * f + j, d);
            }
            p.end();
            finish(&mut p, idx);
            tasks.push(TaskSpec::new(format!("sender.{grp}.{s}"), p.build()));
            idx += 1;
        }
    }
    for (i, t) in tasks.iter_mut().enumerate().skip(1) {
        // Threads share main's address space; forked children have their own.
        t.mm = if o.threads { 1 } else { 1 + i as u32 };
    }
    Workload {
        name: match o.flavour {
            Flavour::RtTests => RT_TOOL.name.into(),
            Flavour::Perf(_) => PERF_TOOL.name.into(),
        },
        tasks,
        channels,
        futexes: if o.threads { 1 + children } else { 1 },
        reporter: Box::new(HackbenchReporter { opts: *o }),
        duration: None,
    }
}

fn default_cap(kind: ChanKind) -> u64 {
    crate::defaults::default_capacity(kind)
}

fn main_name(o: &Options) -> String {
    match o.flavour {
        Flavour::RtTests => "hackbench".into(),
        Flavour::Perf(_) => "perf".into(),
    }
}

/// Prints what rt-tests hackbench or perf prints.
#[derive(Debug, Clone)]
pub struct HackbenchReporter {
    pub opts: Options,
}

impl HackbenchReporter {
    /// The measured time in ns: start mark to the last reap.
    pub fn span(&self, out: &Outcome) -> u64 {
        measured_span(out, Some(MARK_START), Some(MARK_END))
    }

    /// `s.mmm` as both tools print it (timersub of gettimeofday, msec truncated).
    pub fn seconds_text(&self, out: &Outcome) -> String {
        let (sec, usec) = perf::timeval(self.span(out));
        format!("{sec}.{:03}", usec / 1_000)
    }
}

impl Reporter for HackbenchReporter {
    fn render(&self, out: &Outcome) -> String {
        let o = &self.opts;
        let t = self.seconds_text(out);
        let mut s = String::new();
        match o.flavour {
            Flavour::RtTests => {
                s += &format!(
                    "Running in {} mode with {} groups using {} file descriptors each (== {} tasks)\n",
                    if o.threads { "threaded" } else { "process" },
                    o.groups,
                    2 * o.fds,
                    o.groups * o.fds * 2
                );
                s += &format!("Each sender will pass {} messages of {} bytes\n", o.loops, o.datasize);
                if !out.capped {
                    s += &format!("Time: {t}\n");
                }
            }
            Flavour::Perf(fmt) => {
                s += &perf::header(fmt, "sched", "messaging");
                let who = if o.threads { "threads" } else { "processes" };
                match fmt {
                    PerfFormat::Default => {
                        s += &format!("# {} sender and receiver {who} per group\n", o.fds);
                        s += &format!(
                            "# {} groups == {} {who} run\n\n",
                            o.groups,
                            o.groups * 2 * o.fds
                        );
                        if !out.capped {
                            s += &format!(" {:>14}: {t} [sec]\n", "Total time");
                        }
                    }
                    PerfFormat::Simple if !out.capped => s += &format!("{t}\n"),
                    PerfFormat::Simple => {}
                }
            }
        }
        if out.capped {
            s += "# wakesim: the run hit the duration cap before the benchmark finished: no time to report\n";
        }
        s
    }

    fn metric(&self, out: &Outcome) -> Metric {
        Metric {
            name: "time".into(),
            unit: "s".into(),
            value: self.span(out) as f64 / 1e9,
            higher_is_better: false,
        }
    }
}
