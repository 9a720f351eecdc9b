//! The self-timing loop: a thread pinned to a CPU reads `CLOCK_MONOTONIC` in a tight loop;
//! wherever two consecutive readings lie further apart than a threshold, something else had the
//! CPU (an interrupt, a softirq, a preempting thread, the hypervisor). The osnoise tracer's
//! workload does the same inside the kernel (`Documentation/trace/osnoise-tracer.rst`); this is
//! its user-space form, for kernels built without it.

use std::io;

use crate::sys;

/// Clock jumps of at least this many ns are interruptions. One iteration of the loop (a vDSO
/// clock read) takes 20–40 ns on current x86 machines, so 1 µs is well clear of the loop itself
/// and below the shortest interrupt (an interrupt entry and exit alone is ~0.5–1 µs).
pub const DEFAULT_THRESHOLD_NS: u64 = 1_000;

/// At most this many gaps are kept per CPU (16 MiB); more are counted in `dropped`.
const MAX_GAPS: usize = 1 << 20;

/// One interruption of the loop: the clock read `start`, and the next read `start + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gap {
    pub start: u64,
    pub len: u64,
}

impl Gap {
    pub fn end(&self) -> u64 {
        self.start + self.len
    }
}

/// Finds the gaps in a stream of clock readings, one reading at a time (the loop's own code;
/// [`find_gaps`] runs it over a slice).
#[derive(Clone, Debug)]
pub struct GapDetector {
    last: u64,
    threshold: u64,
    pub gaps: Vec<Gap>,
    /// Gaps beyond `MAX_GAPS`, counted but not kept.
    pub dropped: u64,
}

impl GapDetector {
    /// A detector whose first reading was `t0`.
    pub fn new(t0: u64, threshold: u64) -> GapDetector {
        GapDetector { last: t0, threshold: threshold.max(1), gaps: Vec::new(), dropped: 0 }
    }

    #[inline]
    pub fn feed(&mut self, now: u64) {
        // A monotonic clock never goes back; a series that does (a test's) counts no gap there.
        let d = now.saturating_sub(self.last);
        if d >= self.threshold {
            if self.gaps.len() < MAX_GAPS {
                self.gaps.push(Gap { start: self.last, len: d });
            } else {
                self.dropped += 1;
            }
        }
        self.last = now;
    }
}

/// The gaps of at least `threshold` ns between consecutive `readings`.
pub fn find_gaps(readings: &[u64], threshold: u64) -> Vec<Gap> {
    let Some((&first, rest)) = readings.split_first() else { return Vec::new() };
    let mut d = GapDetector::new(first, threshold);
    for &t in rest {
        d.feed(t);
    }
    d.gaps
}

/// What one CPU's loop saw.
#[derive(Clone, Debug)]
pub struct LoopRun {
    pub cpu: usize,
    /// The loop thread's kernel id (its own sched_switch events are not background noise).
    pub tid: i32,
    pub start: u64,
    pub end: u64,
    pub gaps: Vec<Gap>,
    pub dropped: u64,
    /// Clock reads.
    pub iterations: u64,
}

impl LoopRun {
    /// Time the loop did not have, ns.
    pub fn lost_ns(&self) -> u64 {
        self.gaps.iter().map(|g| g.len).sum()
    }
}

/// Runs one loop on every CPU of `cpus` at the same time, each pinned to its CPU, for
/// `window_ns`; gaps of at least `threshold_ns`. Every CPU is kept busy, as under a benchmark:
/// the tick runs, and a thread woken there preempts the loop instead of an idle CPU.
pub fn self_timing_loops(cpus: &[usize], window_ns: u64, threshold_ns: u64) -> io::Result<Vec<LoopRun>> {
    if cpus.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no CPU to measure"));
    }
    let _keep = sys::KeepAffinity::new();
    let barrier = std::sync::Barrier::new(cpus.len());
    std::thread::scope(|s| {
        let handles: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                let barrier = &barrier;
                s.spawn(move || -> io::Result<LoopRun> {
                    let pinned = sys::pin_to(&[cpu]).map_err(|e| io::Error::new(e.kind(), format!("cannot pin to CPU {cpu}: {e}")));
                    // Every thread reaches the barrier, pinned or not, so none waits forever.
                    barrier.wait();
                    pinned?;
                    let start = sys::now_ns();
                    let end = start + window_ns;
                    let mut d = GapDetector::new(start, threshold_ns);
                    d.gaps.reserve(((window_ns / 1_000_000) as usize * 4).min(MAX_GAPS));
                    let (mut now, mut n) = (start, 0u64);
                    while now < end {
                        now = sys::now_ns();
                        d.feed(now);
                        n += 1;
                    }
                    Ok(LoopRun { cpu, tid: sys::gettid(), start, end: now, gaps: d.gaps, dropped: d.dropped, iterations: n })
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(io::Error::other("a loop thread panicked")))).collect()
    })
}

/// Which of a busy CPU's gaps are its tick: the tick fires every `tick_ns` at a fixed phase
/// (`tick_sched_timer` re-arms on the jiffy grid), so the gaps starting in the 30 µs around the
/// most crowded phase are the tick's, if there are at least half as many as the window holds
/// ticks. A gap there more than 4× their median length is a tick and then something else (the
/// tick preempted the loop for another thread): not counted as the tick. Used when no tracer
/// names the interrupts.
pub fn tick_gaps(gaps: &[Gap], tick_ns: u64, window_ns: u64) -> Vec<bool> {
    const BIN: u64 = 10_000;
    let mut out = vec![false; gaps.len()];
    if tick_ns < 3 * BIN || gaps.is_empty() {
        return out;
    }
    let bins = tick_ns.div_ceil(BIN) as usize;
    let mut hist = vec![0usize; bins];
    let bin_of = |g: &Gap| ((g.start % tick_ns) / BIN) as usize;
    for g in gaps {
        hist[bin_of(g)] += 1;
    }
    let around = |b: usize| [(b + bins - 1) % bins, b, (b + 1) % bins];
    let best = (0..bins).max_by_key(|&b| around(b).iter().map(|&i| hist[i]).sum::<usize>()).unwrap_or(0);
    let near = around(best);
    let mut lens: Vec<u64> = gaps.iter().filter(|g| near.contains(&bin_of(g))).map(|g| g.len).collect();
    if (lens.len() as u64) * 2 < window_ns / tick_ns {
        return out;
    }
    lens.sort_unstable();
    let limit = 4 * lens[lens.len() / 2];
    for (o, g) in out.iter_mut().zip(gaps) {
        *o = near.contains(&bin_of(g)) && g.len <= limit;
    }
    out
}
