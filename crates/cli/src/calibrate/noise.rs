//! `wakesim calibrate`'s last step: this machine's background activity, measured
//! (`wakesim_hostbench::noise`: the osnoise tracer, else a self-timing loop on every CPU with
//! tracefs naming what interrupted it, else the loop alone), grouped into a census and written
//! as a noise profile beside the cost profile, where `--machine host` runs find it
//! ([`super::default_noise_path`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::args::NoiseMethod;
use crate::UserError;
use wakesim_hostbench::noise::{self, gaps, tracefs, Census, Kind, LoopRun, Verdict};
use wakesim_machine::{CpuSet, NoiseProfile};

/// Default measuring window, seconds (`--quick`: 1).
pub const DEFAULT_WINDOW_S: f64 = 5.0;

/// What the measurement found and the profile made from it.
pub struct Measured {
    pub method: &'static str,
    pub census: Census,
    pub loops: Vec<LoopRun>,
    pub profile: NoiseProfile,
    /// Why a better method was not used; lost events.
    pub notes: Vec<String>,
}

/// Where the noise profile goes: `--noise-out`, else beside the cost profile (`host-noise.toml`
/// at the default location, `STEM-noise.toml` beside `--out STEM.toml`).
pub fn out_path(noise_out: Option<&Path>, cost_out: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = noise_out {
        return Some(p.to_path_buf());
    }
    match cost_out {
        Some(c) => {
            let stem = c.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "host".into());
            Some(c.with_file_name(format!("{stem}-noise.toml")))
        }
        None => super::default_noise_path(),
    }
}

/// `--noise-window`: a positive number of seconds, at most a minute.
pub fn check_window(s: f64) -> Result<u64, UserError> {
    if !(s.is_finite() && s >= 0.01 && s <= 60.0) {
        return Err(UserError(format!("--noise-window takes a number of seconds from 0.01 to 60, got {s}")));
    }
    Ok((s * 1e9) as u64)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_else(|_| "this machine".into())
}

/// Whether the kernel was booted with `skew_tick=1`.
fn skew_tick() -> bool {
    std::fs::read_to_string("/proc/cmdline").is_ok_and(|c| c.split_whitespace().any(|w| w == "skew_tick=1"))
}

/// A method asked for by name that cannot run here is refused before anything is measured.
pub fn preflight(method: NoiseMethod) -> Result<(), UserError> {
    let name = match method {
        NoiseMethod::Osnoise => "osnoise",
        NoiseMethod::Tracefs => "tracefs",
        NoiseMethod::Auto | NoiseMethod::Loop => return Ok(()),
    };
    let inst = tracefs::Instance::create(&tracefs::default_dir()).map_err(|e| UserError(format!("--noise-method {name}: {e}")))?;
    if method == NoiseMethod::Osnoise && !inst.has_tracer("osnoise") {
        return Err(UserError("--noise-method osnoise: this kernel has no osnoise tracer (CONFIG_OSNOISE_TRACER)".into()));
    }
    Ok(())
}

/// Measures for `window_ns` on `cpus` with `method` (auto: the best that works here, each one
/// that does not saying why); `irq_entry_exit_ns` is the cost profile's interrupt entry and
/// exit, which the model adds to every handler and a gap's length already holds; `nr_cpus`,
/// the machine's.
pub fn measure(method: NoiseMethod, window_ns: u64, cpus: &[usize], irq_entry_exit_ns: u64, nr_cpus: usize) -> Result<Measured, UserError> {
    let top = tracefs::default_dir();
    let hz = wakesim_machine::kconfig::running_kernel_hz();
    let mut notes = Vec::new();
    let mut traced = None;
    if matches!(method, NoiseMethod::Auto | NoiseMethod::Osnoise) {
        match tracefs::measure_osnoise(&top, cpus, window_ns) {
            Ok(t) => traced = Some(("osnoise tracer", t)),
            Err(e) if method == NoiseMethod::Auto => notes.push(format!("osnoise: {e}")),
            Err(e) => return Err(UserError(format!("--noise-method osnoise: {e}"))),
        }
    }
    if traced.is_none() && matches!(method, NoiseMethod::Auto | NoiseMethod::Tracefs) {
        match tracefs::measure_events(&top, cpus, window_ns, gaps::DEFAULT_THRESHOLD_NS) {
            Ok(t) => traced = Some(("self-timing loop and tracefs events", t)),
            Err(e) if method == NoiseMethod::Auto => notes.push(format!("tracefs: {e}")),
            Err(e) => return Err(UserError(format!("--noise-method tracefs: {e}"))),
        }
    }
    let (method_name, census, loops) = match traced {
        Some((name, t)) => {
            if !t.lost.is_empty() {
                notes.push(format!("the trace lost events ({}): rates are lower bounds; measure a shorter --noise-window", t.lost.join(", ")));
            }
            let tids: BTreeSet<i32> = t.interferences.iter().filter(|i| i.kind == Kind::Thread && i.pid > 0 && !t.own.contains(&i.pid)).map(|i| i.pid).collect();
            let transient = noise::transient_threads(tids, noise::MIN_AGE_S);
            (name, noise::census(&t.interferences, t.window, t.window_ns, cpus, &t.own, &transient, hz), t.loops)
        }
        None => {
            let loops = noise::self_timing_loops(cpus, window_ns, gaps::DEFAULT_THRESHOLD_NS).map_err(|e| UserError(format!("self-timing loop: {e}")))?;
            notes.push("no thread census: it needs tracefs".into());
            let ints = noise::loop_interferences(&loops, hz);
            let w = loops.iter().map(|r| r.end - r.start).max().unwrap_or(window_ns);
            ("self-timing loop", noise::census(&ints, (0, u64::MAX), w, cpus, &BTreeSet::new(), &BTreeSet::new(), hz), loops)
        }
    };
    let label = format!("measured by wakesim calibrate on {} ({method_name})", hostname());
    let mut profile = census.to_profile("host-measured", &label, skew_tick(), nr_cpus, irq_entry_exit_ns);
    // The variation of the kernel's own work (`cost_jitter`): single calls timed in a hot loop.
    match wakesim_hostbench::jitter::measure(wakesim_hostbench::jitter::CALLS) {
        Ok(paths) => {
            profile.cost_jitter = wakesim_hostbench::jitter::cost_jitter(&paths);
            let each: Vec<String> = paths.iter().map(|p| format!("{} median {:.0} ns, CV {:.3} ({} of {} calls over 5x the median left out)", p.name, p.median_ns, p.cv, p.dropped, p.calls)).collect();
            notes.push(format!("cost_jitter {}: the smaller CV of single calls timed one by one in a hot loop, a lower bound ({})", profile.cost_jitter, each.join("; ")));
        }
        Err(e) => notes.push(format!("cost_jitter not measured ({e}): 0, exact costs")),
    }
    profile.check().map_err(|e| UserError(format!("the measured noise profile is invalid: {e}")))?;
    Ok(Measured { method: method_name, census, loops, profile, notes })
}

fn cpus_of(s: &noise::Source) -> String {
    CpuSet::from_cpus(s.instances.keys().copied()).to_list_string()
}

/// Per second, per instance (per CPU for a per-CPU source, in all for a thread group).
fn rate(s: &noise::Source, c: &Census) -> f64 {
    let inst = if s.anywhere { 1 } else { s.instances.len().max(1) };
    s.count() as f64 / inst as f64 / (c.window_ns as f64 / 1e9)
}

fn verdict(s: &noise::Source) -> String {
    match &s.verdict {
        Verdict::Noise => "yes".into(),
        Verdict::Tick => "the tick: the model's own (beyond HZ: hrtimer)".into(),
        Verdict::Excluded(why) => format!("no: {why}"),
    }
}

/// The loop's own line per CPU: how much of its time it lost, in how many gaps.
fn loop_lines(loops: &[LoopRun]) -> Vec<String> {
    loops
        .iter()
        .map(|r| {
            let w = (r.end - r.start).max(1) as f64;
            let mut lens: Vec<u64> = r.gaps.iter().map(|g| g.len).collect();
            lens.sort_unstable();
            let q = |p: f64| lens.get(((lens.len() as f64 - 1.0) * p).round() as usize).map_or(0.0, |&x| x as f64 / 1e3);
            format!(
                "CPU {}: {:.2} % of the time lost in {:.0} gaps/s >= {} us (median {:.1} us, p99 {:.1} us, max {:.1} us)",
                r.cpu,
                100.0 * r.lost_ns() as f64 / w,
                r.gaps.len() as f64 / (w / 1e9),
                gaps::DEFAULT_THRESHOLD_NS / 1000,
                q(0.5),
                q(0.99),
                q(1.0)
            )
        })
        .collect()
}

/// The census as a table on stdout.
pub fn print(m: &Measured) {
    let c = &m.census;
    crate::outln!();
    crate::outln!(
        "background activity ({}, {:.1} s on CPUs {}):",
        m.method,
        c.window_ns as f64 / 1e9,
        CpuSet::from_cpus(c.cpus.iter().copied()).to_list_string()
    );
    for l in loop_lines(&m.loops) {
        crate::outln!("  self-timing loop, {l}");
    }
    crate::outln!("{:<28} {:<8} {:>6} {:>10} {:>9} {:>9} {:<9} in the profile", "source", "kind", "CPUs", "per s", "mean us", "max us", "arrival");
    for s in &c.sources {
        let st = s.stats();
        let arrival = match s.arrival() {
            wakesim_machine::Arrival::Periodic => "periodic",
            wakesim_machine::Arrival::Poisson => "poisson",
        };
        crate::outln!(
            "{:<28} {:<8} {:>6} {:>10.2} {:>9.2} {:>9.1} {:<9} {}",
            s.name,
            s.kind.name(),
            if s.anywhere { "any".to_string() } else { cpus_of(s) },
            rate(s, c),
            st.mean_ns / 1e3,
            st.max_ns as f64 / 1e3,
            arrival,
            verdict(s)
        );
    }
    crate::outln!("(per s: per CPU for interrupts and per-CPU threads, in all for a thread group on any CPU)");
    for n in &m.notes {
        crate::outln!("note: {n}");
    }
}

/// The file: a header saying how it was measured and what was left out, then the profile.
pub fn file_text(m: &Measured, machine: &wakesim_machine::Machine, secs: f64) -> String {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let c = &m.census;
    let mut s = format!(
        "# Written by `wakesim calibrate` on {} ({} CPUs), kernel {}: background activity measured with the {} for {:.1} s on CPUs {} ({secs:.1} s in all).\n# `--machine host` runs use it by default; `--noise FILE` loads it for any machine.\n",
        machine.description,
        machine.nr_cpus(),
        kernel.trim(),
        m.method,
        c.window_ns as f64 / 1e9,
        CpuSet::from_cpus(c.cpus.iter().copied()).to_list_string()
    );
    for s2 in c.sources.iter().filter(|s| s.verdict != Verdict::Noise) {
        let st = s2.stats();
        s += &format!("# Not an entry: {} ({}, {:.1}/s, mean {:.1} us): {}\n", s2.name, s2.kind.name(), rate(s2, c), st.mean_ns / 1e3, verdict(s2));
    }
    if c.sources.iter().any(|s| s.kind == Kind::Gap) {
        s += "# Gap entries are interruptions of the self-timing loop no traced kernel event explains; their handler_us is the gap less the cost profile's irq_entry_exit, which the model adds.\n";
    }
    for l in loop_lines(&m.loops) {
        s += &format!("# Self-timing loop, {l}.\n");
    }
    for n in &m.notes {
        s += &format!("# Note: {n}.\n");
    }
    s + "\n" + &m.profile.to_toml()
}
