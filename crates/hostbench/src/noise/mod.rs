//! This machine's background activity ("OS noise"): what interrupts a thread that never
//! sleeps, and which other threads wake up how often and run how long; and the
//! [`NoiseProfile`] the model runs it as (`wakesim calibrate` writes it).
//!
//! Three ways to measure, best first (`wakesim calibrate` picks the best this machine allows):
//!
//! * **osnoise**: the kernel's osnoise tracer (`Documentation/trace/osnoise-tracer.rst`) runs its
//!   own loop on every CPU and reports every interference net of the ones nested in it:
//!   interrupts, softirqs, NMIs and threads by name, and hardware noise;
//! * **tracefs**: on a kernel without it, the [`gaps`] self-timing loop runs on every CPU while
//!   tracefs records the interrupt, softirq and `sched_switch` events; the events name what
//!   interrupted the loop ([`trace`]), and a loop gap with no event inside is hardware or
//!   hypervisor noise;
//! * **loop**: without tracefs (not root, not mounted), the loop alone: the tick's gaps are found
//!   by their phase ([`gaps::tick_gaps`]), the rest are interruptions by length, unattributed;
//!   there is no thread census.
//!
//! The [`census`] groups what was found: interrupts and softirqs by name and CPU; threads by
//! comm, a per-CPU kthread family (`kworker/3:1`, `ksoftirqd/3`, `migration/3`) as one
//! per-CPU source, an activation being a thread's runs from a switch in to its switch out in a
//! sleeping state. [`Census::to_profile`] turns it into profile entries with the measured rate
//! and mean length.

pub mod gaps;
pub mod trace;
pub mod tracefs;

use std::collections::{BTreeMap, BTreeSet};

pub use gaps::{find_gaps, self_timing_loops, Gap, GapDetector, LoopRun};
pub use trace::{parse_trace, Interference, Kind, Trace};
use wakesim_machine::{Arrival, CpuSet, NoiseIrq, NoiseProfile, NoiseTask};

/// A thread group using more than this share of one CPU over the window is load (a build, a
/// test run, a neighbour's benchmark), not the timer-woken background activity a profile models.
pub const LOAD_SHARE: f64 = 0.05;

/// Intervals between activations with a coefficient of variation below this are a periodic
/// timer; above, independent arrivals.
pub const PERIODIC_CV: f64 = 0.25;

/// A user process younger than this when the measurement ends (or gone by then) is transient:
/// a build, a test, a command someone ran; not the machine's standing background activity.
pub const MIN_AGE_S: f64 = 60.0;

/// Loop gaps at least this long are counted apart when nothing names them (loop method).
pub const LONG_GAP_NS: u64 = 10_000;

/// What the census does with a source.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Becomes a profile entry.
    Noise,
    /// `local_timer`: the model runs its own tick; only interrupts beyond HZ per CPU (hrtimers)
    /// become an entry.
    Tick,
    /// Left out, and why.
    Excluded(String),
}

/// The activations of a source on one CPU.
#[derive(Clone, Debug, Default)]
pub struct Acc {
    pub count: u64,
    pub total_ns: u64,
    pub sumsq: f64,
    pub max_ns: u64,
    /// Activation starts per pid (-1 for interrupts), for the regularity of the intervals.
    pub starts: BTreeMap<i32, Vec<u64>>,
}

impl Acc {
    fn add(&mut self, pid: i32, start: u64, dur: u64) {
        self.count += 1;
        self.total_ns += dur;
        self.sumsq += (dur as f64) * (dur as f64);
        self.max_ns = self.max_ns.max(dur);
        self.starts.entry(pid).or_default().push(start);
    }
}

/// One source of background activity: an interrupt or softirq by name, or a thread group.
#[derive(Clone, Debug)]
pub struct Source {
    pub kind: Kind,
    /// The interrupt's name, the softirq's action, the thread's comm, or a per-CPU thread
    /// family with `{cpu}` (`kworker/{cpu}`, `ksoftirqd/{cpu}`).
    pub name: String,
    /// Per CPU: where the interrupts landed; a per-CPU family's instances; where a thread
    /// group's activations began.
    pub instances: BTreeMap<usize, Acc>,
    /// A thread group not tied to a CPU (one task that may run anywhere); else per CPU.
    pub anywhere: bool,
    /// Kernel priority of the threads (the lowest seen; 120 = nice 0, below 100 real-time).
    pub prio: i32,
    pub pids: BTreeSet<i32>,
    pub verdict: Verdict,
}

/// Count, mean, standard deviation and maximum of activation lengths over some instances.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    pub count: u64,
    pub mean_ns: f64,
    pub sd_ns: f64,
    pub max_ns: u64,
}

impl Stats {
    pub fn of<'a>(accs: impl IntoIterator<Item = &'a Acc>) -> Stats {
        let (mut n, mut total, mut sq, mut max) = (0u64, 0u64, 0.0f64, 0u64);
        for a in accs {
            n += a.count;
            total += a.total_ns;
            sq += a.sumsq;
            max = max.max(a.max_ns);
        }
        let mean = total as f64 / n.max(1) as f64;
        Stats { count: n, mean_ns: mean, sd_ns: (sq / n.max(1) as f64 - mean * mean).max(0.0).sqrt(), max_ns: max }
    }
}

impl Source {
    pub fn stats(&self) -> Stats {
        Stats::of(self.instances.values())
    }
    pub fn count(&self) -> u64 {
        self.instances.values().map(|a| a.count).sum()
    }
    pub fn total_ns(&self) -> u64 {
        self.instances.values().map(|a| a.total_ns).sum()
    }
    pub fn max_ns(&self) -> u64 {
        self.instances.values().map(|a| a.max_ns).max().unwrap_or(0)
    }
    pub fn mean_ns(&self) -> f64 {
        self.stats().mean_ns
    }

    /// The coefficient of variation of the intervals between activations (per CPU for a
    /// per-CPU source, per pid for a thread group), if at least two intervals were seen.
    pub fn interval_cv(&self) -> Option<f64> {
        let mut runs: Vec<Vec<u64>> = Vec::new();
        if self.anywhere {
            let mut by_pid: BTreeMap<i32, Vec<u64>> = BTreeMap::new();
            for a in self.instances.values() {
                for (p, s) in &a.starts {
                    by_pid.entry(*p).or_default().extend(s);
                }
            }
            runs.extend(by_pid.into_values());
        } else {
            for a in self.instances.values() {
                let mut all: Vec<u64> = a.starts.values().flatten().copied().collect();
                all.sort_unstable();
                runs.push(all);
            }
        }
        let mut iv: Vec<f64> = Vec::new();
        for mut r in runs {
            r.sort_unstable();
            iv.extend(r.windows(2).map(|w| (w[1] - w[0]) as f64));
        }
        if iv.len() < 2 {
            return None;
        }
        let mean = iv.iter().sum::<f64>() / iv.len() as f64;
        let var = iv.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (iv.len() - 1) as f64;
        (mean > 0.0).then(|| var.sqrt() / mean)
    }

    pub fn arrival(&self) -> Arrival {
        match self.interval_cv() {
            Some(cv) if cv < PERIODIC_CV => Arrival::Periodic,
            _ => Arrival::Poisson,
        }
    }
}

/// What a measurement found, grouped.
#[derive(Clone, Debug)]
pub struct Census {
    pub window_ns: u64,
    /// The CPUs measured.
    pub cpus: Vec<usize>,
    /// CONFIG_HZ, if known: `local_timer` interrupts up to HZ per CPU are the tick.
    pub hz: Option<u64>,
    /// By kind, then by CPU time taken, largest first.
    pub sources: Vec<Source>,
}

/// A thread's group: a per-CPU kthread family (`kworker/3:1` and `kworker/3:0` are one
/// `kworker/{cpu}` on CPU 3; `kworker/3:1H` the high-priority family; `ksoftirqd/3`,
/// `migration/3`, `cpuhp/3`, `rcuc/3`…) with its CPU, or the comm itself (unbound kworkers
/// `kworker/u8:2` are one `kworker/u*`).
pub fn thread_group(comm: &str) -> (String, Option<usize>) {
    if let Some((pre, rest)) = comm.split_once('/') {
        if pre == "kworker" && rest.starts_with('u') && rest[1..].starts_with(|c: char| c.is_ascii_digit()) {
            return ("kworker/u*".into(), None);
        }
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let tail = &rest[digits..];
        if digits > 0 && (tail.is_empty() || tail.starts_with(':')) {
            if let Ok(cpu) = rest[..digits].parse() {
                let high = pre == "kworker" && tail.ends_with('H');
                return (format!("{pre}/{{cpu}}{}", if high { "H" } else { "" }), Some(cpu));
            }
        }
    }
    (comm.to_string(), None)
}

/// Of the threads `tids`, the transient ones: user threads that have exited or whose process
/// started less than `min_age_s` ago (`/proc/PID/stat`; kernel threads never are).
pub fn transient_threads(tids: impl IntoIterator<Item = i32>, min_age_s: f64) -> BTreeSet<i32> {
    // SAFETY: plain sysconf query.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let uptime: f64 = std::fs::read_to_string("/proc/uptime").ok().and_then(|s| s.split_whitespace().next()?.parse().ok()).unwrap_or(f64::MAX);
    // (flags, start time in ticks since boot) of /proc/PID/stat: fields 9 and 22.
    let stat = |pid: i32| -> Option<(u64, u64)> {
        let f = crate::sys::proc_stat_fields(pid)?;
        Some((f.get(6)?.parse().ok()?, f.get(19)?.parse().ok()?))
    };
    const PF_KTHREAD: u64 = 0x0020_0000;
    tids.into_iter()
        .filter(|&tid| match stat(tid) {
            None => true,
            Some((flags, _)) if flags & PF_KTHREAD != 0 => false,
            Some(_) => {
                let tgid: Option<i32> = std::fs::read_to_string(format!("/proc/{tid}/status"))
                    .ok()
                    .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Tgid:"))?.trim().parse().ok());
                match tgid.and_then(stat) {
                    Some((_, start)) => uptime - start as f64 / hz < min_age_s,
                    None => true,
                }
            }
        })
        .collect()
}

/// Groups `ints` (interferences from any method) measured on `cpus` for `window_ns`; only
/// activations starting inside `filter` (start, end in the interferences' clock) count. Threads
/// of `exclude` (the measurement's own) and the idle task are left out; a thread group whose
/// threads are all `transient` is listed but excluded.
pub fn census(ints: &[Interference], filter: (u64, u64), window_ns: u64, cpus: &[usize], exclude: &BTreeSet<i32>, transient: &BTreeSet<i32>, hz: Option<u64>) -> Census {
    let (w0, w1) = filter;
    let inside = |t: u64| t >= w0 && t < w1;
    let measured: BTreeSet<usize> = cpus.iter().copied().collect();
    let mut sources: BTreeMap<(Kind, String), Source> = BTreeMap::new();
    fn source<'a>(sources: &'a mut BTreeMap<(Kind, String), Source>, kind: Kind, name: &str, anywhere: bool) -> &'a mut Source {
        sources.entry((kind, name.to_string())).or_insert_with(|| Source {
            kind,
            name: name.to_string(),
            instances: BTreeMap::new(),
            anywhere,
            prio: i32::MAX,
            pids: BTreeSet::new(),
            verdict: Verdict::Noise,
        })
    }
    // A thread's activation in progress: (start, CPU it began on, run so far, comm, prio).
    let mut open: BTreeMap<i32, (u64, usize, u64, String, i32)> = BTreeMap::new();
    let mut finished: Vec<(i32, u64, usize, u64, String, i32)> = Vec::new();
    for i in ints.iter().filter(|i| measured.contains(&i.cpu)) {
        if i.kind != Kind::Thread {
            if inside(i.start) {
                source(&mut sources, i.kind, &i.name, false).instances.entry(i.cpu).or_default().add(-1, i.start, i.dur);
            }
            continue;
        }
        if i.pid <= 0 || exclude.contains(&i.pid) {
            continue;
        }
        let a = open.entry(i.pid).or_insert_with(|| (i.start, i.cpu, 0, i.name.clone(), i.prio));
        a.2 += i.dur;
        if i.ends_activation {
            let (s, c, run, comm, prio) = open.remove(&i.pid).expect("just inserted");
            finished.push((i.pid, s, c, run, comm, prio));
        }
    }
    finished.extend(open.into_iter().map(|(p, (s, c, run, comm, prio))| (p, s, c, run, comm, prio)));
    for (pid, start, cpu, run, comm, prio) in finished {
        if !inside(start) {
            continue;
        }
        let (group, on) = thread_group(&comm);
        let s = source(&mut sources, Kind::Thread, &group, on.is_none());
        s.instances.entry(on.unwrap_or(cpu)).or_default().add(pid, start, run);
        s.pids.insert(pid);
        s.prio = s.prio.min(prio);
    }
    let window_ns = window_ns.max(1);
    let mut sources: Vec<Source> = sources.into_values().collect();
    for s in &mut sources {
        if s.prio == i32::MAX {
            s.prio = 120;
        }
        s.verdict = match (s.kind, s.name.as_str()) {
            (Kind::Irq, "local_timer") => Verdict::Tick,
            (Kind::Irq, "reschedule") => Verdict::Excluded("the model sends its own reschedule IPIs".into()),
            (Kind::Thread, _) if !s.pids.is_empty() && s.pids.is_subset(transient) => {
                Verdict::Excluded(format!("transient: a process started less than {MIN_AGE_S:.0} s before the end, or gone since"))
            }
            (Kind::Thread, _) if s.total_ns() as f64 > LOAD_SHARE * window_ns as f64 => Verdict::Excluded(format!(
                "load, not background activity: {:.0} % of a CPU",
                100.0 * s.total_ns() as f64 / window_ns as f64
            )),
            _ => Verdict::Noise,
        };
    }
    sources.sort_by(|a, b| a.kind.cmp(&b.kind).then(b.total_ns().cmp(&a.total_ns())).then(a.name.cmp(&b.name)));
    Census { window_ns, cpus: cpus.to_vec(), hz, sources }
}

/// The loop method's interferences: each CPU's tick gaps (by phase, when HZ is known) as
/// `local_timer`, the others as unattributed gaps, short and long apart.
pub fn loop_interferences(runs: &[LoopRun], hz: Option<u64>) -> Vec<Interference> {
    let mut out = Vec::new();
    for r in runs {
        let ticks = match hz {
            Some(hz) if hz > 0 => gaps::tick_gaps(&r.gaps, 1_000_000_000 / hz, r.end.saturating_sub(r.start)),
            _ => vec![false; r.gaps.len()],
        };
        for (g, tick) in r.gaps.iter().zip(ticks) {
            let (kind, name) = match (tick, g.len >= LONG_GAP_NS) {
                (true, _) => (Kind::Irq, "local_timer"),
                (false, false) => (Kind::Gap, "interruptions < 10 us"),
                (false, true) => (Kind::Gap, "interruptions >= 10 us"),
            };
            out.push(Interference { cpu: r.cpu, kind, name: name.into(), pid: -1, prio: 120, start: g.start, dur: g.len, ends_activation: true });
        }
    }
    out
}

/// The tracefs method's hardware noise: the loop gaps with no traced event on their CPU
/// inside them (1 µs of slack either side: the text's timestamps are truncated to µs).
pub fn unattributed_gaps(runs: &[LoopRun], t: &Trace) -> Vec<Interference> {
    let mut out = Vec::new();
    for r in runs {
        for g in &r.gaps {
            if !t.any_event(r.cpu, g.start.saturating_sub(1_000), g.end() + 1_000) {
                out.push(Interference { cpu: r.cpu, kind: Kind::Gap, name: "hardware or hypervisor".into(), pid: -1, prio: 120, start: g.start, dur: g.len, ends_activation: true });
            }
        }
    }
    out
}

/// A profile entry's name: interrupts by name, softirqs as `TIMER softirq`.
fn entry_name(s: &Source) -> String {
    match s.kind {
        Kind::Softirq => format!("{} softirq", s.name),
        _ => s.name.clone(),
    }
}

/// ns → µs, to 0.01 µs.
fn us(ns: f64) -> f64 {
    (ns / 10.0).round() / 100.0
}

/// A mean interval in ms, to the µs (a rate measured over seconds has no more digits).
fn ms(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

impl Census {
    /// The CPUs measured, as a profile's `cpus` field: `all` if every online CPU was.
    fn cpus_field(&self, online: usize) -> String {
        let set = CpuSet::from_cpus(self.cpus.iter().copied());
        if self.cpus.len() == online && set == CpuSet::range(0, online) {
            "all".into()
        } else {
            set.to_list_string()
        }
    }

    /// The profile: each [`Verdict::Noise`] source with its measured rate (as a mean interval)
    /// and mean length; a source on every CPU at rates within 2× of each other is one per-CPU
    /// entry, any other one entry per CPU it was seen on; a thread group not tied to a CPU is
    /// one task that may run anywhere. `label` says how it was measured (it starts every
    /// entry's `source`); `online` is the number of online CPUs. A [`Kind::Gap`] entry's
    /// handler is its mean length less `irq_entry_exit_ns`: the gap holds the interrupt entry
    /// and exit the model charges on top of every handler.
    pub fn to_profile(&self, name: &str, label: &str, skew_tick: bool, online: usize, irq_entry_exit_ns: u64) -> NoiseProfile {
        let w_ms = self.window_ns as f64 / 1e6;
        let w_s = w_ms / 1e3;
        let all = self.cpus_field(online);
        let mut p = NoiseProfile {
            name: name.into(),
            description: format!("{label}: {w_s:.1} s on CPUs {}", CpuSet::from_cpus(self.cpus.iter().copied()).to_list_string()),
            skew_tick,
            cost_jitter: 0.0,
            tasks: vec![],
            irqs: vec![],
        };
        for s in &self.sources {
            let arrival = s.arrival();
            let arr = match (arrival, s.interval_cv()) {
                (Arrival::Periodic, Some(cv)) => format!(", periodic (interval CV {cv:.2})"),
                (_, Some(cv)) => format!(", interval CV {cv:.2}"),
                _ => String::new(),
            };
            // `n` activations per instance (the mean over instances for a per-CPU entry).
            let figures = |n: f64, where_: &str, st: Stats| {
                format!("{label}: {n:.0} in {w_s:.1} s {where_}, mean {:.1} us, sd {:.1}, max {:.1}{arr}", st.mean_ns / 1e3, st.sd_ns / 1e3, st.max_ns as f64 / 1e3)
            };
            match &s.verdict {
                Verdict::Excluded(_) => continue,
                Verdict::Tick => {
                    // Interrupts beyond the tick: hrtimers (the watchdog's, high-resolution
                    // sleeps) through the same vector.
                    let Some(hz) = self.hz else { continue };
                    let expected = hz as f64 * w_s;
                    let excess: f64 = self.cpus.iter().map(|c| (s.instances.get(c).map_or(0, |a| a.count) as f64 - expected).max(0.0)).sum();
                    let per_cpu = excess / self.cpus.len().max(1) as f64;
                    if per_cpu > 0.05 * expected && per_cpu >= 1.0 {
                        p.irqs.push(NoiseIrq {
                            name: "hrtimer".into(),
                            per_cpu: true,
                            cpus: all.clone(),
                            period_ms: ms(w_ms / per_cpu),
                            arrival: Arrival::Poisson,
                            handler_us: us(s.mean_ns()),
                            source: format!("{label}: local_timer interrupts beyond HZ={hz} per CPU, {per_cpu:.0} per CPU in {w_s:.1} s, mean {:.1} us", s.mean_ns() / 1e3),
                        });
                    }
                    continue;
                }
                Verdict::Noise => {}
            }
            let counts: Vec<u64> = self.cpus.iter().map(|c| s.instances.get(c).map_or(0, |a| a.count)).collect();
            let (lo, hi) = (counts.iter().copied().min().unwrap_or(0), counts.iter().copied().max().unwrap_or(0));
            let one_per_cpu = !s.anywhere && lo > 0 && hi <= 2 * lo;
            // (name, per_cpu, cpus, activations per instance, where, their lengths)
            let mut entries: Vec<(String, bool, String, f64, String, Stats)> = Vec::new();
            let whole = Stats::of(s.instances.values());
            if s.anywhere {
                let seen = CpuSet::from_cpus(s.instances.keys().copied()).to_list_string();
                entries.push((entry_name(s), false, all.clone(), s.count() as f64, format!("(on CPUs {seen})"), whole));
            } else if one_per_cpu {
                let on = CpuSet::from_cpus(self.cpus.iter().copied()).to_list_string();
                entries.push((entry_name(s), true, all.clone(), s.count() as f64 / self.cpus.len() as f64, format!("per CPU on CPUs {on}"), whole));
            } else {
                let several = s.instances.len() > 1;
                for (cpu, a) in &s.instances {
                    let n = if s.name.contains("{cpu}") {
                        entry_name(s).replace("{cpu}", &cpu.to_string())
                    } else if several {
                        format!("{} (CPU {cpu})", entry_name(s))
                    } else {
                        entry_name(s)
                    };
                    entries.push((n, false, cpu.to_string(), a.count as f64, format!("on CPU {cpu}"), Stats::of([a])));
                }
            }
            for (n, per_cpu, cpus, count, where_, st) in entries {
                if count <= 0.0 {
                    continue;
                }
                let source = figures(count, &where_, st);
                let period_ms = ms(w_ms / count);
                if s.kind == Kind::Thread {
                    let (nice, rt) = match s.prio {
                        p @ 100..=139 => (p - 120, String::new()),
                        p if p < 100 => (-20, format!("; real-time (kernel prio {p}), modelled as nice -20")),
                        _ => (19, String::new()),
                    };
                    p.tasks.push(NoiseTask {
                        name: n,
                        per_cpu,
                        cpus,
                        period_ms,
                        arrival,
                        run_us: us(st.mean_ns),
                        run_sd_us: us(st.sd_ns),
                        nice,
                        source: source + &rt,
                    });
                } else {
                    let handler_ns = if s.kind == Kind::Gap { (st.mean_ns - irq_entry_exit_ns as f64).max(0.0) } else { st.mean_ns };
                    p.irqs.push(NoiseIrq { name: n, per_cpu, cpus, period_ms, arrival, handler_us: us(handler_ns), source });
                }
            }
        }
        p
    }
}
