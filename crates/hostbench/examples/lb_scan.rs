//! `cargo run --release -p wakesim-hostbench --example lb_scan [--strided] [A B]`: CPU A
//! (default 0) writes the runqueue lines a balance pass reads, CPU B (default 1) walks them as
//! `update_sg_lb_stats()` does (`lb_scan` module doc), over spans of 24 and 256 CPUs, busy and
//! idle, with 20 and 40 rounds of work per CPU (about 20–70 ns, around the model's
//! `lb_stats_per_cpu`): how many line transfers' time one CPU of the walk costs, per repetition,
//! and their median over every repetition whose line was a transfer between cores (SMT siblings
//! share their caches: such a repetition measures nothing). The runqueues lie in a shuffled
//! order unless `--strided` (a constant stride, which a stride prefetcher may follow).
fn main() {
    let strided = std::env::args().any(|a| a == "--strided");
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let (a, b) = (args.first().copied().unwrap_or(0), args.get(1).copied().unwrap_or(1));
    let mut pooled = Vec::new();
    for pad in [20u64, 40] {
        for idle in [false, true] {
            for n in [24, 256] {
                let reps = match wakesim_hostbench::lb_scan::lb_scan_ns(a, b, n, idle, pad, !strided, 9) {
                    Ok(reps) => reps,
                    Err(e) => {
                        eprintln!("lb_scan: {e}");
                        std::process::exit(1);
                    }
                };
                let eq: Vec<String> = reps.iter().map(|r| format!("{:.2}", r.line_equivalents)).collect();
                pooled.extend(reps.iter().filter(|r| r.line > 25.0).map(|r| r.line_equivalents));
                let r = reps[reps.len() / 2];
                println!(
                    "work {pad:>2}: {n:>3} {} CPUs ({} lines each), {:.0} ns per CPU alone; line {:.0} ns; line transfers per CPU: {}",
                    if idle { "idle" } else { "busy" },
                    r.lines_per_cpu,
                    r.local / n as f64,
                    r.line,
                    eq.join(" ")
                );
            }
        }
    }
    match wakesim_hostbench::Summary::of(&pooled) {
        Some(s) => println!(
            "line transfers per CPU of the walk: median {:.2} [{:.2}-{:.2}] over {} repetitions between cores",
            s.median, s.min, s.max, s.n
        ),
        None => println!("no repetition ran between two cores (the vCPUs were SMT siblings throughout)"),
    }
}
