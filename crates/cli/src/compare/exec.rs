//! Running the plan: each run is an independent simulation, spread over `--jobs` threads.
//!
//! Workers take the next run index from a shared counter and put each result in its plan slot,
//! so results are always read in plan order, never in completion order: the output does not
//! depend on the number of threads. Each finished run is saved at once (atomically) when there
//! is an output directory, so an interrupted compare keeps what it finished.

use super::plan::{Experiment, RunSpec};
use super::store::{RunFile, Store};
use crate::run::{duration_cap, workload_copies};
use crate::UserError;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use wakesim_costs::CostProfile;
use wakesim_machine::Machine;
use std::path::Path;
use wakesim_engine::MSEC;
use wakesim_model::{run_with_trace, Config, Features, Sim, TraceOpts};
use wakesim_report::{RunRecord, CDF_PERCENTILES};

/// What every run shares.
pub struct Setup<'a> {
    pub exp: &'a Experiment,
    pub machine: Machine,
    pub costs: CostProfile,
    /// Resolved features per variant.
    pub features: Vec<Features>,
    pub noise: wakesim_model::NoiseProfile,
    pub store: Option<&'a Store>,
}

/// One run: simulate, save its file (with an output directory), return its record.
pub fn run_one(s: &Setup, r: &RunSpec) -> Result<RunRecord, UserError> {
    let wl = workload_copies(&r.command, &s.machine, s.exp.copies)?;
    let cap = duration_cap(s.exp.duration, &wl)?;
    let cfg = Config { machine: s.machine.clone(), costs: s.costs.clone(), features: s.features[r.variant], seed: r.seed, duration_cap: cap, noise: s.noise.clone(), governor: crate::run::resolve_governor(&s.machine, s.exp.governor.as_deref())?, task_groups: crate::run::resolve_task_groups(&s.exp.cgroup)? };
    let res = Sim::new(cfg, &wl).map_err(UserError)?.run();
    let record = RunRecord::new(wl.reporter.metrics(&res.outcome), wl.reporter.latency_percentiles(&res.outcome, &CDF_PERCENTILES), &res.stats);
    if let Some(store) = s.store {
        let point = s.exp.point_dir(&s.exp.points()[r.point]);
        let output = wl.reporter.render(&res.outcome);
        let f = RunFile {
            variant: &s.exp.variants[r.variant].name,
            point: &point,
            run: r.run,
            seed: r.seed,
            argv: s.exp.run_argv(r),
            capped: res.outcome.capped,
            end_time_ns: res.outcome.end_time,
            output: &output,
            record: &record,
            stats: &res.stats,
        };
        store.save(s.exp, r, &f)?;
    }
    Ok(record)
}

/// How much of one run the report's timeline shows: its first 20 simulated ms (enough for
/// thousands of wakeups on any preset), at most 200 000 events (~20 MB of JSON).
const TRACE_OPTS: TraceOpts = TraceOpts { window: Some((0, 20 * MSEC)), limit: 200_000 };

/// Writes the schedule of `r` (the plan's first run: baseline, first sweep point, run 0) to
/// `path` as Chrome trace events, atomically, for the report's per-CPU timeline.
pub fn record_trace(s: &Setup, r: &RunSpec, path: &Path) -> Result<(), UserError> {
    let wl = workload_copies(&r.command, &s.machine, s.exp.copies)?;
    let cap = duration_cap(s.exp.duration, &wl)?;
    let cfg = Config { machine: s.machine.clone(), costs: s.costs.clone(), features: s.features[r.variant], seed: r.seed, duration_cap: cap.min(TRACE_OPTS.window.map_or(cap, |w| w.1)), noise: s.noise.clone(), governor: crate::run::resolve_governor(&s.machine, s.exp.governor.as_deref())?, task_groups: crate::run::resolve_task_groups(&s.exp.cgroup)? };
    let (_, trace) = run_with_trace(cfg, &wl, TRACE_OPTS).map_err(UserError)?;
    crate::output::write_atomic_with(path, |f| trace.write_chrome_json(std::io::BufWriter::new(f)))
}

/// Runs `todo` (plan entries) on `jobs` threads; fills `slots[index]`. The first error in plan
/// order is returned after every started run has finished (finished ones stay saved).
pub fn run_all(s: &Setup, todo: &[RunSpec], jobs: usize, slots: &mut [Option<RunRecord>]) -> Result<(), UserError> {
    for (k, res) in run_pool(todo, jobs, |r| run_one(s, r)) {
        slots[todo[k].index] = Some(res?);
    }
    Ok(())
}

/// Runs `f` on every item on `jobs` threads (workers take the next item in order), with a
/// progress bar on a terminal. After a failure no new item starts. Returns the finished items'
/// results by item index, in item order, so nothing depends on which thread finished first.
pub fn run_pool<T: Sync>(items: &[T], jobs: usize, f: impl Fn(&T) -> Result<RunRecord, UserError> + Sync) -> Vec<(usize, Result<RunRecord, UserError>)> {
    let bar = if std::io::stderr().is_terminal() && !items.is_empty() {
        let b = ProgressBar::with_draw_target(Some(items.len() as u64), ProgressDrawTarget::stderr());
        b.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} runs  {elapsed} elapsed, ETA {eta}").unwrap_or_else(|_| ProgressStyle::default_bar()));
        b
    } else {
        ProgressBar::hidden()
    };
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<RunRecord, UserError>)>> = Mutex::new(Vec::new());
    let failed = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|sc| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            sc.spawn(|| loop {
                if failed.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let res = f(item);
                if res.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                results.lock().unwrap_or_else(|e| e.into_inner()).push((i, res));
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(i, _)| *i);
    results
}
