//! A socket's two ends share only its receive queue: a send builds and delivers its skb on its
//! own side and takes the queue's lock to append it, a receive takes the lock to unlink it and
//! copies on its own side. So a sender and a receiver on two CPUs overlap their work, and a
//! receiver cheaper than its sender drains the queue and sleeps until the next message.
use crate::common::*;
use wakesim_engine::Time;
use wakesim_machine::CpuSet;
use wakesim_workloads::{ChanKind, ChannelSpec, Op, TaskSpec, Workload};

const MSGS: u64 = 2_000;

/// `MSGS` 64-byte messages from a sender on CPU 0 to a receiver on CPU 2 (two cores of one LLC
/// on test-2x4) over a channel of `kind` that never fills.
fn stream(kind: ChanKind) -> Workload {
    let chan = ChannelSpec { name: "s".into(), kind, capacity: u64::MAX / 2 };
    let pin = |mut t: TaskSpec, cpu: usize| {
        t.allowed = Some(CpuSet::from_cpus([cpu]));
        t
    };
    let send = if kind == ChanKind::UdpLoopback { Op::SendDgram { chan: 0, bytes: 64 } } else { Op::Send { chan: 0, bytes: 64 } };
    let tasks = vec![
        pin(TaskSpec::new("receiver", vec![Op::LoopStart { count: MSGS, end: 2 }, Op::Recv { chan: 0, bytes: 64 }, Op::LoopEnd { start: 0 }, Op::Exit]), 2),
        pin(TaskSpec::new("sender", vec![Op::LoopStart { count: MSGS, end: 2 }, send, Op::LoopEnd { start: 0 }, Op::Exit]), 0),
    ];
    Workload { name: "stream".into(), tasks, channels: vec![chan], futexes: 0, reporter: Box::new(Elapsed), duration: None }
}

/// Nanoseconds per message and the receiver's blocks, with every socket op's own work set to
/// `send` and `recv` ns (and no TCP ACK work on the sender's backlog: `tcp_backlog`).
fn per_message(kind: ChanKind, send: Time, recv: Time) -> (f64, u64) {
    let r = sim_with("test-2x4", &stream(kind), 1, |cfg| {
        let c = &mut cfg.costs;
        (c.unix_send, c.tcp_send, c.udp_send) = (send, send, send);
        (c.unix_recv, c.tcp_recv, c.udp_recv) = (recv, recv, recv);
        c.tcp_ack = 0;
    })
    .run();
    assert!(!r.outcome.capped, "the stream finishes");
    (r.outcome.end_time as f64 / MSGS as f64, r.stats.tasks[0].nvcsw)
}

#[test]
fn a_socket_sender_and_receiver_on_two_cpus_overlap_their_work() {
    let cfg = config("test-2x4", Default::default(), 1);
    let (hold, syscall) = (cfg.costs.sock_queue_hold, cfg.costs.syscall);
    assert!(hold < 500, "sock_queue_hold {hold} ns is a short critical section");
    for kind in [ChanKind::UnixStream, ChanKind::TcpLoopback, ChanKind::UdpLoopback] {
        // The receiver is the slower side, so it always finds a message queued: were each op's
        // work done under the queue's lock, the two sides would take turns (≥ 5.5 µs a
        // message); in parallel the receiver bounds the stream: its 3 µs and its syscall, plus
        // the lines it pulls and the queue lock it waits for.
        let (per, _) = per_message(kind, 2_500, 3_000);
        assert!(per < 0.8 * (2_500 + 3_000) as f64, "{kind:?}: {per:.0} ns per message, the two ends' work serialised");
        assert!(per >= (3_000 + syscall) as f64, "{kind:?}: {per:.0} ns per message, faster than the receiver's own work");
    }
}

#[test]
fn a_receiver_cheaper_than_its_sender_sleeps_between_messages() {
    // netperf UDP_STREAM on Linux: a loopback datagram costs its sender (sendmsg + the NET_RX
    // softirq that delivers it) several times what recvmsg costs its receiver (measured 2.4
    // against 0.56 µs on the development VM), so the receiver empties the queue and sleeps.
    let (_, blocks) = per_message(ChanKind::UdpLoopback, 2_400, 400);
    assert!(blocks > MSGS / 10, "the receiver blocked {blocks} times in {MSGS} messages");
    // The other way round the receiver never catches up: it blocks only at the start.
    let (_, blocks) = per_message(ChanKind::UdpLoopback, 400, 2_400);
    assert!(blocks < 5, "a receiver slower than its sender blocked {blocks} times");
}
