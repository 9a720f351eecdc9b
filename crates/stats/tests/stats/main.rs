//! Statistics: latency histograms, the run summary and JSON, and /proc/schedstat text.

mod common;
mod hist;
mod schedstat;
mod summary;
