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
    /// wake_affine: compare effective loads (wake_affine_weight).
    WA_WEIGHT = true,
    /// wake_affine_weight: bias toward prev by half the imbalance_pct.
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
}
