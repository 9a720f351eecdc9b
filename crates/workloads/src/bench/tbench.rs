//! tbench (dbench's socket backend; `gormanm/dbench@ed505f4`, the fork mmtests builds, same
//! code as `sahlberg/dbench@a8e1c0f`): `tbench [options] NPROCS [server]` forks NPROCS clients,
//! each connected over loopback TCP to its own forked `tbench_srv` child. A client replays the
//! loadfile forever (`child_run`); every operation is one `do_packets(send, recv)` exchange
//! (`sockio.c`): write `send` bytes, read a 4-byte header, `recv(MSG_WAITALL)` the rest; the
//! server (`tbench_srv.c`) reads 4 bytes, reads the body, writes `recv` bytes back. ReadX and
//! WriteX payload bytes count as throughput. A progress line is printed every second
//! (`sig_alarm`); after `--warmup` seconds (default timelimit/5) the counters restart and after
//! `-t` seconds (600) the run stops; then the per-op latency table and
//! `Throughput X MB/sec  N clients  N procs  max_latency=Y ms`.
//!
//! Modelling choices:
//! * the loadfile: whatever `--loadfile` names, the clients replay the 3573-operation window of
//!   `client.txt` that mmtests uses (`client-tiny.txt`, [`ops()`]); the full file's 458k
//!   operations would make a 15 MB program per task. Its mean request/response/payload sizes
//!   (2252/3283/5351 B) are within 2.5 % of the full file's (2310/3302/5428 B);
//! * clients count progress with a mark every [`SEG`] operations, so throughput is resolved to
//!   64 operations (~1–3 ms); client 0 also marks every operation, and the latency column, the
//!   op table's AvgLat/MaxLat and max_latency come from it (all clients replay the same file);
//! * the launch barrier (a SysV semaphore polled every 100 ms by the parent) is a barrier;
//! * without `-t`, the run is [`DEFAULT_TIMELIMIT`] simulated seconds (warmup: a fifth, as
//!   dbench computes it), not dbench's 600: a deterministic simulation has no run-to-run noise
//!   to average away, and its per-second throughput settles almost at once (the first second after
//!   warmup within 1 %, BENCHMARKS.md), while 720 simulated seconds would take hours on a 512-CPU machine.
//!   The output says so in a `# wakesim:` line; `-t 600` runs the real default.

use super::prog::{Prog, FOREVER};
use super::{Invocation, Tool};
use crate::args::{self, Opt};
use crate::{ChanKind, ChannelSpec, Metric, Op, Outcome, Reporter, TaskSpec, Workload, WorkloadError};
use std::sync::OnceLock;
use wakesim_engine::{Time, SEC};

pub(crate) const TOOL: Tool = Tool {
    name: "tbench",
    command: &["tbench"],
    flags: "NPROCS [SERVER] (loopback), -t/--timelimit SECS (wakesim: 5; dbench: 600), --warmup SECS (timelimit/5), \
            -c/--loadfile client.txt|client-tiny.txt, --show-execute-time, --machine-readable, \
            -T/--tcp-options, --clients-per-process 1",
    build,
};

const NAME: &str = "tbench";
/// wakesim's `-t` when none is given (dbench's is 600; see the module docs).
pub const DEFAULT_TIMELIMIT: u64 = 5;
/// dbench's own `-t` default (`dbench.c`: `options.timelimit = 600`).
pub const DBENCH_TIMELIMIT: u64 = 600;
/// Operations per progress mark.
pub const SEG: usize = 64;
/// Mark ids: `MARK_SEG + k` after segment k of a pass; `MARK_OP_*` by client 0 only.
pub const MARK_RELEASE: u32 = 0;
/// Simulated time allowed for the clients to connect and reach the start barrier before the
/// warmup + timelimit clock starts (the run ends at the cleanup alarm, not here, when they
/// are quicker) [EST: well above what 512 clients need on the presets].
const SETUP_ALLOWANCE: u64 = 250 * wakesim_engine::MSEC;
pub const MARK_OP_START: u32 = 1;
pub const MARK_OP_END: u32 = 2;
pub const MARK_SEG: u32 = 100;

/// One loadfile operation: op name index into [`OP_NAMES`], request and reply sizes, payload.
#[derive(Clone, Copy, Debug)]
pub struct LoadOp {
    pub op: usize,
    pub send: u64,
    pub recv: u64,
    pub payload: u64,
}

/// sockio.c's `ops[]` order, which the latency table follows.
pub const OP_NAMES: [&str; 17] = [
    "Deltree", "Flush", "Close", "LockX", "Rmdir", "Mkdir", "Rename", "ReadX", "WriteX", "Unlink",
    "UnlockX", "FIND_FIRST", "SET_FILE_INFORMATION", "QUERY_FILE_INFORMATION",
    "QUERY_PATH_INFORMATION", "QUERY_FS_INFORMATION", "NTCreateX",
];

const CODES: [(char, &str); 16] = [
    ('N', "NTCreateX"), ('C', "Close"), ('P', "QUERY_PATH_INFORMATION"), ('F', "QUERY_FILE_INFORMATION"),
    ('S', "QUERY_FS_INFORMATION"), ('R', "ReadX"), ('W', "WriteX"), ('D', "FIND_FIRST"), ('U', "Unlink"),
    ('I', "SET_FILE_INFORMATION"), ('L', "Flush"), ('E', "Rename"), ('K', "LockX"), ('O', "UnlockX"),
    ('M', "Mkdir"), ('Q', "Rmdir"),
];

/// The built-in loadfile (see the module docs).
pub fn ops() -> &'static [LoadOp] {
    static OPS: OnceLock<Vec<LoadOp>> = OnceLock::new();
    OPS.get_or_init(|| {
        include_str!("tbench_client_tiny.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let c = f[0].chars().next().unwrap_or('?');
                let name = CODES.iter().find(|x| x.0 == c).map_or("Flush", |x| x.1);
                LoadOp {
                    op: OP_NAMES.iter().position(|n| *n == name).unwrap_or(1),
                    send: f[1].parse().unwrap_or(4),
                    recv: f[2].parse().unwrap_or(4),
                    payload: f[3].parse().unwrap_or(0),
                }
            })
            .collect()
    })
}

#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub clients: u32,
    pub timelimit: u64,
    pub warmup: u64,
    pub loadfile: String,
    pub machine_readable: bool,
    pub show_execute_time: bool,
    /// `-t` was not given: wakesim's shorter default applies.
    pub default_timelimit: bool,
}

const OPTS: &[Opt] = &[
    Opt { short: Some('B'), long: "backend", value: true },
    Opt { short: Some('t'), long: "timelimit", value: true },
    Opt { short: Some('c'), long: "loadfile", value: true },
    Opt { short: Some('D'), long: "directory", value: true },
    Opt { short: Some('T'), long: "tcp-options", value: true },
    Opt { short: Some('R'), long: "target-rate", value: true },
    Opt { short: None, long: "clients-per-process", value: true },
    Opt { short: None, long: "warmup", value: true },
    Opt { short: None, long: "machine-readable", value: false },
    Opt { short: None, long: "show-execute-time", value: false },
    Opt { short: None, long: "per-client-results", value: false },
    Opt { short: None, long: "skip-cleanup", value: false },
    Opt { short: None, long: "run-once", value: false },
    Opt { short: None, long: "server", value: true },
];

pub fn parse(argv: &[String]) -> Result<Options, WorkloadError> {
    let p = args::parse(NAME, argv, OPTS, false)?;
    let mut o = Options {
        clients: 0,
        timelimit: DEFAULT_TIMELIMIT,
        warmup: u64::MAX,
        loadfile: "/usr/share/dbench/client.txt".into(),
        machine_readable: false,
        show_execute_time: false,
        default_timelimit: true,
    };
    for g in &p.opts {
        let v = g.value.as_deref().unwrap_or("");
        match g.long {
            "backend" if v != "sockio" => return Err(WorkloadError::arg(NAME, format!("backend '{v}' is not modelled (tbench is the sockio backend)"))),
            "timelimit" => {
                o.timelimit = super::hackbench::positive(NAME, g, 1 << 24)?;
                o.default_timelimit = false;
            }
            "warmup" => o.warmup = super::schbench::count(NAME, g, 1 << 24)?,
            "loadfile" => {
                let base = v.rsplit('/').next().unwrap_or(v);
                let base = base.strip_suffix(".gz").unwrap_or(base);
                if !matches!(base, "client.txt" | "client-tiny.txt") {
                    return Err(WorkloadError::arg(NAME, format!("loadfile '{v}': only dbench's client.txt (and mmtests' client-tiny.txt cut from it) are built in")));
                }
                o.loadfile = v.to_string();
            }
            "target-rate" => return Err(WorkloadError::arg(NAME, format!("'{}' (rate limiting) is not modelled", g.spelled))),
            "clients-per-process" if v != "1" => return Err(WorkloadError::arg(NAME, format!("'{}' other than 1 is not modelled", g.spelled))),
            "run-once" => return Err(WorkloadError::arg(NAME, format!("'{}' is not modelled", g.spelled))),
            "machine-readable" => o.machine_readable = true,
            "show-execute-time" => o.show_execute_time = true,
            _ => {}
        }
    }
    let Some(n) = p.positional.first() else {
        return Err(WorkloadError::arg(NAME, "You need to specify NPROCS"));
    };
    let n: i64 = n.parse().map_err(|_| WorkloadError::arg(NAME, format!("NPROCS must be a number, got '{n}'")))?;
    if !(1..=100_000).contains(&n) {
        return Err(WorkloadError::arg(NAME, format!("create {n} procs?  you must be kidding.")));
    }
    o.clients = n as u32;
    if let Some(server) = p.positional.get(1) {
        if !matches!(server.as_str(), "localhost" | "::1") && !server.starts_with("127.") {
            return Err(WorkloadError::arg(NAME, format!("server '{server}': only loopback is modelled")));
        }
    }
    if p.positional.len() > 2 {
        return Err(WorkloadError::arg(NAME, format!("unexpected argument '{}'", p.positional[2])));
    }
    if o.warmup == u64::MAX {
        o.warmup = o.timelimit / 5;
    }
    Ok(o)
}

fn build(inv: &Invocation) -> Result<Workload, WorkloadError> {
    Ok(workload(&parse(inv.args)?))
}

pub fn workload(o: &Options) -> Workload {
    let ops = ops();
    let n = o.clients;
    let mut tasks = Vec::with_capacity(2 * n as usize + 1);
    let mut channels = Vec::with_capacity(2 * n as usize);
    let cap = crate::defaults::TCP_CAPACITY;
    for c in 0..n {
        let (up, down) = (2 * c, 2 * c + 1);
        channels.push(ChannelSpec { name: format!("client{c}.req"), kind: ChanKind::TcpLoopback, capacity: cap });
        channels.push(ChannelSpec { name: format!("client{c}.rsp"), kind: ChanKind::TcpLoopback, capacity: cap });
        let mut cp = Prog::new();
        // sio_setup(): do_packets(8, 8), then the launch barrier.
        cp.send(up, 8).recv(down, 4).recv(down, 4).op(Op::Barrier { id: 0, parties: n + 1 });
        cp.repeat(FOREVER);
        for (i, op) in ops.iter().enumerate() {
            if c == 0 {
                cp.mark(MARK_OP_START);
            }
            cp.send(up, op.send).recv(down, 4).recv(down, op.recv - 4);
            if c == 0 {
                cp.mark(MARK_OP_END);
            }
            if (i + 1) % SEG == 0 || i + 1 == ops.len() {
                cp.mark(MARK_SEG + (i / SEG) as u32);
            }
        }
        cp.end();
        let mut sp = Prog::new();
        sp.recv(up, 4).recv(up, 4).send(down, 8);
        sp.repeat(FOREVER);
        for op in ops {
            sp.recv(up, 4).recv(up, op.send - 4).send(down, op.recv);
        }
        sp.end();
        let mut ct = TaskSpec::new("tbench", cp.build());
        ct.mm = 2 + 2 * c;
        let mut st = TaskSpec::new("tbench_srv", sp.build());
        st.mm = 3 + 2 * c;
        // tbench_srv (started before tbench) forks a handler per connection.
        st.origin = crate::Origin::Daemon;
        tasks.push(ct);
        tasks.push(st);
    }
    // The parent: releases the clients, then only prints.
    let mut main = Prog::new();
    main.op(Op::Barrier { id: 0, parties: n + 1 }).mark(MARK_RELEASE);
    tasks.push(TaskSpec { mm: 1, ..TaskSpec::new("tbench", main.build()) });
    Workload {
        name: NAME.into(),
        tasks,
        channels,
        futexes: 0,
        reporter: Box::new(TbenchReporter { opts: o.clone() }),
        // sig_alarm(): warmup seconds, then timelimit seconds, then the cleanup print; counted
        // from the release, so allow for the clients' start before it (SETUP_ALLOWANCE).
        duration: Some((o.warmup + o.timelimit) * SEC + SETUP_ALLOWANCE),
    }
}

#[derive(Debug, Clone)]
pub struct TbenchReporter {
    pub opts: Options,
}

/// Per-segment bytes and lines of one pass.
fn segments() -> Vec<(u64, u64)> {
    ops().chunks(SEG).map(|c| (c.iter().map(|o| o.payload).sum(), c.len() as u64)).collect()
}

struct Progress {
    /// (time, bytes, lines, segment index) per segment mark, all clients, time-sorted.
    segs: Vec<(Time, u64, u64, usize)>,
    /// Per client: pass completion times.
    passes: Vec<Vec<Time>>,
    /// Client 0's op durations: (end time, op index in pass, duration).
    op_lat: Vec<(Time, usize, Time)>,
    release: Time,
}

impl TbenchReporter {
    fn progress(&self, out: &Outcome) -> Progress {
        let segs_info = segments();
        let nseg = segs_info.len() as u32;
        let mut segs = Vec::new();
        let mut passes = vec![Vec::new(); self.opts.clients as usize];
        let mut op_lat = Vec::new();
        let mut op_idx = 0usize;
        let mut started: Option<Time> = None;
        for m in &out.marks {
            if m.mark >= MARK_SEG && m.mark < MARK_SEG + nseg {
                let k = (m.mark - MARK_SEG) as usize;
                segs.push((m.time, segs_info[k].0, segs_info[k].1, k));
                if k + 1 == nseg as usize {
                    if let Some(p) = passes.get_mut((m.task / 2) as usize) {
                        p.push(m.time);
                    }
                }
            } else if m.mark == MARK_OP_START {
                started = Some(m.time);
            } else if m.mark == MARK_OP_END {
                if let Some(s) = started.take() {
                    op_lat.push((m.time, op_idx % ops().len(), m.time - s));
                    op_idx += 1;
                }
            }
        }
        segs.sort_unstable();
        Progress { segs, passes, op_lat, release: crate::marks::first_mark(out, MARK_RELEASE).unwrap_or(0) }
    }
}

impl Reporter for TbenchReporter {
    fn render(&self, out: &Outcome) -> String {
        let o = &self.opts;
        let pr = self.progress(out);
        let n = o.clients;
        let mut s = String::new();
        if o.default_timelimit {
            s += &format!(
                "# wakesim: no -t given: {} simulated seconds (+{} s warmup) instead of dbench's {} (+{} s); pass -t {} for the real default\n",
                o.timelimit,
                o.warmup,
                DBENCH_TIMELIMIT,
                DBENCH_TIMELIMIT / 5,
                DBENCH_TIMELIMIT
            );
        }
        s += "dbench version 4.00 - Copyright Andrew Tridgell 1999-2004\n\n";
        s += &format!("Running for {} seconds with load '{}' and minimum warmup {} secs\n", o.timelimit, o.loadfile, o.warmup);
        s += &format!("{n} of {n} processes prepared for launch   0 sec\nreleasing clients\n");
        let (result, lines) = self.timeline(out, &pr);
        s += &lines;
        if o.show_execute_time {
            for (c, p) in pr.passes.iter().enumerate() {
                let mut prev = pr.release;
                for &t in p {
                    s += &format!("{c:4} completed in {} ms at time {} ms\n", (t - prev) / 1_000_000, (t - pr.release) / 1_000_000);
                    prev = t;
                }
            }
        }
        s += "\n";
        // report_latencies(): per op type over the measured window (client 0's samples).
        let t0 = result.as_ref().map_or(pr.release, |r| r.start);
        // Counts: every client's completed segments; latencies: client 0's operations.
        let mut counts = vec![0u64; OP_NAMES.len()];
        for &(t, _, _, k) in &pr.segs {
            if t > t0 {
                for op in ops().chunks(SEG).nth(k).unwrap_or(&[]) {
                    counts[op.op] += 1;
                }
            }
        }
        let mut table = vec![(0u64, 0u64, 0u64); OP_NAMES.len()];
        for &(t, i, d) in &pr.op_lat {
            if t > t0 {
                let e = &mut table[ops()[i].op];
                e.0 += 1;
                e.1 += d;
                e.2 = e.2.max(d);
            }
        }
        s += " Operation                Count    AvgLat    MaxLat\n";
        s += " --------------------------------------------------\n";
        for (i, name) in OP_NAMES.iter().enumerate() {
            let (c, tot, mx) = table[i];
            if counts[i] == 0 {
                continue;
            }
            let (avg, max) = (tot as f64 / c.max(1) as f64 / 1e6, mx as f64 / 1e6);
            if o.machine_readable {
                s += &format!(":{name}:{}:{avg:.3}:{max:.3}:\n", counts[i]);
            } else {
                s += &format!(" {name:<22} {:7} {avg:9.3} {max:9.3}\n", counts[i]);
            }
        }
        s += "\n";
        let worst = pr.op_lat.iter().filter(|x| x.0 > t0).map(|x| x.2).max().unwrap_or(0) as f64 / 1e6;
        let tput = result.as_ref().map_or(0.0, |r| r.mb_per_sec);
        if o.machine_readable {
            s += &format!(";{};{n};{n};{worst:.3};\n", fmt_g(tput));
        } else {
            s += &format!("Throughput {} MB/sec  {n} clients  {n} procs  max_latency={worst:.3} ms\n", fmt_g(tput));
        }
        if result.is_none() {
            s += &format!("# wakesim: the run stopped at {:.3} s, before the end of tbench's warmup ({} s): no throughput measured; lower -t/--warmup or raise --duration\n", out.end_time as f64 / 1e9, o.warmup);
        } else if out.end_time < pr.release + (o.warmup + o.timelimit) * SEC {
            s += &format!("# wakesim: stopped by the run's --duration at {:.3} s, before tbench's -t {} (+{} s warmup)\n", out.end_time as f64 / 1e9, o.timelimit, o.warmup);
        }
        s
    }

    fn metric(&self, out: &Outcome) -> Metric {
        let pr = self.progress(out);
        let (r, _) = self.timeline(out, &pr);
        Metric { name: "Throughput".into(), unit: "MB/sec".into(), value: r.map_or(f64::NAN, |r| r.mb_per_sec), higher_is_better: true }
    }
}

struct Result_ {
    start: Time,
    mb_per_sec: f64,
}

impl TbenchReporter {
    /// The `sig_alarm()` lines and the final throughput (the last "execute" line's figure).
    fn timeline(&self, out: &Outcome, pr: &Progress) -> (Option<Result_>, String) {
        let o = &self.opts;
        let n = u64::from(o.clients);
        let mut s = String::new();
        let mut start = pr.release;
        let mut warmup = o.warmup;
        let mut base_bytes = 0u64;
        let mut result = None;
        let mut k = 1u64;
        // Running sums, advanced one alarm at a time.
        let (mut si, mut bytes, mut lines) = (0usize, 0u64, 0u64);
        let mut li = 0usize;
        loop {
            let now = pr.release + k * SEC;
            if now > out.end_time {
                break;
            }
            let t = (now - start) as f64 / 1e9;
            while si < pr.segs.len() && pr.segs[si].0 <= now {
                bytes += pr.segs[si].1;
                lines += pr.segs[si].2;
                si += 1;
            }
            let mut worst = 0;
            while li < pr.op_lat.len() && pr.op_lat[li].0 <= now {
                worst = worst.max(pr.op_lat[li].2);
                li += 1;
            }
            let lat = worst as f64 / 1e6;
            // Whole-second alarms land just after the boundary: "t > warmup" holds at t = warmup.
            if warmup > 0 && t + 1e-9 >= warmup as f64 {
                start = now;
                warmup = 0;
                base_bytes = bytes;
                k += 1;
                continue;
            }
            let mb = 1e-6 * (bytes - base_bytes) as f64 / t;
            if warmup > 0 {
                if o.machine_readable {
                    s += &format!("@W@{n}@{}@{mb:.2}@{}@{lat:.3}@\n", lines / n, t as u64);
                } else {
                    s += &format!("{n:4}  {:8}  {mb:7.2} MB/sec  warmup {t:3.0} sec  latency {lat:.03} ms\n", lines / n);
                }
            } else if t + 1e-9 >= o.timelimit as f64 {
                if o.machine_readable {
                    s += &format!("@C@{n}@{}@{mb:.2}@{}@{lat:.3}@\n", lines / n, t as u64);
                } else {
                    s += &format!("{n:4}  cleanup {t:3.0} sec\n");
                }
                // dbench's final figure: the whole execute period's bytes over its length.
                result = Some(Result_ { start, mb_per_sec: mb });
                break;
            } else {
                if o.machine_readable {
                    s += &format!("@R@{n}@{}@{mb:.2}@{}@{lat:.3}@\n", lines / n, t as u64);
                } else {
                    s += &format!("{n:4}  {:8}  {mb:7.2} MB/sec  execute {t:3.0} sec  latency {lat:.03} ms\n", lines / n);
                }
                result = Some(Result_ { start, mb_per_sec: mb });
            }
            k += 1;
        }
        (result, s)
    }
}

/// C's `%g`: 6 significant digits, trailing zeros dropped.
pub fn fmt_g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x.is_finite() { "0".into() } else { format!("{x}") };
    }
    let exp = x.abs().log10().floor() as i32;
    if !(-5..6).contains(&exp) {
        let s = format!("{:.5e}", x);
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    let s = format!("{:.*}", decimals, x);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}
