//! Thin wrappers over the Linux calls the measurements need: the monotonic clock, CPU affinity,
//! futexes, shared anonymous memory, fork/wait. Everything unsafe in the crate lives here or
//! next to a comment saying why it is sound.

use std::io;
use std::sync::atomic::AtomicU32;

/// `CLOCK_MONOTONIC` in ns (vDSO: no syscall on x86 with a stable TSC or kvm-clock).
#[inline]
pub fn now_ns() -> u64 {
    clock(libc::CLOCK_MONOTONIC)
}

/// CPU time of the calling thread in ns (`CLOCK_THREAD_CPUTIME_ID`).
#[inline]
pub fn thread_cpu_ns() -> u64 {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn clock(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid out-pointer; the clock ids used here always exist on Linux.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The CPUs the calling thread may run on (`sched_getaffinity`).
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// Restrict the calling thread to `cpus` (`sched_setaffinity(0, …)`: the thread, not the process).
pub fn pin_to(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET checks nothing, so the ids are bounded first.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if c >= libc::CPU_SETSIZE as usize {
                return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("CPU {c} out of range")));
            }
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Restores the calling thread's CPU affinity when dropped: a measurement that runs one of its
/// sides on the caller's thread pins it, and must not leave the caller (and every process it
/// forks later) pinned.
pub struct KeepAffinity(Vec<usize>);

impl KeepAffinity {
    pub fn new() -> KeepAffinity {
        KeepAffinity(allowed_cpus())
    }
}

impl Default for KeepAffinity {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for KeepAffinity {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            let _ = pin_to(&self.0);
        }
    }
}

/// The calling thread's kernel id.
pub fn gettid() -> libc::pid_t {
    // SAFETY: no arguments, cannot fail.
    unsafe { libc::gettid() }
}

/// `setpriority(PRIO_PROCESS, tid, nice)`: on Linux the nice value is per thread.
pub fn set_nice(nice: i32) -> io::Result<()> {
    // SAFETY: plain syscall.
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, gettid() as libc::id_t, nice) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Make the calling thread `SCHED_IDLE` (a spinner any normal task preempts at once:
/// `wakeup_preempt_fair` always preempts an idle-policy task).
pub fn set_sched_idle() -> io::Result<()> {
    let p = libc::sched_param { sched_priority: 0 };
    // SAFETY: valid sched_param pointer.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &p) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `FUTEX_WAIT` while `*w == val`; `shared` selects the non-private form (across processes).
pub fn futex_wait(w: &AtomicU32, val: u32, shared: bool) {
    let op = if shared { libc::FUTEX_WAIT } else { libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG };
    // SAFETY: `w` is a live, aligned u32; a NULL timeout blocks until woken; EAGAIN/EINTR are
    // handled by the callers' re-check loops.
    unsafe { libc::syscall(libc::SYS_futex, w.as_ptr(), op, val, std::ptr::null::<libc::timespec>()) };
}

/// `FUTEX_WAKE` up to `n` waiters; returns how many were woken.
pub fn futex_wake(w: &AtomicU32, n: u32, shared: bool) -> u32 {
    let op = if shared { libc::FUTEX_WAKE } else { libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG };
    let n = n.min(i32::MAX as u32);
    // SAFETY: as futex_wait.
    let r = unsafe { libc::syscall(libc::SYS_futex, w.as_ptr(), op, n) };
    r.max(0) as u32
}

/// The CPU the calling thread runs on (`sched_getcpu()`: rseq or the vDSO, no kernel entry on
/// recent x86 kernels).
#[inline]
pub fn current_cpu() -> io::Result<usize> {
    // SAFETY: no arguments; -1 with errno on failure.
    let c = unsafe { libc::sched_getcpu() };
    if c < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(c as usize)
}

/// Number of configured CPUs (`sysconf(_SC_NPROCESSORS_CONF)`): every id `sched_getcpu()` can
/// return is below it, even after CPUs come online.
pub fn possible_cpus() -> usize {
    // SAFETY: plain sysconf query.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    if n < 1 {
        1
    } else {
        n as usize
    }
}

/// `getppid` through `syscall(2)`, so no libc caching can skip the kernel entry.
#[inline]
pub fn null_syscall() {
    // SAFETY: getppid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_getppid) };
}

/// Anonymous memory shared with forked children (`MAP_SHARED | MAP_ANONYMOUS`), zero-filled.
/// `MAP_NORESERVE`: only the pages touched cost memory.
pub struct Shared {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the region is only accessed through atomics by the code that uses it.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    pub fn new(len: usize) -> io::Result<Shared> {
        let len = len.max(1);
        // SAFETY: a fresh anonymous mapping; checked for MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Shared { ptr: ptr as *mut u8, len })
    }

    /// The `i`-th 8-byte-aligned slot of the region viewed as `T` (an atomic type of size ≤ 8).
    ///
    /// # Panics
    /// If the slot is outside the region.
    pub fn slot<T>(&self, i: usize) -> &T {
        assert!(std::mem::size_of::<T>() <= 8 && std::mem::align_of::<T>() <= 8);
        assert!((i + 1) * 8 <= self.len, "shared slot {i} outside the region");
        // SAFETY: in bounds, 8-byte aligned (mmap is page aligned), zero is a valid value of
        // the atomic integer types this is used with, and the mapping outlives `&self`.
        unsafe { &*(self.ptr.add(i * 8) as *const T) }
    }

    /// Number of 8-byte slots.
    pub fn slots(&self) -> usize {
        self.len / 8
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: unmapping the region this value owns.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// `fork()`. In the child only the calling thread exists; callers run only their own code there
/// and leave with [`exit_now`].
pub fn fork() -> io::Result<libc::pid_t> {
    // SAFETY: see the doc comment: the child never returns into the caller's frames.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(pid)
}

/// `_exit`: leave a forked child without running the parent's destructors or atexit handlers.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: terminates the process.
    unsafe { libc::_exit(code) }
}

/// `waitpid(pid, 0)`: the exit status as `waitpid` reports it.
pub fn wait(pid: libc::pid_t) -> io::Result<i32> {
    let mut status = 0;
    loop {
        // SAFETY: valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(status);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Wait for `pid` to exit or `timeout_ns` to pass (a pidfd polled once: no periodic wakeups
/// that would disturb the measurement). Returns whether it exited.
pub fn wait_exit_timeout(pid: libc::pid_t, timeout_ns: u64) -> io::Result<bool> {
    // SAFETY: pidfd_open(2) returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let deadline = now_ns().saturating_add(timeout_ns);
    let exited = loop {
        let left = deadline.saturating_sub(now_ns());
        if left == 0 {
            break false;
        }
        let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        let ms = (left / 1_000_000).clamp(1, i32::MAX as u64) as i32;
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut p, 1, ms) };
        if r > 0 {
            break true;
        }
        if r < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            let e = io::Error::last_os_error();
            // SAFETY: closing our own fd.
            unsafe { libc::close(fd) };
            return Err(e);
        }
    };
    // SAFETY: closing our own fd.
    unsafe { libc::close(fd) };
    Ok(exited)
}

/// Voluntary and involuntary context switches of this process's reaped children so far
/// (`getrusage(RUSAGE_CHILDREN)`: `ru_nvcsw`, `ru_nivcsw`, every thread of every descendant
/// that has been waited for).
pub fn children_switches() -> (u64, u64) {
    // SAFETY: rusage is plain data and a valid out-pointer.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: see above.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    (ru.ru_nvcsw as u64, ru.ru_nivcsw as u64)
}

/// Context switches so far, voluntary and involuntary, of every thread of every process in
/// process group `pgid` (`/proc/PID/stat` field 5 is the group; each thread's
/// `/proc/PID/task/TID/status` has `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches`).
/// Read before a timed run's group is killed: getrusage(RUSAGE_CHILDREN) never sees processes
/// that die unwaited.
pub fn group_switches(pgid: libc::pid_t) -> (u64, u64) {
    let mut sum = (0, 0);
    let Ok(procs) = std::fs::read_dir("/proc") else { return sum };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let group = proc_stat_fields(pid as i32).and_then(|f| f.get(2)?.parse::<i32>().ok());
        if group != Some(pgid) {
            continue;
        }
        let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else { continue };
        for t in threads.flatten() {
            let Ok(status) = std::fs::read_to_string(t.path().join("status")) else { continue };
            let field = |key: &str| status.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0);
            sum.0 += field("voluntary_ctxt_switches:");
            sum.1 += field("nonvoluntary_ctxt_switches:");
        }
    }
    sum
}

/// The fields of `/proc/PID/stat` after the command name, from field 3 (`state`) on: the name
/// (field 2) may hold spaces and parentheses, so they are counted from its last `)`. `None` if
/// the process is gone.
pub fn proc_stat_fields(pid: i32) -> Option<Vec<String>> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(s[s.rfind(')')? + 1..].split_whitespace().map(String::from).collect())
}

/// `kill(-pgid, SIGKILL)`: end a whole process group this crate created.
pub fn kill_group(pgid: libc::pid_t) {
    // SAFETY: plain syscall on a group we own.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
}

/// Put the calling process into a new process group of its own.
pub fn new_process_group() {
    // SAFETY: plain syscall.
    unsafe { libc::setpgid(0, 0) };
}

/// End the calling process's whole group (the native runner and its tasks); never returns.
pub fn kill_own_group() -> ! {
    // SAFETY: kill(0, …) signals our own process group, which the runner created for itself.
    unsafe { libc::kill(0, libc::SIGKILL) };
    exit_now(1)
}

/// Busy and stolen CPU time of the whole machine so far, seconds (`/proc/stat` line `cpu`:
/// busy = user + nice + system; steal = time the hypervisor ran something else while this VM's
/// vCPU wanted to run; `USER_HZ` = 100 ticks per second on every Linux ABI). irq and softirq
/// time are left out: the kernel accounts them to those columns and not to the interrupted
/// task's rusage, so a loopback network benchmark's own NET_RX work (run in softirq on the
/// sender's CPU) would count as another process's load (measured here: 0.45 of 2 CPU-seconds in
/// a one-second TCP_STREAM, 22–30 % of the machine, with nothing else running).
pub fn machine_cpu_seconds() -> Option<(f64, f64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let f: Vec<u64> = text.lines().next()?.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    let busy = f.first()? + f.get(1)? + f.get(2)?;
    Some((busy as f64 / 100.0, *f.get(7).unwrap_or(&0) as f64 / 100.0))
}

/// CPU time (user + system) of this process and its reaped children, seconds (`getrusage`).
pub fn own_cpu_seconds() -> f64 {
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    [libc::RUSAGE_SELF, libc::RUSAGE_CHILDREN]
        .into_iter()
        .map(|who| {
            // SAFETY: rusage is plain data; getrusage fills it.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            unsafe { libc::getrusage(who, &mut ru) };
            tv(ru.ru_utime) + tv(ru.ru_stime)
        })
        .sum()
}

/// CPU use by other processes over an interval — the machine's busy time minus this process's
/// own and its reaped children's (the native runs, the real tools) — and the hypervisor's steal,
/// each as a share of the CPUs.
pub struct OtherLoad {
    start: Option<(f64, f64)>,
    ours: f64,
    wall: std::time::Instant,
}

/// What [`OtherLoad::stop`] found, percent of the machine.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Interference {
    pub other_pct: f64,
    pub steal_pct: f64,
}

impl OtherLoad {
    pub fn start() -> OtherLoad {
        OtherLoad { start: machine_cpu_seconds(), ours: own_cpu_seconds(), wall: std::time::Instant::now() }
    }

    /// Other processes' and the hypervisor's shares of `cpus` CPUs since [`start`](Self::start).
    pub fn stop(&mut self, cpus: u32) -> Option<Interference> {
        let (b0, s0) = self.start?;
        let (b1, s1) = machine_cpu_seconds()?;
        let ours = own_cpu_seconds() - self.ours;
        let wall = (self.wall.elapsed().as_secs_f64() * f64::from(cpus)).max(1e-9);
        let pct = |x: f64| (100.0 * x / wall).clamp(0.0, 100.0);
        Some(Interference { other_pct: pct(b1 - b0 - ours), steal_pct: pct(s1 - s0) })
    }
}

/// Closes each (read end, write end) of [`channel_pair`]s this process opened.
pub fn close_pairs(fds: &[(i32, i32)]) {
    for &(r, w) in fds {
        // SAFETY: closing our own fds.
        unsafe {
            libc::close(r);
            libc::close(w);
        }
    }
}

/// One message of `buf.len()` bytes written to `w` and read back from `r` on this thread (a
/// pipe or socketpair with room for it, so neither call blocks); a short write or read is an
/// error.
pub fn write_read(r: i32, w: i32, buf: &mut [u8]) -> io::Result<()> {
    let len = buf.len();
    // SAFETY: buf is valid for `len` bytes for both calls.
    let a = unsafe { libc::write(w, buf.as_ptr() as *const libc::c_void, len) };
    let b = unsafe { libc::read(r, buf.as_mut_ptr() as *mut libc::c_void, len) };
    if a != len as isize || b != len as isize {
        return Err(io::Error::other("short write/read"));
    }
    Ok(())
}

/// A pipe, or a unix stream socketpair: (read end, write end).
pub fn channel_pair(socket: bool) -> io::Result<(i32, i32)> {
    let mut fds = [0; 2];
    // SAFETY: valid out-array of two ints.
    let r = unsafe {
        if socket {
            libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr())
        } else {
            libc::pipe(fds.as_mut_ptr())
        }
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((fds[0], fds[1]))
}
