//! One task's program, executed for real: every `Op` of the behaviour language becomes the
//! system call the model charges for it (a `write`/`read` on a real pipe or socket, a futex wait
//! or wake, a `clock_nanosleep`), so the kernel does the scheduling the model predicts. The
//! per-CPU locks are user space there too: `sched_getcpu()` and a compare-exchange spin on a
//! lock word in shared memory, as schbench's `lock_this_cpu()`.

use std::sync::atomic::{AtomicU32, Ordering};

use super::chan::{self, Fds};
use super::shm::Shm;
use crate::sys;
use wakesim_engine::{stream_id, RngStream};
use wakesim_workloads::{Op, TaskSpec};

/// What a task needs besides its program.
pub struct Ctx<'a> {
    pub shm: &'a Shm,
    pub fds: &'a [Fds],
    pub task: u32,
    /// Futexes/mutexes/barriers are shared between processes (non-private futex ops).
    pub shared: bool,
    pub seed: u64,
}

/// Run `spec`'s program to its end (or `Exit`), then record the exit time. Errors go to the
/// shared error slot and end the task.
pub fn run(spec: &TaskSpec, cx: &Ctx) {
    if let Err(e) = setup(spec) {
        cx.shm.fail(&format!("task {} ({}): {e}", cx.task, spec.name));
        sys::kill_own_group();
    }
    if let Err(e) = exec(&spec.program, cx) {
        cx.shm.fail(&format!("task {} ({}): {e}", cx.task, spec.name));
        // The others may be blocked on this task forever: end the whole run now.
        sys::kill_own_group();
    }
    cx.shm.record_exit(cx.task, cx.shm.now());
}

fn setup(spec: &TaskSpec) -> Result<(), String> {
    if let Some(set) = &spec.allowed {
        let cpus: Vec<usize> = set.iter().collect();
        sys::pin_to(&cpus).map_err(|e| format!("cannot pin to CPUs {cpus:?}: {e}"))?;
    }
    if spec.nice != 0 {
        sys::set_nice(spec.nice).map_err(|e| format!("cannot set nice {}: {e}", spec.nice))?;
    }
    Ok(())
}


fn exec(prog: &[Op], cx: &Ctx) -> Result<(), String> {
    let mut rng = RngStream::new(cx.seed, stream_id("task"), u64::from(cx.task));
    let biggest = prog
        .iter()
        .map(|op| match *op {
            Op::Send { bytes, .. } | Op::SendDgram { bytes, .. } | Op::Recv { bytes, .. } => bytes as usize,
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    let mut buf = vec![0u8; biggest];
    let mut loops: Vec<u64> = Vec::new(); // remaining iterations of each open loop
    let mut timer_next = 0u64;
    let mut cpu_locks: Vec<(u32, usize)> = Vec::new(); // per-CPU locks held: (set, cpu)
    let mut pc = 0usize;
    while pc < prog.len() {
        if cx.shm.failed() {
            return Ok(()); // another task failed: stop quietly, the run reports that error
        }
        match prog[pc] {
            Op::Compute(ref d) => spin_cpu(d.sample(&mut rng)),
            Op::Send { chan, bytes } => chan::send(cx.fds[chan as usize].tx, &buf[..bytes as usize])
                .map_err(|e| format!("write to channel {chan}: {e}"))?,
            Op::Recv { chan, bytes } => chan::recv(cx.fds[chan as usize].rx, &mut buf[..bytes as usize])
                .map_err(|e| format!("read from channel {chan}: {e}"))?,
            Op::SendDgram { chan, bytes } => {
                chan::send_dgram(cx.fds[chan as usize].tx, &buf[..bytes as usize]).map_err(|e| format!("send to channel {chan}: {e}"))?;
            }
            Op::FutexWait { futex } => sem_wait(cx.shm.futex(futex), cx.shared),
            Op::FutexWake { futex, n } => {
                let w = cx.shm.futex(futex);
                w.fetch_add(n, Ordering::Release); // semaphore: wakes beyond the waiters stay pending
                sys::futex_wake(w, n, cx.shared);
            }
            Op::FutexWakeWaiters { futex, n } => {
                // A real FUTEX_WAKE: posts for the waiters it finds, takes back the rest (lost).
                let w = cx.shm.futex(futex);
                w.fetch_add(n, Ordering::Release);
                let woken = sys::futex_wake(w, n, cx.shared);
                for _ in woken..n {
                    take_pending(w);
                }
            }
            Op::FutexWakeAllSync { futex } => {
                // The byte stays in the pipe: the futex stays signalled for later waiters too.
                let w = cx.shm.futex(futex);
                w.fetch_or(SIGNALLED, Ordering::Release);
                sys::futex_wake(w, u32::MAX, cx.shared);
            }
            Op::Sleep(ref d) => sleep_ns(d.sample(&mut rng)),
            Op::SleepUntilNext { period } => {
                // As the model: boundaries counted from the first call; overrun = no sleep.
                let now = cx.shm.now();
                if timer_next == 0 {
                    timer_next = now;
                }
                timer_next += period;
                if timer_next > now {
                    sleep_ns(timer_next - now);
                }
            }
            Op::LoopStart { count, end } => {
                if count == 0 {
                    pc = end as usize + 1;
                    continue;
                }
                loops.push(count);
            }
            Op::LoopEnd { start } => {
                let left = loops.last_mut().ok_or("loop end without a start")?;
                *left -= 1;
                if *left > 0 {
                    pc = start as usize + 1;
                    continue;
                }
                loops.pop();
            }
            Op::Mark(m) => {
                if !cx.shm.mark(m, cx.task, cx.shm.now()) {
                    return Err("more marks than the native log holds; shorten the run".into());
                }
            }
            Op::Barrier { id, parties } => barrier(cx.shm.barrier(id), parties, cx.shared),
            Op::Lock { id } => lock(cx.shm.lock(id), cx.shared),
            Op::Unlock { id } => unlock(cx.shm.lock(id), cx.shared),
            Op::CpuSpinLock { set } => match lock_this_cpu(cx, set)? {
                Some(cpu) => cpu_locks.push((set, cpu)),
                None => return Ok(()), // another task failed while this one spun
            },
            Op::CpuSpinUnlock { set } => {
                let i = cpu_locks.iter().position(|&(s, _)| s == set).ok_or("unlocks a per-CPU lock it does not hold")?;
                let (s, cpu) = cpu_locks.swap_remove(i);
                if let Some(l) = cx.shm.cpu_lock(s, cpu) {
                    l.store(0, Ordering::Release); // pthread_mutex_unlock(): no waiters to wake
                }
            }
            Op::CallFunc { .. } | Op::CallFuncAll { .. } => {
                return Err("smp_call_function is kernel-only: cannot run natively".into())
            }
            Op::Exit => break,
        }
        pc += 1;
    }
    Ok(())
}

/// Burn `ns` of this thread's CPU time (time spent preempted does not count, as in the model).
fn spin_cpu(ns: u64) {
    let end = sys::thread_cpu_ns() + ns;
    while sys::thread_cpu_ns() < end {
        std::hint::spin_loop();
    }
}

fn sleep_ns(ns: u64) {
    std::thread::sleep(std::time::Duration::from_nanos(ns));
}

/// Set by `FutexWakeAllSync`: every wait returns at once from then on.
const SIGNALLED: u32 = 1 << 31;

/// Takes back one pending wake if there is one (a wake nobody was waiting for is lost).
fn take_pending(w: &AtomicU32) {
    let _ = w.fetch_update(Ordering::AcqRel, Ordering::Relaxed, |c| (c & !SIGNALLED > 0).then(|| c - 1));
}

/// Semaphore wait: return if signalled, else take a pending wake, else sleep on the futex until
/// one is posted.
fn sem_wait(w: &AtomicU32, shared: bool) {
    loop {
        let c = w.load(Ordering::Acquire);
        if c & SIGNALLED != 0 {
            return;
        }
        if c > 0 {
            if w.compare_exchange_weak(c, c - 1, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                return;
            }
            continue;
        }
        sys::futex_wait(w, 0, shared);
    }
}

/// A generation barrier: the last arrival resets the count and wakes everyone.
fn barrier((count, gen): (&AtomicU32, &AtomicU32), parties: u32, shared: bool) {
    let g = gen.load(Ordering::Acquire);
    if count.fetch_add(1, Ordering::AcqRel) + 1 >= parties {
        count.store(0, Ordering::Release);
        gen.fetch_add(1, Ordering::Release);
        sys::futex_wake(gen, u32::MAX, shared);
        return;
    }
    while gen.load(Ordering::Acquire) == g {
        sys::futex_wait(gen, g, shared);
    }
}

/// schbench's `lock_this_cpu()`: `sched_getcpu()`, spin on `pthread_mutex_trylock()` of that
/// CPU's lock (a compare-exchange per try, as glibc's `lll_trylock`; no sleeping), then
/// `sched_getcpu()` again: migrated meanwhile → unlock and start over on the new CPU. Returns
/// the CPU whose lock is held, or `None` if the run failed while spinning.
fn lock_this_cpu(cx: &Ctx, set: u32) -> Result<Option<usize>, String> {
    let cpu_now = || sys::current_cpu().map_err(|e| format!("sched_getcpu: {e}"));
    loop {
        let cpu = cpu_now()?;
        let l = cx.shm.cpu_lock(set, cpu).ok_or_else(|| format!("sched_getcpu() = {cpu}, beyond the configured CPUs"))?;
        while l.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
            if cx.shm.failed() {
                return Ok(None);
            }
            std::hint::spin_loop();
        }
        if cpu_now()? == cpu {
            return Ok(Some(cpu));
        }
        l.store(0, Ordering::Release); // "we got the lock but we migrated"
    }
}

fn lock(m: &AtomicU32, shared: bool) {
    if m.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok() {
        return;
    }
    while m.swap(2, Ordering::Acquire) != 0 {
        sys::futex_wait(m, 2, shared);
    }
}

fn unlock(m: &AtomicU32, shared: bool) {
    if m.fetch_sub(1, Ordering::Release) != 1 {
        m.store(0, Ordering::Release);
        sys::futex_wake(m, 1, shared);
    }
}
