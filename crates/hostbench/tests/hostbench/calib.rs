//! The calibration microbenchmarks: they run and give sane, bounded figures (never a timing
//! threshold); impossible ones say why.

use wakesim_hostbench::{calib, sys, Summary};

#[test]
fn syscall_and_copy_figures_are_positive_finite_and_one_per_repetition() {
    let s = calib::syscall_ns(2_000, 3);
    assert_eq!(s.len(), 3);
    assert!(s.iter().all(|x| *x > 0.0 && x.is_finite()), "{s:?}");
    let c = calib::copy_ps_per_byte(200, 3).unwrap();
    assert_eq!(c.len(), 3);
    assert!(c.iter().all(|x| *x >= 0.0 && x.is_finite()), "{c:?}");
    let sum = Summary::of(&s).unwrap();
    assert!(sum.min <= sum.median && sum.median <= sum.max && sum.spread_pct().is_finite());
}

#[test]
fn cross_cpu_wakeups_idle_and_busy_give_positive_latencies_with_two_cpus() {
    let cpus = sys::allowed_cpus();
    if cpus.len() < 2 {
        return; // the CLI test covers the one-CPU path
    }
    for busy in [false, true] {
        let v = calib::cross_cpu_wake_ns(cpus[0], cpus[1], busy, 200, 2).unwrap();
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|x| *x > 0.0 && x.is_finite()), "busy={busy}: {v:?}");
    }
}

#[test]
fn an_idle_target_wake_gives_the_wakers_call_time_below_the_wake_latency() {
    let cpus = sys::allowed_cpus();
    if cpus.len() < 2 {
        return;
    }
    let reps = calib::cross_cpu_wake_reps(cpus[0], cpus[1], false, 0, 200, 2).unwrap();
    assert_eq!(reps.len(), 2);
    for r in reps {
        // The call returns before the wakee can run: it is part of the latency.
        assert!(r.call > 0.0 && r.call.is_finite() && r.call < r.latency, "{r:?}");
    }
}

#[test]
fn the_wake_call_workload_reports_the_wakers_call_per_task_from_its_marks() {
    use wakesim_workloads::{MarkRecord, Outcome};
    let m = |mark, task, time| MarkRecord { mark, task, time };
    // Task 0's call takes 5, task 1's 7; task 1's wake mark between task 0's pair is not mixed in.
    let out = Outcome { marks: vec![m(calib::MARK_WAKE, 0, 10), m(calib::MARK_WAKE, 1, 12), m(calib::MARK_WAKE_DONE, 0, 15), m(calib::MARK_WAKE_DONE, 1, 19)], ..Outcome::default() };
    assert_eq!(calib::mean_wake_call(&out), 6.0);
    let w = calib::wake_call_workload(0, 1, 5);
    assert_eq!(w.tasks.len(), 2);
    assert_eq!(w.reporter.metric(&out).value, 6.0);
}

#[test]
fn a_cpu_that_cannot_be_pinned_is_an_error_not_a_hang() {
    let e = calib::cross_cpu_wake_ns(0, 1000, false, 10, 1).unwrap_err();
    assert!(e.to_string().contains("CPU 1000"), "{e}");
}

#[test]
fn the_wake_workload_reports_the_mean_wake_latency_from_its_marks() {
    use wakesim_workloads::{MarkRecord, Outcome};
    let m = |mark, time| MarkRecord { mark, task: 0, time };
    let out = Outcome { marks: vec![m(0, 10), m(1, 30), m(0, 40), m(1, 100)], ..Outcome::default() };
    assert_eq!(calib::mean_wake_latency(&out), 40.0);
    let w = calib::wake_workload(0, 1, 5);
    assert_eq!(w.tasks.len(), 2);
    assert_eq!(w.futexes, 2);
}

#[test]
fn pipe_and_socket_message_pairs_give_positive_figures() {
    for socket in [false, true] {
        let v = calib::channel_pair_ns(socket, 100, 500, 2).unwrap();
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|x| *x > 0.0 && x.is_finite()), "socket={socket}: {v:?}");
    }
}

#[test]
fn a_line_bounced_between_two_cpus_gives_a_positive_transfer_time() {
    let cpus = sys::allowed_cpus();
    if cpus.len() < 2 {
        return; // the CLI test covers the one-CPU path
    }
    let v = calib::line_transfer_ns(cpus[0], cpus[1], 2_000, 2).unwrap();
    assert_eq!(v.len(), 2);
    assert!(v.iter().all(|x| *x > 0.0 && x.is_finite()), "{v:?}");
    let e = calib::line_transfer_ns(0, 1000, 10, 1).unwrap_err();
    assert!(e.to_string().contains("CPU 1000"), "{e}");
}

#[test]
fn a_channel_handed_between_two_cpus_gives_a_positive_round_trip() {
    let cpus = sys::allowed_cpus();
    if cpus.len() < 2 {
        return;
    }
    for socket in [false, true] {
        let v = wakesim_hostbench::handoff::channel_handoff_ns(socket, cpus[0], cpus[1], 4, 200, 2).unwrap();
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|x| *x > 0.0 && x.is_finite()), "socket={socket}: {v:?}");
    }
}

#[test]
fn two_cpu_measurements_leave_the_callers_cpus_as_they_were() {
    // Each runs one side on the caller's thread, pinned; the caller must come back unpinned, or
    // every process it forks afterwards (validate's unpinned cases) runs on one CPU.
    let before = sys::allowed_cpus();
    if before.len() < 2 {
        return;
    }
    let (a, b) = (before[0], before[1]);
    calib::line_transfer_ns(a, b, 200, 1).unwrap();
    assert_eq!(sys::allowed_cpus(), before, "after the line transfer");
    calib::cross_cpu_wake_ns(a, b, false, 50, 1).unwrap();
    assert_eq!(sys::allowed_cpus(), before, "after the futex wake");
    wakesim_hostbench::handoff::channel_handoff_ns(false, a, b, 1, 50, 1).unwrap();
    assert_eq!(sys::allowed_cpus(), before, "after the pipe handoff");
}

#[test]
fn a_socket_stream_on_one_cpu_charges_both_sides_a_positive_time_per_message() {
    let cpu = sys::allowed_cpus()[0];
    let v = wakesim_hostbench::stream::stream_split_ns(cpu, 2_000, 2).unwrap();
    assert_eq!(v.len(), 2);
    for s in &v {
        // Each side at least makes a syscall per message; neither can take a millisecond.
        assert!(s.sender_ns > 50.0 && s.sender_ns < 1e6, "{s:?}");
        assert!(s.receiver_ns > 50.0 && s.receiver_ns < 1e6, "{s:?}");
    }
    let e = wakesim_hostbench::stream::stream_split_ns(1000, 10, 1).unwrap_err();
    assert!(e.to_string().contains("CPU 1000"), "{e}");
}

#[test]
fn a_socket_stream_across_two_cpus_charges_both_sides_and_refuses_a_bad_cpu() {
    let cpus = sys::allowed_cpus();
    if cpus.len() < 2 {
        eprintln!("skipped: needs two usable CPUs");
        return;
    }
    let v = wakesim_hostbench::stream::stream_split_across_ns(cpus[0], cpus[1], 2_000, 2).unwrap();
    assert_eq!(v.len(), 2);
    for s in &v {
        assert!(s.sender_ns > 50.0 && s.sender_ns < 1e6, "{s:?}");
        assert!(s.receiver_ns > 50.0 && s.receiver_ns < 1e6, "{s:?}");
    }
    let e = wakesim_hostbench::stream::stream_split_across_ns(cpus[0], 1000, 10, 1).unwrap_err();
    assert!(e.to_string().contains("CPU 1000"), "{e}");
    assert_eq!(sys::allowed_cpus(), cpus, "the calling thread's affinity is untouched");
}

#[test]
fn a_read_of_an_empty_pipe_or_socket_returns_at_once_with_a_positive_cost() {
    for socket in [false, true] {
        let v = calib::empty_read_ns(socket, 2_000, 2).unwrap();
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|x| *x > 0.0 && *x < 1e6), "socket={socket}: {v:?}");
    }
}
