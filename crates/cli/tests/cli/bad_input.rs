//! Bad input: one line on stderr naming the problem (and file:line for files), exit code 2,
//! no panic, no backtrace, nothing on stdout, no result file.

use crate::common::*;

fn pipe(loops: &str) -> Vec<&str> {
    vec!["perf", "bench", "sched", "pipe", "-l", loops]
}

#[test]
fn unknown_machine_is_one_line_exit_2() {
    let line = rejects(&["run", "--machine", "nosuch-box"], &["nosuch-box", "machine"]);
    // The message lists what would have been valid.
    assert!(line.contains("xeon-8269cy") && line.contains("test-smt2"), "{line}");
    rejects(&["machines", "show", "nosuch-box"], &["nosuch-box"]);
}

#[test]
fn unknown_workload_is_one_line_exit_2() {
    rejects(&run_with(&["--machine", "test-smt2"], &["hackbenchx", "-g", "4"]), &["hackbenchx"]);
    rejects(&run_with(&["--machine", "test-smt2"], &["perf", "bench", "sched", "nosuch"]), &["nosuch"]);
    rejects(&run_with(&["--machine", "test-smt2"], &["perf", "bench", "sched", "pipe", "-l", "10", "--bogus"]), &["--bogus"]);
}

#[test]
fn malformed_machine_file_names_file_and_line() {
    let dir = TempDir::new("bad-machine");
    let cases: &[(&str, &str, u32, &str)] = &[
        // (file name, contents, line of the problem, word the message must contain)
        ("syntax.toml", "name = \"box\"\nsockets = 1\ncores_per_llc = [\n", 3, "cores_per_llc"),
        ("typo.toml", "name = \"box\"\nsockets = 1\ncores_per_llc = 4\ncores_per_sokcet = 3\n", 4, "cores_per_sokcet"),
        ("zero-cpus.toml", "name = \"box\"\nsockets = 1\ncores_per_llc = 0\n", 3, "cores_per_llc"),
        ("zero-sockets.toml", "name = \"box\"\nsockets = 0\ncores_per_llc = 4\n", 2, "sockets"),
        ("negative.toml", "name = \"box\"\nsockets = 1\ncores_per_llc = 4\nthreads_per_core = -2\n", 4, "threads_per_core"),
        ("too-big.toml", "name = \"box\"\nsockets = 100\ncores_per_llc = 100\n", 2, "8192"),
        ("distance.toml", "sockets = 2\ncores_per_llc = 2\nnuma_distance = [[10, 21], [22, 10]]\n", 3, "symmetric"),
    ];
    for (name, text, line, word) in cases {
        let p = dir.write(name, text);
        let at = format!("{}:{line}:", p.display());
        rejects(&run_with(&["--machine", s(&p)], &pipe("10")), &[&at, word]);
        rejects(&["machines", "show", s(&p)], &[&at]);
    }
    // A missing file is named too.
    let missing = dir.join("missing.toml");
    rejects(&["run", "--machine", s(&missing)], &[s(&missing)]);
}

#[test]
fn a_machine_of_8193_cpus_is_one_line_naming_the_8192_limit() {
    let dir = TempDir::new("8193-cpus");
    let p = dir.write("big.toml", "name = \"big\"\nsockets = 3\ncores_per_llc = 2731\n");
    let at = format!("{}:2:", p.display());
    let line = rejects(&run_with(&["--machine", s(&p)], &pipe("10")), &[&at, "8193 CPUs", "maximum 8192"]);
    assert_eq!(line, format!("wakesim: error: {at} this shape has 8193 CPUs, more than the maximum 8192"));
}

#[test]
fn malformed_task_file_names_file_and_line() {
    let dir = TempDir::new("bad-tasks");
    let head = "name = \"t\"\n[[task]]\nname = \"a\"\n";
    let cases: Vec<(&str, String, u32, &str)> = vec![
        ("op.toml", format!("{head}program = [\"compute 10us\", \"frobnicate 3\"]\n"), 4, "frobnicate"),
        ("loop.toml", format!("{head}program = \"\"\"\ncompute 10us\nloop 3 {{\n  compute 1us\n\"\"\"\n"), 6, "loop"),
        ("negative.toml", format!("{head}program = [\"compute -1us\"]\n"), 4, "-1us"),
        ("zero.toml", format!("{head}program = [\"sleep 0us\"]\n"), 4, "0us"),
        ("key.toml", format!("{head}progrm = [\"compute 1us\"]\n"), 4, "progrm"),
        ("channel.toml", format!("{head}program = [\"recv nope 4\"]\n"), 4, "nope"),
        ("nice.toml", format!("{head}nice = 30\nprogram = [\"compute 1us\"]\n"), 4, "nice"),
        ("syntax.toml", format!("{head}program = [\"compute 1us\"\n"), 4, ""),
        ("empty.toml", "name = \"t\"\n".to_string(), 1, "task"),
    ];
    for (name, text, line, word) in &cases {
        let p = dir.write(name, text);
        let at = format!("{}:{line}:", p.display());
        rejects(&["run", "--machine", "test-smt2", "--tasks", s(&p)], &[&at, word]);
    }
    let missing = dir.join("missing.toml");
    rejects(&["run", "--tasks", s(&missing)], &[s(&missing)]);
}

#[test]
fn malformed_cost_file_names_file_and_line() {
    let dir = TempDir::new("bad-costs");
    let cases: &[(&str, &str, u32, &str)] = &[
        ("key.toml", "base = \"generic\"\nrq_lock = 25\nbogus = 3\n", 3, "bogus"),
        ("negative.toml", "rq_lock = -25\n", 1, "rq_lock"),
        ("range.toml", "\nsmt_throughput = 3.0\n", 2, "smt_throughput"),
    ];
    for (name, text, line, word) in cases {
        let p = dir.write(name, text);
        let at = format!("{}:{line}:", p.display());
        rejects(&run_with(&["--machine", "test-smt2", "--costs", s(&p)], &pipe("10")), &[&at, word]);
    }
}

#[test]
fn unknown_feature_lists_valid_ones() {
    // Every feature row of `wakesim features` (after its header line).
    let listed: Vec<String> = ok(&["features"]).lines().skip(1).map(|l| l.split_whitespace().next().unwrap().to_string()).collect();
    assert!(listed.len() >= 10, "{listed:?}");
    for spec in ["+NOSUCH_FEATURE", "-NOSUCH_FEATURE", "NOSUCH_FEATURE", "+TTWU_QUEUE,-NOSUCH_FEATURE"] {
        let arg = format!("--features={spec}");
        let line = rejects(&run_with(&["--machine", "test-smt2", &arg], &pipe("10")), &["NOSUCH_FEATURE"]);
        for name in &listed {
            assert!(line.contains(name.as_str()), "'{spec}': valid feature {name} not listed: {line}");
        }
    }
}

#[test]
fn unknown_kernel_is_one_line_exit_2() {
    let line = rejects(&run_with(&["--machine", "test-smt2", "--kernel", "v9.99"], &pipe("10")), &["v9.99"]);
    for k in ok(&["kernels"]).lines().filter(|l| !l.starts_with(char::is_whitespace)) {
        let k = k.split_whitespace().next().unwrap();
        assert!(line.contains(k), "known kernel {k} not listed: {line}");
    }
}

#[test]
fn conflicting_features_are_refused() {
    // Both idle-scan limits at once is a combination no kernel had.
    rejects(&run_with(&["--machine", "test-smt2", "--features", "+SIS_PROP"], &pipe("10")), &["SIS_PROP", "SIS_UTIL"]);
}

#[test]
fn negative_duration_is_rejected() {
    rejects(&run_with(&["--machine", "test-smt2", "--duration=-1"], &pipe("10")), &["--duration", "-1"]);
    rejects(&run_with(&["--machine", "test-smt2", "--duration", "0"], &pipe("10")), &["--duration"]);
    rejects(&run_with(&["--machine", "test-smt2", "--duration", "nan"], &pipe("10")), &["--duration"]);
    rejects(&run_with(&["--machine", "test-smt2", "--duration", "inf"], &pipe("10")), &["--duration"]);
    rejects(&run_with(&["--machine", "test-smt2", "--duration", "soon"], &pipe("10")), &["soon"]);
    // `--duration -1` (with a space): clap takes -1 for a flag; still one line and exit 2.
    rejects(&run_with(&["--machine", "test-smt2", "--duration", "-1"], &pipe("10")), &["-1"]);
}

#[test]
fn negative_duration_with_a_space_names_the_option() {
    rejects(&run_with(&["--machine", "test-smt2", "--duration", "-1"], &pipe("10")), &["--duration"]);
}

#[test]
fn sub_nanosecond_duration_is_rejected() {
    rejects(&run_with(&["--machine", "test-smt2", "--duration", "1e-12"], &pipe("10")), &["--duration"]);
}

#[test]
fn taskset_cpu_beyond_machine_is_rejected() {
    // CPU 200 on the 104-CPU Xeon, CPU 8 on the 8-CPU test machine.
    rejects(&run_with(&["--machine", "xeon-8269cy"], &["taskset", "-c", "200", "perf", "bench", "sched", "pipe", "-l", "10"]), &["xeon-8269cy"]);
    rejects(&run_with(&["--machine", "test-smt2"], &["taskset", "-c", "8", "perf", "bench", "sched", "pipe", "-l", "10"]), &["test-smt2"]);
    rejects(&run_with(&["--machine", "test-smt2"], &["taskset", "-c", "3-1", "perf", "bench", "sched", "pipe", "-l", "10"]), &["3-1"]);
    // The same for a task file's `cpus`.
    let dir = TempDir::new("taskset");
    let p = dir.write("pinned.toml", "name = \"t\"\n[[task]]\nname = \"a\"\ncpus = \"9\"\nprogram = [\"compute 1us\"]\n");
    rejects(&["run", "--machine", "test-smt2", "--tasks", s(&p)], &["test-smt2"]);
}

#[test]
fn bad_json_path_leaves_no_file() {
    let dir = TempDir::new("bad-json");
    // Into a directory that does not exist.
    let missing = dir.join("no-such-dir").join("x.json");
    let o = wakesim(&run_with(&["--machine", "test-smt2", "--json", s(&missing)], &pipe("200")));
    let line = assert_one_line_error(&o, "--json into a missing directory");
    assert!(line.contains(s(&missing)), "{line}");
    assert!(!missing.exists() && !dir.join("no-such-dir").exists());
    // Onto an existing directory: the rename fails, and the temporary file is cleaned up.
    std::fs::create_dir(dir.join("taken")).unwrap();
    let taken = dir.join("taken");
    let o = wakesim(&run_with(&["--machine", "test-smt2", "--json", s(&taken)], &pipe("200")));
    assert_one_line_error(&o, "--json onto a directory");
    assert_eq!(dir.entries(), vec!["taken".to_string()], "something was left beside the target");
    assert!(std::fs::read_dir(&taken).unwrap().next().is_none(), "something was written into the directory");
    // Bad input elsewhere: nothing is written at all.
    let json = dir.join("never.json");
    rejects(&run_with(&["--machine", "nosuch-box", "--json", s(&json)], &pipe("10")), &["nosuch-box"]);
    rejects(&run_with(&["--machine", "test-smt2", "--json", s(&json)], &pipe("0")), &["-l"]);
    assert!(!json.exists());
    assert_eq!(dir.entries(), vec!["taken".to_string()]);
}

#[test]
fn bad_json_path_is_rejected_before_simulating() {
    let dir = TempDir::new("bad-json-early");
    let missing = dir.join("no-such-dir").join("x.json");
    rejects(&run_with(&["--machine", "test-smt2", "--json", s(&missing)], &pipe("200")), &["no-such-dir"]);
}

#[test]
fn zero_loops_rejected() {
    rejects(&run_with(&["--machine", "test-smt2"], &pipe("0")), &["-l", "0"]);
    rejects(&run_with(&["--machine", "test-smt2"], &pipe("-5")), &["-l", "-5"]);
    rejects(&run_with(&["--machine", "test-smt2"], &pipe("abc")), &["-l", "abc"]);
    rejects(&run_with(&["--machine", "test-smt2"], &pipe("99999999999999999999")), &["-l"]);
}

#[test]
fn other_bad_arguments_are_one_line_exit_2() {
    rejects(&["frobnicate"], &["frobnicate"]);
    rejects(&["run", "--no-such-flag"], &["--no-such-flag"]);
    rejects(&["run", "--seed", "-1"], &["-1"]);
    rejects(&["run", "--seed", "many"], &["many"]);
    rejects(&run_with(&["--machine", "test-smt2", "--schedstat", "14"], &pipe("10")), &["--schedstat", "14"]);
    rejects(&["run", "--tasks", "x.toml", "--", "perf", "bench", "sched", "pipe"], &["--tasks"]);
    rejects(&["bench", "--scenario", "9"], &["9"]);
    rejects(&["bench", "--seconds", "0"], &["--seconds"]);
    rejects(&["machines", "show"], &[]);
}

#[test]
fn missing_required_argument_is_named() {
    rejects(&["machines", "show"], &["NAME"]);
}

#[test]
fn a_bad_noise_profile_is_one_line_naming_the_key_and_nothing_is_written() {
    let dir = TempDir::new("bad-noise");
    let json = dir.join("never.json");
    let typo = dir.join("typo.toml");
    std::fs::write(&typo, "name = \"x\"\n[[task]]\nname = \"k\"\nperiod_ms = 10\nrun_us = 3\nrun_uss = 4\n").unwrap();
    rejects(&run_with(&["--machine", "test-smt2", "--noise", s(&typo), "--json", s(&json)], &pipe("10")), &["run_uss", "line 6"]);
    let neg = dir.join("neg.toml");
    std::fs::write(&neg, "name = \"x\"\n[[irq]]\nname = \"nic\"\nperiod_ms = 0\nhandler_us = 3\n").unwrap();
    rejects(&run_with(&["--machine", "test-smt2", "--noise", s(&neg), "--json", s(&json)], &pipe("10")), &["nic", "period_ms"]);
    rejects(&run_with(&["--machine", "test-smt2", "--noise", "quiet", "--json", s(&json)], &pipe("10")), &["quiet"]);
    assert!(!json.exists());
}
