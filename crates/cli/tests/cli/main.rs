//! The `wakesim` command line, run as a user runs it: each module drives the built binary
//! for one subcommand or contract, and `golden_corpus` checks that outputs stay byte-identical.

mod bad_input;
mod calibrate_noise;
mod cgroup;
mod common;
mod compare;
mod golden_corpus;
mod governor;
mod host;
mod info;
mod record;
mod replay;
mod report_html;
mod reproduce;
mod run;
mod trace;
