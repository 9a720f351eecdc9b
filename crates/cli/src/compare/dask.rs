//! `compare --dask ADDRESS`: the pending runs of an experiment as tasks on a Dask cluster.
//!
//! Dask is Python's, so the command line hands the work to the Python package's runner
//! (`python -m wakesim.dask_compare`, in `python/wakesim/`), which connects to the scheduler
//! (or starts a LocalCluster for `local`), submits one task per pending run — each worker runs
//! the simulator in-process through the package and saves the run into `--out DIR` exactly as
//! `compare` saves it — shows Dask's progress bar, and waits. Dask retries a task whose worker
//! died; a run saved twice is the same bytes written atomically, so nothing is lost or
//! duplicated. `compare` then reads the runs back from the directory, as a resumed compare does.

use crate::UserError;
use std::path::Path;
use std::process::{Command, Stdio};

/// The interpreter with the `wakesim` package: `$WAKESIM_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("WAKESIM_PYTHON").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "python3".into())
}

/// Runs the pending runs of the experiment `argv` (a whole `wakesim compare …` command line,
/// whose `--out` is `out`) on the cluster at `address`.
pub fn run_on_cluster(address: &str, argv: &[String], out: &Path) -> Result<(), UserError> {
    let py = python();
    // The runner gets the compare arguments without the program and subcommand names. Its
    // progress bar goes to our stderr as it runs; an error it can name it writes to a file for
    // us, so the user still sees one error line.
    let args: Vec<&String> = argv.iter().skip(2).collect();
    let errfile = out.join(".dask-error");
    let _ = std::fs::remove_file(&errfile);
    let status = Command::new(&py)
        .args(["-m", "wakesim.dask_compare", "--error-file"])
        .arg(&errfile)
        .args([address, "--"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .map_err(|e| UserError(format!("--dask: cannot start {py} (set WAKESIM_PYTHON to the interpreter with the wakesim package): {e}")))?;
    if status.success() {
        return Ok(());
    }
    let msg = std::fs::read_to_string(&errfile).ok().map(|m| m.trim().to_string()).filter(|m| !m.is_empty());
    let _ = std::fs::remove_file(&errfile);
    let line = msg.unwrap_or_else(|| format!("--dask: {py} -m wakesim.dask_compare failed ({status}); is the Python package installed (pip install ./python)?"));
    Err(UserError(format!("{line} (runs finished so far are saved in {})", out.display())))
}
