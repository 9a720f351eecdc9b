//! The `wakesim` binary: the command line of [`wakesim::main_with`]; a user error is one line on
//! stderr (`wakesim: error: ...`) and exit code 2.

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if let Err(wakesim::UserError(msg)) = wakesim::main_with(&argv) {
        eprintln!("wakesim: error: {}", wakesim::one_line(&msg));
        std::process::exit(2);
    }
}
