//! The cache lines a wakeup's enqueue touches (kernel/sched/core.c `ttwu_queue()`,
//! `ttwu_do_activate()`; kernel/sched/fair.c `enqueue_task_fair()`, `set_next_entity()`): a
//! waker that enqueues on another CPU's runqueue pulls that runqueue's lines, a task group's
//! too, and the wakee's own scheduling lines, which the target then pulls back when it runs the
//! wakee; a target that enqueues from its own wakelist touches only its own lines.

use crate::common::*;
use wakesim_engine::{Time, USEC};
use wakesim_model::{Config, TaskGroups};
use wakesim_workloads::{Op, Workload};

const W: usize = 0;
const R: usize = 1;

/// W (pinned to CPU 0) computes 200 µs, writes the pipe R waits on, computes 50 µs and exits;
/// R starts on CPU 5, blocks on the pipe at once, then computes 20 µs.
fn waker_wakee() -> Workload {
    let w = pinned(task("W", vec![compute(200 * USEC), Op::Send { chan: 0, bytes: 4 }, compute(50 * USEC), Op::Exit]), &[0]);
    let r = start_on(task("R", vec![Op::Recv { chan: 0, bytes: 4 }, compute(20 * USEC), Op::Exit]), 5);
    workload(vec![w, r], 1, 0)
}

/// W's and R's exit times, with the features and `adj` applied.
fn exits(f: &str, adj: impl FnOnce(&mut Config)) -> (Time, Time) {
    let mut s = sim_with("test-smt2", &waker_wakee(), 1, |c| {
        c.features = if f.is_empty() { v6_6() } else { feat(f) };
        adj(c);
    });
    s.step_until(2_000 * USEC);
    let exit = |i: usize| s.tasks[s.task_id(i) as usize].exit_time.expect("exited");
    (exit(W), exit(R))
}

/// No line counts at all: the reference the tests add lines to.
fn no_lines(c: &mut Config) {
    c.costs.enqueue_lines = 0;
    c.costs.group_enqueue_lines = 0;
    c.costs.task_sched_lines = 0;
}

/// [`exits`] with every line count 0 but those `set` gives.
fn exits_with(f: &str, set: impl FnOnce(&mut Config)) -> (Time, Time) {
    exits(f, |c| {
        no_lines(c);
        set(c);
    })
}

/// One same-LLC line transfer from CPU 5 to CPU 0, as the waker's delay with one rq line more.
fn one_line(f: &str) -> Time {
    exits_with(f, |c| c.costs.enqueue_lines = 1).0 - exits(f, no_lines).0
}

#[test]
fn a_waker_enqueuing_on_another_cpu_pays_one_transfer_per_runqueue_line_and_group_line() {
    // -TTWU_QUEUE: the waker takes CPU 5's rq lock and enqueues R there itself.
    let (w0, _) = exits("-TTWU_QUEUE", no_lines);
    let line = one_line("-TTWU_QUEUE");
    assert!(line > 0, "one rq line more delays the waker");
    let (w10, _) = exits_with("-TTWU_QUEUE", |c| c.costs.enqueue_lines = 10);
    assert_eq!(w10 - w0, 10 * line, "ten lines cost ten transfers");
    // A task in a task group adds its group's level on the target; a root task does not.
    let grouped = |lines: u64| {
        exits_with("-TTWU_QUEUE", move |c| {
            c.task_groups = TaskGroups::Autogroup;
            c.costs.group_enqueue_lines = lines;
        })
        .0
    };
    assert_eq!(grouped(10) - grouped(0), 10 * line, "the group's cfs_rq and entity lines");
    let (root, _) = exits_with("-TTWU_QUEUE", |c| c.costs.group_enqueue_lines = 10);
    assert_eq!(root, w0, "outside any task group there is no group level to touch");
}

#[test]
fn the_wakees_lines_go_to_the_waker_and_back_to_the_target_after_a_direct_enqueue() {
    let (w0, r0) = exits("-TTWU_QUEUE", no_lines);
    let line = one_line("-TTWU_QUEUE");
    let (w6, r6) = exits_with("-TTWU_QUEUE", |c| c.costs.task_sched_lines = 6);
    // R last ran on CPU 5: the waker on CPU 0 pulls its six lines, CPU 5 pulls them back to run it.
    assert_eq!(w6 - w0, 6 * line, "the waker pulls the wakee's lines");
    assert_eq!(r6 - r0, 12 * line, "the target pulls them back at the switch");
}

#[test]
fn a_target_enqueuing_from_its_own_wakelist_pulls_no_lines_for_a_wakee_that_last_ran_there() {
    // v6.6 queues the wakeup of an idle same-LLC CPU on its wakelist (TTWU_QUEUE_IDLE's rule).
    let (w0, r0) = exits("", no_lines);
    let (w, r) = exits_with("", |c| {
        c.costs.enqueue_lines = 10;
        c.costs.task_sched_lines = 6;
    });
    assert_eq!((w, r), (w0, r0), "the waker only queues; the target's own lines are its own");
}
