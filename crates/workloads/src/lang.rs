//! The behaviour language.

use wakesim_engine::Time;
use wakesim_machine::CpuSet;

/// A duration, fixed or drawn from a distribution (per task RNG stream).
#[derive(Clone, Debug, PartialEq)]
pub enum Dur {
    Fixed(Time),
    /// Uniform in `[lo, hi]` ns.
    Uniform { lo: Time, hi: Time },
    /// Exponential with the given mean, ns.
    Exp { mean: Time },
    /// Normal with mean and standard deviation, ns, truncated at 0.
    Normal { mean: Time, sd: Time },
}

impl Dur {
    /// A draw from `rng` (the model's and the native runner's durations: same draws, same order).
    pub fn sample(&self, rng: &mut wakesim_engine::RngStream) -> Time {
        match *self {
            Dur::Fixed(x) => x,
            Dur::Uniform { lo, hi } => lo + (rng.unit() * (hi - lo + 1) as f64) as Time,
            Dur::Exp { mean } => rng.exponential(mean as f64) as Time,
            // Truncated at zero.
            Dur::Normal { mean, sd } => (mean as f64 + rng.standard_normal() * sd as f64).max(0.0) as Time,
        }
    }

    /// The same duration stretched by `f` (every parameter of a distribution; rounded to ns).
    pub fn scaled(&self, f: f64) -> Dur {
        let s = |t: Time| (t as f64 * f).round() as Time;
        match *self {
            Dur::Fixed(t) => Dur::Fixed(s(t)),
            Dur::Uniform { lo, hi } => Dur::Uniform { lo: s(lo), hi: s(hi) },
            Dur::Exp { mean } => Dur::Exp { mean: s(mean) },
            Dur::Normal { mean, sd } => Dur::Normal { mean: s(mean), sd: s(sd) },
        }
    }
}

/// Channel semantics. All of these wake with WF_SYNC (fs/pipe.c and sock_def_readable use
/// `wake_up_interruptible_sync_poll`); loopback TCP/UDP wake the receiver from NET_RX softirq on
/// the sender's CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChanKind {
    Pipe,
    UnixStream,
    TcpLoopback,
    UdpLoopback,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ChannelSpec {
    pub name: String,
    pub kind: ChanKind,
    /// Buffer capacity in bytes: a writer blocks while the free space is smaller than its write.
    pub capacity: u64,
}

/// One instruction of a task program.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Run in user space for a duration (CPU time at full speed; SMT sharing slows it).
    Compute(Dur),
    /// `write(chan, bytes)`: blocks while the channel lacks room; wakes one waiting reader.
    Send { chan: u32, bytes: u64 },
    /// `sendto()` on a datagram socket: never blocks on the receiver. If the channel lacks room
    /// the datagram is dropped at the receiving socket (`__udp_queue_rcv_skb()` fails:
    /// `UDP_MIB_RCVBUFERRORS`), after the sender paid the send; else as `Send`. The sender does
    /// not learn of the drop: the receiver's count is lower.
    SendDgram { chan: u32, bytes: u64 },
    /// `read(chan, bytes)`: blocks until `bytes` are buffered. On a pipe a read that makes room
    /// wakes one waiting writer (exclusive `wr_wait`); on a unix stream socket every waiting
    /// writer once a quarter of the buffer or less is left (`unix_write_space()`).
    Recv { chan: u32, bytes: u64 },
    /// Futex wait: returns at once if the futex was signalled by `FutexWakeAllSync`, else
    /// consumes a pending `FutexWake` if there is one, else blocks.
    FutexWait { futex: u32 },
    /// Wakes up to `n` waiters (non-sync wakeup); with no waiter, leaves a pending wake
    /// (a semaphore post: `sem_post`, and the approximation used where a wait may come late).
    FutexWake { futex: u32, n: u32 },
    /// `FUTEX_WAKE` proper: wakes up to `n` tasks waiting now (non-sync); a wake that finds no
    /// waiter is lost, as the kernel's is (`futex_wake()` only walks the hash bucket's queue).
    FutexWakeWaiters { futex: u32, n: u32 },
    /// A write to a pipe that tasks `poll()` on: every current waiter is woken with WF_SYNC
    /// (`pipe_write()` → `wake_up_interruptible_sync_poll()`, and poll waiters are
    /// non-exclusive, so all of them), and the futex stays signalled — the byte stays in the
    /// pipe — so every later `FutexWait` on it returns at once. hackbench's start signal.
    FutexWakeAllSync { futex: u32 },
    /// Sleep for a duration (hrtimer wakeup on the CPU that armed it).
    Sleep(Dur),
    /// Start of a loop running `count` times; `end` is the index of the matching `LoopEnd`.
    LoopStart { count: u64, end: u32 },
    /// End of a loop; `start` is the index of the matching `LoopStart`.
    LoopEnd { start: u32 },
    /// Record the current time under a mark id (for the workload's metric).
    Mark(u32),
    /// `smp_call_function_single(cpu, func, wait)`: run a function on `cpu` through its
    /// call-single queue (an IPI, or a flag write to a polling idle CPU); with `wait` the caller
    /// spins until it has run (csd_lock_wait). ipistorm is made of these.
    CallFunc { cpu: u32, wait: bool },
    /// `smp_call_function(func, wait)`: the same on every other CPU of the machine
    /// (`smp_call_function_many_cond()`: a csd queued on each CPU's call-single queue, each
    /// kicked); with `wait` the caller spins until all of them have run it.
    CallFuncAll { wait: bool },
    /// Wait at barrier `id` until `parties` tasks have arrived; the last wakes the others
    /// (non-sync, as pthread barriers and OpenMP's futex fallback do).
    Barrier { id: u32, parties: u32 },
    /// pthread mutex lock, as glibc's lowlevellock: user space when free, `futex_wait` when
    /// held; unlock wakes one sleeper (non-sync), which retries (no hand-off). See the model's
    /// `pthread_mutex`.
    Lock { id: u32 },
    Unlock { id: u32 },
    /// schbench's `lock_this_cpu()` (masoncl/schbench `schbench.c`): take lock `cpu` of the
    /// per-CPU lock array `set`, where `cpu` is the CPU the task runs on when it starts trying
    /// (`sched_getcpu()`). Entirely in user space: it busy-spins on `pthread_mutex_trylock()`
    /// (user CPU time, preemptible like any user code, no syscall) until the lock is free, and
    /// keeps spinning on that CPU's lock if it is migrated meanwhile. Once it has the lock it
    /// calls `sched_getcpu()` again; on another CPU it releases the lock and starts over there.
    /// Each acquisition pays the transfer of the lock's cache line from the CPU that last
    /// wrote it. Arrays are per process: separate instances use separate `set`s.
    CpuSpinLock { set: u32 },
    /// `pthread_mutex_unlock()` of the lock [`Op::CpuSpinLock`] took in `set`. User space only:
    /// the spinners use `trylock`, so there are no futex waiters to wake.
    CpuSpinUnlock { set: u32 },
    /// Periodic timer (rt-app `timer`): sleep until the task's next period boundary, counted
    /// from the first call; no sleep if that boundary has passed.
    SleepUntilNext { period: Time },
    /// Exit the task.
    Exit,
}

pub type Program = Vec<Op>;

#[derive(Clone, Debug, PartialEq)]
pub struct TaskSpec {
    pub name: String,
    pub program: Program,
    /// CPUs the task may run on (`None` = all).
    pub allowed: Option<CpuSet>,
    /// CPU the task starts on (`None` = chosen by the fork placement).
    pub start_cpu: Option<u32>,
    /// Nice value (-20..19), mapped to a weight by `sched_prio_to_weight`.
    pub nice: i32,
    /// Address-space id: switching between tasks of different `mm` costs the mm switch.
    pub mm: u32,
    /// Task group (cgroup) id; 0 = root.
    pub group: u32,
    /// Core throughput with both SMT siblings busy, relative to one thread, for this task's code
    /// (memory-bound code such as STREAM gains ~1.0–1.1× \[EST\]; the kernel's old `smt_gain` was
    /// 1178/1024 = 1.15). `None` = the cost
    /// profile's value.
    pub smt_throughput: Option<f64>,
    /// Who creates the task, and so from which CPU its fork placement starts.
    pub origin: Origin,
}

/// How a task comes to exist. Forked tasks are created one after another in the workload's
/// order, one `fork` (or `clone_thread`, for a task sharing an earlier task's `mm`) apart, as a
/// benchmark's main loop forks its children.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Forked by the benchmark's parent on the CPU it was launched from.
    Launched,
    /// Forked by a server daemon started earlier from another shell (netserver, tbench_srv
    /// fork a handler per connection): from the daemon's CPU.
    Daemon,
    /// Exists when the run starts (a task file's tasks).
    Existing,
}

impl TaskSpec {
    pub fn new(name: impl Into<String>, program: Program) -> Self {
        TaskSpec { name: name.into(), program, allowed: None, start_cpu: None, nice: 0, mm: 0, group: 0, smt_throughput: None, origin: Origin::Launched }
    }
}

/// How a workload turns the run's outcome into the tool's output.
pub trait Reporter: std::fmt::Debug + Send + Sync {
    /// The benchmark's own output text (as the real tool prints it).
    fn render(&self, out: &Outcome) -> String;
    /// The headline metric: (name, unit, value, higher_is_better).
    fn metric(&self, out: &Outcome) -> Metric;
    /// The output of `copies` instances run side by side (`wakesim run --copies N`), one
    /// outcome per copy with task indices local to that copy. Default: each copy's output in
    /// turn, as N processes writing to one terminal would show it.
    fn render_copies(&self, outs: &[Outcome]) -> String {
        outs.iter().map(|o| self.render(o)).collect()
    }
    /// The headline metric over all copies. Default: the sum of a higher-is-better metric
    /// (throughputs add up, as UnixBench's Run and LKP sum copies) and the mean of a
    /// lower-is-better one (times and latencies).
    fn metric_copies(&self, outs: &[Outcome]) -> Metric {
        let ms: Vec<Metric> = outs.iter().map(|o| self.metric(o)).collect();
        let mut m = ms.first().cloned().unwrap_or(Metric {
            name: String::new(),
            unit: String::new(),
            value: f64::NAN,
            higher_is_better: true,
        });
        let sum: f64 = ms.iter().map(|x| x.value).sum();
        m.value = if m.higher_is_better { sum } else { sum / ms.len().max(1) as f64 };
        m
    }
    /// Every metric the benchmark reports, headline first (what `wakesim compare` tabulates).
    /// Default: the headline [`metric`](Reporter::metric) alone.
    fn metrics(&self, out: &Outcome) -> Vec<Metric> {
        vec![self.metric(out)]
    }
    /// The benchmark's own latency distributions at percentiles `ps` (0–100), computed the way
    /// the benchmark computes the percentiles it prints (schbench: its `plat` buckets). What
    /// `compare` prints side by side and plots as CDFs. Default: none.
    fn latency_percentiles(&self, _out: &Outcome, _ps: &[f64]) -> Vec<LatencyPercentiles> {
        Vec::new()
    }
}

/// One latency distribution of a run, as `(percentile, value)` pairs in increasing order.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatencyPercentiles {
    /// The benchmark's own heading, e.g. "Wakeup Latencies".
    pub name: String,
    /// Unit of the values, e.g. "usec".
    pub unit: String,
    /// Samples the distribution holds.
    pub samples: u64,
    pub points: Vec<(f64, f64)>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Metric {
    pub name: String,
    pub unit: String,
    pub value: f64,
    pub higher_is_better: bool,
}

/// A complete workload.
#[derive(Debug)]
pub struct Workload {
    pub name: String,
    pub tasks: Vec<TaskSpec>,
    pub channels: Vec<ChannelSpec>,
    pub futexes: u32,
    pub reporter: Box<dyn Reporter>,
    /// The benchmark's own run time (`schbench -r`, `netperf -l`, `tbench -t` + warmup): the
    /// run stops there, or at the run's `--duration` if that is shorter. `None`: the workload
    /// ends by itself (every task exits).
    pub duration: Option<Time>,
}

impl Workload {
    /// Stretches every user-space compute op (`Op::Compute`) by `f`: `f` > 1 models a slower
    /// core than the one the durations were written (or recorded) for, `f` < 1 a faster one.
    /// Kernel work is not touched: it comes from the cost profile. `wakesim run --cpu-scale`.
    pub fn scale_compute(&mut self, f: f64) {
        for t in &mut self.tasks {
            for op in &mut t.program {
                if let Op::Compute(d) = op {
                    *d = d.scaled(f);
                }
            }
        }
    }
}

/// One recorded mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkRecord {
    pub mark: u32,
    pub task: u32,
    pub time: Time,
}

/// What a run produced, as the workload's reporter sees it.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Simulated time when the run ended (all tasks exited, or the duration cap).
    pub end_time: Time,
    /// True if the run stopped at the duration cap before the workload finished.
    pub capped: bool,
    pub marks: Vec<MarkRecord>,
    /// Exit time of each task (None if it had not exited).
    pub task_exit: Vec<Option<Time>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_compute_stretches_every_compute_op_and_nothing_else() {
        let prog = vec![
            Op::Compute(Dur::Fixed(1000)),
            Op::Sleep(Dur::Fixed(1000)),
            Op::Compute(Dur::Uniform { lo: 10, hi: 20 }),
            Op::Compute(Dur::Exp { mean: 300 }),
            Op::Compute(Dur::Normal { mean: 50, sd: 5 }),
        ];
        let mut w = Workload {
            name: "w".into(),
            tasks: vec![TaskSpec::new("t", prog)],
            channels: Vec::new(),
            futexes: 0,
            reporter: Box::new(crate::taskfile::TaskFileReporter::default()),
            duration: None,
        };
        w.scale_compute(2.5);
        assert_eq!(
            w.tasks[0].program,
            vec![
                Op::Compute(Dur::Fixed(2500)),
                Op::Sleep(Dur::Fixed(1000)),
                Op::Compute(Dur::Uniform { lo: 25, hi: 50 }),
                Op::Compute(Dur::Exp { mean: 750 }),
                Op::Compute(Dur::Normal { mean: 125, sd: 13 }),
            ]
        );
    }
}
