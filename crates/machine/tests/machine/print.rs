//! `wakesim machines` / `machines show` output.

use wakesim_machine::{describe, describe_all, list_line, preset};

#[test]
fn describe_prints_the_kernel_boot_log_format() {
    let m = preset("xeon-8269cy").unwrap();
    let s = describe(&m);
    for want in [
        "104 CPUs, 52 cores, 2 threads/core, 2 LLCs, 2 packages, 2 NUMA nodes",
        "arch x86, cost profile skx",
        "    LLC 0: 0-25,52-77\n",
        "CPU0 attaching sched-domain(s):\n",
        " domain-0: span=0,52 level=SMT\n",
        "  groups: 0:{ span=0 }, 52:{ span=52 }\n",
        "  domain-1: span=0-25,52-77 level=MC\n",
        "   groups: 0:{ span=0,52 cap=2048 }, 1:{ span=1,53 cap=2048 },",
        ", ... (26 groups)\n",
        "   domain-2: span=0-103 level=NUMA\n",
        "    groups: 0:{ span=0-25,52-77 cap=53248 }, 26:{ span=26-51,78-103 cap=53248 }\n",
        "imbalance_pct=110 busy_factor=16 cache_nice_tries=0 min_interval=2 max_interval=4",
        "flags: SD_BALANCE_NEWIDLE SD_BALANCE_EXEC SD_BALANCE_FORK SD_WAKE_AFFINE SD_SHARE_CPUCAPACITY SD_SHARE_LLC SD_PREFER_SIBLING\n",
        "CPU26 attaching sched-domain(s):\n",
        "node distances:",
    ] {
        assert!(s.contains(want), "missing {want:?} in:\n{s}");
    }
}

#[test]
fn describe_shows_cpu0_and_another_llc_but_not_every_cpu() {
    let m = preset("epyc-9754").unwrap();
    let s = describe(&m);
    assert!(
        s.contains("CPU0 attaching")
            && s.contains("CPU8 attaching")
            && s.contains("CPU128 attaching")
    );
    assert!(s.matches("attaching").count() <= 8);
    assert!(s.contains("... (16 groups)"));
    let all = describe_all(&preset("test-2x4").unwrap());
    assert_eq!(all.matches("attaching sched-domain(s)").count(), 16);
}

#[test]
fn list_line_has_name_cpus_shape_llc_and_levels() {
    let l = list_line(&preset("xeon-8269cy").unwrap());
    for want in ["xeon-8269cy", "104", "2x26x2", "52", "SMT-MC-NUMA", "skx"] {
        assert!(l.contains(want), "{l}");
    }
    let a = list_line(&preset("altra").unwrap());
    assert!(a.contains("1x80x1") && a.contains("CLS-PKG"), "{a}");
    assert!(!l.contains('\n'));
}
