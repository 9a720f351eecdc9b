//! Issue #19: `wakesim record` (a real run's scheduling behaviour as a task file: live through
//! tracefs, or imported from a tracefs text dump or `perf script` text) and its replay with
//! `wakesim run --tasks FILE`, including `--cpu-scale`.

use crate::common::*;

/// The `Elapsed: X s` line of a task-file run, in seconds.
fn elapsed(out: &str) -> f64 {
    let first = out.lines().next().unwrap_or("");
    first
        .strip_prefix("Elapsed: ")
        .and_then(|r| r.strip_suffix(" s"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no Elapsed line first:\n{out}"))
}

#[test]
fn cpu_scale_two_doubles_a_compute_bound_task_and_leaves_sleeps_alone() {
    let dir = TempDir::new("cpu-scale");
    let f = dir.write("cb.toml", "name = \"cb\"\n[[task]]\nname = \"t\"\nprogram = [\"compute 20ms\"]\n");
    let run = |scale: &str| elapsed(&ok(&["run", "--machine", "test-2x4", "--noise", "none", "--tasks", s(&f), "--cpu-scale", scale]));
    let (one, two) = (run("1"), run("2"));
    assert!((one - 0.020).abs() < 0.0005, "{one}");
    assert!((two / one - 2.0).abs() < 0.01, "scale 2: {two} s vs {one} s");
    // A sleep is not compute: 2 x 1 ms compute + 10 ms sleep -> 12 ms at scale 1, 14 ms at 2.
    let g = dir.write("mix.toml", "name = \"mix\"\n[[task]]\nname = \"t\"\nprogram = [\"compute 1ms\", \"sleep 10ms\", \"compute 1ms\"]\n");
    let mix = |scale: &str| elapsed(&ok(&["run", "--machine", "test-2x4", "--noise", "none", "--tasks", s(&g), "--cpu-scale", scale]));
    let (a, b) = (mix("1"), mix("2"));
    assert!((b - a - 0.002).abs() < 0.0002, "scale 1: {a} s, scale 2: {b} s");
    // The JSON says what ran; without the flag the key is absent (the golden corpus is unchanged).
    let json = dir.join("r.json");
    ok(&["run", "--machine", "test-2x4", "--tasks", s(&f), "--cpu-scale", "0.5", "--json", s(&json)]);
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["cpu_scale"], 0.5);
    ok(&["run", "--machine", "test-2x4", "--tasks", s(&f), "--json", s(&json)]);
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(doc.get("cpu_scale").is_none());
}

#[test]
fn a_bad_cpu_scale_is_one_line_exit_2() {
    for bad in ["0", "-1", "nan", "inf", "abc", "5000"] {
        rejects(&["run", "--machine", "test-2x4", "--cpu-scale", bad], &["--cpu-scale"]);
    }
}

/// A tracefs line at `us` µs after 100 s.
fn l(task: &str, cpu: u32, flags: &str, us: u64, text: &str) -> String {
    format!("{task:>16} [{cpu:03}] {flags} {}.{:06}: {text}\n", 100 + us / 1_000_000, us % 1_000_000)
}

fn sw(prev: (&str, u32), state: &str, next: (&str, u32)) -> String {
    format!("sched_switch: prev_comm={} prev_pid={} prev_prio=120 prev_state={state} ==> next_comm={} next_pid={} next_prio=120", prev.0, prev.1, next.0, next.1)
}

/// `app` (pid `root`) forks `kid`; the kid blocks in read until the parent writes 64 bytes, then
/// in a futex wait until the parent's FUTEX_WAKE, sleeps 1 ms (woken by a timer interrupt) and
/// exits, waking the parent out of wait4. Another task and a kworker run beside them.
fn synthetic_trace(root: &str, kid: &str) -> String {
    let (r, k): (u32, u32) = (root.parse().unwrap(), kid.parse().unwrap());
    let (idle0, idle1, app, child) = (("swapper/0", 0), ("swapper/1", 0), ("app", r), ("app", k));
    let (ra, ka) = (format!("app-{r}"), format!("app-{k}"));
    let wake = |pid: u32| format!("sched_waking: comm=app pid={pid} prio=120 target_cpu=000");
    let mut s = String::from("# tracer: nop\n#\n# entries-in-buffer/entries-written: 30/30   #P:2\n");
    s += &l("<idle>-0", 0, "d..2.", 0, &sw(idle0, "R", app));
    s += &l(&ra, 0, ".....", 10, &format!("sched_process_fork: comm=app pid={r} child_comm=app child_pid={k}"));
    s += &l(&ra, 0, "d..2.", 11, &format!("sched_wakeup_new: comm=app pid={k} prio=120 target_cpu=001"));
    s += &l("<idle>-0", 1, "d..2.", 20, &sw(idle1, "R", child));
    s += &l(&ka, 1, ".....", 24, "sys_read(fd: 3, buf: 0x7ffd, count: 0x1000)");
    s += &l(&ka, 1, "d..2.", 25, &sw(child, "S", idle1));
    s += &l("<idle>-0", 1, "d..2.", 26, &sw(idle1, "R", ("other", 200)));
    s += &l("other-200", 1, "d..2.", 30, &sw(("other", 200), "S", idle1));
    s += &l("kworker/0:1-9", 0, "d..3.", 35, "sched_waking: comm=rcu_preempt pid=15 prio=120 target_cpu=000");
    s += &l(&ra, 0, ".....", 40, "sys_write(fd: 4, buf: 0x7ffd, count: 0x40)");
    s += &l(&ra, 0, "d..3.", 41, &wake(k));
    s += &l(&ra, 0, ".....", 42, "sys_write -> 0x40");
    s += &l("<idle>-0", 1, "d..2.", 45, &sw(idle1, "R", child));
    s += &l(&ka, 1, ".....", 46, "sys_read -> 0x40");
    s += &l(&ka, 1, ".....", 49, "sys_futex(uaddr: 0x5560, op: 0x80, val: 0, utime: 0, uaddr2: 0, val3: 0)");
    s += &l(&ka, 1, "d..2.", 50, &sw(child, "S", idle1));
    s += &l(&ra, 0, ".....", 60, "sys_futex(uaddr: 0x5560, op: 0x81, val: 1, utime: 0, uaddr2: 0, val3: 0)");
    s += &l(&ra, 0, "d..3.", 61, &wake(k));
    s += &l("<idle>-0", 1, "d..2.", 62, &sw(idle1, "R", child));
    s += &l(&ra, 0, ".....", 63, "sys_futex -> 0x1");
    s += &l(&ra, 0, ".....", 64, "sys_wait4(upid: 0xffffffffffffffff, stat_addr: 0x7ffd, options: 0, ru: 0)");
    s += &l(&ra, 0, "d..2.", 66, &sw(app, "S", idle0));
    s += &l(&ka, 1, ".....", 70, "sys_clock_nanosleep(which_clock: 0, flags: 0, rqtp: 0x7ffd, rmtp: 0)");
    s += &l(&ka, 1, "d..2.", 71, &sw(child, "S", idle1));
    s += &l("<idle>-0", 1, "d.h3.", 1071, &wake(k));
    s += &l("<idle>-0", 1, "d..2.", 1072, &sw(idle1, "R", child));
    s += &l(&ka, 1, ".....", 1080, &format!("sched_process_exit: comm=app pid={k} prio=120 group_dead=false"));
    s += &l(&ka, 1, "d..3.", 1081, &wake(r));
    s += &l(&ka, 1, "d..2.", 1082, &sw(child, "X", idle1));
    s += &l("<idle>-0", 0, "d..2.", 1085, &sw(idle0, "R", app));
    s += &l(&ra, 0, ".....", 1095, &format!("sched_process_exit: comm=app pid={r} prio=120 group_dead=true"));
    s += &l(&ra, 0, "d..2.", 1096, &sw(app, "X", idle0));
    s
}

/// The program lines of task `name` in a task file, without the compute bursts.
fn ops_of(text: &str, name: &str) -> Vec<String> {
    let start = text.find(&format!("name = \"{name}\"")).unwrap_or_else(|| panic!("no task {name}:\n{text}"));
    let body = &text[start..];
    let body = &body[body.find("program = \"\"\"\n").unwrap() + 14..];
    let body = &body[..body.find("\"\"\"").unwrap()];
    body.lines().filter(|l| !l.starts_with("compute ")).map(str::to_string).collect()
}

#[test]
fn an_imported_tracefs_text_becomes_a_task_file_with_its_chain_sleep_and_fork_that_replays() {
    let dir = TempDir::new("record-import");
    let trace = dir.write("t.txt", &synthetic_trace("100", "101"));
    let out = dir.join("syn.toml");
    let printed = ok(&["record", "-o", s(&out), "--import", s(&trace), "--pid", "100", "--machine", "test-2x4"]);
    assert!(printed.starts_with("wakesim record: 2 tasks, run time 0.001095 s, wakeups 4, migrations 0, voluntary switches 4"), "{printed}");
    assert!(printed.contains("blocks: channel 2, futex 1, sleep (timer) 1; forks 1; pipes and sockets 1 (2 reads and writes)"), "{printed}");
    let text = std::fs::read_to_string(&out).unwrap();
    // The parent: the fork, the write to the pipe the child reads (found by the wakeup), the
    // futex wake, wait4 for the child.
    assert_eq!(ops_of(&text, "app-100"), ["wake spawn.101", "send ch.101.3 64", "wake f.100.101", "recv c.101.100 1  # wait4", "exit"]);
    // The child: started by the fork; the read, the futex wait, the timed sleep, the exit's
    // wakeup of its parent.
    assert_eq!(
        ops_of(&text, "app-101"),
        ["wait spawn.101  # fork", "recv ch.101.3 64  # read", "wait f.100.101  # futex", "sleep 1000.000us  # clock_nanosleep", "send c.101.100 1", "exit"]
    );
    assert!(text.contains("[[channel]]\nname = \"ch.101.3\"\nkind = \"pipe\"\n"), "{text}");
    assert!(text.contains("# other tasks ran 0.000004 s"), "{text}");
    // It replays: the 1 ms sleep and the bursts around it.
    let replay = ok(&["run", "--machine", "test-2x4", "--noise", "none", "--tasks", s(&out)]);
    let t = elapsed(&replay);
    assert!((0.00105..0.0015).contains(&t), "replayed in {t} s:\n{replay}");
    // --comm takes the same tasks; a gzipped text is read through.
    let gz = dir.join("t.txt.gz");
    assert!(std::process::Command::new("sh").arg("-c").arg(format!("gzip -c {} > {}", s(&trace), s(&gz))).status().unwrap().success());
    let out2 = dir.join("syn2.toml");
    ok(&["record", "-o", s(&out2), "--import", s(&gz), "--comm", "app", "--machine", "test-2x4"]);
    let strip = |t: &str| t.lines().filter(|l| !l.starts_with("name = \"syn") && !l.starts_with("# Recorded by")).collect::<Vec<_>>().join("\n");
    assert_eq!(strip(&std::fs::read_to_string(&out2).unwrap()), strip(&text));
}

#[test]
fn perf_script_text_imports_with_every_dependency_a_futex() {
    let dir = TempDir::new("record-perf");
    let pl = |task: &str, cpu: u32, us: u64, text: &str| format!("{task:>16} [{cpu:03}] 100.{:09}: sched:{text}\n", us * 1000);
    let (idle0, idle1, a, b) = (("swapper/0", 0), ("swapper/1", 0), ("app", 100), ("app", 101));
    let text = [
        pl("swapper     0", 0, 0, &sw(idle0, "R", a)),
        pl("swapper     0", 1, 0, &sw(idle1, "R", b)),
        pl("app 101/101", 1, 5, &sw(b, "S", idle1)),
        pl("app 100/100", 0, 10, "sched_waking: comm=app pid=101 prio=120 target_cpu=001"),
        pl("app 100/100", 0, 11, "sched_stat_runtime: comm=app pid=100 runtime=11000 [ns]"),
        pl("swapper     0", 1, 12, &sw(idle1, "R", b)),
        pl("app 100/100", 0, 15, &sw(a, "S", idle0)),
        pl("app 101/101", 1, 20, "sched_waking: comm=app pid=100 prio=120 target_cpu=000"),
        pl("app 101/101", 1, 20, "sched_migrate_task: comm=app pid=100 prio=120 orig_cpu=0 dest_cpu=1"),
        pl("swapper     0", 0, 21, &sw(idle0, "R", a)),
        pl("app 101/101", 1, 30, &sw(b, "X", idle1)),
        pl("app 100/100", 0, 40, &sw(a, "X", idle0)),
    ]
    .concat();
    let trace = dir.write("perf.script", &text);
    let out = dir.join("p.toml");
    let printed = ok(&["record", "-o", s(&out), "--import", s(&trace), "--comm", "app", "--machine", "test-2x4"]);
    assert!(printed.starts_with("wakesim record: 2 tasks, run time 0.000040 s, wakeups 2, migrations 1, voluntary switches 2"), "{printed}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("# The recording has no syscall events"), "{text}");
    assert_eq!(ops_of(&text, "app-100"), ["wake f.100.101", "wait f.101.100", "exit"]);
    assert_eq!(ops_of(&text, "app-101"), ["wait f.100.101", "wake f.101.100", "exit"]);
    assert!(text.contains("mm = \"100\""), "perf's pid/tid gives the thread group:\n{text}");
    let replay = ok(&["run", "--machine", "test-2x4", "--noise", "none", "--tasks", s(&out)]);
    assert!(elapsed(&replay) > 0.0);
}

#[test]
fn a_malformed_or_incomplete_recording_is_one_line_naming_the_line_and_nothing_is_written() {
    let dir = TempDir::new("record-bad");
    let out = dir.join("o.toml");
    let good = synthetic_trace("100", "101");
    let mut lines: Vec<&str> = good.lines().collect();
    lines.insert(8, "this is not an event");
    let bad = dir.write("bad.txt", &(lines.join("\n") + "\n"));
    rejects(&["record", "-o", s(&out), "--import", s(&bad), "--pid", "100"], &["bad.txt:9:", "not an event line"]);
    let mut lines: Vec<&str> = good.lines().collect();
    lines.insert(12, "CPU:1 [LOST 12 EVENTS]");
    let lost = dir.write("lost.txt", &(lines.join("\n") + "\n"));
    rejects(&["record", "-o", s(&out), "--import", s(&lost), "--pid", "100"], &["lost.txt:13:", "lost events"]);
    let truncated = dir.write("cut.txt", &good.replace("prev_state=S ==>", "prev_state=S"));
    rejects(&["record", "-o", s(&out), "--import", s(&truncated), "--pid", "100"], &["cut.txt:", "sched_switch without '==>'"]);
    let t = dir.write("t.txt", &good);
    let line = rejects(&["record", "-o", s(&out), "--import", s(&t)], &["--comm", "--pid", "app (2 tasks)"]);
    assert!(line.contains("which tasks"), "{line}");
    rejects(&["record", "-o", s(&out), "--import", s(&t), "--comm", "nosuch"], &["no task of comm nosuch"]);
    rejects(&["record", "-o", s(&out), "--import", s(&t), "--comm", "app", "--pid", "100"], &["--pid", "--comm", "not both"]);
    let nosw = dir.write("nosw.txt", &l("app-1", 0, "d..3.", 1, "sched_waking: comm=x pid=2 prio=120 target_cpu=000"));
    rejects(&["record", "-o", s(&out), "--import", s(&nosw), "--pid", "1"], &["nosw.txt", "no sched_switch"]);
    rejects(&["record", "-o", s(&out), "--import", s(&dir.join("missing.txt")), "--pid", "1"], &["missing.txt"]);
    rejects(&["record", "-o", s(&out), "--import", s(&t), "--pid", "100", "--", "true"], &["--import", "no command"]);
    rejects(&["record", "-o", s(&out)], &["command after `--`", "--import"]);
    rejects(&["record", "-o", s(&out), "--pid", "3", "--", "true"], &["--pid and --comm"]);
    rejects(&["record", "-o", s(&dir.join("nodir/o.toml")), "--import", s(&t), "--pid", "100"], &["nodir"]);
    rejects(&["record", "-o", s(&out), "--import", s(&t), "--pid", "100", "--machine", "nosuch-box"], &["nosuch-box"]);
    assert!(!out.exists());
}

fn record_with_tracefs(tracefs: &std::path::Path, config: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(bin())
        .arg("record")
        .args(args)
        .env("WAKESIM_TRACEFS", tracefs)
        .env("XDG_CONFIG_HOME", config)
        .env("RUST_BACKTRACE", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// A stand-in for /sys/kernel/tracing with the required events, two of the syscall events and
/// the record-tgid option; `overrun` events lost on CPU 1.
fn fake_tracefs(dir: &TempDir, overrun: u64) -> std::path::PathBuf {
    let root = dir.join("tracing");
    let put = |p: &str, v: &str| {
        let f = root.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, v).unwrap();
    };
    put("trace", "");
    put("tracing_on", "0\n");
    put("trace_clock", "[local] global counter uptime\n");
    put("buffer_size_kb", "7 (expanded: 1408)\n");
    put("events/enable", "0\n");
    put("options/record-tgid", "0\n");
    for e in ["sched/sched_switch", "sched/sched_waking", "sched/sched_process_fork", "sched/sched_process_exit", "syscalls/sys_enter_read", "syscalls/sys_exit_read"] {
        put(&format!("events/{e}/enable"), "0\n");
    }
    for c in 0..2 {
        put(&format!("per_cpu/cpu{c}/stats"), &format!("entries: 10\noverrun: {}\ncommit overrun: 0\ndropped events: 0\n", if c == 1 { overrun } else { 0 }));
    }
    root
}

#[track_caller]
fn restored(tracefs: &std::path::Path) {
    let read = |p: &str| std::fs::read_to_string(tracefs.join(p)).unwrap();
    assert_eq!(read("trace_clock").trim(), "local");
    assert_eq!(read("buffer_size_kb").trim(), "1408");
    assert_eq!(read("tracing_on").trim(), "0");
    assert_eq!(read("options/record-tgid").trim(), "0");
    assert_eq!(read("events/sched/sched_waking/enable").trim(), "0");
    assert_eq!(read("events/syscalls/sys_enter_read/enable").trim(), "0");
}

#[test]
fn a_live_recording_takes_the_command_and_its_children_and_restores_tracefs() {
    let dir = TempDir::new("record-live");
    let tracefs = fake_tracefs(&dir, 0);
    let template = dir.write("template.txt", &synthetic_trace("7777777", "7777778"));
    let out = dir.join("live.toml");
    let kept = dir.join("kept.txt");
    // The "command" writes the trace tracefs would have recorded, with its own pid as the root's.
    let cmd = format!("sed -e s/7777777/$$/g {} > {}", s(&template), s(&tracefs.join("trace")));
    let o = record_with_tracefs(&tracefs, dir.path(), &["-o", s(&out), "--keep-trace", s(&kept), "--", "sh", "-c", &cmd]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let printed = stdout(&o);
    assert!(printed.starts_with("wakesim record: 2 tasks, run time 0.001095 s"), "{printed}");
    assert!(printed.contains("note: this kernel lacks") && printed.contains("syscall events"), "{printed}");
    assert!(printed.contains("--machine host has no calibrated cost profile"), "{printed}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("# Recorded by `wakesim record` from `sh -c sed"), "{text}");
    assert!(ops_of(&text, "app-7777778").contains(&"sleep 1000.000us  # clock_nanosleep".to_string()), "{text}");
    assert!(std::fs::read_to_string(&kept).unwrap().contains("sched_process_fork"));
    restored(&tracefs);
}

#[test]
fn tracing_that_was_on_and_events_that_were_on_are_on_again_afterwards() {
    let dir = TempDir::new("record-restore");
    let tracefs = fake_tracefs(&dir, 0);
    let put = |p: &str, v: &str| std::fs::write(tracefs.join(p), v).unwrap();
    put("tracing_on", "1\n");
    put("events/enable", "X\n");
    std::fs::create_dir_all(tracefs.join("events/irq/irq_handler_entry")).unwrap();
    put("events/irq/irq_handler_entry/enable", "1\n");
    put("events/sched/sched_switch/enable", "1\n");
    let template = dir.write("template.txt", &synthetic_trace("7777777", "7777778"));
    let cmd = format!("sed -e s/7777777/$$/g {} > {}", s(&template), s(&tracefs.join("trace")));
    let o = record_with_tracefs(&tracefs, dir.path(), &["-o", s(&dir.join("o.toml")), "--", "sh", "-c", &cmd]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let read = |p: &str| std::fs::read_to_string(tracefs.join(p)).unwrap().trim().to_string();
    assert_eq!(read("tracing_on"), "1");
    assert_eq!(read("events/irq/irq_handler_entry/enable"), "1", "an event that was on is on again");
    assert_eq!(read("events/sched/sched_switch/enable"), "1");
    assert_eq!(read("events/sched/sched_waking/enable"), "0");
    assert_eq!(read("trace_clock"), "local");
}

#[test]
fn a_live_recording_that_lost_events_or_has_no_tracefs_or_no_root_is_refused_and_writes_nothing() {
    let dir = TempDir::new("record-live-bad");
    let tracefs = fake_tracefs(&dir, 42);
    let out = dir.join("o.toml");
    let o = record_with_tracefs(&tracefs, dir.path(), &["-o", s(&out), "--keep-trace", s(&dir.join("k.txt")), "--", "true"]);
    let line = assert_one_line_error(&o, "record with overruns");
    assert!(line.contains("lost events") && line.contains("cpu1 overrun 42"), "{line}");
    assert!(!out.exists() && !dir.join("k.txt").exists());
    restored(&tracefs);
    let o = record_with_tracefs(&dir.join("no-tracefs"), dir.path(), &["-o", s(&out), "--", "true"]);
    let line = assert_one_line_error(&o, "record without tracefs");
    assert!(line.contains("no tracefs") && line.contains("no-tracefs"), "{line}");
    // (A fake tracefs holds what was written back: a fresh one for the next recording.)
    let dir2 = TempDir::new("record-live-false");
    let tracefs = fake_tracefs(&dir2, 0);
    let o = record_with_tracefs(&tracefs, dir.path(), &["-o", s(&out), "--", "false"]);
    let line = assert_one_line_error(&o, "record of a failing command");
    assert!(line.contains("`false` failed"), "{line}");
    assert!(!out.exists());
    // Without root the real tracefs cannot be read: run as nobody where we can.
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0")));
    let setpriv = std::process::Command::new("setpriv").arg("--version").output().is_ok_and(|o| o.status.success());
    if !root || !setpriv || !std::path::Path::new("/sys/kernel/tracing/trace").exists() {
        eprintln!("not root, no setpriv or no tracefs: the no-root case skipped");
        return;
    }
    let open = TempDir::new("record-nobody");
    std::process::Command::new("chmod").args(["777", s(open.path())]).status().unwrap();
    let out = open.join("o.toml");
    let o = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", bin(), "record", "-o", s(&out), "--machine", "test-2x4", "--", "true"])
        .env("RUST_BACKTRACE", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let line = assert_one_line_error(&o, "record as nobody");
    assert!(line.contains("needs root"), "{line}");
    assert!(open.entries().is_empty(), "{:?}", open.entries());
}

#[test]
fn record_then_replay_round_trip_on_this_machine() {
    let top = std::path::Path::new("/sys/kernel/tracing");
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0")));
    if !root || !top.join("trace").is_file() {
        eprintln!("no root or no tracefs at /sys/kernel/tracing: skipped");
        return;
    }
    let clock = std::fs::read_to_string(top.join("trace_clock")).unwrap();
    let on = std::fs::read_to_string(top.join("tracing_on")).unwrap();
    let dir = TempDir::new("record-real");
    let out = dir.join("real.toml");
    // Two timed sleeps in a row (forked sleep processes) and a pipe between two processes.
    let o = std::process::Command::new(bin())
        .args(["record", "-o", s(&out), "--machine", "test-2x4", "--", "sh", "-c", "sleep 0.02; sleep 0.02; echo x | cat > /dev/null"])
        .env("XDG_CONFIG_HOME", dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stderr(&o), stdout(&o));
    assert_eq!(std::fs::read_to_string(top.join("trace_clock")).unwrap(), clock, "the trace clock is restored");
    assert_eq!(std::fs::read_to_string(top.join("tracing_on")).unwrap(), on, "tracing is on again if it was");
    let text = std::fs::read_to_string(&out).unwrap();
    let rec: f64 = text.lines().find_map(|l| l.strip_prefix("# recorded: run_time_s=")).and_then(|r| r.split(' ').next()?.parse().ok()).unwrap_or_else(|| panic!("{text}"));
    assert!(rec >= 0.04, "two 20 ms sleeps: {rec} s\n{text}");
    assert!(text.contains("# clock_nanosleep") || text.contains("# nanosleep"), "the sleeps stay timed:\n{text}");
    assert!(text.contains("wait spawn."), "the shell's children start at its forks:\n{text}");
    let replay = ok(&["run", "--machine", "test-2x4", "--tasks", s(&out)]);
    let t = elapsed(&replay);
    // The sleeps dominate; the rest is a few ms of exec and startup either way.
    assert!(t > 0.04 && t < 2.0 * rec, "recorded {rec} s, replayed {t} s");
}

#[test]
fn others_adds_the_rest_of_the_machine_as_background_and_the_figures_stay_the_workloads() {
    let dir = TempDir::new("record-others");
    let trace = dir.write("t.txt", &synthetic_trace("100", "101"));
    let out = dir.join("o.toml");
    let printed = ok(&["record", "-o", s(&out), "--import", s(&trace), "--pid", "100", "--machine", "test-2x4", "--others"]);
    assert!(printed.starts_with("wakesim record: 2 tasks, run time 0.001095 s, wakeups 4,"), "{printed}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("[report]\nend_mark = 1\n"), "{text}");
    assert!(text.contains("name = \"other.other-200\"\ngroup = \"other\"\n"), "{text}");
    assert!(text.contains("name = \"app-100\"\ngroup = \"workload\"\n"), "{text}");
    assert_eq!(ops_of(&text, "app-101").last().map(String::as_str), Some("exit"));
    assert!(ops_of(&text, "app-101").contains(&"mark 1".to_string()));
    // The elapsed time is still the workload's: to its last exit.
    let t = elapsed(&ok(&["run", "--machine", "test-2x4", "--noise", "none", "--tasks", s(&out)]));
    assert!((0.00105..0.0015).contains(&t), "{t}");
}
