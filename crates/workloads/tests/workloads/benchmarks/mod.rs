//! One module per benchmark family: its task graph, its metric and its output format.

mod hackbench;
mod netperf_unixbench_ipistorm;
mod perf_pipe;
mod schbench;
mod stream_rtapp_tbench;
