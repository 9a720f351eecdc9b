//! CPU list parsing shared by `taskset -c` and task files: the kernel list format (`0-3,8`)
//! plus util-linux's stride form `0-15:2` (lib/cpuset.c `cpulist_parse`).

use wakesim_machine::{CpuSet, MAX_CPUS};

/// Parses a CPU list; the error names the bad entry.
pub(crate) fn parse_cpu_list(s: &str) -> Result<CpuSet, String> {
    let mut set = CpuSet::new();
    for tok in s.split(',') {
        let part = match tok.split_once(':') {
            None => CpuSet::parse_list(tok)?,
            Some((range, stride)) => {
                let bad = || format!("bad CPU list entry '{}'", tok.trim());
                let stride: usize = stride.trim().parse().map_err(|_| bad())?;
                let (lo, hi) = range.split_once('-').ok_or_else(bad)?;
                let lo: usize = lo.trim().parse().map_err(|_| bad())?;
                let hi: usize = hi.trim().parse().map_err(|_| bad())?;
                if stride == 0 || lo > hi || hi >= MAX_CPUS {
                    return Err(bad());
                }
                CpuSet::from_cpus((lo..=hi).step_by(stride))
            }
        };
        set = set.or(&part);
    }
    Ok(set)
}
