//! The feature registry: every heuristic the model implements is a named flag here, with its
//! default and its [`Kind`]: a `SCHED_FEAT(...)` of mainline `kernel/sched/features.h`, a
//! mainline behaviour change between versions that has no SCHED_FEAT (the commit is named), a
//! mainline mechanism with no switch in the kernel, or an out-of-tree patch series (its lore
//! link). Kernel profiles ([`KERNELS`]) set these per version; `--features +NAME,-NAME`
//! ([`Features::apply`]) flips them on top.
//!
//! The table's defaults are the v6.6 base the profiles are written against ([`Features::base`]);
//! `Features::default()` is the newest profile, as the command line's default `--kernel` is.

/// Where a feature flag comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A `SCHED_FEAT(NAME, ...)` of mainline `kernel/sched/features.h`, in the versions where
    /// the profiles turn it on (it may be absent from others: SIS_PROP was removed in v6.7,
    /// PLACE_LAG and DELAY_DEQUEUE arrived with EEVDF in v6.6 and v6.12).
    SchedFeat,
    /// A mainline behaviour change between kernel versions that is not a SCHED_FEAT; the flag's
    /// description names the commit.
    Version,
    /// A mainline mechanism present in every profiled version with no switch in the kernel
    /// (short of a config option); the flag lets the model leave it out to measure its share.
    Mechanism,
    /// An out-of-tree patch series that was posted but not merged: its lore.kernel.org link.
    Patch(&'static str),
}

impl Kind {
    /// The short label `wakesim features` prints.
    pub fn label(self) -> &'static str {
        match self {
            Kind::SchedFeat => "SCHED_FEAT",
            Kind::Version => "version",
            Kind::Mechanism => "mechanism",
            Kind::Patch(_) => "patch",
        }
    }

    /// The patch series' lore link, for [`Kind::Patch`].
    pub fn link(self) -> Option<&'static str> {
        match self {
            Kind::Patch(url) => Some(url),
            _ => None,
        }
    }
}

/// Declares the feature table once: the struct, the name list, the kinds and the base values.
macro_rules! features {
    ($( $(#[doc = $doc:literal])* $name:ident ($kind:expr) = $default:expr ),* $(,)?) => {
        /// Feature flags of one run.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
        #[allow(non_snake_case)]
        pub struct Features { $( $(#[doc = $doc])* pub $name: bool, )* }

        impl Features {
            /// Every feature: (name, one-line description).
            pub const ALL: &'static [(&'static str, &'static str)] = &[
                $( (stringify!($name), concat!($($doc),*)), )*
            ];

            /// Every feature's kind, in the order of [`Features::ALL`].
            pub const KINDS: &'static [(&'static str, Kind)] = &[ $( (stringify!($name), $kind), )* ];

            /// The base the kernel profiles are written against: the v6.6 defaults of the table.
            /// `Features::for_kernel("v6.6")` is the same set; prefer naming the profile.
            pub fn base() -> Self { Features { $( $name: $default, )* } }

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

/// Shorthands for the table below.
const SCHED_FEAT: Kind = Kind::SchedFeat;
const VERSION: Kind = Kind::Version;
const MECHANISM: Kind = Kind::Mechanism;

features! {
    /// EEVDF: keep the lag a task had when it slept (place_entity).
    PLACE_LAG(SCHED_FEAT) = true,
    /// EEVDF: a forked task's first deadline is half a slice away.
    PLACE_DEADLINE_INITIAL(SCHED_FEAT) = true,
    /// EEVDF: the current task runs until its deadline changes before a wakee can preempt it.
    RUN_TO_PARITY(SCHED_FEAT) = true,
    /// Wakeups may preempt the current task (check_preempt_wakeup_fair).
    WAKEUP_PREEMPTION(SCHED_FEAT) = true,
    /// Remote wakeups may go through the target CPU's wakelist (ttwu_queue_wakelist).
    TTWU_QUEUE(SCHED_FEAT) = true,
    /// Same-LLC wakeups to a CPU whose runqueue is empty use the wakelist (v6.0, f3dd3f674555, Tianchen Ding).
    TTWU_QUEUE_IDLE(VERSION) = true,
    /// wake_affine: prefer an idle waker/prev CPU (wake_affine_idle).
    WA_IDLE(SCHED_FEAT) = true,
    /// wake_affine_idle: an idle prev CPU wins (806486c377e3, "Do not migrate if the prev_cpu is idle").
    WA_IDLE_PREV(VERSION) = true,
    /// wake_affine: compare effective loads (wake_affine_weight).
    WA_WEIGHT(SCHED_FEAT) = true,
    /// wake_affine_weight: inflate prev's load by half the imbalance_pct (favours the waker's CPU).
    WA_BIAS(SCHED_FEAT) = true,
    /// wake_affine_weight: waker CPU only on strictly lower load; sync adds 1 to prev (082f764a2f3f, Mel Gorman 2018).
    WA_WEIGHT_NOEQUAL(VERSION) = true,
    /// select_idle_cpu scan depth from LLC utilisation (nr_idle_scan, v6.0, 70fb5ccf2ebb).
    SIS_UTIL(SCHED_FEAT) = true,
    /// util_est: CPU utilisation includes the estimated utilisation of queued tasks.
    UTIL_EST(SCHED_FEAT) = true,
    /// A call-function IPI to a polling idle CPU only sets NEED_RESCHED (v5.8, b2a02fc43a1f).
    CSD_POLL(VERSION) = true,
    /// Load balancing leaves a small imbalance between NUMA nodes while the destination runs at most `imb_numa_nr` tasks (adjust_numa_imbalance; v5.5 b396f52326de, v5.18 e496132ebedd, v5.19 cb29a5c19d2d).
    NUMA_IMBALANCE(VERSION) = true,
    /// Newidle balancing is gated by avg_idle against the domain's max_newidle_lb_cost.
    NEWIDLE_COST_GATE(MECHANISM) = true,
    /// Idle CPUs stop their tick and are balanced by a NOHZ idle-load-balancer kick.
    NOHZ_IDLE_BALANCE(MECHANISM) = true,
    /// Tasks recently run (within migration_cost) resist migration (task_hot).
    CACHE_HOT(MECHANISM) = true,
    /// detach_tasks(): a migrate_load pass skips tasks of load below 16 until balancing has failed (features.h: off by default).
    LB_MIN(SCHED_FEAT) = false,
    /// Active balancing: after repeated failed attempts to even out the running tasks (migrate_task), the balancer has the busiest CPU's stopper push its running task over (need_active_balance(), imbalanced_active_balance(), active_load_balance_cpu_stop()).
    ACTIVE_BALANCE(MECHANISM) = true,
    /// EEVDF picking (v6.6, 147f3efaa241); off = CFS (vruntime, min/wakeup granularity, sleeper credit).
    EEVDF(VERSION) = true,
    /// Same-LLC wakelist when the wakee is still descheduling on its CPU (WF_ON_CPU, v5.8, 2ebb17717550).
    TTWU_QUEUE_ON_CPU(VERSION) = true,
    /// sched_ttwu_pending() clears rq->ttwu_pending after its enqueues, so idle_cpu() stops seeing the CPU idle from the moment a wakee is queued on its wakelist (v6.2, d6962c4fe8f9, Tianchen Ding, "sched: Clear ttwu_pending after enqueue_task()"); off, as from v5.8 to v6.1 (and v4.15's llist_empty(&rq->wake_list) test), the flag is cleared before the rq lock is taken, and wakers may stack tasks on the CPU in that window.
    TTWU_PENDING_AFTER_ENQUEUE(VERSION) = true,
    /// A wakeup migrating a task off an idle CPU decays its PELT sums to an estimate of now from that rq's idle clocks, not only to the old cfs_rq's last update (migrate_se_pelt_lag(), v6.0, e2f3e35f1f5a, Vincent Donnefort, "Decay task PELT values during wakeup migration").
    MIGRATE_PELT_LAG(VERSION) = true,
    /// Idle-scan depth from avg_idle / avg_scan_cost (SIS_PROP: on before v6.0, off in v6.0-v6.6, removed in v6.7).
    SIS_PROP(SCHED_FEAT) = false,
    /// Task-group load_avg updated at most once per ms per cfs_rq (v6.7, 1528c661c24b).
    TG_LOAD_RATELIMIT(VERSION) = false,
    /// Skip newidle balance when schedule() is entered from the idle task (K Prateek Nayak RFC, 2024).
    NEWIDLE_SKIP_IPI(Kind::Patch("https://lore.kernel.org/lkml/20240119084548.2788-1-kprateek.nayak@amd.com/")) = false,
    /// schedule_idle() returns at once when nothing is runnable (SM_IDLE, v6.12, 3dcac251b066).
    SM_IDLE(VERSION) = false,
    /// An idle-load-balance kick that a polling CPU gets as a flag write (NEED_RESCHED set) still balances: nohz_csd_func() and _nohz_idle_balance() test idle_cpu() instead of need_resched() (K Prateek Nayak, v6.13: ea9cffc0a154 and ff47a0acfcce, both Fixes: b2a02fc43a1f and taken into the stable series).
    ILB_POLLING_FIX(VERSION) = false,
    /// A newidle level that pulls nothing records 1.5x its max_newidle_lb_cost as its cost (capped at sysctl_sched_migration_cost + 200 ns), so the avg_idle check stops later balances sooner (Chris Mason, v6.17 155213a2aed4, for schbench on large machines; reverted by d206fbad9328 after database regressions, and in the stable series).
    NEWIDLE_COST_BUMP(Kind::Patch("https://lore.kernel.org/all/20250626144017.1510594-2-clm@fb.com/")) = false,
    /// Abel Wu's SIS filter (2022; v5 "Introduce SIS_FILTER", renamed SIS_CORE in v6): the idle scan walks a per-LLC mask of idle cores.
    SIS_FILTER(Kind::Patch("https://lore.kernel.org/lkml/20220909055304.25171-6-wuyun.abel@bytedance.com/")) = false,
    /// SIS_UTIL's scan depth of zero does not stop select_idle_cpu() while has_idle_cores is set: the scan for an idle core runs on an overloaded LLC (Abel Wu, 2022, v5 1/5 "Ignore SIS_UTIL when has idle core", part of the SIS_FILTER series; not merged).
    SIS_UTIL_IDLE_CORE(Kind::Patch("https://lore.kernel.org/lkml/20220909055304.25171-2-wuyun.abel@bytedance.com/")) = false,
    /// At SIS_UTIL's zero depth the scan for an idle core visits at most two cores, and a scan cut short by its depth falls through to the hint's update instead of returning (Abel Wu, 2022, v5 2/5 "Limited scan for idle cores when overloaded"; replaces 1/5's condition; not merged).
    SIS_IDLE_CORE_LIMIT(Kind::Patch("https://lore.kernel.org/lkml/20220909055304.25171-3-wuyun.abel@bytedance.com/")) = false,
    /// __update_idle_core() leaves the LLC's hint alone while a wakeup is pending on this CPU (Abel Wu, 2022, v5 3/5 "Skip core update if task pending"; not merged).
    SIS_IDLE_CORE_PENDING(Kind::Patch("https://lore.kernel.org/lkml/20220909055304.25171-4-wuyun.abel@bytedance.com/")) = false,
    /// has_idle_cores becomes an LLC state (has idle cores / has idle CPUs / fully busy): a scan that finds no idle CPU marks the LLC busy, select_idle_cpu() skips a busy LLC, and a CPU entering idle clears it; with SIS_FILTER the busy mark also empties the filter (Abel Wu, 2022, v5 4/5 "Skip SIS domain scan if fully busy" and 5/5; not merged).
    SIS_LLC_BUSY(Kind::Patch("https://lore.kernel.org/lkml/20220909055304.25171-5-wuyun.abel@bytedance.com/")) = false,
    /// David Vernet's shared runqueue (2023, v3): an LLC-wide sharded FIFO pulled from before newidle.
    SHARED_RUNQ(Kind::Patch("https://lore.kernel.org/all/20230809221218.163894-1-void@manifault.com/")) = false,
    /// SHARED_RUNQ v4 fixes: pull after the newidle gates, cost accounted, LLC levels skipped.
    SHARED_RUNQ_GATED(Kind::Patch("https://lore.kernel.org/lkml/20231212003141.216236-1-void@manifault.com/")) = false,
    /// A task that blocks while ineligible stays queued until picked or woken (v6.12, DELAY_DEQUEUE).
    DELAY_DEQUEUE(SCHED_FEAT) = false,
    /// A delayed task's positive lag is dropped when it leaves or is woken (v6.12, DELAY_ZERO).
    DELAY_ZERO(SCHED_FEAT) = false,
}

/// A kernel profile: the mainline behaviour of one kernel version, as feature settings on top
/// of [`Features::base`] (v6.6).
pub struct KernelProfile {
    pub name: &'static str,
    pub summary: &'static str,
    /// (feature, value) pairs applied to `Features::base()`.
    pub set: &'static [(&'static str, bool)],
}

/// The newest profile: the command line's default.
pub const NEWEST_KERNEL: &str = "v6.12.y";

/// The profiles, oldest first. Sources: the mainline commits named in the summaries and in the
/// features' descriptions (`kernel/sched/core.c`, `fair.c`, `features.h` at each version);
/// docs/model.md, "Sources".
pub const KERNELS: &[KernelProfile] = &[
    KernelProfile {
        name: "v4.15",
        summary: "CFS; SIS_PROP scan depth; wake_affine_weight moves on ties; no wakelist within an LLC; call-function IPIs always sent; no NUMA imbalance allowance in load balancing; the wake_list emptied before the enqueues; a migrating wakee's PELT decayed only to the old cfs_rq's last update",
        set: &[
            ("EEVDF", false),
            ("SIS_PROP", true),
            ("SIS_UTIL", false),
            ("WA_WEIGHT_NOEQUAL", false),
            ("WA_IDLE_PREV", false),
            ("TTWU_QUEUE_ON_CPU", false),
            ("TTWU_QUEUE_IDLE", false),
            ("CSD_POLL", false),
            ("NUMA_IMBALANCE", false),
            ("TTWU_PENDING_AFTER_ENQUEUE", false),
            ("MIGRATE_PELT_LAG", false),
        ],
    },
    KernelProfile {
        name: "v5.19",
        summary: "CFS; SIS_PROP; tie rule (082f764a2f3f); CSD_POLL (b2a02fc43a1f); same-LLC wakelist only for WF_ON_CPU with nr_running <= 1; ttwu_pending cleared before the enqueues (126c2092e5c8); a migrating wakee's PELT decayed only to the old cfs_rq's last update",
        set: &[
            ("EEVDF", false),
            ("SIS_PROP", true),
            ("SIS_UTIL", false),
            ("TTWU_QUEUE_IDLE", false),
            ("TTWU_PENDING_AFTER_ENQUEUE", false),
            ("MIGRATE_PELT_LAG", false),
        ],
    },
    KernelProfile {
        name: "v6.0",
        summary: "CFS; SIS_UTIL replaces SIS_PROP; same-LLC wakelist to an empty runqueue (f3dd3f674555); a wakee migrating off an idle CPU decays its PELT to now (e2f3e35f1f5a); ttwu_pending still cleared before the enqueues (until v6.2, d6962c4fe8f9)",
        set: &[("EEVDF", false), ("TTWU_PENDING_AFTER_ENQUEUE", false)],
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
        summary: "EEVDF; SM_IDLE idle re-entry fast path (3dcac251b066); delayed dequeue (152e11f6df29); as released: the 6.12.y stable series adds ILB_POLLING_FIX",
        set: &[("TG_LOAD_RATELIMIT", true), ("SM_IDLE", true), ("DELAY_DEQUEUE", true), ("DELAY_ZERO", true)],
    },
    // The 6.12 long-term series is what distributions ship (Debian 13's kernel is 6.12.y), so
    // it is the default rather than 6.12.0 with its known idle-load-balance bug. Only the
    // stable fixes the model has a mechanism for are here; 6.12.5 took ea9cffc0a154 and
    // ff47a0acfcce (the 6.12.5-rc review series). The rest repeats v6.12 (a test keeps them equal).
    KernelProfile {
        name: "v6.12.y",
        summary: "the 6.12 long-term series as distributions ship it: v6.12 with the stable fixes the model has, ILB_POLLING_FIX (6.12.5)",
        set: &[
            ("TG_LOAD_RATELIMIT", true),
            ("SM_IDLE", true),
            ("DELAY_DEQUEUE", true),
            ("DELAY_ZERO", true),
            ("ILB_POLLING_FIX", true),
        ],
    },
];

/// The newest kernel profile, as the command line's default `--kernel` is. The table's own
/// values are [`Features::base`].
impl Default for Features {
    fn default() -> Self {
        Features::for_kernel(NEWEST_KERNEL).expect("the newest profile exists")
    }
}

impl Features {
    /// The features of a kernel profile, or an error listing the known profiles.
    pub fn for_kernel(name: &str) -> Result<Features, String> {
        let k = KERNELS.iter().find(|k| k.name == name).ok_or_else(|| {
            format!("unknown kernel profile '{}' (known: {})", name, KERNELS.iter().map(|k| k.name).collect::<Vec<_>>().join(", "))
        })?;
        let mut f = Features::base();
        for (n, v) in k.set {
            f.set(n, *v).expect("profile names a known feature");
        }
        Ok(f)
    }

    /// Applies a `--features` spec: comma-separated `+NAME` (on), `-NAME` (off) or a bare `NAME`
    /// (on), in order; blanks around items and empty items are ignored. An unknown name is a
    /// one-line error naming it (and listing the valid ones); the flags before it stay applied.
    /// Does not [`check`](Features::check) the result.
    pub fn apply(&mut self, spec: &str) -> Result<(), String> {
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (on, name) = match item.as_bytes()[0] {
                b'+' => (true, &item[1..]),
                b'-' => (false, &item[1..]),
                _ => (true, item),
            };
            self.set(name, on)?;
        }
        Ok(())
    }

    /// Where a feature comes from, `None` for an unknown name.
    pub fn kind(name: &str) -> Option<Kind> {
        Self::KINDS.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
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
    fn the_stable_series_profile_is_its_release_with_only_the_stable_fixes() {
        // v6.12.y repeats v6.12's settings: they must not drift apart.
        let mut released = Features::for_kernel("v6.12").unwrap();
        released.ILB_POLLING_FIX = true;
        assert_eq!(Features::for_kernel("v6.12.y").unwrap(), released);
        assert!(!Features::for_kernel("v6.12").unwrap().ILB_POLLING_FIX);
    }

    #[test]
    fn unknown_kernel_and_feature_names_list_the_valid_ones() {
        let e = Features::for_kernel("v9.9").unwrap_err();
        assert!(e.contains("v6.12"), "{e}");
        let e = Features::default().set("NOPE", true).unwrap_err();
        assert!(e.contains("SIS_FILTER"), "{e}");
        let e = Features::default().apply("+SM_IDLE,-NOPE").unwrap_err();
        assert!(e.contains("'NOPE'") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn default_is_the_newest_profile_and_base_is_v6_6() {
        assert_eq!(Features::default(), Features::for_kernel(NEWEST_KERNEL).unwrap());
        assert_eq!(Features::base(), Features::for_kernel("v6.6").unwrap());
    }

    #[test]
    fn apply_turns_flags_on_and_off_in_order() {
        let mut f = Features::base();
        f.apply(" +SHARED_RUNQ, -TTWU_QUEUE,,SIS_FILTER,-SIS_FILTER ").unwrap();
        assert!(f.SHARED_RUNQ && !f.TTWU_QUEUE && !f.SIS_FILTER);
        let mut g = Features::base();
        g.apply("").unwrap();
        assert_eq!(g, Features::base());
    }

    #[test]
    fn every_feature_has_one_kind_and_every_patch_a_lore_link() {
        assert_eq!(Features::KINDS.len(), Features::ALL.len());
        for ((n, _), (m, k)) in Features::ALL.iter().zip(Features::KINDS) {
            assert_eq!(n, m);
            if let Kind::Patch(url) = k {
                assert!(url.starts_with("https://lore.kernel.org/"), "{n}: {url}");
            }
        }
        for n in ["SIS_FILTER", "SHARED_RUNQ", "SHARED_RUNQ_GATED", "NEWIDLE_SKIP_IPI"] {
            assert!(Features::kind(n).unwrap().link().is_some(), "{n} is not a patch");
        }
        assert_eq!(Features::kind("DELAY_DEQUEUE"), Some(Kind::SchedFeat));
        assert_eq!(Features::kind("EEVDF"), Some(Kind::Version));
        assert_eq!(Features::kind("NOPE"), None);
    }
}
