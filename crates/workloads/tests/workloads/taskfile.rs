//! Task-file parsing: every op, nested loops, replication, and errors that name the line.

use wakesim_workloads::{
    from_toml_str, op_counts, ChanKind, Dur, MarkRecord, Op, Outcome, WorkloadError,
};

fn err(text: &str) -> String {
    match from_toml_str(text, "t.toml") {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn assert_err(text: &str, line: usize, needle: &str) {
    let e = err(text);
    let prefix = format!("t.toml:{line}: ");
    assert!(e.starts_with(&prefix), "expected line {line}, got: {e}");
    assert!(e.contains(needle), "expected '{needle}' in: {e}");
}

#[test]
fn every_op_parses_to_the_right_instruction() {
    let w = from_toml_str(
        r#"
futexes = ["f"]
[[channel]]
name = "c"
[[task]]
name = "a"
program = [
  "compute 10us",
  "compute exp(50us)",
  "compute uniform(10us,20us)",
  "compute normal(1ms,100us)",
  "compute 1.5ms",
  "compute 2s",
  "compute 7ns",
  "send c 100",
  "recv c 100",
  "wait f",
  "wake f 3",
  "wake f",
  "sleep 1ms",
  "mark 7",
  "exit",
]
"#,
        "t.toml",
    )
    .unwrap();
    let p = &w.tasks[0].program;
    assert_eq!(
        p,
        &vec![
            Op::Compute(Dur::Fixed(10_000)),
            Op::Compute(Dur::Exp { mean: 50_000 }),
            Op::Compute(Dur::Uniform {
                lo: 10_000,
                hi: 20_000
            }),
            Op::Compute(Dur::Normal {
                mean: 1_000_000,
                sd: 100_000
            }),
            Op::Compute(Dur::Fixed(1_500_000)),
            Op::Compute(Dur::Fixed(2_000_000_000)),
            Op::Compute(Dur::Fixed(7)),
            Op::Send {
                chan: 0,
                bytes: 100
            },
            Op::Recv {
                chan: 0,
                bytes: 100
            },
            Op::FutexWait { futex: 0 },
            Op::FutexWake { futex: 0, n: 3 },
            Op::FutexWake { futex: 0, n: 1 },
            Op::Sleep(Dur::Fixed(1_000_000)),
            Op::Mark(7),
            Op::Exit,
        ]
    );
    assert_eq!(w.futexes, 1);
    assert_eq!(w.channels[0].kind, ChanKind::Pipe);
}

#[test]
fn nested_loops_get_matching_start_and_end_indices() {
    let w = from_toml_str(
        r#"
[[task]]
name = "a"
program = """
loop 3 {
  compute 1us
  loop 4 {
    compute 2us
    loop 5{
      compute 3us
    }
  }
  mark 1
}
"""
"#,
        "t.toml",
    )
    .unwrap();
    let p = &w.tasks[0].program;
    assert_eq!(
        p,
        &vec![
            Op::LoopStart { count: 3, end: 9 },
            Op::Compute(Dur::Fixed(1_000)),
            Op::LoopStart { count: 4, end: 7 },
            Op::Compute(Dur::Fixed(2_000)),
            Op::LoopStart { count: 5, end: 6 },
            Op::Compute(Dur::Fixed(3_000)),
            Op::LoopEnd { start: 4 },
            Op::LoopEnd { start: 2 },
            Op::Mark(1),
            Op::LoopEnd { start: 0 },
            Op::Exit,
        ]
    );
    // Every LoopStart/LoopEnd pair points at each other.
    for (i, op) in p.iter().enumerate() {
        if let Op::LoopStart { end, .. } = op {
            assert_eq!(p[*end as usize], Op::LoopEnd { start: i as u32 });
        }
    }
    let c = op_counts(p);
    assert_eq!(c.computes, 3 + 3 * 4 + 3 * 4 * 5);
    assert_eq!(c.marks, 3);
}

#[test]
fn exit_is_appended_only_when_missing() {
    let w = from_toml_str(
        "[[task]]\nname = \"a\"\nprogram = [\"compute 1us\"]\n",
        "t.toml",
    )
    .unwrap();
    assert_eq!(
        w.tasks[0].program,
        vec![Op::Compute(Dur::Fixed(1000)), Op::Exit]
    );
}

#[test]
fn replicas_get_suffixed_names_and_their_own_channels() {
    let w = from_toml_str(
        r#"
[[channel]]
name = "pipe{i}"
count = 3

[[task]]
name = "ring"
count = 3
cpus = "{i}"
program = ["loop 10 {", "send pipe{i+1} 4", "recv pipe{i} 4", "}"]
"#,
        "t.toml",
    )
    .unwrap();
    let names: Vec<_> = w.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["ring.0", "ring.1", "ring.2"]);
    let chans: Vec<_> = w.channels.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(chans, ["pipe0", "pipe1", "pipe2"]);
    // Replica 2 sends to pipe0 (wrap-around) and reads pipe2.
    assert_eq!(w.tasks[2].program[1], Op::Send { chan: 0, bytes: 4 });
    assert_eq!(w.tasks[2].program[2], Op::Recv { chan: 2, bytes: 4 });
    assert_eq!(
        w.tasks[1].allowed.as_ref().unwrap().iter().collect::<Vec<_>>(),
        vec![1]
    );
    // Separate processes by default.
    assert_ne!(w.tasks[0].mm, w.tasks[1].mm);
}

#[test]
fn braces_in_task_names_replace_the_suffix() {
    let w = from_toml_str(
        "[[task]]\nname = \"w{i}\"\ncount = 2\nprogram = [\"compute 1us\"]\n",
        "t.toml",
    )
    .unwrap();
    assert_eq!(w.tasks[0].name, "w0");
    assert_eq!(w.tasks[1].name, "w1");
}

#[test]
fn default_capacities_follow_kernel_defaults() {
    let w = from_toml_str(
        r#"
[[channel]]
name = "p"
[[channel]]
name = "u"
kind = "unix"
[[channel]]
name = "t"
kind = "tcp"
[[channel]]
name = "d"
kind = "udp"
[[channel]]
name = "x"
capacity = 100
[[task]]
name = "a"
program = ["exit"]
"#,
        "t.toml",
    )
    .unwrap();
    let caps: Vec<_> = w.channels.iter().map(|c| (c.kind, c.capacity)).collect();
    assert_eq!(
        caps,
        [
            (ChanKind::Pipe, 65536),
            (ChanKind::UnixStream, 212992),
            (ChanKind::TcpLoopback, 131072),
            (ChanKind::UdpLoopback, 212992),
            (ChanKind::Pipe, 100)
        ]
    );
}

#[test]
fn shared_mm_and_groups_are_numbered_by_first_appearance() {
    let w = from_toml_str(
        r#"
[[task]]
name = "a"
count = 2
mm = "srv"
group = "g1"
nice = -5
program = ["exit"]
[[task]]
name = "b"
group = "root"
program = ["exit"]
[[task]]
name = "c"
mm = "srv"
group = "g2"
program = ["exit"]
"#,
        "t.toml",
    )
    .unwrap();
    let t = &w.tasks;
    assert_eq!(t[0].mm, t[1].mm);
    assert_eq!(t[0].mm, t[3].mm);
    assert_ne!(t[2].mm, t[0].mm);
    assert_eq!(
        (t[0].group, t[1].group, t[2].group, t[3].group),
        (1, 1, 0, 2)
    );
    assert_eq!(t[0].nice, -5);
}

#[test]
fn anonymous_futexes_are_numbered() {
    let w = from_toml_str(
        "futexes = 2\n[[task]]\nname = \"a\"\nprogram = [\"wake 1\", \"wait 1\"]\n",
        "t.toml",
    )
    .unwrap();
    assert_eq!(w.futexes, 2);
    assert_eq!(w.tasks[0].program[0], Op::FutexWake { futex: 1, n: 1 });
}

#[test]
fn unknown_op_names_its_line() {
    assert_err(
        "[[task]]\nname = \"a\"\nprogram = [\n  \"compute 1us\",\n  \"jump 3\",\n]\n",
        5,
        "unknown op 'jump'",
    );
}

#[test]
fn errors_in_multiline_programs_name_the_file_line() {
    let text =
        "[[task]]\nname = \"a\"\nprogram = \"\"\"\ncompute 1us\n\n# comment\ncompute 5xs\n\"\"\"\n";
    assert_err(text, 7, "bad duration unit 'xs'");
}

#[test]
fn unknown_channel_is_reported_with_declared_names() {
    assert_err(
        "[[channel]]\nname = \"a\"\n[[task]]\nname = \"t\"\nprogram = [\"send b 4\"]\n",
        5,
        "unknown channel 'b'; declared: a",
    );
}

#[test]
fn unbalanced_loops_are_reported_where_they_open_or_close() {
    assert_err(
        "[[task]]\nname = \"t\"\nprogram = [\n\"loop 2 {\",\n\"compute 1us\",\n]\n",
        4,
        "never closed",
    );
    assert_err(
        "[[task]]\nname = \"t\"\nprogram = [\n\"compute 1us\",\n\"}\",\n]\n",
        5,
        "without a matching 'loop'",
    );
}

#[test]
fn the_three_futex_wakes_parse_to_their_own_ops() {
    let w = from_toml_str(
        "futexes = [\"f\"]\n[[task]]\nname = \"a\"\nprogram = [\"wake f 2\", \"wake_waiters f 3\", \"wake_waiters f\", \"wake_all_sync f\"]\n",
        "t.toml",
    )
    .unwrap();
    assert_eq!(
        w.tasks[0].program[..4],
        [
            Op::FutexWake { futex: 0, n: 2 },
            Op::FutexWakeWaiters { futex: 0, n: 3 },
            Op::FutexWakeWaiters { futex: 0, n: 1 },
            Op::FutexWakeAllSync { futex: 0 },
        ]
    );
    let t = |op: &str| format!("futexes = 1\n[[task]]\nname = \"t\"\nprogram = [\"{op}\"]\n");
    assert_err(&t("wake_all_sync 0 2"), 4, "wake_all_sync");
    assert_err(&t("wake_waiters 0 0"), 4, "wake count must be positive");
    assert_err(&t("wake_waiters"), 4, "wake_waiters");
}

#[test]
fn sendto_is_a_datagram_send() {
    let w = from_toml_str("[[channel]]\nname = \"c\"\nkind = \"udp\"\n[[task]]\nname = \"a\"\nprogram = [\"sendto c 512\"]\n", "t.toml").unwrap();
    assert_eq!(w.tasks[0].program[0], Op::SendDgram { chan: 0, bytes: 512 });
}

#[test]
fn call_all_is_smp_call_function_to_every_other_cpu() {
    let w = from_toml_str("[[task]]\nname = \"a\"\nprogram = [\"call all\", \"call all nowait\", \"call 3\"]\n", "t.toml").unwrap();
    assert_eq!(w.tasks[0].program[..3], [Op::CallFuncAll { wait: true }, Op::CallFuncAll { wait: false }, Op::CallFunc { cpu: 3, wait: true }]);
}

#[test]
fn cpu_lock_names_a_per_cpu_lock_array_created_by_first_use() {
    let w = from_toml_str(
        "[[task]]\nname = \"w{i}\"\ncount = 2\nprogram = [\"cpu_lock a\", \"compute 1ms\", \"cpu_unlock a\", \"cpu_lock own{i}\", \"cpu_unlock own{i}\"]\n",
        "t.toml",
    )
    .unwrap();
    let p = |t: usize| w.tasks[t].program[..5].to_vec();
    let (lock, unlock) = (|set| Op::CpuSpinLock { set }, |set| Op::CpuSpinUnlock { set });
    assert_eq!(p(0), [lock(0), Op::Compute(Dur::Fixed(1_000_000)), unlock(0), lock(1), unlock(1)]);
    assert_eq!(p(1), [lock(0), Op::Compute(Dur::Fixed(1_000_000)), unlock(0), lock(2), unlock(2)], "a is shared, own{{i}} is per task");
    assert_eq!(op_counts(&w.tasks[0].program).cpu_locks, 4);
    let t = |op: &str| format!("[[task]]\nname = \"a\"\nprogram = [\"compute 1us\", \"{op}\"]\n");
    assert_err(&t("cpu_lock"), 3, "a lock-array name");
    assert_err(&t("cpu_unlock a b"), 3, "a lock-array name");
}

#[test]
fn zero_and_negative_values_are_rejected() {
    let t = |op: &str| {
        format!("futexes = 1\n[[channel]]\nname = \"c\"\n[[task]]\nname = \"t\"\nprogram = [\"{op}\"]\n")
    };
    assert_err(&t("compute 0us"), 6, "must be positive");
    assert_err(&t("compute -3us"), 6, "negative");
    assert_err(&t("loop 0 {"), 6, "loop count must be positive");
    assert_err(&t("send c 0"), 6, "byte count must be positive");
    assert_err(&t("wake 0 0"), 6, "wake count must be positive");
    assert_err(&t("compute 10"), 6, "missing unit");
    assert_err(&t("compute uniform(20us,10us)"), 6, "reversed");
    assert_err(&t("compute gamma(1us)"), 6, "unknown distribution");
    assert_err(
        "[[task]]\nname = \"t\"\ncount = 0\nprogram = [\"exit\"]\n",
        3,
        "'count' must be in 1..",
    );
    assert_err(
        "[[channel]]\nname = \"c\"\ncapacity = -1\n[[task]]\nname = \"t\"\nprogram = [\"exit\"]\n",
        3,
        "'capacity' must be a positive",
    );
    assert_err(
        "[[task]]\nname = \"t\"\nnice = 20\nprogram = [\"exit\"]\n",
        3,
        "'nice' must be in -20..=19",
    );
}

#[test]
fn unknown_keys_are_denied_at_their_line() {
    assert_err(
        "nmae = \"x\"\n[[task]]\nname = \"t\"\nprogram = [\"exit\"]\n",
        1,
        "unknown key 'nmae' in the task file",
    );
    assert_err(
        "[[task]]\nname = \"t\"\n\ncpu = \"0\"\nprogram = [\"exit\"]\n",
        4,
        "unknown key 'cpu' in [[task]]",
    );
    assert_err(
        "[[channel]]\nname = \"c\"\nsize = 4\n[[task]]\nname = \"t\"\nprogram = [\"exit\"]\n",
        3,
        "unknown key 'size' in [[channel]]",
    );
    assert_err(
        "[report]\nstart = 0\n[[task]]\nname = \"t\"\nprogram = [\"exit\"]\n",
        2,
        "unknown key 'start' in [report]",
    );
}

#[test]
fn type_and_syntax_errors_name_their_line() {
    assert_err(
        "[[task]]\nname = \"t\"\nnice = \"high\"\nprogram = [\"exit\"]\n",
        3,
        "'nice' must be an integer",
    );
    assert_err(
        "[[task]]\nname = \"t\"\nprogram = [\"exit\"\n\n",
        3,
        "TOML syntax",
    );
    assert_err(
        "[[task]]\nname = \"t\"\nprogram = [1]\n",
        3,
        "program entries must be strings",
    );
    assert_err("[[channel]]\nname = \"c\"\nkind = \"fifo\"\n[[task]]\nname = \"t\"\nprogram = [\"exit\"]\n", 3, "unknown channel kind 'fifo'");
}

#[test]
fn missing_required_keys_point_at_the_table() {
    assert_err(
        "name = \"w\"\n\n[[task]]\nname = \"t\"\n",
        3,
        "needs 'program'",
    );
    assert_err(
        "name = \"w\"\n\n[[task]]\nprogram = [\"exit\"]\n",
        3,
        "needs 'name'",
    );
    let e = err("name = \"w\"\n");
    assert!(e.contains("declares no [[task]]"), "{e}");
}

#[test]
fn replicated_channel_without_placeholder_is_rejected() {
    assert_err(
        "[[channel]]\nname = \"c\"\ncount = 2\n[[task]]\nname = \"t\"\nprogram = [\"exit\"]\n",
        2,
        "no {i}",
    );
}

#[test]
fn duplicate_names_are_rejected() {
    assert_err("[[task]]\nname = \"t\"\nprogram = [\"exit\"]\n[[task]]\nname = \"t\"\nprogram = [\"exit\"]\n", 5, "used twice (first at line 2)");
    assert_err("[[channel]]\nname = \"c\"\n[[channel]]\nname = \"c\"\n[[task]]\nname = \"t\"\nprogram = [\"exit\"]\n", 4, "declared twice");
}

#[test]
fn channels_that_cannot_drain_are_rejected() {
    // One reader wants 8 bytes, the writer sends 4.
    assert_err(
        "[[channel]]\nname = \"c\"\n[[task]]\nname = \"w\"\nprogram = [\"send c 4\"]\n[[task]]\nname = \"r\"\nprogram = [\"loop 2 {\", \"recv c 4\", \"}\"]\n",
        2,
        "a reader would block forever",
    );
    // 200 bytes left unread in a 100-byte buffer.
    assert_err(
        "[[channel]]\nname = \"c\"\ncapacity = 100\n[[task]]\nname = \"w\"\nprogram = [\"loop 4 {\", \"send c 50\", \"}\"]\n",
        2,
        "a writer would block forever",
    );
    // A single write larger than the buffer.
    assert_err(
        "[[channel]]\nname = \"c\"\ncapacity = 10\n[[task]]\nname = \"w\"\nprogram = [\"send c 50\"]\n",
        6,
        "can never complete",
    );
    // `loop forever` sides are not checked.
    assert!(from_toml_str(
        "[[channel]]\nname = \"c\"\n[[task]]\nname = \"w\"\nprogram = [\"loop forever {\", \"send c 4\", \"}\"]\n[[task]]\nname = \"r\"\nprogram = [\"loop forever {\", \"recv c 4\", \"}\"]\n",
        "t.toml"
    )
    .is_ok());
}

#[test]
fn start_cpu_must_be_allowed() {
    assert_err(
        "[[task]]\nname = \"t\"\ncpus = \"0-1\"\nstart_cpu = 3\nprogram = [\"exit\"]\n",
        4,
        "not in 'cpus'",
    );
    assert_err(
        "[[task]]\nname = \"t\"\ncpus = \"0-x\"\nprogram = [\"exit\"]\n",
        3,
        "bad CPU list entry",
    );
}

#[test]
fn report_marks_must_exist() {
    assert_err(
        "[report]\nend_mark = 4\n[[task]]\nname = \"t\"\nprogram = [\"mark 1\"]\n",
        2,
        "mark 4 is never recorded",
    );
}

#[test]
fn reporter_prints_elapsed_and_mark_summaries() {
    let w = from_toml_str(
        "[report]\nstart_mark = 0\nend_mark = 1\n[[task]]\nname = \"t\"\ncount = 2\nprogram = [\"mark 0\", \"loop 2 {\", \"compute 1us\", \"mark 1\", \"}\"]\n",
        "t.toml",
    )
    .unwrap();
    let rec = |mark, task, time| MarkRecord { mark, task, time };
    let out = Outcome {
        end_time: 9_000,
        capped: false,
        marks: vec![
            rec(0, 0, 1_000),
            rec(0, 1, 1_000),
            rec(1, 0, 2_000),
            rec(1, 1, 2_500),
            rec(1, 0, 3_000),
            rec(1, 1, 4_000),
        ],
        task_exit: vec![Some(3_000), Some(4_000)],
    };
    let text = w.reporter.render(&out);
    assert!(text.starts_with("Elapsed: 0.000003 s\n"), "{text}");
    assert!(
        text.contains("Mark 0: 2 records by 2 tasks, first 0.000001 s, last 0.000001 s\n"),
        "{text}"
    );
    assert!(text.contains("Mark 1: 4 records by 2 tasks, first 0.000002 s, last 0.000004 s, interval mean 1.250 us, min 1.000 us, max 1.500 us\n"), "{text}");
    let m = w.reporter.metric(&out);
    assert_eq!(
        (m.name.as_str(), m.unit.as_str(), m.higher_is_better),
        ("elapsed", "s", false)
    );
    assert!((m.value - 3e-6).abs() < 1e-12);
}

#[test]
fn without_marks_elapsed_runs_to_the_last_exit() {
    let w = from_toml_str(
        "[[task]]\nname = \"t\"\nprogram = [\"compute 1us\"]\n",
        "t.toml",
    )
    .unwrap();
    let out = Outcome {
        end_time: 7_000,
        capped: false,
        marks: vec![],
        task_exit: vec![Some(5_000)],
    };
    assert!(w.reporter.render(&out).starts_with("Elapsed: 0.000005 s\n"));
    let capped = Outcome {
        end_time: 7_000,
        capped: true,
        marks: vec![],
        task_exit: vec![None],
    };
    let text = w.reporter.render(&capped);
    assert!(
        text.starts_with("Elapsed: 0.000007 s\n") && text.contains("duration cap"),
        "{text}"
    );
}

#[test]
fn the_format_documents_example_loads() {
    let doc = include_str!("../../FORMAT.md");
    let start = doc
        .find("<!-- example-begin -->\n```toml\n")
        .expect("example start")
        + "<!-- example-begin -->\n```toml\n".len();
    let end = doc[start..].find("```").expect("example end") + start;
    let w = from_toml_str(&doc[start..end], "FORMAT.md").unwrap();
    assert_eq!(w.name, "rpc-demo");
    assert_eq!(w.tasks.len(), 4 + 4 + 1 + 1);
    assert_eq!(w.channels.len(), 8);
    assert_eq!(w.channels[0].capacity, 212992);
    assert_eq!(w.tasks[4].name, "client0");
    assert_eq!(w.tasks[0].mm, w.tasks[3].mm);
}

#[test]
fn load_task_file_reports_missing_files_by_path() {
    let e =
        wakesim_workloads::load_task_file(std::path::Path::new("/nonexistent/x.toml")).unwrap_err();
    assert!(matches!(e, WorkloadError::Io { .. }));
    assert!(e.to_string().starts_with("/nonexistent/x.toml: "), "{e}");
}
