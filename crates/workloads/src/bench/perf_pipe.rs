//! `perf bench sched pipe` (tools/perf/bench/sched-pipe.c, after Ingo Molnar's pipe-test-1m.c).
//!
//! Two workers and two pipes; each loop iteration is one 4-byte round trip. Worker 0 reads
//! `pipe_1` and writes `pipe_2`; worker 1 writes `pipe_1` and reads `pipe_2`. Process mode forks
//! worker 0 as a child (its own mm) and runs worker 1 in perf itself; `-T` runs both as threads of
//! one process (one mm). perf takes `gettimeofday` before starting the workers and after reaping
//! both, prints the total, `usecs/op` = total µs / loops and `ops/sec`.
//!
//! Until 2025 worker 0 did `read; write` and worker 1 `write; read` (a strict ping-pong, the
//! version every published result up to then used). Dirk Gouders' "perf bench sched pipe: fix
//! enforced blocking reads in worker_thread" (LKML, Mar 2025, acked by Ingo Molnar: "this was
//! unintended") made both workers `write; read`, which roughly halves context switches and time.
//! [`PipeVariant`] selects either; the command line builds the classic ping-pong.

use super::perf::{self, BenchOpts, PerfFormat};
use super::{Invocation, Tool};
use crate::args::{self, Opt};
use crate::defaults::{round_pipe_size, PIPE_CAPACITY, PIPE_MAX_SIZE};
use crate::marks::measured_span;
use crate::{
    ChanKind, ChannelSpec, Metric, Op, Outcome, Reporter, TaskSpec, Workload, WorkloadError,
};

pub(crate) const TOOL: Tool = Tool {
    name: "perf bench sched pipe",
    command: &["perf", "bench", "sched", "pipe"],
    flags: "-l/--loop N (default 1000000), -T/--threaded, -G/--cgroups SEND,RECV, \
            -s/--write-size BYTES; perf bench -f/--format default|simple",
    build,
};

/// `LOOPS_DEFAULT` in sched-pipe.c.
pub const LOOPS_DEFAULT: u32 = 1_000_000;

/// Mark recorded by worker 1 (perf's own process) before the loop: perf's start timestamp.
pub const MARK_START: u32 = 0;
/// Mark recorded by each worker after its loop; the last one is perf's stop timestamp.
pub const MARK_END: u32 = 1;

/// Which worker loop the modelled perf version runs (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PipeVariant {
    /// Worker 0: `read; write`, worker 1: `write; read` (perf up to early 2025).
    #[default]
    PingPong,
    /// Both workers `write; read` (after the March 2025 fix).
    WriteFirst,
}

/// Parsed `perf bench sched pipe` options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipeOptions {
    pub loops: u32,
    pub threaded: bool,
    /// `-G SEND,RECV`: cgroup of worker 0 and of worker 1.
    pub cgroups: Option<(String, String)>,
    /// `-s`: bytes per write (default `sizeof(int)`).
    pub write_size: u32,
    pub variant: PipeVariant,
    pub format: PerfFormat,
}

impl Default for PipeOptions {
    fn default() -> Self {
        PipeOptions {
            loops: LOOPS_DEFAULT,
            threaded: false,
            cgroups: None,
            write_size: 4,
            variant: PipeVariant::PingPong,
            format: PerfFormat::Default,
        }
    }
}

const OPTS: &[Opt] = &[
    Opt {
        short: Some('l'),
        long: "loop",
        value: true,
    },
    Opt {
        short: Some('T'),
        long: "threaded",
        value: false,
    },
    Opt {
        short: Some('G'),
        long: "cgroups",
        value: true,
    },
    Opt {
        short: Some('s'),
        long: "write-size",
        value: true,
    },
    Opt {
        short: Some('n'),
        long: "nonblocking",
        value: false,
    },
];

fn build(inv: &Invocation) -> Result<Workload, WorkloadError> {
    Ok(workload(&parse_args(inv.args, inv.perf)?))
}

/// Parses the flags after `perf bench sched pipe`.
pub fn parse_args(argv: &[String], perf: BenchOpts) -> Result<PipeOptions, WorkloadError> {
    let tool = TOOL.name;
    let p = args::parse(tool, argv, OPTS, false)?;
    if let Some(a) = p.positional.first() {
        return Err(WorkloadError::arg(
            tool,
            format!("unexpected argument '{a}'"),
        ));
    }
    let mut o = PipeOptions {
        format: perf.format,
        ..PipeOptions::default()
    };
    for g in &p.opts {
        match g.long {
            "loop" => {
                let n = args::int_value(tool, g)?;
                if n <= 0 {
                    return Err(WorkloadError::arg(
                        tool,
                        format!("'{}' must be at least 1, got {n}", g.spelled),
                    ));
                }
                o.loops = u32::try_from(n)
                    .ok()
                    .filter(|&n| n <= i32::MAX as u32)
                    .ok_or_else(|| {
                        WorkloadError::arg(
                            tool,
                            format!(
                                "'{}' {n} is too large (perf counts loops in an int)",
                                g.spelled
                            ),
                        )
                    })?;
            }
            "threaded" => o.threaded = true,
            "cgroups" => {
                let v = g.value.as_deref().unwrap_or("");
                match v.split_once(',') {
                    Some((a, b)) if !a.is_empty() && !b.is_empty() => {
                        o.cgroups = Some((a.into(), b.into()))
                    }
                    _ => {
                        return Err(WorkloadError::arg(
                            tool,
                            format!(
                                "'{}' needs two cgroup names SEND,RECV, got '{v}'",
                                g.spelled
                            ),
                        ))
                    }
                }
            }
            "write-size" => {
                let n = args::int_value(tool, g)?;
                if n <= 0 || n > i64::from(i32::MAX) {
                    return Err(WorkloadError::arg(
                        tool,
                        format!("'{}' must be in 1..{}", g.spelled, i32::MAX),
                    ));
                }
                if n as u64 > PIPE_MAX_SIZE {
                    return Err(WorkloadError::arg(
                        tool,
                        format!(
                            "'{}' {n} exceeds /proc/sys/fs/pipe-max-size ({PIPE_MAX_SIZE})",
                            g.spelled
                        ),
                    ));
                }
                o.write_size = n as u32;
            }
            _ => {
                return Err(WorkloadError::arg(
                    tool,
                    format!(
                        "option '{}' (epoll-based non-blocking reads) is not modelled",
                        g.spelled
                    ),
                ))
            }
        }
    }
    Ok(o)
}

/// The task graph for `o`.
pub fn workload(o: &PipeOptions) -> Workload {
    let bytes = u64::from(o.write_size);
    // sched-pipe.c resize_pipes(): F_SETPIPE_SZ(write_size) only when write_size > sizeof(int).
    let capacity = if o.write_size <= 4 {
        PIPE_CAPACITY
    } else {
        round_pipe_size(bytes)
    };
    let (p1, p2) = (0u32, 1u32);
    let looped = |body: [Op; 2]| {
        let [a, b] = body;
        vec![
            Op::LoopStart {
                count: u64::from(o.loops),
                end: 3,
            },
            a,
            b,
            Op::LoopEnd { start: 0 },
        ]
    };
    let w0_body = match o.variant {
        PipeVariant::PingPong => [Op::Recv { chan: p1, bytes }, Op::Send { chan: p2, bytes }],
        PipeVariant::WriteFirst => [Op::Send { chan: p2, bytes }, Op::Recv { chan: p1, bytes }],
    };
    let w1_body = [Op::Send { chan: p1, bytes }, Op::Recv { chan: p2, bytes }];
    let mut prog0 = looped(w0_body);
    prog0.extend([Op::Mark(MARK_END), Op::Exit]);
    let mut prog1 = vec![Op::Mark(MARK_START)];
    // Shift loop indices by the leading mark.
    prog1.extend(looped(w1_body).into_iter().map(|op| match op {
        Op::LoopStart { count, end } => Op::LoopStart {
            count,
            end: end + 1,
        },
        Op::LoopEnd { start } => Op::LoopEnd { start: start + 1 },
        op => op,
    }));
    prog1.extend([Op::Mark(MARK_END), Op::Exit]);

    let mut tasks = vec![
        TaskSpec::new("sched-pipe.0", prog0),
        TaskSpec::new("sched-pipe.1", prog1),
    ];
    // Processes: perf (worker 1) and its forked child (worker 0) have their own mm.
    tasks[0].mm = if o.threaded { 1 } else { 2 };
    tasks[1].mm = 1;
    if let Some((a, b)) = &o.cgroups {
        tasks[0].group = 1;
        tasks[1].group = if a == b { 1 } else { 2 };
    }
    let chan = |name: &str| ChannelSpec {
        name: name.into(),
        kind: ChanKind::Pipe,
        capacity,
    };
    Workload {
        name: TOOL.name.into(),
        tasks,
        channels: vec![chan("pipe_1"), chan("pipe_2")],
        futexes: 0,
        reporter: Box::new(PipeReporter {
            loops: o.loops,
            threaded: o.threaded,
            format: o.format,
        }),
        duration: None,
    }
}

/// Prints what `perf bench sched pipe` prints.
#[derive(Debug, Clone)]
pub struct PipeReporter {
    pub loops: u32,
    pub threaded: bool,
    pub format: PerfFormat,
}

impl PipeReporter {
    /// perf's `result_usec`: the timeval difference in whole microseconds.
    pub fn result_usec(&self, out: &Outcome) -> u64 {
        measured_span(out, Some(MARK_START), Some(MARK_END)) / 1_000
    }

    /// `usecs/op` as printed: `result_usec / loops`.
    pub fn usecs_per_op(&self, out: &Outcome) -> f64 {
        self.result_usec(out) as f64 / f64::from(self.loops.max(1))
    }

    /// `ops/sec` as printed: `(int)(loops / (result_usec / 1e6))`.
    pub fn ops_per_sec(&self, out: &Outcome) -> i32 {
        perf::c_int(f64::from(self.loops) / (self.result_usec(out) as f64 / 1e6))
    }
}

impl Reporter for PipeReporter {
    fn render(&self, out: &Outcome) -> String {
        let (sec, usec) = perf::timeval(measured_span(out, Some(MARK_START), Some(MARK_END)));
        let mut s = perf::header(self.format, "sched", "pipe");
        match self.format {
            PerfFormat::Default => {
                let who = if self.threaded {
                    "threads"
                } else {
                    "processes"
                };
                s += &format!(
                    "# Executed {} pipe operations between two {who}\n\n",
                    self.loops
                );
                s += &format!(" {:>14}: {sec}.{:03} [sec]\n\n", "Total time", usec / 1_000);
                s += &format!(" {:>14.6} usecs/op\n", self.usecs_per_op(out));
                s += &format!(" {:>14} ops/sec\n", self.ops_per_sec(out));
            }
            PerfFormat::Simple => s += &format!("{sec}.{:03}\n", usec / 1_000),
        }
        if out.capped {
            s += "# wakesim: the run hit the duration cap before the benchmark finished\n";
        }
        s
    }

    fn metric(&self, out: &Outcome) -> Metric {
        Metric {
            name: "usecs/op".into(),
            unit: "us".into(),
            value: self.usecs_per_op(out),
            higher_is_better: false,
        }
    }
}
