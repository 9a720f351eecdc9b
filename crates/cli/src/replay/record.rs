//! `wakesim replay --record -- CMD`: record CMD's scheduler events with tracefs, as the replay
//! needs them: `trace_clock=global` (the default per-CPU `local` clock reorders cross-CPU
//! events by microseconds), exactly the six events, CMD under `setsid` so that autogroup gives
//! its tasks their own task group. The previous clock, buffer size, options, events and
//! `tracing_on` are restored whatever happens; a trace that lost events is refused.
//! `wakesim record` records through the same [`capture`], with more events.

use crate::output::{check_writable, write_atomic};
use crate::UserError;
use std::path::{Path, PathBuf};

const EVENTS: [&str; 6] = [
    "sched/sched_switch",
    "sched/sched_wakeup",
    "sched/sched_wakeup_new",
    "sched/sched_stat_runtime",
    "sched/sched_migrate_task",
    "ipi/ipi_send_cpu",
];
/// Per-CPU ring buffer: 128 MiB held a 40-task `hackbench -l 300` (~63 k events, ~8 MB of text)
/// with room to spare; a lost event makes the recording refuse (see `record`).
const BUFFER_KB: &str = "131072";

fn tracefs_dir() -> PathBuf {
    std::env::var_os("WAKESIM_TRACEFS")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/sys/kernel/tracing".into())
}

struct Tracefs {
    dir: PathBuf,
    /// What to put back: (file, previous contents).
    restore: Vec<(PathBuf, String)>,
}

impl Tracefs {
    fn read(&self, f: &str) -> Result<String, UserError> {
        let p = self.dir.join(f);
        std::fs::read_to_string(&p)
            .map_err(|e| UserError(format!("cannot read {}: {e}", p.display())))
    }
    fn write(&self, f: &str, v: &str) -> Result<(), UserError> {
        let p = self.dir.join(f);
        std::fs::write(&p, v).map_err(|e| {
            let hint = if e.kind() == std::io::ErrorKind::PermissionDenied {
                " (recording needs root)"
            } else {
                ""
            };
            UserError(format!("cannot write {}: {e}{hint}", p.display()))
        })
    }
    /// Writes `v`, remembering the old value to restore.
    fn set(&mut self, f: &str, v: &str, old: String) -> Result<(), UserError> {
        self.restore.push((self.dir.join(f), old));
        self.write(f, v)
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join("tracing_on"), "0");
        for (p, v) in self.restore.drain(..).rev() {
            let _ = std::fs::write(p, v);
        }
    }
}

/// The selected value of a tracefs choice file: `[local] global counter` → `local`.
fn selected(s: &str) -> Option<&str> {
    let a = s.find('[')?;
    let b = s[a..].find(']')? + a;
    Some(&s[a + 1..b])
}

/// The per-CPU buffer size to restore: `1408`, or before first use `7 (expanded: 1408)`.
fn buffer_kb(s: &str) -> String {
    let s = s.trim();
    match s.split_once("(expanded:") {
        Some((_, e)) => e.trim_end_matches(')').trim().to_string(),
        None => s.split_whitespace().next().unwrap_or("1408").to_string(),
    }
}

/// The enable files of the events that are on (`events/<system>/<event>/enable` reading 1).
fn enabled_events(dir: &Path) -> Vec<PathBuf> {
    let mut on = Vec::new();
    let Ok(systems) = std::fs::read_dir(dir.join("events")) else {
        return on;
    };
    for sys in systems.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_dir()) {
        let Ok(events) = std::fs::read_dir(&sys) else { continue };
        for ev in events.filter_map(|e| e.ok()).map(|e| e.path().join("enable")) {
            if std::fs::read_to_string(&ev).is_ok_and(|v| v.trim() == "1") {
                on.push(ev);
            }
        }
    }
    on.sort();
    on
}

/// Events lost per CPU (`per_cpu/cpuN/stats`: `overrun`, `dropped events`).
fn lost_events(dir: &Path) -> Vec<String> {
    let mut lost = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir.join("per_cpu")) else {
        return lost;
    };
    let mut cpus: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    cpus.sort();
    for c in cpus {
        let Ok(s) = std::fs::read_to_string(c.join("stats")) else {
            continue;
        };
        for l in s.lines() {
            let Some((k, v)) = l.split_once(':') else {
                continue;
            };
            let k = k.trim();
            if (k == "overrun" || k == "dropped events") && v.trim().parse::<u64>().unwrap_or(0) > 0
            {
                let name = c
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                lost.push(format!("{name} {k} {}", v.trim()));
            }
        }
    }
    lost
}

pub fn record(cmd: &[String], out: &Path) -> Result<(), UserError> {
    if cmd.is_empty() {
        return Err(UserError("--record needs the command after `--`, e.g. `wakesim replay --record -- hackbench -g 1 -f 4 -l 1000`".into()));
    }
    check_writable(out)?;
    let c = capture(cmd, &Setup { events: &EVENTS, optional: &[], options: &[], clocks: &["global"], env: &[] })?;
    write_atomic(out, &c.text)
}

/// What a recording enables: `events` must exist; `optional` ones are enabled where this kernel
/// has them; `options` (e.g. `record-tgid`) are set to 1 where they exist. All restored after.
pub struct Setup<'a> {
    pub events: &'a [&'a str],
    pub optional: &'a [String],
    pub options: &'a [&'a str],
    /// Trace clocks by preference: the first this kernel has is used (`global`; `mono` is
    /// CLOCK_MONOTONIC, to merge with a user-space log).
    pub clocks: &'a [&'a str],
    /// Environment variables for the command.
    pub env: &'a [(String, String)],
}

/// A finished recording: the trace's text, the command's pid, the optional events this kernel
/// lacks.
pub struct Captured {
    pub text: String,
    pub root_pid: u32,
    pub missing: Vec<String>,
    /// The trace clock it used.
    pub clock: &'static str,
}

/// Runs `cmd` (under `setsid`) with tracefs recording `setup`'s events with the global clock;
/// refuses a run that failed or a trace that lost events. Nothing is left changed in tracefs.
pub fn capture(cmd: &[String], setup: &Setup) -> Result<Captured, UserError> {
    let dir = tracefs_dir();
    match std::fs::metadata(dir.join("trace")) {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(UserError(format!("cannot read {}: permission denied (recording needs root)", dir.display())));
        }
        Ok(m) if m.is_file() && dir.join("events").is_dir() => {}
        _ => {
            return Err(UserError(format!(
                "no tracefs at {} (mount it: mount -t tracefs nodev /sys/kernel/tracing, or set WAKESIM_TRACEFS)",
                dir.display()
            )))
        }
    }
    let mut t = Tracefs {
        dir: dir.clone(),
        restore: Vec::new(),
    };
    // Put back last of all (the restore list runs backwards): tracing as it was.
    let old_on = t.read("tracing_on")?.trim().to_string();
    t.set("tracing_on", "0", old_on)?;
    let clock = t.read("trace_clock")?;
    let old_clock = selected(&clock).unwrap_or("local").to_string();
    let has = |want: &str| clock.split_whitespace().any(|c| c.trim_matches(|x| x == '[' || x == ']') == want);
    let Some(&use_clock) = setup.clocks.iter().find(|c| has(c)) else {
        return Err(UserError(format!(
            "{}: this kernel has no {} trace clock",
            dir.join("trace_clock").display(),
            setup.clocks.join(" or ")
        )));
    };
    let use_clock: &'static str = if use_clock == "mono" { "mono" } else { "global" };
    t.set("trace_clock", use_clock, old_clock)?;
    let old_kb = buffer_kb(&t.read("buffer_size_kb")?);
    t.set("buffer_size_kb", BUFFER_KB, old_kb)?;
    let old_all = t.read("events/enable").unwrap_or_default();
    if old_all.trim() == "X" {
        // Some events were on: each of them is switched back on afterwards.
        for f in enabled_events(&dir) {
            t.restore.push((f, "1".into()));
        }
        t.write("events/enable", "0")?;
    } else {
        t.set(
            "events/enable",
            "0",
            if old_all.trim() == "1" {
                "1".into()
            } else {
                "0".into()
            },
        )?;
    }
    for o in setup.options {
        let f = format!("options/{o}");
        if let Ok(old) = t.read(&f) {
            t.set(&f, "1", old.trim().to_string())?;
        }
    }
    let mut missing = Vec::new();
    let optional = setup.optional.iter().map(String::as_str);
    for (e, required) in setup.events.iter().copied().map(|e| (e, true)).chain(optional.map(|e| (e, false))) {
        let f = format!("events/{e}/enable");
        let old = match t.read(&f) {
            Ok(o) => o.trim().to_string(),
            Err(_) if !required => {
                missing.push(e.to_string());
                continue;
            }
            Err(err) => return Err(err),
        };
        t.set(&f, "1", if old == "1" { "1".into() } else { "0".into() })?;
    }
    t.write("trace", "")?;
    t.write("tracing_on", "1")?;
    let mut child = std::process::Command::new("setsid")
        .arg("--wait")
        .args(cmd)
        .envs(setup.env.iter().map(|(k, v)| (k, v)))
        .spawn()
        .map_err(|e| UserError(format!("cannot run `setsid {}`: {e}", cmd.join(" "))))?;
    let root_pid = child.id();
    let status = child.wait().map_err(|e| UserError(format!("cannot wait for `{}`: {e}", cmd.join(" "))))?;
    t.write("tracing_on", "0")?;
    if !status.success() {
        return Err(UserError(format!(
            "`{}` failed ({status}); no trace written",
            cmd.join(" ")
        )));
    }
    let lost = lost_events(&dir);
    if !lost.is_empty() {
        return Err(UserError(format!(
            "the trace lost events ({}): record a shorter run; nothing written",
            lost.join(", ")
        )));
    }
    let text = t.read("trace")?;
    drop(t);
    Ok(Captured { text, root_pid, missing, clock: use_clock })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_size_to_restore_is_the_expanded_one() {
        assert_eq!(buffer_kb("1408\n"), "1408");
        assert_eq!(buffer_kb("7 (expanded: 1408)\n"), "1408");
        assert_eq!(selected("local [global] counter\n"), Some("global"));
    }
}
