//! The in-process API: the same commands as the binary, with their standard output captured
//! and their errors returned, for the Python package (`crates/pyapi`) and any Rust caller.
//!
//! Every function takes the arguments of one `wakesim` subcommand as the user would type them
//! after the subcommand's name, so everything the command line accepts is accepted here, with
//! the same one-line errors.

use crate::output::capture;
use crate::UserError;
use std::cell::RefCell;

thread_local! {
    static INVOCATION: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Records the command line being run (`compare` writes it into its `--out` directory).
pub(crate) fn set_invocation(argv: &[String]) {
    let v: Vec<String> = std::iter::once("wakesim".to_string()).chain(argv.iter().skip(1).cloned()).collect();
    INVOCATION.with(|i| *i.borrow_mut() = v);
}

/// The command line being run, as `wakesim SUBCOMMAND ARGS…`.
pub(crate) fn invocation() -> Vec<String> {
    INVOCATION.with(|i| i.borrow().clone())
}

fn argv(sub: &str, args: &[String]) -> Vec<String> {
    ["wakesim", sub].iter().map(|s| s.to_string()).chain(args.iter().cloned()).collect()
}

/// Runs `wakesim SUB ARGS…` and returns what it printed on standard output.
pub fn call(sub: &str, args: &[String]) -> Result<String, UserError> {
    let (r, text) = capture(|| crate::main_with(&argv(sub, args)));
    r.map(|()| text)
}

/// `wakesim run ARGS… --json FILE`: returns (the printed text, the JSON document). The JSON is
/// written to a private temporary file and read back, so it is byte for byte what `--json`
/// writes.
pub fn run_json(args: &[String]) -> Result<(String, String), UserError> {
    let dir = tempdir()?;
    let path = dir.join("run.json");
    let mut a = args.to_vec();
    // Options go before `--` (the benchmark's own command line follows it).
    let at = a.iter().position(|x| x == "--").unwrap_or(a.len());
    a.splice(at..at, ["--json".to_string(), path.display().to_string()]);
    let r = call("run", &a).and_then(|text| {
        let json = std::fs::read_to_string(&path).map_err(|e| UserError(format!("cannot read the run's JSON: {e}")))?;
        Ok((text, json))
    });
    let _ = std::fs::remove_dir_all(&dir);
    r
}

/// `wakesim compare ARGS…` (with `--out DIR`) up to the runs: creates or resumes the output
/// directory and returns `{"out": DIR, "total": N, "pending": [plan indices not on disk]}`.
pub fn compare_plan(args: &[String]) -> Result<String, UserError> {
    let full = argv("compare", args);
    // `experiment.json` records this command line (a distributed sweep's runner plans on
    // another thread or process than the one the user typed the command into).
    set_invocation(&full);
    let a = crate::compare::parse_args(&full)?;
    let p = crate::compare::prepare(&a)?;
    let out = p.store.as_ref().map(|s| s.dir.display().to_string()).ok_or_else(|| UserError("compare_plan needs --out DIR".into()))?;
    let pending: Vec<usize> = p.todo.iter().map(|r| r.index).collect();
    Ok(serde_json::json!({ "out": out, "total": p.plan.len(), "pending": pending }).to_string())
}

/// Runs plan entry `index` of `wakesim compare ARGS…` (with `--out DIR`) and saves it there,
/// as `compare` itself would have: the unit of work of a distributed sweep. The directory must
/// already hold the experiment (`compare_plan` creates it); it is only read here, never
/// rewritten or cleaned, so many workers, processes or threads can run entries side by side.
pub fn compare_run(args: &[String], index: usize) -> Result<(), UserError> {
    let mut a = crate::compare::parse_args(&argv("compare", args))?;
    let dir = a.out.take().ok_or_else(|| UserError("compare_run needs --out DIR".into()))?;
    let p = crate::compare::prepare(&a)?;
    let on_disk = crate::compare::store::read_experiment(&dir)?;
    if on_disk.experiment != p.exp {
        return Err(UserError(format!("--out {} holds another experiment; plan it first with the same options", dir.display())));
    }
    let store = crate::compare::store::Store { dir };
    let r = p.plan.get(index).ok_or_else(|| UserError(format!("run {index} is not in the plan (it has {} runs)", p.plan.len())))?;
    let setup = crate::compare::exec::Setup { store: Some(&store), ..p.setup() };
    crate::compare::exec::run_one(&setup, r).map(|_| ())
}

/// A fresh private directory under the system's temporary directory.
pub(crate) fn tempdir() -> Result<std::path::PathBuf, UserError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    for _ in 0..100 {
        let d = base.join(format!("wakesim-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        match std::fs::create_dir(&d) {
            Ok(()) => return Ok(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(UserError(format!("cannot create a temporary directory in {}: {e}", base.display()))),
        }
    }
    Err(UserError(format!("cannot create a temporary directory in {}", base.display())))
}

fn machine_value(m: &wakesim_machine::Machine) -> serde_json::Value {
    serde_json::json!({
        "name": m.name,
        "description": m.description,
        "cpus": m.nr_cpus(),
        "shape": wakesim_machine::shape(m),
        "llc_size": m.llc_size.first().copied().unwrap_or(1),
        "domains": m.level_names(0),
        "cost_profile": m.cost_profile,
    })
}

/// The machine presets, kernel profiles and feature flags, as `wakesim machines`, `kernels` and
/// `features` list them.
pub fn catalogue_json() -> String {
    use wakesim_model::{features::KERNELS, Features};
    let machines: Vec<serde_json::Value> =
        wakesim_machine::preset_names().into_iter().filter_map(|n| wakesim_machine::preset(n).ok()).map(|m| machine_value(&m)).collect();
    let kernels: Vec<serde_json::Value> = KERNELS
        .iter()
        .map(|k| {
            let f = Features::for_kernel(k.name).expect("built-in profile");
            let on: Vec<&str> = Features::ALL.iter().map(|(n, _)| *n).filter(|n| f.get(n) == Some(true)).collect();
            serde_json::json!({ "name": k.name, "summary": k.summary, "features": on })
        })
        .collect();
    let features: Vec<serde_json::Value> = Features::ALL
        .iter()
        .map(|(name, doc)| {
            let kind = Features::kind(name).expect("every feature has a kind");
            serde_json::json!({ "name": name, "kind": kind.label(), "link": kind.link(), "description": doc.trim() })
        })
        .collect();
    serde_json::json!({ "machines": machines, "kernels": kernels, "features": features }).to_string()
}

/// One machine (a preset name, `host`, or a machine TOML file) as JSON.
pub fn machine_json(name: &str) -> Result<String, UserError> {
    Ok(machine_value(&crate::run::resolve_machine(name)?).to_string())
}
