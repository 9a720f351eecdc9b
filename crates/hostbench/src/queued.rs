//! Socket messages that wait long enough to leave the cache.
//!
//! [`queued_pair_ns`] writes [`DEPTH`] 100-byte messages into each of many unix socketpairs, then
//! reads them all back, on one pinned thread: every skb waits while the others are written, so
//! with more queued than the private cache holds each read finds its skb and data head evicted.
//! Against [`crate::calib::channel_pair_ns`] (one message in flight, always cached) the
//! difference per message is `sock_msg_cold`. [`private_cache_bytes`] reads the size of the
//! cache this must overflow from sysfs.

use std::io;

use crate::sys;
use wakesim_machine::CpuSet;

/// 100-byte messages queued per socket: below the 278 a 212992-byte `sk_sndbuf` admits
/// (`wakesim_workloads::defaults::unix_stream_capacity`), so no write blocks.
pub const DEPTH: usize = 200;

/// Sockets needed to queue at least `bytes` of skbs (768 B truesize per 100 B message): at
/// least 8, at most 400 (800 fds, inside the common 1024 open-file limit).
pub fn sockets_for(bytes: u64) -> usize {
    let per_socket = DEPTH as u64 * wakesim_workloads::defaults::unix_skb_truesize(100);
    (bytes.div_ceil(per_socket) as usize).clamp(8, 400)
}

/// Nanoseconds per 100-byte write + read pair with `sockets × DEPTH` messages queued, per
/// repetition of `rounds` fill-and-drain rounds, on a thread pinned to `cpu`.
pub fn queued_pair_ns(cpu: usize, sockets: usize, rounds: u64, reps: usize) -> io::Result<Vec<f64>> {
    std::thread::scope(|s| {
        s.spawn(|| {
            sys::pin_to(&[cpu])?;
            fill_and_drain(sockets, rounds, reps)
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("queued-socket measurement thread panicked")))
    })
}

fn fill_and_drain(sockets: usize, rounds: u64, reps: usize) -> io::Result<Vec<f64>> {
    let mut fds = Vec::with_capacity(sockets);
    let mut res = Ok(());
    for _ in 0..sockets {
        match sys::channel_pair(true) {
            Ok(p) => fds.push(p),
            Err(e) => {
                res = Err(e);
                break;
            }
        }
    }
    let mut out = Vec::with_capacity(reps);
    let mut buf = [1u8; 100];
    'reps: for _ in 0..if res.is_ok() { reps } else { 0 } {
        let t0 = sys::now_ns();
        for _ in 0..rounds {
            for &(_, w) in &fds {
                for _ in 0..DEPTH {
                    // SAFETY: buf is valid for 100 bytes; DEPTH messages fit the send buffer.
                    if unsafe { libc::write(w, buf.as_ptr() as *const libc::c_void, 100) } != 100 {
                        res = Err(io::Error::other("short write to a queued socket"));
                        break 'reps;
                    }
                }
            }
            for &(r, _) in &fds {
                for _ in 0..DEPTH {
                    // SAFETY: as above; each read takes one queued message.
                    if unsafe { libc::read(r, buf.as_mut_ptr() as *mut libc::c_void, 100) } != 100 {
                        res = Err(io::Error::other("short read from a queued socket"));
                        break 'reps;
                    }
                }
            }
        }
        out.push((sys::now_ns() - t0) as f64 / (rounds * (sockets * DEPTH) as u64) as f64);
    }
    sys::close_pairs(&fds);
    res.map(|_| out)
}

/// The private (per-core) cache's size in bytes: the largest data or unified cache of CPU
/// `cpu` shared with no CPU outside its core (sysfs `cache/index*/{type,size,shared_cpu_list}`;
/// an SMT sibling may share it). `None` when sysfs does not say.
pub fn private_cache_bytes(cpu: usize) -> Option<u64> {
    let base = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
    let core = std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list")).ok()?;
    let core = CpuSet::parse_list(&core).ok()?;
    let mut best = None;
    for i in 0..8 {
        let read = |f: &str| std::fs::read_to_string(format!("{base}/index{i}/{f}")).ok().map(|s| s.trim().to_string());
        let (Some(kind), Some(size), Some(shared)) = (read("type"), read("size"), read("shared_cpu_list")) else {
            continue;
        };
        if kind == "Instruction" || !CpuSet::parse_list(&shared).ok()?.is_subset_of(&core) {
            continue;
        }
        let bytes = parse_size(&size)?;
        best = best.max(Some(bytes));
    }
    best
}

/// sysfs cache sizes: `48K`, `2048K`, `32M`.
fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_cache_sizes_parse_with_their_suffix() {
        assert_eq!(parse_size("48K"), Some(48 << 10));
        assert_eq!(parse_size("2048K"), Some(2 << 20));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn enough_sockets_queue_the_asked_bytes() {
        let n = sockets_for(16 << 20);
        assert!(n as u64 * DEPTH as u64 * 768 >= 16 << 20, "{n}");
        assert_eq!(sockets_for(1), 8);
    }
}
