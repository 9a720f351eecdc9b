//! The lock log: where a recorded program's pthread mutexes are taken and released.
//!
//! A free mutex is taken and released in user space, so the trace shows only the contended
//! ones, and only their futex syscalls. `record` preloads a small library
//! (`crates/cli/preload/lock_log.c`, built by `build.rs` and embedded here) that appends each
//! `pthread_mutex_lock` / `trylock` / `unlock` and `pthread_cond_wait` entry and return, with
//! its CLOCK_MONOTONIC time, to a file every process of the command maps shared. The trace is
//! recorded with tracefs's `mono` clock, the same clock, so the two merge: the log becomes
//! trace lines (`wakesim_mutex_lock: m=0x…`), which `--keep-trace` keeps and `--import` reads.

use crate::UserError;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The preload library, as `build.rs` compiled it for this machine.
const LIBRARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/liblocklog.so"));

/// Layout shared with lock_log.c: a header {magic, next, cap, lost} of u64, then records of
/// {ts u64, pid u32, tid u32, op u32, cpu u32, a u64, b u64}.
const MAGIC: u64 = 0x676f_6c6b_636f_6c77;
const HEADER: usize = 32;
const REC: usize = 40;
/// The record's `op`, and the trace event each becomes (lock_log.c's `OP_*`).
const OPS: [(u32, &str); 4] = [
    (1, "wakesim_mutex_lock"),
    (2, "wakesim_mutex_unlock"),
    (3, "wakesim_cond_wait"),
    (4, "wakesim_cond_wait_ret"),
];
/// The condvar ops, whose mutex is the record's second address (`b`; the first is the condvar).
const COND_OPS: u32 = 3;
/// Calls the log holds: 4 M records, 160 MB of a sparse file (only what is written takes room).
const CAPACITY: u64 = 4 << 20;

/// The library and the log file of one recording, in a private directory removed on drop.
pub struct LockLog {
    dir: PathBuf,
    log: PathBuf,
    lib: PathBuf,
}

fn io(what: &str, p: &std::path::Path, e: std::io::Error) -> UserError {
    UserError(format!("cannot {what} {}: {e}", p.display()))
}

impl LockLog {
    pub fn create() -> Result<LockLog, UserError> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("wakesim-record.{}.{seq}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::DirBuilder::new().mode(0o755).create(&dir).map_err(|e| io("create", &dir, e))?;
        let ll = LockLog { log: dir.join("locks.bin"), lib: dir.join("liblocklog.so"), dir };
        std::fs::write(&ll.lib, LIBRARY).map_err(|e| io("write", &ll.lib, e))?;
        std::fs::set_permissions(&ll.lib, std::fs::Permissions::from_mode(0o755)).map_err(|e| io("chmod", &ll.lib, e))?;
        let mut head = Vec::with_capacity(HEADER);
        for v in [MAGIC, 0, CAPACITY, 0] {
            head.extend_from_slice(&v.to_ne_bytes());
        }
        std::fs::write(&ll.log, &head).map_err(|e| io("write", &ll.log, e))?;
        let f = std::fs::OpenOptions::new().write(true).open(&ll.log).map_err(|e| io("open", &ll.log, e))?;
        f.set_len(HEADER as u64 + CAPACITY * REC as u64).map_err(|e| io("size", &ll.log, e))?;
        Ok(ll)
    }

    /// The environment that preloads the library into the command (after any LD_PRELOAD it has).
    pub fn env(&self) -> Vec<(String, String)> {
        let lib = self.lib.display().to_string();
        let preload = match std::env::var("LD_PRELOAD") {
            Ok(p) if !p.trim().is_empty() => format!("{p} {lib}"),
            _ => lib,
        };
        vec![("LD_PRELOAD".into(), preload), ("WAKESIM_LOCKLOG".into(), self.log.display().to_string())]
    }

    /// The log as trace lines (`<...>-TID (PID) [CPU] ..... SECS.USECS: wakesim_…: m=0x…`), and
    /// how many calls it holds. A log that ran out of room is refused, as a trace that lost
    /// events is.
    pub fn lines(&self) -> Result<(String, u64), UserError> {
        let bytes = std::fs::read(&self.log).map_err(|e| io("read", &self.log, e))?;
        let u64_at = |o: usize| u64::from_ne_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
        let u32_at = |o: usize| u32::from_ne_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
        let (next, lost) = (u64_at(8), u64_at(24));
        if lost > 0 {
            return Err(UserError(format!("the lock log lost {lost} of {next} mutex calls: record a shorter run; nothing written")));
        }
        // In time order (threads take their slots a few ns before they read the clock).
        let mut slots: Vec<(u64, usize)> = (0..next.min(CAPACITY) as usize)
            .map(|i| (u64_at(HEADER + i * REC), HEADER + i * REC))
            .filter(|&(ts, _)| ts != 0) // never finished (the thread was killed mid-call)
            .collect();
        slots.sort_unstable();
        let mut out = String::new();
        let mut n = 0;
        for (ts, o) in slots {
            let (pid, tid, op, cpu, m) = (u32_at(o + 8), u32_at(o + 12), u32_at(o + 16), u32_at(o + 20), u64_at(o + 32));
            let m = if op >= COND_OPS { m } else { u64_at(o + 24) };
            let Some(&(_, name)) = OPS.iter().find(|&&(k, _)| k == op) else { continue };
            let _ = writeln!(out, "<...>-{tid} ({pid:>7}) [{cpu:03}] ..... {}.{:06}: {name}: m={m:#x}", ts / 1_000_000_000, ts % 1_000_000_000 / 1000);
            n += 1;
        }
        Ok((out, n))
    }
}

impl Drop for LockLog {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::events::{parse, Kind};

    /// The C library and this reader agree on the log's layout: a program (built with the C
    /// compiler the build used) takes a mutex, waits 2 ms on a condvar and releases it.
    #[test]
    fn the_preloaded_library_logs_a_programs_mutex_and_condvar_calls_in_order() {
        let ll = LockLog::create().unwrap();
        let (src, exe) = (ll.dir.join("t.c"), ll.dir.join("t"));
        std::fs::write(
            &src,
            "#include <pthread.h>\n#include <time.h>\n\
             static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER; static pthread_cond_t c = PTHREAD_COND_INITIALIZER;\n\
             int main(void) { struct timespec t; clock_gettime(CLOCK_REALTIME, &t); t.tv_nsec += 2000000;\n\
             if (t.tv_nsec >= 1000000000) { t.tv_sec++; t.tv_nsec -= 1000000000; }\n\
             pthread_mutex_lock(&m); pthread_cond_timedwait(&c, &m, &t); pthread_mutex_unlock(&m); return 0; }\n",
        )
        .unwrap();
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let built = std::process::Command::new(&cc).args(["-O2", "-pthread", "-o"]).arg(&exe).arg(&src).status();
        assert!(built.is_ok_and(|s| s.success()), "{cc} builds the test program");
        let ran = std::process::Command::new(&exe).envs(ll.env()).status().unwrap();
        assert!(ran.success());
        let (text, n) = ll.lines().unwrap();
        assert_eq!(n, 4, "{text}");
        let rec = parse(&text, "log").unwrap();
        let kinds: Vec<&Kind> = rec.events.iter().map(|e| &e.kind).collect();
        let m = match kinds[0] {
            Kind::MutexLock { m } => *m,
            k => panic!("first {k:?}"),
        };
        assert_eq!(kinds, [&Kind::MutexLock { m }, &Kind::CondWait { m }, &Kind::CondWaitRet { m }, &Kind::MutexUnlock { m }]);
        assert!(rec.events.iter().all(|e| e.pid == rec.events[0].pid));
        let waited = rec.events[2].ts - rec.events[1].ts;
        assert!((2_000_000..1_000_000_000).contains(&waited), "the timed wait lasted {waited} ns");
    }
}
