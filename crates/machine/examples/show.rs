//! Prints a machine the way `wakesim machines show` does.
//! `cargo run -p wakesim-machine --example show -- xeon-8269cy` (or `host`, or a .toml path;
//! no argument: the one-line list of every preset).
fn main() {
    let arg = std::env::args().nth(1);
    match arg.as_deref() {
        None => {
            println!("{}", wakesim_machine::list_header());
            for name in wakesim_machine::preset_names() {
                match wakesim_machine::preset(name) {
                    Ok(m) => println!("{}", wakesim_machine::list_line(&m)),
                    Err(e) => eprintln!("{name}: {e}"),
                }
            }
        }
        Some(name) => match wakesim_machine::lookup(name) {
            Ok(m) => print!("{}", wakesim_machine::describe(&m)),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        },
    }
}
