//! The Chrome JSON trace-event format (the "JSON Object Format" of the Trace Event Format
//! document), which the Perfetto UI and `chrome://tracing` open.
//!
//! What the file holds:
//!
//! * `{"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}`; `otherData` says
//!   the recorded interval and whether recording stopped at the event limit.
//! * Process 1, "CPUs", has one thread per CPU: `tid` = CPU number, named `CPU N`. On each,
//!   complete events (`"ph":"X"`, `ts`/`dur` in µs with ns precision) cover the CPU's time
//!   without overlapping: a task's run slice is named after the task (`cat` `"task"`, `args.task`
//!   = task id); the idle task's time is split into idle-state residency (`poll` or
//!   `idle (C1)`, …, `args.state`) and its kernel work between states (`swapper/N`: exit latency,
//!   the call-function flush, `schedule_idle()`), both with `cat` `"idle"`.
//! * Wakeup arrows: a flow start (`"ph":"s"`) at the wakeup inside the waker's slice and a flow
//!   end (`"ph":"f"`, `"bp":"e"`) at the start of the wakee's next run slice, sharing an `id`;
//!   `name` says how the wakee was queued (`wakeup (wakelist)`, …). A wakeup whose wakee does not
//!   run again within the trace draws no arrow, so every arrow has both ends.
//! * Instant events (`"ph":"i"`, thread scope): `send IPI call-function` / `send IPI reschedule`
//!   on the sender (`args.to`), `IPI call-function` / `IPI reschedule` on the receiver when it
//!   arrives, `poll wake` on a polling idle CPU whose flags were written (`args.from`), and
//!   `migrate` on the destination (`args.task`, `from`, `to`), `ilb kick` on an idle CPU a busy
//!   CPU's tick kicked to balance for the NOHZ-idle CPUs (`args.from`), `ilb skipped` where the
//!   kicked CPU did not (`nohz_csd_func()` saw NEED_RESCHED, as a polling CPU's kick sets it
//!   before v6.13, or the CPU busy).
//! * Process 2, "newidle balance", one thread per CPU: a complete event for each
//!   `sched_balance_newidle()` call (`args.pulled`). It is a separate process so the CPU tracks
//!   stay a flat sequence of slices.
//!
//! * Process 3, "wasted (idle while work waits)", one thread per CPU, present only when the
//!   work-conservation checker flagged something: a complete event `wasted` (`cat` `"wasted"`)
//!   for each interval the idle CPU sat idle while a task waited on `args.from` in its domain of
//!   level `args.state` (`SMT`, `MC`, …).
//!
//! * Process 4, "load balance", one thread per CPU, present only when a periodic or NOHZ idle
//!   balance pass ran in the interval: a complete event `idle balance` or `busy balance` (`cat`
//!   `"balance"`) for each `sched_balance_rq()` pass on the track of the CPU balanced for, with
//!   the domain level (`args.state`), the outcome (`args.result`: `moved`, `failed`,
//!   `active balance`, `balanced`, `not this CPU`, `all pinned`), the busiest CPU found
//!   (`args.from`) and, for a NOHZ idle balance, the kicked CPU that ran it (`args.by`).
//!
//! Events are written in time order (stable for equal times), each a fixed-field-order object,
//! so the same trace always gives the same bytes.

use crate::{IpiKind, LbResult, Stamped, Trace, TraceEvent, WakeHow, NO_IDLE_STATE};
use serde::Serialize;
use std::io::{self, Write};
use wakesim_engine::Time;

const PID_CPUS: u32 = 1;
const PID_NEWIDLE: u32 = 2;
const PID_WASTED: u32 = 3;
const PID_BALANCE: u32 = 4;

/// One trace-event object. Fields not used by a phase are left out.
#[derive(Serialize)]
struct Ev<'a> {
    ph: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    cat: &'static str,
    pid: u32,
    tid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bp: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Args<'a>>,
}

#[derive(Serialize, Default)]
struct Args<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sort_index: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    to: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pulled: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    by: Option<u32>,
}

/// µs with ns precision: `12345` ns → `12.345` (exact: the shortest decimal that reads back as
/// the same double, and `n/1000` is the double nearest to the decimal).
fn us(t: Time) -> f64 {
    t as f64 / 1000.0
}

/// A record waiting to be written: its time, and what it is.
enum Rec {
    /// A complete event whose `dur` is set when the slice closes.
    Slice { pid: u32, cpu: u32, start: Time, end: Time, what: SliceWhat },
    Flow { start: bool, cpu: u32, t: Time, id: u64, how: WakeHow },
    Instant { cpu: u32, t: Time, name: &'static str, args: InstantArgs },
}

#[derive(Clone, Copy)]
enum SliceWhat {
    Task(u32),
    IdleState(u8),
    Newidle { pulled: bool },
    Wasted { waiting_cpu: u32, level: u8 },
    /// A periodic pass for the slice's CPU run by `by`; `result` is set when it ends.
    Balance { by: u32, level: u8, idle: bool, result: Option<LbResult>, src: u32 },
}

#[derive(Clone, Copy, Default)]
struct InstantArgs {
    from: Option<u32>,
    to: Option<u32>,
    task: Option<u32>,
}

impl Rec {
    fn t(&self) -> Time {
        match self {
            Rec::Slice { start, .. } => *start,
            Rec::Flow { t, .. } | Rec::Instant { t, .. } => *t,
        }
    }
}

/// What a CPU track is showing now.
#[derive(Clone, Copy)]
struct Open {
    /// Index of the open slice in the record list, if one is open.
    rec: Option<usize>,
    /// The task on the CPU (for wakeups of a task that is still running).
    task: u32,
}

/// Turns the event list into records: per-CPU slices, flows with both ends, instants.
struct Builder<'t> {
    tr: &'t Trace,
    recs: Vec<Rec>,
    open: Vec<Open>,
    newidle: Vec<Option<usize>>,
    /// Open balance-pass slices, per CPU running them (innermost last).
    balance: Vec<Vec<usize>>,
    /// Wakeup waiting for its wakee's next slice, per task: (time, waker's CPU, how).
    pending: Vec<Option<(Time, u32, WakeHow)>>,
    /// The CPU each task is running on (`u32::MAX`: none).
    running_on: Vec<u32>,
    next_flow: u64,
}

impl<'t> Builder<'t> {
    fn new(tr: &'t Trace) -> Self {
        let n = tr.nr_cpus as usize;
        Builder {
            tr,
            recs: Vec::with_capacity(tr.events.len() + 2 * n),
            open: vec![Open { rec: None, task: u32::MAX }; n],
            newidle: vec![None; n],
            balance: vec![Vec::new(); n],
            pending: vec![None; tr.task_names.len()],
            running_on: vec![u32::MAX; tr.task_names.len()],
            next_flow: 0,
        }
    }

    fn close(&mut self, cpu: u32, t: Time) {
        if let Some(i) = self.open[cpu as usize].rec.take() {
            if let Rec::Slice { end, .. } = &mut self.recs[i] {
                *end = t;
            }
        }
    }

    fn open_slice(&mut self, cpu: u32, t: Time, what: SliceWhat) {
        self.close(cpu, t);
        self.open[cpu as usize].rec = Some(self.recs.len());
        self.recs.push(Rec::Slice { pid: PID_CPUS, cpu, start: t, end: t, what });
    }

    /// `task` starts running on `cpu` at `t`: a new slice, and the arrow of its wakeup.
    fn run(&mut self, cpu: u32, t: Time, task: u32) {
        let old = std::mem::replace(&mut self.open[cpu as usize].task, task);
        if let Some(o) = self.running_on.get_mut(old as usize) {
            *o = u32::MAX;
        }
        self.running_on[task as usize] = cpu;
        self.open_slice(cpu, t, SliceWhat::Task(task));
        if let Some((wt, wcpu, how)) = self.pending[task as usize].take() {
            self.flow(wcpu, wt, cpu, t, how);
        }
    }

    fn flow(&mut self, from_cpu: u32, from_t: Time, to_cpu: u32, to_t: Time, how: WakeHow) {
        let id = self.next_flow;
        self.next_flow += 1;
        self.recs.push(Rec::Flow { start: true, cpu: from_cpu, t: from_t, id, how });
        self.recs.push(Rec::Flow { start: false, cpu: to_cpu, t: to_t, id, how });
    }

    fn instant(&mut self, cpu: u32, t: Time, name: &'static str, args: InstantArgs) {
        self.recs.push(Rec::Instant { cpu, t, name, args });
    }

    fn event(&mut self, s: &Stamped) {
        let t = s.t;
        match s.ev {
            TraceEvent::Switch { cpu, next, .. } => self.run(cpu, t, next),
            TraceEvent::Running { cpu, task, idle_state } => {
                self.run(cpu, t, task);
                if idle_state != NO_IDLE_STATE {
                    self.open_slice(cpu, t, SliceWhat::IdleState(idle_state));
                }
            }
            TraceEvent::IdleEnter { cpu, state } => self.open_slice(cpu, t, SliceWhat::IdleState(state)),
            TraceEvent::IdleExit { cpu } => {
                let idle = self.open[cpu as usize].task;
                self.open_slice(cpu, t, SliceWhat::Task(idle));
            }
            TraceEvent::Wakeup { cpu, wakee, how, .. } => {
                // A wakee still on its CPU (it had not finished blocking): the arrow ends in the
                // slice it is running now.
                let on = self.running_on[wakee as usize];
                if on != u32::MAX {
                    self.flow(cpu, t, on, t, how);
                } else if self.pending[wakee as usize].is_none() {
                    self.pending[wakee as usize] = Some((t, cpu, how));
                }
            }
            TraceEvent::IpiSend { cpu, to, kind } => {
                let name = match kind {
                    IpiKind::CallFunction => "send IPI call-function",
                    IpiKind::Reschedule => "send IPI reschedule",
                };
                self.instant(cpu, t, name, InstantArgs { to: Some(to), ..Default::default() });
            }
            TraceEvent::IpiRecv { cpu, kind } => {
                let name = match kind {
                    IpiKind::CallFunction => "IPI call-function",
                    IpiKind::Reschedule => "IPI reschedule",
                };
                self.instant(cpu, t, name, InstantArgs::default());
            }
            TraceEvent::PollWake { cpu, to } => {
                self.instant(to, t, "poll wake", InstantArgs { from: Some(cpu), ..Default::default() });
            }
            TraceEvent::Migrate { task, from, to } => {
                self.instant(to, t, "migrate", InstantArgs { from: Some(from), to: Some(to), task: Some(task) });
            }
            TraceEvent::NewidleStart { cpu } => {
                self.newidle[cpu as usize] = Some(self.recs.len());
                self.recs.push(Rec::Slice { pid: PID_NEWIDLE, cpu, start: t, end: t, what: SliceWhat::Newidle { pulled: false } });
            }
            TraceEvent::Wasted { cpu, waiting_cpu, start, level } => {
                // Clipped to the recorded interval (the run's last intervals close at its end).
                let (start, end) = (start.max(self.tr.start), t.min(self.tr.end));
                if end > start {
                    self.recs.push(Rec::Slice { pid: PID_WASTED, cpu, start, end, what: SliceWhat::Wasted { waiting_cpu, level } });
                }
            }
            TraceEvent::BalanceStart { cpu, dst, level, idle } => {
                self.balance[cpu as usize].push(self.recs.len());
                let what = SliceWhat::Balance { by: cpu, level, idle, result: None, src: u32::MAX };
                self.recs.push(Rec::Slice { pid: PID_BALANCE, cpu: dst, start: t, end: t, what });
            }
            TraceEvent::BalanceEnd { cpu, result, src } => {
                if let Some(i) = self.balance[cpu as usize].pop() {
                    if let Rec::Slice { end, what: SliceWhat::Balance { result: r, src: s, .. }, .. } = &mut self.recs[i] {
                        *end = t;
                        *r = Some(result);
                        *s = src;
                    }
                }
            }
            TraceEvent::IlbKick { cpu, to } => {
                self.instant(to, t, "ilb kick", InstantArgs { from: Some(cpu), ..Default::default() });
            }
            TraceEvent::IlbSkipped { cpu } => self.instant(cpu, t, "ilb skipped", InstantArgs::default()),
            TraceEvent::NewidleEnd { cpu, pulled } => {
                if let Some(i) = self.newidle[cpu as usize].take() {
                    if let Rec::Slice { end, what, .. } = &mut self.recs[i] {
                        *end = t;
                        *what = SliceWhat::Newidle { pulled };
                    }
                }
            }
        }
    }

    fn finish(mut self) -> Vec<Rec> {
        let end = self.tr.end;
        for c in 0..self.tr.nr_cpus {
            self.close(c, end);
            let open = self.newidle[c as usize].take().into_iter().chain(std::mem::take(&mut self.balance[c as usize]));
            for i in open.collect::<Vec<_>>() {
                if let Rec::Slice { end: e, .. } = &mut self.recs[i] {
                    *e = end;
                }
            }
        }
        // Idle-task bookkeeping slices of zero length carry nothing; task slices stay (one per
        // switch-in, so they can be counted against the schedstats).
        let tr = self.tr;
        self.recs.retain(|r| match r {
            Rec::Slice { start, end, what: SliceWhat::Task(t), .. } => end > start || !tr.is_idle_task(*t),
            Rec::Slice { start, end, what: SliceWhat::IdleState(_), .. } => end > start,
            _ => true,
        });
        // Time order; equal times keep recording order, so a flow end follows the slice it ends in.
        self.recs.sort_by_key(Rec::t);
        self.recs
    }
}

/// Names the records point into: CPU thread names and idle-slice labels.
struct Names {
    cpus: Vec<String>,
    idle: Vec<String>,
}

impl Names {
    fn new(tr: &Trace) -> Names {
        Names {
            cpus: (0..tr.nr_cpus).map(|c| format!("CPU {c}")).collect(),
            // `poll` for the polling state, `idle (C1)` for the others.
            idle: tr
                .idle_states
                .iter()
                .map(|s| if s.eq_ignore_ascii_case("poll") { "poll".to_string() } else { format!("idle ({s})") })
                .collect(),
        }
    }
}

impl Trace {
    /// Writes the trace in the Chrome JSON trace-event format (see the module docs).
    pub fn write_chrome_json<W: Write>(&self, w: W) -> io::Result<()> {
        let mut w = io::BufWriter::new(w);
        let mut b = Builder::new(self);
        for s in &self.events {
            b.event(s);
        }
        let recs = b.finish();
        let names = Names::new(self);
        w.write_all(b"{\"traceEvents\":[\n")?;
        let mut first = true;
        let mut put = |w: &mut io::BufWriter<W>, e: &Ev| -> io::Result<()> {
            if !first {
                w.write_all(b",\n")?;
            }
            first = false;
            serde_json::to_writer(&mut *w, e).map_err(io::Error::from)
        };
        for e in self.metadata(&names) {
            put(&mut w, &e)?;
        }
        for r in &recs {
            put(&mut w, &self.render(r, &names))?;
        }
        let other = serde_json::json!({
            "generator": "wakesim",
            "start_ns": self.start,
            "end_ns": self.end,
            "truncated": self.truncated,
            "recorded_events": self.events.len(),
        });
        write!(w, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{other}}}\n")?;
        w.flush()
    }

    /// The trace as a Chrome JSON string (see [`Trace::write_chrome_json`]).
    pub fn to_chrome_json(&self) -> String {
        let mut v = Vec::new();
        self.write_chrome_json(&mut v).expect("writing to memory cannot fail");
        String::from_utf8(v).expect("serde_json writes UTF-8")
    }

    fn metadata<'a>(&self, names: &'a Names) -> Vec<Ev<'a>> {
        let meta = |name: &'static str, pid: u32, tid: u32, args: Args<'a>| Ev {
            ph: "M",
            name,
            cat: "",
            pid,
            tid,
            ts: None,
            dur: None,
            id: None,
            bp: None,
            s: None,
            args: Some(args),
        };
        let mut v = vec![
            meta("process_name", PID_CPUS, 0, Args { name: Some("CPUs"), ..Default::default() }),
            meta("process_sort_index", PID_CPUS, 0, Args { sort_index: Some(0), ..Default::default() }),
            meta("process_name", PID_NEWIDLE, 0, Args { name: Some("newidle balance"), ..Default::default() }),
            meta("process_sort_index", PID_NEWIDLE, 0, Args { sort_index: Some(1), ..Default::default() }),
        ];
        let mut pids = vec![PID_CPUS, PID_NEWIDLE];
        if self.events.iter().any(|s| matches!(s.ev, TraceEvent::Wasted { .. })) {
            v.push(meta("process_name", PID_WASTED, 0, Args { name: Some("wasted (idle while work waits)"), ..Default::default() }));
            v.push(meta("process_sort_index", PID_WASTED, 0, Args { sort_index: Some(2), ..Default::default() }));
            pids.push(PID_WASTED);
        }
        if self.events.iter().any(|s| matches!(s.ev, TraceEvent::BalanceStart { .. })) {
            v.push(meta("process_name", PID_BALANCE, 0, Args { name: Some("load balance"), ..Default::default() }));
            v.push(meta("process_sort_index", PID_BALANCE, 0, Args { sort_index: Some(3), ..Default::default() }));
            pids.push(PID_BALANCE);
        }
        for pid in pids {
            for c in 0..self.nr_cpus {
                v.push(meta("thread_name", pid, c, Args { name: Some(&names.cpus[c as usize]), ..Default::default() }));
                v.push(meta("thread_sort_index", pid, c, Args { sort_index: Some(c), ..Default::default() }));
            }
        }
        v
    }

    fn render<'a>(&'a self, r: &'a Rec, names: &'a Names) -> Ev<'a> {
        let base = |ph: &'static str, name: &'a str, cat: &'static str, pid: u32, tid: u32, t: Time| Ev {
            ph,
            name,
            cat,
            pid,
            tid,
            ts: Some(us(t)),
            dur: None,
            id: None,
            bp: None,
            s: None,
            args: None,
        };
        match r {
            Rec::Slice { pid, cpu, start, end, what } => {
                let (name, cat, args) = match *what {
                    SliceWhat::Task(t) => {
                        let cat = if self.is_idle_task(t) { "idle" } else { "task" };
                        (self.task_names[t as usize].as_str(), cat, Args { task: Some(t), ..Default::default() })
                    }
                    SliceWhat::IdleState(k) => {
                        let st = self.idle_states.get(k as usize).map_or("?", String::as_str);
                        let label = names.idle.get(k as usize).map_or("idle", String::as_str);
                        (label, "idle", Args { state: Some(st), ..Default::default() })
                    }
                    SliceWhat::Newidle { pulled } => ("newidle", "balance", Args { pulled: Some(pulled), ..Default::default() }),
                    SliceWhat::Wasted { waiting_cpu, level } => {
                        let lvl = self.level_names.get(level as usize).map_or("?", String::as_str);
                        ("wasted", "wasted", Args { from: Some(waiting_cpu), state: Some(lvl), ..Default::default() })
                    }
                    SliceWhat::Balance { by, level, idle, result, src } => {
                        let lvl = self.level_names.get(level as usize).map_or("?", String::as_str);
                        let args = Args {
                            state: Some(lvl),
                            result: Some(result.map_or("unfinished", LbResult::name)),
                            from: (src != u32::MAX).then_some(src),
                            by: (by != *cpu).then_some(by),
                            ..Default::default()
                        };
                        (if idle { "idle balance" } else { "busy balance" }, "balance", args)
                    }
                };
                let mut e = base("X", name, cat, *pid, *cpu, *start);
                e.dur = Some(us(end - start));
                e.args = Some(args);
                e
            }
            Rec::Flow { start, cpu, t, id, how } => {
                let mut e = base(if *start { "s" } else { "f" }, how.flow_name(), "wakeup", PID_CPUS, *cpu, *t);
                e.id = Some(*id);
                if !*start {
                    e.bp = Some("e");
                }
                e
            }
            Rec::Instant { cpu, t, name, args } => {
                let cat = if *name == "migrate" { "sched" } else { "ipi" };
                let mut e = base("i", name, cat, PID_CPUS, *cpu, *t);
                e.s = Some("t");
                e.args = Some(Args { from: args.from, to: args.to, task: args.task, ..Default::default() });
                e
            }
        }
    }
}
