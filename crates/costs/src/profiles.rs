//! Built-in profiles per machine family.
//!
//! Sources are cited next to every constant: a kernel file/default, a measurement or an LKML
//! thread (collected in `docs/model.md`, "Sources"), or **\[EST\]** with the reasoning.
//!
//! | name    | machines (wakesim-machine presets)           | notes                                   |
//! |---------|----------------------------------------------|-----------------------------------------|
//! | `skx`   | xeon-8269cy, xeon-8260, xeon-4s (SKX/CLX)    | intel_idle `skx_cstates`, MWAIT polling |
//! | `zen3`  | EPYC 7763                                    | acpi_idle: POLL, C1 (MWAIT), C2 (IO)    |
//! | `zen4`  | EPYC 9654                                    | as zen3, Genoa c2c figures              |
//! | `zen4c` | EPYC 9754                                    | as zen3, Bergamo c2c figures            |
//! | `altra` | Ampere Altra (arm64)                         | WFI only, never polling: wakes need IPIs|
//! | `generic` | test machines                              | neutral x86                             |
//! | `host`  | this machine until `wakesim calibrate` runs  | VM-like: HLT idle, expensive IPIs       |

mod amd;
mod arm;
mod host;
mod x86;

use crate::{CostError, CostProfile};

/// Names of the built-in profiles, in a stable order.
pub fn profile_names() -> Vec<&'static str> {
    vec!["skx", "zen3", "zen4", "zen4c", "altra", "generic", "host"]
}

/// The built-in profile `name`, or [`CostError::Unknown`] listing the known names.
pub fn profile_for(name: &str) -> Result<CostProfile, CostError> {
    match name {
        "skx" => Ok(x86::skx()),
        "zen3" => Ok(amd::zen3()),
        "zen4" => Ok(amd::zen4()),
        "zen4c" => Ok(amd::zen4c()),
        "altra" => Ok(arm::altra()),
        "generic" => Ok(x86::generic()),
        "host" => Ok(host::host()),
        _ => Err(CostError::Unknown(name.into(), profile_names().join(", "))),
    }
}

/// The neutral x86 profile used by test machines (same as `profile_for("generic")`).
pub fn generic() -> CostProfile {
    x86::generic()
}

impl Default for CostProfile {
    /// The `generic` profile.
    fn default() -> Self {
        x86::generic()
    }
}
