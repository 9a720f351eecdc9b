//! `wakesim`: the command line, as a library. Parses arguments, resolves machines, cost
//! profiles, features and workloads, runs the model and prints what the benchmark would print,
//! then statistics. The `wakesim` binary is [`main_with`] plus one error line; [`api`] runs the
//! same commands in-process with their output captured (the Python package's door).
//!
//! Every user error ends as one line (`wakesim: error: ...`) and exit code 2 in the binary, or as
//! an `Err(UserError)` here.

pub mod api;
mod args;
mod bench;
mod compare;
mod calibrate;
mod drift;
mod fit;
mod info;
mod native;
mod output;
mod quiet;
mod record;
mod replay;
mod report;
mod reproduce;
mod run;
mod validate;

use clap::Parser;

/// A user-facing error: one line, exit code 2.
#[derive(Debug)]
pub struct UserError(pub String);

impl<E: std::fmt::Display> From<E> for UserError {
    fn from(e: E) -> Self {
        UserError(e.to_string())
    }
}

/// What parsing a command line gave: a command to run, or help/version text to print.
pub(crate) enum Parsed {
    Cmd(Box<args::Cli>),
    Help(String),
}

pub(crate) fn parse(argv: &[String]) -> Result<Parsed, UserError> {
    match args::Cli::try_parse_from(argv) {
        Ok(c) => Ok(Parsed::Cmd(Box::new(c))),
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
                return Ok(Parsed::Help(e.render().to_string()));
            }
            // clap's message is several lines: the problem (possibly continued on indented lines,
            // e.g. the names of missing arguments), then usage and hints. Keep the problem.
            let text = e.to_string();
            let problem: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .map(str::trim)
                .collect();
            Err(UserError(problem.join(" ").trim_start_matches("error: ").to_string()))
        }
    }
}

/// Runs the command line `argv` (`argv[0]` is the program name), printing through
/// `output::out` (captured under [`api`]).
pub fn main_with(argv: &[String]) -> Result<(), UserError> {
    let cli = match parse(argv)? {
        Parsed::Cmd(c) => c,
        Parsed::Help(text) => {
            output::out(&text);
            return Ok(());
        }
    };
    api::set_invocation(argv);
    match cli.cmd {
        args::Cmd::Run(a) => run::run(a),
        args::Cmd::Machines(a) => info::machines(a),
        args::Cmd::Workloads => info::workloads(),
        args::Cmd::Features => info::features(),
        args::Cmd::Kernels => info::kernels(),
        args::Cmd::Bench(a) => bench::bench(a),
        args::Cmd::Compare(a) => compare::compare(a),
        args::Cmd::Report(a) => report::report(a),
        args::Cmd::Native(a) => native::native(a),
        args::Cmd::Calibrate(a) => calibrate::calibrate(a),
        args::Cmd::Validate(a) => validate::validate(a),
        args::Cmd::Record(a) => record::record(a),
        args::Cmd::Replay(a) => replay::replay(a),
        args::Cmd::Reproduce(a) => reproduce::reproduce(a),
    }
}

/// One line, whatever the error carried.
pub fn one_line(msg: &str) -> String {
    msg.lines().map(str::trim).collect::<Vec<_>>().join(" ")
}
