//! STREAM (`jeffhammond/STREAM@6703f75:stream.c`), built with OpenMP: `OMP_NUM_THREADS`
//! threads (default: every CPU) run `NTIMES` (10) iterations of four kernels — Copy, Scale,
//! Add, Triad — each an `omp parallel for` over `STREAM_ARRAY_SIZE` (10,000,000) doubles with
//! the implicit barrier at its end. The master times each kernel; the report is the best rate
//! per kernel excluding the first iteration, `1e-6 * bytes / min_time` with 16·N bytes for Copy
//! and Scale and 24·N for Add and Triad.
//!
//! Typed as `stream`, with the compile-time sizes and OpenMP settings as environment
//! assignments in front: `OMP_NUM_THREADS=64 STREAM_ARRAY_SIZE=80000000 NTIMES=20 stream`.
//!
//! A control for the scheduler: threads that never sleep. libgomp's threads spin at the
//! implicit barrier (`GOMP_SPINCOUNT`, 300k spins, before a futex sleep; indefinitely with
//! `OMP_WAIT_POLICY=active`), and a kernel is far shorter than a scheduler tick on a big
//! machine, so by default each thread runs its chunks back to back without blocking and the
//! report takes, for every kernel instance, the moment the *last* thread finished it — what the
//! barrier would have waited for (exact while the threads run at steady speeds).
//! `OMP_WAIT_POLICY=passive` puts real blocking barriers between the kernels instead (the last
//! thread wakes the others, one wakeup each).
//!
//! Other modelling choices: a thread streams at [`BYTES_PER_NS`] (5 GB/s, a per-core share of
//! a loaded memory system **\[EST\]**; the model has no shared memory-bandwidth resource, so the
//! rate is the same for any thread count and the reported bandwidth scales with the threads
//! that got a CPU of their own); `smt_throughput` 1.05 (memory-bound code gains little from
//! SMT **\[EST\]**; the kernel's old `smt_gain` was 1.15).

use super::{Invocation, Tool};
use super::prog::Prog;
use crate::{Metric, Op, Outcome, Reporter, TaskSpec, Workload, WorkloadError};
use wakesim_engine::Time;

pub(crate) const TOOL: Tool = Tool {
    name: "stream",
    command: &["stream"],
    flags: "environment before the command: OMP_NUM_THREADS=N (all CPUs), STREAM_ARRAY_SIZE=N \
            (10000000), NTIMES=N (10), OMP_WAIT_POLICY=active|passive (spinning barriers)",
    build,
};

/// Per-thread streaming rate, bytes per ns **\[EST\]**.
pub const BYTES_PER_NS: f64 = 5.0;
pub const SMT_THROUGHPUT: f64 = 1.05;
const LABELS: [&str; 4] = ["Copy:      ", "Scale:     ", "Add:       ", "Triad:     "];
const WORDS: [u64; 4] = [2, 2, 3, 3];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub threads: u32,
    pub array_size: u64,
    pub ntimes: u32,
    /// `OMP_WAIT_POLICY=passive`: blocking barriers.
    pub passive: bool,
}

fn env_num(env: &[(String, String)], key: &str, min: u64, max: u64) -> Result<Option<u64>, WorkloadError> {
    let Some((_, v)) = env.iter().rev().find(|(k, _)| k == key) else { return Ok(None) };
    match v.trim().parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
        _ => Err(WorkloadError::arg("stream", format!("{key}={v}: expected a whole number in {min}..={max}"))),
    }
}

fn build(inv: &Invocation) -> Result<Workload, WorkloadError> {
    if let Some(a) = inv.args.first() {
        return Err(WorkloadError::arg("stream", format!("unexpected argument '{a}' (STREAM takes no arguments; sizes are environment assignments before the command)")));
    }
    let threads = match env_num(inv.env, "OMP_NUM_THREADS", 1, 1 << 16)? {
        Some(n) => n as u32,
        None => inv.ctx.cpus("stream", "the default OMP_NUM_THREADS (one thread per CPU)")?,
    };
    let o = Options {
        threads,
        array_size: env_num(inv.env, "STREAM_ARRAY_SIZE", 1, 1 << 40)?.unwrap_or(10_000_000),
        ntimes: env_num(inv.env, "NTIMES", 2, 1 << 20)?.unwrap_or(10) as u32,
        passive: match inv.env.iter().rev().find(|(k, _)| k == "OMP_WAIT_POLICY").map(|(_, v)| v.to_ascii_lowercase()) {
            None => false,
            Some(v) if v == "active" => false,
            Some(v) if v == "passive" => true,
            Some(v) => return Err(WorkloadError::arg("stream", format!("OMP_WAIT_POLICY={v}: expected active or passive"))),
        },
    };
    Ok(workload(&o))
}

/// Every thread marks `2k + 1` when it has finished kernel k (after the barrier when passive);
/// the master also marks `2k` before it.
pub fn workload(o: &Options) -> Workload {
    let t = o.threads.max(1);
    let mut tasks = Vec::new();
    for i in 0..t {
        // Static schedule: thread i gets a contiguous chunk of ⌈N/T⌉ (the last gets the rest).
        let chunk = o.array_size.div_ceil(u64::from(t));
        let mine = chunk.min(o.array_size.saturating_sub(chunk * u64::from(i)));
        let mut p = Prog::new();
        p.repeat(u64::from(o.ntimes));
        for (k, w) in WORDS.iter().enumerate() {
            if i == 0 {
                p.mark(2 * k as u32);
            }
            let ns = (mine * 8 * w) as f64 / BYTES_PER_NS;
            p.compute((ns.round() as Time).max(1));
            if o.passive {
                p.op(Op::Barrier { id: 0, parties: t });
            }
            p.mark(2 * k as u32 + 1);
        }
        p.end();
        let mut ts = TaskSpec::new("stream", p.build());
        ts.mm = 1;
        ts.smt_throughput = Some(SMT_THROUGHPUT);
        tasks.push(ts);
    }
    Workload { name: "stream".into(), tasks, channels: vec![], futexes: 0, reporter: Box::new(StreamReporter { opts: *o }), duration: None }
}

#[derive(Debug, Clone)]
pub struct StreamReporter {
    pub opts: Options,
}

impl StreamReporter {
    /// Per kernel: the times of each iteration (s). Kernel instance n (iteration n / 4, kernel
    /// n % 4) ends when the last thread has finished it and starts when instance n − 1 ended
    /// (the master's first mark for n = 0).
    pub fn times(&self, out: &Outcome) -> [Vec<f64>; 4] {
        let t = self.opts.threads.max(1) as usize;
        let mut done: Vec<Vec<Time>> = vec![Vec::new(); t];
        let mut first = None;
        for m in &out.marks {
            if m.mark % 2 == 1 && m.mark < 8 {
                if let Some(v) = done.get_mut(m.task as usize) {
                    v.push(m.time);
                }
            } else if m.mark == 0 && m.task == 0 && first.is_none() {
                first = Some(m.time);
            }
        }
        let n = done.iter().map(Vec::len).min().unwrap_or(0);
        let ends: Vec<Time> = (0..n).map(|i| done.iter().map(|v| v[i]).max().unwrap_or(0)).collect();
        let mut out_t: [Vec<f64>; 4] = Default::default();
        let mut prev = first.unwrap_or(0);
        for (i, &e) in ends.iter().enumerate() {
            out_t[i % 4].push(e.saturating_sub(prev) as f64 / 1e9);
            prev = e;
        }
        out_t
    }

    /// Best rate MB/s per kernel (first iteration excluded).
    pub fn best_rates(&self, out: &Outcome) -> [f64; 4] {
        let t = self.times(out);
        std::array::from_fn(|k| {
            let min = t[k].iter().skip(1).cloned().fold(f64::INFINITY, f64::min);
            1e-6 * (WORDS[k] * 8 * self.opts.array_size) as f64 / min
        })
    }
}

const HLINE: &str = "-------------------------------------------------------------\n";

impl Reporter for StreamReporter {
    fn render(&self, out: &Outcome) -> String {
        let o = &self.opts;
        let n = o.array_size;
        let mb = (8 * n) as f64 / 1024.0 / 1024.0;
        let mut s = String::new();
        s += HLINE;
        s += "STREAM version $Revision: 5.10 $\n";
        s += HLINE;
        s += "This system uses 8 bytes per array element.\n";
        s += HLINE;
        s += &format!("Array size = {n} (elements), Offset = 0 (elements)\n");
        s += &format!("Memory per array = {mb:.1} MiB (= {:.1} GiB).\n", mb / 1024.0);
        s += &format!("Total memory required = {:.1} MiB (= {:.1} GiB).\n", 3.0 * mb, 3.0 * mb / 1024.0);
        s += &format!("Each kernel will be executed {} times.\n", o.ntimes);
        s += " The *best* time for each kernel (excluding the first iteration)\n";
        s += " will be used to compute the reported bandwidth.\n";
        s += HLINE;
        s += &format!("Number of Threads requested = {}\n", o.threads);
        s += &format!("Number of Threads counted = {}\n", o.threads);
        s += HLINE;
        s += "Function    Best Rate MB/s  Avg time     Min time     Max time\n";
        let times = self.times(out);
        let rates = self.best_rates(out);
        for k in 0..4 {
            let rest: Vec<f64> = times[k].iter().skip(1).cloned().collect();
            let avg = rest.iter().sum::<f64>() / rest.len().max(1) as f64;
            let min = rest.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = rest.iter().cloned().fold(0.0, f64::max);
            s += &format!("{}{:12.1}  {:11.6}  {:11.6}  {:11.6}\n", LABELS[k], rates[k], avg, min, max);
        }
        s += HLINE;
        s += "Solution Validates: avg error less than 1.000000e-13 on all three arrays\n";
        s += HLINE;
        if out.capped {
            s += "# wakesim: the run hit the duration cap before STREAM finished\n";
        }
        s
    }

    fn metric(&self, out: &Outcome) -> Metric {
        Metric { name: "Triad best rate".into(), unit: "MB/s".into(), value: self.best_rates(out)[3], higher_is_better: true }
    }
}
