//! UnixBench's "Pipe-based Context Switching" (`context1`) and "Pipe Throughput" (`pipe`),
//! `kdlucas/byte-unixbench@986b674:UnixBench/src/context1.c`, `src/pipe.c`, `Run`.
//!
//! * `context1 SECS`: fork; the parent writes its 8-byte counter to pipe 1 and reads the echo
//!   from pipe 2, the child reads pipe 1 and writes pipe 2 — a strict ping-pong with sync pipe
//!   wakeups. An alarm after SECS prints `COUNT|iter|1|lps` (to stderr).
//! * `pipe SECS`: one process writes 512 bytes to a pipe and reads them back; it never blocks.
//!
//! `Run` runs N copies at once (`-c N`) and sums their counts (`runOnePass`), then reports
//! `%-40s %12.1f %-5s (%.1f s, %d samples)` with score = count / time. With `--copies N`
//! wakesim prints each copy's COUNT line, then that summary line for the sum (one pass).
//!
//! Iterations are counted by a mark every [`BATCH`] round trips, so a copy's count is exact to
//! within `BATCH - 1`.

use super::prog::{Prog, FOREVER};
use super::{Invocation, Tool};
use crate::defaults::PIPE_CAPACITY;
use crate::{ChanKind, ChannelSpec, Metric, Outcome, Reporter, TaskSpec, Workload, WorkloadError};
use wakesim_engine::SEC;

pub(crate) const CONTEXT1: Tool = Tool {
    name: "context1",
    command: &["context1"],
    flags: "SECONDS (UnixBench Run uses 10); prints COUNT|iter|1|lps",
    build: build_context1,
};

pub(crate) const PIPE: Tool = Tool {
    name: "pipe",
    command: &["pipe"],
    flags: "SECONDS (UnixBench Run uses 10); prints COUNT|iter|1|lps",
    build: build_pipe,
};

pub const MARK_BATCH: u32 = 0;
pub const BATCH: u64 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    Context1,
    Pipe,
}

impl Test {
    /// The Run script's `logmsg`.
    pub fn logmsg(self) -> &'static str {
        match self {
            Test::Context1 => "Pipe-based Context Switching",
            Test::Pipe => "Pipe Throughput",
        }
    }
}

fn duration(tool: &str, argv: &[String]) -> Result<u64, WorkloadError> {
    let [d] = argv else {
        return Err(WorkloadError::arg(tool, format!("usage: {tool} duration (seconds), got {} arguments", argv.len())));
    };
    // atoi(); alarm(0) would never fire, so a positive count is required.
    let n: i64 = d.trim().parse().map_err(|_| WorkloadError::arg(tool, format!("duration must be whole seconds, got '{d}'")))?;
    if n <= 0 || n > 1_000_000 {
        return Err(WorkloadError::arg(tool, format!("duration must be in 1..=1000000 seconds, got {n}")));
    }
    Ok(n as u64)
}

fn build_context1(inv: &Invocation) -> Result<Workload, WorkloadError> {
    Ok(workload(Test::Context1, duration("context1", inv.args)?))
}

fn build_pipe(inv: &Invocation) -> Result<Workload, WorkloadError> {
    Ok(workload(Test::Pipe, duration("pipe", inv.args)?))
}

pub fn workload(test: Test, secs: u64) -> Workload {
    let pipe = |name: &str| ChannelSpec { name: name.into(), kind: ChanKind::Pipe, capacity: PIPE_CAPACITY };
    let (tasks, channels) = match test {
        Test::Context1 => {
            let mut parent = Prog::new();
            parent.repeat(FOREVER).repeat(BATCH).send(0, 8).recv(1, 8).end().mark(MARK_BATCH).end();
            let mut child = Prog::new();
            child.repeat(FOREVER).recv(0, 8).send(1, 8).end();
            let mut t = vec![TaskSpec::new("context1", parent.build()), TaskSpec::new("context1", child.build())];
            t[0].mm = 1;
            t[1].mm = 2;
            (t, vec![pipe("p1"), pipe("p2")])
        }
        Test::Pipe => {
            let mut p = Prog::new();
            p.repeat(FOREVER).repeat(BATCH).send(0, 512).recv(0, 512).end().mark(MARK_BATCH).end();
            let mut t = vec![TaskSpec::new("pipe", p.build())];
            t[0].mm = 1;
            (t, vec![pipe("pvec")])
        }
    };
    Workload {
        name: match test {
            Test::Context1 => "context1".into(),
            Test::Pipe => "pipe".into(),
        },
        tasks,
        channels,
        futexes: 0,
        reporter: Box::new(UnixbenchReporter { test, secs }),
        duration: Some(secs * SEC),
    }
}

#[derive(Debug, Clone)]
pub struct UnixbenchReporter {
    pub test: Test,
    pub secs: u64,
}

impl UnixbenchReporter {
    /// The parent's `iter` when the alarm fired.
    pub fn count(&self, out: &Outcome) -> u64 {
        out.marks.iter().filter(|m| m.mark == MARK_BATCH && m.task == 0).count() as u64 * BATCH
    }

    /// The time the Run script divides by: the run's length.
    fn time(&self, out: &Outcome) -> f64 {
        out.end_time as f64 / 1e9
    }
}

impl Reporter for UnixbenchReporter {
    fn render(&self, out: &Outcome) -> String {
        format!("COUNT|{}|1|lps\n", self.count(out))
    }

    fn metric(&self, out: &Outcome) -> Metric {
        Metric { name: "lps".into(), unit: "lps".into(), value: self.count(out) as f64 / self.time(out).max(1e-9), higher_is_better: true }
    }

    fn render_copies(&self, outs: &[Outcome]) -> String {
        let mut s: String = outs.iter().map(|o| self.render(o)).collect();
        let sum: u64 = outs.iter().map(|o| self.count(o)).sum();
        let time = outs.first().map_or(0.0, |o| self.time(o));
        s += "\n";
        s += &format!(
            "{:<40} {:>12.1} {:<5} ({:.1} s, {} samples)\n",
            self.test.logmsg(),
            sum as f64 / time.max(1e-9),
            "lps",
            time,
            1
        );
        s
    }
}
