//! `wakesim._native`: the simulator in-process for the Python package (`python/wakesim`).
//!
//! A thin door onto `wakesim::api`: every function takes the arguments of one `wakesim`
//! subcommand as a list of strings, runs it without the GIL, and returns what the command prints
//! (and, for `run`, its `--json` document). A user error is `WakesimError` (a `ValueError`)
//! carrying the command line's one-line message; a panic inside the simulator is caught here
//! and becomes a `WakesimError` too, so no Rust panic crosses into Python.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use wakesim::UserError;

create_exception!(_native, WakesimError, PyValueError, "A wakesim error: the command line's one-line message.");

/// Runs `f` without the GIL, turning errors and panics into `WakesimError`.
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, UserError> + Send) -> PyResult<T> {
    let r = py.detach(|| catch_unwind(AssertUnwindSafe(f)));
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(UserError(msg))) => Err(WakesimError::new_err(wakesim::one_line(&msg))),
        Err(p) => {
            let what = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            Err(WakesimError::new_err(format!("internal error (please report): {}", wakesim::one_line(&what))))
        }
    }
}

/// `wakesim run ARGS…`: returns (printed text, JSON document as written by `--json`).
#[pyfunction]
fn run(py: Python<'_>, args: Vec<String>) -> PyResult<(String, String)> {
    detached(py, || wakesim::api::run_json(&args))
}

/// `wakesim SUBCOMMAND ARGS…`: returns what it prints on standard output.
#[pyfunction]
fn call(py: Python<'_>, subcommand: String, args: Vec<String>) -> PyResult<String> {
    detached(py, || wakesim::api::call(&subcommand, &args))
}

/// `wakesim compare ARGS…` (with `--out DIR`) up to its runs: the JSON
/// `{"out": DIR, "total": N, "pending": [plan indices]}`.
#[pyfunction]
fn compare_plan(py: Python<'_>, args: Vec<String>) -> PyResult<String> {
    detached(py, || wakesim::api::compare_plan(&args))
}

/// Runs plan entry `index` of `wakesim compare ARGS…` and saves it in its `--out DIR`.
#[pyfunction]
fn compare_run(py: Python<'_>, args: Vec<String>, index: usize) -> PyResult<()> {
    detached(py, || wakesim::api::compare_run(&args, index))
}

/// The machine presets, kernel profiles and features as JSON: `{"machines": …, "kernels": …,
/// "features": …}`.
#[pyfunction]
fn catalogue(py: Python<'_>) -> PyResult<String> {
    detached(py, || Ok(wakesim::api::catalogue_json()))
}

/// A machine (preset name or TOML file) as JSON: name, CPUs, topology, domains.
#[pyfunction]
fn machine(py: Python<'_>, name: String) -> PyResult<String> {
    detached(py, || wakesim::api::machine_json(&name))
}

/// The package version (the workspace's).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("WakesimError", m.py().get_type::<WakesimError>())?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(call, m)?)?;
    m.add_function(wrap_pyfunction!(compare_plan, m)?)?;
    m.add_function(wrap_pyfunction!(compare_run, m)?)?;
    m.add_function(wrap_pyfunction!(catalogue, m)?)?;
    m.add_function(wrap_pyfunction!(machine, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
