//! Cost profiles: the built-in ones, and TOML overrides on top of them.

mod overrides;
mod profiles;
