//! Latency histogram.
pub struct LatencyHist;
