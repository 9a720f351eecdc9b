//! Measuring through tracefs, in a trace instance of our own (`instances/wakesim-noise-PID`):
//! its own ring buffer, clock, events and tracer, so the top-level trace (and anyone else's
//! recording, `wakesim replay --record` included) is left alone. The instance is removed when
//! the measurement ends, whatever happens. The osnoise tracer's options are global
//! (`osnoise/cpus`): the one this sets is put back.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::gaps::{self_timing_loops, LoopRun};
use super::trace::{parse_trace, Interference, OsnoiseSummary};
use super::unattributed_gaps;
use crate::sys;

/// `WAKESIM_TRACEFS`, else `/sys/kernel/tracing`.
pub fn default_dir() -> PathBuf {
    std::env::var_os("WAKESIM_TRACEFS").map(PathBuf::from).unwrap_or_else(|| "/sys/kernel/tracing".into())
}

/// Per-CPU ring buffer of the instance, KiB: a busy 2-CPU machine writes ~20 k events/s.
const BUFFER_KB: &str = "16384";

/// The generic events of the tracefs method (groups or single events; missing ones are skipped,
/// except `sched_switch`).
const EVENTS: [&str; 6] = ["sched/sched_switch", "irq/irq_handler_entry", "irq/irq_handler_exit", "irq/softirq_entry", "irq/softirq_exit", "irq_vectors"];

/// A trace instance, removed on drop.
pub struct Instance {
    dir: PathBuf,
    /// Top-level files to put back: (file, previous contents).
    restore: Vec<(PathBuf, String)>,
    top: PathBuf,
}

impl Instance {
    /// Creates `instances/wakesim-noise-PID` under the tracefs mount `top`.
    pub fn create(top: &Path) -> Result<Instance, String> {
        if !top.join("trace").is_file() || !top.join("instances").is_dir() {
            return Err(format!("no tracefs at {} (as root: mount -t tracefs nodev /sys/kernel/tracing; or set WAKESIM_TRACEFS)", top.display()));
        }
        remove_stale(&top.join("instances"));
        let dir = top.join("instances").join(format!("wakesim-noise-{}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| {
            let hint = if e.kind() == std::io::ErrorKind::PermissionDenied { " (tracing needs root)" } else { "" };
            format!("cannot create the trace instance {}: {e}{hint}", dir.display())
        })?;
        let inst = Instance { dir, restore: Vec::new(), top: top.to_path_buf() };
        // A directory made where no tracefs answers has none of the instance's files.
        if !inst.dir.join("trace").is_file() {
            return Err(format!("{} is not a tracefs mount (its new instance has no trace file)", top.display()));
        }
        Ok(inst)
    }

    pub fn read(&self, f: &str) -> Result<String, String> {
        let p = self.dir.join(f);
        std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    }

    pub fn write(&self, f: &str, v: &str) -> Result<(), String> {
        let p = self.dir.join(f);
        std::fs::write(&p, v).map_err(|e| format!("cannot write {}: {e}", p.display()))
    }

    /// Whether the kernel has tracer `name` (`available_tracers`).
    pub fn has_tracer(&self, name: &str) -> bool {
        self.read("available_tracers").is_ok_and(|s| s.split_whitespace().any(|t| t == name))
    }

    /// Writes a top-level file, to be put back on drop.
    fn set_top(&mut self, f: &str, v: &str) -> Result<(), String> {
        let p = self.top.join(f);
        let old = std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        std::fs::write(&p, v).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        self.restore.push((p, old));
        Ok(())
    }

    /// Events lost per CPU (`per_cpu/cpuN/stats`: `overrun`, `dropped events`).
    pub fn lost_events(&self) -> Vec<String> {
        let mut lost = Vec::new();
        let Ok(rd) = std::fs::read_dir(self.dir.join("per_cpu")) else { return lost };
        let mut cpus: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        cpus.sort();
        for c in cpus {
            let Ok(s) = std::fs::read_to_string(c.join("stats")) else { continue };
            for l in s.lines() {
                let Some((k, v)) = l.split_once(':') else { continue };
                let k = k.trim();
                if (k == "overrun" || k == "dropped events") && v.trim().parse::<u64>().unwrap_or(0) > 0 {
                    lost.push(format!("{} {k} {}", c.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), v.trim()));
                }
            }
        }
        lost
    }
}

/// Removes the instances of measurements whose process is gone (killed before its drop ran).
fn remove_stale(instances: &Path) {
    let Ok(rd) = std::fs::read_dir(instances) else { return };
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("wakesim-noise-")) else { continue };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join("tracing_on"), "0");
        let _ = std::fs::write(self.dir.join("current_tracer"), "nop");
        let _ = std::fs::write(self.dir.join("events/enable"), "0");
        let _ = std::fs::remove_dir(&self.dir);
        for (p, v) in self.restore.drain(..).rev() {
            let _ = std::fs::write(p, v);
        }
    }
}

/// What a tracefs measurement gives.
pub struct Traced {
    pub interferences: Vec<Interference>,
    pub summaries: Vec<OsnoiseSummary>,
    pub loops: Vec<LoopRun>,
    /// Filter window in the interferences' clock, and its length in ns.
    pub window: (u64, u64),
    pub window_ns: u64,
    /// The measurement's own threads.
    pub own: BTreeSet<i32>,
    pub lost: Vec<String>,
    pub events: usize,
}

/// This process's threads (`/proc/self/task`).
fn own_threads() -> BTreeSet<i32> {
    std::fs::read_dir("/proc/self/task").map(|rd| rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect()).unwrap_or_default()
}

/// The tracefs method: the self-timing loop on every CPU of `cpus` for `window_ns` while the
/// instance records the interrupt, softirq and `sched_switch` events (`trace_clock=mono`, the
/// loop's `CLOCK_MONOTONIC`); the loop gaps no event explains are added as hardware noise.
pub fn measure_events(top: &Path, cpus: &[usize], window_ns: u64, threshold_ns: u64) -> Result<Traced, String> {
    let inst = Instance::create(top)?;
    inst.write("tracing_on", "0")?;
    let clocks = inst.read("trace_clock")?;
    if !clocks.split_whitespace().any(|c| c.trim_matches(|x| x == '[' || x == ']') == "mono") {
        return Err("this kernel's tracefs has no mono trace clock".into());
    }
    inst.write("trace_clock", "mono")?;
    inst.write("buffer_size_kb", BUFFER_KB)?;
    for e in EVENTS {
        let f = format!("events/{e}/enable");
        if inst.dir.join(&f).is_file() {
            inst.write(&f, "1")?;
        } else if e == "sched/sched_switch" {
            return Err("this kernel has no sched:sched_switch event".into());
        }
    }
    let mut own = own_threads();
    inst.write("tracing_on", "1")?;
    let loops = self_timing_loops(cpus, window_ns, threshold_ns);
    inst.write("tracing_on", "0")?;
    let loops = loops.map_err(|e| format!("self-timing loop: {e}"))?;
    own.extend(loops.iter().map(|r| r.tid));
    own.extend(own_threads());
    own.insert(sys::gettid());
    let text = inst.read("trace")?;
    let lost = inst.lost_events();
    drop(inst);
    let t = parse_trace(&text);
    let mut ints = t.interferences.clone();
    ints.extend(unattributed_gaps(&loops, &t));
    ints.sort_by_key(|i| (i.start, i.cpu));
    let w0 = loops.iter().map(|r| r.start).min().unwrap_or(0);
    let w1 = loops.iter().map(|r| r.end).max().unwrap_or(w0);
    Ok(Traced { interferences: ints, summaries: t.summaries, window: (w0, w1), window_ns: w1 - w0, own, lost, events: t.events, loops })
}

/// The osnoise method: the tracer's own loop on every CPU of `cpus` for `window_ns`, with its
/// events (`irq_noise`, `softirq_noise`, `thread_noise`, `nmi_noise`, `sample_threshold`).
pub fn measure_osnoise(top: &Path, cpus: &[usize], window_ns: u64) -> Result<Traced, String> {
    let mut inst = Instance::create(top)?;
    if !inst.has_tracer("osnoise") {
        return Err("this kernel has no osnoise tracer (CONFIG_OSNOISE_TRACER)".into());
    }
    inst.write("tracing_on", "0")?;
    inst.write("buffer_size_kb", BUFFER_KB)?;
    let list = wakesim_machine::CpuSet::from_cpus(cpus.iter().copied()).to_list_string();
    inst.set_top("osnoise/cpus", &list)?;
    inst.write("events/osnoise/enable", "1")?;
    inst.write("current_tracer", "osnoise")?;
    let own = own_threads();
    let t0 = sys::now_ns();
    inst.write("tracing_on", "1")?;
    std::thread::sleep(Duration::from_nanos(window_ns));
    inst.write("tracing_on", "0")?;
    let window_ns = sys::now_ns() - t0;
    let text = inst.read("trace")?;
    let lost = inst.lost_events();
    drop(inst);
    let t = parse_trace(&text);
    // The events' `start` is the tracer's own clock (trace_clock_local): every event counts.
    Ok(Traced { interferences: t.interferences, summaries: t.summaries, window: (0, u64::MAX), window_ns, own, lost, events: t.events, loops: Vec::new() })
}
