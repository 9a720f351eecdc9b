//! Print a built-in cost profile as a costs file: `cargo run -p wakesim-costs --example
//! dump_profile -- zen3` (a starting point for a `--costs FILE`).

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "generic".into());
    match wakesim_costs::profile_for(&name) {
        Ok(p) => print!("{}", wakesim_costs::to_toml(&p)),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
