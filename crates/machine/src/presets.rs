use crate::{Machine, MachineError};
pub fn preset_names() -> Vec<&'static str> { vec![] }
pub fn preset(name: &str) -> Result<Machine, MachineError> { Err(MachineError::Unknown(name.into(), String::new())) }
