//! Fork placement (`wake_up_new_task()` → `find_idlest_cpu()`), against the rules of
//! kernel/sched/fair.c: a benchmark forks its children one after another from the launch CPU,
//! and where each lands depends on what the earlier ones left behind.
use crate::common::*;
use wakesim_engine::MSEC;
use wakesim_workloads::{Op, Origin, TaskSpec, Workload};

/// `n` children forked by the launch CPU's parent: each runs `first` and then waits for the
/// last task, which wakes them all after 5 ms.
fn forked_children(n: u32, first: Vec<Op>) -> Workload {
    let mut tasks: Vec<TaskSpec> = (0..n)
        .map(|i| {
            let mut prog = first.clone();
            prog.extend([Op::FutexWait { futex: 0 }, Op::Exit]);
            TaskSpec { mm: 1 + i, ..TaskSpec::new(format!("child{i}"), prog) }
        })
        .collect();
    let waker = vec![Op::Sleep(wakesim_workloads::Dur::Fixed(5 * MSEC)), Op::FutexWake { futex: 0, n }, Op::Exit];
    tasks.push(TaskSpec { origin: Origin::Existing, ..TaskSpec::new("waker", waker) });
    workload(tasks, 0, 1)
}

/// Where each child sits once all are forked (before the waker's wakeup at 5 ms).
fn placed(f: wakesim_model::Features, wl: &Workload, n: u32, at: u64) -> Vec<usize> {
    let mut s = sim("xeon-8269cy", f, wl, 1);
    s.step_until(at);
    (0..n as usize).map(|i| s.tasks[s.task_id(i) as usize].cpu as usize).collect()
}

/// xeon-8269cy: node 0 is CPUs 0-25 and 52-77 (cores 0-25), node 1 the rest.
fn node(c: usize) -> usize {
    (c % 52) / 26
}

#[test]
fn children_that_block_at_once_stay_on_the_parents_node_one_core_each() {
    // Each child blocks right after it starts, so every fork finds the node idle again. The
    // NUMA level keeps the task local (the local node's idle CPUs are within
    // NUMA_IMBALANCE_MIN of the other's); at the MC level the cores tie on idle CPUs and
    // update_pick_idlest() takes the one with the least util: not one an earlier child's
    // blocked util still sits on (3edecfef0285).
    let n = 20;
    let cpus = placed(v6_6(), &forked_children(n, vec![]), n, 4 * MSEC);
    assert!(cpus.iter().all(|&c| node(c) == 0), "children left the launch CPU's node: {cpus:?}");
    let mut cores: Vec<usize> = cpus.iter().map(|&c| c % 52).collect();
    cores.sort();
    cores.dedup();
    assert_eq!(cores.len(), n as usize, "two children share a core: {cpus:?}");
    assert!(!cpus.contains(&0), "a child was placed on the forking parent's CPU: {cpus:?}");
}

#[test]
fn running_children_stay_local_while_the_node_imbalance_is_at_most_two() {
    // Children that keep running: adjust_numa_imbalance() keeps a fork local while the local
    // node has at most imb_numa_nr (6 here) running and its idle CPUs trail the other node's by
    // at most NUMA_IMBALANCE_MIN (2); the parent counts as running. Fork 1 finds a difference
    // of 1 and fork 2 of 2 (local); fork 3 of 3, and goes to node 1.
    let wl = forked_children(3, vec![compute(20 * MSEC)]);
    let cpus = placed(v6_6(), &wl, 3, MSEC);
    assert_eq!(cpus.iter().map(|&c| node(c)).collect::<Vec<_>>(), vec![0, 0, 1], "{cpus:?}");
}

#[test]
fn forks_are_one_fork_cost_apart_and_threads_cost_a_clone() {
    // Two processes, then a thread of the second (same mm): created at fork, 2 fork, 2 fork +
    // clone_thread.
    let mut wl = forked_children(3, vec![]);
    wl.tasks[2].mm = wl.tasks[1].mm;
    let s = sim("xeon-8269cy", v6_6(), &wl, 1);
    let (f, c) = (s.c.fork, s.c.clone_thread);
    let times: Vec<u64> = s.spawn_at.iter().map(|&(t, _)| t).collect();
    assert_eq!(times, vec![f, 2 * f, 2 * f + c, 0], "the waker exists from the start");
}
