//! User-written task graphs in TOML (format: crates/workloads/FORMAT.md).

mod build;
mod doc;
mod ops;
mod report;
mod toml_walk;

pub use report::TaskFileReporter;

use crate::{Workload, WorkloadError};
use std::path::Path;

/// Reads and compiles a task file. Errors name `path:line` and the problem.
pub fn load_task_file(path: &Path) -> Result<Workload, WorkloadError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| WorkloadError::Io {
        path: shown.clone(),
        source,
    })?;
    from_toml_str(&text, &shown)
}

/// Compiles task-file text; `path_for_errors` is what error messages call the file.
pub fn from_toml_str(text: &str, path_for_errors: &str) -> Result<Workload, WorkloadError> {
    let src = toml_walk::Src::new(path_for_errors, text);
    let root = toml::de::DeTable::parse(text).map_err(|e| src.toml_err(&e))?;
    let doc = doc::read(&src, root.get_ref(), root.span())?;
    build::build(&src, doc)
}
