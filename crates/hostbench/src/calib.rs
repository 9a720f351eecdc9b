//! The microbenchmarks of `wakesim calibrate`. Each runs for real on this kernel, is repeated,
//! and returns one figure per repetition (for the per-operation costs, the median of short bursts
//! within the repetition, which drops bursts a neighbour or the hypervisor interrupted); turning figures into cost-profile fields (and the
//! pipe ping-pongs, which run as native workloads) is the CLI's `fit` step.
//!
//! * [`syscall_ns`]: `getppid` through `syscall(2)` in a loop — syscall entry + exit.
//! * [`copy_ps_per_byte`]: write + read of the same pipe by one thread, 32 KiB vs 64 B: the
//!   difference per byte is two copies (`copy_page_from_iter` in, `copy_page_to_iter` out).
//! * [`channel_pair_ns`]: a non-blocking 100-byte write + read on a pipe or unix socketpair —
//!   the per-message work of the channel beyond the syscall and the copy.
//! * [`loopback_ns`]: a burst of 64-byte sends over a loopback TCP connection or a connected
//!   UDP socket pair, then the receives that drain it, on one thread: each side's cost per
//!   message. On loopback the send runs the whole receive path too (the NET_RX softirq on the
//!   sending CPU, up to the receive queue); nobody sleeps, so no scheduler cost enters.
//! * [`empty_read_ns`]: a read of an empty pipe or socket that returns `EAGAIN` — the check a
//!   blocking read makes before it sleeps.
//! * [`futex_ops_ns`]: a `FUTEX_WAIT` that returns at once (the word differs) and a
//!   `FUTEX_WAKE` with no waiter, in loops — the futex's own work beyond the syscall.
//! * [`line_transfer_ns`]: two threads pinned to CPUs `a` and `b` bounce one cache line (each
//!   spins until the counter is odd or even, then increments it): half a round trip is one
//!   transfer of a line last written by the other CPU.
//! * [`cross_cpu_wake_ns`]: two threads pinned to CPUs `a` and `b` wake each other through a
//!   futex; each wake's latency is the wakee's clock after `futex_wait` returns minus the
//!   waker's clock just before `futex_wake` (one `CLOCK_MONOTONIC`, synchronised across CPUs).
//!   With `busy`, a `SCHED_IDLE` spinner on each CPU keeps it out of idle: the wake then finds a
//!   running CPU (resched IPI, no exit from the idle state). [`cross_cpu_wake_reps`] also gives
//!   the waker's side: how long its `futex_wake` call took (`try_to_wake_up()` and, to an idle
//!   CPU that does not poll, the IPI's send, which in a guest traps to the hypervisor).

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use crate::sys;
use wakesim_workloads::{MarkRecord, Metric, Op, Outcome, Reporter, TaskSpec, Workload};

/// Bursts per repetition of the per-operation microbenchmarks.
const BURSTS: u64 = 25;

/// Time `n` operations as [`BURSTS`] short bursts and return the median burst's ns per
/// operation: a burst hit by an interruption (a neighbour, the hypervisor taking the vCPU) is an
/// outlier the median drops, so the figure is the uncontended cost the model charges.
fn per_op_ns(n: u64, mut op: impl FnMut() -> io::Result<()>) -> io::Result<f64> {
    let per = (n / BURSTS).max(1);
    let mut v = Vec::with_capacity(BURSTS as usize);
    for _ in 0..BURSTS {
        let t0 = sys::now_ns();
        for _ in 0..per {
            op()?;
        }
        v.push((sys::now_ns() - t0) as f64 / per as f64);
    }
    Ok(crate::Summary::of(&v).map_or(f64::NAN, |s| s.median))
}

/// Nanoseconds per null syscall, one figure per repetition of `calls` calls.
pub fn syscall_ns(calls: u64, reps: usize) -> Vec<f64> {
    (0..reps)
        .map(|_| {
            per_op_ns(calls, || {
                sys::null_syscall();
                Ok(())
            })
            .unwrap_or(f64::NAN)
        })
        .collect()
}

/// Nanoseconds per `FUTEX_WAIT` whose word does not match (it returns `EAGAIN` after
/// `futex_wait_setup()`: key, hash, bucket lock, the word read) and per `FUTEX_WAKE` that finds
/// no waiter (it skips the bucket lock), one thread: `(wait, wake)`, one figure per repetition.
pub fn futex_ops_ns(calls: u64, reps: usize) -> (Vec<f64>, Vec<f64>) {
    let word = AtomicU32::new(1);
    let figures = |op: &dyn Fn()| -> Vec<f64> {
        (0..reps)
            .map(|_| {
                per_op_ns(calls, || {
                    op();
                    Ok(())
                })
                .unwrap_or(f64::NAN)
            })
            .collect()
    };
    let wait = figures(&|| sys::futex_wait(&word, 0, false));
    let wake = figures(&|| {
        sys::futex_wake(&word, 1, false);
    });
    (wait, wake)
}

/// Picoseconds per byte copied through a pipe (one copy: half of write + read), per repetition.
pub fn copy_ps_per_byte(iters: u64, reps: usize) -> io::Result<Vec<f64>> {
    const BIG: usize = 32 * 1024;
    const SMALL: usize = 64;
    let mut fds = [0; 2];
    // SAFETY: valid out-array.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = vec![1u8; BIG];
    let mut per = |len: usize| -> io::Result<f64> {
        // The default 64 KiB pipe holds one write of `len` ≤ BIG bytes, so neither call blocks.
        per_op_ns(iters, || sys::write_read(fds[0], fds[1], &mut buf[..len]))
    };
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        let (small, big) = (per(SMALL)?, per(BIG)?);
        out.push((big - small).max(0.0) * 1000.0 / (2.0 * (BIG - SMALL) as f64));
    }
    // SAFETY: closing our own fds.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    Ok(out)
}

/// Nanoseconds per non-blocking `write` + `read` pair of `bytes` bytes on one thread, over a
/// pipe or a unix stream socketpair, per repetition: two syscalls, two copies and the channel's
/// own work (for a socket: `unix_stream_sendmsg`'s skb allocation and queueing, and
/// `unix_stream_read_generic`'s dequeue and free). No task blocks, so no scheduler cost enters.
pub fn channel_pair_ns(socket: bool, bytes: usize, iters: u64, reps: usize) -> io::Result<Vec<f64>> {
    let (r0, w0) = sys::channel_pair(socket)?;
    let fds = [r0, w0];
    let mut buf = vec![1u8; bytes.max(1)];
    let mut out = Vec::with_capacity(reps);
    let mut res = Ok(());
    for _ in 0..reps {
        // One small message never fills the buffer.
        let r = per_op_ns(iters, || sys::write_read(fds[0], fds[1], &mut buf[..bytes]));
        match r {
            Ok(x) => out.push(x),
            Err(e) => {
                res = Err(e);
                break;
            }
        }
    }
    // SAFETY: closing our own fds.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    res.map(|_| out)
}

/// Nanoseconds per 64-byte send and per receive over loopback TCP (`TCP_NODELAY`) or UDP, one
/// figure each per repetition: bursts of [`LOOPBACK_BURST`] sends timed, then the receives
/// (`MSG_DONTWAIT`) that drain them timed; the median burst (as [`per_op_ns`]).
/// Syscall and copy included; `wakesim calibrate` subtracts them.
pub fn loopback_ns(tcp: bool, iters: u64, reps: usize) -> io::Result<(Vec<f64>, Vec<f64>)> {
    use std::net::{TcpListener, TcpStream, UdpSocket};
    use std::os::fd::AsRawFd;
    const MSG: usize = 64;
    let (tx, rx): (Box<dyn AsRawFd>, Box<dyn AsRawFd>) = if tcp {
        let l = TcpListener::bind("127.0.0.1:0")?;
        let a = TcpStream::connect(l.local_addr()?)?;
        a.set_nodelay(true)?;
        let (b, _) = l.accept()?;
        (Box::new(a), Box::new(b))
    } else {
        let a = UdpSocket::bind("127.0.0.1:0")?;
        let b = UdpSocket::bind("127.0.0.1:0")?;
        a.connect(b.local_addr()?)?;
        (Box::new(a), Box::new(b))
    };
    let (tx, rx) = (tx.as_raw_fd(), rx.as_raw_fd());
    let mut buf = [1u8; MSG];
    let bursts = (iters / LOOPBACK_BURST).max(BURSTS);
    let (mut sends, mut recvs) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    for _ in 0..reps {
        let (mut s, mut r) = (Vec::new(), Vec::new());
        for _ in 0..bursts {
            let t0 = sys::now_ns();
            for _ in 0..LOOPBACK_BURST {
                // SAFETY: buf is valid for MSG bytes; the burst fits both sockets' buffers.
                if unsafe { libc::send(tx, buf.as_ptr() as *const libc::c_void, MSG, 0) } != MSG as isize {
                    return Err(io::Error::last_os_error());
                }
            }
            let t1 = sys::now_ns();
            let mut got = 0;
            while got < LOOPBACK_BURST as usize * MSG {
                // SAFETY: buf is valid for MSG bytes; a TCP read may return less than MSG.
                let n = unsafe { libc::recv(rx, buf.as_mut_ptr() as *mut libc::c_void, MSG, libc::MSG_DONTWAIT) };
                if n <= 0 {
                    return Err(io::Error::other("a loopback receive found nothing the burst had sent"));
                }
                got += if tcp { n as usize } else { MSG };
            }
            let t2 = sys::now_ns();
            s.push((t1 - t0) as f64 / LOOPBACK_BURST as f64);
            r.push((t2 - t1) as f64 / LOOPBACK_BURST as f64);
        }
        sends.push(crate::Summary::of(&s).map_or(f64::NAN, |x| x.median));
        recvs.push(crate::Summary::of(&r).map_or(f64::NAN, |x| x.median));
    }
    Ok((sends, recvs))
}

/// Sends per timed burst of [`loopback_ns`]: 32 datagrams of 64 B charge 32 × 832 bytes, well
/// inside a 212992-byte receive buffer.
pub const LOOPBACK_BURST: u64 = 32;

/// Nanoseconds per read of an empty pipe (`O_NONBLOCK`) or unix socket (`MSG_DONTWAIT`) that
/// returns `EAGAIN`, per repetition: the syscall plus the check a blocking read makes before it
/// sleeps (the lock, the empty queue); `wakesim calibrate` subtracts the syscall.
pub fn empty_read_ns(socket: bool, iters: u64, reps: usize) -> io::Result<Vec<f64>> {
    let (r, w) = sys::channel_pair(socket)?;
    let mut buf = [0u8; 100];
    let res = (|| {
        if !socket {
            // SAFETY: fcntl on our own fd.
            if unsafe { libc::fcntl(r, libc::F_SETFL, libc::O_NONBLOCK) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        let mut out = Vec::with_capacity(reps);
        for _ in 0..reps {
            out.push(per_op_ns(iters, || {
                // SAFETY: buf is valid for 100 bytes; the channel is empty, the call returns -1.
                let n = unsafe {
                    if socket {
                        libc::recv(r, buf.as_mut_ptr() as *mut libc::c_void, 100, libc::MSG_DONTWAIT)
                    } else {
                        libc::read(r, buf.as_mut_ptr() as *mut libc::c_void, 100)
                    }
                };
                if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::WouldBlock {
                    return Err(io::Error::other("a read of an empty channel did not return EAGAIN"));
                }
                Ok(())
            })?);
        }
        Ok(out)
    })();
    // SAFETY: closing our own fds.
    unsafe {
        libc::close(r);
        libc::close(w);
    }
    res
}

/// Mean wake-to-run latency (ns) of futex wakes between CPUs `a` and `b`, both directions, one
/// figure per repetition of `rounds` round trips. `Err` says why it could not run (affinity
/// refused, `SCHED_IDLE` refused).
/// Nanoseconds per one-way cache-line transfer between CPUs `a` and `b`, per repetition of
/// `rounds` round trips (each the median of [`BURSTS`] bursts, as [`per_op_ns`]).
pub fn line_transfer_ns(a: usize, b: usize, rounds: u64, reps: usize) -> io::Result<Vec<f64>> {
    let _keep = sys::KeepAffinity::new();
    probe(&[a, b], false)?;
    #[repr(align(128))] // its own line (and the adjacent-line prefetcher's pair)
    struct Line(AtomicU64);
    let line = Line(AtomicU64::new(0));
    let per = (rounds / BURSTS).max(1);
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        line.0.store(0, Ordering::SeqCst);
        let line = &line;
        let fig = std::thread::scope(|s| -> io::Result<f64> {
            // The peer answers every odd value with the next even one.
            let peer = s.spawn(move || -> io::Result<()> {
                sys::pin_to(&[b])?;
                for i in 0..per * BURSTS {
                    loop {
                        match line.0.load(Ordering::Acquire) {
                            v if v == 2 * i + 1 => break,
                            u64::MAX => return Ok(()), // the other side gave up
                            _ => std::hint::spin_loop(),
                        }
                    }
                    line.0.store(2 * i + 2, Ordering::Release);
                }
                Ok(())
            });
            let mine = (|| {
                sys::pin_to(&[a])?;
                let mut i = 0;
                per_op_ns(per * BURSTS, || {
                    line.0.store(2 * i + 1, Ordering::Release);
                    while line.0.load(Ordering::Acquire) != 2 * i + 2 {
                        std::hint::spin_loop();
                    }
                    i += 1;
                    Ok(())
                })
            })();
            if mine.is_err() {
                // Release the peer so the scope can end.
                line.0.store(u64::MAX, Ordering::Release);
            }
            peer.join().map_err(|_| io::Error::other("line peer panicked"))??;
            mine
        })?;
        out.push(fig / 2.0);
    }
    Ok(out)
}

pub fn cross_cpu_wake_ns(a: usize, b: usize, busy: bool, rounds: u64, reps: usize) -> io::Result<Vec<f64>> {
    cross_cpu_wake_after_ns(a, b, busy, 0, rounds, reps)
}

/// [`cross_cpu_wake_ns`] with the waker first spinning `gap_ns` on its own CPU, so the wakee's
/// CPU has been idle at least that long when the wake comes (a hypervisor may poll a halted vCPU
/// for a while before descheduling it: KVM's `halt_poll_ns`).
pub fn cross_cpu_wake_after_ns(a: usize, b: usize, busy: bool, gap_ns: u64, rounds: u64, reps: usize) -> io::Result<Vec<f64>> {
    Ok(cross_cpu_wake_reps(a, b, busy, gap_ns, rounds, reps)?.into_iter().map(|r| r.latency).collect())
}

/// One repetition of the cross-CPU futex ping-pong, both sides' rounds together.
#[derive(Clone, Copy, Debug)]
pub struct WakeRep {
    /// Mean ns from the waker's clock before `futex_wake` to the wakee's after `futex_wait`.
    pub latency: f64,
    /// Mean ns the waker's `futex_wake` call took (it woke a sleeper each time).
    pub call: f64,
}

/// [`cross_cpu_wake_after_ns`] with the waker's call times beside the latencies.
pub fn cross_cpu_wake_reps(a: usize, b: usize, busy: bool, gap_ns: u64, rounds: u64, reps: usize) -> io::Result<Vec<WakeRep>> {
    let _keep = sys::KeepAffinity::new();
    probe(&[a, b], busy)?;
    let flags = [AtomicU32::new(0), AtomicU32::new(0)];
    let stamp = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let mut out = Vec::with_capacity(reps);
    std::thread::scope(|s| -> io::Result<()> {
        let mut spinners = Vec::new();
        if busy {
            for cpu in [a, b] {
                let stop = &stop;
                spinners.push(s.spawn(move || -> io::Result<()> {
                    sys::pin_to(&[cpu])?;
                    sys::set_sched_idle()?;
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                    Ok(())
                }));
            }
        }
        let result = (|| {
            for _ in 0..reps {
                let (flags, stamp) = (&flags, &stamp);
                let peer = s.spawn(move || side(b, 1, 0, flags, stamp, gap_ns, rounds));
                let mine = side(a, 0, 1, flags, stamp, gap_ns, rounds);
                let theirs = peer.join().map_err(|_| io::Error::other("wake peer panicked"))?;
                let (mut lats, mut calls) = mine?;
                let (l, c) = theirs?;
                lats.extend(l);
                calls.extend(c);
                // The mean, not the median: on a VM a halted vCPU is sometimes descheduled by the
                // host and its wake then takes far longer; that tail is a cost of idling (what a
                // throughput benchmark pays on average), not noise to drop.
                let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
                out.push(WakeRep { latency: mean(&lats), call: mean(&calls) });
            }
            Ok(())
        })();
        stop.store(true, Ordering::Relaxed);
        for sp in spinners {
            sp.join().map_err(|_| io::Error::other("spinner panicked"))??;
        }
        result
    })?;
    Ok(out)
}

/// Check, in a scratch thread, that this process may pin a thread to each of `cpus` and, with
/// `idle`, make it `SCHED_IDLE`: a side that failed halfway would leave its peer waiting.
pub fn probe(cpus: &[usize], idle: bool) -> io::Result<()> {
    std::thread::scope(|s| {
        s.spawn(|| -> io::Result<()> {
            for &c in cpus {
                sys::pin_to(&[c]).map_err(|e| io::Error::new(e.kind(), format!("pinning to CPU {c}: {e}")))?;
            }
            if idle {
                sys::set_sched_idle().map_err(|e| io::Error::new(e.kind(), format!("SCHED_IDLE: {e}")))?;
            }
            Ok(())
        })
        .join()
        .map_err(|_| io::Error::other("probe thread panicked"))?
    })
}

/// One side of the futex ping-pong: wait for `flags[me]`, note the latency, wake `flags[other]`.
/// Side 0 starts by waking. Returns the latencies (ns) this side observed and the durations of
/// its own `futex_wake` calls.
fn side(cpu: usize, me: usize, other: usize, flags: &[AtomicU32; 2], stamp: &AtomicU64, gap_ns: u64, rounds: u64) -> io::Result<(Vec<f64>, Vec<f64>)> {
    sys::pin_to(&[cpu])?;
    let mut lats = Vec::with_capacity(rounds as usize);
    let mut calls = Vec::with_capacity(rounds as usize);
    let wake = || {
        let until = sys::now_ns() + gap_ns;
        while sys::now_ns() < until {
            std::hint::spin_loop();
        }
        let t = sys::now_ns();
        stamp.store(t, Ordering::Release);
        flags[other].store(1, Ordering::Release);
        sys::futex_wake(&flags[other], 1, false);
        (sys::now_ns() - t) as f64
    };
    let wait = || {
        while flags[me].load(Ordering::Acquire) == 0 {
            sys::futex_wait(&flags[me], 0, false);
        }
        let lat = sys::now_ns().saturating_sub(stamp.load(Ordering::Acquire));
        flags[me].store(0, Ordering::Release);
        lat
    };
    for _ in 0..rounds {
        if me == 0 {
            calls.push(wake());
            lats.push(wait() as f64);
        } else {
            lats.push(wait() as f64);
            calls.push(wake());
        }
    }
    Ok((lats, calls))
}

/// Mark before a futex wake (the waker's clock).
pub const MARK_WAKE: u32 = 0;
/// Mark after the futex wait returned (the wakee's clock).
pub const MARK_WOKEN: u32 = 1;
/// Mark after the waker's `futex_wake` returned (the waker's clock).
pub const MARK_WAKE_DONE: u32 = 2;

/// [`cross_cpu_wake_ns`] (idle case) in the behaviour language, for the simulator: two threads
/// pinned to `a` and `b` waking each other `rounds` times through futexes 0 and 1. Reports
/// [`mean_wake_latency`].
pub fn wake_workload(a: usize, b: usize, rounds: u64) -> Workload {
    wake_pingpong(a, b, rounds, Box::new(WakeReporter::LATENCY))
}

/// [`wake_workload`] reporting the waker's side instead: [`mean_wake_call`].
pub fn wake_call_workload(a: usize, b: usize, rounds: u64) -> Workload {
    wake_pingpong(a, b, rounds, Box::new(WakeReporter::CALL))
}

fn wake_pingpong(a: usize, b: usize, rounds: u64, reporter: Box<dyn Reporter>) -> Workload {
    use wakesim_machine::CpuSet;
    let lp = |body: Vec<Op>| {
        let mut p = vec![Op::LoopStart { count: rounds, end: body.len() as u32 + 1 }];
        p.extend(body);
        p.push(Op::LoopEnd { start: 0 });
        p
    };
    let first = lp(vec![Op::Mark(MARK_WAKE), Op::FutexWake { futex: 1, n: 1 }, Op::Mark(MARK_WAKE_DONE), Op::FutexWait { futex: 0 }, Op::Mark(MARK_WOKEN)]);
    let second = lp(vec![Op::FutexWait { futex: 1 }, Op::Mark(MARK_WOKEN), Op::Mark(MARK_WAKE), Op::FutexWake { futex: 0, n: 1 }, Op::Mark(MARK_WAKE_DONE)]);
    let task = |name: &str, prog, cpu| TaskSpec { allowed: Some(CpuSet::from_cpus([cpu])), mm: 1, ..TaskSpec::new(name, prog) };
    Workload {
        name: "futex ping-pong".into(),
        tasks: vec![task("waker.a", first, a), task("waker.b", second, b)],
        channels: Vec::new(),
        futexes: 2,
        reporter,
        duration: None,
    }
}

/// Mean of (each [`MARK_WOKEN`] − the latest [`MARK_WAKE`] before it), ns.
pub fn mean_wake_latency(out: &Outcome) -> f64 {
    mean_gap(out, MARK_WAKE, MARK_WOKEN, |_| 0)
}

/// Mean of (each [`MARK_WAKE_DONE`] − the same task's latest [`MARK_WAKE`]), ns: how long the
/// waker's `futex_wake` took.
pub fn mean_wake_call(out: &Outcome) -> f64 {
    mean_gap(out, MARK_WAKE, MARK_WAKE_DONE, |m| m.task)
}

/// Mean of (each `end` mark − the latest unmatched `start` mark with the same `key`), ns; NaN
/// without a pair.
fn mean_gap(out: &Outcome, start: u32, end: u32, key: impl Fn(&MarkRecord) -> u32) -> f64 {
    let mut last = std::collections::HashMap::new();
    let (mut sum, mut n) = (0u64, 0u64);
    for m in &out.marks {
        if m.mark == start {
            last.insert(key(m), m.time);
        } else if m.mark == end {
            if let Some(t) = last.remove(&key(m)) {
                sum += m.time - t;
                n += 1;
            }
        }
    }
    if n == 0 {
        f64::NAN
    } else {
        sum as f64 / n as f64
    }
}

/// Reports one mean of the wake ping-pong: its metric name, the line it prints, and the
/// function that computes it.
#[derive(Debug)]
pub struct WakeReporter {
    name: &'static str,
    label: &'static str,
    value: fn(&Outcome) -> f64,
}

impl WakeReporter {
    /// [`mean_wake_latency`].
    pub const LATENCY: WakeReporter =
        WakeReporter { name: "wake latency", label: "mean wake-to-run latency", value: mean_wake_latency };
    /// [`mean_wake_call`].
    pub const CALL: WakeReporter =
        WakeReporter { name: "wake call", label: "mean futex_wake call of the waker", value: mean_wake_call };
}

impl Reporter for WakeReporter {
    fn render(&self, out: &Outcome) -> String {
        format!("{}: {:.0} ns\n", self.label, (self.value)(out))
    }
    fn metric(&self, out: &Outcome) -> Metric {
        Metric { name: self.name.into(), unit: "ns".into(), value: (self.value)(out), higher_is_better: false }
    }
}
