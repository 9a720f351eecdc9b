//! `cargo run --release -p wakesim-hostbench --example buffer_turns [A B]`: a 16 KiB buffer that
//! CPUs A and B (default 0 and 1) take turns writing and reading, as a loopback TCP sender reuses
//! the page frag its receiver has just read (`reuse` module doc), each turn beside a line
//! transfer between them: the line misses each copy keeps in flight.
fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let (a, b) = (args.first().copied().unwrap_or(0), args.get(1).copied().unwrap_or(1));
    match wakesim_hostbench::reuse::buffer_turns_ns(a, b, 5) {
        Ok(reps) => {
            for t in reps {
                let (w, r) = (t.write_overlap, t.read_overlap);
                let f = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.1}"));
                println!(
                    "line {:.0} ns; write {:.0} (local {:.0}) ns, read {:.0} (local {:.0}) ns; in flight: write {}, read {}",
                    t.line, t.write, t.local_write, t.read, t.local_read, f(w), f(r)
                );
            }
        }
        Err(e) => eprintln!("buffer_turns: {e}"),
    }
}
