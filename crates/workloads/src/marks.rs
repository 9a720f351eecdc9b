//! Turning an [`Outcome`]'s marks into the interval a benchmark measured.

use crate::Outcome;
use wakesim_engine::Time;

/// Earliest time `mark` was recorded, by any task.
pub fn first_mark(out: &Outcome, mark: u32) -> Option<Time> {
    out.marks
        .iter()
        .filter(|m| m.mark == mark)
        .map(|m| m.time)
        .min()
}

/// Latest time `mark` was recorded, by any task.
pub fn last_mark(out: &Outcome, mark: u32) -> Option<Time> {
    out.marks
        .iter()
        .filter(|m| m.mark == mark)
        .map(|m| m.time)
        .max()
}

/// The measured interval, as a benchmark timing "start everything … wait for everything" does:
/// from the first record of `start` (or time 0) to the last record of `end`; without end
/// records, the last task exit; without exits (or when the run was capped), `end_time`.
pub fn measured_span(out: &Outcome, start: Option<u32>, end: Option<u32>) -> Time {
    let t0 = start.and_then(|m| first_mark(out, m)).unwrap_or(0);
    let t1 = if out.capped {
        out.end_time
    } else {
        end.and_then(|m| last_mark(out, m))
            .or_else(|| out.task_exit.iter().flatten().copied().max())
            .unwrap_or(out.end_time)
    };
    t1.saturating_sub(t0)
}
