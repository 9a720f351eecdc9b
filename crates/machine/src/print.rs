//! sched_domain debug-style printing.
