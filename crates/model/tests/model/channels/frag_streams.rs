//! Loopback TCP keeps a message's data in its sender's page frag, apart from the skb: a reader
//! on another core streams those lines in with `stream_read_overlap` misses in flight, and a
//! sender that gets the same frag page back (`skb_page_frag_refill()`, once the reader has
//! freed the skbs on it) takes back the lines the reader last held, `stream_write_overlap` in
//! flight. Pipes and unix sockets keep their per-message line count (`message_lines`).
use crate::common::*;
use wakesim_engine::Time;
use wakesim_workloads::{ChanKind, ChannelSpec, Dur, Op, TaskSpec, Workload};

const MSGS: u64 = 32;
/// Messages queued before the reader drains them: 16 skbs of 32 KiB truesize stay inside
/// test-2x4's 1 MiB private cache (`message_lines` covers the ones that leave it).
const QUEUED: u64 = 16;
const BYTES: u64 = 16 << 10;
/// 64-byte lines in one message.
const LINES: u64 = BYTES / 64;

fn chans(kind: ChanKind, n: usize) -> Vec<ChannelSpec> {
    (0..n).map(|i| ChannelSpec { name: format!("c{i}"), kind, capacity: u64::MAX / 2 }).collect()
}

/// The writer on CPU 2 queues [`QUEUED`] 16 KiB messages while the reader on CPU 0 sleeps; then
/// the reader drains them.
fn queued_then_drained(kind: ChanKind) -> Workload {
    let reader = vec![
        Op::Sleep(Dur::Fixed(5_000_000)),
        Op::LoopStart { count: QUEUED, end: 3 },
        Op::Recv { chan: 0, bytes: BYTES },
        Op::LoopEnd { start: 1 },
        Op::Exit,
    ];
    let writer = vec![Op::LoopStart { count: QUEUED, end: 2 }, Op::Send { chan: 0, bytes: BYTES }, Op::LoopEnd { start: 0 }, Op::Exit];
    let tasks = vec![pinned(TaskSpec::new("reader", reader), &[0]), pinned(TaskSpec::new("writer", writer), &[2])];
    Workload { name: "queued".into(), tasks, channels: chans(kind, 1), futexes: 0, reporter: Box::new(Elapsed), duration: None }
}

/// Request/response: the client on CPU 2 sends 16 KiB, the server on `server_cpu` reads it and
/// answers 1 byte, `MSGS` times. Every request after the first finds the queue drained.
fn request_response(kind: ChanKind, server_cpu: usize) -> Workload {
    let client = vec![
        Op::LoopStart { count: MSGS, end: 3 },
        Op::Send { chan: 0, bytes: BYTES },
        Op::Recv { chan: 1, bytes: 1 },
        Op::LoopEnd { start: 0 },
        Op::Exit,
    ];
    let server = vec![
        Op::LoopStart { count: MSGS, end: 3 },
        Op::Recv { chan: 0, bytes: BYTES },
        Op::Send { chan: 1, bytes: 1 },
        Op::LoopEnd { start: 0 },
        Op::Exit,
    ];
    let tasks = vec![pinned(TaskSpec::new("client", client), &[2]), pinned(TaskSpec::new("server", server), &[server_cpu])];
    Workload { name: "rr".into(), tasks, channels: chans(kind, 2), futexes: 0, reporter: Box::new(Elapsed), duration: None }
}

/// Busy time of CPUs 0 and 2 on test-2x4 with the given overlaps, and the LLC line transfer
/// (CPUs 0 and 2 are two cores of one LLC).
fn busy(wl: &Workload, read: u64, write: u64) -> ([Time; 2], Time) {
    let mut line = 0;
    let r = sim_with("test-2x4", wl, 1, |cfg| {
        cfg.costs.stream_read_overlap = read;
        cfg.costs.stream_write_overlap = write;
        line = cfg.costs.line.llc;
    })
    .run();
    assert!(!r.outcome.capped, "the run finishes");
    ([r.cpu_busy[0], r.cpu_busy[2]], line)
}

#[test]
fn a_tcp_reader_on_another_core_streams_each_messages_data_lines_with_misses_in_flight() {
    let wl = queued_then_drained(ChanKind::TcpLoopback);
    let ([serial, _], line) = busy(&wl, 1, 1);
    let ([overlapped, _], _) = busy(&wl, 4, 1);
    // 256 misses one after another, against 4 in flight: 3/4 of them saved, per message.
    let saved = QUEUED * (LINES * line - LINES * line / 4);
    assert_eq!(serial - overlapped, saved, "the reader saves 3/4 of 256 line transfers per message");
    // The lines are a real cost: a 16 KiB read from the other core costs more than a
    // 100-byte one's (the per-message skb lines are the same for both).
    assert!(LINES * line / 4 > 10 * line);
}

#[test]
fn a_tcp_sender_whose_frag_was_read_on_another_core_takes_its_lines_back() {
    let wl = request_response(ChanKind::TcpLoopback, 0);
    let ([_, serial], line) = busy(&wl, 1_000_000, 1);
    let ([_, overlapped], _) = busy(&wl, 1_000_000, 4);
    // Every request after the first reuses the frag page the server has read.
    let per_request = LINES * line - LINES * line / 4;
    let saved = serial - overlapped;
    assert_eq!(saved, (MSGS - 1) * per_request, "the client saves 3/4 of 256 transfers on each reused frag");
    // The server's 1-byte answers reuse theirs too: one line, on the server's CPU 0.
}

#[test]
fn a_tcp_sender_on_its_readers_core_or_with_data_still_queued_pays_nothing_for_its_frag() {
    // Same core: the lines never left it.
    let wl = request_response(ChanKind::TcpLoopback, 2);
    assert_eq!(busy(&wl, 1_000_000, 1).0, busy(&wl, 1_000_000, 4).0);
    // Queued: every send but the first finds the earlier ones unread, so the frag page is
    // still referenced and the copy goes to lines no reader has touched; the first has no reader.
    let wl = queued_then_drained(ChanKind::TcpLoopback);
    assert_eq!(busy(&wl, 1, 1).0[1], busy(&wl, 1, 4).0[1]);
}

#[test]
fn pipes_and_unix_sockets_keep_their_data_in_the_message_and_stream_nothing() {
    for kind in [ChanKind::Pipe, ChanKind::UnixStream] {
        for wl in [queued_then_drained(kind), request_response(kind, 0)] {
            assert_eq!(busy(&wl, 1, 1).0, busy(&wl, 64, 64).0, "{kind:?}");
        }
    }
}
