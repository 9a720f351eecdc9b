//! The experiment: what `compare` was asked (saved as `experiment.json`) and the list of runs
//! it implies.
//!
//! Runs are planned point by point (sweeps form a grid, first sweep outermost), then variant
//! (baseline first), then repetition k. Every variant's run k at a point uses seed
//! `base_seed + k`: common random numbers, so the variants see the same arrivals and choices
//! wherever the change does not alter them, and a difference between columns is the change.

use crate::run::parse_features;
use crate::UserError;
use serde::{Deserialize, Serialize};
use wakesim_model::Features;

/// One variant: a name and its feature changes on top of the kernel profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    pub name: String,
    /// As given (`--features` syntax); the baseline's is `--baseline` or empty.
    pub spec: String,
    /// The resolved features that are on, in registry order.
    pub features: Vec<String>,
}

/// Everything that determines the results (`experiment.json`). Two invocations with equal
/// `Experiment`s produce the same runs, so a directory holding one can be resumed by the other.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    pub machine: String,
    /// Cost overrides: the file as given and its contents.
    pub costs_file: Option<String>,
    pub costs_toml: Option<String>,
    /// `--cost-scale KEY=FACTOR`s, applied after the overrides (absent: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cost_scale: Vec<String>,
    pub kernel: String,
    /// `--noise` as given (`None`: the machine's default) and, for a file, its contents.
    #[serde(default)]
    pub noise: Option<String>,
    #[serde(default)]
    pub noise_toml: Option<String>,
    /// `--governor` as given (`None`: the machine's).
    #[serde(default)]
    pub governor: Option<String>,
    /// `--cgroup` (absent in directories written before the option: `root`, as they ran).
    #[serde(default = "root_cgroup")]
    pub cgroup: String,
    pub duration: f64,
    /// `--copies N`: instances of the benchmark side by side in every run (absent: 1, as in
    /// directories written before the option).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub copies: u32,
    pub runs: u32,
    pub base_seed: u64,
    /// The command with `{NAME}` placeholders.
    pub command: Vec<String>,
    /// The benchmark's name (from the command), for titles.
    pub workload: String,
    /// (name, values) in the order given.
    pub sweeps: Vec<(String, Vec<String>)>,
    /// Baseline first.
    pub variants: Vec<Variant>,
}

fn root_cgroup() -> String {
    "root".into()
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// One run of the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// Position in the plan (results are always ordered by it).
    pub index: usize,
    pub point: usize,
    pub variant: usize,
    pub run: u32,
    pub seed: u64,
    /// The benchmark command with the point's values substituted.
    pub command: Vec<String>,
}

/// Names of variants and sweeps become directory names and CSV columns: keep them plain.
fn check_name(what: &str, n: &str) -> Result<(), UserError> {
    if n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.') || n.starts_with('.') {
        return Err(UserError(format!("{what} name '{n}' must be letters, digits, '_', '-' or '.' (not starting with '.')")));
    }
    Ok(())
}

/// The features that are on, in registry order.
pub fn enabled(f: &Features) -> Vec<String> {
    Features::ALL.iter().filter(|(n, _)| f.get(n) == Some(true)).map(|(n, _)| n.to_string()).collect()
}

/// Parses `--variant NAME=SPEC`s on top of the baseline spec; unknown features are errors.
pub fn variants(kernel: &str, baseline: Option<&str>, given: &[String]) -> Result<Vec<Variant>, UserError> {
    let base_spec = baseline.unwrap_or("").to_string();
    let base = parse_features(kernel, Some(&base_spec)).map_err(|e| UserError(format!("--baseline: {}", e.0)))?;
    let mut out = vec![Variant { name: "baseline".into(), spec: base_spec.clone(), features: enabled(&base) }];
    for v in given {
        let (name, spec) = v.split_once('=').ok_or_else(|| UserError(format!("--variant '{v}': expected NAME=SPEC, e.g. sh_rq=+SHARED_RUNQ")))?;
        check_name("variant", name)?;
        if out.iter().any(|o| o.name == name) {
            return Err(UserError(format!("--variant '{name}' given twice (the baseline is called 'baseline')")));
        }
        if spec.trim().is_empty() {
            return Err(UserError(format!("--variant '{name}': empty feature list")));
        }
        let full = if base_spec.is_empty() { spec.to_string() } else { format!("{base_spec},{spec}") };
        let f = parse_features(kernel, Some(&full)).map_err(|e| UserError(format!("--variant {name}: {}", e.0)))?;
        out.push(Variant { name: name.into(), spec: spec.into(), features: enabled(&f) });
    }
    Ok(out)
}

/// Parses `--sweep NAME=v1,v2`s.
pub fn sweeps(given: &[String]) -> Result<Vec<(String, Vec<String>)>, UserError> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for s in given {
        let (name, vals) = s.split_once('=').ok_or_else(|| UserError(format!("--sweep '{s}': expected NAME=V1,V2,…")))?;
        check_name("sweep", name)?;
        if out.iter().any(|(n, _)| n == name) {
            return Err(UserError(format!("--sweep '{name}' given twice")));
        }
        let vals: Vec<String> = vals.split(',').map(|v| v.trim().to_string()).collect();
        if let Some(bad) = vals.iter().find(|v| v.is_empty() || v.contains(['/', '\\', '=']) || v.chars().any(char::is_whitespace)) {
            return Err(UserError(format!("--sweep {name}: bad value '{bad}' (values are non-empty, without '/', '=', or spaces)")));
        }
        let mut seen = vals.clone();
        seen.sort();
        seen.dedup();
        if seen.len() != vals.len() {
            return Err(UserError(format!("--sweep {name}: a value is listed twice")));
        }
        out.push((name.into(), vals));
    }
    Ok(out)
}

/// The `{NAME}` placeholders of a command, in order of appearance.
fn placeholders(cmd: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for arg in cmd {
        let mut rest = arg.as_str();
        while let Some(i) = rest.find('{') {
            let after = &rest[i + 1..];
            match after.find('}') {
                Some(j) if j > 0 && after[..j].chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.') => {
                    if !out.contains(&after[..j].to_string()) {
                        out.push(after[..j].to_string());
                    }
                    rest = &after[j + 1..];
                }
                _ => rest = after,
            }
        }
    }
    out
}

impl Experiment {
    /// Every sweep must appear in the command as `{NAME}`, and every `{NAME}` must be swept.
    pub fn check_placeholders(&self) -> Result<(), UserError> {
        let used = placeholders(&self.command);
        for (n, _) in &self.sweeps {
            if !used.contains(n) {
                return Err(UserError(format!("--sweep {n}: the command does not use {{{n}}} (command: {})", self.command.join(" "))));
            }
        }
        if let Some(n) = used.iter().find(|u| !self.sweeps.iter().any(|(s, _)| s == *u)) {
            return Err(UserError(format!("the command uses {{{n}}} but no --sweep {n}=… gives its values")));
        }
        Ok(())
    }

    /// Each point's values (one per sweep), first sweep outermost; one empty point without sweeps.
    pub fn points(&self) -> Vec<Vec<String>> {
        let mut pts: Vec<Vec<String>> = vec![Vec::new()];
        for (_, vals) in &self.sweeps {
            pts = pts.iter().flat_map(|p| vals.iter().map(move |v| [p.clone(), vec![v.clone()]].concat())).collect();
        }
        pts
    }

    /// Directory name of a point: `clients=1,loops=10`, or `all` without sweeps.
    pub fn point_dir(&self, point: &[String]) -> String {
        if self.sweeps.is_empty() {
            return "all".into();
        }
        self.sweeps.iter().zip(point).map(|((n, _), v)| format!("{n}={v}")).collect::<Vec<_>>().join(",")
    }

    /// The command with a point's values substituted.
    pub fn command_at(&self, point: &[String]) -> Vec<String> {
        self.command
            .iter()
            .map(|a| self.sweeps.iter().zip(point).fold(a.clone(), |a, ((n, _), v)| a.replace(&format!("{{{n}}}"), v)))
            .collect()
    }

    /// All runs, in plan order.
    pub fn plan(&self) -> Vec<RunSpec> {
        let mut out = Vec::new();
        for (p, point) in self.points().iter().enumerate() {
            let command = self.command_at(point);
            for v in 0..self.variants.len() {
                for k in 0..self.runs {
                    out.push(RunSpec { index: out.len(), point: p, variant: v, run: k, seed: self.base_seed.wrapping_add(u64::from(k)), command: command.clone() });
                }
            }
        }
        out
    }

    /// The `wakesim run` command line that reproduces one run exactly.
    pub fn run_argv(&self, r: &RunSpec) -> Vec<String> {
        let mut a: Vec<String> = ["wakesim", "run", "--machine", &self.machine].iter().map(|s| s.to_string()).collect();
        if let Some(c) = &self.costs_file {
            a.extend(["--costs".into(), c.clone()]);
        }
        for c in &self.cost_scale {
            a.extend(["--cost-scale".into(), c.clone()]);
        }
        a.extend(["--kernel".into(), self.kernel.clone()]);
        if let Some(n) = &self.noise {
            a.extend(["--noise".into(), n.clone()]);
        }
        if let Some(g) = &self.governor {
            a.extend(["--governor".into(), g.clone()]);
        }
        if self.cgroup != "autogroup" {
            a.extend(["--cgroup".into(), self.cgroup.clone()]);
        }
        let base = &self.variants[0].spec;
        let spec = match (r.variant, base.is_empty()) {
            (0, _) => base.clone(),
            (v, true) => self.variants[v].spec.clone(),
            (v, false) => format!("{base},{}", self.variants[v].spec),
        };
        if !spec.is_empty() {
            a.push(format!("--features={spec}"));
        }
        a.extend(["--seed".into(), r.seed.to_string(), "--duration".into(), self.duration.to_string()]);
        if self.copies != 1 {
            a.extend(["--copies".into(), self.copies.to_string()]);
        }
        a.push("--".into());
        a.extend(r.command.iter().cloned());
        a
    }
}

/// Shell-quotes one argument for `commands.txt` (single quotes when needed).
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_=.,/:+@%".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(cmd: &str, sweeps: &[(&str, &[&str])]) -> Experiment {
        Experiment {
            machine: "test-2x4".into(),
            costs_file: None,
            costs_toml: None,
            cost_scale: Vec::new(),
            kernel: "v6.5".into(),
            noise: None,
            noise_toml: None,
            governor: None,
            cgroup: "autogroup".into(),
            duration: 1.0,
            copies: 1,
            runs: 2,
            base_seed: 7,
            command: cmd.split(' ').map(String::from).collect(),
            workload: "w".into(),
            sweeps: sweeps.iter().map(|(n, v)| (n.to_string(), v.iter().map(|s| s.to_string()).collect())).collect(),
            variants: vec![
                Variant { name: "baseline".into(), spec: String::new(), features: vec![] },
                Variant { name: "b".into(), spec: "+SHARED_RUNQ".into(), features: vec![] },
            ],
        }
    }

    #[test]
    fn plan_pairs_seeds_across_variants_and_points() {
        let e = exp("hackbench -g {g} -l {l}", &[("g", &["1", "2"]), ("l", &["10", "20"])]);
        let plan = e.plan();
        assert_eq!(plan.len(), 4 * 2 * 2);
        for r in &plan {
            assert_eq!(r.seed, 7 + u64::from(r.run), "run k uses base + k in every variant and point");
        }
        assert_eq!(plan[0].command.join(" "), "hackbench -g 1 -l 10");
        assert_eq!(plan[4].command.join(" "), "hackbench -g 1 -l 20");
        assert_eq!(e.point_dir(&e.points()[3]), "g=2,l=20");
        assert_eq!(e.run_argv(&plan[2]).join(" "), "wakesim run --machine test-2x4 --kernel v6.5 --features=+SHARED_RUNQ --seed 7 --duration 1 -- hackbench -g 1 -l 10");
    }

    #[test]
    fn copies_reach_the_run_command_and_default_to_one_in_old_files() {
        let mut e = exp("context1 1", &[]);
        e.copies = 4;
        assert_eq!(e.run_argv(&e.plan()[0]).join(" "), "wakesim run --machine test-2x4 --kernel v6.5 --seed 7 --duration 1 --copies 4 -- context1 1");
        e.copies = 1;
        let json = serde_json::to_string(&e).unwrap();
        assert!(!json.contains("copies"), "one copy is not written, so older directories still match: {json}");
        let back: Experiment = serde_json::from_str(&json).unwrap();
        assert_eq!(back.copies, 1);
    }

    #[test]
    fn placeholders_and_sweeps_must_match() {
        assert!(exp("tbench {clients}", &[("clients", &["1"])]).check_placeholders().is_ok());
        let e = exp("tbench 4", &[("clients", &["1"])]).check_placeholders().unwrap_err();
        assert!(e.0.contains("does not use {clients}"), "{}", e.0);
        let e = exp("tbench {clients}", &[]).check_placeholders().unwrap_err();
        assert!(e.0.contains("no --sweep clients"), "{}", e.0);
    }

    #[test]
    fn a_baseline_spec_applies_to_every_variant() {
        let v = variants("v6.5", Some("-TTWU_QUEUE"), &["s=+SHARED_RUNQ".into()]).unwrap();
        let has = |i: usize, f: &str| v[i].features.contains(&f.to_string());
        assert!(!has(0, "TTWU_QUEUE") && !has(1, "TTWU_QUEUE") && has(1, "SHARED_RUNQ") && !has(0, "SHARED_RUNQ"));
        let mut e = exp("perf bench sched pipe", &[]);
        e.variants = v;
        let plan = e.plan();
        assert_eq!(e.run_argv(&plan[0]).join(" "), "wakesim run --machine test-2x4 --kernel v6.5 --features=-TTWU_QUEUE --seed 7 --duration 1 -- perf bench sched pipe");
        assert!(e.run_argv(&plan[2]).join(" ").contains("--features=-TTWU_QUEUE,+SHARED_RUNQ --seed 7"));
        assert_eq!(e.point_dir(&e.points()[0]), "all");
    }

    #[test]
    fn bad_variants_and_sweeps_are_refused() {
        assert!(variants("v6.5", None, &["x=+NO_SUCH".into()]).unwrap_err().0.contains("unknown feature 'NO_SUCH'"));
        assert!(variants("v6.5", None, &["noequals".into()]).unwrap_err().0.contains("NAME=SPEC"));
        assert!(variants("v6.5", None, &["baseline=+SHARED_RUNQ".into()]).unwrap_err().0.contains("twice"));
        assert!(variants("v6.5", None, &["a/b=+SHARED_RUNQ".into()]).is_err());
        assert!(sweeps(&["c=1,,2".into()]).is_err());
        assert!(sweeps(&["c=1,1".into()]).unwrap_err().0.contains("twice"));
        let v = variants("v6.5", None, &["s=+SHARED_RUNQ".into()]).unwrap();
        assert!(v[1].features.contains(&"SHARED_RUNQ".to_string()) && !v[0].features.contains(&"SHARED_RUNQ".to_string()));
    }
}
