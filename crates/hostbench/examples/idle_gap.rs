//! Idle-vCPU wake latency, and how long the waker's `futex_wake` call takes, against how long
//! the target CPU had been idle: `cargo run --release -p wakesim-hostbench --example idle_gap`.
//! On a VM the cost of waking a halted vCPU can depend on the host's halt polling.

use wakesim_hostbench::{calib, sys, Summary};

fn main() {
    let cpus = sys::allowed_cpus();
    if cpus.len() < 2 {
        eprintln!("needs two usable CPUs");
        std::process::exit(1);
    }
    let fig = |busy, gap_us: u64, rounds| {
        let reps = calib::cross_cpu_wake_reps(cpus[0], cpus[1], busy, gap_us * 1000, rounds, 5).unwrap();
        let lat = Summary::of(&reps.iter().map(|r| r.latency).collect::<Vec<_>>()).unwrap();
        let call = Summary::of(&reps.iter().map(|r| r.call).collect::<Vec<_>>()).unwrap();
        format!("latency {:>7.0} ns [{:.0}-{:.0}], waker's call {:>6.0} ns", lat.median, lat.min, lat.max, call.median)
    };
    for gap_us in [0u64, 20, 100, 300, 1000, 3000] {
        let rounds = (200_000 / (gap_us + 20)).clamp(50, 5000);
        println!("gap {gap_us:>5} us: idle target {}   busy target {}", fig(false, gap_us, rounds), fig(true, gap_us, rounds));
    }
}
