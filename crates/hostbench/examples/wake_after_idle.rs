//! Wake latency of a CPU by how long it has been idle, with the waker kept running:
//! `cargo run --release -p wakesim-hostbench --example wake_after_idle`.
//!
//! The wakee (second usable CPU) announces that it is about to sleep and waits on a futex; the
//! waker (first usable CPU) spins until the announcement, spins `gap` longer, then wakes it.
//! Unlike calibrate's futex ping-pong, in which both CPUs idle in turn, the waker never idles:
//! the case of a streaming sender waking its receiver. Prints the median wake-to-run latency and
//! the waker's `futex_wake` call for each gap (docs/accuracy.md, "Streams").

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use wakesim_hostbench::sys;

const WAKES: usize = 2_000;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let cpus = sys::allowed_cpus();
    if cpus.len() < 2 {
        eprintln!("needs two usable CPUs");
        std::process::exit(1);
    }
    let (a, b) = (cpus[0], cpus[1]);
    for gap_us in [1u64, 2, 5, 10, 20, 50, 100, 300] {
        let (word, sleeping, ack, stamp) = (AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0), AtomicU64::new(0));
        let (lats, calls) = std::thread::scope(|s| {
            let wakee = s.spawn(|| {
                sys::pin_to(&[b]).expect("pin wakee");
                let mut lats = Vec::with_capacity(WAKES);
                for _ in 0..WAKES {
                    word.store(0, Ordering::SeqCst);
                    sleeping.store(1, Ordering::SeqCst);
                    while word.load(Ordering::SeqCst) == 0 {
                        sys::futex_wait(&word, 0, false);
                    }
                    lats.push((sys::now_ns() - stamp.load(Ordering::SeqCst)) as f64);
                    ack.store(1, Ordering::SeqCst);
                }
                lats
            });
            sys::pin_to(&[a]).expect("pin waker");
            let mut calls = Vec::with_capacity(WAKES);
            for _ in 0..WAKES {
                while sleeping.swap(0, Ordering::SeqCst) == 0 {
                    std::hint::spin_loop();
                }
                let until = sys::now_ns() + gap_us * 1000;
                while sys::now_ns() < until {
                    std::hint::spin_loop();
                }
                let t = sys::now_ns();
                stamp.store(t, Ordering::SeqCst);
                word.store(1, Ordering::SeqCst);
                sys::futex_wake(&word, 1, false);
                calls.push((sys::now_ns() - t) as f64);
                while ack.swap(0, Ordering::SeqCst) == 0 {
                    std::hint::spin_loop();
                }
            }
            (wakee.join().expect("wakee"), calls)
        });
        println!("idle {gap_us:>4} us: wake latency median {:>7.0} ns, waker's call median {:>6.0} ns", median(lats), median(calls));
    }
}
