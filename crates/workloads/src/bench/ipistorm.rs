//! ipistorm (`antonblanchard/ipistorm@6d93af8:ipistorm.c`), a kernel module that stresses
//! `smp_call_function_single()`: one kthread bound to each CPU of `cpulist` (default: all),
//! started together, each calling a do-nothing function on `target = (cpu + offset) % N`
//! (with `mask`: `((cpu & ~mask) + ((cpu + offset) & mask)) % N`) and, with `wait=1`, spinning
//! in `csd_lock_wait()` until it has run; `delay` µs of `usleep_range()` between calls.
//!
//! Typed as on insmod: `ipistorm numipi=100000 single=1 offset=8 cpulist=8 wait=1` or
//! `insmod ipistorm.ko …`. Upstream loops for `timeout` seconds (default 30); the modified
//! version AMD and Intel use (SM_IDLE thread, lore 20240809092240.6921-1-kprateek.nayak@amd.com)
//! adds `numipi=N`: N calls per thread, timed to completion.
//!
//! Two choices to know:
//! * `N` is the machine's CPU count (`nr_cpu_ids`), as the modified version evidently uses
//!   (`cpulist=8 offset=8` targets CPU 16 there). Upstream divides by the weight of `cpulist`,
//!   which would send `cpulist=8 offset=8` to CPU 0.
//! * `single=0`: `smp_call_function()` to every other CPU (`CallFuncAll`); the IPI count is
//!   calls × (CPUs − 1), and each thread prints `ipistorm: CPU -> all`.
//! * `delay=0` sleeps not at all. Upstream calls `usleep_range(0, 1)` even then: an hrtimer
//!   whose hard expiry is 1 µs away, so the thread blocks and its CPU idles once per call. With
//!   that sleep the model's call takes 4.4 µs on epyc-9754 and the target's idle path is off the
//!   critical path: SM_IDLE and NEWIDLE_SKIP_IPI both come to 1.00× (published 0.25–0.90× and
//!   0.55×), which only back-to-back calls can show. So the numipi version the posts measured
//!   evidently calls back to back, and `delay > 0` is when the model sleeps.
//!
//! The module has no fixed output (vmstat's interrupt rate, or a stopwatch). wakesim prints the
//! module's `pr_info` line per thread, then `Elapsed: X.XXXXXX s` (first thread start to last
//! thread end) and `Rate: R IPIs/s (N IPIs)`.

use super::prog::{Prog, FOREVER};
use super::{Invocation, Tool};
use crate::{Metric, Op, Outcome, Reporter, TaskSpec, Workload, WorkloadError};
use wakesim_engine::SEC;
use wakesim_machine::CpuSet;

pub(crate) const TOOL: Tool = Tool {
    name: "ipistorm",
    command: &["ipistorm"],
    flags: "module parameters as on insmod: numipi=N (0: run for timeout), timeout=SECS (30), \
            single=0|1 (0: every other CPU), offset=N (1), mask=N (0), cpulist=LIST (all), wait=0|1 (1), \
            delay=USECS (0)",
    build,
};

pub(crate) const INSMOD: Tool = Tool {
    name: "insmod ipistorm.ko",
    command: &["insmod", "ipistorm.ko"],
    flags: "same parameters as ipistorm",
    build,
};

pub const MARK_START: u32 = 0;
pub const MARK_END: u32 = 1;
/// Timeout mode: recorded every [`BATCH`] calls.
pub const MARK_BATCH: u32 = 2;
/// Calls per batch mark in timeout mode (the count is exact to within `BATCH - 1` per thread).
pub const BATCH: u64 = 64;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    pub numipi: u64,
    pub timeout: u64,
    pub wait: bool,
    pub single: bool,
    pub offset: u64,
    pub mask: u64,
    pub delay: u64,
    pub cpulist: Option<String>,
}

impl Default for Params {
    fn default() -> Self {
        Params { numipi: 0, timeout: 30, wait: true, single: false, offset: 1, mask: 0, delay: 0, cpulist: None }
    }
}

fn build(inv: &Invocation) -> Result<Workload, WorkloadError> {
    let p = parse(inv.args)?;
    let n = inv.ctx.cpus("ipistorm", "the IPI target (cpu + offset) % nr_cpus")?;
    workload(&p, n)
}

/// Kernel `strtobool` (`kstrtobool`): 1/y/Y/t/T/on and 0/n/N/f/F/off.
fn kbool(name: &str, v: &str) -> Result<bool, WorkloadError> {
    match v {
        "1" | "y" | "Y" | "t" | "T" | "on" | "yes" | "true" => Ok(true),
        "0" | "n" | "N" | "f" | "F" | "off" | "no" | "false" => Ok(false),
        _ => Err(WorkloadError::arg("ipistorm", format!("parameter '{name}' expects a boolean (0/1, y/n), got '{v}'"))),
    }
}

fn kulong(name: &str, v: &str) -> Result<u64, WorkloadError> {
    let (digits, radix) = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (v, 10),
    };
    u64::from_str_radix(digits, radix).map_err(|_| {
        WorkloadError::arg("ipistorm", format!("parameter '{name}' expects an unsigned number, got '{v}'"))
    })
}

/// Parses `name=value` module parameters.
pub fn parse(argv: &[String]) -> Result<Params, WorkloadError> {
    let mut p = Params::default();
    for a in argv {
        let Some((k, v)) = a.split_once('=') else {
            return Err(WorkloadError::arg("ipistorm", format!("expected a module parameter name=value, got '{a}'")));
        };
        match k {
            "numipi" => p.numipi = kulong(k, v)?,
            "timeout" => {
                let t: i64 = v.parse().map_err(|_| WorkloadError::arg("ipistorm", format!("parameter 'timeout' expects seconds, got '{v}'")))?;
                if t <= 0 {
                    return Err(WorkloadError::arg("ipistorm", format!("parameter 'timeout' must be positive, got {t}")));
                }
                p.timeout = t as u64;
            }
            "wait" => p.wait = kbool(k, v)?,
            "single" => p.single = kbool(k, v)?,
            "offset" => p.offset = kulong(k, v)?,
            "mask" => p.mask = kulong(k, v)?,
            "delay" => p.delay = kulong(k, v)?,
            "cpulist" => p.cpulist = Some(v.to_string()),
            _ => {
                return Err(WorkloadError::arg(
                    "ipistorm",
                    format!("unknown parameter '{k}' (known: numipi, timeout, wait, single, offset, mask, delay, cpulist)"),
                ))
            }
        }
    }
    Ok(p)
}

/// The target of the thread on `cpu` (ipistorm_thread()).
pub fn target(p: &Params, cpu: u64, n: u64) -> u64 {
    if p.mask != 0 {
        let base = cpu & !p.mask;
        let off = (cpu + p.offset) & p.mask;
        (base + off) % n
    } else {
        (cpu + p.offset) % n
    }
}

pub fn workload(p: &Params, nr_cpus: u32) -> Result<Workload, WorkloadError> {
    let n = u64::from(nr_cpus.max(1));
    let cpus: Vec<usize> = match &p.cpulist {
        Some(l) => {
            let set = crate::cpulist::parse_cpu_list(l).map_err(|e| WorkloadError::arg("ipistorm", format!("cpulist: {e}")))?;
            if set.is_empty() {
                return Err(WorkloadError::arg("ipistorm", "cpulist is empty"));
            }
            set.iter().collect()
        }
        None => (0..nr_cpus as usize).collect(),
    };
    let nthreads = cpus.len() as u32;
    let mut tasks = Vec::new();
    let mut targets = Vec::new();
    for &c in &cpus {
        let t = target(p, c as u64, n) as u32;
        targets.push((c as u32, t));
        let mut prog = Prog::new();
        // `while (atomic_read(&running) < num_cpus)`: all threads start together.
        prog.op(Op::Barrier { id: 0, parties: nthreads }).mark(MARK_START);
        let call = |prog: &mut Prog| {
            prog.op(if p.single { Op::CallFunc { cpu: t, wait: p.wait } } else { Op::CallFuncAll { wait: p.wait } });
            if p.delay > 0 {
                prog.op(Op::Sleep(crate::Dur::Uniform { lo: p.delay * 1000, hi: (p.delay + 1) * 1000 }));
            }
        };
        if p.numipi > 0 {
            prog.repeat(p.numipi);
            call(&mut prog);
            prog.end().mark(MARK_END);
        } else {
            prog.repeat(FOREVER).repeat(BATCH);
            call(&mut prog);
            prog.end().mark(MARK_BATCH).end();
        }
        let mut ts = TaskSpec::new(format!("ipistorm/{c}"), prog.build());
        ts.allowed = Some(CpuSet::from_cpus([c]));
        ts.start_cpu = Some(c as u32);
        tasks.push(ts);
    }
    Ok(Workload {
        name: "ipistorm".into(),
        tasks,
        channels: vec![],
        futexes: 0,
        // single=0: each call runs the function on every other CPU.
        reporter: Box::new(IpistormReporter { params: p.clone(), targets, per_call: if p.single { 1 } else { n - 1 } }),
        duration: (p.numipi == 0).then_some(p.timeout * SEC),
    })
}

#[derive(Debug, Clone)]
pub struct IpistormReporter {
    pub params: Params,
    /// (thread CPU, target CPU).
    pub targets: Vec<(u32, u32)>,
    /// IPIs (function calls on another CPU) per call: 1, or every other CPU with `single=0`.
    pub per_call: u64,
}

impl IpistormReporter {
    /// (elapsed ns, calls made).
    pub fn measure(&self, out: &Outcome) -> (u64, u64) {
        let start = crate::marks::first_mark(out, MARK_START).unwrap_or(0);
        if self.params.numipi > 0 {
            let done = out.marks.iter().filter(|m| m.mark == MARK_END).count() as u64;
            let end = crate::marks::last_mark(out, MARK_END).unwrap_or(out.end_time);
            let end = if out.capped { out.end_time } else { end };
            // Threads that had not finished at the cap are counted as their batches cannot be.
            (end.saturating_sub(start), done * self.params.numipi * self.per_call)
        } else {
            let batches = out.marks.iter().filter(|m| m.mark == MARK_BATCH).count() as u64;
            (out.end_time.saturating_sub(start), batches * BATCH * self.per_call)
        }
    }
}

impl Reporter for IpistormReporter {
    fn render(&self, out: &Outcome) -> String {
        let mut s = String::new();
        for (c, t) in &self.targets {
            if self.params.single {
                s += &format!("ipistorm: {c} -> {t}\n");
            } else {
                s += &format!("ipistorm: {c} -> all\n");
            }
        }
        let (ns, calls) = self.measure(out);
        let secs = ns as f64 / 1e9;
        s += &format!("Elapsed: {secs:.6} s\n");
        s += &format!("Rate: {:.1} IPIs/s ({calls} IPIs)\n", calls as f64 / secs.max(1e-12));
        if out.capped && self.params.numipi > 0 {
            s += "# wakesim: the run hit the duration cap before every thread made numipi calls\n";
        }
        s
    }

    fn metric(&self, out: &Outcome) -> Metric {
        let (ns, calls) = self.measure(out);
        if self.params.numipi > 0 {
            Metric { name: "elapsed".into(), unit: "s".into(), value: ns as f64 / 1e9, higher_is_better: false }
        } else {
            Metric { name: "IPI rate".into(), unit: "IPIs/s".into(), value: calls as f64 / (ns as f64 / 1e9).max(1e-12), higher_is_better: true }
        }
    }
}
