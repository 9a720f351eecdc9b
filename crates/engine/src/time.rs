//! Simulated time is an integer count of nanoseconds. Integer time keeps runs byte-identical
//! across machines and avoids the drift of floating-point clocks.

/// Simulated nanoseconds since the start of the run.
pub type Time = u64;

pub const NSEC: Time = 1;
pub const USEC: Time = 1_000;
pub const MSEC: Time = 1_000_000;
pub const SEC: Time = 1_000_000_000;

/// Converts microseconds given as a float (as cost files and distributions use) to `Time`,
/// rounding to the nearest nanosecond.
pub fn from_us(us: f64) -> Time {
    debug_assert!(us >= 0.0 && us.is_finite());
    (us * 1_000.0).round() as Time
}

/// Converts a `Time` to microseconds for reports.
pub fn to_us(t: Time) -> f64 {
    t as f64 / 1_000.0
}

/// Converts a `Time` to seconds for reports.
pub fn to_secs(t: Time) -> f64 {
    t as f64 / 1e9
}
