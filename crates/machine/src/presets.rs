//! Built-in machines. Each is a TOML file in `crates/machine/presets/` (embedded at build time),
//! so the presets double as examples of the machine file format (FORMAT.md).

use crate::{from_toml_str, Machine, MachineError};

/// (name, TOML text), in the order `wakesim machines` lists them.
const PRESETS: &[(&str, &str)] = &[
    ("xeon-8269cy", include_str!("../presets/xeon-8269cy.toml")),
    ("xeon-8260", include_str!("../presets/xeon-8260.toml")),
    ("xeon-4s", include_str!("../presets/xeon-4s.toml")),
    ("altra", include_str!("../presets/altra.toml")),
    ("epyc-7763", include_str!("../presets/epyc-7763.toml")),
    ("epyc-9654", include_str!("../presets/epyc-9654.toml")),
    ("epyc-9754", include_str!("../presets/epyc-9754.toml")),
    ("epyc-9965", include_str!("../presets/epyc-9965.toml")),
    ("test-2x4", include_str!("../presets/test-2x4.toml")),
    ("test-smt2", include_str!("../presets/test-smt2.toml")),
];

/// Names of the built-in presets. `host` (this machine, read from sysfs) is not a preset: see
/// [`crate::host`] and [`crate::lookup`].
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The TOML text of a preset (to show or to copy as a starting point for a machine file).
pub fn preset_toml(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Builds a preset machine by name.
pub fn preset(name: &str) -> Result<Machine, MachineError> {
    match preset_toml(name) {
        Some(text) => from_toml_str(text, &format!("presets/{name}.toml")),
        None => {
            let mut known = preset_names();
            known.push("host");
            Err(MachineError::Unknown(name.into(), known.join(", ")))
        }
    }
}
