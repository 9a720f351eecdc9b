//! What every `perf bench` benchmark shares: `perf bench`'s own options and its header line.
//!
//! Source: tools/perf/builtin-bench.c — `bench_options` (`-f/--format default|simple`,
//! `-r/--repeat N`), parsed with `PARSE_OPT_STOP_AT_NON_OPTION` before the collection name; and
//! `printf("# Running '%s/%s' benchmark:\n", coll->name, bench->name)` in the default format.

use crate::args::{self, Opt};
use crate::WorkloadError;

/// `perf bench --format`: `default` prints the human report, `simple` only the total time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PerfFormat {
    #[default]
    Default,
    Simple,
}

/// `perf bench`'s own options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BenchOpts {
    pub format: PerfFormat,
}

const BENCH_OPTS: &[Opt] = &[
    Opt {
        short: Some('f'),
        long: "format",
        value: true,
    },
    Opt {
        short: Some('r'),
        long: "repeat",
        value: true,
    },
];

/// Splits `perf bench [-f F] [-r N] coll bench …` into the options and the words
/// `perf bench coll bench …` with the options removed.
pub(crate) fn strip_bench_opts(
    words: &[String],
) -> Result<(Vec<String>, BenchOpts), WorkloadError> {
    let tool = "perf bench";
    let p = args::parse(tool, &words[2..], BENCH_OPTS, true)?;
    let mut opts = BenchOpts::default();
    for g in &p.opts {
        match g.long {
            "format" => {
                opts.format = match g.value.as_deref() {
                    Some("default") => PerfFormat::Default,
                    Some("simple") => PerfFormat::Simple,
                    other => {
                        return Err(WorkloadError::arg(
                            tool,
                            format!(
                                "unknown format '{}' for '{}' (use default or simple)",
                                other.unwrap_or(""),
                                g.spelled
                            ),
                        ))
                    }
                }
            }
            // Only the mem and futex benchmarks repeat; accepted and validated as perf does.
            _ => {
                if args::int_value(tool, g)? <= 0 {
                    return Err(WorkloadError::arg(
                        tool,
                        format!("'{}' must be a positive number", g.spelled),
                    ));
                }
            }
        }
    }
    let mut out = words[..2].to_vec();
    out.extend(p.positional);
    Ok((out, opts))
}

/// The line builtin-bench.c prints before running `coll/bench` in the default format.
pub fn header(format: PerfFormat, coll: &str, bench: &str) -> String {
    match format {
        PerfFormat::Default => format!("# Running '{coll}/{bench}' benchmark:\n"),
        PerfFormat::Simple => String::new(),
    }
}

/// A `struct timeval` difference split as perf prints it: whole seconds and microseconds
/// (gettimeofday has microsecond resolution, so nanoseconds are truncated).
pub fn timeval(ns: u64) -> (u64, u64) {
    let usec = ns / 1_000;
    (usec / 1_000_000, usec % 1_000_000)
}

/// C's `(int)x` for a double on x86-64 (`cvttsd2si`): truncation toward zero, and the
/// "integer indefinite" value `INT_MIN` when `x` is NaN or out of range.
pub fn c_int(x: f64) -> i32 {
    if x.is_finite() && x > f64::from(i32::MIN) - 1.0 && x < f64::from(i32::MAX) + 1.0 {
        x as i32
    } else {
        i32::MIN
    }
}
