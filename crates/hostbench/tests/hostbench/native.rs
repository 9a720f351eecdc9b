//! The native generators on this machine's kernel. Timing is never asserted (the host is noisy):
//! runs finish, record their marks and exits, and give positive, finite figures.

use wakesim_hostbench::native::{self, NativeError, NativeOptions};
use wakesim_machine::CpuSet;
use wakesim_workloads::{from_command_line_with, BuildContext, Op, TaskSpec, Workload};

fn cmd(s: &str) -> Workload {
    let argv: Vec<String> = s.split_whitespace().map(String::from).collect();
    from_command_line_with(&argv, &BuildContext::machine(2)).unwrap()
}

const OPTS: NativeOptions = NativeOptions { cap_ns: 60_000_000_000, seed: 1 };

#[test]
fn pipe_pingpong_runs_to_the_end_with_both_marks_and_every_exit() {
    for c in ["perf bench sched pipe -l 300", "perf bench sched pipe -T -l 300"] {
        let w = cmd(c);
        let r = native::run(&w, &OPTS).unwrap();
        assert!(!r.outcome.capped, "{c}");
        assert!(r.outcome.task_exit.iter().all(Option::is_some), "{c}: every task exited");
        let marks: Vec<u32> = r.outcome.marks.iter().map(|m| m.mark).collect();
        assert!(marks.contains(&0) && marks.contains(&1), "{c}: {marks:?}");
        assert!(r.outcome.marks.windows(2).all(|w| w[0].time <= w[1].time), "marks in time order");
        let m = w.reporter.metric(&r.outcome);
        assert!(m.value > 0.0 && m.value.is_finite(), "{c}: {m:?}");
        // Each of the 300 round trips has each side wait for the other's message: at least
        // half of those 600 reads find the pipe empty and block (getrusage's nvcsw).
        assert!(r.voluntary_switches >= 300, "{c}: {} voluntary switches", r.voluntary_switches);
    }
}

#[test]
fn hackbench_over_sockets_pipes_and_loopback_tcp_delivers_every_message() {
    for c in ["hackbench -g 1 -f 3 -l 10", "hackbench -p -T -g 2 -f 2 -l 10", "hackbench -i -g 1 -f 2 -l 5"] {
        let w = cmd(c);
        let r = native::run(&w, &OPTS).unwrap();
        assert!(!r.outcome.capped, "{c}");
        assert!(r.outcome.task_exit.iter().all(Option::is_some), "{c}: a receiver that missed a byte would block");
        assert!(w.reporter.render(&r.outcome).contains("Time: "), "{c}");
    }
}

#[test]
fn a_workload_with_its_own_duration_is_stopped_there_and_marked_capped() {
    let w = cmd("schbench -m 1 -t 1 -r 1");
    let r = native::run(&w, &OPTS).unwrap();
    assert!(r.outcome.capped);
    assert!(r.outcome.end_time >= 1_000_000_000);
    assert!(r.outcome.marks.len() > 4, "the worker recorded requests");
}

#[test]
fn futex_semaphore_barrier_and_mutex_ops_complete_across_threads() {
    let prog = |first: bool| {
        let mut p = vec![Op::Barrier { id: 0, parties: 2 }, Op::Lock { id: 0 }, Op::Compute(wakesim_workloads::Dur::Fixed(10_000)), Op::Unlock { id: 0 }];
        if first {
            p.push(Op::FutexWake { futex: 0, n: 1 });
        } else {
            p.push(Op::FutexWait { futex: 0 });
        }
        p.push(Op::Mark(7));
        p
    };
    let w = Workload {
        name: "ops".into(),
        tasks: vec![TaskSpec { mm: 1, ..TaskSpec::new("a", prog(true)) }, TaskSpec { mm: 1, ..TaskSpec::new("b", prog(false)) }],
        channels: vec![],
        futexes: 1,
        reporter: cmd("perf bench sched pipe -l 1").reporter,
        duration: None,
    };
    let r = native::run(&w, &OPTS).unwrap();
    assert!(!r.outcome.capped);
    assert_eq!(r.outcome.marks.iter().filter(|m| m.mark == 7).count(), 2);
}

#[test]
fn a_pin_the_kernel_refuses_fails_the_run_with_the_reason() {
    let w = Workload {
        name: "pin".into(),
        tasks: vec![TaskSpec { allowed: Some(CpuSet::from_cpus([1000])), ..TaskSpec::new("a", vec![Op::Mark(0)]) }],
        channels: vec![],
        futexes: 0,
        reporter: cmd("perf bench sched pipe -l 1").reporter,
        duration: None,
    };
    match native::run(&w, &OPTS) {
        Err(NativeError::Task(msg)) => assert!(msg.contains("cannot pin"), "{msg}"),
        other => panic!("expected a pin error, got {other:?}"),
    }
}

#[test]
fn kernel_only_ops_are_refused_before_anything_runs() {
    let w = cmd("ipistorm numipi=100 single=1 offset=1 cpulist=0 wait=1");
    assert!(matches!(native::check(&w), Err(NativeError::Unsupported(..))));
}

/// `rounds` × (per-CPU lock, mark 1, `work` ns, mark 2, unlock) for each task, as schbench's
/// `do_work()` without `-L`.
fn cpu_lockers(allowed: &[Option<CpuSet>], rounds: u64, work: u64) -> Workload {
    let prog = vec![
        Op::LoopStart { count: rounds, end: 6 },
        Op::CpuSpinLock { set: 0 },
        Op::Mark(1),
        Op::Compute(wakesim_workloads::Dur::Fixed(work)),
        Op::Mark(2),
        Op::CpuSpinUnlock { set: 0 },
        Op::LoopEnd { start: 0 },
    ];
    let tasks = allowed.iter().enumerate().map(|(i, a)| TaskSpec { mm: 1, allowed: a.clone(), ..TaskSpec::new(format!("l{i}"), prog.clone()) }).collect();
    Workload { name: "cpu-locks".into(), tasks, channels: vec![], futexes: 0, reporter: cmd("perf bench sched pipe -l 1").reporter, duration: None }
}

/// Each task's (start, end) critical sections from its marks 1 and 2.
fn sections(r: &native::NativeRun) -> Vec<(u64, u64, u32)> {
    let mut open = std::collections::HashMap::new();
    let mut v = Vec::new();
    for m in &r.outcome.marks {
        match m.mark {
            1 => {
                open.insert(m.task, m.time);
            }
            2 => v.push((open.remove(&m.task).expect("mark 2 after mark 1"), m.time, m.task)),
            _ => {}
        }
    }
    v.sort_unstable();
    v
}

#[test]
fn per_cpu_spinlock_excludes_tasks_stacked_on_one_cpu() {
    // Both threads on one CPU: always the same lock. When the kernel preempts the holder the
    // other spins until the holder runs again and unlocks; the sections never overlap.
    let cpu = wakesim_hostbench::sys::allowed_cpus()[0];
    let one = Some(CpuSet::from_cpus([cpu]));
    let w = cpu_lockers(&[one.clone(), one], 100, 50_000);
    let r = native::run(&w, &OPTS).unwrap();
    assert!(!r.outcome.capped);
    assert!(r.outcome.task_exit.iter().all(Option::is_some));
    let s = sections(&r);
    assert_eq!(s.len(), 200, "every round of both tasks held the lock once");
    for p in s.windows(2) {
        assert!(p[0].1 <= p[1].0, "critical sections overlap: {:?} and {:?}", p[0], p[1]);
    }
}

#[test]
fn per_cpu_spinlock_completes_for_unpinned_tasks_that_may_migrate() {
    let w = cpu_lockers(&[None, None, None], 200, 20_000);
    let r = native::run(&w, &OPTS).unwrap();
    assert!(!r.outcome.capped);
    assert!(r.outcome.task_exit.iter().all(Option::is_some), "no lock was left held");
    assert_eq!(sections(&r).len(), 600);
}
