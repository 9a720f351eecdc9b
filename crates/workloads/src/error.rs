//! The one error type of this crate. Every variant renders as a single line that names the
//! problem and where it is (file position, or the tool and flag on a command line).

/// A workload could not be built from a task file or a benchmark command line.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// A problem at a position in a task file: `path:line: message`.
    #[error("{path}:{line}: {msg}")]
    File {
        path: String,
        line: usize,
        msg: String,
    },
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The command line names no benchmark this crate models.
    #[error("unknown benchmark '{tool}'; known: {known}")]
    UnknownTool { tool: String, known: String },
    /// A known tool with a bad flag or value: `tool: message`.
    #[error("{tool}: {msg}")]
    BadArgument { tool: String, msg: String },
}

impl WorkloadError {
    pub(crate) fn arg(tool: &str, msg: impl Into<String>) -> Self {
        WorkloadError::BadArgument {
            tool: tool.to_string(),
            msg: msg.into(),
        }
    }
}
