//! The output directory of `compare --out DIR`:
//!
//! ```text
//! DIR/experiment.json                      the experiment (what decides the results) + argv
//! DIR/runs/<variant>/<point>/run-<k>.json  one per finished run, written atomically
//! DIR/results.csv, results.json            tidy rows: one per run and metric
//! DIR/summary.csv, summary.json            statistics per variant, point and metric
//! DIR/commands.txt                         the compare command and each run's `wakesim run`
//! DIR/trace.json                           (when recorded) the schedule of one run
//! ```
//!
//! A directory holding the same experiment is resumed: runs whose file exists are read back,
//! not rerun. A directory holding anything else is refused.

use super::plan::{Experiment, RunSpec};
use crate::output::write_atomic;
use crate::UserError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use wakesim_report::RunRecord;

/// `experiment.json`.
#[derive(Serialize, Deserialize)]
pub struct ExperimentFile {
    pub wakesim_version: String,
    /// The compare command as invoked (not part of the identity: `--jobs` or `--format` may differ).
    pub argv: Vec<String>,
    pub experiment: Experiment,
}

/// What a run file holds beyond its [`RunRecord`], for people and pandas.
#[derive(Serialize)]
pub struct RunFile<'a> {
    pub variant: &'a str,
    pub point: &'a str,
    pub run: u32,
    pub seed: u64,
    /// The `wakesim run` command line that reproduces this run.
    pub argv: Vec<String>,
    pub capped: bool,
    pub end_time_ns: u64,
    /// The benchmark's own output.
    pub output: &'a str,
    pub record: &'a RunRecord,
    /// Every statistic of the run (as `wakesim run --json` writes them).
    pub stats: &'a wakesim_stats::Stats,
}

/// The part of a run file read back on resume.
#[derive(Deserialize)]
struct RunFileBack {
    seed: u64,
    record: RunRecord,
}

pub struct Store {
    pub dir: PathBuf,
}

impl Store {
    /// Opens DIR for `exp`: creates it, or checks that it holds the same experiment. Returns
    /// the store; `experiment.json` is (re)written with this invocation's argv.
    pub fn open(dir: &Path, exp: &Experiment, argv: &[String]) -> Result<Store, UserError> {
        let file = dir.join("experiment.json");
        if dir.exists() {
            if !dir.is_dir() {
                return Err(UserError(format!("--out {}: exists and is not a directory", dir.display())));
            }
            if file.exists() {
                let text = std::fs::read_to_string(&file).map_err(|e| UserError(format!("cannot read {}: {e}", file.display())))?;
                let old: ExperimentFile = serde_json::from_str(&text)
                    .map_err(|e| UserError(format!("--out {}: experiment.json is not a wakesim experiment ({e})", dir.display())))?;
                if &old.experiment != exp && !more_runs_of(&old.experiment, exp) {
                    return Err(UserError(format!(
                        "--out {} holds another experiment ({}); use a new directory, or the same options to resume",
                        dir.display(),
                        difference(&old.experiment, exp)
                    )));
                }
            } else if std::fs::read_dir(dir).map_err(|e| UserError(format!("cannot read {}: {e}", dir.display())))?.next().is_some() {
                return Err(UserError(format!("--out {}: directory is not empty and holds no wakesim experiment", dir.display())));
            }
        } else {
            std::fs::create_dir_all(dir).map_err(|e| UserError(format!("cannot create {}: {e}", dir.display())))?;
        }
        remove_stale_temporaries(&dir.join("runs"));
        let doc = ExperimentFile { wakesim_version: env!("CARGO_PKG_VERSION").into(), argv: argv.to_vec(), experiment: exp.clone() };
        write_json(&file, &doc)?;
        Ok(Store { dir: dir.to_path_buf() })
    }

    pub fn run_path(&self, exp: &Experiment, r: &RunSpec) -> PathBuf {
        let points = exp.points();
        self.dir.join("runs").join(&exp.variants[r.variant].name).join(exp.point_dir(&points[r.point])).join(format!("run-{}.json", r.run))
    }

    /// A finished run's record, if its file exists and is one of ours with the planned seed.
    pub fn load(&self, exp: &Experiment, r: &RunSpec) -> Result<Option<RunRecord>, UserError> {
        load_run(&self.run_path(exp, r), r)
    }

    pub fn save(&self, exp: &Experiment, r: &RunSpec, f: &RunFile) -> Result<(), UserError> {
        let path = self.run_path(exp, r);
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).map_err(|e| UserError(format!("cannot create {}: {e}", d.display())))?;
        }
        write_json(&path, f)
    }
}

/// Removes the `.run-<k>.json.<pid>.tmp` files an interrupted compare left behind (never read:
/// only a renamed, complete file counts as a finished run).
fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            remove_stale_temporaries(&p);
        } else if p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.') && n.to_string_lossy().ends_with(".tmp")) {
            let _ = std::fs::remove_file(&p);
        }
    }
}

/// Reads a run file back; None when absent.
pub fn load_run(path: &Path, r: &RunSpec) -> Result<Option<RunRecord>, UserError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(UserError(format!("cannot read {}: {e}", path.display()))),
    };
    let back: RunFileBack = serde_json::from_str(&text).map_err(|e| UserError(format!("{}: not a wakesim run file ({e}); delete it to rerun that run", path.display())))?;
    if back.seed != r.seed {
        return Err(UserError(format!("{}: seed {} but the plan says {}; delete it to rerun that run", path.display(), back.seed, r.seed)));
    }
    Ok(Some(back.record))
}

/// Reads `DIR/experiment.json`.
pub fn read_experiment(dir: &Path) -> Result<ExperimentFile, UserError> {
    let file = dir.join("experiment.json");
    let text = std::fs::read_to_string(&file).map_err(|e| UserError(format!("{}: no wakesim experiment here ({e})", dir.display())))?;
    serde_json::from_str(&text).map_err(|e| UserError(format!("{}: not a wakesim experiment ({e})", file.display())))
}

pub fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<(), UserError> {
    let text = serde_json::to_string_pretty(v).map_err(|e| UserError(format!("cannot serialise {}: {e}", path.display())))?;
    write_atomic(path, &(text + "\n"))
}

/// Whether `new` is `old` with more runs: run K's seed is the base seed plus K whatever the
/// count, so the finished runs stay valid and only the new seeds run (more seeds for a row
/// whose pairs scatter). Fewer runs is refused: the directory would hold runs no longer planned.
fn more_runs_of(old: &Experiment, new: &Experiment) -> bool {
    new.runs > old.runs && &Experiment { runs: new.runs, ..old.clone() } == new
}

/// The first field in which two experiments differ, for the error message.
fn difference(old: &Experiment, new: &Experiment) -> String {
    let (a, b) = (serde_json::to_value(old).unwrap_or_default(), serde_json::to_value(new).unwrap_or_default());
    if let (Some(a), Some(b)) = (a.as_object(), b.as_object()) {
        for (k, v) in a {
            if b.get(k) != Some(v) {
                return format!("{k} was {v}, now {}", b.get(k).cloned().unwrap_or_default());
            }
        }
    }
    "it differs".into()
}
