//! A migrating wakeup claims its CPU only after `set_task_cpu()`: `migrate_task_rq_fair()` reads
//! the old cfs_rq's lines on the waker first, then `ttwu_queue_cond()` reads the target's rq
//! line and `__ttwu_queue_wakelist()` writes its `ttwu_pending`. Until then other wakers still
//! find the CPU idle, as they do on the kernel's boxes.

use crate::common::*;
use wakesim_model::exec::Ev;
use wakesim_model::{run_with_trace, Sim, TraceEvent, TraceOpts};
use wakesim_trace::WakeHow;
use wakesim_workloads::Workload;

fn hackbench() -> Workload {
    wakesim_workloads::from_command_line(&["hackbench", "-g", "2", "-f", "4", "-l", "20"].map(String::from)).unwrap()
}

/// Every wakelist queueing that follows its wakee's migration in the same wakeup comes
/// `lines` transfers from the old CPU, the removed-load lock and one transfer from the target
/// after the migration, and, with MIGRATE_PELT_LAG when the old CPU runs its idle task,
/// `migrate_se_pelt_lag()`'s two more lines from it and one entity's decay. Returns how many
/// such wakeups the run had, and how many of them paid the lag estimate.
fn check_claim_delay(features: wakesim_model::Features, lines: u64) -> (usize, usize) {
    let cfg = config("test-2x4", features, 1);
    let probe = Sim::new(cfg.clone(), &hackbench()).unwrap();
    let (rq_lock, decay) = (cfg.costs.rq_lock, cfg.costs.update_blocked);
    let (_, tr) = run_with_trace(cfg, &hackbench(), TraceOpts::default()).unwrap();
    let mut curr: Vec<u32> = (0..probe.nr_cpus() as u32).collect();
    let mut last_migrate = std::collections::HashMap::new();
    let (mut n, mut lagged) = (0, 0);
    for e in &tr.events {
        match e.ev {
            TraceEvent::Running { cpu, task, .. } | TraceEvent::Switch { cpu, next: task, .. } => curr[cpu as usize] = task,
            TraceEvent::Migrate { task, from, to } => {
                let old_idle = tr.is_idle_task(curr[from as usize]);
                last_migrate.insert(task, (e.t, from as usize, to as usize, old_idle));
            }
            TraceEvent::Wakeup { cpu, wakee, target, how: WakeHow::Wakelist, .. } => {
                let Some(&(t, from, to, old_idle)) = last_migrate.get(&wakee) else { continue };
                if to != target as usize || e.t - t > 2_000 {
                    continue; // not this wakeup's migration
                }
                let waker = cpu as usize;
                let lag = features.MIGRATE_PELT_LAG && old_idle;
                let mut expect = lines * probe.line_transfer(waker, from) + rq_lock + probe.line_transfer(waker, to);
                if lag {
                    expect += 2 * probe.line_transfer(waker, from) + decay;
                    lagged += 1;
                }
                assert_eq!(e.t - t, expect, "wakee {wakee}: waker {waker}, old CPU {from} (idle: {old_idle}), target {to}");
                n += 1;
            }
            _ => {}
        }
    }
    (n, lagged)
}

#[test]
fn a_migrating_wakeup_claims_its_cpu_after_reading_the_old_cfs_rq_and_the_target_rq() {
    // EEVDF (v6.6): remove_entity_load_avg()'s two lines.
    let (n, _) = check_claim_delay(v6_6(), 2);
    assert!(n > 10, "the run has migrating wakelist wakeups: {n}");
}

#[test]
fn a_wakee_leaving_an_idle_cpu_costs_the_waker_that_cpus_idle_clocks_from_v6_0() {
    // migrate_se_pelt_lag() reads the idle rq's clock line and its cfs_rq's throttled_pelt_idle
    // and decays the task; before v6.0 (and with the feature off) nothing of it is paid.
    let (n, lagged) = check_claim_delay(v6_6(), 2);
    assert!(lagged > 0 && lagged < n, "{lagged} of {n} migrating wakeups left an idle CPU");
    let (n, lagged) = check_claim_delay(feat("-MIGRATE_PELT_LAG"), 2);
    assert!(n > 10 && lagged == 0, "{lagged} of {n}");
}

#[test]
fn under_cfs_the_migration_also_reads_the_old_min_vruntime() {
    // CFS (v5.19): migrate_task_rq_fair() makes the vruntime relative to the old min_vruntime.
    let mut f = wakesim_model::Features::for_kernel("v5.19").unwrap();
    f.apply("+TTWU_QUEUE_IDLE").unwrap();
    let (n, lagged) = check_claim_delay(f, 3);
    assert!(n > 10 && lagged == 0, "the run has migrating wakelist wakeups ({n}), none paying v6.0's lag estimate ({lagged})");
}

#[test]
fn a_wf_on_cpu_wakelist_claims_the_cpu_after_reading_its_rq_line() {
    // v5.19's rule (TTWU_QUEUE_IDLE off) on one LLC: only a wakee still descheduling on its CPU
    // goes on the wakelist (ttwu_queue_wakelist(p, task_cpu(p), WF_ON_CPU)). Its
    // ttwu_queue_cond() reads the target's nr_running before __ttwu_queue_wakelist() writes
    // ttwu_pending, so the claim lands no earlier than ttwu's entry plus that line's transfer.
    let cfg = config("test-smt2", feat("-TTWU_QUEUE_IDLE"), 1);
    let entry = cfg.costs.ttwu_base;
    let mut s = Sim::new(cfg, &hackbench()).unwrap();
    let ntasks = hackbench().tasks.len();
    let queued = |s: &Sim| -> Vec<(usize, usize)> {
        (0..s.nr_cpus()).flat_map(|c| (0..ntasks).map(move |i| (c, i))).filter(|&(c, i)| s.on_wakelist(c, i)).collect()
    };
    let (mut count, mut before) = (s.wake.wakelist_queued, queued(&s));
    let mut n = 0;
    while let Some((_, ev)) = s.step() {
        if s.wake.wakelist_queued == count {
            before = queued(&s);
            continue;
        }
        count = s.wake.wakelist_queued;
        let Ev::Step { cpu: waker, .. } = ev else { panic!("a wakelist claim outside a CPU's step: {ev:?}") };
        let now = queued(&s);
        for &(target, wakee) in now.iter().filter(|e| !before.contains(e)) {
            let waited = s.now() - s.wake_started(wakee);
            let least = entry + s.line_transfer(waker as usize, target);
            assert!(waited >= least, "task {wakee} claimed CPU {target} {waited} ns after ttwu's entry, before {least}");
            n += 1;
        }
        before = now;
    }
    assert!(n > 10, "the run has WF_ON_CPU wakelist wakeups: {n}");
}
