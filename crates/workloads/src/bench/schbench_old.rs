//! schbench, the 2016–2022 message/worker version (`masoncl/schbench@2eef447:schbench.c`,
//! Dec 2021, the last before the 2023 rewrite; `@3d16b23` of 2016 lacks `-C`). Typed as
//! `schbench-v1 …` or `schbench --old …` / `schbench --v1 …`.
//!
//! `-m` message threads (2) each start `-t` workers (16). A worker posts its message thread,
//! waits on its own futex, then spins `-c` µs (`usec_spin`, 30 ms) and posts again. A message
//! thread waits for a post, spins `-C` µs (30 ms), sleeps `-s` µs plus up to a quarter of it
//! (`usleep(sleeptime + rand % (sleeptime/4))`, 30–37.5 ms), then stamps the time and wakes every
//! worker that posted. The metric is the worker's wakeup latency (wake stamp → running),
//! printed as percentiles 50/75/90/95/99/99.5/99.9 every `-i` seconds and at the end.
//!
//! Modelling choices:
//! * the message thread waits for all of its `t` workers' posts (a counting futex consumed `t`
//!   times) instead of the first one; with the workers all done long before its 60 ms think
//!   time ends (the benchmark's normal regime) this is the same cycle; under overload the real
//!   one leaves late workers for the next cycle;
//! * latency: worker k's j-th wakeup pairs with its message thread's j-th wake stamp (exact:
//!   one futex per worker); recorded as schbench does, `after_spin − wake − cputime` ≈
//!   wakeup delay + 1 µs of spin-loop granularity;
//! * spins are CPU time (`Compute`), where `usec_spin` is wall-clock: a spin that is preempted
//!   ends later in the model;
//! * `-C` is parsed but has no effect, as in `@2eef447` (`message_cputime = message_cputime`):
//!   message threads always spin 30 ms; `--cache_footprint` maps to the unhandled 'f' and is
//!   ignored there too (only `-F` works).
//!
//! Not modelled (rejected): `-p` pipe mode, `-R`/`-A` RPS modes, `-a` auto mode.

use super::prog::{Prog, FOREVER};
use super::schbench::{count, matrix_size, NS_PER_MAC};
use super::stats::{plat_percentiles, Plat};
use super::Tool;
use crate::args::{self, Opt};
use crate::{Dur, LatencyPercentiles, Metric, Op, Outcome, Reporter, TaskSpec, Workload, WorkloadError};
use wakesim_engine::{Time, SEC};

pub(crate) const TOOL: Tool = Tool {
    name: "schbench-v1",
    command: &["schbench-v1"],
    flags: "2016–2022 version (also schbench --old/--v1): -m N (2), -t N (16), -r SECS (30), \
            -s USECS (30000), -c USECS (30000), -C (no effect, as in @2eef447), -w SECS (5), \
            -i SECS (10), -z SECS, -n OPS with -F KB (matrix mode), -j (jitter)",
    build: |inv| Ok(workload(&parse(inv.args)?)),
};

const NAME: &str = "schbench";

pub const MARK_WAKE: u32 = 0;
pub const MARK_WOKEN: u32 = 1;

#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub message_threads: u32,
    pub workers: u32,
    pub runtime: u64,
    pub sleeptime: u64,
    pub cputime: u64,
    pub message_cputime: u64,
    pub warmup: u64,
    pub interval: u64,
    pub zero: u64,
    pub footprint_kb: u64,
    pub operations: u64,
    pub jitter: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            message_threads: 2,
            workers: 16,
            runtime: 30,
            sleeptime: 30_000,
            cputime: 30_000,
            message_cputime: 30_000,
            warmup: 5,
            interval: 10,
            zero: 0,
            footprint_kb: 1536,
            operations: 0,
            jitter: false,
        }
    }
}

const OPTS: &[Opt] = &[
    Opt { short: Some('a'), long: "auto", value: false },
    Opt { short: Some('j'), long: "jitter", value: false },
    Opt { short: Some('p'), long: "pipe", value: true },
    Opt { short: Some('m'), long: "message-threads", value: true },
    Opt { short: Some('t'), long: "threads", value: true },
    Opt { short: Some('r'), long: "runtime", value: true },
    Opt { short: Some('R'), long: "rps", value: true },
    Opt { short: Some('A'), long: "auto-rps", value: true },
    Opt { short: Some('s'), long: "sleeptime", value: true },
    Opt { short: Some('C'), long: "message_cputime", value: true },
    Opt { short: Some('c'), long: "cputime", value: true },
    Opt { short: Some('F'), long: "F", value: true },
    Opt { short: None, long: "cache_footprint", value: true },
    Opt { short: Some('n'), long: "operations", value: true },
    Opt { short: Some('w'), long: "warmuptime", value: true },
    Opt { short: Some('i'), long: "intervaltime", value: true },
    Opt { short: Some('z'), long: "zerotime", value: true },
];

pub fn parse(argv: &[String]) -> Result<Options, WorkloadError> {
    let p = args::parse(NAME, argv, OPTS, false)?;
    if let Some(a) = p.positional.first() {
        return Err(WorkloadError::arg(NAME, format!("Error Extra arguments '{a}'")));
    }
    let mut o = Options::default();
    for g in &p.opts {
        match g.long {
            "jitter" => o.jitter = true,
            "message-threads" => o.message_threads = count(NAME, g, 4096)? as u32,
            "threads" => o.workers = count(NAME, g, 1 << 16)? as u32,
            "runtime" => o.runtime = count(NAME, g, 1 << 24)?,
            "sleeptime" => o.sleeptime = count(NAME, g, 1 << 31)?,
            "cputime" => o.cputime = count(NAME, g, 1 << 31)?,
            "message_cputime" => {
                count(NAME, g, 1 << 31)?;
            }
            "F" => o.footprint_kb = count(NAME, g, 1 << 24)?,
            "cache_footprint" => {}
            "operations" => o.operations = count(NAME, g, 1 << 20)?,
            "warmuptime" => o.warmup = count(NAME, g, 1 << 24)?,
            "intervaltime" => o.interval = count(NAME, g, 1 << 24)?,
            "zerotime" => o.zero = count(NAME, g, 1 << 24)?,
            other => {
                let what = match other {
                    "pipe" => "pipe mode",
                    "auto" => "auto mode",
                    _ => "requests-per-second mode",
                };
                return Err(WorkloadError::arg(NAME, format!("'{}' ({what}) of the old schbench is not modelled", g.spelled)));
            }
        }
    }
    if o.message_threads == 0 || o.workers == 0 {
        return Err(WorkloadError::arg(NAME, "-m and -t must be at least 1"));
    }
    if (1..4).contains(&o.sleeptime) {
        return Err(WorkloadError::arg(NAME, format!("-s {} crashes schbench@2eef447 (rand() % (sleeptime / 4) divides by zero); use 0 or at least 4", o.sleeptime)));
    }
    Ok(o)
}

pub fn workload(o: &Options) -> Workload {
    let (m, t) = (o.message_threads, o.workers);
    let spin = |us: u64| -> Option<Op> {
        if us == 0 {
            return None;
        }
        Some(Op::Compute(if o.jitter {
            // rand_r() % spin_time + 1 µs.
            Dur::Uniform { lo: 1_000, hi: us * 1_000 }
        } else {
            Dur::Fixed(us * 1_000)
        }))
    };
    let matrix = (o.operations > 0).then(|| matrix_size(o.footprint_kb));
    let mut tasks = Vec::new();
    // Futex i: message thread i's posts; then one per worker.
    let worker_futex = |i: u32, k: u32| m + i * t + k;
    for i in 0..m {
        let mut mp = Prog::new();
        mp.repeat(FOREVER).repeat(u64::from(t)).wait(i).end();
        if let Some(op) = spin(o.message_cputime) {
            mp.op(op);
        }
        if o.sleeptime > 0 {
            let lo = o.sleeptime * 1_000;
            let jitter = (o.sleeptime / 4).saturating_sub(1) * 1_000;
            mp.op(Op::Sleep(Dur::Uniform { lo, hi: lo + jitter }));
        }
        mp.mark(MARK_WAKE);
        for k in 0..t {
            mp.wake(worker_futex(i, k), 1);
        }
        mp.end();
        tasks.push(TaskSpec { mm: 1, ..TaskSpec::new("schbench", mp.build()) });
        for k in 0..t {
            let mut wp = Prog::new();
            wp.repeat(FOREVER).wake(i, 1).wait(worker_futex(i, k)).mark(MARK_WOKEN);
            match matrix {
                Some(n) => {
                    wp.compute(((n * n * n) as f64 * NS_PER_MAC * o.operations as f64).round() as Time);
                }
                None => {
                    if let Some(op) = spin(o.cputime) {
                        wp.op(op);
                    }
                }
            }
            wp.end();
            let mut wt = TaskSpec { mm: 1, ..TaskSpec::new("schbench", wp.build()) };
            if matrix.is_some() {
                wt.smt_throughput = Some(super::schbench::SMT_THROUGHPUT);
            }
            tasks.push(wt);
        }
    }
    Workload {
        name: "schbench-v1".into(),
        tasks,
        channels: vec![],
        futexes: m + m * t,
        reporter: Box::new(OldReporter { opts: o.clone() }),
        duration: (o.runtime > 0).then_some(o.runtime * SEC),
    }
}

#[derive(Debug, Clone)]
pub struct OldReporter {
    pub opts: Options,
}

const PLIST: [f64; 7] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9];

/// `show_latencies` of `@2eef447`: every percentile, a star on p99.
pub fn show_latencies(s: &Plat, runtime: u64) -> String {
    let mut o = String::new();
    let vals = s.percentiles(&PLIST);
    if !vals.is_empty() {
        o += &format!("Latency percentiles (usec) runtime {runtime} (s) ({} total samples)\n", s.nr_samples);
        for (i, (v, n)) in vals.iter().enumerate() {
            o += &format!("\t{}{:2.1}th: {:<10} ({} samples)\n", if i == 4 { "* " } else { "  " }, PLIST[i], v, n);
        }
    }
    o += &format!("\t  min={}, max={}\n", s.min, s.max);
    o
}

impl OldReporter {
    /// (time recorded, latency µs as add_lat() stores it), time-sorted.
    pub fn samples(&self, out: &Outcome) -> Vec<(Time, u32)> {
        let (m, t) = (self.opts.message_threads, self.opts.workers);
        let per = (t + 1) as usize;
        let mut wake: Vec<Vec<Time>> = vec![Vec::new(); m as usize];
        let mut woken: Vec<Vec<Time>> = vec![Vec::new(); per * m as usize];
        for r in &out.marks {
            let task = r.task as usize;
            match r.mark {
                MARK_WAKE => wake[task / per].push(r.time),
                MARK_WOKEN => woken[task].push(r.time),
                _ => {}
            }
        }
        // Matrix mode records after_work − wake without subtracting anything.
        let extra = if self.opts.operations > 0 {
            let n = matrix_size(self.opts.footprint_kb);
            ((n * n * n) as f64 * NS_PER_MAC * self.opts.operations as f64 / 1e3) as u64
        } else {
            1
        };
        let mut v = Vec::new();
        for (task, ws) in woken.iter().enumerate() {
            let g = task / per;
            for (a, b) in wake[g].iter().zip(ws) {
                let us = b / 1_000 - a / 1_000;
                // after the spin: delta = lat + cputime + 1; add_lat() subtracts cputime.
                let rec = us + extra;
                v.push((*b, rec.clamp(1, u64::from(u32::MAX)) as u32));
            }
        }
        v.sort_unstable();
        v
    }
}

impl Reporter for OldReporter {
    fn render(&self, out: &Outcome) -> String {
        let o = &self.opts;
        let samples = self.samples(out);
        let hist = |from: Time, to: Time| {
            let mut p = Plat::default();
            samples.iter().filter(|(t, _)| *t > from && *t <= to).for_each(|&(_, v)| p.add(v));
            p
        };
        let mut s = String::new();
        let mut reset = 0;
        let mut warmup_done = false;
        let mut last_calc = 0;
        let end_tick = if o.runtime > 0 { o.runtime.min(out.end_time / SEC) } else { out.end_time / SEC };
        // sleep_for_runtime(): the loop breaks at runtime before printing.
        for k in 0..end_tick.min(if o.runtime > 0 { o.runtime } else { u64::MAX }) {
            let now = k * SEC;
            if o.warmup > 0 && !warmup_done && k >= o.warmup && k > 0 {
                warmup_done = true;
                s += "warmup done, zeroing stats\n";
                reset = now;
            } else if k - last_calc >= o.interval && k > 0 {
                s += &show_latencies(&hist(reset, now), k);
                last_calc = k;
            }
            if o.zero > 0 && k > 0 && now - reset >= o.zero * SEC {
                reset = now;
            }
        }
        s += &show_latencies(&hist(reset, out.end_time), o.runtime);
        if out.capped && o.runtime > 0 && out.end_time + SEC / 2 < o.runtime * SEC {
            s += &format!("# wakesim: stopped by the run's --duration at {:.3} s, before -r {}\n", out.end_time as f64 / 1e9, o.runtime);
        }
        s
    }

    fn metric(&self, out: &Outcome) -> Metric {
        let mut p = Plat::default();
        let from = if self.opts.warmup > 0 { self.opts.warmup * SEC } else { 0 };
        self.samples(out).iter().filter(|(t, _)| *t > from).for_each(|&(_, v)| p.add(v));
        let v = p.percentiles(&PLIST).get(4).map_or(0, |x| x.0);
        Metric { name: "wakeup latency p99".into(), unit: "us".into(), value: f64::from(v), higher_is_better: false }
    }

    /// The wakeup latencies (µs) recorded after the warmup, as this schbench buckets them.
    fn latency_percentiles(&self, out: &Outcome, ps: &[f64]) -> Vec<LatencyPercentiles> {
        let mut p = Plat::default();
        let from = if self.opts.warmup > 0 { self.opts.warmup * SEC } else { 0 };
        self.samples(out).iter().filter(|(t, _)| *t > from).for_each(|&(_, v)| p.add(v));
        vec![plat_percentiles("Wakeup Latencies", "usec", &p, ps)]
    }
}
