//! Background activity ("OS noise"): what a server runs while a benchmark runs, as a profile of
//! ordinary tasks woken by timers and of device interrupts. The model (`wakesim_model::noise`)
//! turns each entry into a real task or interrupt source; this module is only the profile and
//! its file format (`FORMAT.md`, "Noise profiles").
//!
//! Every rate and run length carries its source. The default profile of the presets,
//! [`NoiseProfile::server`], is built from the kernel's own defaults (tick, `vmstat_update`,
//! the soft-lockup watchdog) and the osnoise tracer's published measurements;
//! `wakesim calibrate` writes one measured on this machine.

use serde::{Deserialize, Serialize};

/// How the intervals between a source's activations are distributed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// A periodic timer: a fixed period, first activation at a uniformly random phase.
    #[default]
    Periodic,
    /// Independent arrivals (a Poisson process) with the given mean interval.
    Poisson,
}

/// A background task: woken by a timer, runs, sleeps again (a kworker, a kthread, a daemon).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseTask {
    /// Task name; `{cpu}` is replaced by the CPU of a per-CPU instance.
    pub name: String,
    /// One instance pinned to each CPU of `cpus` (a per-CPU kthread or kworker); else one
    /// instance that may run on any CPU of `cpus`.
    #[serde(default)]
    pub per_cpu: bool,
    /// CPU list (`0-3,8`) or `all` (default).
    #[serde(default = "all")]
    pub cpus: String,
    /// Mean interval between wakeups, ms.
    pub period_ms: f64,
    #[serde(default)]
    pub arrival: Arrival,
    /// Mean CPU time per wakeup, µs.
    pub run_us: f64,
    /// Standard deviation of the run time, µs (normal, truncated at 0); 0 = fixed.
    #[serde(default)]
    pub run_sd_us: f64,
    /// Nice value (kworkers and most kthreads run at 0; `kworker/*H` at -20).
    #[serde(default)]
    pub nice: i32,
    /// Where the figures come from.
    #[serde(default)]
    pub source: String,
}

/// A device (or other non-tick) interrupt source: a handler run in hard-irq context on the CPU
/// its effective affinity names (one CPU: x86 and GICv3 deliver a vector to one CPU).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseIrq {
    pub name: String,
    /// One source per CPU of `cpus` (a per-CPU queue vector, the per-CPU watchdog hrtimer);
    /// else one source on the first CPU of `cpus`.
    #[serde(default)]
    pub per_cpu: bool,
    #[serde(default = "all")]
    pub cpus: String,
    /// Mean interval between interrupts of one source, ms.
    pub period_ms: f64,
    #[serde(default = "poisson")]
    pub arrival: Arrival,
    /// Handler time (hard irq + its softirq), µs, on top of the interrupt entry and exit.
    pub handler_us: f64,
    #[serde(default)]
    pub source: String,
}

/// A noise profile: `--noise none`, a preset's default, or a TOML file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseProfile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The `skew_tick=1` boot parameter: CPU `c`'s tick is offset by `c × (TICK_NSEC/2) /
    /// nr_cpus` (`tick_sched_init()` / `tick_setup_sched_timer()`); without it every CPU ticks
    /// on one grid.
    #[serde(default)]
    pub skew_tick: bool,
    /// Run-to-run jitter of the kernel's own work: every kernel step's duration is multiplied by
    /// a lognormal factor of mean 1 and this coefficient of variation (cache and TLB state,
    /// branch history and the like make no two passes through a code path take the same time).
    /// 0 (the default) charges every cost exactly as the cost profile gives it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cost_jitter: f64,
    #[serde(default, rename = "task")]
    pub tasks: Vec<NoiseTask>,
    #[serde(default, rename = "irq")]
    pub irqs: Vec<NoiseIrq>,
}

fn all() -> String {
    "all".into()
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

fn poisson() -> Arrival {
    Arrival::Poisson
}

impl NoiseProfile {
    /// The perfectly quiet machine: the tick and the benchmark, nothing else.
    pub fn none() -> NoiseProfile {
        NoiseProfile { name: "none".into(), description: "no background activity".into(), skew_tick: false, cost_jitter: 0.0, tasks: vec![], irqs: vec![] }
    }

    pub fn is_none(&self) -> bool {
        self.tasks.is_empty() && self.irqs.is_empty() && !self.skew_tick && self.cost_jitter == 0.0
    }

    /// The presets' default: an idle distribution server (no desktop, sshd and a monitoring
    /// agent) with the kernel's own periodic work.
    pub fn server() -> NoiseProfile {
        let task = |name: &str, per_cpu: bool, period_ms: f64, arrival: Arrival, run_us: f64, run_sd_us: f64, source: &str| NoiseTask {
            name: name.into(),
            per_cpu,
            cpus: all(),
            period_ms,
            arrival,
            run_us,
            run_sd_us,
            nice: 0,
            source: source.into(),
        };
        let irq = |name: &str, per_cpu: bool, cpus: &str, period_ms: f64, arrival: Arrival, handler_us: f64, source: &str| NoiseIrq {
            name: name.into(),
            per_cpu,
            cpus: cpus.into(),
            period_ms,
            arrival,
            handler_us,
            source: source.into(),
        };
        NoiseProfile {
            name: "server".into(),
            description: "idle distribution server: per-CPU kworkers, vmstat, RCU, the watchdog, a NIC queue, sshd/journald/monitoring agent".into(),
            skew_tick: false,
            cost_jitter: 0.0,
            tasks: vec![
                task("kworker/{cpu}:1", true, 100.0, Arrival::Poisson, 5.5, 2.0,
                    "Documentation/tools/rtla/rtla-osnoise-top.rst and osnoise-tracer.rst: 0-41 thread interruptions/s per CPU, ~5.5 us each"),
                task("kworker/{cpu}:0-vmstat", true, 1000.0, Arrival::Periodic, 4.0, 1.0,
                    "mm/vmstat.c: vmstat_update every sysctl_stat_interval = HZ (1 s) per CPU; run length [EST]"),
                task("rcu_preempt", false, 8.0, Arrival::Poisson, 6.0, 3.0,
                    "kernel/rcu/tree.c: rcu_gp_kthread, force-quiescent-state scans every jiffies_till_next_fqs (~3 jiffies) while a grace period runs; run length [EST]"),
                task("systemd-journal", false, 2000.0, Arrival::Poisson, 60.0, 20.0, "[EST] a quiet server's journald"),
                task("monitoring-agent", false, 1000.0, Arrival::Periodic, 300.0, 100.0,
                    "[EST] a 1 s metrics scrape (node_exporter/collectd class)"),
                task("irqbalance", false, 10000.0, Arrival::Periodic, 1000.0, 200.0,
                    "irqbalance: default --interval 10 s, reading /proc/interrupts; run length [EST]"),
            ],
            irqs: vec![
                irq("watchdog", true, "all", 4000.0, Arrival::Periodic, 3.1,
                    "kernel/watchdog.c: softlockup hrtimer every watchdog_thresh*2/5 = 4 s per CPU, whose stopper work runs above every fair task; 3.1 us (osnoise-tracer.rst's migration kthread sample)"),
                irq("softirq", true, "all", 35.0, Arrival::Poisson, 10.0,
                    "Documentation/tools/rtla/rtla-osnoise-top.rst: 27-30 softirqs/s per CPU beside the tick (osnoise-tracer.rst: 16-49); length [EST], under the example's largest single noise of 24-56 us"),
                irq("eth0-rx", false, "0", 10.0, Arrival::Poisson, 4.0,
                    "[EST] a management NIC's receive queue on CPU 0 (ssh, monitoring)"),
            ],
        }
    }

    /// Parses a noise profile file; errors name the key.
    pub fn from_toml_str(s: &str) -> Result<NoiseProfile, String> {
        let p: NoiseProfile = toml::from_str(s).map_err(|e| match e.span() {
            Some(sp) => format!("line {}: {}", s[..sp.start].matches('\n').count() + 1, e.message()),
            None => e.message().to_string(),
        })?;
        p.check()?;
        Ok(p)
    }

    /// Loads `none`, `server` or a TOML file.
    pub fn lookup(name: &str) -> Result<NoiseProfile, String> {
        match name {
            "none" => Ok(NoiseProfile::none()),
            "server" | "default" => Ok(NoiseProfile::server()),
            path if !path.contains('/') && !path.ends_with(".toml") && !std::path::Path::new(path).exists() => {
                Err(format!("unknown noise profile '{path}' (known: none, server; or a noise-profile TOML file)"))
            }
            path => {
                let text = std::fs::read_to_string(path).map_err(|e| format!("noise profile {path}: {e}"))?;
                NoiseProfile::from_toml_str(&text).map_err(|e| format!("noise profile {path}: {e}"))
            }
        }
    }

    /// Every period positive, every run length non-negative, every CPU list well-formed.
    pub fn check(&self) -> Result<(), String> {
        let bad_cpus = |what: &str, name: &str, cpus: &str| -> Result<(), String> {
            if cpus == "all" {
                return Ok(());
            }
            crate::CpuSet::parse_list(cpus).map(|_| ()).map_err(|e| format!("{what} '{name}': cpus: {e}"))
        };
        if !(self.cost_jitter >= 0.0 && self.cost_jitter <= 1.0) {
            return Err(format!("cost_jitter must be a coefficient of variation in [0, 1], not {}", self.cost_jitter));
        }
        for t in &self.tasks {
            if !(t.period_ms > 0.0 && t.period_ms.is_finite()) {
                return Err(format!("task '{}': period_ms must be a positive number, not {}", t.name, t.period_ms));
            }
            if !(t.run_us >= 0.0 && t.run_us.is_finite() && t.run_sd_us >= 0.0 && t.run_sd_us.is_finite()) {
                return Err(format!("task '{}': run_us and run_sd_us must be non-negative numbers", t.name));
            }
            if !(-20..=19).contains(&t.nice) {
                return Err(format!("task '{}': nice must be in -20..19, not {}", t.name, t.nice));
            }
            bad_cpus("task", &t.name, &t.cpus)?;
        }
        for i in &self.irqs {
            if !(i.period_ms > 0.0 && i.period_ms.is_finite()) {
                return Err(format!("irq '{}': period_ms must be a positive number, not {}", i.name, i.period_ms));
            }
            if !(i.handler_us >= 0.0 && i.handler_us.is_finite()) {
                return Err(format!("irq '{}': handler_us must be a non-negative number", i.name));
            }
            bad_cpus("irq", &i.name, &i.cpus)?;
        }
        Ok(())
    }

    /// The profile as a TOML file (what `calibrate` writes and `--noise FILE` reads).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a noise profile serializes")
    }
}
