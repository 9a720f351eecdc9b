//! Idle-vCPU wake latency against how long the target CPU had been idle:
//! `cargo run --release -p wakesim-hostbench --example idle_gap`.
//! On a VM the cost of waking a halted vCPU can depend on the host's halt polling.

fn main() {
    let cpus = wakesim_hostbench::sys::allowed_cpus();
    if cpus.len() < 2 {
        eprintln!("needs two usable CPUs");
        std::process::exit(1);
    }
    for gap_us in [0u64, 20, 100, 300, 1000, 3000] {
        let rounds = (200_000 / (gap_us + 20)).clamp(50, 5000);
        let idle = wakesim_hostbench::calib::cross_cpu_wake_after_ns(cpus[0], cpus[1], false, gap_us * 1000, rounds, 5).unwrap();
        let busy = wakesim_hostbench::calib::cross_cpu_wake_after_ns(cpus[0], cpus[1], true, gap_us * 1000, rounds, 5).unwrap();
        let (i, b) = (wakesim_hostbench::Summary::of(&idle).unwrap(), wakesim_hostbench::Summary::of(&busy).unwrap());
        println!("gap {gap_us:>5} us: idle target {:>8.0} ns [{:.0}-{:.0}]   busy target {:>8.0} ns [{:.0}-{:.0}]", i.median, i.min, i.max, b.median, b.min, b.max);
    }
}
