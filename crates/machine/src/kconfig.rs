//! The running kernel's settings that sysfs does not show and the model needs:
//!
//! * `CONFIG_HZ` (the tick, and every interval the scheduler keeps in jiffies), from the build
//!   configuration: `/proc/config.gz` (CONFIG_IKCONFIG_PROC), else `/boot/config-<release>` as
//!   distributions install it;
//! * `sysctl_sched_base_slice`, from the scheduler's debugfs dump
//!   (`/sys/kernel/debug/sched/debug`, root with debugfs mounted), else from this process's own
//!   `se.slice` in `/proc/self/sched` (a task without a custom slice has the base slice; the
//!   file exists wherever `CONFIG_SCHED_DEBUG` does, no root needed): kernels from v6.15 (and
//!   the stable kernels that took commit 2ae891b82695) use 0.70 ms normalized where the model's
//!   default is 0.75.
//!
//! Not readable: `None`, and the model keeps its default.

use std::io::Read;

/// CONFIG_HZ's Kconfig choices (kernel/Kconfig.hz).
pub const HZ_CHOICES: [u64; 4] = [100, 250, 300, 1000];

/// `CONFIG_HZ` of the running kernel, if its configuration is readable.
pub fn running_kernel_hz() -> Option<u64> {
    config_value(&running_kernel_config()?, "CONFIG_HZ")?
        .parse()
        .ok()
        .filter(|hz| HZ_CHOICES.contains(hz))
}

fn running_kernel_config() -> Option<String> {
    if let Ok(f) = std::fs::File::open("/proc/config.gz") {
        let mut s = String::new();
        if flate2::read::GzDecoder::new(f)
            .read_to_string(&mut s)
            .is_ok()
        {
            return Some(s);
        }
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    std::fs::read_to_string(format!("/boot/config-{}", release.trim())).ok()
}

/// `sysctl_sched_base_slice` of the running kernel in ns: from its debugfs dump if readable,
/// else this process's `se.slice`.
pub fn running_base_slice_ns() -> Option<u64> {
    std::fs::read_to_string("/sys/kernel/debug/sched/debug")
        .ok()
        .and_then(|d| base_slice_ns(&d))
        .or_else(|| own_slice_ns(&std::fs::read_to_string("/proc/self/sched").ok()?))
}

/// `se.slice                                     :              1400000` (ns) in a
/// `/proc/<pid>/sched` dump (EEVDF kernels; CFS ones have no such line).
pub fn own_slice_ns(dump: &str) -> Option<u64> {
    let line = dump.lines().find(|l| l.trim_start().starts_with("se.slice"))?;
    let ns: u64 = line.split(':').nth(1)?.trim().parse().ok()?;
    (ns > 0 && ns < 1_000_000_000).then_some(ns)
}

/// `  .sysctl_sched_base_slice                 : 1.400000` (ms) in a `sched/debug` dump.
pub fn base_slice_ns(dump: &str) -> Option<u64> {
    let line = dump
        .lines()
        .find(|l| l.trim_start().starts_with(".sysctl_sched_base_slice"))?;
    let ms: f64 = line.split(':').nth(1)?.trim().parse().ok()?;
    (ms > 0.0 && ms < 1000.0).then(|| (ms * 1e6).round() as u64)
}

/// The value of `KEY=value` in a kernel `.config` text.
pub fn config_value<'a>(config: &'a str, key: &str) -> Option<&'a str> {
    config
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_hz_is_found_and_not_confused_with_its_prefixes() {
        let cfg =
            "CONFIG_HZ_250=y\n# CONFIG_HZ_1000 is not set\nCONFIG_HZ=250\nCONFIG_HZ_PERIODIC=n\n";
        assert_eq!(config_value(cfg, "CONFIG_HZ"), Some("250"));
        assert_eq!(config_value(cfg, "CONFIG_NO_HZ"), None);
    }

    #[test]
    fn the_base_slice_is_read_from_the_sched_debug_dump_in_ms() {
        let dump = "sysctl_sched\n  .sysctl_sched_base_slice                 : 1.400000\n  .sysctl_sched_features : 99674079\n";
        assert_eq!(base_slice_ns(dump), Some(1_400_000));
        assert_eq!(base_slice_ns("cpu#0\n"), None);
    }

    #[test]
    fn the_base_slice_falls_back_to_the_own_tasks_slice_in_proc_sched() {
        let dump = "cat (32662, #threads: 1)\nse.sum_exec_runtime                          :             0.000000\nse.slice                                     :              1400000\n";
        assert_eq!(own_slice_ns(dump), Some(1_400_000));
        assert_eq!(own_slice_ns("se.vruntime : 1.0\n"), None);
    }
}
