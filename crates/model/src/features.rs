//! The feature registry: every heuristic the model implements is a named flag here, as
//! `kernel/sched/features.h` names them, with its default. Kernel profiles (another issue) will
//! set these per version; `--features +NAME,-NAME` flips them on top.

/// Declares the feature table once: the struct, the name list and the defaults.
macro_rules! features {
    ($( $(#[doc = $doc:literal])* $name:ident = $default:expr ),* $(,)?) => {
        /// Feature flags of one run.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
        #[allow(non_snake_case)]
        pub struct Features { $( $(#[doc = $doc])* pub $name: bool, )* }

        impl Default for Features {
            fn default() -> Self { Features { $( $name: $default, )* } }
        }

        impl Features {
            /// Every feature: (name, one-line description).
            pub const ALL: &'static [(&'static str, &'static str)] = &[
                $( (stringify!($name), concat!($($doc),*)), )*
            ];

            /// Reads a feature by name.
            pub fn get(&self, name: &str) -> Option<bool> {
                match name { $( stringify!($name) => Some(self.$name), )* _ => None }
            }

            /// Sets a feature by name; `Err` lists the valid names.
            pub fn set(&mut self, name: &str, on: bool) -> Result<(), String> {
                match name {
                    $( stringify!($name) => { self.$name = on; Ok(()) } )*
                    _ => Err(format!("unknown feature '{}' (valid: {})", name,
                        Self::ALL.iter().map(|f| f.0).collect::<Vec<_>>().join(", "))),
                }
            }
        }
    };
}

features! {
    /// EEVDF: keep the lag a task had when it slept (place_entity).
    PLACE_LAG = true,
    /// EEVDF: a forked task's first deadline is half a slice away.
    PLACE_DEADLINE_INITIAL = true,
    /// EEVDF: the current task runs until its deadline changes before a wakee can preempt it.
    RUN_TO_PARITY = true,
    /// Wakeups may preempt the current task (check_preempt_wakeup_fair).
    WAKEUP_PREEMPTION = true,
    /// Remote wakeups may go through the target CPU's wakelist (ttwu_queue_wakelist).
    TTWU_QUEUE = true,
    /// Same-LLC wakeups to a CPU whose runqueue is empty use the wakelist (v6.0, Tianchen Ding).
    TTWU_QUEUE_IDLE = true,
    /// wake_affine: prefer an idle waker/prev CPU (wake_affine_idle).
    WA_IDLE = true,
    /// wake_affine_idle: an idle prev CPU wins (806486c377e3, "Do not migrate if the prev_cpu is idle").
    WA_IDLE_PREV = true,
    /// wake_affine: compare effective loads (wake_affine_weight).
    WA_WEIGHT = true,
    /// wake_affine_weight: inflate prev's load by half the imbalance_pct (favours the waker's CPU).
    WA_BIAS = true,
    /// wake_affine_weight: waker CPU only on strictly lower load; sync adds 1 to prev (Mel Gorman 2018).
    WA_WEIGHT_NOEQUAL = true,
    /// select_idle_cpu scan depth from LLC utilisation (nr_idle_scan, v5.20/6.0).
    SIS_UTIL = true,
    /// util_est: CPU utilisation includes the estimated utilisation of queued tasks.
    UTIL_EST = true,
    /// A call-function IPI to a polling idle CPU only sets NEED_RESCHED (v5.8, b2a02fc43a1f).
    CSD_POLL = true,
    /// Newidle balancing is gated by avg_idle against the domain's max_newidle_lb_cost.
    NEWIDLE_COST_GATE = true,
    /// Idle CPUs stop their tick and are balanced by a NOHZ idle-load-balancer kick.
    NOHZ_IDLE_BALANCE = true,
    /// Tasks recently run (within migration_cost) resist migration (task_hot).
    CACHE_HOT = true,
    /// EEVDF picking (v6.6+); off = CFS (vruntime, min/wakeup granularity, sleeper credit).
    EEVDF = true,
    /// Same-LLC wakelist when the wakee is still descheduling on its CPU (WF_ON_CPU, v5.8).
    TTWU_QUEUE_ON_CPU = true,
    /// Idle-scan depth from avg_idle / avg_scan_cost (SIS_PROP, default before v6.0).
    SIS_PROP = false,
    /// Task-group load_avg updated at most once per ms per cfs_rq (v6.7, 1528c661c24b).
    TG_LOAD_RATELIMIT = false,
    /// Skip newidle balance when schedule() is entered from the idle task (K Prateek Nayak RFC, 2024).
    NEWIDLE_SKIP_IPI = false,
    /// schedule_idle() returns at once when nothing is runnable (v6.12, 3dcac251b066).
    SM_IDLE = false,
    /// Abel Wu's SIS filter (2022, v6 "SIS_CORE"): the idle scan walks a per-LLC mask of idle cores.
    SIS_FILTER = false,
    /// David Vernet's shared runqueue (2023, v3): an LLC-wide sharded FIFO pulled from before newidle.
    SHARED_RUNQ = false,
    /// SHARED_RUNQ v4 fixes: pull after the newidle gates, cost accounted, LLC levels skipped.
    SHARED_RUNQ_GATED = false,
    /// A task that blocks while ineligible stays queued until picked or woken (v6.12, DELAY_DEQUEUE).
    DELAY_DEQUEUE = false,
    /// A delayed task's positive lag is dropped when it leaves or is woken (v6.12, DELAY_ZERO).
    DELAY_ZERO = false,
}

/// A kernel profile: the mainline behaviour of one kernel version, as feature settings on top
/// of the defaults (which are v6.6).
pub struct KernelProfile {
    pub name: &'static str,
    pub summary: &'static str,
    /// (feature, value) pairs applied to `Features::default()`.
    pub set: &'static [(&'static str, bool)],
}

/// The newest profile: the command line's default.
pub const NEWEST_KERNEL: &str = "v6.12";

/// The profiles, oldest first. Sources: research/kernel-wakeup.md §2.4, §3.6, §4.9, §5.4,
/// §10.4, §11.3–11.5 and the commit ids named there.
pub const KERNELS: &[KernelProfile] = &[
    KernelProfile {
        name: "v4.15",
        summary: "CFS; SIS_PROP scan depth; wake_affine_weight moves on ties; no wakelist within an LLC; call-function IPIs always sent",
        set: &[
            ("EEVDF", false),
            ("SIS_PROP", true),
            ("SIS_UTIL", false),
            ("WA_WEIGHT_NOEQUAL", false),
            ("WA_IDLE_PREV", false),
            ("TTWU_QUEUE_ON_CPU", false),
            ("TTWU_QUEUE_IDLE", false),
            ("CSD_POLL", false),
        ],
    },
    KernelProfile {
        name: "v5.19",
        summary: "CFS; SIS_PROP; tie rule (082f764a2f3f); CSD_POLL (b2a02fc43a1f); same-LLC wakelist only for WF_ON_CPU with nr_running <= 1",
        set: &[("EEVDF", false), ("SIS_PROP", true), ("SIS_UTIL", false), ("TTWU_QUEUE_IDLE", false)],
    },
    KernelProfile {
        name: "v6.0",
        summary: "CFS; SIS_UTIL replaces SIS_PROP; same-LLC wakelist to an empty runqueue (f3dd3f674555)",
        set: &[("EEVDF", false)],
    },
    KernelProfile { name: "v6.5", summary: "the last CFS kernel", set: &[("EEVDF", false)] },
    KernelProfile { name: "v6.6", summary: "EEVDF (147f3efaa241): lag placement, virtual deadlines, run-to-parity", set: &[] },
    KernelProfile {
        name: "v6.7",
        summary: "EEVDF; tg->load_avg updates rate-limited to once per ms per cfs_rq (1528c661c24b); SIS_PROP removed",
        set: &[("TG_LOAD_RATELIMIT", true)],
    },
    KernelProfile {
        name: "v6.12",
        summary: "EEVDF; SM_IDLE idle re-entry fast path (3dcac251b066); delayed dequeue (152e11f6df29)",
        set: &[("TG_LOAD_RATELIMIT", true), ("SM_IDLE", true), ("DELAY_DEQUEUE", true), ("DELAY_ZERO", true)],
    },
];

impl Features {
    /// The features of a kernel profile, or an error listing the known profiles.
    pub fn for_kernel(name: &str) -> Result<Features, String> {
        let k = KERNELS.iter().find(|k| k.name == name).ok_or_else(|| {
            format!("unknown kernel profile '{}' (known: {})", name, KERNELS.iter().map(|k| k.name).collect::<Vec<_>>().join(", "))
        })?;
        let mut f = Features::default();
        for (n, v) in k.set {
            f.set(n, *v).expect("profile names a known feature");
        }
        Ok(f)
    }

    /// Feature combinations that no kernel had and that the model cannot run meaningfully.
    pub fn check(&self) -> Result<(), String> {
        if self.SIS_PROP && self.SIS_UTIL {
            return Err("SIS_PROP and SIS_UTIL both limit the idle scan; enable one (-SIS_UTIL or -SIS_PROP)".into());
        }
        if self.SHARED_RUNQ_GATED && !self.SHARED_RUNQ {
            return Err("SHARED_RUNQ_GATED modifies SHARED_RUNQ; enable +SHARED_RUNQ too".into());
        }
        if self.DELAY_DEQUEUE && !self.EEVDF {
            return Err("DELAY_DEQUEUE needs EEVDF eligibility (+EEVDF)".into());
        }
        if self.SM_IDLE && self.NEWIDLE_SKIP_IPI {
            return Err("SM_IDLE supersedes NEWIDLE_SKIP_IPI; enable one of them".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_kernel_is_the_last_profile_and_every_profile_is_consistent() {
        assert_eq!(KERNELS.last().unwrap().name, NEWEST_KERNEL);
        for k in KERNELS {
            Features::for_kernel(k.name).unwrap().check().unwrap();
        }
    }

    #[test]
    fn unknown_kernel_and_feature_names_list_the_valid_ones() {
        let e = Features::for_kernel("v9.9").unwrap_err();
        assert!(e.contains("v6.12"), "{e}");
        let e = Features::default().set("NOPE", true).unwrap_err();
        assert!(e.contains("SIS_FILTER"), "{e}");
    }
}
