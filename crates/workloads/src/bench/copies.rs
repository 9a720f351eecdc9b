//! `wakesim run --copies N`: N independent instances of one workload side by side, as
//! UnixBench's `Run -c N` (executeBenchmark: N copies started at once, scores summed) and
//! mmtests' multi-instance netperf (`NR_PAIRS` instances, one log each) run them.
//!
//! Each copy gets its own channels, futexes, barriers, mutexes, per-CPU lock arrays (separate
//! processes each allocate their own, as schbench's `per_cpu_locks`) and address spaces; the
//! reporter sees one [`Outcome`] per copy (marks and exits re-indexed to the copy's tasks) and
//! aggregates through [`Reporter::render_copies`] / [`Reporter::metric_copies`].

use crate::{Metric, Op, Outcome, Reporter, Workload};

/// Replaces `w` by `copies` instances of it (`copies` ≥ 2; 1 returns `w` unchanged).
pub fn replicate(w: Workload, copies: u32) -> Workload {
    if copies <= 1 {
        return w;
    }
    let nt = w.tasks.len() as u32;
    let nch = w.channels.len() as u32;
    let (mut nbar, mut nmtx, mut nset) = (0u32, 0u32, 0u32);
    for t in &w.tasks {
        for op in &t.program {
            match *op {
                Op::Barrier { id, .. } => nbar = nbar.max(id + 1),
                Op::Lock { id } | Op::Unlock { id } => nmtx = nmtx.max(id + 1),
                Op::CpuSpinLock { set } | Op::CpuSpinUnlock { set } => nset = nset.max(set + 1),
                _ => {}
            }
        }
    }
    let nmm = w.tasks.iter().map(|t| t.mm).max().unwrap_or(0) + 1;
    let mut tasks = Vec::with_capacity(w.tasks.len() * copies as usize);
    let mut channels = Vec::with_capacity(w.channels.len() * copies as usize);
    for k in 0..copies {
        for t in &w.tasks {
            let mut t = t.clone();
            t.mm += k * nmm;
            for op in &mut t.program {
                match op {
                    Op::Send { chan, .. } | Op::SendDgram { chan, .. } | Op::Recv { chan, .. } => *chan += k * nch,
                    Op::FutexWait { futex }
                    | Op::FutexWake { futex, .. }
                    | Op::FutexWakeWaiters { futex, .. }
                    | Op::FutexWakeAllSync { futex } => {
                        *futex += k * w.futexes
                    }
                    Op::Barrier { id, .. } => *id += k * nbar,
                    Op::Lock { id } | Op::Unlock { id } => *id += k * nmtx,
                    Op::CpuSpinLock { set } | Op::CpuSpinUnlock { set } => *set += k * nset,
                    _ => {}
                }
            }
            tasks.push(t);
        }
        channels.extend(w.channels.iter().map(|c| {
            let mut c = c.clone();
            if copies > 1 {
                c.name = format!("{}#{k}", c.name);
            }
            c
        }));
    }
    Workload {
        name: format!("{} (x{copies})", w.name),
        tasks,
        channels,
        futexes: w.futexes * copies,
        reporter: Box::new(CopiesReporter {
            inner: w.reporter,
            copies,
            tasks_per_copy: nt,
        }),
        duration: w.duration,
    }
}

/// Splits the outcome of a replicated run per copy and lets the benchmark aggregate.
#[derive(Debug)]
pub struct CopiesReporter {
    pub inner: Box<dyn Reporter>,
    pub copies: u32,
    pub tasks_per_copy: u32,
}

impl CopiesReporter {
    /// One outcome per copy, with task indices local to the copy.
    pub fn split(&self, out: &Outcome) -> Vec<Outcome> {
        let n = self.tasks_per_copy.max(1);
        let mut per: Vec<Outcome> = (0..self.copies)
            .map(|k| Outcome {
                end_time: out.end_time,
                capped: out.capped,
                marks: Vec::new(),
                task_exit: out
                    .task_exit
                    .iter()
                    .skip((k * n) as usize)
                    .take(n as usize)
                    .copied()
                    .collect(),
            })
            .collect();
        for m in &out.marks {
            let k = (m.task / n) as usize;
            if let Some(o) = per.get_mut(k) {
                let mut m = *m;
                m.task %= n;
                o.marks.push(m);
            }
        }
        per
    }
}

impl Reporter for CopiesReporter {
    fn render(&self, out: &Outcome) -> String {
        self.inner.render_copies(&self.split(out))
    }

    fn metric(&self, out: &Outcome) -> Metric {
        self.inner.metric_copies(&self.split(out))
    }
}
