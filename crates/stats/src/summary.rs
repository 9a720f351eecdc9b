//! The short human summary printed after a benchmark's own output.
//!
//! The derived figures are the ones wakeup-path discussions on LKML quote (the SIS_UTIL, SIS
//! filter and SHARED_RUNQ threads; the tracepoints `sched_wakeup`, `sched_wake_idle_without_ipi`,
//! `ipi_send_cpu`, `sched_migrate_task`): wakeups and
//! how they were signalled (IPIs vs polling wakes, `sched_wake_idle_without_ipi`), wakelist vs
//! direct enqueue, SIS scans and success rate, placement, wake_affine, newidle calls and cost per
//! level, migrations by distance, wakeup latency percentiles, rq-lock contention, and the
//! schedstat machine totals.

use std::fmt::Write;

use crate::{SisOutcome, Stats};

/// Names of `WakeStats::migrations_by_dist` slots: `wakesim_machine::Dist::name()` in
/// `Dist::index()` order (Local, Smt, Cluster, Llc, CrossLlc, CrossNode).
pub const DIST_NAMES: [&str; 6] = ["local", "smt", "cluster", "llc", "cross_llc", "cross_node"];

/// A dozen labelled lines summarising `s`. Machine totals are summed over CPUs.
pub fn summary_text(s: &Stats) -> String {
    let w = &s.wake;
    let mut o = String::new();
    let secs = s.sim_time_ns as f64 / 1e9;
    let _ = writeln!(
        o,
        "--- wakesim statistics: {} CPUs, {} simulated ---",
        s.nr_cpus,
        dur(s.sim_time_ns)
    );

    let rate = if s.sim_time_ns > 0 {
        format!(" ({}/s)", si(w.wakeups as f64 / secs))
    } else {
        String::new()
    };
    line(
        &mut o,
        "wakeups",
        format!(
            "{}{rate}  sync {}  migrated {}  preempting {}",
            w.wakeups,
            pct(w.wakeups_sync, w.wakeups),
            pct(w.wakeups_migrated, w.wakeups),
            pct(w.wakeup_preemptions, w.wakeups)
        ),
    );
    line(
        &mut o,
        "wake signal",
        format!(
            "IPIs {} (call-function {}, resched {})  polling wakes {}  IPIs/wakeup {}",
            w.ipis_sent,
            w.ipis_call_function,
            w.ipis_resched,
            w.poll_wakes,
            ratio(w.ipis_sent, w.wakeups)
        ),
    );
    line(
        &mut o,
        "enqueue",
        format!(
            "wakelist {} (batched {})  direct {} (remote rq {})",
            w.wakelist_queued, w.wakelist_batched, w.direct_enqueue, w.remote_enqueue
        ),
    );
    let (vol, invol) = s.switches();
    line(&mut o, "switches", format!("voluntary {vol} (blocked)  involuntary {invol} (preempted)"));
    line(
        &mut o,
        "idle scan",
        format!(
            "scans {}  probes/scan {}  found idle {}  went on past a claimed CPU {}",
            w.sis_scans,
            ratio(w.sis_probes, w.sis_scans),
            pct(w.sis_found, w.sis_scans),
            w.sis_rescans
        ),
    );
    let placed: u64 = w.sis_outcome.iter().sum();
    let outcomes: Vec<String> = SisOutcome::ALL
        .iter()
        .filter(|o| w.sis_outcome[**o as usize] > 0)
        .map(|o| format!("{} {}", o.name(), pct(w.sis_outcome[*o as usize], placed)))
        .collect();
    line(
        &mut o,
        "placement",
        if outcomes.is_empty() {
            "-".into()
        } else {
            outcomes.join("  ")
        },
    );
    line(
        &mut o,
        "affine",
        format!(
            "wake_affine {} -> waker CPU {}  wake_wide {}",
            w.affine_attempts,
            pct(w.affine_moves, w.affine_attempts),
            w.wake_wide
        ),
    );

    let n = &s.newidle;
    let mut ni = format!(
        "entered {}  gated {}  IPI-only kicks {}",
        n.entered,
        pct(n.gated, n.entered),
        n.from_idle_no_task
    );
    for l in &n.levels {
        let avg = l.cost.checked_div(l.calls).unwrap_or(0);
        let _ = write!(
            ni,
            " | {} {} calls, avg {}, pulled {}",
            l.name,
            l.calls,
            dur(avg),
            l.pulled
        );
    }
    line(&mut o, "newidle", ni);

    let by_dist: Vec<String> = DIST_NAMES
        .iter()
        .zip(w.migrations_by_dist)
        .filter(|(_, c)| *c > 0)
        .map(|(n, c)| format!("{n} {c}"))
        .collect();
    line(
        &mut o,
        "migrations",
        format!(
            "wakeup {}  balance {}  by distance: {}",
            w.migrations_wakeup,
            w.migrations_balance,
            if by_dist.is_empty() {
                "-".into()
            } else {
                by_dist.join(" ")
            }
        ),
    );

    let (wl, rd) = (&s.wakeup_latency, &s.run_delay);
    line(
        &mut o,
        "latency",
        format!(
            "wakeup p50 {} p99 {} max {} (n={})  run delay p50 {} p99 {} max {}",
            dur(wl.value_at_percentile(50.0)),
            dur(wl.value_at_percentile(99.0)),
            dur(wl.max()),
            wl.count(),
            dur(rd.value_at_percentile(50.0)),
            dur(rd.value_at_percentile(99.0)),
            dur(rd.max())
        ),
    );
    line(
        &mut o,
        "rq lock",
        format!(
            "acquires {}  contended {}  spin {} (avg {})  irq deferred {} (avg {})",
            w.rq_lock_acquires,
            pct(w.rq_lock_contended, w.rq_lock_acquires),
            dur(w.rq_lock_spin),
            dur(avg(w.rq_lock_spin, w.rq_lock_contended)),
            w.irq_deferred,
            dur(avg(w.irq_defer_time, w.irq_deferred))
        ),
    );
    if w.cpu_lock_acquires > 0 {
        line(
            &mut o,
            "user locks",
            format!(
                "per-CPU acquires {}  contended {}  spin {} (avg {})  migrated retries {}",
                w.cpu_lock_acquires,
                pct(w.cpu_lock_contended, w.cpu_lock_acquires),
                dur(w.cpu_lock_spin),
                dur(avg(w.cpu_lock_spin, w.cpu_lock_contended)),
                w.cpu_lock_migrated
            ),
        );
    }
    if w.msgs_read > 0 {
        line(
            &mut o,
            "messages",
            format!(
                "read {}  written on another CPU {}  evicted before read {}",
                w.msgs_read,
                pct(w.msgs_cross_cpu, w.msgs_read),
                pct(w.msgs_cold, w.msgs_read)
            ),
        );
    }
    if w.shard_lock_acquires > 0 {
        line(
            &mut o,
            "shared runq",
            format!(
                "pops {}  pulls {}  stale {}  shard locks {} (contended {}, wait {})",
                w.shared_runq_pops,
                w.shared_runq_pulls,
                w.shared_runq_stale,
                w.shard_lock_acquires,
                pct(w.shard_lock_contended, w.shard_lock_acquires),
                dur(w.shard_lock_wait)
            ),
        );
    }
    if w.tg_updates > 0 {
        line(
            &mut o,
            "tg load",
            format!(
                "tg->load_avg updates {} (contended {}, wait {}) | stale reads {} (wait {})",
                w.tg_updates,
                pct(w.tg_contended, w.tg_updates),
                dur(w.tg_wait),
                w.tg_read_misses,
                dur(w.tg_read_wait)
            ),
        );
    }
    line(&mut o, "cpu time", format!(
        "wakers: select {} scan {} remote lock {} IPI send {} | idle exit {} newidle {} cold cache {}",
        dur(w.cost_select), dur(w.cost_scan), dur(w.cost_remote_lock), dur(w.cost_ipi_send),
        dur(w.cost_idle_exit), dur(w.cost_newidle), dur(w.cost_migration)
    ));

    let c = s.cpu_totals();
    let mut ss = format!(
        "sched {}  goidle {}  ttwu {} (local {})  run_delay {}",
        c.sched_count,
        c.sched_goidle,
        c.ttwu_count,
        pct(c.ttwu_local, c.ttwu_count),
        dur(c.run_delay)
    );
    for (level, d) in s.domain_totals_by_level() {
        let _ = write!(
            ss,
            " | {level}: lb {} remote {} affine {}",
            d.lb_count_total(),
            d.ttwu_wake_remote,
            d.ttwu_move_affine
        );
    }
    line(&mut o, "schedstat", ss);

    // The work-conservation checker (Lozi et al. 2016), always printed so that 0 shows.
    let wa = &s.wasted;
    let mut ws = format!(
        "{} intervals > {}  idle CPU time {} ({} of CPU time)",
        wa.intervals,
        dur(wa.threshold_ns),
        dur(wa.wasted_ns),
        pct(wa.wasted_ns, s.sim_time_ns * s.nr_cpus as u64)
    );
    for (i, iv) in wa.worst.iter().take(3).enumerate() {
        let _ = write!(
            ws,
            "{} {} at {}: CPU {} idle, CPU {} waiting ({})",
            if i == 0 { " | worst" } else { ";" },
            dur(iv.dur_ns),
            dur(iv.start_ns),
            iv.idle_cpu,
            iv.waiting_cpu,
            iv.level
        );
    }
    line(&mut o, "wasted", ws);
    line(&mut o, "idle states", s.idle.summary());

    // Background activity, printed when a profile ran.
    let n = &s.noise;
    if n.tasks + n.irq_sources > 0 {
        line(
            &mut o,
            "noise",
            format!(
                "{}, launched from CPU {}: {} tasks woke {} times, ran {} ({} of CPU time) | {} irq sources fired {} times, {}",
                n.profile,
                n.launch_cpu,
                n.tasks,
                n.task_wakeups,
                dur(n.task_runtime_ns),
                pct(n.task_runtime_ns + n.irq_time_ns, s.sim_time_ns * s.nr_cpus as u64),
                n.irq_sources,
                n.irqs,
                dur(n.irq_time_ns)
            ),
        );
    }
    o
}

fn line(o: &mut String, label: &str, body: String) {
    let _ = writeln!(o, "{label:<12} {body}");
}

/// `a/b` as a percentage with one decimal, "-" when `b` is 0.
/// `a` as a percentage of `b` with one decimal (`48.8%`), `-` when `b` is 0.
pub fn pct(a: u64, b: u64) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.1}%", a as f64 * 100.0 / b as f64)
    }
}

/// `a/b` with two decimals, "-" when `b` is 0.
fn ratio(a: u64, b: u64) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.2}", a as f64 / b as f64)
    }
}

fn avg(total: u64, n: u64) -> u64 {
    total.checked_div(n).unwrap_or(0)
}

/// A duration in ns, human-scaled: `850ns`, `12.3us`, `1.23ms`, `4.567s`.
pub fn dur(ns: u64) -> String {
    let x = ns as f64;
    if ns < 1_000 {
        format!("{ns}ns")
    } else if ns < 1_000_000 {
        format!("{:.1}us", x / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2}ms", x / 1e6)
    } else {
        format!("{:.3}s", x / 1e9)
    }
}

/// A count with an SI suffix: `950`, `12.3k`, `4.56M`.
fn si(x: f64) -> String {
    if x < 1e3 {
        format!("{x:.0}")
    } else if x < 1e6 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{:.2}M", x / 1e6)
    }
}
