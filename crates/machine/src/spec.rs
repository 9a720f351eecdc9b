//! The TOML machine description (see FORMAT.md).
/// Parsed machine file (helper A fills this in).
#[derive(Clone, Debug)]
pub struct MachineSpec;
