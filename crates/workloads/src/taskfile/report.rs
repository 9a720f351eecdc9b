//! Output of a task-file workload: the elapsed time and a summary of every mark.

use crate::marks::measured_span;
use crate::{Metric, Outcome, Reporter};
use std::collections::BTreeMap;
use wakesim_engine::{to_secs, to_us};

/// Elapsed time = from the first `start_mark` record (or 0) to the last `end_mark` record (or
/// the last task exit); see [`measured_span`]. Metric: elapsed seconds, lower is better.
#[derive(Debug, Clone, Default)]
pub struct TaskFileReporter {
    pub start_mark: Option<u32>,
    pub end_mark: Option<u32>,
}

impl TaskFileReporter {
    pub fn elapsed_secs(&self, out: &Outcome) -> f64 {
        to_secs(measured_span(out, self.start_mark, self.end_mark))
    }
}

impl Reporter for TaskFileReporter {
    fn render(&self, out: &Outcome) -> String {
        let mut s = format!("Elapsed: {:.6} s\n", self.elapsed_secs(out));
        // mark -> task -> times in order
        let mut by_mark: BTreeMap<u32, BTreeMap<u32, Vec<u64>>> = BTreeMap::new();
        for m in &out.marks {
            by_mark
                .entry(m.mark)
                .or_default()
                .entry(m.task)
                .or_default()
                .push(m.time);
        }
        for (mark, per_task) in &by_mark {
            let all = per_task.values().flatten();
            let n = per_task.values().map(Vec::len).sum::<usize>();
            let first = all.clone().min().copied().unwrap_or(0);
            let last = all.max().copied().unwrap_or(0);
            s += &format!(
                "Mark {mark}: {n} records by {} tasks, first {:.6} s, last {:.6} s",
                per_task.len(),
                to_secs(first),
                to_secs(last)
            );
            // Intervals between consecutive records of the same task (loop periods).
            let mut iv = Vec::new();
            for times in per_task.values() {
                let mut t = times.clone();
                t.sort_unstable();
                iv.extend(t.windows(2).map(|w| w[1] - w[0]));
            }
            if !iv.is_empty() {
                let mean = iv.iter().map(|&x| x as f64).sum::<f64>() / iv.len() as f64;
                let (lo, hi) = (
                    iv.iter().min().copied().unwrap_or(0),
                    iv.iter().max().copied().unwrap_or(0),
                );
                s += &format!(
                    ", interval mean {:.3} us, min {:.3} us, max {:.3} us",
                    mean / 1e3,
                    to_us(lo),
                    to_us(hi)
                );
            }
            s.push('\n');
        }
        if out.capped {
            s += &format!(
                "Stopped at the duration cap ({:.6} s) before every task exited\n",
                to_secs(out.end_time)
            );
        }
        s
    }

    fn metric(&self, out: &Outcome) -> Metric {
        Metric {
            name: "elapsed".into(),
            unit: "s".into(),
            value: self.elapsed_secs(out),
            higher_is_better: false,
        }
    }
}
