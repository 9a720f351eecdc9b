//! Built-in profiles per machine family.
use crate::{CostError, CostProfile};

pub fn profile_names() -> Vec<&'static str> {
    vec![]
}

pub fn profile_for(name: &str) -> Result<CostProfile, CostError> {
    Err(CostError::Unknown(name.into(), profile_names().join(", ")))
}
