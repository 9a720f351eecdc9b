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
                crate::outln!("{}", wakesim_machine::list_line(&m));
            }
            crate::outln!("host: this machine, read from /sys/devices/system/cpu");
            crate::outln!("FILE.toml: any machine described in the TOML format (crates/machine/FORMAT.md)");
        }
        Some(MachinesCmd::Show { name, all }) => {
            let m = crate::run::resolve_machine(&name)?;
            if all {
                crate::outp!("{}", wakesim_machine::describe_all(&m));
            } else {
                crate::outp!("{}", wakesim_machine::describe(&m));
            }
        }
    }
    Ok(())
}

pub fn workloads() -> Result<(), UserError> {
    for (name, flags) in wakesim_workloads::known_tools() {
        crate::outln!("{name}");
        for line in flags.lines() {
            crate::outln!("    {line}");
        }
    }
    crate::outln!("--tasks FILE");
    crate::outln!("    a task-graph file (crates/workloads/FORMAT.md)");
    Ok(())
}

/// The feature's kind (`SCHED_FEAT`, `version`, `mechanism`, `patch`), then one column per
/// kernel profile: `+` on, `-` off; a patch's description ends with its lore link.
pub fn features() -> Result<(), UserError> {
    let kernels: Vec<(&str, Features)> =
        KERNELS.iter().map(|k| (k.name, Features::for_kernel(k.name).expect("built-in profile"))).collect();
    let w = Features::ALL.iter().map(|f| f.0.len()).max().unwrap_or(0);
    let kw = Features::KINDS.iter().map(|(_, k)| k.label().len()).max().unwrap_or(0);
    crate::outp!("{:<w$} {:<kw$}", "feature", "kind");
    for (k, _) in &kernels {
        crate::outp!(" {k:>6}");
    }
    crate::outln!("  description");
    for (name, doc) in Features::ALL {
        let kind = Features::kind(name).expect("every feature has a kind");
        crate::outp!("{name:<w$} {:<kw$}", kind.label());
        for (_, f) in &kernels {
            crate::outp!(" {:>6}", if f.get(name) == Some(true) { "+" } else { "-" });
        }
        match kind.link() {
            Some(url) => crate::outln!("  {} ({url})", doc.trim()),
            None => crate::outln!("  {}", doc.trim()),
        }
    }
    Ok(())
}

pub fn kernels() -> Result<(), UserError> {
    // The profiles are written as changes to the v6.6 base.
    let base = Features::base();
    let w = KERNELS.iter().map(|k| k.name.len()).max().unwrap_or(0);
    for k in KERNELS {
        crate::outln!("{:<w$}  {}", k.name, k.summary);
        let f = Features::for_kernel(k.name).expect("built-in profile");
        let diff: Vec<String> = Features::ALL
            .iter()
            .filter(|(n, _)| f.get(n) != base.get(n))
            .map(|(n, _)| format!("{}{n}", if f.get(n) == Some(true) { "+" } else { "-" }))
            .collect();
        if !diff.is_empty() {
            crate::outln!("{:w$}  vs v6.6: {}", "", diff.join(","));
        }
    }
    Ok(())
}
