//! The schedule recorder: when a run is traced, the model reports each context switch, wakeup,
//! IPI, polling wake, idle-state change, newidle and periodic balance pass, NOHZ idle-balance kick
//! and migration to a [`Tracer`], which keeps those inside the requested window as a [`Trace`]
//! (the data type and its Chrome JSON writer live in `wakesim-trace`).
//!
//! **Cost when off.** The tracer is an `Option<Box<Tracer>>` on [`Sim`]; every hook is the
//! [`trace_ev!`] macro, which tests that option before building the event, and the recording
//! itself is an out-of-line function. An untraced run pays one predictable branch per hook.
//!
//! **Window.** Events before `window.0` or after `window.1` are not kept. So that the first slice
//! of each CPU has a start, the tracer always knows what every CPU runs (task and idle state),
//! and when the window opens it records one [`TraceEvent::Running`] per CPU at the window's start.
//!
//! **Limit.** At most `limit` events are kept after that opening snapshot. When the next event
//! would exceed it, recording stops for good: the trace is marked `truncated` and ends at that
//! event's time (so every CPU's last slice closes there). The run itself continues unchanged.

use crate::sim::{Config, Sim};
use crate::RunResult;
use wakesim_engine::Time;
use wakesim_trace::{Stamped, Trace, TraceEvent, NO_IDLE_STATE};
use wakesim_workloads::Workload;

/// What to record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceOpts {
    /// Keep only events in `start..=end` (simulated ns); `None`: the whole run.
    pub window: Option<(Time, Time)>,
    /// Most events kept (after the per-CPU opening snapshot); see the module docs.
    pub limit: usize,
}

impl TraceOpts {
    /// Default event limit: about 95 MB of JSON and 120 MB of peak memory while writing
    /// (measured); the default demo (one pipe pair) fills it in 234 ms simulated.
    pub const DEFAULT_LIMIT: usize = 1_000_000;
}

impl Default for TraceOpts {
    fn default() -> Self {
        TraceOpts { window: None, limit: Self::DEFAULT_LIMIT }
    }
}

/// The recorder (see the module docs).
pub struct Tracer {
    opts: TraceOpts,
    events: Vec<Stamped>,
    /// What each CPU runs now: (task, idle state or `NO_IDLE_STATE`), kept outside the window too.
    cur: Vec<(u32, u8)>,
    opened: bool,
    /// Set when the limit stopped recording: the time of the first event not kept.
    stopped_at: Option<Time>,
}

/// Records `$ev` (evaluated only when tracing is on) at the current simulated time.
macro_rules! trace_ev {
    ($sim:expr, $ev:expr) => {
        if $sim.tracer.is_some() {
            let ev = $ev;
            let now = $sim.q.now();
            if let Some(t) = $sim.tracer.as_deref_mut() {
                t.record(now, ev);
            }
        }
    };
}
pub(crate) use trace_ev;

impl Tracer {
    pub fn new(opts: TraceOpts, nr_cpus: usize) -> Tracer {
        Tracer {
            opts,
            events: Vec::new(),
            // The idle task of CPU c has task id c and runs first.
            cur: (0..nr_cpus as u32).map(|c| (c, NO_IDLE_STATE)).collect(),
            opened: false,
            stopped_at: None,
        }
    }

    fn window(&self) -> (Time, Time) {
        self.opts.window.unwrap_or((0, Time::MAX))
    }

    #[inline(never)]
    pub fn record(&mut self, now: Time, ev: TraceEvent) {
        let (start, end) = self.window();
        let keep = self.stopped_at.is_none() && now >= start && now <= end;
        if keep && !self.opened {
            // Nothing recorded has changed since the window's start: snapshot the CPUs as of then.
            self.opened = true;
            for (c, &(task, idle_state)) in self.cur.iter().enumerate() {
                self.events.push(Stamped { t: start, ev: TraceEvent::Running { cpu: c as u32, task, idle_state } });
            }
        }
        match ev {
            TraceEvent::Switch { cpu, next, .. } => self.cur[cpu as usize] = (next, NO_IDLE_STATE),
            TraceEvent::IdleEnter { cpu, state } => self.cur[cpu as usize].1 = state,
            TraceEvent::IdleExit { cpu } => self.cur[cpu as usize].1 = NO_IDLE_STATE,
            _ => {}
        }
        if !keep {
            return;
        }
        if self.events.len() - self.cur.len() >= self.opts.limit {
            self.stopped_at = Some(now);
            return;
        }
        self.events.push(Stamped { t: now, ev });
    }

    /// The trace of a run that ended at `run_end`.
    fn into_trace(self, sim: &Sim, run_end: Time) -> Trace {
        let (start, wend) = self.window();
        let end = self.stopped_at.unwrap_or(run_end.min(wend)).max(start);
        Trace {
            nr_cpus: sim.nr_cpus() as u32,
            task_names: sim.tasks.iter().map(|t| t.name.clone()).collect(),
            idle_states: sim.c.idle_states.iter().map(|s| s.name.clone()).collect(),
            level_names: sim.waste.level_names.clone(),
            events: self.events,
            start,
            end,
            truncated: self.stopped_at.is_some(),
        }
    }
}

impl Sim {
    /// Records the schedule of this run (see [`Sim::run_traced`]).
    pub fn with_trace(mut self, opts: TraceOpts) -> Sim {
        self.tracer = Some(Box::new(Tracer::new(opts, self.nr_cpus())));
        self
    }

    /// Runs like [`Sim::run`] and also returns the trace, if [`Sim::with_trace`] asked for one.
    pub fn run_traced(mut self) -> (RunResult, Option<Trace>) {
        self.run_loop();
        let end = if self.capped { self.cap } else { self.now() };
        let trace = self.tracer.take().map(|t| t.into_trace(&self, end));
        (self.finish(), trace)
    }
}

/// Runs `wl` under `cfg` and records its schedule.
pub fn run_with_trace(cfg: Config, wl: &Workload, opts: TraceOpts) -> Result<(RunResult, Trace), String> {
    let (r, t) = Sim::new(cfg, wl)?.with_trace(opts).run_traced();
    Ok((r, t.expect("tracing was requested")))
}
