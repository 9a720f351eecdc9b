//! A small, fully populated `Stats` shared by the tests.
#![allow(dead_code)]

use wakesim_stats::*;

/// 4 CPUs (2 cores × 2 SMT), domains SMT and MC, distinct counter values per idle type.
pub fn sample() -> Stats {
    let mut s = Stats::new(4);
    s.sim_time_ns = 2_500_000_000; // 2.5 s → 2500 jiffies at HZ=1000
    for (cpu, c) in s.cpus.iter_mut().enumerate() {
        let k = cpu as u64 + 1;
        *c = CpuSchedstat {
            yld_count: 0,
            sched_count: 100 * k,
            sched_goidle: 10 * k,
            ttwu_count: 50 * k,
            ttwu_local: 20 * k,
            rq_cpu_time: 1_000_000 * k,
            run_delay: 5_000 * k,
            pcount: 60 * k,
        };
    }
    for cpu in 0..4 {
        let core = cpu / 2 * 2;
        // lb arrays are indexed by IdleType: Idle, Busy, NewlyIdle.
        let smt = DomainSchedstat {
            lb_count: [11, 22, 33],
            lb_balanced: [1, 2, 3],
            ttwu_wake_remote: 7,
            ttwu_move_affine: 5,
            ..Default::default()
        };
        let mc = DomainSchedstat {
            lb_count: [4, 5, 6],
            alb_count: 9,
            ttwu_wake_remote: 3,
            ..Default::default()
        };
        s.domains[cpu] = vec![
            ("SMT".into(), cpumask_string([core, core + 1], 4), smt),
            ("MC".into(), cpumask_string(0..4, 4), mc),
        ];
    }
    let w = &mut s.wake;
    w.wakeups = 1000;
    w.wakeups_sync = 900;
    w.wakeups_migrated = 125;
    w.ipis_sent = 300;
    w.ipis_call_function = 200;
    w.ipis_resched = 100;
    w.poll_wakes = 400;
    w.wakelist_queued = 600;
    w.wakelist_batched = 50;
    w.direct_enqueue = 400;
    w.remote_enqueue = 150;
    w.sis_scans = 200;
    w.sis_probes = 1600;
    w.sis_found = 50;
    w.sis_outcome[SisOutcome::Target as usize] = 500;
    w.sis_outcome[SisOutcome::Prev as usize] = 300;
    w.sis_outcome[SisOutcome::IdleCpu as usize] = 200;
    w.affine_attempts = 800;
    w.affine_moves = 200;
    w.migrations_wakeup = 125;
    w.migrations_balance = 5;
    w.migrations_by_dist = [0, 60, 0, 70, 0, 0];
    w.rq_lock_acquires = 4000;
    w.rq_lock_contended = 40;
    w.rq_lock_spin = 12_000;
    s.newidle = NewidleStats {
        entered: 500,
        gated: 100,
        from_idle_no_task: 7,
        levels: vec![
            NewidleLevel {
                name: "SMT".into(),
                calls: 400,
                cost: 400 * 1_500,
                pulled: 20,
            },
            NewidleLevel {
                name: "MC".into(),
                calls: 300,
                cost: 300 * 3_000,
                pulled: 10,
            },
        ],
    };
    for v in [7_000u64, 8_000, 9_000, 10_000, 250_000] {
        s.wakeup_latency.record(v);
    }
    s.run_delay.record(1_234);
    s.tasks.push(TaskStat {
        name: "sender-0".into(),
        runtime_ns: 1,
        wait_ns: 2,
        nr_wakeups: 3,
        nr_migrations: 4,
        nr_switches: 5,
        nvcsw: 3,
        nivcsw: 2,
    });
    s
}
