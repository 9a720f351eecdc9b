//! `cargo run --release -p wakesim-hostbench --example lb_scan [--strided] [--idle-scan] [A B]`:
//! CPU A (default 0) writes the runqueue lines a balance pass reads, CPU B (default 1) walks them
//! as `update_sg_lb_stats()` does (`lb_scan` module doc), over spans of 24 and 256 CPUs, busy
//! and idle, with 20 and 40 rounds of work per CPU: how many line transfers' time one CPU of the
//! walk costs, per repetition, and their median over every repetition whose line took 25 ns or
//! more (shorter ones ran on SMT siblings, which share their caches: such a repetition measures
//! nothing). The runqueues lie in a shuffled order unless `--strided` (a constant stride, which
//! a stride prefetcher may follow). `--idle-scan`: `select_idle_cpu()`'s probes over 16 and 48
//! busy CPUs instead, in a tight loop and in the kernel's shape (`Walk::IdleScanKernel`), with a
//! median for each. `wakesim calibrate` runs the balance walk and the kernel-shaped scan.
use wakesim_hostbench::lb_scan::{idle_scan_line_share, median_share, walk_line_share, Scan};

fn main() {
    let flag = |f: &str| std::env::args().any(|a| a == f);
    let (strided, scan) = (flag("--strided"), flag("--idle-scan"));
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let (a, b) = (args.first().copied().unwrap_or(0), args.get(1).copied().unwrap_or(1));
    let scans = if scan { idle_scan_line_share(a, b, strided, 9) } else { walk_line_share(a, b, strided, 9) };
    let scans = scans.unwrap_or_else(|e| {
        eprintln!("lb_scan: {e}");
        std::process::exit(1);
    });
    for conf in scans.chunks(9) {
        let r = conf[conf.len() / 2];
        let s = r.setup;
        let eq: Vec<String> = conf.iter().map(|r| format!("{:.2}", r.line_equivalents)).collect();
        println!(
            "{:?}, work {:>2}: {:>3} {} CPUs ({} lines each), {:.0} ns per CPU alone; line {:.0} ns; line transfers per CPU: {}",
            s.walk,
            s.pad,
            s.cpus,
            if s.idle { "idle" } else { "busy" },
            s.lines_per_cpu(),
            r.local / s.cpus as f64,
            r.line,
            eq.join(" ")
        );
    }
    let mut walks: Vec<_> = scans.iter().map(|s| s.setup.walk).collect();
    walks.dedup();
    for w in walks {
        let of: Vec<Scan> = scans.iter().filter(|s| s.setup.walk == w).copied().collect();
        match median_share(&of, 25.0) {
            Some(s) => println!(
                "{w:?}: line transfers per CPU: median {:.2} [{:.2}-{:.2}] over {} repetitions between cores",
                s.median, s.min, s.max, s.n
            ),
            None => println!("{w:?}: no repetition ran between two cores (the vCPUs were SMT siblings throughout)"),
        }
    }
}
