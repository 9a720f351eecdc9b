//! netperf, UnixBench context1/pipe and ipistorm: task graphs, metrics and output formats.

use crate::common::*;
use wakesim_workloads::bench::{ipistorm, netperf, unixbench};
use wakesim_workloads::{ChanKind, Op};

/// The result-line logic of mmtests' netperf extractor
/// (gormanm/mmtests shellpack_src/src/netperf/extract-report.pl): skip lines with letters or
/// blank; non-UDP_STREAM: a line with more than 4 fields gives send_tput = last field;
/// UDP_STREAM: 6 fields = send, 4 fields = recv.
fn mmtests_netperf(out: &str, udp_stream: bool) -> (f64, f64) {
    let (mut send, mut recv) = (0.0, 0.0);
    for line in out.lines() {
        let l = line.trim_start();
        if l.contains("Confidence intervals: Throughput") || l.chars().any(|c| c.is_ascii_alphabetic()) || l.is_empty() {
            continue;
        }
        let e: Vec<&str> = l.split_whitespace().collect();
        let last: f64 = e.last().unwrap().parse().unwrap();
        if !udp_stream {
            if e.len() > 4 {
                send = last;
            }
        } else if e.len() == 6 {
            send = last;
        } else if e.len() == 4 {
            recv = last;
        }
    }
    (send, recv)
}

#[test]
fn netperf_rr_is_a_ping_pong_between_two_processes() {
    let w = build("test-smt2", "netperf -t TCP_RR -l -1000 -- -r 64,128");
    assert_eq!(w.tasks.len(), 2);
    assert_ne!(w.tasks[0].mm, w.tasks[1].mm);
    assert!(w.channels.iter().all(|c| c.kind == ChanKind::TcpLoopback));
    let c = totals(&w);
    assert_eq!(c.sent[0], (1000, 64_000));
    assert_eq!(c.sent[1], (1000, 128_000));
    assert_eq!(c.received, c.sent);
    assert_eq!(w.duration, None, "-l -N runs N transactions");
    let w = build("test-smt2", "netperf -t UDP_RR");
    assert!(w.channels.iter().all(|c| c.kind == ChanKind::UdpLoopback));
    assert_eq!(w.duration, Some(10_000_000_000));
}

#[test]
fn netperf_outputs_parse_as_mmtests_parses_them() {
    let (w, r, out) = run_cmd("test-smt2", "netperf -4 -H 127.0.0.1 -t TCP_RR -l 1 -f x", 100.0);
    assert!(out.starts_with("MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 127.0.0.1 () port 0 AF_INET : first burst 0\n"), "{out}");
    let (send, _) = mmtests_netperf(&out, false);
    let m = w.reporter.metric(&r.outcome);
    assert!((send - m.value).abs() < 0.01, "{send} vs {}", m.value);
    // Transactions counted in batches of 16: the rate is batches*16 / 1 s.
    let batches = r.outcome.marks.iter().filter(|x| x.mark == netperf::MARK_BATCH).count() as f64;
    let start = r.outcome.marks.iter().find(|x| x.mark == netperf::MARK_START).unwrap().time;
    let secs = (r.outcome.end_time - start) as f64 / 1e9;
    assert!((m.value - batches * 16.0 / secs).abs() < 1e-6, "{} vs {}", m.value, batches * 16.0);
    assert!(out.contains("\n16384  131072 1        1       1.00     "), "{out}");

    // mmtests passes -f k for RR: the rate becomes a bidirectional bit rate.
    let (w, r, out) = run_cmd("test-smt2", "netperf -t UDP_RR -l 1 -f k -- -r 1,1", 100.0);
    let trans = w.reporter.metric(&r.outcome).value / (2.0 * 8.0 / 1000.0);
    assert!(out.contains("10^3bits/sec"), "{out}");
    assert!(trans > 1000.0, "{trans}");

    let (w, r, out) = run_cmd("test-smt2", "netperf -t TCP_STREAM -l 1 -- -m 8192", 100.0);
    assert!(out.contains("\n131072  16384   8192    1.00  "), "{out}");
    let (send, _) = mmtests_netperf(&out, false);
    assert!((send - w.reporter.metric(&r.outcome).value).abs() < 0.01);

    let (_, _, out) = run_cmd("test-smt2", "netperf -t UDP_STREAM -l 1", 100.0);
    let (send, recv) = mmtests_netperf(&out, true);
    assert!(send > 0.0 && recv > 0.0, "{out}");
    assert!(out.contains("212992   65507   1.00"), "{out}");
}

#[test]
fn netperf_copies_print_one_block_each_and_sum() {
    let w = build_copies("test-2x4", "netperf -t TCP_RR -l 1", 3);
    assert_eq!(w.tasks.len(), 6);
    assert_eq!(w.channels.len(), 6);
    let r = run("test-2x4", &w, 100.0);
    let out = w.reporter.render(&r.outcome);
    assert_eq!(out.matches("MIGRATED TCP REQUEST/RESPONSE TEST").count(), 3);
    let per: Vec<f64> = out.lines().filter(|l| l.split_whitespace().count() == 6 && !l.chars().any(|c| c.is_ascii_alphabetic())).map(|l| l.split_whitespace().last().unwrap().parse().unwrap()).collect();
    assert_eq!(per.len(), 3);
    let total = w.reporter.metric(&r.outcome).value;
    assert!((total - per.iter().sum::<f64>()).abs() < 0.1, "{total} vs {per:?}");
}

#[test]
fn netperf_bad_flags() {
    for (cmd, word) in [
        ("netperf -t SCTP_RR", "SCTP_RR"),
        ("netperf -H 10.0.0.1", "10.0.0.1"),
        ("netperf -c", "-c"),
        ("netperf -i 3,3", "-i"),
        ("netperf -l 0", "-l"),
        ("netperf -t UDP_STREAM -- -m 70000", "65507"),
        ("netperf -- -r x,1", "-r"),
        ("netperf -f q", "-f"),
    ] {
        let e = err("test-smt2", cmd);
        assert!(e.contains(word), "{cmd}: {e}");
    }
}

#[test]
fn context1_and_pipe_count_round_trips_and_print_count_lines() {
    let w = build("test-smt2", "context1 10");
    assert_eq!(w.tasks.len(), 2);
    assert_eq!(w.duration, Some(10_000_000_000));
    // One round trip: parent write p1 + read p2, child read p1 + write p2 (8-byte counter).
    let p = &w.tasks[0].program;
    assert!(p.contains(&Op::Send { chan: 0, bytes: 8 }) && p.contains(&Op::Recv { chan: 1, bytes: 8 }));
    let (w, r, out) = run_cmd("test-smt2", "context1 1", 100.0);
    let line = out.lines().next().unwrap();
    // mmtests unixbenchd: grep COUNT | cut -d\| -f2.
    let f: Vec<&str> = line.split('|').collect();
    assert_eq!((f[0], f[2], f[3]), ("COUNT", "1", "lps"), "{line}");
    let count: u64 = f[1].parse().unwrap();
    assert_eq!(count % unixbench::BATCH, 0);
    // Every round trip is two sync pipe wakeups (the other side is always blocked).
    assert!(r.stats.wake.wakeups_sync as f64 >= 1.9 * count as f64, "{} vs {count}", r.stats.wake.wakeups_sync);
    assert_eq!(w.reporter.metric(&r.outcome).value, count as f64);

    let (_, r, out) = run_cmd("test-smt2", "pipe 1", 100.0);
    assert!(out.starts_with("COUNT|") && out.ends_with("|1|lps\n"));
    assert_eq!(r.stats.wake.wakeups, 0, "pipe never blocks");
}

#[test]
fn context1_copies_sum_like_unixbench_run() {
    let w = build_copies("test-2x4", "context1 1", 2);
    let r = run("test-2x4", &w, 100.0);
    let out = w.reporter.render(&r.outcome);
    let counts: Vec<u64> = out.lines().filter_map(|l| l.strip_prefix("COUNT|")).map(|l| l.split('|').next().unwrap().parse().unwrap()).collect();
    assert_eq!(counts.len(), 2);
    let summary = out.lines().find(|l| l.starts_with("Pipe-based Context Switching")).unwrap();
    // Run's logResults format: "%-40s %12.1f %-5s (%.1f s, %d samples)".
    let score: f64 = summary[40..53].trim().parse().unwrap();
    assert_eq!(score, (counts[0] + counts[1]) as f64);
    assert!(summary.ends_with("lps   (1.0 s, 1 samples)"), "{summary}");
    for bad in ["context1", "context1 0", "context1 x", "pipe 1 2"] {
        err("test-smt2", bad);
    }
}

#[test]
fn ipistorm_pins_one_kthread_per_cpu_and_targets_cpu_plus_offset_mod_n() {
    let w = build("test-2x4", "ipistorm numipi=100 single=1 offset=8 cpulist=1,3 wait=1");
    assert_eq!(w.tasks.len(), 2);
    for (t, (cpu, target)) in w.tasks.iter().zip([(1u32, 9u32), (3, 11)]) {
        assert_eq!(t.allowed.as_ref().unwrap().iter().collect::<Vec<_>>(), vec![cpu as usize]);
        let c = wakesim_workloads::op_counts(&t.program);
        assert_eq!(c.call_funcs, 100);
        assert!(t.program.contains(&Op::CallFunc { cpu: target, wait: true }));
    }
    let p = ipistorm::parse(&args("single=1 offset=3 mask=0x3")).unwrap();
    // base = cpu & ~mask, off = (cpu + offset) & mask.
    let (cpu, off, mask) = (5u64, 3u64, 3u64);
    assert_eq!(ipistorm::target(&p, cpu, 16), (cpu & !mask) + ((cpu + off) & mask));
    assert_eq!(build("test-smt2", "insmod ipistorm.ko single=1 numipi=5").tasks.len(), 8);
    let w = build("test-smt2", "ipistorm single=1 timeout=2 wait=0");
    assert_eq!(w.duration, Some(2_000_000_000));

    let (_, r, out) = run_cmd("test-2x4", "ipistorm numipi=1000 single=1 offset=8 cpulist=0 wait=1", 100.0);
    assert!(out.starts_with("ipistorm: 0 -> 8\nElapsed: "), "{out}");
    let secs: f64 = out.lines().nth(1).unwrap()["Elapsed: ".len()..].trim_end_matches(" s").parse().unwrap();
    assert!(secs > 0.0 && secs < 0.1);
    assert!(out.contains("(1000 IPIs)"), "{out}");
    // The target idles between calls: each call is an IPI or a polling-flag kick.
    assert!(r.stats.wake.ipis_call_function + r.stats.wake.poll_wakes >= 900, "{:?}", (r.stats.wake.ipis_call_function, r.stats.wake.poll_wakes));

    for (cmd, word) in [("ipistorm single=1 numipi=x", "numipi"), ("ipistorm single=1 cpulist=3-1", "cpulist"), ("ipistorm single=1 bogus=1", "bogus"), ("ipistorm single=1 wait", "wait")] {
        let e = err("test-smt2", cmd);
        assert!(e.contains(word), "{cmd}: {e}");
    }
    // Targets depend on the CPU count: without a machine, a clear error.
    let e = wakesim_workloads::from_command_line(&args("ipistorm single=1")).unwrap_err().to_string();
    assert!(e.contains("CPU count"), "{e}");
}

#[test]
fn ipistorm_cpus_beyond_the_machine_are_rejected_by_the_model() {
    let w = build("test-smt2", "ipistorm single=1 numipi=1 cpulist=9");
    let m = wakesim_machine::preset("test-smt2").unwrap();
    let costs = wakesim_costs::profile_for(&m.cost_profile).unwrap();
    let cfg = wakesim_model::Config { machine: m, costs, features: Default::default(), seed: 1, duration_cap: 1_000_000_000, noise: wakesim_model::NoiseProfile::none(), governor: wakesim_model::GovernorKind::Ewma, task_groups: wakesim_model::TaskGroups::Root };
    let e = wakesim_model::Sim::new(cfg, &w).err().expect("rejected");
    assert!(e.contains("CPU 9"), "{e}");
}

#[test]
fn udp_stream_sends_datagrams_that_a_full_buffer_drops_and_tcp_stream_blocks() {
    let udp = build("test-smt2", "netperf -t UDP_STREAM");
    assert!(udp.tasks[0].program.iter().any(|o| matches!(o, Op::SendDgram { .. })));
    assert!(!udp.tasks[0].program.iter().any(|o| matches!(o, Op::Send { .. })));
    let tcp = build("test-smt2", "netperf -t TCP_STREAM");
    assert!(!tcp.tasks[0].program.iter().any(|o| matches!(o, Op::SendDgram { .. })));
    // A byte-count run blocks instead, so that the receiver's count is reached.
    let n = build("test-smt2", "netperf -t UDP_STREAM -l -1000000");
    assert!(!n.tasks[0].program.iter().any(|o| matches!(o, Op::SendDgram { .. })));
}

#[test]
fn ipistorm_single_0_calls_every_other_cpu_and_counts_each_ipi() {
    let (w, r, out) = run_cmd("test-smt2", "ipistorm numipi=50 single=0 cpulist=1 wait=1", 10.0);
    assert!(w.tasks[0].program.contains(&Op::CallFuncAll { wait: true }));
    assert!(!r.outcome.capped);
    assert!(out.starts_with("ipistorm: 1 -> all\n"), "{out}");
    // 50 calls, each to the 7 other CPUs of the 8-CPU machine.
    assert!(out.contains("(350 IPIs)"), "{out}");
    let w = &r.stats.wake;
    assert!((350..=352).contains(&(w.ipis_call_function + w.poll_wakes)), "{} + {}", w.ipis_call_function, w.poll_wakes);
}

#[test]
fn a_udp_receive_buffer_holds_as_many_datagrams_as_their_truesize_allows() {
    use wakesim_workloads::defaults::{udp_rcvbuf_capacity, UDP_CAPACITY};
    // Counted on the development VM (Linux 6.18): loopback datagrams of each size sent into an
    // unread socket with the default 212992-byte receive buffer until they were dropped.
    for (payload, queued) in [(1, 256), (64, 256), (100, 256), (1024, 92), (1400, 92), (4096, 25), (16_384, 12), (65_507, 3)] {
        assert_eq!(udp_rcvbuf_capacity(payload, UDP_CAPACITY), queued * payload, "{payload}-byte datagrams");
    }
    // netperf UDP_STREAM's receiver takes 256 of its 64-byte datagrams, not 212992 / 64.
    let w = build("test-smt2", "netperf -t UDP_STREAM -l 1 -- -m 64");
    assert_eq!(w.channels[0].capacity, 256 * 64);
    // TCP keeps the buffer's size in bytes.
    let w = build("test-smt2", "netperf -t TCP_STREAM -l 1 -- -m 64");
    assert_eq!(w.channels[0].capacity, 131_072);
}
