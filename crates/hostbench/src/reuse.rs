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
use crate::sys;
use crate::turns::{median, take_turns, timed};

/// One message of a netperf TCP_STREAM on loopback (its default send size there, 16 KiB).
pub const BYTES: usize = 16 << 10;
/// Cache lines in [`BYTES`].
pub const LINES: f64 = (BYTES / 64) as f64;
/// Turns per repetition.
const TURNS: usize = 400;

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
    (!per_turn.is_empty()).then(|| median(&per_turn))
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
            line: median(&t.line),
            write: median(&t.write),
            read: median(&t.read),
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
    (median(&w), median(&r))
}

/// Per turn: the line transfer, the write and the read, ns.
struct PerTurn {
    line: Vec<f64>,
    write: Vec<f64>,
    read: Vec<f64>,
}

/// The writer on `a` (this thread), the reader on `b`, in turns ([`take_turns`]): the writer
/// copies in, the reader copies out.
fn across(b: usize, buf: &mut [u8; BYTES], src: &[u8]) -> io::Result<PerTurn> {
    // The reader only reads the buffer during its turns, the writer only writes it during its
    // own. A raw address crosses the thread boundary.
    let addr = buf.as_mut_ptr() as usize;
    let mut dst = vec![0u8; BYTES];
    let write = |_| {
        // SAFETY: the reader does not touch the page during the writer's turn; `addr` points to
        // BYTES live bytes.
        let page = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, BYTES) };
        let t = timed(|| page.copy_from_slice(src));
        std::hint::black_box(&page);
        t
    };
    let read = move |_| {
        // SAFETY: as above, the writer does not touch the page during the reader's turn.
        let page = unsafe { std::slice::from_raw_parts(addr as *const u8, BYTES) };
        let t = timed(|| dst.copy_from_slice(page));
        std::hint::black_box(&dst);
        t
    };
    let t = take_turns(b, TURNS, "buffer turns", write, read)?;
    Ok(PerTurn { line: t.line, write: t.first, read: t.second })
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
