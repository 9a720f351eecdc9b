//! `wakesim native -- CMD`: run a benchmark's task graph on this machine's kernel (real
//! processes, threads, pipes, sockets, futexes) and print the benchmark's own output, exactly as
//! `wakesim run -- CMD` prints the simulated one.

use crate::args::NativeArgs;
use crate::output::write_atomic;
use crate::UserError;
use serde::Serialize;
use wakesim_engine::SEC;
use wakesim_hostbench::native::{self, NativeOptions, NativeRun};
use wakesim_workloads::{BuildContext, Metric, Workload};

/// CPUs this process may use (`sched_getaffinity`): what `get_nprocs()`-based defaults see.
pub fn host_cpus() -> u32 {
    wakesim_hostbench::sys::allowed_cpus().len().max(1) as u32
}

/// Build the workload for `cmd` as `wakesim run --machine host` would.
pub fn workload(cmd: &[String], nr_cpus: u32) -> Result<Workload, UserError> {
    let ctx = BuildContext::machine(nr_cpus);
    let w = wakesim_workloads::from_command_line_with(cmd, &ctx)?;
    native::check(&w)?;
    Ok(w)
}

/// Run `w` natively with a cap of `duration_s` seconds.
pub fn run_workload(w: &Workload, duration_s: f64, seed: u64) -> Result<NativeRun, UserError> {
    let cap_ns = (duration_s * SEC as f64) as u64;
    Ok(native::run(w, &NativeOptions { cap_ns, seed })?)
}

#[derive(Serialize)]
struct NativeJson<'a> {
    wakesim_version: &'static str,
    workload: &'a str,
    command: &'a [String],
    host_cpus: u32,
    metric: Metric,
    capped: bool,
    output: &'a str,
    wall_seconds: f64,
}

pub fn native(a: NativeArgs) -> Result<(), UserError> {
    crate::run::check_duration(a.duration)?;
    if a.command.is_empty() {
        return Err(UserError("wakesim native needs a benchmark command after `--`, e.g. `wakesim native -- hackbench -g 2`".into()));
    }
    if let Some(p) = &a.json {
        crate::output::check_writable(p)?;
    }
    let cpus = host_cpus();
    let w = workload(&a.command, cpus)?;
    let r = run_workload(&w, a.duration, a.seed)?;
    let out = w.reporter.render(&r.outcome);
    crate::outp!("{out}");
    if !out.ends_with('\n') {
        crate::outln!();
    }
    crate::outln!();
    crate::outln!("--- wakesim native: ran on this machine's kernel ({cpus} CPUs usable), {:.3} s wall ---", r.wall_seconds);
    if let Some(path) = &a.json {
        let doc = NativeJson {
            wakesim_version: env!("CARGO_PKG_VERSION"),
            workload: &w.name,
            command: &a.command,
            host_cpus: cpus,
            metric: w.reporter.metric(&r.outcome),
            capped: r.outcome.capped,
            output: &out,
            wall_seconds: r.wall_seconds,
        };
        let text = serde_json::to_string_pretty(&doc).map_err(|e| UserError(format!("cannot serialise results: {e}")))?;
        write_atomic(path, &(text + "\n"))?;
    }
    Ok(())
}
