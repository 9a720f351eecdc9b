//! Writing the converted recording as a task file (crates/workloads/FORMAT.md), with compute
//! bursts net of the kernel work the model charges itself.
//!
//! A step's measured CPU time (from the previous step) includes the kernel's own work around
//! the two ops: the system calls, the wakeups they do, the switches out and back in. The model
//! charges that work from the cost profile when it runs the ops, so each burst is the measured
//! time minus the model's charges for the op before it (its part after the point: the wakeup it
//! does, the switch back in and a woken read's copy) and the op after it (its part before the
//! point: the syscall, the channel or futex work, the switch out). A burst the charges exceed is
//! dropped and the excess carried into the next one, so a task's total stays its measured CPU
//! time wherever the profile allows.

use super::convert::{Act, ChanOut, Converted, Step};
use std::fmt::Write;
use wakesim_costs::CostProfile;
use wakesim_workloads::ChanKind;

/// The model's kernel work per op, from a cost profile (ns).
#[derive(Clone, Debug)]
pub struct Charges {
    syscall: u64,
    /// A try_to_wake_up() done by the waker: ttwu, select_task_rq, enqueue.
    wake: u64,
    /// A block: dequeue, pick, and half a context switch (the other half is the switch in).
    block: u64,
    half_switch: u64,
    futex_wait: u64,
    futex_wake: u64,
    c: CostProfile,
}

impl Charges {
    pub fn new(c: &CostProfile) -> Self {
        let half_switch = (c.context_switch + c.context_switch_mm / 2) / 2;
        Charges {
            syscall: c.syscall,
            wake: c.rq_lock + c.ttwu_base + c.select_base + c.enqueue,
            block: c.dequeue + c.pick + half_switch,
            half_switch,
            futex_wait: c.futex_wait,
            futex_wake: c.futex_wake,
            c: c.clone(),
        }
    }

    fn chan_costs(&self, kind: ChanKind) -> (u64, u64, u64) {
        let c = &self.c;
        match kind {
            ChanKind::Pipe => (c.pipe_send, c.pipe_recv, c.pipe_wait),
            ChanKind::UnixStream => (c.unix_send, c.unix_recv, c.sock_wait),
            ChanKind::TcpLoopback => (c.tcp_send, c.tcp_recv, c.sock_wait),
            ChanKind::UdpLoopback => (c.udp_send, c.udp_recv, c.sock_wait),
        }
    }

    /// The op's work before its point (charged to the burst before it).
    pub fn pre(&self, a: &Act, chans: &[ChanOut]) -> u64 {
        match *a {
            Act::Post { .. } => self.syscall + self.futex_wake,
            Act::Wait { spawn: true, .. } => 0,
            Act::Wait { .. } => self.syscall + self.futex_wait + self.block,
            Act::Send { chan, bytes, blocks: false, .. } => self.syscall + self.c.copy(bytes) + self.chan_costs(chans[chan].kind).0,
            Act::Send { chan, blocks: true, .. } => self.syscall + self.chan_costs(chans[chan].kind).2 + self.block,
            Act::Recv { chan, bytes, blocks: false } => self.syscall + self.c.copy(bytes) + self.chan_costs(chans[chan].kind).1,
            Act::Recv { chan, blocks: true, .. } => self.syscall + self.chan_costs(chans[chan].kind).2 + self.block,
            Act::Sleep { .. } => self.syscall + self.block,
            // A free mutex is user space only (the model's `pthread_mutex`).
            Act::Lock { blocks: false, .. } | Act::Unlock { syscall: false, .. } => 0,
            Act::Lock { blocks: true, .. } => self.syscall + self.futex_wait + self.block,
            Act::Unlock { syscall: true, .. } => self.syscall + self.futex_wake,
        }
    }

    /// The op's work after its point (charged to the burst after it).
    pub fn post(&self, a: &Act, chans: &[ChanOut]) -> u64 {
        let wake = |w: bool| if w { self.wake } else { 0 };
        match *a {
            Act::Post { .. } => self.wake,
            Act::Send { blocks: false, wakes, .. } => wake(wakes),
            Act::Send { chan, bytes, blocks: true, wakes } => self.half_switch + self.c.copy(bytes) + self.chan_costs(chans[chan].kind).0 + wake(wakes),
            Act::Wait { spawn: true, .. } | Act::Recv { blocks: false, .. } => 0,
            Act::Wait { .. } | Act::Sleep { .. } => self.half_switch,
            Act::Recv { chan, bytes, blocks: true } => self.half_switch + self.c.copy(bytes) + self.chan_costs(chans[chan].kind).1,
            Act::Lock { blocks, .. } => if blocks { self.half_switch } else { 0 },
            Act::Unlock { wakes, .. } => wake(wakes),
        }
    }

    /// The exit's work.
    pub fn exit(&self) -> u64 {
        self.syscall
    }
}

/// Each step's compute burst before it (None: nothing left after the charges), and the last
/// burst before the exit; plus what the charges exceeded the measured time by in the end (ns).
pub fn bursts(steps: &[Step], end_cpu: u64, ch: &Charges, chans: &[ChanOut]) -> (Vec<Option<u64>>, Option<u64>, u64) {
    let (mut prev_cpu, mut prev_post, mut carry) = (0u64, 0u64, 0i64);
    let burst = |cpu: u64, pre: u64, prev_post: u64, prev_cpu: u64, carry: &mut i64| {
        let v = cpu.saturating_sub(prev_cpu) as i64 - prev_post as i64 - pre as i64 + *carry;
        if v >= 1 {
            *carry = 0;
            Some(v as u64)
        } else {
            *carry = v;
            None
        }
    };
    let mut out = Vec::with_capacity(steps.len());
    for s in steps {
        out.push(burst(s.cpu, ch.pre(&s.act, chans), prev_post, prev_cpu, &mut carry));
        prev_cpu = s.cpu;
        prev_post = ch.post(&s.act, chans);
    }
    let last = burst(end_cpu.max(prev_cpu), ch.exit(), prev_post, prev_cpu, &mut carry);
    (out, last, (-carry).max(0) as u64)
}

/// The largest single send or recv written: a larger read or write becomes several (every
/// kind's default capacity holds this much).
pub const MAX_OP_BYTES: u64 = 65536;

/// `send CH BYTES`, as several ops when BYTES is more than [`MAX_OP_BYTES`].
fn chunks(op: &str, chan: &str, bytes: u64) -> String {
    let mut v = Vec::new();
    let mut left = bytes;
    while left > MAX_OP_BYTES {
        v.push(format!("{op} {chan} {MAX_OP_BYTES}"));
        left -= MAX_OP_BYTES;
    }
    v.push(format!("{op} {chan} {left}"));
    v.join("\n")
}

/// `1.234us`: ns with three decimals of µs.
pub fn dur(ns: u64) -> String {
    format!("{}.{:03}us", ns / 1000, ns % 1000)
}

/// A task name: the comm (letters, digits, `._-` kept, others `_`) and the pid.
fn task_name(comm: &str, pid: u32) -> String {
    let c: String = comm.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
    format!("{c}-{pid}")
}

fn quote(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_control() => o.push(' '),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn kind_name(k: ChanKind) -> &'static str {
    match k {
        ChanKind::Pipe => "pipe",
        ChanKind::UnixStream => "unix",
        ChanKind::TcpLoopback => "tcp",
        ChanKind::UdpLoopback => "udp",
    }
}

/// What the file's header says about where the recording came from.
pub struct Origin {
    /// `perf bench sched messaging -g 1`, or `--import FILE`.
    pub what: String,
    /// The machine and kernel, where known.
    pub machine: String,
    pub format: &'static str,
    pub name: String,
}

/// The task file's text, and the total by which the model's charges exceeded measured bursts.
pub fn task_file(conv: &Converted, ch: &Charges, origin: &Origin) -> (String, u64) {
    let f = &conv.figures;
    let mut s = String::new();
    let _ = writeln!(s, "# Recorded by `wakesim record` from {} on {}.", origin.what, origin.machine);
    let _ = writeln!(
        s,
        "# Converted from {} with the cost profile '{}': each compute burst is the measured on-CPU time\n# between two ops minus the kernel work the model charges for them (docs/record.md).",
        origin.format, ch.c.name
    );
    let _ = writeln!(
        s,
        "# recorded: run_time_s={:.6} wakeups={} migrations={} voluntary_switches={} cpu_time_s={:.6} tasks={}",
        f.run_ns as f64 / 1e9,
        f.wakeups,
        f.migrations,
        f.voluntary,
        f.cpu_ns as f64 / 1e9,
        f.tasks
    );
    let blocks: Vec<String> = f.blocks.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(
        s,
        "# blocks: {}; forks {}; pipes and sockets {} ({} reads and writes); blocks without a recorded wakeup {}; blocked at the end {}",
        if blocks.is_empty() { "none".into() } else { blocks.join(", ") },
        f.forks,
        f.channels,
        f.channel_ops,
        f.unwoken,
        f.blocked_at_end
    );
    let _ = writeln!(s, "# other tasks ran {:.6} s of CPU time during the recorded run (load the replay does not have)", f.other_ns as f64 / 1e9);
    if !conv.syscalls {
        let _ = writeln!(s, "# The recording has no syscall events: every dependency is a futex (non-sync wakeups).");
    }
    let others = conv.tasks.iter().any(|t| t.background);
    if others {
        let _ = writeln!(
            s,
            "# With the machine's other tasks (`--others`): tasks named other.* in group \"other\", the workload's in\n# group \"workload\"; the elapsed time ends at the workload's last exit (mark 1)."
        );
    }
    let _ = writeln!(s, "name = {}", quote(&origin.name));
    if !conv.futexes.is_empty() {
        s.push_str("futexes = [\n");
        for fx in &conv.futexes {
            let _ = writeln!(s, "  {},", quote(fx));
        }
        s.push_str("]\n");
    }
    if others {
        s.push_str("\n[report]\nend_mark = 1\n");
    }
    for c in &conv.chans {
        let _ = write!(s, "\n[[channel]]\nname = {}\nkind = \"{}\"\n", quote(&c.name), kind_name(c.kind));
        if let Some(cap) = c.capacity {
            let _ = writeln!(s, "capacity = {cap}");
        }
    }
    let mut excess = 0;
    for t in &conv.tasks {
        let (b, last, over) = bursts(&t.steps, t.end_cpu, ch, &conv.chans);
        excess += over;
        let name = task_name(&t.comm, t.pid);
        let name = if t.background { format!("other.{name}") } else { name };
        let _ = write!(s, "\n[[task]]\nname = {}\n", quote(&name));
        if others {
            let _ = writeln!(s, "group = \"{}\"", if t.background { "other" } else { "workload" });
        }
        if let Some(g) = t.tgid {
            let _ = writeln!(s, "mm = \"{g}\"");
        }
        if let Some(n) = t.nice.filter(|&n| n != 0) {
            let _ = writeln!(s, "nice = {n}");
        }
        s.push_str("program = \"\"\"\n");
        for (step, c) in t.steps.iter().zip(b) {
            if let Some(c) = c {
                let _ = writeln!(s, "compute {}", dur(c));
            }
            let op = match step.act {
                Act::Post { futex } => format!("wake {}", conv.futexes[futex]),
                Act::Wait { futex, .. } => format!("wait {}", conv.futexes[futex]),
                Act::Send { chan, bytes, .. } => chunks("send", &conv.chans[chan].name, bytes),
                Act::Recv { chan, bytes, .. } => chunks("recv", &conv.chans[chan].name, bytes),
                Act::Sleep { ns } => format!("sleep {}", dur(ns)),
                Act::Lock { mutex, .. } => format!("lock {}", conv.mutexes[mutex]),
                Act::Unlock { mutex, .. } => format!("unlock {}", conv.mutexes[mutex]),
            };
            if step.note.is_empty() {
                let _ = writeln!(s, "{op}");
            } else {
                let _ = writeln!(s, "{op}  # {}", step.note);
            }
        }
        if let Some(c) = last {
            let _ = writeln!(s, "compute {}", dur(c));
        }
        if others && !t.background {
            s.push_str("mark 1\n");
        }
        s.push_str("exit\n\"\"\"\n");
    }
    (s, excess)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::convert::{convert, select, tests::synthetic_trace, Roots};
    use crate::record::events::parse;

    #[test]
    fn bursts_are_the_measured_time_minus_the_charges_and_the_total_is_kept() {
        let rec = parse(&synthetic_trace(), "t").unwrap();
        let c = convert(&rec, select(&rec, &Roots::Pids(vec![100])), false);
        let costs = wakesim_costs::profile_for("host").unwrap();
        let ch = Charges::new(&costs);
        let p = &c.tasks[0];
        let (b, last, excess) = bursts(&p.steps, p.end_cpu, &ch, &c.chans);
        // Nothing was clamped: the bursts and the charges add up to the measured 76 µs.
        assert_eq!(excess, 0);
        let charges: u64 = p.steps.iter().map(|s| ch.pre(&s.act, &c.chans) + ch.post(&s.act, &c.chans)).sum::<u64>() + ch.exit();
        let sum: u64 = b.iter().flatten().sum::<u64>() + last.unwrap();
        assert_eq!(sum + charges, 76_000);
        // The first burst: 10 µs to the fork, less the futex post's syscall and futex work.
        assert_eq!(b[0], Some(10_000 - costs.syscall - costs.futex_wake));
        // A burst the charges exceed is dropped and the excess carried on.
        let k = &c.tasks[1];
        let (b, last, excess) = bursts(&k.steps, k.end_cpu, &ch, &c.chans);
        assert_eq!(b[0], None, "the start of a forked task is free");
        assert!(last.is_none() && excess > 0, "{last:?} {excess}");
    }

    #[test]
    fn the_task_file_loads_and_says_what_was_recorded() {
        let rec = parse(&synthetic_trace(), "t").unwrap();
        let c = convert(&rec, select(&rec, &Roots::Pids(vec![100])), false);
        let ch = Charges::new(&wakesim_costs::profile_for("host").unwrap());
        let origin = Origin { what: "`app`".into(), machine: "a test".into(), format: "tracefs text", name: "syn".into() };
        let (text, _) = task_file(&c, &ch, &origin);
        assert!(text.contains("# recorded: run_time_s=0.001095 wakeups=4 migrations=0 voluntary_switches=4 cpu_time_s=0.000104 tasks=2\n"), "{text}");
        let ops: Vec<&str> = text.lines().filter(|l| !l.starts_with("compute ") && !l.starts_with('#')).skip_while(|l| !l.starts_with("name = \"app-101\"")).collect();
        assert_eq!(
            ops,
            [
                "name = \"app-101\"",
                "program = \"\"\"",
                "wait spawn.101  # fork",
                "recv ch.101.3 64  # read",
                "wait f.100.101  # futex",
                "recv ch.101.3 32",
                "sleep 1000.000us  # clock_nanosleep",
                "send c.101.100 1",
                "exit",
                "\"\"\"",
            ]
        );
        let w = wakesim_workloads::from_toml_str(&text, "syn.toml").unwrap();
        assert_eq!((w.tasks.len(), w.channels.len(), w.futexes), (2, 2, 2));
    }
}
