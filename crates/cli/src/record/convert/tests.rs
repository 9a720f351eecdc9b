//! The conversion's tests, on synthetic tracefs recordings (`l` and `sw` write their lines).

use super::*;
use crate::record::events::parse;

/// A tracefs line at `us` µs after 100 s.
pub(crate) fn l(task: &str, cpu: u32, flags: &str, us: u64, text: &str) -> String {
    format!("{task:>16} [{cpu:03}] {flags} {}.{:06}: {text}\n", 100 + us / 1_000_000, us % 1_000_000)
}

pub(crate) fn sw(prev: (&str, u32), state: &str, next: (&str, u32)) -> String {
    format!(
        "sched_switch: prev_comm={} prev_pid={} prev_prio=120 prev_state={state} ==> next_comm={} next_pid={} next_prio=120",
        prev.0, prev.1, next.0, next.1
    )
}

/// app-100 forks app-101; 101 blocks in read until 100 writes 64 bytes (then 100 writes 32
/// more, which 101 reads later without blocking), then in a futex wait until 100's
/// FUTEX_WAKE, then sleeps 1 ms (woken from a hard interrupt) and exits, waking 100 out of
/// wait4. An unrelated task runs 4 µs on CPU 1; a kworker wakes nobody of ours.
pub(crate) fn synthetic_trace() -> String {
    let (idle0, idle1, app, kid) = (("swapper/0", 0), ("swapper/1", 0), ("app", 100), ("app", 101));
    let mut s = String::from("# tracer: nop\n#\n# entries-in-buffer/entries-written: 30/30   #P:2\n");
    s += &l("<idle>-0", 0, "d..2.", 0, &sw(idle0, "R", app));
    s += &l("app-100", 0, ".....", 10, "sched_process_fork: comm=app pid=100 child_comm=app child_pid=101");
    s += &l("app-100", 0, "d..2.", 11, "sched_wakeup_new: comm=app pid=101 prio=120 target_cpu=001");
    s += &l("<idle>-0", 1, "d..2.", 20, &sw(idle1, "R", kid));
    s += &l("app-101", 1, ".....", 24, "sys_read(fd: 3, buf: 0x7ffd, count: 0x1000)");
    s += &l("app-101", 1, "d..2.", 25, &sw(kid, "S", idle1));
    s += &l("<idle>-0", 1, "d..2.", 26, &sw(idle1, "R", ("other", 200)));
    s += &l("other-200", 1, "d..2.", 30, &sw(("other", 200), "S", idle1));
    s += &l("kworker/0:1-9", 0, "d..3.", 35, "sched_waking: comm=rcu_preempt pid=15 prio=120 target_cpu=000");
    s += &l("app-100", 0, ".....", 40, "sys_write(fd: 4, buf: 0x7ffd, count: 0x40)");
    s += &l("app-100", 0, "d..3.", 41, "sched_waking: comm=app pid=101 prio=120 target_cpu=001");
    s += &l("app-100", 0, ".....", 42, "sys_write -> 0x40");
    s += &l("<idle>-0", 1, "d..2.", 45, &sw(idle1, "R", kid));
    s += &l("app-101", 1, ".....", 46, "sys_read -> 0x40");
    s += &l("app-100", 0, ".....", 52, "sys_write(fd: 4, buf: 0x7ffd, count: 0x20)");
    s += &l("app-100", 0, ".....", 53, "sys_write -> 0x20");
    s += &l("app-101", 1, ".....", 49, "sys_futex(uaddr: 0x5560, op: 0x80, val: 0, utime: 0, uaddr2: 0, val3: 0)");
    s += &l("app-101", 1, "d..2.", 50, &sw(kid, "S", idle1));
    s += &l("app-100", 0, ".....", 60, "sys_futex(uaddr: 0x5560, op: 0x81, val: 1, utime: 0, uaddr2: 0, val3: 0)");
    s += &l("app-100", 0, "d..3.", 61, "sched_waking: comm=app pid=101 prio=120 target_cpu=001");
    s += &l("<idle>-0", 1, "d..2.", 62, &sw(idle1, "R", kid));
    s += &l("app-100", 0, ".....", 63, "sys_futex -> 0x1");
    s += &l("app-100", 0, ".....", 64, "sys_wait4(upid: 0xffffffffffffffff, stat_addr: 0x7ffd, options: 0, ru: 0)");
    s += &l("app-100", 0, "d..2.", 66, &sw(app, "S", idle0));
    s += &l("app-101", 1, ".....", 67, "sys_read(fd: 3, buf: 0x7ffd, count: 0x1000)");
    s += &l("app-101", 1, ".....", 68, "sys_read -> 0x20");
    s += &l("app-101", 1, ".....", 70, "sys_clock_nanosleep(which_clock: 0, flags: 0, rqtp: 0x7ffd, rmtp: 0)");
    s += &l("app-101", 1, "d..2.", 71, &sw(kid, "S", idle1));
    s += &l("<idle>-0", 1, "d.h3.", 1071, "sched_waking: comm=app pid=101 prio=120 target_cpu=001");
    s += &l("<idle>-0", 1, "d..2.", 1072, &sw(idle1, "R", kid));
    s += &l("app-101", 1, ".....", 1080, "sched_process_exit: comm=app pid=101 prio=120 group_dead=false");
    s += &l("app-101", 1, "d..3.", 1081, "sched_waking: comm=app pid=100 prio=120 target_cpu=000");
    s += &l("app-101", 1, "d..2.", 1082, &sw(kid, "X", idle1));
    s += &l("<idle>-0", 0, "d..2.", 1085, &sw(idle0, "R", app));
    s += &l("app-100", 0, ".....", 1095, "sched_process_exit: comm=app pid=100 prio=120 group_dead=true");
    s += &l("app-100", 0, "d..2.", 1096, &sw(app, "X", idle0));
    s
}

fn steps(t: &TaskOut) -> Vec<(u64, Act, &'static str)> {
    t.steps.iter().map(|s| (s.cpu, s.act.clone(), s.note)).collect()
}

#[test]
fn a_synthetic_trace_keeps_its_pipe_its_chain_its_sleep_its_fork_and_its_exit_wakeup() {
    let rec = parse(&synthetic_trace(), "t").unwrap();
    let c = convert(&rec, select(&rec, &Roots::Pids(vec![100])), false);
    let names: Vec<&str> = c.chans.iter().map(|c| c.name.as_str()).collect();
    // The pipe 100 writes on fd 4 and 101 reads on fd 3, found by the wakeup; wait4's pair.
    assert_eq!(names, ["ch.101.3", "c.101.100"]);
    assert_eq!((c.chans[0].kind, c.chans[0].capacity), (ChanKind::Pipe, None));
    assert_eq!(c.futexes, ["spawn.101", "f.100.101"]);
    let (p, k) = (&c.tasks[0], &c.tasks[1]);
    assert_eq!((p.pid, k.pid, p.comm.as_str()), (100, 101, "app"));
    assert_eq!(
        steps(p),
        [
            (10_000, Act::Post { futex: 0 }, ""),
            // Every write of the pipe, at its entry; the first woke the reader.
            (40_000, Act::Send { chan: 0, bytes: 64, blocks: false, wakes: true }, ""),
            (52_000, Act::Send { chan: 0, bytes: 32, blocks: false, wakes: false }, ""),
            (61_000, Act::Post { futex: 1 }, ""),
            (66_000, Act::Recv { chan: 1, bytes: 1, blocks: true }, "wait4"),
        ]
    );
    assert_eq!(p.end_cpu, 76_000, "66 µs, then 10 µs until its exit");
    assert_eq!(
        steps(k),
        [
            (0, Act::Wait { futex: 0, spawn: true }, "fork"),
            // The read that blocked is the recv at the block; the later one found its data.
            (5_000, Act::Recv { chan: 0, bytes: 64, blocks: true }, "read"),
            (10_000, Act::Wait { futex: 1, spawn: false }, "futex"),
            (15_000, Act::Recv { chan: 0, bytes: 32, blocks: false }, ""),
            (19_000, Act::Sleep { ns: 1_000_000 }, "clock_nanosleep"),
            // The exit's wakeup of the parent comes after the exit event: before the end.
            (28_000, Act::Send { chan: 1, bytes: 1, blocks: false, wakes: true }, ""),
        ]
    );
    let f = &c.figures;
    assert_eq!((f.run_ns, f.wakeups, f.voluntary, f.cpu_ns, f.tasks, f.forks, f.other_ns), (1_095_000, 4, 4, 104_000, 2, 1, 4_000));
    assert_eq!((f.channels, f.channel_ops), (1, 4));
    let blocks: Vec<(&str, u64)> = f.blocks.iter().map(|(k, v)| (*k, *v)).collect();
    assert_eq!(blocks, [("channel", 2), ("futex", 1), ("sleep (timer)", 1)]);
    assert!(c.syscalls);
}

#[test]
fn a_read_and_write_pair_with_an_af_unix_sock_event_is_a_unix_socket_of_skb_capacity() {
    // The same trace, with the sock event the kernel emits inside a write on a unix socket.
    let exit = l("app-100", 0, ".....", 42, "sys_write -> 0x40");
    let sock = l("app-100", 0, ".....", 42, "sock_send_length: sk address = 00000000deadbeef, family = 0x1 protocol = 0x0, length = 64, error = 0, flags = 0x0");
    let t = synthetic_trace().replace(&exit, &(sock + &exit));
    assert!(t.contains("sock_send_length"));
    let rec = parse(&t, "t").unwrap();
    let c = convert(&rec, select(&rec, &Roots::Pids(vec![100])), false);
    assert_eq!(c.chans[0].name, "ch.101.3");
    // Two writes of 64 and 32 B: a mean of 48 B, whose skb charges 256 + 512 B of the
    // socket's 212992: 278 writes' worth, 13,344 B, not 212,992.
    let expect = wakesim_workloads::defaults::unix_stream_capacity(48);
    assert_eq!((c.chans[0].kind, c.chans[0].capacity), (ChanKind::UnixStream, Some(expect)));
    assert_eq!(expect, 278 * 48);
}

#[test]
fn without_syscall_exits_the_pipe_is_a_pair_of_the_blocked_read() {
    let text: String = synthetic_trace().lines().filter(|l| !l.contains(" -> ")).map(|l| format!("{l}\n")).collect();
    let rec = parse(&text, "t").unwrap();
    let c = convert(&rec, select(&rec, &Roots::Pids(vec![100])), false);
    let names: Vec<&str> = c.chans.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["c.100.101", "c.101.100"]);
    assert_eq!(steps(&c.tasks[1])[1], (5_000, Act::Recv { chan: 0, bytes: 64, blocks: true }, "read"));
    assert_eq!(steps(&c.tasks[0])[1], (41_000, Act::Send { chan: 0, bytes: 64, blocks: false, wakes: true }, ""));
    assert_eq!(c.figures.channels, 0);
}

#[test]
fn siblings_share_their_parents_descriptors_until_it_closes_them() {
    // p-10 forks readers r-11 and the writers w-12 and w-13, closes fd 5, forks w-14. w-12's
    // write on fd 5 wakes r-11 reading fd 3; w-13 writes fd 5 without waking anyone (the same
    // pipe, inherited); w-14's fd 5 is another file (written after the close). r-11 reads
    // all of w-12's and w-13's bytes.
    let mut s = String::new();
    let fork = |c: u32| format!("sched_process_fork: comm=p pid=10 child_comm=x child_pid={c}");
    s += &l("p-10", 0, ".....", 1, &fork(11));
    s += &l("p-10", 0, ".....", 2, &fork(12));
    s += &l("p-10", 0, ".....", 3, &fork(13));
    s += &l("p-10", 0, ".....", 4, "sys_close(fd: 5)");
    s += &l("p-10", 0, ".....", 5, &fork(14));
    s += &l("<idle>-0", 1, "d..2.", 6, &sw(("swapper/1", 0), "R", ("r", 11)));
    s += &l("r-11", 1, ".....", 7, "sys_read(fd: 3, buf: 0x1, count: 0x100)");
    s += &l("r-11", 1, "d..2.", 8, &sw(("r", 11), "S", ("w", 12)));
    s += &l("w-12", 1, ".....", 9, "sys_write(fd: 5, buf: 0x1, count: 0x10)");
    s += &l("w-12", 1, "d..3.", 10, "sched_waking: comm=r pid=11 prio=120 target_cpu=001");
    s += &l("w-12", 1, ".....", 11, "sys_write -> 0x10");
    s += &l("w-12", 1, "d..2.", 12, &sw(("w", 12), "X", ("w", 13)));
    s += &l("w-13", 1, ".....", 13, "sys_write(fd: 5, buf: 0x1, count: 0x20)");
    s += &l("w-13", 1, ".....", 14, "sys_write -> 0x20");
    s += &l("w-13", 1, "d..2.", 15, &sw(("w", 13), "X", ("w", 14)));
    s += &l("w-14", 1, ".....", 16, "sys_write(fd: 5, buf: 0x1, count: 0x40)");
    s += &l("w-14", 1, ".....", 17, "sys_write -> 0x40");
    s += &l("w-14", 1, "d..2.", 18, &sw(("w", 14), "X", ("r", 11)));
    s += &l("r-11", 1, ".....", 19, "sys_read -> 0x10");
    s += &l("r-11", 1, ".....", 20, "sys_read(fd: 3, buf: 0x1, count: 0x100)");
    s += &l("r-11", 1, ".....", 21, "sys_read -> 0x20");
    let rec = parse(&s, "t").unwrap();
    let sel = select(&rec, &Roots::Pids(vec![10]));
    let plan = chans::plan(&rec, &sel);
    assert_eq!(plan.objs.len(), 1);
    assert_eq!((plan.objs[0].name.as_str(), plan.objs[0].left), ("ch.11.3", 0));
    let mut w: Vec<u64> = plan.writes.values().map(|&(_, b)| b).collect();
    w.sort_unstable();
    assert_eq!(w, [0x10, 0x20], "w-14's write after the close is not the pipe's");
    assert_eq!(plan.reads.len(), 2);
    // Had r-11 read more than the mapped writes gave it, the pipe would be left to the pairs.
    let more = s.replace("sys_read -> 0x20", "sys_read -> 0x21");
    let rec = parse(&more, "t").unwrap();
    assert!(chans::plan(&rec, &sel).objs.is_empty());
}

#[test]
fn a_wakeup_before_the_switch_out_ends_that_block_and_a_missed_switch_in_is_inferred() {
    // 101 is woken by 100 while still descheduling (the wakelist race: the waking is traced
    // before its switch out), and tracefs misses 101's switch back in: its next event shows
    // it running. Both sides keep the futex pair, in time order, and nothing deadlocks.
    let (idle1, a, b) = (("swapper/1", 0), ("app", 100), ("app", 101));
    let mut s = String::new();
    s += &l("<idle>-0", 0, "d..2.", 0, &sw(("swapper/0", 0), "R", a));
    s += &l("<idle>-0", 1, "d..2.", 0, &sw(idle1, "R", b));
    s += &l("app-101", 1, ".....", 10, "sys_futex(uaddr: 0x5560, op: 0x80, val: 0, utime: 0, uaddr2: 0, val3: 0)");
    s += &l("app-100", 0, ".....", 11, "sys_futex(uaddr: 0x5560, op: 0x81, val: 1, utime: 0, uaddr2: 0, val3: 0)");
    s += &l("app-100", 0, "d..2.", 12, "sched_waking: comm=app pid=101 prio=120 target_cpu=001");
    s += &l("app-101", 1, "d..2.", 12, &sw(b, "S", idle1));
    s += &l("app-100", 0, ".....", 13, "sys_futex -> 0x1");
    s += &l("app-101", 1, ".....", 20, "sys_futex -> 0x0");
    s += &l("app-101", 1, ".....", 21, "sys_futex(uaddr: 0x5570, op: 0x81, val: 1, utime: 0, uaddr2: 0, val3: 0)");
    s += &l("app-101", 1, "d..2.", 30, &sw(b, "X", idle1));
    s += &l("app-100", 0, "d..2.", 40, &sw(a, "X", ("swapper/0", 0)));
    let rec = parse(&s, "t").unwrap();
    let c = convert(&rec, select(&rec, &Roots::Pids(vec![100, 101])), false);
    let by = |pid| c.tasks.iter().find(|t| t.pid == pid).unwrap();
    assert_eq!(steps(by(100)), [(12_000, Act::Post { futex: 0 }, "")]);
    assert_eq!(steps(by(101)), [(12_000, Act::Wait { futex: 0, spawn: false }, "futex")]);
    assert_eq!(by(101).end_cpu, 22_000, "12 µs before the block, 10 after the missed switch in");
    assert_eq!((c.figures.unwoken, c.figures.wakeups, c.figures.voluntary), (0, 1, 1));
    assert_eq!(stuck(&c), None);
}

#[test]
fn programs_that_wait_on_each_other_are_reported_as_stuck() {
    let rec = parse(&synthetic_trace(), "t").unwrap();
    let mut c = convert(&rec, select(&rec, &Roots::Pids(vec![100])), false);
    assert_eq!(stuck(&c), None);
    // The parent's futex post moved after its wait4, which needs the child's exit: a cycle.
    let p = &mut c.tasks[0].steps;
    let post = p.remove(3);
    p.push(post);
    let why = stuck(&c).unwrap();
    assert_eq!(why, "task app-100 would wait forever at its op 4 (recv c.101.100 1)");
}

#[test]
fn only_the_root_and_its_descendants_are_taken() {
    let rec = parse(&synthetic_trace(), "t").unwrap();
    assert_eq!(select(&rec, &Roots::Pids(vec![101])), HashSet::from([101]));
    assert_eq!(select(&rec, &Roots::Comms(vec!["app".into()])), HashSet::from([100, 101]));
    assert!(select(&rec, &Roots::Comms(vec!["nosuch".into()])).is_empty());
    // Converting only the child: the parent is outside, so its wakeups become sleeps.
    let c = convert(&rec, select(&rec, &Roots::Pids(vec![101])), false);
    assert_eq!(c.tasks.len(), 1);
    assert!(c.tasks[0].steps.iter().all(|s| matches!(s.act, Act::Sleep { .. })), "{:?}", c.tasks[0].steps);
    assert_eq!(busiest_comms(&rec, 2), [("app".to_string(), 2), ("other".to_string(), 1)]);
}

#[test]
fn perf_script_without_syscalls_gives_futex_pairs_and_ends_at_the_dead_switch() {
    let pl = |task: &str, cpu: u32, us: u64, text: &str| format!("{task:>16} [{cpu:03}] {}.{:09}: sched:{text}\n", 100, us * 1000);
    let (idle0, idle1, a, b) = (("swapper/0", 0), ("swapper/1", 0), ("app", 100), ("app", 101));
    let text = [
        pl("swapper     0", 0, 0, &sw(idle0, "R", a)),
        pl("swapper     0", 1, 0, &sw(idle1, "R", b)),
        pl("app   101", 1, 5, &sw(b, "S", idle1)),
        pl("app   100", 0, 10, "sched_waking: comm=app pid=101 prio=120 target_cpu=001"),
        pl("swapper     0", 1, 12, &sw(idle1, "R", b)),
        pl("app   100", 0, 15, &sw(a, "S", idle0)),
        pl("app   101", 1, 20, "sched_waking: comm=app pid=100 prio=120 target_cpu=000"),
        pl("swapper     0", 0, 21, &sw(idle0, "R", a)),
        pl("app   101", 1, 30, &sw(b, "X", idle1)),
        pl("app   100", 0, 40, &sw(a, "X", idle0)),
    ]
    .concat();
    let rec = parse(&text, "p").unwrap();
    let c = convert(&rec, select(&rec, &Roots::Comms(vec!["app".into()])), false);
    assert!(!c.syscalls);
    assert_eq!(c.futexes, ["f.100.101", "f.101.100"]);
    let by = |pid| c.tasks.iter().find(|t| t.pid == pid).unwrap();
    assert_eq!(steps(by(100)), [(10_000, Act::Post { futex: 0 }, ""), (15_000, Act::Wait { futex: 1, spawn: false }, "")]);
    assert_eq!(steps(by(101)), [(5_000, Act::Wait { futex: 0, spawn: false }, ""), (13_000, Act::Post { futex: 1 }, "")]);
    assert_eq!((by(100).end_cpu, by(101).end_cpu), (34_000, 23_000));
    assert_eq!((c.figures.run_ns, c.figures.wakeups, c.figures.voluntary), (40_000, 2, 2));
}
