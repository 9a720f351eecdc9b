//! `wakesim bench`: the engine's own benchmark. Two reference scenarios — the 104-CPU and the
//! 512-CPU machine saturated with pipe ping-pong pairs — report simulated events per second and
//! simulated time per wall second, plus peak memory. Numbers, not pass/fail: they go in docs/engine-speed.md.
//! They run without background activity unless `--noise` names a profile.

use crate::args::BenchArgs;
use crate::UserError;
use std::time::Instant;
use wakesim_engine::SEC;
use wakesim_model::{Config, Features, Sim};

/// (scenario name, machine, ping-pong pairs). Saturation = one pair per CPU (two tasks per
/// CPU, as sync wakeups stack each pair); `512x4096` is the memory reference: 4,096 tasks; `768`
/// is the largest preset.
const SCENARIOS: &[(&str, &str, u32)] =
    &[("104", "xeon-8269cy", 104), ("512", "epyc-9754", 512), ("512x4096", "epyc-9754", 2048), ("768", "epyc-9965", 768)];

/// The task graph: `pairs` independent pairs ping-ponging 4 bytes over two pipes, forever. Pair
/// `i` starts on CPU `i mod cpus`, both its tasks (sync wakeups then keep it there): the
/// saturated machine the scenarios measure, whatever fork placement would make of 2 x `pairs`
/// tasks created at once.
pub fn ping_pong_pairs(pairs: u32, cpus: usize) -> String {
    let mut s = format!(
        r#"name = "pipe-pairs"
[[channel]]
name = "a{{i}}"
count = {pairs}
[[channel]]
name = "b{{i}}"
count = {pairs}
"#
    );
    for i in 0..pairs {
        let cpu = i as usize % cpus;
        s += &format!(
            r#"[[task]]
name = "ping{i}"
start_cpu = {cpu}
program = ["loop forever {{", "send a{i} 4", "recv b{i} 4", "}}"]
[[task]]
name = "pong{i}"
start_cpu = {cpu}
program = ["loop forever {{", "recv a{i} 4", "send b{i} 4", "}}"]
"#
        );
    }
    s
}

fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub fn bench(a: BenchArgs) -> Result<(), UserError> {
    if !(a.seconds > 0.0 && a.seconds.is_finite()) {
        return Err(UserError(format!("--seconds must be positive, got {}", a.seconds)));
    }
    let chosen: Vec<_> = SCENARIOS.iter().filter(|s| a.scenario == "all" || a.scenario == s.0).collect();
    if chosen.is_empty() {
        return Err(UserError(format!("unknown scenario '{}' (known: 104, 512, 512x4096, 768, all)", a.scenario)));
    }
    let noise = wakesim_machine::NoiseProfile::lookup(&a.noise).map_err(UserError)?;
    crate::outln!("{:<9} {:<12} {:>6} {:>6} {:>12} {:>14} {:>16} {:>10}", "scenario", "machine", "cpus", "tasks", "events", "events/s", "sim-s/wall-s", "wall-s");
    for (name, machine, pairs) in chosen {
        let m = wakesim_machine::lookup(machine)?;
        let costs = wakesim_costs::profile_for(&m.cost_profile)?;
        let n = m.nr_cpus();
        let wl = wakesim_workloads::from_toml_str(&ping_pong_pairs(*pairs, n), "bench")?;
        let governor = m.cpuidle_governor;
        let cfg = Config { machine: m, costs, features: Features::base(), seed: 1, duration_cap: (a.seconds * SEC as f64) as u64, noise: noise.clone(), governor, task_groups: wakesim_model::TaskGroups::Root };
        let sim = Sim::new(cfg, &wl).map_err(UserError)?;
        let t0 = Instant::now();
        let r = sim.run();
        let wall = t0.elapsed().as_secs_f64();
        if std::env::var_os("WAKESIM_BENCH_DEBUG").is_some() {
            eprintln!("queue max {}", r.queue_max);
        }
        crate::outln!(
            "{:<9} {:<12} {:>6} {:>6} {:>12} {:>14.0} {:>16.4} {:>10.2}",
            name,
            machine,
            n,
            2 * pairs,
            r.events,
            r.events as f64 / wall,
            r.stats.sim_time_ns as f64 / 1e9 / wall,
            wall
        );
    }
    if let Some(kib) = peak_rss_kib() {
        crate::outln!("peak memory: {:.1} MiB", kib as f64 / 1024.0);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::ping_pong_pairs;

    #[test]
    fn each_pair_starts_on_its_own_cpu_wrapping_at_the_cpu_count() {
        let wl = wakesim_workloads::from_toml_str(&ping_pong_pairs(5, 4), "bench").unwrap();
        let starts: Vec<Option<u32>> = wl.tasks.iter().map(|t| t.start_cpu).collect();
        let want: Vec<Option<u32>> = [0, 0, 1, 1, 2, 2, 3, 3, 0, 0].into_iter().map(Some).collect();
        assert_eq!(starts, want);
        // ping i and pong i share channels a{i} and b{i}: a pair, not two strangers.
        assert_eq!((wl.tasks[2].name.as_str(), wl.tasks[3].name.as_str()), ("ping1", "pong1"));
    }
}
