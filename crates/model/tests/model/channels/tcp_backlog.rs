//! A loopback TCP receiver ACKs each message it reads. The ACK is processed on the sender's
//! socket: while the sender is inside a send it owns that socket, so `tcp_v4_rcv()` queues the
//! ACK on the backlog (`tcp_add_backlog()`) and the sender runs it (`tcp_ack`) in its
//! `release_sock()`; otherwise the receiver's softirq runs it, inside `tcp_recv`.
use crate::common::*;
use wakesim_engine::Time;
use wakesim_workloads::{ChanKind, ChannelSpec, Op, TaskSpec, Workload};

const MSGS: u64 = 64;
const BYTES: u64 = 16 << 10;
/// An ACK cost far above every other per-message cost, so that the count of ACKs shows in a
/// CPU's busy time through the other costs' changes with the timing.
const ACK: Time = 500_000;

fn workload(kind: ChanKind, tasks: Vec<TaskSpec>, chans: usize) -> Workload {
    let channels = (0..chans).map(|i| ChannelSpec { name: format!("c{i}"), kind, capacity: 4 * BYTES }).collect();
    Workload { name: "tcp".into(), tasks, channels, futexes: 0, reporter: Box::new(Elapsed), duration: None }
}

/// A sender on CPU 2 streaming 16 KiB messages to a receiver on CPU 0.
fn stream(kind: ChanKind) -> Workload {
    let tasks = vec![
        pinned(TaskSpec::new("receiver", looped(MSGS, vec![Op::Recv { chan: 0, bytes: BYTES }])), &[0]),
        pinned(TaskSpec::new("sender", looped(MSGS, vec![Op::Send { chan: 0, bytes: BYTES }])), &[2]),
    ];
    workload(kind, tasks, 1)
}

/// A client on CPU 2 sending 16 KiB requests and waiting for 1-byte answers from CPU 0.
fn request_response(kind: ChanKind) -> Workload {
    let tasks = vec![
        pinned(TaskSpec::new("server", looped(MSGS, vec![Op::Recv { chan: 0, bytes: BYTES }, Op::Send { chan: 1, bytes: 1 }])), &[0]),
        pinned(TaskSpec::new("client", looped(MSGS, vec![Op::Send { chan: 0, bytes: BYTES }, Op::Recv { chan: 1, bytes: 1 }])), &[2]),
    ];
    workload(kind, tasks, 2)
}

/// Busy time of CPUs 0 and 2 on test-2x4 with `tcp_ack` set.
fn busy(wl: &Workload, ack: Time) -> [Time; 2] {
    let r = sim_with("test-2x4", wl, 1, |cfg| cfg.costs.tcp_ack = ack).run();
    assert!(!r.outcome.capped, "the run finishes");
    [r.cpu_busy[0], r.cpu_busy[2]]
}

#[test]
fn a_streaming_senders_acks_run_from_its_backlog_at_most_one_per_message() {
    let wl = stream(ChanKind::TcpLoopback);
    let [_, tx0] = busy(&wl, 0);
    let [_, tx1] = busy(&wl, ACK);
    let acks = (tx1 - tx0) as f64 / ACK as f64;
    // The sender is inside a send or its release_sock() nearly all the time, so the receiver's
    // ACKs find its socket owned; one ACK per message read at most.
    assert!(acks.round() >= 1.0 && acks.round() <= MSGS as f64, "{acks:.2} ACKs' worth on the sender for {MSGS} messages");
}

#[test]
fn a_sender_waiting_for_its_answer_does_not_own_its_socket_and_pays_no_backlog() {
    let wl = request_response(ChanKind::TcpLoopback);
    assert_eq!(busy(&wl, 0), busy(&wl, ACK));
}

#[test]
fn unix_sockets_have_no_acks() {
    let wl = stream(ChanKind::UnixStream);
    assert_eq!(busy(&wl, 0), busy(&wl, ACK));
}
