//! Machines: topologies, the sched-domain hierarchy the kernel would build on them, the
//! presets, sysfs and TOML descriptions, and how they are printed.

mod domains;
mod presets;
mod print;
mod sysfs;
mod toml_format;
mod topology;
