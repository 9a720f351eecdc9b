//! Which side of a unix socket pays how much: a sender and a receiver thread pinned to one CPU
//! stream 100-byte messages through one socketpair, as `hackbench -f 1` does, and each reads its
//! own thread CPU time (`CLOCK_THREAD_CPUTIME_ID`, the same `sum_exec_runtime` EEVDF charges).
//!
//! The sender mostly runs until the socket's send buffer is full or the scheduler preempts it;
//! the receiver drains it: few switches per message, so each side's time per message is its
//! own syscall, copy and socket work (`unix_stream_sendmsg` allocates and queues the skb;
//! `unix_stream_read_generic` dequeues, copies and frees it). The split matters beyond its sum:
//! EEVDF charges each side its own vruntime, so it decides whether a woken receiver preempts
//! the sender (`wakesim calibrate` takes `unix_send : unix_recv` from it).

use std::io;

use crate::sys;

const BYTES: usize = 100;

/// One repetition: each side's CPU time per message, ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Split {
    pub sender_ns: f64,
    pub receiver_ns: f64,
}

/// `msgs` 100-byte messages from a sender to a receiver thread, both pinned to `cpu`, per
/// repetition. `Err` if pinning is refused or a socket call fails.
pub fn stream_split_ns(cpu: usize, msgs: u64, reps: usize) -> io::Result<Vec<Split>> {
    stream_split_across_ns(cpu, cpu, msgs, reps)
}

/// The same stream with the sender pinned to `send_cpu` and the receiver to `recv_cpu`: on two
/// CPUs each side's time per message shows what the cross-CPU work of a stream costs it (the
/// socket's and each message's lines move while both ends keep running).
pub fn stream_split_across_ns(send_cpu: usize, recv_cpu: usize, msgs: u64, reps: usize) -> io::Result<Vec<Split>> {
    crate::calib::probe(&[send_cpu, recv_cpu], false)?;
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        let (rx, tx) = sys::channel_pair(true)?;
        let r = std::thread::scope(|s| {
            let send = s.spawn(|| side(send_cpu, tx, msgs, true));
            let recv = s.spawn(|| side(recv_cpu, rx, msgs, false));
            let join = |h: std::thread::ScopedJoinHandle<'_, io::Result<u64>>| {
                h.join().unwrap_or_else(|_| Err(io::Error::other("stream measurement thread panicked")))
            };
            let (s, r) = (join(send), join(recv));
            Ok::<_, io::Error>((s?, r?))
        });
        // SAFETY: closing our own fds (both threads have finished).
        unsafe {
            libc::close(rx);
            libc::close(tx);
        }
        let (s, r) = r?;
        out.push(Split { sender_ns: s as f64 / msgs as f64, receiver_ns: r as f64 / msgs as f64 });
    }
    Ok(out)
}

/// One side: pin, then write (or read until) `msgs` messages; its thread CPU time. A side that
/// fails shuts the socket down so the other's blocking call returns instead of waiting forever.
fn side(cpu: usize, fd: i32, msgs: u64, sender: bool) -> io::Result<u64> {
    let r = side_ops(cpu, fd, msgs, sender);
    if r.is_err() {
        // SAFETY: shutdown of our own fd; wakes a peer blocked on the socket.
        unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
    }
    r
}

fn side_ops(cpu: usize, fd: i32, msgs: u64, sender: bool) -> io::Result<u64> {
    sys::pin_to(&[cpu])?;
    let mut buf = [1u8; BYTES];
    let t0 = sys::thread_cpu_ns();
    if sender {
        for _ in 0..msgs {
            // SAFETY: buf is valid for BYTES; a full send buffer blocks until the reader drains it.
            if unsafe { libc::write(fd, buf.as_ptr() as *const libc::c_void, BYTES) } != BYTES as isize {
                return Err(io::Error::other("short write to the streamed socket"));
            }
        }
    } else {
        let mut left = msgs * BYTES as u64;
        while left > 0 {
            // SAFETY: buf is valid for BYTES.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, BYTES) };
            if n <= 0 {
                return Err(io::Error::other("the streamed socket closed early"));
            }
            left = left.saturating_sub(n as u64);
        }
    }
    Ok(sys::thread_cpu_ns() - t0)
}
