//! # wakesim-costs: what every kernel action costs, on the CPU that performs it
//!
//! A [`CostProfile`] holds every time constant the model charges, in nanoseconds. Each field's
//! comment names its source (a kernel file or default, a measurement, an LKML thread; listed in
//! `docs/model.md`, "Sources"), or
//! **\[EST\]** for an order-of-magnitude estimate that calibration should replace). One profile per
//! machine family ([`profile_for`]); any field can be overridden from a TOML file (`--costs FILE`,
//! [`load_overrides`], format in `FORMAT.md`), and [`to_toml`] writes a complete file (calibration).

mod file;
mod profile;
mod profiles;

pub use file::{describe_cost, from_toml_str, load_overrides, scale_cost, to_toml};
pub use profile::{CostProfile, IdleState, LineCosts, CPUIDLE_STATE_MAX};
pub use profiles::{generic, profile_for, profile_names};

#[derive(Debug, thiserror::Error)]
pub enum CostError {
    #[error("unknown cost profile '{0}' (known: {1})")]
    Unknown(String, String),
    #[error("{path}:{line}: {msg}")]
    File {
        path: String,
        line: usize,
        msg: String,
    },
    #[error("{0}")]
    Invalid(String),
}
