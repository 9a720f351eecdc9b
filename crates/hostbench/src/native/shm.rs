//! The state a native run's tasks share, in one [`Shared`] region so that forked processes and
//! threads see the same words: futex counters, barriers, mutexes, per-CPU lock arrays, exit
//! times, the mark log and the first error any task hit.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::sys::Shared;
use wakesim_workloads::{MarkRecord, Op, Workload};

/// Marks kept per run: 16 bytes each, in `MAP_NORESERVE` memory (untouched pages cost nothing).
pub const MARK_CAPACITY: usize = 1 << 24;
const ERR_SLOTS: usize = 32; // 256 bytes of error text
/// Slots between two per-CPU locks: schbench's `struct per_cpu_lock` is a 40-byte
/// `pthread_mutex_t` padded by `__attribute__((aligned))` to 16 bytes (x86-64, no `-march`),
/// so 48 bytes, and neighbouring CPUs' locks share cache lines as they do there.
const CPU_LOCK_STRIDE: usize = 6;

/// Slot offsets of each array in the region (in 8-byte slots).
pub struct Shm {
    mem: Shared,
    futex0: usize,
    barrier0: usize,
    lock0: usize,
    cpu_lock0: usize,
    /// CPUs per lock array (`sysconf(_SC_NPROCESSORS_CONF)`).
    ncpus: usize,
    exit0: usize,
    mark0: usize,
    tasks: usize,
}

/// Largest barrier / lock id / per-CPU lock array used by any task, plus one.
fn ids(w: &Workload) -> (usize, usize, usize) {
    let (mut b, mut l, mut s) = (0, 0, 0);
    for op in w.tasks.iter().flat_map(|t| &t.program) {
        match *op {
            Op::Barrier { id, .. } => b = b.max(id as usize + 1),
            Op::Lock { id } | Op::Unlock { id } => l = l.max(id as usize + 1),
            Op::CpuSpinLock { set } | Op::CpuSpinUnlock { set } => s = s.max(set as usize + 1),
            _ => {}
        }
    }
    (b, l, s)
}

impl Shm {
    pub fn new(w: &Workload) -> std::io::Result<Shm> {
        let (barriers, locks, sets) = ids(w);
        let ncpus = crate::sys::possible_cpus();
        let futex0 = 3 + ERR_SLOTS;
        let barrier0 = futex0 + w.futexes as usize;
        let lock0 = barrier0 + 2 * barriers;
        let cpu_lock0 = (lock0 + locks).next_multiple_of(8); // arrays start on a cache line
        let exit0 = cpu_lock0 + sets * ncpus * CPU_LOCK_STRIDE;
        let mark0 = exit0 + w.tasks.len();
        let mem = Shared::new((mark0 + 2 * MARK_CAPACITY) * 8)?;
        Ok(Shm { mem, futex0, barrier0, lock0, cpu_lock0, ncpus, exit0, mark0, tasks: w.tasks.len() })
    }

    fn u64(&self, i: usize) -> &AtomicU64 {
        self.mem.slot(i)
    }

    /// The run's time origin (`CLOCK_MONOTONIC` ns), set once before any task starts.
    pub fn set_origin(&self, t0: u64) {
        self.u64(1).store(t0, Ordering::SeqCst);
    }

    /// Nanoseconds since the origin.
    #[inline]
    pub fn now(&self) -> u64 {
        crate::sys::now_ns().saturating_sub(self.u64(1).load(Ordering::Relaxed))
    }

    /// The semaphore count of futex `i` (the language's FutexWait/FutexWake).
    pub fn futex(&self, i: u32) -> &AtomicU32 {
        self.mem.slot(self.futex0 + i as usize)
    }

    /// Barrier `i`: (arrivals, generation).
    pub fn barrier(&self, i: u32) -> (&AtomicU32, &AtomicU32) {
        let s = self.barrier0 + 2 * i as usize;
        (self.mem.slot(s), self.mem.slot(s + 1))
    }

    /// Mutex `i`: 0 free, 1 locked, 2 locked with waiters (Drepper, "Futexes are tricky").
    pub fn lock(&self, i: u32) -> &AtomicU32 {
        self.mem.slot(self.lock0 + i as usize)
    }

    /// The lock of `cpu` in per-CPU lock array `set`: 0 free, 1 held; `None` for a CPU id
    /// beyond the configured CPUs.
    pub fn cpu_lock(&self, set: u32, cpu: usize) -> Option<&AtomicU32> {
        (cpu < self.ncpus).then(|| self.mem.slot(self.cpu_lock0 + (set as usize * self.ncpus + cpu) * CPU_LOCK_STRIDE))
    }

    pub fn record_exit(&self, task: u32, at: u64) {
        self.u64(self.exit0 + task as usize).store(at + 1, Ordering::Release);
    }

    /// Append a mark; false if the log is full (the run is then reported as an error).
    #[inline]
    pub fn mark(&self, mark: u32, task: u32, at: u64) -> bool {
        let i = self.u64(0).fetch_add(1, Ordering::Relaxed) as usize;
        if i >= MARK_CAPACITY {
            return false;
        }
        let s = self.mark0 + 2 * i;
        self.u64(s + 1).store(at, Ordering::Relaxed);
        self.u64(s).store((u64::from(mark) << 32 | u64::from(task)) + 1, Ordering::Release);
        true
    }

    /// Record the first error; later ones are dropped.
    pub fn fail(&self, msg: &str) {
        let flag: &AtomicU32 = self.mem.slot(2);
        if flag.compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            return;
        }
        let bytes = msg.as_bytes();
        for k in 0..ERR_SLOTS {
            let mut w = [0u8; 8];
            for (j, b) in w.iter_mut().enumerate() {
                *b = bytes.get(k * 8 + j).copied().unwrap_or(0);
            }
            self.u64(3 + k).store(u64::from_le_bytes(w), Ordering::Relaxed);
        }
        flag.store(2, Ordering::SeqCst);
    }

    pub fn failed(&self) -> bool {
        self.mem.slot::<AtomicU32>(2).load(Ordering::SeqCst) != 0
    }

    /// The first error's text, if any task failed.
    pub fn error(&self) -> Option<String> {
        if !self.failed() {
            return None;
        }
        let mut bytes = Vec::new();
        for k in 0..ERR_SLOTS {
            bytes.extend_from_slice(&self.u64(3 + k).load(Ordering::SeqCst).to_le_bytes());
        }
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
    }

    /// Whether more marks were recorded than the log holds.
    pub fn marks_overflowed(&self) -> bool {
        self.u64(0).load(Ordering::SeqCst) as usize > MARK_CAPACITY
    }

    /// The recorded marks in time order (ties by task, then mark id).
    pub fn marks(&self) -> Vec<MarkRecord> {
        let n = (self.u64(0).load(Ordering::SeqCst) as usize).min(MARK_CAPACITY);
        let mut v: Vec<MarkRecord> = (0..n)
            .filter_map(|i| {
                let s = self.mark0 + 2 * i;
                let id = self.u64(s).load(Ordering::Acquire);
                // 0: reserved by a task killed before it wrote the record.
                (id != 0).then(|| MarkRecord {
                    mark: ((id - 1) >> 32) as u32,
                    task: (id - 1) as u32,
                    time: self.u64(s + 1).load(Ordering::Relaxed),
                })
            })
            .collect();
        v.sort_by_key(|m| (m.time, m.task, m.mark));
        v
    }

    /// Each task's exit time, `None` for tasks that had not exited.
    pub fn exits(&self) -> Vec<Option<u64>> {
        (0..self.tasks)
            .map(|t| match self.u64(self.exit0 + t).load(Ordering::Acquire) {
                0 => None,
                x => Some(x - 1),
            })
            .collect()
    }
}
