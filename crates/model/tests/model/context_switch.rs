//! The mm switch follows the CPU's active mm, not the previous task (`context_switch()`):
//! switching to idle keeps the last address space loaded (`enter_lazy_tlb()`), so a process
//! that sleeps and is woken on a CPU that only idled meanwhile pays no page-table switch;
//! two processes taking turns on one CPU pay it at every switch.
use crate::common::*;
use wakesim_engine::Time;
use wakesim_workloads::Workload;

const ROUNDS: u64 = 1_000;

fn ping_pong(a: usize, b: usize) -> Workload {
    pinned_ping_pong(a, b, ROUNDS)
}

fn elapsed(wl: &Workload, mm_switch: u64) -> Time {
    let r = sim_with("test-2x4", wl, 1, |cfg| cfg.costs.context_switch_mm = mm_switch).run();
    assert!(!r.outcome.capped, "the ping-pong finishes");
    r.outcome.end_time
}

#[test]
fn processes_on_one_cpu_pay_the_mm_switch_at_every_switch() {
    let wl = ping_pong(0, 0);
    let per_rt = (elapsed(&wl, 1_000) - elapsed(&wl, 0)) as f64 / ROUNDS as f64;
    // Two switches per round trip, each between the two address spaces.
    assert!((per_rt - 2_000.0).abs() < 200.0, "{per_rt:.0} ns more per round trip, expected 2000");
}

#[test]
fn a_process_woken_on_a_cpu_that_only_idled_keeps_its_page_tables() {
    let wl = ping_pong(0, 2);
    let per_rt = elapsed(&wl, 1_000).abs_diff(elapsed(&wl, 0)) as f64 / ROUNDS as f64;
    // Each CPU runs one process and idles between its runs: only its first switch loads an mm.
    assert!(per_rt < 100.0, "{per_rt:.0} ns more per round trip from a 1 µs mm switch");
}
