//! `wakesim compare`: paired A/B experiments, reported as the kernel mailing list reads them.
//!
//! * [`plan`]: the experiment (variants, sweeps, seeds) and its list of runs;
//! * [`exec`]: running them in parallel, in plan order, saving each as it finishes;
//! * [`store`]: the `--out DIR` layout, resume, and refusing another experiment's directory;
//! * [`results`]: the tidy CSV/JSON tables and `commands.txt`;
//! * [`dask`]: `--dask ADDRESS`, the pending runs as tasks on a Dask cluster.
//!
//! The tables themselves are `wakesim_report`'s.

pub mod dask;
pub mod exec;
pub mod plan;
pub mod results;
pub mod store;

use crate::args::CompareArgs;
use crate::run::{parse_features, resolve_costs, resolve_machine, workload_copies};
use crate::UserError;
use plan::{Experiment, RunSpec};
use store::Store;
use wakesim_report::{breakdown, mmtests, normalized, percentiles, schedstat_diff, Grid, RunRecord};

/// The table styles `--format` selects from, in printing order.
pub const FORMATS: [&str; 5] = ["mmtests", "normalized", "percentiles", "schedstat", "breakdown"];

fn parse_formats(s: &str) -> Result<Vec<&'static str>, UserError> {
    let mut out = Vec::new();
    for f in s.split(',').map(str::trim) {
        match f {
            "all" => out.extend(FORMATS),
            "schbench" => out.push("percentiles"),
            _ => out.push(FORMATS.iter().find(|x| **x == f).copied().ok_or_else(|| UserError(format!("--format: unknown style '{f}' (known: {}, all)", FORMATS.join(", "))))?),
        }
    }
    Ok(FORMATS.iter().copied().filter(|f| out.contains(f)).collect())
}

/// The `wakesim run` equivalent of the whole feature set of a variant (baseline spec first).
fn full_spec(exp: &Experiment, v: usize) -> String {
    let base = &exp.variants[0].spec;
    match (v, base.is_empty()) {
        (0, _) => base.clone(),
        (_, true) => exp.variants[v].spec.clone(),
        _ => format!("{base},{}", exp.variants[v].spec),
    }
}

/// The comparison grid from the plan's records (`slots[plan index]`, all present).
pub fn grid(exp: &Experiment, plan: &[RunSpec], slots: Vec<Option<RunRecord>>) -> Grid {
    let points = exp.points();
    let mut cells: Vec<Vec<Vec<RunRecord>>> = vec![vec![Vec::new(); exp.variants.len()]; points.len()];
    for (r, rec) in plan.iter().zip(slots) {
        if let Some(rec) = rec {
            cells[r.point][r.variant].push(rec);
        }
    }
    Grid {
        workload: exp.workload.clone(),
        variants: exp.variants.iter().map(|v| v.name.clone()).collect(),
        sweeps: exp.sweeps.iter().map(|(n, _)| n.clone()).collect(),
        points,
        cells,
    }
}

/// Parses a whole `wakesim compare …` command line (the in-process API's entry).
/// Clap's errors become the binary's one-line messages (`crate::parse`).
pub fn parse_args(argv: &[String]) -> Result<CompareArgs, UserError> {
    match crate::parse(argv)? {
        crate::Parsed::Cmd(c) => match c.cmd {
            crate::args::Cmd::Compare(a) => Ok(a),
            _ => Err(UserError("not a compare command line".into())),
        },
        crate::Parsed::Help(_) => Err(UserError("--help prints nothing here; see `wakesim compare --help`".into())),
    }
}

/// An experiment ready to run: its plan, what is already on disk, and what every run shares.
pub struct Prepared {
    pub exp: Experiment,
    pub plan: Vec<RunSpec>,
    /// Plan entries not yet on disk, in plan order.
    pub todo: Vec<RunSpec>,
    /// Records already on disk (`slots[plan index]`).
    pub slots: Vec<Option<RunRecord>>,
    pub store: Option<Store>,
    pub machine: wakesim_machine::Machine,
    pub costs: wakesim_costs::CostProfile,
    pub features: Vec<wakesim_model::Features>,
    pub noise: wakesim_model::NoiseProfile,
    pub formats: Vec<&'static str>,
    pub jobs: usize,
    pub argv: Vec<String>,
}

impl Prepared {
    pub fn setup(&self) -> exec::Setup<'_> {
        exec::Setup { exp: &self.exp, machine: self.machine.clone(), costs: self.costs.clone(), features: self.features.clone(), noise: self.noise.clone(), store: self.store.as_ref() }
    }
}

/// Checks the arguments, builds the experiment and its plan, opens (or resumes) `--out`.
pub fn prepare(a: &CompareArgs) -> Result<Prepared, UserError> {
    let formats = parse_formats(&a.format)?;
    if a.runs == 0 {
        return Err(UserError("--runs must be at least 1".into()));
    }
    if a.copies == 0 {
        return Err(UserError("--copies must be at least 1".into()));
    }
    crate::run::check_duration(a.duration)?;
    let jobs = match a.jobs {
        Some(0) => return Err(UserError("--jobs must be at least 1".into())),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let machine = resolve_machine(&a.machine)?;
    let mut costs = resolve_costs(&machine, a.costs.as_deref())?;
    crate::run::apply_cost_scales(&mut costs, &a.cost_scale)?;
    let costs_toml = match &a.costs {
        Some(p) => Some(std::fs::read_to_string(p).map_err(|e| UserError(format!("cannot read {}: {e}", p.display())))?),
        None => None,
    };
    let noise = crate::run::resolve_noise(&machine, a.noise.as_deref())?;
    let noise_toml = match a.noise.as_deref() {
        Some(p) if p != "none" && p != "server" && p != "default" => Some(std::fs::read_to_string(p).map_err(|e| UserError(format!("cannot read {p}: {e}")))?),
        _ => None,
    };
    crate::run::resolve_governor(&machine, a.governor.as_deref())?;
    crate::run::resolve_task_groups(&a.cgroup)?;
    let variants = plan::variants(&a.kernel, a.baseline.as_deref(), &a.variants)?;
    let sweeps = plan::sweeps(&a.sweeps)?;
    let mut exp = Experiment {
        machine: a.machine.clone(),
        costs_file: a.costs.as_ref().map(|p| p.display().to_string()),
        costs_toml,
        cost_scale: a.cost_scale.clone(),
        kernel: a.kernel.clone(),
        noise: a.noise.clone(),
        noise_toml,
        governor: a.governor.clone(),
        cgroup: a.cgroup.clone(),
        duration: a.duration,
        copies: a.copies,
        runs: a.runs,
        base_seed: a.seed,
        command: a.command.clone(),
        workload: String::new(),
        sweeps,
        variants,
    };
    exp.check_placeholders()?;
    // Every point's command must build before any run starts.
    for p in exp.points() {
        let cmd = exp.command_at(&p);
        let wl = workload_copies(&cmd, &machine, exp.copies).map_err(|e| UserError(format!("command '{}': {}", cmd.join(" "), e.0)))?;
        if exp.workload.is_empty() {
            exp.workload = wl.name.clone();
        }
    }
    let features = (0..exp.variants.len()).map(|v| parse_features(&exp.kernel, Some(&full_spec(&exp, v)))).collect::<Result<Vec<_>, _>>()?;
    let argv = crate::api::invocation();
    let store = a.out.as_deref().map(|d| Store::open(d, &exp, &argv)).transpose()?;
    let plan = exp.plan();
    let mut slots: Vec<Option<RunRecord>> = vec![None; plan.len()];
    let mut todo = Vec::new();
    for r in &plan {
        match store.as_ref().map(|s| s.load(&exp, r)).transpose()?.flatten() {
            Some(rec) => slots[r.index] = Some(rec),
            None => todo.push(r.clone()),
        }
    }
    Ok(Prepared { exp, plan, todo, slots, store, machine, costs, features, noise, formats, jobs, argv })
}

pub fn compare(a: CompareArgs) -> Result<(), UserError> {
    let Prepared { exp, plan, todo, mut slots, store, machine, costs, features, noise, formats, jobs, argv } = prepare(&a)?;
    if let Some(s) = &store {
        let done = plan.len() - todo.len();
        if done > 0 {
            eprintln!("wakesim: resuming {}: {done} of {} runs already done", s.dir.display(), plan.len());
        }
    }
    let setup = exec::Setup { exp: &exp, machine, costs, features, noise, store: store.as_ref() };
    if let Some(s) = &store {
        let trace = s.dir.join("trace.json");
        if !trace.exists() {
            exec::record_trace(&setup, &plan[0], &trace)?;
        }
    }
    match (&a.dask, &store) {
        (Some(addr), Some(s)) if !todo.is_empty() => {
            // Each pending run is one task on the cluster's workers, which save it here; then
            // the records are read back from disk exactly as a resumed compare reads them.
            dask::run_on_cluster(addr, &argv, &s.dir)?;
            for r in &todo {
                slots[r.index] = Some(s.load(&exp, r)?.ok_or_else(|| UserError(format!("the Dask cluster did not save run {} ({})", r.index, s.dir.display())))?);
            }
        }
        (Some(_), None) => return Err(UserError("--dask needs --out DIR (the workers save each run there)".into())),
        _ => exec::run_all(&setup, &todo, jobs, &mut slots)?,
    }
    let g = grid(&exp, &plan, slots);
    if let Some(s) = &store {
        results::write_all(&s.dir, &exp, &argv, &g)?;
    }
    if let Some(note) = crate::run::uncalibrated_host_note(&setup.machine, a.costs.as_deref()) {
        crate::outln!("{note}");
    }
    let governor = crate::run::resolve_governor(&setup.machine, exp.governor.as_deref())?;
    print_tables(&exp, governor, &setup.noise.name, &g, &formats);
    Ok(())
}

fn print_tables(exp: &Experiment, governor: wakesim_model::GovernorKind, noise: &str, g: &Grid, formats: &[&str]) {
    let names: Vec<String> = exp.variants.iter().map(|v| if v.spec.is_empty() { v.name.clone() } else { format!("{} ({})", v.name, v.spec) }).collect();
    crate::outln!(
        "# wakesim compare: {} on {}, kernel {}, governor {}, noise {}, cgroup {}, {} run{} per point (seeds {}..{}); {}",
        exp.workload,
        exp.machine,
        exp.kernel,
        governor,
        noise,
        exp.cgroup,
        exp.runs,
        if exp.runs == 1 { "" } else { "s" },
        exp.base_seed,
        exp.base_seed + u64::from(exp.runs) - 1,
        names.join(" vs ")
    );
    for f in formats {
        let (title, body) = match *f {
            "mmtests" => ("mmtests compare (gain over baseline; *…* = significant by Welch's t-test, alpha 0.05)", mmtests::render(g)),
            "normalized" => ("normalized (ratio to baseline [pct improvement](CV))", normalized::render(g)),
            "percentiles" => ("latency percentiles side by side (mean over runs)", percentiles::render(g, true)),
            "schedstat" => ("schedstat diff (mean per run)", schedstat_diff::render(g)),
            _ => ("where the time went", breakdown::render(g)),
        };
        crate::outln!();
        crate::outln!("## {title}");
        crate::outln!();
        crate::outp!("{body}");
    }
}
