//! `/proc/schedstat` text, versions 15 and 16.
//!
//! Layout from `show_schedstat()` in `kernel/sched/stats.c` (torvalds/linux at 11b0bfa5d463,
//! "sched/debug: Increase SCHEDSTAT_VERSION to 16") and `Documentation/scheduler/sched-stats.rst`:
//!
//! ```text
//! version 16
//! timestamp <jiffies>
//! cpu<N> yld_count 0 sched_count sched_goidle ttwu_count ttwu_local rq_cpu_time run_delay pcount
//! domain<L> <%*pb span> {lb_count lb_balanced lb_failed lb_imbalance lb_gained lb_hot_gained
//!     lb_nobusyq lb_nobusyg} × 3 idle types  alb_count alb_failed alb_pushed sbe_count
//!     sbe_balanced sbe_pushed sbf_count sbf_balanced sbf_pushed ttwu_wake_remote
//!     ttwu_move_affine ttwu_move_balance
//! ```
//! The three idle-type groups follow `enum cpu_idle_type`: v15 idle, busy, newly idle; v16 busy,
//! idle, newly idle ([`IdleType::schedstat_order`]). Times are in ns (rq_cpu_time, run_delay;
//! sched-stats.rst still says jiffies, the code prints `sched_clock` ns). v17 (domain name after
//! `domain<L>`, lb_imbalance split in four) is not rendered.

use std::fmt::Write;

use crate::{IdleType, Stats};

/// CONFIG_HZ assumed for the `timestamp` line (the cost profiles' poll limit and tick figures use
/// HZ=1000: `CPUIDLE_POLL_MAX` = TICK_NSEC/16 in drivers/cpuidle/cpuidle.c).
pub const HZ: u64 = 1000;

/// Render `s` as `/proc/schedstat` of the given version (15, or 16 for anything else).
pub fn schedstat_text(s: &Stats, version: u32) -> String {
    let version = if version == 15 { 15 } else { 16 };
    let order = IdleType::schedstat_order(version);
    let mut out = String::new();
    let _ = writeln!(out, "version {version}");
    let _ = writeln!(out, "timestamp {}", s.sim_time_ns / (1_000_000_000 / HZ));
    for (cpu, c) in s.cpus.iter().enumerate() {
        let _ = writeln!(
            out,
            "cpu{cpu} {} 0 {} {} {} {} {} {} {}",
            c.yld_count,
            c.sched_count,
            c.sched_goidle,
            c.ttwu_count,
            c.ttwu_local,
            c.rq_cpu_time,
            c.run_delay,
            c.pcount
        );
        for (level, (_, mask, d)) in s
            .domains
            .get(cpu)
            .map(|v| v.as_slice())
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            let mask = if mask.is_empty() { "0" } else { mask.as_str() };
            let _ = write!(out, "domain{level} {mask}");
            for t in order {
                for v in d.lb_fields(t) {
                    let _ = write!(out, " {v}");
                }
            }
            for v in d.tail_fields() {
                let _ = write!(out, " {v}");
            }
            out.push('\n');
        }
    }
    out
}

/// A CPU set as the kernel's `%*pb` prints a cpumask of `nr_cpus` bits (`bitmap_string()` in
/// lib/vsprintf.c): hex in 32-bit chunks, most significant first, separated by commas; the first
/// chunk has only as many digits as its bits need, the others 8. E.g. CPUs {0,1} of 104 →
/// `00,00000000,00000000,00000003`; CPUs 0–3 of 4 → `f`. CPUs ≥ `nr_cpus` are ignored.
pub fn cpumask_string(cpus: impl IntoIterator<Item = usize>, nr_cpus: usize) -> String {
    let nr = nr_cpus.max(1);
    let nchunks = nr.div_ceil(32);
    let mut words = vec![0u32; nchunks];
    for c in cpus {
        if c < nr_cpus {
            words[c / 32] |= 1 << (c % 32);
        }
    }
    let first_bits = match nr % 32 {
        0 => 32,
        b => b,
    };
    let mut out = String::new();
    for (i, w) in words.iter().enumerate().rev() {
        let width = if i == nchunks - 1 {
            first_bits.div_ceil(4)
        } else {
            8
        };
        if i != nchunks - 1 {
            out.push(',');
        }
        let _ = write!(out, "{w:0width$x}");
    }
    out
}
