//! Two threads pinned to two CPUs taking turns through flags on lines of their own, each turn
//! beside a line transfer between them: what [`crate::reuse`] and [`crate::lb_scan`] time.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sys;

/// The flag's "the other side failed" value.
const GAVE_UP: u64 = u64::MAX;
/// Round trips of the bounce before each turn: 2 × 16 line transfers, so the two clock reads
/// around them weigh little.
const BOUNCES: u64 = 16;

/// A flag on a line of its own (and its adjacent-line prefetch pair).
#[repr(align(128))]
struct Flag(AtomicU64);

/// Per turn: the line transfer (ns, half a round trip) and what each side's step returned.
pub(crate) struct Turns<A, B> {
    pub line: Vec<f64>,
    pub first: Vec<A>,
    pub second: Vec<B>,
}

/// `turns` turns between this thread (already on its CPU) and a thread pinned to `b`. Turn `i`:
/// this thread bounces a flag with the other [`BOUNCES`] times (odd values its, even the other's
/// answers), runs `first(i)` and hands over; the other runs `second(i)` and hands back. Neither
/// step runs during the other's turn. `Err` if pinning to `b` is refused or its thread panics;
/// `what` names the measurement in the error.
pub(crate) fn take_turns<A, B: Send>(
    b: usize,
    turns: usize,
    what: &str,
    mut first: impl FnMut(u64) -> A,
    mut second: impl FnMut(u64) -> B + Send,
) -> io::Result<Turns<A, B>> {
    let (turn, ball) = (Flag(AtomicU64::new(0)), Flag(AtomicU64::new(0)));
    std::thread::scope(|s| {
        let (turn, ball) = (&turn.0, &ball.0);
        let other = s.spawn(move || -> io::Result<Vec<B>> {
            let gave_up = || io::Error::other(format!("the first side of the {what} gave up"));
            if let Err(e) = sys::pin_to(&[b]) {
                turn.store(GAVE_UP, Ordering::Release);
                ball.store(GAVE_UP, Ordering::Release);
                return Err(e);
            }
            let mut out = Vec::with_capacity(turns);
            for i in 0..turns as u64 {
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
                out.push(second(i));
                turn.store(2 * i + 2, Ordering::Release);
            }
            Ok(out)
        });
        let (mut line, mut out) = (Vec::with_capacity(turns), Vec::with_capacity(turns));
        'turns: for i in 0..turns as u64 {
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
            out.push(first(i));
            turn.store(2 * i + 1, Ordering::Release);
        }
        let second = other.join().map_err(|_| io::Error::other(format!("{what}: the thread on CPU {b} panicked")))??;
        Ok(Turns { line, first: out, second })
    })
}

/// Spins until `flag` is `want`; false if the other side gave up.
fn wait_for(flag: &AtomicU64, want: u64) -> bool {
    loop {
        match flag.load(Ordering::Acquire) {
            v if v == want => return true,
            GAVE_UP => return false,
            _ => std::hint::spin_loop(),
        }
    }
}

/// How long `f` takes, ns.
pub(crate) fn timed(f: impl FnOnce()) -> f64 {
    let t0 = sys::now_ns();
    f();
    (sys::now_ns() - t0) as f64
}

/// The median of `xs` (NaN if empty).
pub(crate) fn median(xs: &[f64]) -> f64 {
    crate::Summary::of(xs).map_or(f64::NAN, |s| s.median)
}
