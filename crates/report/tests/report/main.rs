//! The comparison report's tables.

mod tables;
