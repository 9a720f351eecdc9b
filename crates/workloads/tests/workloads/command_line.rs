//! Command-line dispatch: taskset, tool lookup, flag spellings and error texts.

use wakesim_workloads::{from_command_line, known_tools, op_counts, Workload, WorkloadError};

fn args(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

fn ok(s: &str) -> Workload {
    from_command_line(&args(s)).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn err(s: &str) -> String {
    match from_command_line(&args(s)) {
        Ok(_) => panic!("expected an error for '{s}'"),
        Err(e) => e.to_string(),
    }
}

fn loops(w: &Workload) -> u64 {
    op_counts(&w.tasks[0].program).sends()
}

fn cpus(w: &Workload, t: usize) -> Vec<usize> {
    w.tasks[t]
        .allowed
        .as_ref()
        .map(|s| s.iter().collect())
        .unwrap_or_default()
}

#[test]
fn taskset_pins_every_task() {
    let w = ok("taskset -c 0-3,8 perf bench sched pipe -l 10");
    for t in 0..2 {
        assert_eq!(cpus(&w, t), vec![0, 1, 2, 3, 8]);
    }
    assert_eq!(
        cpus(&ok("taskset --cpu-list 2 perf bench sched pipe"), 1),
        vec![2]
    );
    assert_eq!(
        cpus(&ok("taskset 0x5 perf bench sched pipe"), 0),
        vec![0, 2]
    );
    assert_eq!(
        cpus(&ok("taskset -c 0-7:4 perf bench sched pipe"), 0),
        vec![0, 4]
    );
    assert!(ok("perf bench sched pipe")
        .tasks
        .iter()
        .all(|t| t.allowed.is_none()));
}

#[test]
fn taskset_errors_name_taskset() {
    assert!(err("taskset -c 0-x perf bench sched pipe")
        .starts_with("taskset: bad CPU list entry '0-x'"));
    assert!(err("taskset -c 1").starts_with("taskset: missing command"));
    assert!(err("taskset zz perf bench sched pipe").starts_with("taskset: bad CPU mask 'zz'"));
    assert!(err("taskset -x 1 perf").contains("unknown option '-x'"));
    assert!(err("taskset 0x0 perf bench sched pipe").contains("empty CPU set"));
}

#[test]
fn unknown_tool_is_named_and_known_tools_listed() {
    let e = err("hackbenchx -g 4");
    assert!(
        e.starts_with("unknown benchmark 'hackbenchx'; known: perf bench sched pipe, perf bench sched messaging, hackbench, schbench"),
        "{e}"
    );
    for t in ["tbench", "netperf", "context1", "ipistorm", "stream", "rt-app"] {
        assert!(e.contains(t), "{e}");
    }
    let e = err("perf bench sched pipes -l 4");
    assert!(
        e.starts_with("unknown benchmark 'perf bench sched pipes'"),
        "{e}"
    );
    let e = from_command_line(&[]).unwrap_err();
    assert!(matches!(e, WorkloadError::UnknownTool { .. }));
}

#[test]
fn loop_flag_spellings_all_work() {
    for s in [
        "-l 7", "-l7", "--loop 7", "--loop=7", "--lo 7", "-Tl 7", "-Tl7",
    ] {
        assert_eq!(loops(&ok(&format!("perf bench sched pipe {s}"))), 7, "{s}");
    }
    assert_eq!(loops(&ok("/usr/bin/perf bench sched pipe -l 3")), 3);
    assert_eq!(loops(&ok("-- perf bench sched pipe -l 3")), 3);
    assert_eq!(loops(&ok("perf bench -r 5 sched pipe -l 3")), 3);
}

#[test]
fn bad_flags_give_errors_naming_the_flag() {
    let p = "perf bench sched pipe: ";
    assert_eq!(
        err("perf bench sched pipe -x"),
        format!("{p}unknown option '-x' (known: -l/--loop, -T/--threaded, -G/--cgroups, -s/--write-size, -n/--nonblocking)")
    );
    assert!(
        err("perf bench sched pipe --loops 5").starts_with(&format!("{p}unknown option '--loops'"))
    );
    assert_eq!(
        err("perf bench sched pipe -l abc"),
        format!("{p}option '-l' expects a whole number, got 'abc'")
    );
    assert_eq!(
        err("perf bench sched pipe --loop=1e6"),
        format!("{p}option '--loop' expects a whole number, got '1e6'")
    );
    assert_eq!(
        err("perf bench sched pipe -l 0"),
        format!("{p}'-l' must be at least 1, got 0")
    );
    assert_eq!(
        err("perf bench sched pipe -l -5"),
        format!("{p}'-l' must be at least 1, got -5")
    );
    assert!(err("perf bench sched pipe -l 3000000000").contains("too large"));
    assert_eq!(
        err("perf bench sched pipe -l"),
        format!("{p}option '-l' needs a value")
    );
    assert_eq!(
        err("perf bench sched pipe --threaded=1"),
        format!("{p}option '--threaded' takes no value")
    );
    assert_eq!(
        err("perf bench sched pipe extra"),
        format!("{p}unexpected argument 'extra'")
    );
    assert!(err("perf bench sched pipe -n")
        .contains("'-n' (epoll-based non-blocking reads) is not modelled"));
    assert!(err("perf bench sched pipe -G onlyone").contains("needs two cgroup names"));
    assert!(err("perf bench sched pipe -s 0").contains("'-s' must be in 1.."));
    assert!(err("perf bench sched pipe -s 2000000").contains("pipe-max-size"));
    assert!(err("perf bench -f fancy sched pipe").starts_with("perf bench: unknown format 'fancy'"));
    assert!(
        err("perf bench -r 0 sched pipe").starts_with("perf bench: '-r' must be a positive number")
    );
}

#[test]
fn known_tools_lists_perf_pipe_with_its_flags() {
    let k = known_tools();
    let (name, flags) = k
        .iter()
        .find(|(n, _)| *n == "perf bench sched pipe")
        .copied()
        .unwrap();
    assert_eq!(name, "perf bench sched pipe");
    assert!(flags.contains("-l/--loop") && flags.contains("-T/--threaded"));
}
