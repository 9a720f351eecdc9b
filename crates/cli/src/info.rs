//! `wakesim machines`, `wakesim workloads`, `wakesim features`.

use crate::args::{MachinesArgs, MachinesCmd};
use crate::UserError;
use wakesim_model::Features;

pub fn machines(a: MachinesArgs) -> Result<(), UserError> {
    match a.what {
        None => {
            for name in wakesim_machine::preset_names() {
                let m = wakesim_machine::preset(name)?;
                println!("{}", wakesim_machine::list_line(&m));
            }
            println!("host: this machine, read from /sys/devices/system/cpu");
            println!("FILE.toml: any machine described in the TOML format (crates/machine/FORMAT.md)");
        }
        Some(MachinesCmd::Show { name, all }) => {
            let m = crate::run::resolve_machine(&name)?;
            if all {
                print!("{}", wakesim_machine::describe_all(&m));
            } else {
                print!("{}", wakesim_machine::describe(&m));
            }
        }
    }
    Ok(())
}

pub fn workloads() -> Result<(), UserError> {
    for (name, flags) in wakesim_workloads::known_tools() {
        println!("{name}");
        for line in flags.lines() {
            println!("    {line}");
        }
    }
    println!("--tasks FILE");
    println!("    a task-graph file (crates/workloads/FORMAT.md)");
    Ok(())
}

pub fn features() -> Result<(), UserError> {
    let d = Features::default();
    let w = Features::ALL.iter().map(|f| f.0.len()).max().unwrap_or(0);
    for (name, doc) in Features::ALL {
        let on = if d.get(name) == Some(true) { "on " } else { "off" };
        println!("{name:<w$}  {on}  {}", doc.trim());
    }
    Ok(())
}
