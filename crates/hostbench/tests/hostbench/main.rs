//! Measuring the host: the calibration microbenchmarks and the native benchmark generators.

mod calib;
mod native;
mod noise;
