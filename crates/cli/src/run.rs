//! `wakesim run`.

use crate::args::RunArgs;
use crate::output::{write_atomic, write_atomic_with};
use crate::UserError;
use serde::Serialize;
use std::time::Instant;
use wakesim_costs::CostProfile;
use wakesim_engine::SEC;
use wakesim_machine::Machine;
use wakesim_model::{Config, Features, Sim, TraceOpts};
use wakesim_stats::{schedstat_text, summary_text, Stats};
use wakesim_workloads::{Metric, Workload};

/// The default demo workload when no command is given.
pub const DEFAULT_COMMAND: &[&str] = &["perf", "bench", "sched", "pipe", "-l", "100000"];

pub fn resolve_machine(name: &str) -> Result<Machine, UserError> {
    Ok(wakesim_machine::lookup(name)?)
}

pub fn resolve_costs(m: &Machine, file: Option<&std::path::Path>) -> Result<CostProfile, UserError> {
    let base = wakesim_costs::profile_for(&m.cost_profile).map_err(|e| UserError(format!("machine '{}': {e}", m.name)))?;
    match file {
        Some(p) => Ok(wakesim_costs::load_overrides(base, p)?),
        // `--machine host` picks up what `wakesim calibrate` wrote to its default location.
        None if m.name == "host" => match crate::calibrate::default_profile_path().filter(|p| p.is_file()) {
            Some(p) => Ok(wakesim_costs::load_overrides(base, &p)?),
            None => Ok(base),
        },
        None => Ok(base),
    }
}

/// `--cost-scale KEY=FACTOR`, each applied in turn on top of the resolved profile.
pub fn apply_cost_scales(costs: &mut CostProfile, scales: &[String]) -> Result<(), UserError> {
    for s in scales {
        let (key, f) = s.split_once('=').ok_or_else(|| UserError(format!("--cost-scale takes KEY=FACTOR, got '{s}'")))?;
        let factor: f64 = f.trim().parse().map_err(|_| UserError(format!("--cost-scale {s}: '{f}' is not a number")))?;
        wakesim_costs::scale_cost(costs, key.trim(), factor).map_err(|e| UserError(format!("--cost-scale: {e}")))?;
    }
    // The run's JSON and summary name the profile: say it was scaled.
    if !scales.is_empty() {
        costs.name = format!("{} ({})", costs.name, scales.join(", "));
    }
    Ok(())
}

/// The `# wakesim:` line a `--machine host` run prints when it predicts with the built-in
/// placeholder profile because `wakesim calibrate` has not written one (and no `--costs`).
pub fn uncalibrated_host_note(m: &Machine, costs_file: Option<&std::path::Path>) -> Option<String> {
    if m.name != "host" || costs_file.is_some() {
        return None;
    }
    let at = match crate::calibrate::default_profile_path() {
        Some(p) if p.is_file() => return None,
        Some(p) => format!("no {}", p.display()),
        None => "neither XDG_CONFIG_HOME nor HOME is set".to_string(),
    };
    Some(format!(
        "# wakesim: --machine host has no calibrated cost profile ({at}); predicting with the built-in '{}' profile (`wakesim calibrate` measures this machine)",
        m.cost_profile
    ))
}

/// `--noise`: what was typed, else the machine's default (`server`; on `--machine host` the
/// profile `wakesim calibrate` measured, if it has written one).
pub fn resolve_noise(m: &Machine, spec: Option<&str>) -> Result<wakesim_model::NoiseProfile, UserError> {
    match spec {
        Some(s) => wakesim_machine::NoiseProfile::lookup(s).map_err(UserError),
        None if m.name == "host" => match crate::calibrate::default_noise_path().filter(|p| p.is_file()) {
            Some(p) => wakesim_machine::NoiseProfile::lookup(&p.display().to_string()).map_err(UserError),
            None => Ok(wakesim_machine::NoiseProfile::server()),
        },
        None => Ok(wakesim_machine::NoiseProfile::server()),
    }
}

/// `--cgroup SETUP`: where the benchmark's tasks run (`wakesim_model::autogroup`).
pub fn resolve_task_groups(setup: &str) -> Result<wakesim_model::TaskGroups, UserError> {
    setup.parse().map_err(|e| UserError(format!("--cgroup: {e}")))
}

/// `--governor NAME`, else the machine's cpuidle governor.
pub fn resolve_governor(m: &Machine, name: Option<&str>) -> Result<wakesim_model::GovernorKind, UserError> {
    match name {
        Some(n) => n.parse().map_err(|e| UserError(format!("--governor: {e}"))),
        None => Ok(m.cpuidle_governor),
    }
}

/// The kernel profile's features, then `+NAME,-NAME` (a bare NAME means +NAME) on top.
pub fn parse_features(kernel: &str, spec: Option<&str>) -> Result<Features, UserError> {
    let mut f = Features::for_kernel(kernel).map_err(UserError)?;
    let Some(spec) = spec else {
        f.check().map_err(UserError)?;
        return Ok(f);
    };
    f.apply(spec).map_err(UserError)?;
    f.check().map_err(|e| UserError(format!("kernel {kernel} with --features {spec}: {e}")))?;
    Ok(f)
}

pub fn resolve_workload(a: &RunArgs, m: &Machine) -> Result<(Workload, Vec<String>), UserError> {
    if a.copies == 0 {
        return Err(UserError("--copies must be at least 1".into()));
    }
    let ctx = wakesim_workloads::BuildContext { nr_cpus: Some(m.nr_cpus() as u32), copies: a.copies };
    if let Some(p) = &a.tasks {
        let w = wakesim_workloads::load_task_file(p)?;
        return Ok((wakesim_workloads::bench::copies::replicate(w, a.copies), vec!["--tasks".into(), p.display().to_string()]));
    }
    let cmd: Vec<String> = if a.command.is_empty() { DEFAULT_COMMAND.iter().map(|s| s.to_string()).collect() } else { a.command.clone() };
    Ok((wakesim_workloads::from_command_line_with(&cmd, &ctx)?, cmd))
}

/// The workload of a benchmark command line on machine `m`, `copies` instances side by side
/// (`--copies N`).
pub fn workload_copies(cmd: &[String], m: &Machine, copies: u32) -> Result<Workload, UserError> {
    if copies == 0 {
        return Err(UserError("--copies must be at least 1".into()));
    }
    let ctx = wakesim_workloads::BuildContext { nr_cpus: Some(m.nr_cpus() as u32), copies };
    Ok(wakesim_workloads::from_command_line_with(cmd, &ctx)?)
}

/// Checks a `--duration` in seconds (of `run`, `compare` and `native`) and returns it in ns.
pub fn check_duration(duration: f64) -> Result<u64, UserError> {
    if !(duration > 0.0 && duration.is_finite()) || (duration * SEC as f64) < 1.0 {
        return Err(UserError(format!("--duration must be a positive number of seconds (at least 1 ns), got {duration}")));
    }
    Ok((duration * SEC as f64) as u64)
}

/// Checks `--duration` and returns the run's time cap in ns: the duration, or the benchmark's
/// own run time (schbench -r, netperf -l, …) when that is shorter.
pub fn duration_cap(duration: f64, wl: &Workload) -> Result<u64, UserError> {
    let cap = check_duration(duration)?;
    Ok(wl.duration.map_or(cap, |d| d.min(cap)))
}

#[derive(Serialize)]
struct EngineBlock {
    events: u64,
    wall_seconds: f64,
    events_per_sec: f64,
    sim_seconds_per_wall_second: f64,
}

#[derive(Serialize)]
struct RunJson<'a> {
    wakesim_version: &'static str,
    machine: &'a str,
    kernel: &'a str,
    cost_profile: &'a str,
    /// The cpuidle governor (`--governor`, else the machine's).
    governor: &'static str,
    /// The benchmark's task group (`--cgroup`).
    cgroup: &'static str,
    features: &'a Features,
    seed: u64,
    /// The background activity's profile name (`--noise`).
    noise: &'a str,
    workload: &'a str,
    command: &'a [String],
    /// `--cpu-scale`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_scale: Option<f64>,
    metric: Metric,
    capped: bool,
    end_time_ns: u64,
    output: &'a str,
    stats: &'a Stats,
    engine: EngineBlock,
}

/// `--trace-window START,END` (simulated ms) and `--trace-limit N`, if `--trace` is given.
fn trace_opts(a: &RunArgs) -> Result<Option<TraceOpts>, UserError> {
    if a.trace.is_none() {
        return Ok(None);
    }
    if a.trace_limit == 0 {
        return Err(UserError("--trace-limit must be at least 1".into()));
    }
    let window = match &a.trace_window {
        None => None,
        Some(w) => {
            let bad = || UserError(format!("--trace-window takes START,END in simulated milliseconds with 0 <= START < END, got '{w}'"));
            let (s, e) = w.split_once(',').ok_or_else(bad)?;
            let (s, e): (f64, f64) = (s.trim().parse().map_err(|_| bad())?, e.trim().parse().map_err(|_| bad())?);
            if !(s >= 0.0 && e > s && e.is_finite()) {
                return Err(bad());
            }
            let ns = |ms: f64| (ms * 1e6).round() as u64;
            Some((ns(s), ns(e)))
        }
    };
    Ok(Some(TraceOpts { window, limit: a.trace_limit }))
}

/// `--cpu-scale F`: a positive, finite factor (a thousandfold either way at most).
pub fn check_cpu_scale(f: f64) -> Result<(), UserError> {
    if !(f.is_finite() && (1e-3..=1e3).contains(&f)) {
        return Err(UserError(format!("--cpu-scale takes a factor between 0.001 and 1000 (e.g. 2 for a core half as fast), got {f}")));
    }
    Ok(())
}

/// `--wasted-threshold DURATION`: a number with a unit `ns`, `us`, `ms` or `s` (`4ms`, `0.5ms`).
pub fn parse_threshold(s: &str) -> Result<u64, UserError> {
    let bad = || UserError(format!("--wasted-threshold takes a duration such as 4ms, 500us or 0.5ms, got '{s}'"));
    let t = s.trim();
    let (num, scale) = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)]
        .iter()
        .find_map(|&(u, k)| t.strip_suffix(u).map(|n| (n, k)))
        .ok_or_else(bad)?;
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    if !v.is_finite() || v < 0.0 || v * scale > 3.6e12 {
        return Err(bad());
    }
    Ok((v * scale).round() as u64)
}

pub fn run(a: RunArgs) -> Result<(), UserError> {
    let duration = check_duration(a.duration)?;
    if let Some(f) = a.cpu_scale {
        check_cpu_scale(f)?;
    }
    if let Some(path) = &a.json {
        // Refuse an unwritable result path before spending the simulation on it.
        crate::output::check_writable(path)?;
    }
    let trace_opts = trace_opts(&a)?;
    let wasted_threshold = match &a.wasted_threshold {
        Some(s) => parse_threshold(s)?,
        None => wakesim_model::waste::DEFAULT_WASTED_THRESHOLD,
    };
    if let Some(path) = &a.trace {
        crate::output::check_writable(path)?;
    }
    if let Some(v) = a.schedstat {
        if v != 15 && v != 16 {
            return Err(UserError(format!("--schedstat takes version 15 or 16, got {v}")));
        }
    }
    let machine = resolve_machine(&a.machine)?;
    let mut costs = resolve_costs(&machine, a.costs.as_deref())?;
    apply_cost_scales(&mut costs, &a.cost_scale)?;
    let features = parse_features(&a.kernel, a.features.as_deref())?;
    let governor = resolve_governor(&machine, a.governor.as_deref())?;
    let task_groups = resolve_task_groups(&a.cgroup)?;
    let noise = resolve_noise(&machine, a.noise.as_deref())?;
    let (mut wl, cmd) = resolve_workload(&a, &machine)?;
    if let Some(f) = a.cpu_scale {
        wl.scale_compute(f);
    }
    // The benchmark's own run time (schbench -r, netperf -l, …) ends the run unless --duration
    // is shorter.
    let cap = wl.duration.map_or(duration, |d| d.min(duration));
    let cfg = Config { machine: machine.clone(), costs: costs.clone(), features, seed: a.seed, duration_cap: cap, noise: noise.clone(), governor, task_groups };
    let mut sim = Sim::new(cfg, &wl).map_err(UserError)?.with_wasted_threshold(wasted_threshold);
    if let Some(o) = trace_opts {
        sim = sim.with_trace(o);
    }
    let t0 = Instant::now();
    let (r, trace) = sim.run_traced();
    let wall = t0.elapsed().as_secs_f64();
    // The trace is written before anything is printed, so `wakesim run --trace F | head` still
    // leaves the file.
    if let (Some(path), Some(trace)) = (&a.trace, trace) {
        if trace.truncated {
            eprintln!(
                "wakesim: note: the trace stopped at its limit of {} events, at {:.3} ms simulated (--trace-limit, --trace-window)",
                a.trace_limit,
                trace.end as f64 / 1e6
            );
        } else if trace.events.is_empty() {
            eprintln!("wakesim: note: the trace window starts after the run ended; the trace is empty");
        }
        write_atomic_with(path, |f| trace.write_chrome_json(f))?;
    }
    if let Some(note) = uncalibrated_host_note(&machine, a.costs.as_deref()) {
        crate::outln!("{note}");
    }
    let out = wl.reporter.render(&r.outcome);
    crate::outp!("{out}");
    if !out.ends_with('\n') {
        crate::outln!();
    }
    crate::outln!();
    crate::outp!("{}", summary_text(&r.stats));
    if let Some(v) = a.schedstat {
        crate::outln!();
        crate::outp!("{}", schedstat_text(&r.stats, v));
    }
    if let Some(path) = &a.json {
        let sim_s = r.stats.sim_time_ns as f64 / 1e9;
        let doc = RunJson {
            wakesim_version: env!("CARGO_PKG_VERSION"),
            machine: &machine.name,
            kernel: &a.kernel,
            cost_profile: &costs.name,
            governor: governor.name(),
            cgroup: task_groups.name(),
            features: &features,
            seed: a.seed,
            noise: &noise.name,
            workload: &wl.name,
            command: &cmd,
            cpu_scale: a.cpu_scale,
            metric: wl.reporter.metric(&r.outcome),
            capped: r.outcome.capped,
            end_time_ns: r.outcome.end_time,
            output: &out,
            stats: &r.stats,
            engine: EngineBlock {
                events: r.events,
                wall_seconds: wall,
                events_per_sec: r.events as f64 / wall.max(1e-9),
                sim_seconds_per_wall_second: sim_s / wall.max(1e-9),
            },
        };
        let text = serde_json::to_string_pretty(&doc).map_err(|e| UserError(format!("cannot serialise results: {e}")))?;
        write_atomic(path, &(text + "\n"))?;
    }
    Ok(())
}
