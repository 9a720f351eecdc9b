//! What a unix-socket stream's cross-CPU work costs each side: a sender and a receiver thread
//! stream 100-byte messages, first both on one CPU, then on two, each reading its own thread CPU
//! time per message: `cargo run --release -p wakesim-hostbench --example stream_split`.
//! Compare with the model's `wakesim run --machine host -- hackbench -g 1 -f 1 -l 200000`
//! pinned (`taskset -c 0`) and not (docs/accuracy.md, "What is still open").

fn main() {
    let cpus = wakesim_hostbench::sys::allowed_cpus();
    if cpus.len() < 2 {
        eprintln!("needs two usable CPUs");
        std::process::exit(1);
    }
    let (a, b) = (cpus[0], cpus[1]);
    for (s, r) in [(a, a), (a, b), (b, a)] {
        let v = match wakesim_hostbench::stream::stream_split_across_ns(s, r, 200_000, 5) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("stream {s} -> {r}: {e}");
                std::process::exit(1);
            }
        };
        let send: Vec<f64> = v.iter().map(|x| x.sender_ns).collect();
        let recv: Vec<f64> = v.iter().map(|x| x.receiver_ns).collect();
        let (ss, rs) = (wakesim_hostbench::Summary::of(&send).unwrap(), wakesim_hostbench::Summary::of(&recv).unwrap());
        println!(
            "CPU {s} -> CPU {r}: sender {:>6.0} ns/msg [{:.0}-{:.0}]   receiver {:>6.0} ns/msg [{:.0}-{:.0}]",
            ss.median, ss.min, ss.max, rs.median, rs.min, rs.max
        );
    }
}
