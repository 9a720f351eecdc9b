//! The `taskset` prefix (util-linux schedutils/taskset.c): `taskset -c LIST cmd…`,
//! `taskset --cpu-list LIST cmd…`, or `taskset MASK cmd…` with a hexadecimal mask.

use crate::WorkloadError;
use wakesim_machine::{CpuSet, MAX_CPUS};

const TOOL: &str = "taskset";

/// Strips a leading `taskset …` and returns the CPU set it pins to, and the wrapped command.
pub(super) fn strip(args: &[String]) -> Result<(Option<CpuSet>, &[String]), WorkloadError> {
    let Some(first) = args.first() else {
        return Ok((None, args));
    };
    if super::basename(first) != "taskset" {
        return Ok((None, args));
    }
    let mut i = 1;
    let mut list_mode = false;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-c" | "--cpu-list" => list_mode = true,
            "-a" | "--all-tasks" => {}
            "-p" | "--pid" => {
                return Err(WorkloadError::arg(
                    TOOL,
                    "'-p' changes a running process; give a command to run",
                ))
            }
            s if s.starts_with('-') => {
                return Err(WorkloadError::arg(
                    TOOL,
                    format!("unknown option '{s}' (known: -c/--cpu-list)"),
                ))
            }
            _ => break,
        }
        i += 1;
    }
    let spec = args
        .get(i)
        .ok_or_else(|| WorkloadError::arg(TOOL, "missing CPU list or mask"))?;
    let set = if list_mode {
        crate::cpulist::parse_cpu_list(spec).map_err(|e| WorkloadError::arg(TOOL, e))?
    } else {
        parse_mask(spec)?
    };
    if set.is_empty() {
        return Err(WorkloadError::arg(TOOL, format!("empty CPU set '{spec}'")));
    }
    let rest = &args[i + 1..];
    if rest.is_empty() {
        return Err(WorkloadError::arg(
            TOOL,
            "missing command after the CPU list",
        ));
    }
    Ok((Some(set), rest))
}

/// Hexadecimal affinity mask, lowest bit = CPU 0 (`0x3`, `ff`, `0x00000001,00000000`).
fn parse_mask(s: &str) -> Result<CpuSet, WorkloadError> {
    let bad = || WorkloadError::arg(TOOL, format!("bad CPU mask '{s}' (use -c for a CPU list)"));
    let hex: String = s
        .trim_start_matches("0x")
        .trim_start_matches("0X")
        .chars()
        .filter(|&c| c != ',')
        .collect();
    if hex.is_empty() {
        return Err(bad());
    }
    let mut set = CpuSet::new();
    for (k, c) in hex.chars().rev().enumerate() {
        let d = c.to_digit(16).ok_or_else(bad)? as usize;
        for b in 0..4 {
            if d & (1 << b) != 0 {
                let cpu = k * 4 + b;
                if cpu >= MAX_CPUS {
                    return Err(bad());
                }
                set.set(cpu);
            }
        }
    }
    Ok(set)
}
