//! The tracefs text parser: `cat /sys/kernel/tracing/trace` lines of the six events the replay
//! reads (`sched_switch`, `sched_wakeup[_new]`, `sched_stat_runtime`, `sched_migrate_task`,
//! `ipi_send_cpu`).
//!
//! A line is `<comm>-<pid> [<cpu>] <flags> <secs.usecs>: <event>: <fields>`. The comm before the
//! header may contain spaces and dashes (`kworker/0:2-vir`, `Web Content`), so the header is
//! found as the first ` [<cpu>] ` whose left side ends in `-<pid>`; comms inside the fields
//! (`prev_comm=`, `comm=`) are likewise taken up to the last ` <field>=` that follows them.

/// What one event line says. Pids are kernel pids (0 is the idle task).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Switch {
        prev_comm: String,
        prev_pid: u32,
        prev_state: String,
        next_comm: String,
        next_pid: u32,
    },
    Wakeup {
        comm: String,
        pid: u32,
        target: u32,
        new: bool,
    },
    Runtime {
        comm: String,
        pid: u32,
        runtime: u64,
    },
    Migrate {
        comm: String,
        pid: u32,
        orig: u32,
        dest: u32,
    },
    Ipi {
        cpu: u32,
        callsite: String,
    },
    /// Any other event (kept for the event count and the --show history).
    Other(String),
}

/// One event line: who emitted it (the task running on `cpu`), where, when, what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub comm: String,
    pub pid: u32,
    pub cpu: u32,
    /// Timestamp in µs (tracefs prints `secs.usecs`).
    pub ts_us: u64,
    pub event: Event,
    /// The text after `<event>: `, for the --show history.
    pub text: String,
}

/// A parsed trace: its event lines in file (= global) order.
#[derive(Debug, Default)]
pub struct Trace {
    pub lines: Vec<Line>,
    /// Lines that were neither comments nor parseable events.
    pub malformed: usize,
    /// `#P:<n>` from the header, if present.
    pub header_cpus: Option<u32>,
}

/// The CPU count a tracefs header comment gives (`# entries-in-buffer/entries-written: … #P:4`).
pub fn header_cpus(comment: &str) -> Option<u32> {
    comment.find("#P:").and_then(|i| comment[i + 3..].trim().parse().ok())
}

pub fn parse_trace(text: &str) -> Trace {
    let mut t = Trace::default();
    for l in text.lines() {
        let s = l.trim();
        if s.is_empty() {
            continue;
        }
        if s.starts_with('#') {
            if s.contains("#P:") {
                t.header_cpus = header_cpus(s);
            }
            continue;
        }
        match parse_line(l) {
            Some(line) => t.lines.push(line),
            None => t.malformed += 1,
        }
    }
    t
}

/// One line, or None if it is not an event line of the tracefs text format.
pub fn parse_line(l: &str) -> Option<Line> {
    let (comm, pid, cpu, rest) = header(l)?;
    // rest: "<flags> <secs.usecs>: <event>: <fields>"
    let rest = rest.trim_start();
    let (flags, rest) = rest.split_once(' ')?;
    if flags.is_empty() || flags.contains(':') {
        return None;
    }
    let rest = rest.trim_start();
    let (ts, rest) = rest.split_once(": ")?;
    let ts_us = timestamp_us(ts)?;
    let (name, fields) = match rest.split_once(": ") {
        Some((n, f)) => (n, f),
        None => (rest.strip_suffix(':')?, ""),
    };
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let event = event(name, fields)?;
    Some(Line {
        comm: comm.to_string(),
        pid,
        cpu,
        ts_us,
        event,
        text: format!("{name}: {fields}"),
    })
}

/// `<comm>-<pid> [<cpu>]`: the first ` [digits] ` preceded by `-digits`.
fn header(l: &str) -> Option<(&str, u32, u32, &str)> {
    let mut from = 0;
    while let Some(off) = l[from..].find(" [") {
        let i = from + off;
        from = i + 2;
        let after = &l[i + 2..];
        let Some(close) = after.find(']') else { break };
        let cpu = &after[..close];
        if cpu.is_empty() || !cpu.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let left = l[..i].trim_end();
        let Some(dash) = left.rfind('-') else {
            continue;
        };
        let pid = &left[dash + 1..];
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let comm = left[..dash].trim_start();
        let rest = &after[close + 1..];
        if !rest.starts_with(' ') {
            continue;
        }
        return Some((comm, pid.parse().ok()?, cpu.parse().ok()?, rest));
    }
    None
}

/// `52301.752864` → µs.
fn timestamp_us(ts: &str) -> Option<u64> {
    let (s, us) = ts.split_once('.')?;
    if s.is_empty() || us.len() != 6 || !s.bytes().chain(us.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(s.parse::<u64>().ok()? * 1_000_000 + us.parse::<u64>().ok()?)
}

/// The value of `key=` in `fields`, up to the next space (`key` must start a field).
pub(crate) fn field<'a>(fields: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("{key}=");
    let mut from = 0;
    loop {
        let i = from + fields[from..].find(&pat)?;
        if i == 0 || fields.as_bytes()[i - 1] == b' ' {
            let v = &fields[i + pat.len()..];
            return Some(v.split(' ').next().unwrap_or(""));
        }
        from = i + 1;
    }
}

pub(crate) fn num<T: std::str::FromStr>(fields: &str, key: &str) -> Option<T> {
    field(fields, key)?.parse().ok()
}

/// A comm field: `comm=` up to the last ` <next>=` (comms may contain spaces).
pub(crate) fn comm_before<'a>(fields: &'a str, key: &str, next: &str) -> Option<&'a str> {
    let start = fields.find(&format!("{key}="))? + key.len() + 1;
    let end = fields.rfind(&format!(" {next}="))?;
    (end >= start).then(|| &fields[start..end])
}

fn event(name: &str, f: &str) -> Option<Event> {
    Some(match name {
        "sched_switch" => {
            let (prev, next) = f.split_once(" ==> ")?;
            Event::Switch {
                prev_comm: comm_before(prev, "prev_comm", "prev_pid")?.to_string(),
                prev_pid: num(prev, "prev_pid")?,
                prev_state: field(prev, "prev_state")?.to_string(),
                next_comm: comm_before(next, "next_comm", "next_pid")?.to_string(),
                next_pid: num(next, "next_pid")?,
            }
        }
        "sched_wakeup" | "sched_wakeup_new" => Event::Wakeup {
            comm: comm_before(f, "comm", "pid")?.to_string(),
            pid: num(f, "pid")?,
            target: num(f, "target_cpu")?,
            new: name == "sched_wakeup_new",
        },
        "sched_stat_runtime" => Event::Runtime {
            comm: comm_before(f, "comm", "pid")?.to_string(),
            pid: num(f, "pid")?,
            runtime: num(f, "runtime")?,
        },
        "sched_migrate_task" => Event::Migrate {
            comm: comm_before(f, "comm", "pid")?.to_string(),
            pid: num(f, "pid")?,
            orig: num(f, "orig_cpu")?,
            dest: num(f, "dest_cpu")?,
        },
        "ipi_send_cpu" => Event::Ipi {
            cpu: num(f, "cpu")?,
            callsite: field(f, "callsite")?.to_string(),
        },
        _ => Event::Other(name.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comm_with_dashes_and_spaces_is_taken_whole() {
        let l = "   Web Content-x-12-1598    [001] d..4. 52301.752875: sched_stat_runtime: comm=Web Content-x pid=1599 runtime=4322 [ns]";
        let p = parse_line(l).unwrap();
        assert_eq!(
            (p.comm.as_str(), p.pid, p.cpu, p.ts_us),
            ("Web Content-x-12", 1598, 1, 52301752875)
        );
        assert_eq!(
            p.event,
            Event::Runtime {
                comm: "Web Content-x".into(),
                pid: 1599,
                runtime: 4322
            }
        );
    }

    #[test]
    fn the_idle_task_is_pid_0_and_a_switch_names_both_sides() {
        let l = "          <idle>-0       [001] d.s2. 52301.744698: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kworker/1:0-mm percpu_wq next_pid=44 next_prio=120";
        let p = parse_line(l).unwrap();
        assert_eq!((p.comm.as_str(), p.pid, p.cpu), ("<idle>", 0, 1));
        let want = Event::Switch {
            prev_comm: "swapper/1".into(),
            prev_pid: 0,
            prev_state: "R".into(),
            next_comm: "kworker/1:0-mm percpu_wq".into(),
            next_pid: 44,
        };
        assert_eq!(p.event, want);
    }

    #[test]
    fn malformed_lines_are_counted_not_parsed() {
        let t = parse_trace(
            "# tracer: nop\n#P:2\nnot a line\n  x-1 [000] d..2. 1.5: sched_switch: prev_comm=x\n",
        );
        assert_eq!((t.lines.len(), t.malformed, t.header_cpus), (0, 2, Some(2)));
    }
}
