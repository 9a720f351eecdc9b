//! A datagram send (`SendDgram`) drops what does not fit the receive buffer instead of blocking.
use crate::common::*;
use wakesim_engine::MSEC;
use wakesim_workloads::{Op, Workload};

#[test]
fn a_datagram_to_a_full_buffer_is_dropped_and_the_sender_goes_on() {
    let prog = |send: fn(u32, u64) -> Op| {
        vec![Op::LoopStart { count: 10, end: 2 }, send(0, 60), Op::LoopEnd { start: 0 }, Op::Exit]
    };
    let w = |send: fn(u32, u64) -> Op| Workload {
        name: "dgram".into(),
        tasks: vec![task("sender", prog(send)), task("receiver", vec![sleep(MSEC), Op::Recv { chan: 0, bytes: 60 }, Op::Exit])],
        channels: vec![wakesim_workloads::ChannelSpec { name: "c".into(), kind: wakesim_workloads::ChanKind::UdpLoopback, capacity: 100 }],
        futexes: 0,
        reporter: Box::new(Elapsed),
        duration: None,
    };
    let dgram = run("test-smt2", v6_6(), &w(|chan, bytes| Op::SendDgram { chan, bytes }), 1);
    // The first datagram fits (60 of 100 bytes); the nine after it find 40 bytes free.
    assert_eq!(dgram.stats.wake.dgram_drops, 9);
    assert!(dgram.outcome.task_exit[0].unwrap() < MSEC, "the sender never blocked");
    assert!(!dgram.outcome.capped);
    let stream = run("test-smt2", v6_6(), &w(|chan, bytes| Op::Send { chan, bytes }), 1);
    assert_eq!(stream.stats.wake.dgram_drops, 0);
    assert!(stream.outcome.task_exit[0].is_none(), "a blocking sender waits for a reader that reads once");
}
