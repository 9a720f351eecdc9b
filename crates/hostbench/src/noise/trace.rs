//! Reading a tracefs text trace into interferences: what took each CPU from the thread that
//! had it, for how long.
//!
//! Two kinds of trace are read:
//!
//! * the generic events (`irq:irq_handler_entry/exit`, `irq:softirq_entry/exit`,
//!   `irq_vectors:*_entry/exit`, `sched:sched_switch`): entry and exit pairs become interrupts
//!   and softirqs, net of the interrupts nested in them (as the osnoise tracer counts, "net
//!   values"); the time between a thread's `sched_switch` in and out becomes a run of that
//!   thread, net of the interrupts inside, and a switch out in a sleeping state (anything but
//!   `R`/`R+`) ends its activation;
//! * the osnoise tracer's events (`irq_noise`, `softirq_noise`, `thread_noise`, `nmi_noise`,
//!   `sample_threshold`) and its per-CPU summary lines, which already are interferences
//!   (`include/trace/events/osnoise.h`); a `sample_threshold` with no interference is
//!   hardware noise (on a virtual machine, the hypervisor).
//!
//! Timestamps in the text are µs (`8319.196217:`); the osnoise events' `start` fields are ns.

use std::collections::BTreeMap;

/// What took the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A hard interrupt: a device's handler or an APIC vector (`local_timer`, `call_function`, …).
    Irq,
    Softirq,
    Nmi,
    /// Another thread ran.
    Thread,
    /// A gap in the CPU's time that no kernel event explains: hardware noise (SMIs) or, on a
    /// virtual machine, the hypervisor running something else on the physical CPU. Without a
    /// tracer, every interruption of the self-timing loop.
    Gap,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Irq => "irq",
            Kind::Softirq => "softirq",
            Kind::Nmi => "nmi",
            Kind::Thread => "thread",
            Kind::Gap => "gap",
        }
    }
}

/// One interference: `dur` ns of `cpu` taken by `name` from `start`.
#[derive(Clone, Debug, PartialEq)]
pub struct Interference {
    pub cpu: usize,
    pub kind: Kind,
    /// Interrupt name (`virtio2-input.0`, `local_timer`), softirq action (`TIMER`), or the
    /// thread's comm.
    pub name: String,
    /// The thread's pid (threads only; else -1).
    pub pid: i32,
    /// The thread's kernel priority (`prio` of sched_switch: 100–139 fair, nice = prio − 120;
    /// below 100 real-time); 120 where the trace does not say.
    pub prio: i32,
    pub start: u64,
    pub dur: u64,
    /// A thread's run that ended with the thread going to sleep (its activation is over); a run
    /// that ended in a preemption continues at its next switch in. Always true for the rest.
    pub ends_activation: bool,
}

/// The osnoise tracer's per-CPU summary of one period.
#[derive(Clone, Debug, PartialEq)]
pub struct OsnoiseSummary {
    pub cpu: usize,
    pub runtime_us: u64,
    pub noise_us: u64,
    pub max_single_us: u64,
    pub hw: u64,
    pub nmi: u64,
    pub irq: u64,
    pub softirq: u64,
    pub thread: u64,
}

/// A trace read into interferences.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub interferences: Vec<Interference>,
    /// Every event's timestamp per CPU, sorted: a gap of the self-timing loop with none inside
    /// is not the kernel's doing.
    pub stamps: BTreeMap<usize, Vec<u64>>,
    pub summaries: Vec<OsnoiseSummary>,
    /// Lines read as events.
    pub events: usize,
}

impl Trace {
    /// Whether any event on `cpu` lies in `[from, to]`.
    pub fn any_event(&self, cpu: usize, from: u64, to: u64) -> bool {
        let Some(v) = self.stamps.get(&cpu) else { return false };
        let i = v.partition_point(|&t| t < from);
        i < v.len() && v[i] <= to
    }
}

/// One event line: `TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: BODY` (FLAGS may be absent).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line<'a> {
    pub task: &'a str,
    pub cpu: usize,
    pub ts: u64,
    pub event: &'a str,
    pub body: &'a str,
}

/// `8319.196217` or `5789.857529929` (seconds) → ns.
pub fn parse_secs(s: &str) -> Option<u64> {
    let (sec, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let sec: u64 = sec.parse().ok()?;
    let frac_ns: u64 = if frac.is_empty() { 0 } else { frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32) };
    sec.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// Splits an event line; `None` for comments and anything else.
pub fn parse_line(l: &str) -> Option<Line<'_>> {
    if l.trim_start().starts_with('#') {
        return None;
    }
    // The CPU field is the first `[digits]`: a comm may hold spaces or brackets, but a task's
    // `comm-pid` ends in digits, not `]`.
    let mut from = 0;
    let (open, close, cpu) = loop {
        let i = from + l[from..].find('[')?;
        let j = i + l[i..].find(']')?;
        let inner = &l[i + 1..j];
        if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit()) {
            break (i, j, inner.parse().ok()?);
        }
        from = i + 1;
    };
    let rest = &l[close + 1..];
    // Tokens up to the timestamp (`81.637220:`): the flags, if printed.
    let mut pos = 0;
    let ts = loop {
        let r = &rest[pos..];
        let start = r.len() - r.trim_start().len();
        let tok_len = r[start..].find(char::is_whitespace).unwrap_or(r.len() - start);
        if tok_len == 0 {
            return None;
        }
        let tok = &r[start..start + tok_len];
        pos += start + tok_len;
        if let Some(t) = tok.strip_suffix(':').and_then(parse_secs) {
            break t;
        }
    };
    let after = rest[pos..].trim_start();
    // The event name (`sched_switch:`), or none on the osnoise summary line.
    let (event, body) = match after.split_once(": ") {
        Some((e, b)) if !e.is_empty() && e.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') => (e, b),
        _ => match after.strip_suffix(':') {
            Some(e) if !e.contains(' ') => (e, ""),
            _ => ("", after),
        },
    };
    Some(Line { task: l[..open].trim(), cpu, ts, event, body })
}

/// The whitespace-delimited value after `key=`.
fn value<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    let mut from = 0;
    loop {
        let i = from + body[from..].find(key)?;
        let at_word = i == 0 || body.as_bytes()[i - 1] == b' ' || body.as_bytes()[i - 1] == b'[';
        let v = &body[i + key.len()..];
        if at_word && v.starts_with('=') {
            let v = &v[1..];
            return Some(&v[..v.find(|c: char| c.is_whitespace() || c == ']').unwrap_or(v.len())]);
        }
        from = i + key.len();
    }
}

/// The value after `key=` up to ` next=`: a comm, which may hold spaces.
fn value_until<'a>(body: &'a str, key: &str, next: &str) -> Option<&'a str> {
    let i = body.find(&format!("{key}="))? + key.len() + 1;
    let j = i + body[i..].find(&format!(" {next}="))?;
    Some(&body[i..j])
}

/// `... start 5789.857529929 duration 1845 ns ...` → (start, duration) in ns.
fn start_duration(body: &str) -> Option<(u64, u64)> {
    let mut it = body.split_whitespace();
    let (mut start, mut dur) = (None, None);
    while let Some(w) = it.next() {
        match w {
            "start" => start = it.next().and_then(parse_secs),
            "duration" => dur = it.next().and_then(|d| d.parse().ok()),
            _ => {}
        }
    }
    Some((start?, dur?))
}

/// An open interrupt or softirq on a CPU.
struct Frame {
    kind: Kind,
    name: String,
    key: i64,
    start: u64,
    /// Time of the interrupts nested inside, ns.
    nested: u64,
}

/// The thread running on a CPU since `start`.
struct Running {
    pid: i32,
    comm: String,
    prio: i32,
    start: u64,
    nested: u64,
}

#[derive(Default)]
struct CpuState {
    stack: Vec<Frame>,
    running: Option<Running>,
}

/// Reads a tracefs text trace (generic events, osnoise events, or both).
pub fn parse_trace(text: &str) -> Trace {
    let mut t = Trace::default();
    let mut cpus: BTreeMap<usize, CpuState> = BTreeMap::new();
    for l in text.lines() {
        let Some(line) = parse_line(l) else { continue };
        t.events += 1;
        t.stamps.entry(line.cpu).or_default().push(line.ts);
        let st = cpus.entry(line.cpu).or_default();
        let b = line.body;
        let ev = line.event;
        let open = |kind, name: String, key| Frame { kind, name, key, start: line.ts, nested: 0 };
        match ev {
            "irq_handler_entry" => {
                // The name runs to the end of the line (it may hold spaces).
                let (Some(irq), Some((_, name))) = (value(b, "irq").and_then(|v| v.parse().ok()), b.split_once("name=")) else { continue };
                let name = name.trim();
                st.stack.push(open(Kind::Irq, name.to_string(), irq));
            }
            "irq_handler_exit" => {
                if let Some(irq) = value(b, "irq").and_then(|v| v.parse().ok()) {
                    close(st, Kind::Irq, irq, line, &mut t.interferences);
                }
            }
            "softirq_entry" | "softirq_exit" => {
                let (Some(vec), Some(action)) = (value(b, "vec").and_then(|v| v.parse().ok()), value(b, "action")) else { continue };
                if ev == "softirq_entry" {
                    st.stack.push(open(Kind::Softirq, action.to_string(), vec));
                } else {
                    close(st, Kind::Softirq, vec, line, &mut t.interferences);
                }
            }
            "sched_switch" => switch(st, line, &mut t.interferences),
            "irq_noise" | "softirq_noise" | "thread_noise" | "nmi_noise" | "sample_threshold" => {
                if let Some(i) = osnoise_event(line) {
                    t.interferences.push(i);
                }
            }
            "" => {
                if let Some(s) = osnoise_summary(line) {
                    t.summaries.push(s);
                }
            }
            // irq_vectors: `local_timer_entry: vector=236`, `call_function_single_exit: …`.
            e => {
                let Some(vector) = value(b, "vector").and_then(|v| v.parse::<i64>().ok()) else { continue };
                if let Some(name) = e.strip_suffix("_entry") {
                    st.stack.push(open(Kind::Irq, name.to_string(), 10_000 + vector));
                } else if e.ends_with("_exit") {
                    close(st, Kind::Irq, 10_000 + vector, line, &mut t.interferences);
                }
            }
        }
    }
    for v in t.stamps.values_mut() {
        v.sort_unstable();
    }
    t.interferences.sort_by_key(|i| (i.start, i.cpu));
    t
}

/// Closes the innermost open frame of `kind` and `key` (frames opened above it whose exit was
/// lost are dropped) as an interference, net of what was nested in it.
fn close(st: &mut CpuState, kind: Kind, key: i64, line: Line, out: &mut Vec<Interference>) {
    let Some(i) = st.stack.iter().rposition(|f| f.kind == kind && f.key == key) else { return };
    st.stack.truncate(i + 1);
    let f = st.stack.pop().expect("frame i exists");
    let total = line.ts.saturating_sub(f.start);
    match st.stack.last_mut() {
        Some(outer) => outer.nested += total,
        None => {
            if let Some(r) = &mut st.running {
                r.nested += total;
            }
        }
    }
    out.push(Interference { cpu: line.cpu, kind, name: f.name, pid: -1, prio: 120, start: f.start, dur: total.saturating_sub(f.nested), ends_activation: true });
}

/// `prev_comm=bash prev_pid=22494 prev_prio=120 prev_state=S ==> next_comm=bash next_pid=22496 next_prio=120`
fn switch(st: &mut CpuState, line: Line, out: &mut Vec<Interference>) {
    let b = line.body;
    let prev_pid: Option<i32> = value(b, "prev_pid").and_then(|v| v.parse().ok());
    let state = b.split_once("prev_state=").map(|(_, s)| s.split_whitespace().next().unwrap_or("")).unwrap_or("");
    if let (Some(r), Some(pp)) = (st.running.take(), prev_pid) {
        if r.pid == pp {
            let dur = line.ts.saturating_sub(r.start).saturating_sub(r.nested);
            out.push(Interference { cpu: line.cpu, kind: Kind::Thread, name: r.comm, pid: r.pid, prio: r.prio, start: r.start, dur, ends_activation: !state.starts_with('R') });
        }
    }
    let next_comm = value_until(b, "next_comm", "next_pid");
    let next_pid: Option<i32> = value(b, "next_pid").and_then(|v| v.parse().ok());
    let next_prio: i32 = value(b, "next_prio").and_then(|v| v.parse().ok()).unwrap_or(120);
    st.running = match (next_comm, next_pid) {
        (Some(c), Some(p)) if p != 0 => Some(Running { pid: p, comm: c.to_string(), prio: next_prio, start: line.ts, nested: 0 }),
        _ => None,
    };
}

fn osnoise_event(line: Line) -> Option<Interference> {
    let (start, dur) = start_duration(line.body)?;
    let head = line.body.split(" start ").next().unwrap_or("").trim();
    let mk = |kind, name: &str, pid| Interference { cpu: line.cpu, kind, name: name.to_string(), pid, prio: 120, start, dur, ends_activation: true };
    Some(match line.event {
        // `local_timer:236`, `TIMER:1`: name, then the vector.
        "irq_noise" => mk(Kind::Irq, head.rsplit_once(':').map_or(head, |x| x.0), -1),
        "softirq_noise" => mk(Kind::Softirq, head.rsplit_once(':').map_or(head, |x| x.0).trim(), -1),
        // `migration/8:54`: comm (which may hold a colon, `kworker/0:1`), then the pid.
        "thread_noise" => {
            let (comm, pid) = head.rsplit_once(':')?;
            mk(Kind::Thread, comm.trim(), pid.parse().ok()?)
        }
        "nmi_noise" => mk(Kind::Nmi, "NMI", -1),
        // A noise sample with no interference counted: hardware (or hypervisor) noise.
        "sample_threshold" => {
            let n: u64 = line.body.split_whitespace().skip_while(|w| !w.starts_with("interference")).nth(1)?.parse().ok()?;
            if n != 0 {
                return None;
            }
            mk(Kind::Gap, "hardware or hypervisor", -1)
        }
        _ => return None,
    })
}

/// `1000000 190 99.98100 9 18 0 1007 18 1`: runtime, noise, % available, max single, then the
/// HW, NMI, IRQ, softirq and thread counters.
fn osnoise_summary(line: Line) -> Option<OsnoiseSummary> {
    let w: Vec<&str> = line.body.split_whitespace().collect();
    if w.len() != 9 {
        return None;
    }
    let n = |i: usize| w[i].parse::<u64>().ok();
    w[2].parse::<f64>().ok()?;
    Some(OsnoiseSummary {
        cpu: line.cpu,
        runtime_us: n(0)?,
        noise_us: n(1)?,
        max_single_us: n(3)?,
        hw: n(4)?,
        nmi: n(5)?,
        irq: n(6)?,
        softirq: n(7)?,
        thread: n(8)?,
    })
}
