//! schbench, the current version (2023 rewrite; `masoncl/schbench@24e32b8:schbench.c`, the
//! version mmtests runs is `@6300b8f`, identical but for `--split`).
//!
//! `-m` message threads each start `-t` workers (default ⌈nprocs/m⌉). A worker posts its
//! message thread (futex wake, non-sync) and waits on its own futex; when woken it records the
//! wakeup latency (now − the time the message thread stamped before its wake loop), sleeps
//! `-s` µs (usleep, a timer wakeup), does `-n` naive matrix multiplies over a `-F` KB
//! footprint holding the lock of the CPU it runs on (`lock_this_cpu()`, unless `-L` or `-C`),
//! records the request latency (from before the sleep) and counts one request. A
//! message thread waits for posts and wakes every worker that posted. Once a second the main
//! thread turns the request count into an RPS sample; every `-i` seconds it prints the
//! wakeup/request/RPS percentiles (fio "plat" buckets, [`super::stats`]) and `current rps`;
//! `-z` zeroes the stats every so many seconds, `-w` once after warmup. It stops after `-r`
//! seconds (the workload's duration) and prints the totals and `average rps`.
//!
//! Modelling choices (each visible in the task graph):
//! * the message thread's list: workers wake a counting futex per message thread and wait on a
//!   shared per-message-thread futex; the message thread consumes one post and wakes one
//!   waiter at a time, so posts that arrive while it works are handled in the same run without
//!   it blocking — as the real `xlist_wake_all` batch — but with one futex syscall per post;
//! * latency pairing: the k-th wake of a message thread is paired with the k-th wakeup (in time
//!   order) among its workers, stamped per wake rather than once per batch;
//! * work: the README's calibration (`-F 256 -n 5 -C`: request p50 16.9 ms on a 52-CPU box,
//!   every CPU running a worker since `-t` defaults to nprocs) is taken as 5 multiplies of 104³
//!   with both SMT siblings busy; workers get `smt_throughput` 1.1 (matrix code gains little from
//!   SMT **\[EST\]**; the kernel's old `smt_gain` was 1.15), so one multiply alone on a core costs 16.9/5 × 1.1/2 = 1.86 ms
//!   **\[EST\]**, scaled by n³ for other footprints;
//! * the per-CPU lock around the work (`do_work()` → `lock_this_cpu()`, off with `-L` and
//!   with `-C`): `CpuSpinLock`/`CpuSpinUnlock` on the process's one lock array (set 0; `--copies`
//!   gives each copy its own). A worker spins in user space on the lock of the CPU it sampled
//!   until the holder unlocks, then re-checks its CPU (model: `wakesim_model::user_locks`).
//!   Two workers stacked on a CPU therefore lose the holder's preempted time to spinning, which
//!   is how the real benchmark turns placement mistakes into lower RPS and longer requests;
//! * `sched delay` (from `/proc/<tid>/schedstat`) is not printed: the workload output sees no
//!   per-task scheduler statistics.
//!
//! Not modelled (rejected): `-R`/`-A` (RPS mode), `-j` (JSON file).

use super::prog::{Prog, FOREVER};
use super::stats::{plat_percentiles, show_latencies, Plat};
use super::{Invocation, Tool};
use crate::args::{self, Opt};
use crate::{Dur, LatencyPercentiles, MarkRecord, Metric, Outcome, Reporter, TaskSpec, Workload, WorkloadError};
use wakesim_engine::{Time, SEC};
use wakesim_machine::CpuSet;

pub(crate) const TOOL: Tool = Tool {
    name: "schbench",
    command: &["schbench"],
    flags: "current version: -m N (1), -t N (nprocs/m), -r SECS (30), -s USECS (100), -n OPS (5), \
            -F KB (256), -p BYTES (pipe mode), -w SECS (0), -i SECS (10), -z SECS, -L, -C, \
            -M LIST|auto, -W LIST|auto, --split PCT, -J NAME; --old/--v1 selects the 2016–2022 \
            version (see schbench-v1)",
    build,
};

const NAME: &str = "schbench";

/// Core throughput of the matrix multiply with both SMT siblings busy **\[EST\]**.
pub const SMT_THROUGHPUT: f64 = 1.1;
/// ns per multiply-add of the naive u64 matrix multiply alone on a core: the README's 16.9 ms
/// per 5 × 104³ under full SMT load, times `SMT_THROUGHPUT / 2`.
pub const NS_PER_MAC: f64 = 16.9e6 / 5.0 / (104.0 * 104.0 * 104.0) * SMT_THROUGHPUT / 2.0;
/// memset bandwidth for pipe mode's page fills (bytes per ns) **\[EST\]**: ~10 GB/s, one core.
pub const MEMSET_BYTES_PER_NS: f64 = 10.0;

/// The process's `per_cpu_locks` array (one per schbench process).
pub const LOCK_SET: u32 = 0;

pub const MARK_WAKE: u32 = 0;
pub const MARK_WOKEN: u32 = 1;
pub const MARK_WSTART: u32 = 2;
pub const MARK_DONE: u32 = 3;

#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub message_threads: u32,
    pub workers: Option<u32>,
    pub runtime: u64,
    pub warmup: u64,
    pub interval: u64,
    pub zero: u64,
    pub footprint_kb: u64,
    pub operations: u64,
    pub sleep_us: u64,
    pub pipe: u64,
    pub calibrate: bool,
    pub no_locking: bool,
    pub message_cpus: Option<Pin>,
    pub worker_cpus: Option<Pin>,
    pub split: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Pin {
    Auto,
    List(Vec<usize>),
}

impl Default for Options {
    fn default() -> Self {
        Options {
            message_threads: 1,
            workers: None,
            runtime: 30,
            warmup: 0,
            interval: 10,
            zero: 0,
            footprint_kb: 256,
            operations: 5,
            sleep_us: 100,
            pipe: 0,
            calibrate: false,
            no_locking: false,
            message_cpus: None,
            worker_cpus: None,
            split: None,
        }
    }
}

const OPTS: &[Opt] = &[
    Opt { short: Some('p'), long: "pipe", value: true },
    Opt { short: Some('m'), long: "message-threads", value: true },
    Opt { short: Some('M'), long: "message-cpus", value: true },
    Opt { short: Some('W'), long: "worker-cpus", value: true },
    Opt { short: Some('t'), long: "threads", value: true },
    Opt { short: Some('r'), long: "runtime", value: true },
    Opt { short: Some('R'), long: "rps", value: true },
    Opt { short: Some('A'), long: "auto-rps", value: true },
    Opt { short: Some('F'), long: "cache_footprint", value: true },
    Opt { short: Some('C'), long: "calibrate", value: false },
    Opt { short: Some('L'), long: "no-locking", value: false },
    Opt { short: Some('n'), long: "operations", value: true },
    Opt { short: Some('s'), long: "sleep_usec", value: true },
    Opt { short: Some('w'), long: "warmuptime", value: true },
    Opt { short: Some('i'), long: "intervaltime", value: true },
    Opt { short: Some('z'), long: "zerotime", value: true },
    Opt { short: Some('j'), long: "json", value: true },
    Opt { short: Some('J'), long: "jobname", value: true },
    Opt { short: None, long: "split", value: true },
    Opt { short: None, long: "old", value: false },
    Opt { short: None, long: "v1", value: false },
];

/// A non-negative count as schbench's `atoi` would take it, but rejecting what atoi would
/// silently turn into 0.
pub(crate) fn count(tool: &str, g: &args::Given, max: u64) -> Result<u64, WorkloadError> {
    let n = args::int_value(tool, g)?;
    if n < 0 || n as u64 > max {
        return Err(WorkloadError::arg(tool, format!("'{}' must be in 0..={max}, got {n}", g.spelled)));
    }
    Ok(n as u64)
}

/// schbench's `parse_cpuset`: `a-b,c`, no strides.
pub(crate) fn pin(tool: &str, g: &args::Given) -> Result<Pin, WorkloadError> {
    let v = g.value.as_deref().unwrap_or("");
    if v == "auto" {
        return Ok(Pin::Auto);
    }
    let bad = || WorkloadError::arg(tool, format!("'{}': failed to parse cpuset information '{v}'", g.spelled));
    let mut cpus = Vec::new();
    for tok in v.split(',') {
        let (a, b) = tok.split_once('-').unwrap_or((tok, tok));
        let a: usize = a.parse().map_err(|_| bad())?;
        let b: usize = b.parse().map_err(|_| bad())?;
        if b < a || b >= wakesim_machine::MAX_CPUS {
            return Err(bad());
        }
        cpus.extend(a..=b);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(Pin::List(cpus))
}

fn build(inv: &Invocation) -> Result<Workload, WorkloadError> {
    if inv.args.iter().any(|a| a == "--old" || a == "--v1") {
        let rest: Vec<String> = inv.args.iter().filter(|a| *a != "--old" && *a != "--v1").cloned().collect();
        return Ok(super::schbench_old::workload(&super::schbench_old::parse(&rest)?));
    }
    let o = parse(inv.args)?;
    let nprocs = match o.workers {
        Some(_) => 0,
        None => inv.ctx.cpus(NAME, "the default -t (workers = nprocs / message threads)")?,
    };
    workload(&o, nprocs)
}

pub fn parse(argv: &[String]) -> Result<Options, WorkloadError> {
    let p = args::parse(NAME, argv, OPTS, false)?;
    if let Some(a) = p.positional.first() {
        return Err(WorkloadError::arg(NAME, format!("Error Extra arguments '{a}'")));
    }
    let mut o = Options::default();
    let mut warmup = None;
    for g in &p.opts {
        match g.long {
            "pipe" => {
                // PIPE_TRANSFER_BUFFER: larger values are clamped to 1 MiB with a message.
                o.pipe = count(NAME, g, u64::from(u32::MAX))?.min(1 << 20);
                o.warmup = 0;
            }
            "message-threads" => o.message_threads = count(NAME, g, 4096)? as u32,
            "message-cpus" => o.message_cpus = Some(pin(NAME, g)?),
            "worker-cpus" => o.worker_cpus = Some(pin(NAME, g)?),
            "threads" => o.workers = Some(count(NAME, g, 1 << 16)? as u32),
            "runtime" => o.runtime = count(NAME, g, 1 << 24)?,
            "cache_footprint" => o.footprint_kb = count(NAME, g, 1 << 24)?,
            "calibrate" => o.calibrate = true,
            "no-locking" => o.no_locking = true,
            "operations" => o.operations = count(NAME, g, 1 << 20)?,
            "sleep_usec" => o.sleep_us = count(NAME, g, 1 << 32)?,
            "warmuptime" => warmup = Some(count(NAME, g, 1 << 24)?),
            "intervaltime" => o.interval = count(NAME, g, 1 << 24)?,
            "zerotime" => o.zero = count(NAME, g, 1 << 24)?,
            "split" => {
                let s = count(NAME, g, 100).map_err(|_| WorkloadError::arg(NAME, "split must be between 0 and 100"))?;
                o.split = Some(s);
            }
            "jobname" => {}
            "rps" | "auto-rps" => return Err(WorkloadError::arg(NAME, format!("'{}' (requests-per-second mode) is not modelled", g.spelled))),
            _ => return Err(WorkloadError::arg(NAME, format!("'{}' (JSON output file) is not supported; wakesim run --json writes the results", g.spelled))),
        }
    }
    if o.message_threads == 0 {
        return Err(WorkloadError::arg(NAME, "-m must be at least 1 (no message thread, no worker)"));
    }
    if let Some(w) = warmup {
        o.warmup = w;
    }
    if o.calibrate {
        o.no_locking = true;
    }
    if o.runtime < 30 {
        o.warmup = 0;
    }
    Ok(o)
}

/// `sqrt(kb * 1024 / 3 / sizeof(unsigned long))`, truncated.
pub fn matrix_size(kb: u64) -> u64 {
    ((kb * 1024 / 3 / 8) as f64).sqrt() as u64
}

/// CPU time of one request's `do_work()`.
pub fn work_ns(o: &Options) -> Time {
    let mac = |n: u64| (n * n * n) as f64 * NS_PER_MAC;
    let ns = match o.split {
        Some(pct) => {
            let private = matrix_size(o.footprint_kb * pct / 100);
            let shared = matrix_size(o.footprint_kb * (100 - pct) / 100);
            let ops_private = o.operations * pct / 100;
            let ops_shared = o.operations - ops_private;
            ops_private as f64 * mac(private) + ops_shared as f64 * mac(shared)
        }
        None => o.operations as f64 * mac(matrix_size(o.footprint_kb)),
    };
    ns.round() as Time
}

/// Task index of message thread `i` and of its worker `k` (schbench's thread_data layout).
pub fn msg_task(i: u32, t: u32) -> u32 {
    i * (t + 1)
}

pub fn workload(o: &Options, nprocs: u32) -> Result<Workload, WorkloadError> {
    let m = o.message_threads;
    let t = o.workers.unwrap_or_else(|| nprocs.div_ceil(m));
    if t == 0 {
        return Err(WorkloadError::arg(NAME, "-t 0 workers: nothing would run"));
    }
    if u64::from(m) * u64::from(t + 1) > 1 << 20 {
        return Err(WorkloadError::arg(NAME, format!("{m} message threads x {t} workers is more than 1048576 threads")));
    }
    let memset = |bytes: u64| (bytes as f64 / MEMSET_BYTES_PER_NS).round() as Time;
    let work = work_ns(o);
    let mut tasks = Vec::new();
    let worker_set = match &o.worker_cpus {
        // thread_auto_pin() resets its loop index by shadowing it, so "auto" leaves the
        // workers on every CPU.
        Some(Pin::List(c)) => Some(CpuSet::from_cpus(c.iter().copied())),
        _ => None,
    };
    let auto = matches!(o.message_cpus, Some(Pin::Auto)) || matches!(o.worker_cpus, Some(Pin::Auto));
    for i in 0..m {
        let (post, list) = (2 * i, 2 * i + 1);
        let mut mp = Prog::new();
        mp.repeat(FOREVER).wait(post);
        if o.pipe > 0 {
            mp.compute(memset(o.pipe));
        }
        mp.mark(MARK_WAKE).wake(list, 1).end();
        let mut mt = TaskSpec::new("schbench-msg", mp.build());
        mt.mm = 1;
        let msg_cpu = match (&o.message_cpus, auto) {
            (_, true) => Some(i as usize),
            (Some(Pin::List(c)), _) if !c.is_empty() => Some(c[i as usize % c.len()]),
            _ => None,
        };
        if let Some(c) = msg_cpu {
            mt.allowed = Some(CpuSet::from_cpus([c]));
        }
        tasks.push(mt);
        for _ in 0..t {
            let mut wp = Prog::new();
            wp.repeat(FOREVER);
            if o.pipe > 0 {
                wp.compute(memset(o.pipe));
            }
            wp.wake(post, 1).wait(list).mark(MARK_WOKEN);
            if o.pipe == 0 {
                if o.calibrate {
                    if o.sleep_us > 0 {
                        wp.op(crate::Op::Sleep(Dur::Fixed(o.sleep_us * 1000)));
                    }
                    wp.mark(MARK_WSTART);
                } else if o.sleep_us > 0 {
                    wp.op(crate::Op::Sleep(Dur::Fixed(o.sleep_us * 1000)));
                }
                // do_work(): `if (!skip_locking) lock = lock_this_cpu();` (even with -n 0).
                if !o.no_locking {
                    wp.op(crate::Op::CpuSpinLock { set: LOCK_SET });
                }
                wp.compute(work);
                if !o.no_locking {
                    wp.op(crate::Op::CpuSpinUnlock { set: LOCK_SET });
                }
            }
            wp.mark(MARK_DONE).end();
            let mut wt = TaskSpec::new("schbench-worker", wp.build());
            wt.mm = 1;
            wt.smt_throughput = Some(SMT_THROUGHPUT);
            wt.allowed = worker_set.clone();
            tasks.push(wt);
        }
    }
    let mut notes = Vec::new();
    if o.workers.is_none() {
        notes.push(format!("setting worker threads to {t}"));
    }
    if auto {
        notes.push("auto pinning message and worker threads".into());
    }
    for i in 0..m {
        if let Some(set) = &tasks[msg_task(i, t) as usize].allowed {
            notes.push(format!("Pinning to message thread index {i} cpu {}", set.first().unwrap_or(0)));
        }
    }
    Ok(Workload {
        name: NAME.into(),
        tasks,
        channels: vec![],
        futexes: 2 * m,
        reporter: Box::new(SchbenchReporter { opts: o.clone(), m, t, notes }),
        duration: (o.runtime > 0).then_some(o.runtime * SEC),
    })
}

#[derive(Debug, Clone)]
pub struct SchbenchReporter {
    pub opts: Options,
    pub m: u32,
    pub t: u32,
    pub notes: Vec<String>,
}

/// One latency sample: when it was recorded and its value in µs.
type Sample = (Time, u32);

/// gettimeofday() resolution: timestamps in whole microseconds.
fn us(t: Time) -> u64 {
    t / 1_000
}

/// Pairs the k-th record of `a` with the k-th of `b` (both sorted): (time of b, b − a in µs),
/// dropping zero deltas as schbench does (`if (delta > 0) add_lat`).
pub(crate) fn pair(a: &[Time], b: &[Time]) -> Vec<Sample> {
    a.iter()
        .zip(b)
        .filter_map(|(&x, &y)| {
            let d = us(y).saturating_sub(us(x));
            (d > 0).then_some((y, d.min(u64::from(u32::MAX)) as u32))
        })
        .collect()
}

impl SchbenchReporter {
    fn group(&self, task: u32) -> u32 {
        task / (self.t + 1)
    }

    /// Wakeup and request latency samples, and request completion times, all time-sorted.
    pub fn samples(&self, out: &Outcome) -> (Vec<Sample>, Vec<Sample>, Vec<Time>) {
        let m = self.m as usize;
        let mut wake: Vec<Vec<Time>> = vec![Vec::new(); m];
        let mut woken: Vec<Vec<Time>> = vec![Vec::new(); m];
        let nt = (self.t + 1) as usize * m;
        let mut per_task: Vec<Vec<&MarkRecord>> = vec![Vec::new(); nt];
        for r in &out.marks {
            let g = self.group(r.task) as usize;
            match r.mark {
                MARK_WAKE if g < m => wake[g].push(r.time),
                MARK_WOKEN if g < m => woken[g].push(r.time),
                _ => {}
            }
            if let Some(v) = per_task.get_mut(r.task as usize) {
                v.push(r);
            }
        }
        let mut wakeup = Vec::new();
        for g in 0..m {
            wake[g].sort_unstable();
            woken[g].sort_unstable();
            wakeup.extend(pair(&wake[g], &woken[g]));
        }
        let start_mark = if self.opts.calibrate { MARK_WSTART } else { MARK_WOKEN };
        let mut request = Vec::new();
        let mut done = Vec::new();
        for recs in &per_task {
            let mut started: Option<Time> = None;
            for r in recs {
                if r.mark == start_mark {
                    started = Some(r.time);
                } else if r.mark == MARK_DONE {
                    done.push(r.time);
                    if let Some(s) = started.take() {
                        let d = us(r.time).saturating_sub(us(s));
                        if d > 0 {
                            request.push((r.time, d.min(u64::from(u32::MAX)) as u32));
                        }
                    }
                }
            }
        }
        wakeup.sort_unstable();
        request.sort_unstable();
        done.sort_unstable();
        (wakeup, request, done)
    }

    fn hist(samples: &[Sample], from: Time, to: Time) -> Plat {
        let mut p = Plat::default();
        for &(t, v) in samples {
            if t > from && t <= to {
                p.add(v);
            }
        }
        p
    }
}

const PLIST: [f64; 5] = [20.0, 50.0, 90.0, 99.0, 99.9];
const LAT: u32 = 0b11110;
const RPS: u32 = 0b00111;
const P99: u32 = 0b01000;
const P50: u32 = 0b00010;

impl Reporter for SchbenchReporter {
    fn render(&self, out: &Outcome) -> String {
        let o = &self.opts;
        let (wakeup, request, done) = self.samples(out);
        let mut s: String = self.notes.iter().map(|n| format!("{n}\n")).collect();
        let end = out.end_time;
        let runtime = o.runtime;
        // Whole seconds the main thread's sleep_for_runtime() loop ran (its ticks at 0, 1, …).
        let last_tick = if runtime > 0 { runtime.min(end / SEC) } else { end / SEC };
        let mut rps = Plat::default();
        let mut reset: Time = 0; // stats (histograms) count samples after this time
        let mut warmup_done = false;
        let mut last_calc = 0u64;
        let mut last_rps_count = 0usize;
        let mut last_rps_tick = 0u64;
        let loops_at = |tick: Time| done.partition_point(|&d| d <= tick);
        if o.pipe == 0 {
            for k in 0..=last_tick {
                let now = k * SEC;
                // Comparisons at whole seconds count the sleep(1) overshoot as "past".
                if o.warmup > 0 && !warmup_done && k >= o.warmup && k > 0 {
                    warmup_done = true;
                    s += "warmup done, zeroing stats\n";
                    reset = now;
                    rps = Plat::default();
                } else {
                    let loops = loops_at(now);
                    // (loops since the last sample) / (seconds since it); 0/0 at start is 0.
                    let sample = if k == last_rps_tick { 0.0 } else { (loops - last_rps_count) as f64 / (k - last_rps_tick) as f64 };
                    last_rps_count = loops;
                    last_rps_tick = k;
                    rps.add(sample as u32);
                    if k - last_calc >= o.interval && k > 0 {
                        last_calc = k;
                        s += &show_latencies(&Self::hist(&wakeup, reset, now), "Wakeup Latencies", "usec", k, &PLIST, LAT, P99);
                        s += &show_latencies(&Self::hist(&request, reset, now), "Request Latencies", "usec", k, &PLIST, LAT, P99);
                        s += &show_latencies(&rps, "RPS", "requests", k, &PLIST, RPS, P50);
                        s += &format!("current rps: {sample:.2}\n");
                    }
                }
                if o.zero > 0 && k > 0 && now - reset >= o.zero * SEC {
                    reset = now;
                    rps = Plat::default();
                }
            }
        }
        let total = done.len();
        if o.pipe > 0 {
            s += &show_latencies(&Self::hist(&wakeup, reset, end), "Wakeup Latencies", "usec", runtime, &PLIST, 0b11111, P99);
            let (ops, bytes) = self.transfer(out, total);
            let (v, unit) = pretty_size(bytes);
            s += &format!("avg worker transfer: {ops:.2} ops/sec {v:.2}{unit}/s\n");
        } else {
            s += &show_latencies(&Self::hist(&wakeup, reset, end), "Wakeup Latencies", "usec", runtime, &PLIST, LAT, P99);
            s += &show_latencies(&Self::hist(&request, reset, end), "Request Latencies", "usec", runtime, &PLIST, LAT, P99);
            s += &show_latencies(&rps, "RPS", "requests", runtime, &PLIST, RPS, P50);
            s += &format!("average rps: {:.2}\n", total as f64 / runtime.max(1) as f64);
        }
        if out.capped && o.runtime > 0 && out.end_time + SEC / 2 < o.runtime * SEC {
            s += &format!("# wakesim: stopped by the run's --duration at {:.3} s, before -r {}\n", out.end_time as f64 / 1e9, o.runtime);
        }
        s
    }

    fn metric(&self, out: &Outcome) -> Metric {
        let (wakeup, _, done) = self.samples(out);
        if self.opts.pipe > 0 {
            let mut p = Plat::default();
            wakeup.iter().for_each(|&(_, v)| p.add(v));
            let v = p.percentiles(&PLIST).get(3).map_or(0, |x| x.0);
            return Metric { name: "wakeup latency p99".into(), unit: "us".into(), value: f64::from(v), higher_is_better: false };
        }
        let secs = if self.opts.runtime > 0 { self.opts.runtime as f64 } else { out.end_time as f64 / 1e9 };
        Metric { name: "average rps".into(), unit: "requests/s".into(), value: done.len() as f64 / secs.max(1e-9), higher_is_better: true }
    }

    /// The headline, then the p99 of each latency distribution schbench prints (after warmup).
    fn metrics(&self, out: &Outcome) -> Vec<Metric> {
        let mut v = vec![self.metric(out)];
        if self.opts.pipe > 0 {
            return v;
        }
        for l in self.latency_percentiles(out, &[99.0]) {
            let name = format!("{} p99", l.name.trim_end_matches(" Latencies").to_lowercase());
            v.push(Metric { name, unit: "us".into(), value: l.points[0].1, higher_is_better: false });
        }
        v
    }

    /// Wakeup and request latencies (µs) recorded after the warmup, as schbench buckets them.
    fn latency_percentiles(&self, out: &Outcome, ps: &[f64]) -> Vec<LatencyPercentiles> {
        let (wakeup, request, _) = self.samples(out);
        let from = self.opts.warmup * SEC;
        let mut v = vec![plat_percentiles("Wakeup Latencies", "usec", &Self::hist(&wakeup, from, Time::MAX), ps)];
        if self.opts.pipe == 0 {
            v.push(plat_percentiles("Request Latencies", "usec", &Self::hist(&request, from, Time::MAX), ps));
        }
        v
    }
}

impl SchbenchReporter {
    /// Pipe mode: (loops per second per worker-second, bytes per second), as
    /// `loop_count * USEC_PER_SEC / loop_runtime` with loop_runtime summed over workers.
    fn transfer(&self, out: &Outcome, loops: usize) -> (f64, f64) {
        let workers = f64::from(self.m * self.t);
        let loop_runtime_s = workers * out.end_time as f64 / 1e9;
        let ops = loops as f64 / loop_runtime_s.max(1e-12);
        (ops, ops * self.opts.pipe as f64)
    }
}

/// schbench's `pretty_size`.
pub(crate) fn pretty_size(mut n: f64) -> (f64, &'static str) {
    const UNITS: [&str; 7] = ["B", "KB", "MB", "GB", "TB", "PB", "EB"];
    let mut i = 0;
    while n >= 1024.0 && i + 1 < UNITS.len() {
        n /= 1024.0;
        i += 1;
    }
    (n, UNITS[i])
}
