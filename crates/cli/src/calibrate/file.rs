//! What `wakesim calibrate` writes and prints: the profile file's header, each measured or
//! solved field's note as a comment on its line, and the table of measurements.

use std::collections::BTreeMap;

use wakesim_hostbench::sys::Interference;
use wakesim_hostbench::Summary;
use wakesim_machine::Machine;

/// One measured figure, or why it was skipped.
pub struct Measured {
    pub what: String,
    pub unit: &'static str,
    pub result: Result<Summary, String>,
}

pub fn header(m: &Machine, secs: f64, quick: bool, other: Option<Interference>, table: &[Measured]) -> String {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut s = format!(
        "# Written by `wakesim calibrate{}` in {secs:.1} s on {} ({} CPUs), kernel {}.\n# Fields without a `measured`/`solved` comment keep the built-in `host` profile's value.\n",
        if quick { " --quick" } else { "" },
        m.description,
        m.nr_cpus(),
        kernel.trim()
    );
    if let Some(x) = other {
        s += &format!(
            "# While measuring, other processes used {:.0} % of the machine and the hypervisor stole {:.0} % (above ~10 %, the figures include that interference).\n",
            x.other_pct, x.steal_pct
        );
    }
    for t in table {
        if let Err(why) = &t.result {
            s += &format!("# {}: {why}\n", t.what);
        }
    }
    s
}

/// Append each note as a comment to its key's line in the TOML `to_toml` wrote.
pub fn annotate(text: &str, notes: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut section = String::new();
    let mut state_name = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            section = t.trim_matches(|c| c == '[' || c == ']').to_string();
        }
        let key = t.split(" = ").next().unwrap_or("");
        if section == "idle_states" && key == "name" {
            state_name = t.split(" = ").nth(1).unwrap_or("").trim_matches('"').to_string();
        }
        let full = match section.as_str() {
            "" => key.to_string(),
            "idle_states" => format!("idle_states.{state_name}.{key}"),
            s => format!("{s}.{key}"),
        };
        out += line;
        if let Some(n) = notes.get(&full).filter(|_| t.contains(" = ")) {
            out += &format!("  # {n}");
        }
        out.push('\n');
    }
    out
}

pub fn print_table(table: &[Measured]) {
    crate::outln!("{:<50} {:>12} {:>25} {:>8}", "measurement", "median", "min – max", "spread");
    for t in table {
        match &t.result {
            Ok(s) => {
                // Seconds need more digits than ns.
                let p = if t.unit == "s" { 4 } else { 1 };
                crate::outln!(
                    "{:<50} {:>9.p$} {:<2} {:>25} {:>7.1}%",
                    t.what,
                    s.median,
                    t.unit,
                    format!("{:.p$} – {:.p$}", s.min, s.max),
                    s.spread_pct()
                )
            }
            Err(why) => crate::outln!("{:<50} {why}", t.what),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotate_puts_each_note_on_its_key_and_the_file_still_parses_to_the_same_profile() {
        let p = wakesim_costs::profile_for("host").unwrap();
        let mut notes = BTreeMap::new();
        notes.insert("syscall".to_string(), "measured A".to_string());
        notes.insert("ipi_delivery.llc".to_string(), "solved B".to_string());
        notes.insert("idle_states.HLT.exit_latency".to_string(), "measured C".to_string());
        let text = annotate(&wakesim_costs::to_toml(&p), &notes);
        let line = |needle: &str| text.lines().filter(|l| l.contains(needle)).collect::<Vec<_>>();
        assert_eq!(line("# measured A"), vec![format!("syscall = {}  # measured A", p.syscall)]);
        assert_eq!(line("# solved B"), vec![format!("llc = {}  # solved B", p.ipi_delivery.llc)]);
        assert_eq!(line("# measured C").len(), 1);
        assert!(line("# measured C")[0].starts_with("exit_latency = "));
        // The [line] table's llc is not the [ipi_delivery] one.
        assert_eq!(text.lines().filter(|l| l.starts_with("llc = ")).count(), 3);
        let back = wakesim_costs::from_toml_str(wakesim_costs::generic(), &text, "t.toml").unwrap();
        assert_eq!(back, p);
    }

}
