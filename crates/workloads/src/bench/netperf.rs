//! netperf over loopback (`HewlettPackard/netperf@afc51ff:src/nettest_omni.c`, `netsh.c`,
//! `netlib.c`): TCP_RR, UDP_RR, TCP_STREAM, UDP_STREAM between `netperf` and the `netserver`
//! child that serves its connection (two processes).
//!
//! * RR: the client sends `req` bytes and blocks in recv; the server receives, sends `rsp`
//!   bytes back and blocks. Default `-r 1,1`.
//! * STREAM: the client sends `-m` bytes per call (default: the socket send buffer, 16384 for
//!   TCP; 65507 for UDP), the server receives in the same units. Wakeups are sync, from
//!   NET_RX softirq on the sender's CPU (the channel kind does that).
//! * `-l SECS` (default 10) runs for that long (the workload's duration); `-l -N` runs N
//!   transactions (RR) or N bytes (STREAM) and times them.
//!
//! Output: the "MIGRATED … TEST" banner and the legacy result block of `send_tcp_stream()`,
//! `send_tcp_rr()`, `send_udp_stream()`, `send_udp_rr()` at verbosity 1 (`-P 0` drops the
//! headers). With `--copies N` each instance prints its own block, as mmtests' NR_PAIRS
//! instances write one log each; the metric is their sum.
//!
//! Not modelled (rejected): `-c`/`-C` CPU utilisation, `-i` with more than one iteration.
//! UDP_STREAM's sender never blocks on the receiver (`SendDgram`): a datagram that finds the
//! receive buffer full is dropped (the buffer counts each datagram's truesize:
//! `defaults::udp_rcvbuf_capacity`, 256 of 64 B), so the second (receive) line can count fewer messages than
//! the first, as on Linux; Errors stays 0 (netperf counts failed sends there, and a drop at the
//! receiver is not one). With `-l -BYTES` the sender blocks instead, so that the receiver's
//! byte count is reached and the run ends.
//! Transactions and receives are counted by a mark every [`BATCH`] operations (exact to
//! within `BATCH - 1` per instance).

use super::prog::{Prog, FOREVER};
use super::{Invocation, Tool};
use crate::args::{self, Opt};
use crate::{ChanKind, ChannelSpec, Metric, Outcome, Reporter, TaskSpec, Workload, WorkloadError};
use wakesim_engine::SEC;

pub(crate) const TOOL: Tool = Tool {
    name: "netperf",
    command: &["netperf"],
    flags: "-t TCP_RR|UDP_RR|TCP_STREAM|UDP_STREAM (TCP_STREAM), -l SECS|-TRANS (10), -H host \
            (loopback), -4/-6, -f k|m|g|K|M|G|x, -P 0|1, -D, -i 1,1; test options after --: \
            -m SEND, -M RECV, -r REQ,RESP, -s/-S SOCKBUF, -D",
    build,
};

pub const MARK_START: u32 = 0;
pub const MARK_END: u32 = 1;
/// Client: every BATCH transactions or sends. Server: every BATCH receives.
pub const MARK_BATCH: u32 = 2;
pub const BATCH: u64 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    TcpRr,
    UdpRr,
    TcpStream,
    UdpStream,
}

impl Test {
    fn rr(self) -> bool {
        matches!(self, Test::TcpRr | Test::UdpRr)
    }
    fn udp(self) -> bool {
        matches!(self, Test::UdpRr | Test::UdpStream)
    }
    pub fn name(self) -> &'static str {
        match self {
            Test::TcpRr => "TCP_RR",
            Test::UdpRr => "UDP_RR",
            Test::TcpStream => "TCP_STREAM",
            Test::UdpStream => "UDP_STREAM",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub test: Test,
    /// Seconds (> 0) or, negative, transactions/bytes.
    pub length: i64,
    pub host: String,
    pub fmt: char,
    pub headers: bool,
    pub send_size: u64,
    pub recv_size: u64,
    pub req: u64,
    pub rsp: u64,
    /// Local send / local recv / remote send / remote recv socket buffer sizes.
    pub lss: u64,
    pub lsr: u64,
    pub rss: u64,
    pub rsr: u64,
}

const GLOBAL: &[Opt] = &[
    Opt { short: Some('t'), long: "testname", value: true },
    Opt { short: Some('l'), long: "testlen", value: true },
    Opt { short: Some('H'), long: "host", value: true },
    Opt { short: Some('4'), long: "ipv4", value: false },
    Opt { short: Some('6'), long: "ipv6", value: false },
    Opt { short: Some('f'), long: "format", value: true },
    Opt { short: Some('P'), long: "print-headers", value: true },
    Opt { short: Some('D'), long: "demo", value: true },
    Opt { short: Some('i'), long: "iterations", value: true },
    Opt { short: Some('I'), long: "confidence", value: true },
    Opt { short: Some('c'), long: "local-cpu", value: false },
    Opt { short: Some('C'), long: "remote-cpu", value: false },
    Opt { short: Some('v'), long: "verbosity", value: true },
];

const TEST: &[Opt] = &[
    Opt { short: Some('m'), long: "send-size", value: true },
    Opt { short: Some('M'), long: "recv-size", value: true },
    Opt { short: Some('r'), long: "req-rsp", value: true },
    Opt { short: Some('s'), long: "local-sockbuf", value: true },
    Opt { short: Some('S'), long: "remote-sockbuf", value: true },
    Opt { short: Some('D'), long: "nodelay", value: false },
];

const NAME: &str = "netperf";

/// Sizes that netperf reports for a fresh loopback socket on Linux ≥ 5.4: TCP send 16384
/// (`tcp_wmem[1]`), TCP receive 131072 (`tcp_rmem[1]`), UDP both 212992 (`wmem_default`,
/// `rmem_default`).
fn sockbufs(udp: bool) -> (u64, u64) {
    if udp {
        (212_992, 212_992)
    } else {
        (16_384, 131_072)
    }
}

fn size(g: &args::Given) -> Result<u64, WorkloadError> {
    let v = g.value.as_deref().unwrap_or("");
    parse_size(v).ok_or_else(|| WorkloadError::arg(NAME, format!("'{}' expects a size in bytes (K/M/G suffixes allowed), got '{v}'", g.spelled)))
}

/// netperf's `convert()`: a number with an optional k/K (×1024), m/M, g/G suffix.
fn parse_size(v: &str) -> Option<u64> {
    let v = v.trim();
    let (num, mult) = match v.char_indices().last()? {
        (i, 'k' | 'K') => (&v[..i], 1024),
        (i, 'm' | 'M') => (&v[..i], 1024 * 1024),
        (i, 'g' | 'G') => (&v[..i], 1024 * 1024 * 1024),
        _ => (v, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

pub fn parse(argv: &[String]) -> Result<Options, WorkloadError> {
    let p = args::parse(NAME, argv, GLOBAL, false)?;
    let mut test = Test::TcpStream;
    let mut length: i64 = 10;
    let mut host = "localhost".to_string();
    let mut fmt: Option<char> = None;
    let mut headers = true;
    for g in &p.opts {
        let v = g.value.as_deref().unwrap_or("");
        match g.long {
            "testname" => {
                test = match v.to_ascii_uppercase().as_str() {
                    "TCP_RR" => Test::TcpRr,
                    "UDP_RR" => Test::UdpRr,
                    "TCP_STREAM" => Test::TcpStream,
                    "UDP_STREAM" => Test::UdpStream,
                    _ => return Err(WorkloadError::arg(NAME, format!("test '{v}' is not modelled (known: TCP_RR, UDP_RR, TCP_STREAM, UDP_STREAM)"))),
                }
            }
            "testlen" => {
                length = v.trim().parse().map_err(|_| WorkloadError::arg(NAME, format!("'{}' expects seconds (or -N transactions/bytes), got '{v}'", g.spelled)))?;
                if length == 0 {
                    return Err(WorkloadError::arg(NAME, format!("'{}' 0 would run forever", g.spelled)));
                }
            }
            "host" => {
                if !matches!(v, "localhost" | "::1" | "ip6-localhost") && !v.starts_with("127.") {
                    return Err(WorkloadError::arg(NAME, format!("host '{v}': only loopback (127.0.0.1, localhost, ::1) is modelled")));
                }
                host = v.to_string();
            }
            "format" => {
                let c = v.chars().next().unwrap_or(' ');
                if v.len() != 1 || !"bkmgBKMGx".contains(c) {
                    return Err(WorkloadError::arg(NAME, format!("'{}' expects one of b k m g B K M G x, got '{v}'", g.spelled)));
                }
                fmt = Some(c);
            }
            "print-headers" => headers = v != "0",
            "iterations" => {
                let max = v.split(',').next().unwrap_or("").trim();
                if max.parse::<u32>().map_or(true, |n| n > 1) {
                    return Err(WorkloadError::arg(NAME, format!("'{}' {v}: confidence-interval iterations (more than one run) are not modelled; use -i 1,1", g.spelled)));
                }
            }
            "local-cpu" | "remote-cpu" => {
                return Err(WorkloadError::arg(NAME, format!("'{}' (CPU utilisation and service demand) is not modelled", g.spelled)))
            }
            "verbosity" if !matches!(v, "1" | "2") => {
                return Err(WorkloadError::arg(NAME, format!("'{}' {v}: only verbosity 1 output is modelled", g.spelled)));
            }
            _ => {} // -4, -6, -D interval, -I: accepted, no effect on the result lines
        }
    }
    let (lss, lsr) = sockbufs(test.udp());
    let mut o = Options {
        test,
        length,
        host,
        // netsh.c: RR tests default to 'x' (Trans), others to 'm'; 'x' outside RR becomes 'm'.
        fmt: match fmt {
            None if test.rr() => 'x',
            None => 'm',
            Some('x') if !test.rr() => 'm',
            Some(c) => c,
        },
        headers,
        send_size: 0,
        recv_size: 0,
        req: 1,
        rsp: 1,
        lss,
        lsr,
        rss: lss,
        rsr: lsr,
    };
    let tp = args::parse(NAME, &p.positional, TEST, false)?;
    if let Some(a) = tp.positional.first() {
        return Err(WorkloadError::arg(NAME, format!("unexpected argument '{a}' (test options go after --)")));
    }
    let (mut m, mut mm) = (None, None);
    for g in &tp.opts {
        match g.long {
            "send-size" => m = Some(size(g)?),
            "recv-size" => mm = Some(size(g)?),
            "req-rsp" => {
                let v = g.value.as_deref().unwrap_or("");
                let (a, b) = v.split_once(',').unwrap_or((v, ""));
                let req = if a.is_empty() { 1 } else { parse_size(a).ok_or_else(|| WorkloadError::arg(NAME, format!("'-r' expects REQ,RESP sizes, got '{v}'")))? };
                let rsp = if b.is_empty() { req } else { parse_size(b).ok_or_else(|| WorkloadError::arg(NAME, format!("'-r' expects REQ,RESP sizes, got '{v}'")))? };
                o.req = req;
                o.rsp = rsp;
            }
            "local-sockbuf" => {
                let v = size(g)?;
                o.lss = v;
                o.lsr = v;
            }
            "remote-sockbuf" => {
                let v = size(g)?;
                o.rss = v;
                o.rsr = v;
            }
            _ => {}
        }
    }
    // nettest_omni.c: send size defaults to the local send buffer (UDP capped at 65507).
    o.send_size = m.unwrap_or(if test.udp() { o.lss.min(65_507) } else { o.lss });
    o.recv_size = mm.unwrap_or(o.send_size);
    for (what, v) in [("-m", o.send_size), ("-M", o.recv_size), ("request", o.req), ("response", o.rsp)] {
        if v == 0 {
            return Err(WorkloadError::arg(NAME, format!("{what} size must be positive")));
        }
    }
    if test.udp() && o.send_size > 65_507 {
        return Err(WorkloadError::arg(NAME, format!("-m {} exceeds the largest UDP datagram (65507)", o.send_size)));
    }
    Ok(o)
}

fn build(inv: &Invocation) -> Result<Workload, WorkloadError> {
    Ok(workload(&parse(inv.args)?))
}

/// Payload bytes the receiving socket queues when every message is `msg` bytes: a UDP socket
/// charges each datagram's truesize against its buffer (`udp_rcvbuf_capacity`); loopback TCP
/// is bounded by the buffer's size in bytes, at least one message.
fn rcvbuf_capacity(test: Test, msg: u64, rcvbuf: u64) -> u64 {
    if test.udp() {
        crate::defaults::udp_rcvbuf_capacity(msg, rcvbuf)
    } else {
        rcvbuf.max(msg)
    }
}

pub fn workload(o: &Options) -> Workload {
    let kind = if o.test.udp() { ChanKind::UdpLoopback } else { ChanKind::TcpLoopback };
    let mut client = Prog::new();
    let mut server = Prog::new();
    client.mark(MARK_START);
    let finite = o.length < 0;
    let n = o.length.unsigned_abs();
    let (channels, sent_unit) = if o.test.rr() {
        // The receiver's buffer bounds what is queued (loopback skb_orphan); at least one message.
        let c2s = ChannelSpec { name: "request".into(), kind, capacity: rcvbuf_capacity(o.test, o.req, o.rsr) };
        let s2c = ChannelSpec { name: "response".into(), kind, capacity: rcvbuf_capacity(o.test, o.rsp, o.lsr) };
        if finite {
            client.repeat(n).send(0, o.req).recv(1, o.rsp).end().mark(MARK_END);
            server.repeat(n).recv(0, o.req).send(1, o.rsp).end();
        } else {
            client.repeat(FOREVER).repeat(BATCH).send(0, o.req).recv(1, o.rsp).end().mark(MARK_BATCH).end();
            server.repeat(FOREVER).recv(0, o.req).send(1, o.rsp).end();
        }
        (vec![c2s, s2c], 0)
    } else {
        let unit = o.send_size.min(o.recv_size);
        let data = ChannelSpec { name: "data".into(), kind, capacity: rcvbuf_capacity(o.test, o.send_size, o.rsr) };
        if finite {
            let sends = n.div_ceil(o.send_size);
            client.repeat(sends).send(0, o.send_size).end().mark(MARK_END);
            let bytes = sends * o.send_size;
            server.repeat(bytes / unit).recv(0, unit).end();
            if bytes % unit != 0 {
                server.recv(0, bytes % unit);
            }
        } else {
            client.repeat(FOREVER).repeat(BATCH);
            if o.test.udp() {
                // A datagram that finds the receive buffer full is dropped; the sender goes on.
                client.send_dgram(0, o.send_size);
            } else {
                client.send(0, o.send_size);
            }
            client.end().mark(MARK_BATCH).end();
            server.repeat(FOREVER).repeat(BATCH).recv(0, unit).end().mark(MARK_BATCH).end();
        }
        (vec![data], unit)
    };
    let mut tasks = vec![TaskSpec::new("netperf", client.build()), TaskSpec::new("netserver", server.build())];
    tasks[0].mm = 1;
    tasks[1].mm = 2;
    // netserver's child for this test, forked by the daemon when netperf connects.
    tasks[1].origin = crate::Origin::Daemon;
    Workload {
        name: format!("netperf {}", o.test.name()),
        tasks,
        channels,
        futexes: 0,
        reporter: Box::new(NetperfReporter { opts: o.clone(), recv_unit: sent_unit }),
        duration: (!finite).then(|| o.length as u64 * SEC),
    }
}

#[derive(Debug, Clone)]
pub struct NetperfReporter {
    pub opts: Options,
    /// STREAM: bytes per server receive.
    pub recv_unit: u64,
}

/// What one instance measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    pub elapsed: f64,
    /// Transactions (RR) or client sends (STREAM).
    pub sent: u64,
    /// STREAM: server receives.
    pub received: u64,
}

impl NetperfReporter {
    pub fn measure(&self, out: &Outcome) -> Measured {
        let o = &self.opts;
        let start = crate::marks::first_mark(out, MARK_START).unwrap_or(0);
        let count = |task: u32| out.marks.iter().filter(|m| m.mark == MARK_BATCH && m.task == task).count() as u64 * BATCH;
        if o.length < 0 && !out.capped {
            let end = crate::marks::last_mark(out, MARK_END).unwrap_or(out.end_time);
            let n = o.length.unsigned_abs();
            let (sent, received) = if o.test.rr() { (n, 0) } else { let s = n.div_ceil(o.send_size); (s, s * o.send_size / self.recv_unit.max(1)) };
            Measured { elapsed: (end - start) as f64 / 1e9, sent, received }
        } else {
            Measured { elapsed: out.end_time.saturating_sub(start) as f64 / 1e9, sent: count(0), received: count(1) }
        }
    }

    /// `calc_thruput_interval(units, elapsed)` in the chosen format.
    fn thruput(&self, bytes: f64, elapsed: f64) -> f64 {
        let div = match self.opts.fmt {
            'K' => 1024.0,
            'M' => 1024.0 * 1024.0,
            'G' => 1024.0 * 1024.0 * 1024.0,
            'k' => 1000.0 / 8.0,
            'm' => 1e6 / 8.0,
            'g' => 1e9 / 8.0,
            _ => 1.0,
        };
        bytes / div / elapsed.max(1e-12)
    }

    /// The headline number netperf prints (and mmtests' parser takes, the last field).
    pub fn result(&self, m: &Measured) -> f64 {
        let o = &self.opts;
        if o.test.rr() {
            let trans = m.sent as f64;
            if o.fmt == 'x' {
                trans / m.elapsed.max(1e-12)
            } else {
                self.thruput(trans * (o.req + o.rsp) as f64, m.elapsed)
            }
        } else {
            // The receiver's bytes (for UDP_STREAM the second, "remote" line).
            self.thruput((m.received * self.recv_unit) as f64, m.elapsed)
        }
    }

    fn units(&self) -> &'static str {
        match self.opts.fmt {
            'B' => "Bytes",
            'K' => "KBytes",
            'M' => "MBytes",
            'G' => "GBytes",
            'b' => "10^0bits",
            'k' => "10^3bits",
            'm' => "10^6bits",
            'g' => "10^9bits",
            'x' => "Trans",
            _ => "KBytes",
        }
    }
}

impl Reporter for NetperfReporter {
    fn render(&self, out: &Outcome) -> String {
        let o = &self.opts;
        let m = self.measure(out);
        let title = match o.test {
            Test::TcpRr => "MIGRATED TCP REQUEST/RESPONSE TEST",
            Test::UdpRr => "MIGRATED UDP REQUEST/RESPONSE TEST",
            Test::TcpStream => "MIGRATED TCP STREAM TEST",
            Test::UdpStream => "MIGRATED UDP STREAM TEST",
        };
        // print_top_test_header(): inet_ntop into an 8-byte buffer (sizeof a pointer) fails for
        // "127.0.0.1", so the real tool prints "()" for the destination address.
        let mut s = String::new();
        if o.headers {
            s += &format!("{title} from 0.0.0.0 (0.0.0.0) port 0 AF_INET to {} () port 0 AF_INET", o.host);
            if o.test.rr() {
                s += " : first burst 0";
            }
            s += "\n";
        }
        let r = self.result(&m);
        match o.test {
            Test::TcpRr | Test::UdpRr => {
                if o.headers {
                    if o.fmt == 'x' {
                        s += "Local /Remote\nSocket Size   Request  Resp.   Elapsed  Trans.\nSend   Recv   Size     Size    Time     Rate         \nbytes  Bytes  bytes    bytes   secs.    per sec   \n\n";
                    } else {
                        s += &format!("Local /Remote\nSocket Size   Request  Resp.   Elapsed  \nSend   Recv   Size     Size    Time     Throughput \nbytes  Bytes  bytes    bytes   secs.    {}/sec   \n\n", self.units());
                    }
                }
                s += &format!("{:<6} {:<6} {:<6}   {:<6}  {:<6.2}   {:7.2}   \n", o.lss, o.lsr, o.req, o.rsp, m.elapsed, r);
                s += &format!("{:<6} {:<6}\n", o.rss, o.rsr);
            }
            Test::TcpStream => {
                if o.headers {
                    s += &format!("Recv   Send    Send                          \nSocket Socket  Message  Elapsed              \nSize   Size    Size     Time     Throughput  \nbytes  bytes   bytes    secs.    {}/sec  \n\n", self.units());
                }
                s += &format!("{:6} {:6} {:6}    {:<6.2}   {:7.2}   \n", o.rsr, o.lss, o.send_size, m.elapsed, r);
            }
            Test::UdpStream => {
                if o.headers {
                    s += &format!("Socket  Message  Elapsed      Messages                \nSize    Size     Time         Okay Errors   Throughput\nbytes   bytes    secs            #      #   {}/sec\n\n", self.units());
                }
                let send_tput = self.thruput((m.sent * o.send_size) as f64, m.elapsed);
                let recvd = m.received * self.recv_unit / o.send_size.max(1);
                s += &format!("{:6}  {:6}   {:<7.2}   {:7} {:6}    {:7.2}\n", o.lss, o.send_size, m.elapsed, m.sent, 0, send_tput);
                s += &format!("{:6}           {:<7.2}   {:7}           {:7.2}\n\n", o.rsr, m.elapsed, recvd, r);
            }
        }
        s
    }

    fn metric(&self, out: &Outcome) -> Metric {
        let m = self.measure(out);
        Metric {
            name: format!("{} throughput", self.opts.test.name()),
            unit: format!("{}/s", self.units()),
            value: self.result(&m),
            higher_is_better: true,
        }
    }
}
