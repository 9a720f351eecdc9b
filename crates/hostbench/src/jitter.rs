//! How much one pass through a kernel code path varies from the next: single calls timed one by
//! one in a hot loop (a null syscall; a 100 B pipe `write` + `read` on one thread). The
//! coefficient of variation around the mean, after the calls the loop's clock saw interrupted
//! (over 5× the median: an interrupt, a preemption) are left out, is what `wakesim calibrate`
//! writes as the noise profile's `cost_jitter`. A hot loop keeps its caches warm, so this is a
//! lower bound on the variation of the same paths inside a real workload.

use crate::sys;
use std::io;

/// Calls timed per path.
pub const CALLS: usize = 100_000;

/// One path's single-call timings.
#[derive(Clone, Debug, PartialEq)]
pub struct PathJitter {
    pub name: &'static str,
    pub median_ns: f64,
    pub mean_ns: f64,
    /// Standard deviation / mean of the calls kept.
    pub cv: f64,
    pub calls: usize,
    /// Calls over 5× the median, left out.
    pub dropped: usize,
}

/// Times `n` single calls of `op`, less the clock's own cost (the median of back-to-back reads).
fn timed(name: &'static str, n: usize, mut op: impl FnMut() -> io::Result<()>) -> io::Result<PathJitter> {
    let mut clock: Vec<u64> = (0..1000).map(|_| {
        let t = sys::now_ns();
        sys::now_ns() - t
    }).collect();
    clock.sort_unstable();
    let overhead = clock[clock.len() / 2];
    let mut d = Vec::with_capacity(n);
    for _ in 0..n {
        let t = sys::now_ns();
        op()?;
        d.push((sys::now_ns() - t).saturating_sub(overhead) as f64);
    }
    d.sort_by(|a, b| a.total_cmp(b));
    let median = d[n / 2];
    let kept: Vec<f64> = d.iter().copied().filter(|&x| x <= 5.0 * median).collect();
    let m = kept.iter().sum::<f64>() / kept.len() as f64;
    let var = kept.iter().map(|x| (x - m).powi(2)).sum::<f64>() / kept.len() as f64;
    Ok(PathJitter { name, median_ns: median, mean_ns: m, cv: var.sqrt() / m, calls: n, dropped: n - kept.len() })
}

/// A null syscall and a 100 B pipe write + read, `n` single calls each.
pub fn measure(n: usize) -> io::Result<Vec<PathJitter>> {
    let sc = timed("null syscall", n, || {
        sys::null_syscall();
        Ok(())
    })?;
    let (r, w) = sys::channel_pair(false)?;
    let mut buf = [1u8; 100];
    let pipe = timed("pipe write + read 100 B", n, || sys::write_read(r, w, &mut buf));
    sys::close_pairs(&[(r, w)]);
    Ok(vec![sc, pipe?])
}

/// The `cost_jitter` to write: the smaller of the paths' CVs (the calmer path bounds what the
/// clock's resolution and the loop add), to two decimals.
pub fn cost_jitter(paths: &[PathJitter]) -> f64 {
    let cv = paths.iter().map(|p| p.cv).fold(f64::INFINITY, f64::min);
    if cv.is_finite() { (cv * 100.0).round() / 100.0 } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_calls_vary_by_a_plausible_cv_around_a_positive_median() {
        let p = measure(20_000).unwrap();
        for x in &p {
            assert!(x.median_ns > 0.0 && x.mean_ns > 0.0, "{x:?}");
            // A CV of 0 would mean a broken clock; above 1 the drop rule failed.
            assert!(x.cv > 0.0 && x.cv < 1.0, "{x:?}");
            assert!(x.dropped < x.calls / 10, "{x:?}");
        }
        let j = cost_jitter(&p);
        assert!((0.0..1.0).contains(&j) && j > 0.0, "{j}");
    }
}
