//! `wakesim record -o FILE -- CMD`: record a real run's scheduling behaviour with tracefs and
//! write it as a task file that `wakesim run --tasks FILE` replays on any simulated machine;
//! `--import TRACE` converts a tracefs text dump or `perf script` text made elsewhere.
//!
//! `events` reads the recording, `convert` turns it into each task's steps (the dependency
//! structure: wakeup chains, timed sleeps, forks), `emit` writes the task file with compute
//! bursts net of the kernel work the model charges. The method and its limits: docs/record.md.

mod chans;
mod convert;
mod emit;
mod events;
mod locklog;

use crate::args::RecordArgs;
use crate::output::{check_writable, write_atomic};
use crate::replay::record::{capture, Setup};
use crate::UserError;
use convert::Roots;
use std::path::Path;

/// Events a live recording needs.
const EVENTS: [&str; 4] = ["sched/sched_switch", "sched/sched_waking", "sched/sched_process_fork", "sched/sched_process_exit"];

/// Events it takes where the kernel has them: each task's syscalls (the cause of its blocks and
/// the bytes its writes carry) and the counters the replay is compared on.
fn optional_events() -> Vec<String> {
    // The sock length events (v6.3+) tell a socket's read or write from a pipe's.
    let mut v = vec![
        "sched/sched_wakeup_new".to_string(),
        "sched/sched_migrate_task".to_string(),
        "sock/sock_send_length".to_string(),
        "sock/sock_recv_length".to_string(),
    ];
    for c in events::traced_calls() {
        v.push(format!("syscalls/sys_enter_{c}"));
        v.push(format!("syscalls/sys_exit_{c}"));
    }
    v
}

pub fn record(a: RecordArgs) -> Result<(), UserError> {
    check_writable(&a.output)?;
    if let Some(k) = &a.keep_trace {
        check_writable(k)?;
        if a.import.is_some() {
            return Err(UserError("--keep-trace keeps a live recording's trace; with --import the trace is already a file".into()));
        }
    }
    let machine = crate::run::resolve_machine(&a.machine)?;
    let costs = crate::run::resolve_costs(&machine, a.costs.as_deref())?;
    let mut notes = Vec::new();
    if let Some(n) = crate::run::uncalibrated_host_note(&machine, a.costs.as_deref()) {
        notes.push(n.trim_start_matches("# wakesim: ").to_string());
    }
    let (text, shown, roots, what, on) = match &a.import {
        Some(path) => {
            if !a.command.is_empty() {
                return Err(UserError("--import converts a recording made elsewhere; it takes no command after `--`".into()));
            }
            if !a.pid.is_empty() && !a.comm.is_empty() {
                return Err(UserError("give the workload's tasks by --pid or by --comm, not both".into()));
            }
            let text = crate::replay::read_text(path)?;
            let roots = if !a.pid.is_empty() {
                Some(Roots::Pids(a.pid.clone()))
            } else if !a.comm.is_empty() {
                Some(Roots::Comms(a.comm.clone()))
            } else {
                None
            };
            let shown = path.display().to_string();
            let what = format!("the recording {}", file_name(path));
            (text, shown, roots, what, "the machine it was made on".to_string())
        }
        None => {
            if a.command.is_empty() {
                return Err(UserError("wakesim record needs the command after `--` (e.g. `wakesim record -o run.toml -- perf bench sched messaging -g 1`), or --import TRACE".into()));
            }
            if !a.pid.is_empty() || !a.comm.is_empty() {
                return Err(UserError("--pid and --comm choose the tasks of an --import; a live recording takes the command and everything it forks".into()));
            }
            let optional = optional_events();
            let lock_log = if a.no_lock_log { None } else { Some(locklog::LockLog::create()?) };
            let env = lock_log.as_ref().map(locklog::LockLog::env).unwrap_or_default();
            // The lock log's CLOCK_MONOTONIC is tracefs's `mono`.
            let clocks: &[&str] = if lock_log.is_some() { &["mono", "global"] } else { &["global"] };
            let mut c = capture(&a.command, &Setup { events: &EVENTS, optional: &optional, options: &["record-tgid"], clocks, env: &env })?;
            if lock_log.is_some() && c.clock != "mono" {
                notes.push("this kernel's tracefs has no mono clock, the lock log's: its mutexes are futex pairs".into());
            } else if let Some(l) = &lock_log {
                let (lines, n) = l.lines()?;
                c.text.push_str(&lines);
                if n == 0 {
                    notes.push("the lock log has no pthread mutex calls (a program without them, or not dynamically linked with glibc)".into());
                }
            }
            if c.missing.iter().any(|e| e.starts_with("syscalls/")) {
                let n = c.missing.iter().filter(|e| e.starts_with("syscalls/")).count();
                notes.push(format!("this kernel lacks {n} of the syscall events (CONFIG_FTRACE_SYSCALLS?): blocks without a known syscall become futex waits"));
            }
            if let Some(k) = &a.keep_trace {
                write_atomic(k, &c.text)?;
            }
            // Where it was recorded: this machine, whatever --machine chose the costs from.
            let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
            let on = match wakesim_machine::host() {
                Ok(h) => format!("this machine ({} CPUs), kernel {}", h.nr_cpus(), kernel.trim()),
                Err(_) => format!("this machine, kernel {}", kernel.trim()),
            };
            (c.text, "the trace".to_string(), Some(Roots::Pids(vec![c.root_pid])), format!("`{}`", a.command.join(" ")), on)
        }
    };
    let rec = events::parse(&text, &shown).map_err(UserError)?;
    drop(text);
    if !rec.events.iter().any(|e| matches!(e.kind, events::Kind::Switch { .. })) {
        return Err(UserError(format!("{shown}: not a scheduler recording: no sched_switch events ({} event lines)", rec.events.len())));
    }
    let Some(roots) = roots else {
        let busy: Vec<String> = convert::busiest_comms(&rec, 6).iter().map(|(c, n)| format!("{c} ({n} task{})", if *n == 1 { "" } else { "s" })).collect();
        return Err(UserError(format!(
            "{shown}: which tasks are the workload? give --comm NAME or --pid PID (the busiest comms here: {})",
            busy.join(", ")
        )));
    };
    let sel = convert::select(&rec, &roots);
    let conv = convert::convert(&rec, sel, a.others);
    if conv.tasks.is_empty() {
        let which = match &roots {
            Roots::Pids(p) => format!("pid {}", p.iter().map(u32::to_string).collect::<Vec<_>>().join(",")),
            Roots::Comms(c) => format!("comm {}", c.join(",")),
        };
        return Err(UserError(format!("{shown}: no task of {which} in the recording")));
    }
    if let Some(why) = convert::stuck(&conv) {
        notes.push(format!("the converted programs cannot all finish ({why}): a wakesim bug; the replay will stop at --duration"));
    }
    let stem = a.output.file_stem().map_or("recording".into(), |s| s.to_string_lossy().into_owned());
    let origin = emit::Origin { what, machine: on, format: rec.format.name(), name: stem };
    let charges = emit::Charges::new(&costs);
    let (toml, excess) = emit::task_file(&conv, &charges, &origin);
    // What is written must load: a failure here is a bug, reported rather than written.
    wakesim_workloads::from_toml_str(&toml, &a.output.display().to_string())
        .map_err(|e| UserError(format!("the task file made from {shown} does not load (a wakesim bug): {e}")))?;
    write_atomic(&a.output, &toml)?;
    let f = &conv.figures;
    crate::outln!(
        "wakesim record: {} tasks, run time {:.6} s, wakeups {}, migrations {}, voluntary switches {}, CPU time {:.6} s",
        f.tasks,
        f.run_ns as f64 / 1e9,
        f.wakeups,
        f.migrations,
        f.voluntary,
        f.cpu_ns as f64 / 1e9
    );
    let blocks: Vec<String> = f.blocks.iter().map(|(k, v)| format!("{k} {v}")).collect();
    crate::outln!(
        "blocks: {}; forks {}; pipes and sockets {} ({} reads and writes)",
        if blocks.is_empty() { "none".into() } else { blocks.join(", ") },
        f.forks,
        f.channels,
        f.channel_ops
    );
    if f.run_ns > 0 && f.other_ns * 20 > f.run_ns {
        notes.push(format!(
            "other tasks used {:.0} % of a CPU during the recorded run; {}",
            100.0 * f.other_ns as f64 / f.run_ns as f64,
            if a.others { "the replay has them as background tasks (other.*)" } else { "the replay runs without them (--others adds them)" }
        ));
    }
    if excess > 0 {
        notes.push(format!(
            "the kernel work the '{}' profile charges exceeds the recorded CPU time by {:.3} ms in all: the replay will run that much more kernel time",
            costs.name,
            excess as f64 / 1e6
        ));
    }
    for n in notes {
        crate::outln!("note: {n}");
    }
    crate::outln!("wrote {} ({} KB); replay it: wakesim run --machine {} --tasks {}", a.output.display(), toml.len().div_ceil(1024), a.machine, a.output.display());
    Ok(())
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
}
