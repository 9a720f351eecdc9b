//! Native load generators: run a [`Workload`] — the very task graph the simulator runs — on this
//! machine's kernel, and hand its reporter an [`Outcome`] measured with the monotonic clock, so
//! `wakesim native -- hackbench -g 2` prints what `wakesim run -- hackbench -g 2` prints.
//!
//! Layout, as the real tools have it: tasks that share an address space (`TaskSpec::mm`) are
//! threads of one process; each other address space is a forked process. Everything runs in a
//! "runner" child in its own process group, so the caller can end the whole run at the
//! workload's duration (`schbench -r`) with one `SIGKILL`; marks and exit times live in shared
//! memory ([`shm`]) and survive that.
//!
//! Not reproduced: `start_cpu` (the fork placement hint; the kernel places tasks itself),
//! task groups (`group`: cgroups are not created), per-task SMT throughput (the hardware decides),
//! and `CallFunc` (kernel-only; such workloads are refused).

mod chan;
mod shm;
mod task;

use std::collections::BTreeMap;

use crate::sys;
use shm::Shm;
use wakesim_workloads::{Op, Outcome, Workload};

/// Errors of a native run, each one line.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    #[error("workload '{0}' cannot run natively: {1}")]
    Unsupported(String, String),
    #[error("native run: {0}")]
    Os(String),
    #[error("native run failed: {0}")]
    Task(String),
}

/// How to run.
#[derive(Clone, Copy, Debug)]
pub struct NativeOptions {
    /// End the run after this many ns (the workload's own duration, if shorter, wins).
    pub cap_ns: u64,
    /// Seed of the tasks' random draws (compute and sleep lengths).
    pub seed: u64,
}

/// A finished native run.
#[derive(Debug)]
pub struct NativeRun {
    pub outcome: Outcome,
    /// Wall time from the origin to the end of the run, seconds.
    pub wall_seconds: f64,
    /// Context switches of the run's tasks (and its runner process, which only forks and
    /// reaps): voluntary (blocked) and involuntary (preempted), as `getrusage(2)` counts them.
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
}

/// Check that every op of `w` has a native counterpart.
pub fn check(w: &Workload) -> Result<(), NativeError> {
    let kernel_only = w.tasks.iter().flat_map(|t| &t.program).any(|op| matches!(op, Op::CallFunc { .. }));
    if kernel_only {
        return Err(NativeError::Unsupported(w.name.clone(), "it calls smp_call_function_single (kernel-only)".into()));
    }
    Ok(())
}

/// Run `w` on this machine. Blocks until every task has exited or the cap has passed.
///
/// Forks: call it from a process that holds no lock another thread could need in the child (the
/// CLI is single-threaded; tests call it from one test thread).
pub fn run(w: &Workload, o: &NativeOptions) -> Result<NativeRun, NativeError> {
    check(w)?;
    let os = |what: &str, e: std::io::Error| NativeError::Os(format!("{what}: {e}"));
    let shm = Shm::new(w).map_err(|e| os("shared memory", e))?;
    let fds = chan::open_all(w).map_err(|e| os("opening channels", e))?;
    let cap = w.duration.map_or(o.cap_ns, |d| d.min(o.cap_ns));
    let t0 = sys::now_ns();
    shm.set_origin(t0);
    let sw0 = sys::children_switches();
    let runner = sys::fork().map_err(|e| os("fork", e))?;
    if runner == 0 {
        sys::new_process_group();
        runner_main(w, &shm, &fds, o.seed);
    }
    close_all(&fds); // the runner holds its own copies; EOF then depends only on the tasks
    let exited = sys::wait_exit_timeout(runner, cap).map_err(|e| os("waiting for the run", e))?;
    let end = shm.now();
    // A timed run (or one past its cap) is ended here: its switches are read from /proc first.
    let killed = (!exited).then(|| {
        let sw = sys::group_switches(runner);
        sys::kill_group(runner);
        sw
    });
    let _ = sys::wait(runner);
    let sw1 = match killed {
        Some(sw) => (sw0.0 + sw.0, sw0.1 + sw.1),
        None => sys::children_switches(),
    };
    if let Some(e) = shm.error() {
        return Err(NativeError::Task(e));
    }
    if shm.marks_overflowed() {
        return Err(NativeError::Task("more marks than the native log holds; shorten the run".into()));
    }
    let outcome = Outcome { end_time: end, capped: !exited, marks: shm.marks(), task_exit: shm.exits() };
    Ok(NativeRun { outcome, wall_seconds: end as f64 / 1e9, voluntary_switches: sw1.0 - sw0.0, involuntary_switches: sw1.1 - sw0.1 })
}

fn close_all(fds: &[chan::Fds]) {
    for f in fds {
        // SAFETY: closing fds this function's caller opened and no longer uses.
        unsafe {
            libc::close(f.rx);
            libc::close(f.tx);
        }
    }
}

/// The runner: fork one process per address space other than task 0's, run task 0's address
/// space itself, reap, exit. Never returns.
fn runner_main(w: &Workload, shm: &Shm, fds: &[chan::Fds], seed: u64) -> ! {
    let mut by_mm: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (i, t) in w.tasks.iter().enumerate() {
        by_mm.entry(t.mm).or_default().push(i as u32);
    }
    let shared = by_mm.len() > 1;
    let main_mm = w.tasks.first().map_or(0, |t| t.mm);
    let mut children = Vec::new();
    // Fork while this process is still single-threaded.
    for (&mm, tasks) in &by_mm {
        if mm == main_mm {
            continue;
        }
        match sys::fork() {
            Ok(0) => {
                run_group(w, shm, fds, tasks, shared, seed);
                sys::exit_now(0);
            }
            Ok(pid) => children.push(pid),
            Err(e) => {
                shm.fail(&format!("fork: {e}"));
                sys::exit_now(1);
            }
        }
    }
    if let Some(tasks) = by_mm.get(&main_mm) {
        run_group(w, shm, fds, tasks, shared, seed);
    }
    for pid in children {
        let _ = sys::wait(pid);
    }
    sys::exit_now(0)
}

/// Run `tasks` as threads of this process: the first on the calling thread, the rest spawned.
fn run_group(w: &Workload, shm: &Shm, fds: &[chan::Fds], tasks: &[u32], shared: bool, seed: u64) {
    std::thread::scope(|s| {
        for &t in &tasks[1..] {
            let cx = task::Ctx { shm, fds, task: t, shared, seed };
            let spawned = std::thread::Builder::new()
                .name(format!("task{t}"))
                .spawn_scoped(s, move || task::run(&w.tasks[t as usize], &cx));
            if let Err(e) = spawned {
                shm.fail(&format!("spawning task {t}: {e}"));
            }
        }
        let cx = task::Ctx { shm, fds, task: tasks[0], shared, seed };
        task::run(&w.tasks[tasks[0] as usize], &cx);
    });
}
