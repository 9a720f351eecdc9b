//! The lock log's mutexes in the conversion (`Act::Lock` / `Act::Unlock`, docs/record.md
//! "Mutexes"): each `pthread_mutex_lock` / `unlock` and `pthread_cond_wait` of a recorded task
//! becomes a `lock` / `unlock` op at its point, and the futex calls on a mutex's word become
//! parts of those ops (a `lock` that slept, an `unlock` that woke) instead of wait/post pairs.
//! The replay then contends for the mutex by itself (the model's `pthread_mutex`).

use super::{Act, Conv, Ev, Kind, Step, Sys};

/// The futex op's command bits and the commands a mutex word sees (include/uapi/linux/futex.h:
/// `FUTEX_CMD_MASK` clears `FUTEX_PRIVATE_FLAG` and `FUTEX_CLOCK_REALTIME`).
const FUTEX_CMD_MASK: u64 = 0x7f;
const FUTEX_WAIT: u64 = 0;
const FUTEX_WAKE: u64 = 1;
const FUTEX_WAIT_BITSET: u64 = 9;

impl Conv<'_> {
    /// The process (thread group) of a task, where the recording says.
    pub(super) fn process(&self, pid: u32) -> u32 {
        self.rec.tgid.get(&pid).copied().unwrap_or(pid)
    }

    /// The mutex at `word` in `pid`'s process.
    pub(super) fn mutex(&mut self, pid: u32, word: u64) -> usize {
        let key = (self.process(pid), word);
        let n = self.mutexes.len();
        let i = *self.mutex_ix.entry(key).or_insert(n);
        if i == n {
            self.mutexes.push(format!("m.{}.{word:x}", key.0));
        }
        i
    }

    /// `pid` takes mutex `mx` (word `word`) at CPU time `cpu`: its `Lock` step, which a futex
    /// sleep on the word then marks as blocking.
    fn take(&mut self, pid: u32, mx: usize, word: u64, cpu: u64) -> usize {
        let k = self.push(pid, Step { cpu, act: Act::Lock { mutex: mx, blocks: false }, note: "" });
        let t = self.tasks.get_mut(&pid).expect("task");
        t.held.insert(mx, 1);
        t.lock_at = Some((k, word));
        k
    }

    /// A call of the lock log. Nested locks of one task (recursive mutexes) are one critical
    /// section; an unlock of a mutex taken before the recording is dropped.
    pub(super) fn mutex_call(&mut self, e: &Ev) {
        let (pid, ts) = (e.pid, e.ts);
        let word = match e.kind {
            Kind::MutexLock { m } | Kind::MutexUnlock { m } | Kind::CondWait { m } | Kind::CondWaitRet { m } => m,
            _ => return,
        };
        let mx = self.mutex(pid, word);
        let t = self.task(pid, ts);
        t.since.get_or_insert(ts);
        let cpu = t.cpu_at(ts);
        let depth = t.held.get(&mx).copied().unwrap_or(0);
        let unlock = Step { cpu, act: Act::Unlock { mutex: mx, syscall: false, wakes: false }, note: "" };
        match e.kind {
            Kind::MutexLock { .. } if depth > 0 => {
                t.held.insert(mx, depth + 1);
            }
            Kind::MutexLock { .. } => {
                self.take(pid, mx, word, cpu);
            }
            Kind::MutexUnlock { .. } | Kind::CondWait { .. } => {
                let cond = matches!(e.kind, Kind::CondWait { .. });
                if cond {
                    // pthread_cond_wait() releases the mutex whatever its depth, and takes it back.
                    t.relock = Some((mx, word));
                    t.held.remove(&mx);
                } else if depth > 1 {
                    t.held.insert(mx, depth - 1);
                } else {
                    t.held.remove(&mx);
                }
                if depth == 1 || (cond && depth > 0) {
                    let k = self.push(pid, unlock);
                    self.tasks.get_mut(&pid).expect("task").unlock_at = Some((k, word));
                }
            }
            Kind::CondWaitRet { .. } => {
                // Taken back without sleeping on its word (a sleep would have placed it).
                if t.relock.take().is_some() {
                    self.take(pid, mx, word, cpu);
                }
            }
            _ => {}
        }
    }

    /// A futex syscall of `pid` on the word of a mutex it is locking or unlocking: the sleep of
    /// its `Lock` (or of the take-back inside `pthread_cond_wait`, which places the `Lock`
    /// here), or the wake of its `Unlock`.
    pub(super) fn mutex_futex(&mut self, pid: u32, s: &mut Sys, cpu: u64) {
        let (word, cmd) = (s.args[0], s.args[1] & FUTEX_CMD_MASK);
        let t = self.tasks.get_mut(&pid).expect("task");
        if matches!(cmd, FUTEX_WAIT | FUTEX_WAIT_BITSET) {
            if let Some((mx, _)) = t.relock.filter(|r| r.1 == word) {
                t.relock = None;
                s.lock_step = Some(self.take(pid, mx, word, cpu));
            } else if let Some((k, _)) = t.lock_at.filter(|l| l.1 == word) {
                s.lock_step = Some(k);
            }
        } else if cmd == FUTEX_WAKE {
            if let Some((k, _)) = t.unlock_at.filter(|l| l.1 == word) {
                if let Some(Step { act: Act::Unlock { syscall, .. }, .. }) = t.steps.get_mut(k) {
                    *syscall = true;
                }
                s.unlock_step = Some(k);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{l, sw};
    use super::super::{convert, select, Act, Roots};
    use crate::record::events::parse;

    const I0: (&str, u32) = ("swapper/0", 0);
    const I1: (&str, u32) = ("swapper/1", 0);
    const A: (&str, u32) = ("app", 100);
    const B: (&str, u32) = ("app", 101);

    /// Threads 100 and 101 of process 100 switched in on CPUs 0 and 1 at time 0.
    fn both_running() -> String {
        l("<idle>-0", 0, "d..2.", 0, &sw(I0, "R", A)) + &l("<idle>-0", 1, "d..2.", 0, &sw(I1, "R", B))
    }

    /// A lock-log line of thread `tid` of process 100 at `us` µs after 100 s.
    fn log(tid: u32, us: u64, call: &str, m: u64) -> String {
        l(&format!("<...>-{tid} (    100)"), 0, ".....", us, &format!("wakesim_{call}: m={m:#x}"))
    }

    /// Two threads of process 100 and mutex 0x5000: 101 sleeps on it while 100 holds it and is
    /// woken by 100's unlock; then 101 waits on a condvar (word 0x6008) that 100 signals inside
    /// its critical section. The log's lines come after the trace's, as `record` appends them.
    fn trace() -> String {
        let (i0, i1, a, b) = (I0, I1, A, B);
        let mut s = both_running();
        s += &l("app-101", 1, ".....", 12, "sys_futex(uaddr: 0x5000, op: 0x80, val: 2, utime: 0, uaddr2: 0, val3: 0)");
        s += &l("app-101", 1, "d..2.", 13, &sw(b, "S", i1));
        s += &l("app-100", 0, ".....", 20, "sys_futex(uaddr: 0x5000, op: 0x81, val: 1, utime: 0, uaddr2: 0, val3: 0)");
        s += &l("app-100", 0, "d..3.", 21, "sched_waking: comm=app pid=101 prio=120 target_cpu=001");
        s += &l("app-100", 0, ".....", 22, "sys_futex -> 0x1");
        s += &l("<idle>-0", 1, "d..2.", 23, &sw(i1, "R", b));
        s += &l("app-101", 1, ".....", 24, "sys_futex -> 0x0");
        s += &l("app-101", 1, ".....", 26, "sys_futex(uaddr: 0x6008, op: 0x189, val: 0, utime: 0, uaddr2: 0, val3: 0xffffffff)");
        s += &l("app-101", 1, "d..2.", 27, &sw(b, "S", i1));
        s += &l("app-100", 0, ".....", 31, "sys_futex(uaddr: 0x6008, op: 0x81, val: 1, utime: 0, uaddr2: 0, val3: 0)");
        s += &l("app-100", 0, "d..3.", 32, "sched_waking: comm=app pid=101 prio=120 target_cpu=001");
        s += &l("app-100", 0, ".....", 33, "sys_futex -> 0x1");
        s += &l("<idle>-0", 1, "d..2.", 35, &sw(i1, "R", b));
        s += &l("app-101", 1, ".....", 36, "sys_futex -> 0x0");
        s += &l("app-101", 1, ".....", 50, "sched_process_exit: comm=app pid=101 prio=120 group_dead=false");
        s += &l("app-101", 1, "d..2.", 50, &sw(b, "X", i1));
        s += &l("app-100", 0, ".....", 60, "sched_process_exit: comm=app pid=100 prio=120 group_dead=true");
        s += &l("app-100", 0, "d..2.", 60, &sw(a, "X", i0));
        for (tid, us, call) in [
            (100, 10, "mutex_lock"),
            (101, 12, "mutex_lock"),
            (100, 20, "mutex_unlock"),
            (101, 25, "cond_wait"),
            (100, 30, "mutex_lock"),
            (100, 34, "mutex_unlock"),
            (101, 37, "cond_wait_ret"),
            (101, 40, "mutex_unlock"),
        ] {
            s += &log(tid, us, call, 0x5000);
        }
        s
    }

    fn acts(c: &super::super::Converted, k: usize) -> Vec<(u64, Act)> {
        c.tasks[k].steps.iter().map(|s| (s.cpu, s.act.clone())).collect()
    }

    #[test]
    fn a_mutex_sleep_is_part_of_its_lock_and_a_condvar_wait_releases_and_retakes_the_mutex() {
        let rec = parse(&trace(), "t").unwrap();
        let c = convert(&rec, select(&rec, &Roots::Pids(vec![100, 101])), false);
        assert_eq!(c.mutexes, ["m.100.5000"]);
        assert_eq!(c.futexes, ["f.100.101"], "only the condvar's wakeup is a pair");
        let (lock, unlock) = (|blocks| Act::Lock { mutex: 0, blocks }, |syscall, wakes| Act::Unlock { mutex: 0, syscall, wakes });
        assert_eq!(
            acts(&c, 0),
            [(10_000, lock(false)), (20_000, unlock(true, true)), (30_000, lock(false)), (32_000, Act::Post { futex: 0 }), (34_000, unlock(false, false))]
        );
        // 101 ran 0–13, 23–27 and 35–50 µs.
        assert_eq!(
            acts(&c, 1),
            [
                (12_000, lock(true)),
                // pthread_cond_wait(): the release at its entry, the condvar's sleep, the take-back at its return.
                (15_000, unlock(false, false)),
                (17_000, Act::Wait { futex: 0, spawn: false }),
                (19_000, lock(false)),
                (22_000, unlock(false, false)),
            ]
        );
        let blocks: Vec<(&str, u64)> = c.figures.blocks.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(blocks, [("futex", 1), ("mutex", 1)]);
        assert!(super::super::stuck(&c).is_none());
    }

    #[test]
    fn a_sleep_inside_a_critical_section_is_a_timed_sleep_and_a_mutex_held_at_the_end_is_released() {
        // 100 takes the mutex and sleeps on another word (glibc's condvar-internal lock) until
        // 101 wakes it; it never unlocks.
        let (i0, a) = (I0, A);
        let mut s = both_running();
        s += &l("app-100", 0, ".....", 11, "sys_futex(uaddr: 0x6010, op: 0x80, val: 3, utime: 0, uaddr2: 0, val3: 0)");
        s += &l("app-100", 0, "d..2.", 12, &sw(a, "S", i0));
        s += &l("app-101", 1, ".....", 20, "sys_futex(uaddr: 0x6010, op: 0x81, val: 1, utime: 0, uaddr2: 0, val3: 0)");
        s += &l("app-101", 1, "d..3.", 21, "sched_waking: comm=app pid=100 prio=120 target_cpu=000");
        s += &l("<idle>-0", 0, "d..2.", 22, &sw(i0, "R", a));
        s += &l("app-100", 0, ".....", 30, "sched_process_exit: comm=app pid=100 prio=120 group_dead=true");
        s += &l("app-100", 0, "d..2.", 30, &sw(a, "X", i0));
        s += &log(100, 10, "mutex_lock", 0x5000);
        let rec = parse(&s, "t").unwrap();
        let c = convert(&rec, select(&rec, &Roots::Pids(vec![100, 101])), false);
        assert!(c.futexes.is_empty(), "no pair: 101 posts nothing");
        assert_eq!(
            acts(&c, 0),
            [
                (10_000, Act::Lock { mutex: 0, blocks: false }),
                (12_000, Act::Sleep { ns: 9_000 }),
                (20_000, Act::Unlock { mutex: 0, syscall: false, wakes: false }),
            ]
        );
        assert!(acts(&c, 1).is_empty());
        assert_eq!(c.figures.blocks.get("sleep (in a critical section)"), Some(&1));
    }
}
