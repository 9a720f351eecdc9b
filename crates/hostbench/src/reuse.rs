//! A buffer two CPUs take turns on, as a loopback TCP stream uses its page frag: the sender
//! copies a message into it (`tcp_sendmsg()` → `skb_copy_to_page_nocache()`), the receiver on
//! another CPU copies it out (`skb_copy_datagram_iter()`), and once the receiver has freed the
//! skb the sender's `skb_page_frag_refill()` reuses the same page, writing lines the receiver
//! has just read. How many line misses a CPU keeps in flight when it streams so.
//!
//! Thread A (CPU `a`) and thread B (CPU `b`) take turns through one flag. Each turn A first
//! bounces another flag to B and back 16 times (32 line transfers, `line` each), then copies
//! [`BYTES`] into the buffer and hands it over; B copies them out and hands it back. Each times
//! its own copy; the same two copies on one CPU are the baseline. Per turn, against that turn's
//! own line (a hypervisor may move the vCPUs between cores that share an L3 and cores that do
//! not from one second to the next, so a line measured apart from the copies can belong to
//! another placement):
//!
//! `overlap = (BYTES / 64) · line / (cross-CPU copy − local copy)`
//!
//! for the write (`stream_write_overlap`) and the read (`stream_read_overlap`), the median over
//! the turns.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sys;

/// One message of a netperf TCP_STREAM on loopback (its default send size there, 16 KiB).
pub const BYTES: usize = 16 << 10;
/// Cache lines in [`BYTES`].
pub const LINES: f64 = (BYTES / 64) as f64;
/// Turns per repetition.
const TURNS: usize = 400;
/// The flag's "the other side failed" value.
const GAVE_UP: u64 = u64::MAX;

/// One repetition: median line transfer and copy times, ns (into the buffer after the other
/// CPU read it, out of it after the other CPU wrote it, and both on one CPU), and the median
/// over its turns of the misses in flight while writing and while reading (module doc; `None`
/// when no turn's cross-CPU copy was slower than the local one).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Turns {
    pub line: f64,
    pub write: f64,
    pub read: f64,
    pub local_write: f64,
    pub local_read: f64,
    pub write_overlap: Option<f64>,
    pub read_overlap: Option<f64>,
}

/// The median over turns of `LINES × line / (cross − local)`, for the turns whose cross-CPU
/// copy took longer than the local one.
pub fn overlap(lines: &[f64], cross: &[f64], local: f64) -> Option<f64> {
    let per_turn: Vec<f64> = lines.iter().zip(cross).filter(|&(_, &c)| c > local).map(|(&l, &c)| LINES * l / (c - local)).collect();
    (!per_turn.is_empty()).then(|| median(per_turn))
}

#[repr(align(4096))]
struct Page([u8; BYTES]);

/// `reps` repetitions of [`TURNS`] turns between CPUs `a` (writer) and `b` (reader), each with
/// its one-CPU baseline on `a`. `Err` if pinning is refused.
pub fn buffer_turns_ns(a: usize, b: usize, reps: usize) -> io::Result<Vec<Turns>> {
    let _keep = sys::KeepAffinity::new();
    crate::calib::probe(&[a, b], false)?;
    let mut shared = Box::new(Page([0; BYTES]));
    let src = vec![3u8; BYTES];
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        sys::pin_to(&[a])?;
        let (local_write, local_read) = local(&mut shared.0, &src);
        let t = across(b, &mut shared.0, &src)?;
        out.push(Turns {
            line: median(t.line.clone()),
            write: median(t.write.clone()),
            read: median(t.read.clone()),
            local_write,
            local_read,
            write_overlap: overlap(&t.line, &t.write, local_write),
            read_overlap: overlap(&t.line, &t.read, local_read),
        });
    }
    Ok(out)
}

/// Both copies on this CPU, [`TURNS`] times: median ns of each.
fn local(buf: &mut [u8; BYTES], src: &[u8]) -> (f64, f64) {
    let mut dst = vec![0u8; BYTES];
    let (mut w, mut r) = (Vec::with_capacity(TURNS), Vec::with_capacity(TURNS));
    for _ in 0..TURNS {
        w.push(timed(|| buf.copy_from_slice(src)));
        std::hint::black_box(&buf);
        r.push(timed(|| dst.copy_from_slice(&buf[..])));
        std::hint::black_box(&dst);
    }
    (median(w), median(r))
}

/// Per turn: the line transfer, the write and the read, ns.
struct PerTurn {
    line: Vec<f64>,
    write: Vec<f64>,
    read: Vec<f64>,
}

/// A flag on a line of its own (and its adjacent-line prefetch pair).
#[repr(align(128))]
struct Flag(AtomicU64);

/// Round trips of the bounce before each turn's copies: 2 × 16 line transfers, so the two
/// clock reads around them weigh little.
const BOUNCES: u64 = 16;

/// The writer on `a` (this thread), the reader on `b`. Turn `i`: the writer bounces `ball`
/// [`BOUNCES`] times (odd values its, even the reader's answers), copies in and sets `turn` to
/// `2i + 1`; the reader copies out and sets `2i + 2`.
fn across(b: usize, buf: &mut [u8; BYTES], src: &[u8]) -> io::Result<PerTurn> {
    let (turn, ball) = (Flag(AtomicU64::new(0)), Flag(AtomicU64::new(0)));
    // The reader only reads the buffer while the flag says it is its turn; the writer only
    // writes it while the flag says it is its own. A raw address crosses the thread boundary.
    let addr = buf.as_mut_ptr() as usize;
    std::thread::scope(|s| {
        let (turn, ball) = (&turn.0, &ball.0);
        let reader = s.spawn(move || -> io::Result<Vec<f64>> {
            let gave_up = || io::Error::other("the writer of the buffer turns gave up");
            let r = sys::pin_to(&[b]);
            if r.is_err() {
                turn.store(GAVE_UP, Ordering::Release);
                ball.store(GAVE_UP, Ordering::Release);
            }
            r?;
            let mut dst = vec![0u8; BYTES];
            let mut times = Vec::with_capacity(TURNS);
            for i in 0..TURNS as u64 {
                for k in 0..BOUNCES {
                    let v = 2 * (i * BOUNCES + k);
                    if !wait_for(ball, v + 1) {
                        return Err(gave_up());
                    }
                    ball.store(v + 2, Ordering::Release);
                }
                if !wait_for(turn, 2 * i + 1) {
                    return Err(gave_up());
                }
                // SAFETY: the writer does not touch the page until the flag moves on (Acquire
                // above pairs with its Release); `addr` points to BYTES live bytes.
                let page = unsafe { std::slice::from_raw_parts(addr as *const u8, BYTES) };
                times.push(timed(|| dst.copy_from_slice(page)));
                std::hint::black_box(&dst);
                turn.store(2 * i + 2, Ordering::Release);
            }
            Ok(times)
        });
        let (mut line, mut write) = (Vec::with_capacity(TURNS), Vec::with_capacity(TURNS));
        'turns: for i in 0..TURNS as u64 {
            if !wait_for(turn, 2 * i) {
                break;
            }
            let t0 = sys::now_ns();
            for k in 0..BOUNCES {
                let v = 2 * (i * BOUNCES + k);
                ball.store(v + 1, Ordering::Release);
                if !wait_for(ball, v + 2) {
                    break 'turns;
                }
            }
            line.push((sys::now_ns() - t0) as f64 / (2 * BOUNCES) as f64);
            // SAFETY: as above, the reader does not touch the page during the writer's turn.
            let page = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, BYTES) };
            write.push(timed(|| page.copy_from_slice(src)));
            std::hint::black_box(&page);
            turn.store(2 * i + 1, Ordering::Release);
        }
        let read = reader.join().map_err(|_| io::Error::other("buffer reader panicked"))??;
        Ok(PerTurn { line, write, read })
    })
}

/// Spins until `turn` is `want`; false if the other side gave up.
fn wait_for(turn: &AtomicU64, want: u64) -> bool {
    loop {
        match turn.load(Ordering::Acquire) {
            v if v == want => return true,
            GAVE_UP => return false,
            _ => std::hint::spin_loop(),
        }
    }
}

fn timed(f: impl FnOnce()) -> f64 {
    let t0 = sys::now_ns();
    f();
    (sys::now_ns() - t0) as f64
}

/// The median of `xs` (NaN if empty).
fn median(xs: Vec<f64>) -> f64 {
    crate::Summary::of(&xs).map_or(f64::NAN, |s| s.median)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_the_lines_serial_time_over_the_extra_time_per_turn() {
        // 256 lines of 200 ns one after another = 51.2 µs; 5.12 µs extra = 10 in flight. The
        // second turn's line is 40 ns (another placement): 256 × 40 / 1024 = 10 as well.
        let o = overlap(&[200.0, 40.0, 200.0], &[5_620.0, 1_524.0, 5_620.0], 500.0).unwrap();
        assert!((o - 10.0).abs() < 1e-9);
        // A turn no slower than the local copy gives no figure; none at all gives None.
        assert_eq!(overlap(&[200.0], &[400.0], 500.0), None);
    }
}
