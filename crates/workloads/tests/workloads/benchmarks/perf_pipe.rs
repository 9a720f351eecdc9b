//! `perf bench sched pipe`: the task graph, and output byte-for-byte in perf's format.

use wakesim_workloads::bench::perf_pipe::{self, PipeOptions, PipeVariant};
use wakesim_workloads::{
    from_command_line, op_counts, ChanKind, MarkRecord, Op, OpCounts, Outcome, Workload,
};

fn cmd(s: &str) -> Workload {
    let args: Vec<String> = s.split_whitespace().map(String::from).collect();
    from_command_line(&args).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn totals(w: &Workload) -> OpCounts {
    let mut c = OpCounts::default();
    for t in &w.tasks {
        c.add(&op_counts(&t.program));
    }
    c
}

/// An outcome whose measured span (start mark → last end mark) is `ns`.
fn outcome(ns: u64) -> Outcome {
    let rec = |mark, task, time| MarkRecord { mark, task, time };
    Outcome {
        end_time: ns + 1_000,
        capped: false,
        marks: vec![rec(0, 1, 0), rec(1, 0, ns - 3_000), rec(1, 1, ns)],
        task_exit: vec![Some(ns - 2_000), Some(ns + 500)],
    }
}

#[test]
fn pipe_graph_is_two_tasks_two_pipes_and_loops_times_two_sends_and_recvs() {
    let w = cmd("perf bench sched pipe -l 100000");
    assert_eq!(w.tasks.len(), 2);
    assert_eq!(w.channels.len(), 2);
    assert!(w
        .channels
        .iter()
        .all(|c| c.kind == ChanKind::Pipe && c.capacity == 65536));
    let c = totals(&w);
    assert_eq!(c.sends(), 200_000);
    assert_eq!(c.recvs(), 200_000);
    // 4-byte messages, every byte sent on each pipe is read.
    assert_eq!(c.sent, vec![(100_000, 400_000), (100_000, 400_000)]);
    assert_eq!(c.received, c.sent);
}

#[test]
fn default_loop_count_is_perfs_one_million() {
    let c = totals(&cmd("perf bench sched pipe"));
    assert_eq!(c.sends(), 2_000_000);
    assert_eq!(c.recvs(), 2_000_000);
}

#[test]
fn workers_ping_pong_in_perfs_order() {
    let w = cmd("perf bench sched pipe -l 5");
    // Worker 0 reads pipe_1 then writes pipe_2; worker 1 writes pipe_1 then reads pipe_2.
    let body = |p: &Vec<Op>| {
        p.iter()
            .filter(|o| matches!(o, Op::Send { .. } | Op::Recv { .. }))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        body(&w.tasks[0].program),
        [
            Op::Recv { chan: 0, bytes: 4 },
            Op::Send { chan: 1, bytes: 4 }
        ]
    );
    assert_eq!(
        body(&w.tasks[1].program),
        [
            Op::Send { chan: 0, bytes: 4 },
            Op::Recv { chan: 1, bytes: 4 }
        ]
    );
    assert_eq!(w.tasks[1].program[0], Op::Mark(perf_pipe::MARK_START));
    for t in &w.tasks {
        let p = &t.program;
        assert_eq!(p[p.len() - 2], Op::Mark(perf_pipe::MARK_END));
        assert_eq!(p[p.len() - 1], Op::Exit);
        for (i, op) in p.iter().enumerate() {
            if let Op::LoopStart { end, count } = op {
                assert_eq!(*count, 5);
                assert_eq!(p[*end as usize], Op::LoopEnd { start: i as u32 });
            }
        }
    }
}

#[test]
fn write_first_variant_has_both_workers_write_then_read() {
    let w = perf_pipe::workload(&PipeOptions {
        loops: 3,
        variant: PipeVariant::WriteFirst,
        ..Default::default()
    });
    let first_io = |p: &Vec<Op>| {
        p.iter()
            .find(|o| matches!(o, Op::Send { .. } | Op::Recv { .. }))
            .cloned()
    };
    assert_eq!(
        first_io(&w.tasks[0].program),
        Some(Op::Send { chan: 1, bytes: 4 })
    );
    assert_eq!(
        first_io(&w.tasks[1].program),
        Some(Op::Send { chan: 0, bytes: 4 })
    );
    let c = totals(&w);
    assert_eq!((c.sends(), c.recvs()), (6, 6));
}

#[test]
fn threads_share_one_mm_and_processes_do_not() {
    let p = cmd("perf bench sched pipe");
    assert_ne!(p.tasks[0].mm, p.tasks[1].mm);
    let t = cmd("perf bench sched pipe -T");
    assert_eq!(t.tasks[0].mm, t.tasks[1].mm);
    let t = cmd("perf bench sched pipe --threaded");
    assert_eq!(t.tasks[0].mm, t.tasks[1].mm);
}

#[test]
fn output_matches_perf_byte_for_byte() {
    let w = cmd("perf bench sched pipe");
    let text = w.reporter.render(&outcome(5_211_990_700));
    assert_eq!(
        text,
        "# Running 'sched/pipe' benchmark:\n\
         # Executed 1000000 pipe operations between two processes\n\
         \n     Total time: 5.211 [sec]\n\
         \n       5.211990 usecs/op\n\
         \x20        191865 ops/sec\n"
    );
    let t = cmd("perf bench sched pipe -T -l 1000");
    assert!(t
        .reporter
        .render(&outcome(5_000_000))
        .contains("# Executed 1000 pipe operations between two threads\n"));
}

/// The patterns mmtests' perf-pipe parser (and most scripts) use on this output.
#[test]
fn output_parses_with_mmtests_style_patterns() {
    let w = cmd("perf bench sched pipe -l 100000");
    let text = w.reporter.render(&outcome(912_345_678));
    // ^\s+([0-9.]+) usecs/op
    let usecs: Vec<f64> = text
        .lines()
        .filter_map(|l| {
            let t = l.trim_start();
            (t.len() < l.len()).then_some(())?;
            let (num, rest) = t.split_once(' ')?;
            (rest == "usecs/op" && num.chars().all(|c| c.is_ascii_digit() || c == '.'))
                .then(|| num.parse().ok())?
        })
        .collect();
    assert_eq!(usecs, vec![9.12345]);
    // Total time: ([0-9.]+) \[sec\]
    let total = text
        .lines()
        .find_map(|l| {
            l.split_once("Total time: ")?
                .1
                .strip_suffix(" [sec]")
                .map(str::to_string)
        })
        .unwrap();
    assert_eq!(total, "0.912");
    let m = w.reporter.metric(&outcome(912_345_678));
    assert_eq!((m.name.as_str(), m.higher_is_better), ("usecs/op", false));
    assert!((m.value - 9.12345).abs() < 1e-9);
}

#[test]
fn simple_format_prints_only_the_total() {
    let w = cmd("perf bench -f simple sched pipe -l 10");
    assert_eq!(w.reporter.render(&outcome(5_211_990_700)), "5.211\n");
    let w = cmd("perf bench --format=simple sched pipe");
    assert_eq!(w.reporter.render(&outcome(1_000_000_000)), "1.000\n");
}

#[test]
fn span_falls_back_to_exits_without_end_marks_and_to_the_cap() {
    let w = cmd("perf bench sched pipe -l 1000");
    let out = Outcome {
        end_time: 9_000_000,
        capped: false,
        marks: vec![],
        task_exit: vec![Some(4_000_000), Some(5_000_000)],
    };
    assert!(w.reporter.render(&out).contains(" 5.000000 usecs/op\n"));
    let capped = Outcome {
        end_time: 9_000_000,
        capped: true,
        marks: vec![],
        task_exit: vec![None, None],
    };
    let text = w.reporter.render(&capped);
    assert!(
        text.contains(" 9.000000 usecs/op\n") && text.contains("duration cap"),
        "{text}"
    );
}

#[test]
fn cgroups_and_write_size_options_shape_the_graph() {
    let w = cmd("perf bench sched pipe -G a,b -s 5000");
    assert_eq!((w.tasks[0].group, w.tasks[1].group), (1, 2));
    assert!(
        w.channels.iter().all(|c| c.capacity == 8192),
        "F_SETPIPE_SZ rounds up to a power of two"
    );
    assert!(matches!(
        w.tasks[0].program[1],
        Op::Recv { bytes: 5000, .. }
    ));
    let w = cmd("perf bench sched pipe --cgroups=x,x");
    assert_eq!((w.tasks[0].group, w.tasks[1].group), (1, 1));
    let w = cmd("perf bench sched pipe");
    assert_eq!((w.tasks[0].group, w.tasks[1].group), (0, 0));
}
