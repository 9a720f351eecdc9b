//! A pipe or socket handed back and forth between two pinned CPUs without anyone sleeping:
//! how many cache lines the channel's state and each message pull from the other CPU.
//!
//! Thread A (CPU `a`) writes a burst of `k` 100 B messages into channel 1 and raises a flag;
//! thread B (CPU `b`) spins on the flag, reads the burst, writes `k` messages into channel 2 and
//! raises its flag; A spins, reads them. A round trip is `2k` writes and `2k` reads, of which
//! four (each side's first write and first read) find the channel's state on the other CPU,
//! and `2k` messages read on another CPU than the one that wrote them; two flag transfers; no
//! wakeup. Against the same ops on one thread ([`crate::calib::channel_pair_ns`]):
//!
//! `round trip(k) = 2k · (hot pair + msg_lines · line) + 2 · line + 4 · chan_lines · line`
//!
//! so two burst sizes give both counts (`wakesim calibrate`: `pipe_msg_lines` / `sock_msg_lines`
//! and `pipe_lines` / `sock_lines`).

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::calib::probe;
use crate::sys;

const BYTES: usize = 100;

/// Flag value of a side that failed: the other stops spinning instead of waiting forever.
const GAVE_UP: u32 = 2;

/// One side: side 0 writes first. Spins on `flags[me]` (a user-space flag, so the channel's
/// lines are touched only by the syscalls), then reads its channel, writes the other. On an
/// error it marks the other side's flag [`GAVE_UP`].
fn side(cpu: usize, me: usize, rx: i32, tx: i32, flags: &[AtomicU32; 2], k: usize, rounds: u64) -> io::Result<()> {
    let r = side_rounds(cpu, me, rx, tx, flags, k, rounds);
    if r.is_err() {
        flags[1 - me].store(GAVE_UP, Ordering::Release);
    }
    r
}

fn side_rounds(cpu: usize, me: usize, rx: i32, tx: i32, flags: &[AtomicU32; 2], k: usize, rounds: u64) -> io::Result<()> {
    sys::pin_to(&[cpu])?;
    let mut buf = [1u8; BYTES];
    let send = |buf: &[u8; BYTES]| -> io::Result<()> {
        for _ in 0..k {
            // SAFETY: buf is valid for BYTES; a burst of MAX_BURST messages fits the channel.
            let w = unsafe { libc::write(tx, buf.as_ptr() as *const libc::c_void, BYTES) };
            if w != BYTES as isize {
                return Err(io::Error::other("short write"));
            }
        }
        flags[1 - me].store(1, Ordering::Release);
        Ok(())
    };
    for _ in 0..rounds {
        if me == 0 {
            send(&buf)?;
        }
        loop {
            match flags[me].load(Ordering::Acquire) {
                0 => std::hint::spin_loop(),
                GAVE_UP => return Err(io::Error::other("the other side of the handoff failed")),
                _ => break,
            }
        }
        flags[me].store(0, Ordering::Relaxed);
        for _ in 0..k {
            // SAFETY: buf is valid for BYTES.
            let r = unsafe { libc::read(rx, buf.as_mut_ptr() as *mut libc::c_void, BYTES) };
            if r != BYTES as isize {
                return Err(io::Error::other("short read"));
            }
        }
        if me == 1 {
            send(&buf)?;
        }
    }
    Ok(())
}

/// The largest burst: 32 messages of 100 B fit a pipe (40 per page) and a unix socket's send
/// buffer (278 skbs) without blocking.
pub const MAX_BURST: usize = 32;

/// Nanoseconds per round trip (bursts of `k` writes and `k` reads each way, see the module
/// doc) between threads pinned to `a` and `b`, per repetition of `rounds` round trips.
pub fn channel_handoff_ns(socket: bool, a: usize, b: usize, k: usize, rounds: u64, reps: usize) -> io::Result<Vec<f64>> {
    if k == 0 || k > MAX_BURST {
        return Err(io::Error::other(format!("burst {k} outside 1..={MAX_BURST}")));
    }
    let _keep = sys::KeepAffinity::new();
    probe(&[a, b], false)?;
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        let chans = [sys::channel_pair(socket)?, sys::channel_pair(socket)?];
        let flags = [AtomicU32::new(0), AtomicU32::new(0)];
        let r = std::thread::scope(|s| -> io::Result<f64> {
            let flags = &flags;
            // B reads channel 0 and writes channel 1; A the reverse.
            let peer = s.spawn(move || side(b, 1, chans[0].0, chans[1].1, flags, k, rounds));
            let t0 = sys::now_ns();
            let mine = side(a, 0, chans[1].0, chans[0].1, flags, k, rounds);
            let dt = sys::now_ns() - t0;
            let theirs = peer.join().map_err(|_| io::Error::other("handoff peer panicked"))?;
            // The side that failed first carries the cause; the other only says it stopped.
            match (mine, theirs) {
                (Ok(()), Ok(())) => Ok(dt as f64 / rounds as f64),
                (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
                (Err(a), Err(b)) => Err(if a.to_string().contains("other side") { b } else { a }),
            }
        });
        sys::close_pairs(&chans);
        out.push(r?);
    }
    Ok(out)
}
