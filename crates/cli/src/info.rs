//! `wakesim machines`, `wakesim workloads`, `wakesim features`.

use crate::args::{MachinesArgs, MachinesCmd};
use crate::UserError;
use wakesim_model::features::KERNELS;
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

/// One column per kernel profile: `+` on, `-` off.
pub fn features() -> Result<(), UserError> {
    let kernels: Vec<(&str, Features)> =
        KERNELS.iter().map(|k| (k.name, Features::for_kernel(k.name).expect("built-in profile"))).collect();
    let w = Features::ALL.iter().map(|f| f.0.len()).max().unwrap_or(0);
    print!("{:<w$}", "feature");
    for (k, _) in &kernels {
        print!(" {k:>6}");
    }
    println!("  description");
    for (name, doc) in Features::ALL {
        print!("{name:<w$}");
        for (_, f) in &kernels {
            print!(" {:>6}", if f.get(name) == Some(true) { "+" } else { "-" });
        }
        println!("  {}", doc.trim());
    }
    Ok(())
}

pub fn kernels() -> Result<(), UserError> {
    let base = Features::default();
    for k in KERNELS {
        println!("{:<6}  {}", k.name, k.summary);
        let f = Features::for_kernel(k.name).expect("built-in profile");
        let diff: Vec<String> = Features::ALL
            .iter()
            .filter(|(n, _)| f.get(n) != base.get(n))
            .map(|(n, _)| format!("{}{n}", if f.get(n) == Some(true) { "+" } else { "-" }))
            .collect();
        if !diff.is_empty() {
            println!("        vs v6.6: {}", diff.join(","));
        }
    }
    Ok(())
}
