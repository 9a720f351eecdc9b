//! `wakesim`: the command line. Parses arguments, resolves machines, cost profiles, features
//! and workloads, runs the model and prints what the benchmark would print, then statistics.
//!
//! Every user error ends here as one line on stderr (`wakesim: error: ...`) and exit code 2.

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
mod replay;
mod report;
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

fn main() {
    let cli = match args::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
                let _ = e.print();
                std::process::exit(0);
            }
            // clap's message is several lines: the problem (possibly continued on indented lines,
            // e.g. the names of missing arguments), then usage and hints. Keep the problem.
            let text = e.to_string();
            let problem: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .map(str::trim)
                .collect();
            let msg = problem.join(" ");
            fail(msg.trim_start_matches("error: "));
        }
    };
    let result = match cli.cmd {
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
        args::Cmd::Replay(a) => replay::replay(a),
    };
    if let Err(UserError(msg)) = result {
        fail(&msg);
    }
}

fn fail(msg: &str) -> ! {
    // One line, whatever the error carried.
    let one = msg.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    eprintln!("wakesim: error: {one}");
    std::process::exit(2);
}
