//! Reproduction specs: the `reproduce/*.toml` files, read and checked before anything runs.
//!
//! One file per published change; each `[[row]]` is one published figure (one benchmark, one
//! statistic). The format is documented in `reproduce/README.md`. Every error is one line that
//! names the file, the line and the key.

use crate::compare::plan;
use crate::run::{check_duration, parse_features, resolve_governor, resolve_machine, resolve_noise, workload_copies};
use crate::UserError;
use serde::Deserialize;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;
use wakesim_report::CDF_PERCENTILES;

/// What the wakesim side of a row reads from each run.
#[derive(Clone, Debug, PartialEq)]
pub enum Figure {
    /// A metric of the benchmark by name; `None`: its headline metric.
    Metric(Option<String>),
    /// A percentile of one of the benchmark's latency distributions (e.g. schbench's
    /// "Wakeup Latencies").
    Latency { name: String, percentile: f64 },
}

/// How a change is expressed: variant/baseline − 1 in percent, or variant/baseline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    Percent,
    Ratio,
}

/// Which way the published change went.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Direction {
    Lower,
    Higher,
    Neutral,
}

impl Direction {
    pub fn word(self) -> &'static str {
        match self {
            Direction::Lower => "lower",
            Direction::Higher => "higher",
            Direction::Neutral => "neutral",
        }
    }
}

/// The published figure.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Published {
    pub baseline: Option<f64>,
    pub variant: Option<f64>,
    /// In the row's scale (percent or ratio).
    pub change: Option<f64>,
    /// Replaces the rendered figure in the table (e.g. "neutral").
    pub text: Option<String>,
}

/// The size of a run: what `--quick` changes.
#[derive(Clone, Debug, PartialEq)]
pub struct Size {
    pub command: Vec<String>,
    pub copies: u32,
    pub duration: f64,
}

/// One row: one published figure and how to reproduce it.
#[derive(Clone, Debug)]
pub struct Row {
    /// `FILE-STEM/NAME`.
    pub id: String,
    /// The spec file, as shown in messages.
    pub file: String,
    /// Line of the row's `[[row]]` table, and of its `metric`/`latency` key (for errors found
    /// after the runs).
    pub line: usize,
    pub figure_line: usize,
    pub change: String,
    pub benchmark: String,
    pub machine: String,
    pub kernel: String,
    pub baseline: String,
    pub variant: String,
    pub variant_name: String,
    pub noise: Option<String>,
    pub governor: Option<String>,
    pub full: Size,
    pub quick: Size,
    /// `seeds`: seeds in a full run when `--seeds` is not given (default 5), for a row whose
    /// pairs scatter more widely than its band.
    pub seeds: Option<u32>,
    /// `quick.seeds`: seeds in quick mode (default 2).
    pub quick_seeds: Option<u32>,
    pub figure: Figure,
    pub unit: Option<String>,
    pub scale: Scale,
    pub published: Published,
    pub statistic: String,
    pub source: String,
    pub direction: Direction,
    pub band: (f64, f64),
    pub cause: Option<String>,
    pub notes: Option<String>,
    /// Whether the published absolute values are comparable with the model's (same setup).
    pub compare_level: bool,
}

/// One spec file: a published change and its rows.
#[derive(Clone, Debug)]
pub struct SpecFile {
    /// `order`: where the change goes in the table (then by file name).
    pub order: i64,
    pub stem: String,
    pub change: String,
    pub title: String,
    pub author: String,
    pub date: String,
    pub notes: Option<String>,
    pub rows: Vec<Row>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    order: Option<i64>,
    change: Spanned<String>,
    title: String,
    author: String,
    date: String,
    source: Option<Spanned<String>>,
    machine: Option<Spanned<String>>,
    kernel: Option<Spanned<String>>,
    baseline: Option<Spanned<String>>,
    variant: Option<Spanned<String>>,
    variant_name: Option<Spanned<String>>,
    noise: Option<Spanned<String>>,
    governor: Option<Spanned<String>>,
    notes: Option<String>,
    row: Vec<Spanned<RawRow>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRow {
    name: Spanned<String>,
    benchmark: String,
    command: Spanned<String>,
    copies: Option<Spanned<u32>>,
    duration: Option<Spanned<f64>>,
    seeds: Option<Spanned<u32>>,
    machine: Option<Spanned<String>>,
    kernel: Option<Spanned<String>>,
    baseline: Option<Spanned<String>>,
    variant: Option<Spanned<String>>,
    variant_name: Option<Spanned<String>>,
    noise: Option<Spanned<String>>,
    governor: Option<Spanned<String>>,
    source: Option<Spanned<String>>,
    metric: Option<Spanned<String>>,
    latency: Option<Spanned<String>>,
    percentile: Option<Spanned<f64>>,
    unit: Option<String>,
    scale: Option<Spanned<String>>,
    published: Spanned<RawPublished>,
    statistic: Spanned<String>,
    direction: Spanned<String>,
    band: Spanned<Vec<f64>>,
    cause: Option<String>,
    notes: Option<String>,
    quick: Option<Spanned<RawQuick>>,
    compare_level: Option<Spanned<bool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPublished {
    baseline: Option<f64>,
    variant: Option<f64>,
    change: Option<f64>,
    text: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuick {
    command: Option<Spanned<String>>,
    copies: Option<Spanned<u32>>,
    duration: Option<Spanned<f64>>,
    seeds: Option<Spanned<u32>>,
}

/// The file being read, for `file:line: key: …` messages.
struct Src<'a> {
    file: &'a str,
    text: &'a str,
}

impl Src<'_> {
    fn line(&self, off: usize) -> usize {
        self.text[..off.min(self.text.len())].matches('\n').count() + 1
    }

    fn err(&self, span: Range<usize>, key: &str, msg: impl std::fmt::Display) -> UserError {
        UserError(format!("{}:{}: key '{key}': {msg}", self.file, self.line(span.start)))
    }

    /// The key a TOML error points at: the name before the nearest `=` left of the error on
    /// its line (inline tables included), if any.
    fn key_at(&self, off: usize) -> Option<String> {
        let off = off.min(self.text.len());
        let start = self.text[..off].rfind('\n').map_or(0, |i| i + 1);
        let before = &self.text[start..off];
        let eq = before.rfind('=')?;
        let key: String = before[..eq].trim_end().chars().rev().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect();
        let key: String = key.chars().rev().collect();
        (!key.is_empty()).then_some(key)
    }

    fn toml_err(&self, e: &toml::de::Error) -> UserError {
        let msg = e.message().trim().replace('\n', " ");
        match e.span() {
            Some(sp) => {
                let named = msg.contains('`');
                match self.key_at(sp.start).filter(|_| !named) {
                    Some(k) => UserError(format!("{}:{}: key '{k}': {msg}", self.file, self.line(sp.start))),
                    None => UserError(format!("{}:{}: {msg}", self.file, self.line(sp.start))),
                }
            }
            None => UserError(format!("{}: {msg}", self.file)),
        }
    }
}

/// Row and variant names become directory names and compare variant names.
fn plain_name(s: &str) -> bool {
    !s.is_empty() && !s.starts_with('.') && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

/// The compare variant name of a feature spec: `+TTWU_QUEUE_IDLE` → `ttwu_queue_idle`,
/// `-CSD_POLL` → `no_csd_poll`, several joined by `.`.
pub fn default_variant_name(spec: &str) -> String {
    spec.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| match s.strip_prefix('-') {
            Some(n) => format!("no_{}", n.to_lowercase()),
            None => s.trim_start_matches('+').to_lowercase(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// Reads and checks one spec file.
pub fn load_file(path: &Path) -> Result<SpecFile, UserError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| UserError(format!("cannot read {shown}: {e}")))?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
    if !plain_name(&stem) {
        return Err(UserError(format!("{shown}: the file name must be letters, digits, '_', '-' or '.' (it names the reproduction)")));
    }
    parse(&text, &shown, &stem)
}

/// Parses spec text; `file` is what messages call it, `stem` the reproduction's name.
pub fn parse(text: &str, file: &str, stem: &str) -> Result<SpecFile, UserError> {
    let src = Src { file, text };
    let raw: RawFile = toml::from_str(text).map_err(|e| src.toml_err(&e))?;
    if raw.row.is_empty() {
        return Err(UserError(format!("{file}:1: key 'row': no [[row]] tables (each published figure is one)")));
    }
    let nonempty = |v: &Spanned<String>, key: &str| -> Result<String, UserError> {
        let s = v.get_ref().trim();
        if s.is_empty() {
            return Err(src.err(v.span(), key, "must not be empty"));
        }
        Ok(s.to_string())
    };
    let change = nonempty(&raw.change, "change")?;
    let mut rows = Vec::new();
    for r in &raw.row {
        let row_span = r.span();
        let r = r.get_ref();
        let name = nonempty(&r.name, "name")?;
        if !plain_name(&name) {
            return Err(src.err(r.name.span(), "name", format!("'{name}' must be letters, digits, '_', '-' or '.' (not starting with '.')")));
        }
        if rows.iter().any(|x: &Row| x.id == format!("{stem}/{name}")) {
            return Err(src.err(r.name.span(), "name", format!("row '{name}' is defined twice")));
        }
        let pick = |row: &Option<Spanned<String>>, file_v: &Option<Spanned<String>>, key: &str| -> Result<Option<(String, Range<usize>)>, UserError> {
            match row.as_ref().or(file_v.as_ref()) {
                Some(v) => Ok(Some((v.get_ref().trim().to_string(), v.span()))),
                None => Ok(None),
            }
            .and_then(|o: Option<(String, Range<usize>)>| match &o {
                Some((s, sp)) if s.is_empty() && key != "baseline" => Err(src.err(sp.clone(), key, "must not be empty")),
                _ => Ok(o),
            })
        };
        let need = |o: Option<(String, Range<usize>)>, key: &str| -> Result<(String, Range<usize>), UserError> {
            o.ok_or_else(|| UserError(format!("{file}:{}: key '{key}': missing in row '{name}' and at the top of the file", src.line(row_span.start))))
        };
        let (machine, machine_sp) = need(pick(&r.machine, &raw.machine, "machine")?, "machine")?;
        let m = resolve_machine(&machine).map_err(|e| src.err(machine_sp.clone(), "machine", e.0))?;
        let (kernel, kernel_sp) = need(pick(&r.kernel, &raw.kernel, "kernel")?, "kernel")?;
        parse_features(&kernel, None).map_err(|e| src.err(kernel_sp.clone(), "kernel", e.0))?;
        let (baseline, baseline_sp) = pick(&r.baseline, &raw.baseline, "baseline")?.unwrap_or((String::new(), row_span.clone()));
        let (variant, variant_sp) = need(pick(&r.variant, &raw.variant, "variant")?, "variant")?;
        let variant_name = match pick(&r.variant_name, &raw.variant_name, "variant_name")? {
            Some((n, sp)) => {
                if !plain_name(&n) || n == "baseline" {
                    return Err(src.err(sp, "variant_name", format!("'{n}' must be letters, digits, '_', '-' or '.', and not 'baseline'")));
                }
                n
            }
            None => default_variant_name(&variant),
        };
        let base = if baseline.is_empty() { None } else { Some(baseline.as_str()) };
        plan::variants(&kernel, base, &[format!("{variant_name}={variant}")]).map_err(|e| {
            let (key, sp) = if e.0.starts_with("--baseline") { ("baseline", baseline_sp.clone()) } else { ("variant", variant_sp.clone()) };
            src.err(sp, key, e.0)
        })?;
        let noise = match pick(&r.noise, &raw.noise, "noise")? {
            Some((n, sp)) => {
                resolve_noise(&m, Some(&n)).map_err(|e| src.err(sp, "noise", e.0))?;
                Some(n)
            }
            None => None,
        };
        let governor = match pick(&r.governor, &raw.governor, "governor")? {
            Some((g, sp)) => {
                resolve_governor(&m, Some(&g)).map_err(|e| src.err(sp, "governor", e.0))?;
                Some(g)
            }
            None => None,
        };
        let (source, _) = need(pick(&r.source, &raw.source, "source")?, "source")?;

        // The runs' size, full and quick.
        let size = |cmd: &Spanned<String>, copies: Option<&Spanned<u32>>, duration: Option<&Spanned<f64>>, fallback: Option<&Size>, prefix: &str| -> Result<Size, UserError> {
            let command = words(cmd.get_ref());
            if command.is_empty() {
                return Err(src.err(cmd.span(), &format!("{prefix}command"), "must not be empty"));
            }
            let copies_v = match copies {
                Some(c) if *c.get_ref() == 0 => return Err(src.err(c.span(), &format!("{prefix}copies"), "must be at least 1")),
                Some(c) => *c.get_ref(),
                None => fallback.map_or(1, |f| f.copies),
            };
            let duration_v = match duration {
                Some(d) => {
                    check_duration(*d.get_ref()).map_err(|e| src.err(d.span(), &format!("{prefix}duration"), e.0.trim_start_matches("--duration ")))?;
                    *d.get_ref()
                }
                None => fallback.map_or(60.0, |f| f.duration),
            };
            workload_copies(&command, &m, copies_v).map_err(|e| src.err(cmd.span(), &format!("{prefix}command"), e.0))?;
            Ok(Size { command, copies: copies_v, duration: duration_v })
        };
        let full = size(&r.command, r.copies.as_ref(), r.duration.as_ref(), None, "")?;
        let seed_count = |s: Option<&Spanned<u32>>, key: &str| match s {
            Some(s) if *s.get_ref() == 0 => Err(src.err(s.span(), key, "must be at least 1")),
            Some(s) => Ok(Some(*s.get_ref())),
            None => Ok(None),
        };
        let seeds = seed_count(r.seeds.as_ref(), "seeds")?;
        let (quick, quick_seeds) = match &r.quick {
            None => (full.clone(), None),
            Some(q) => {
                let q = q.get_ref();
                let cmd = q.command.as_ref().unwrap_or(&r.command);
                let seeds = seed_count(q.seeds.as_ref(), "quick.seeds")?;
                (size(cmd, q.copies.as_ref(), q.duration.as_ref(), Some(&full), "quick.")?, seeds)
            }
        };

        // What is read from each run.
        let (figure, figure_line) = match (&r.metric, &r.latency, &r.percentile) {
            (Some(m), None, None) => (Figure::Metric(Some(nonempty(m, "metric")?)), src.line(m.span().start)),
            (None, None, None) => (Figure::Metric(None), src.line(row_span.start)),
            (None, Some(l), Some(p)) => {
                let pv = *p.get_ref();
                if !CDF_PERCENTILES.contains(&pv) {
                    let known: Vec<String> = CDF_PERCENTILES.iter().map(|p| p.to_string()).collect();
                    return Err(src.err(p.span(), "percentile", format!("{pv} is not one the runs keep (one of {})", known.join(", "))));
                }
                (Figure::Latency { name: nonempty(l, "latency")?, percentile: pv }, src.line(l.span().start))
            }
            (None, Some(l), None) => return Err(src.err(l.span(), "percentile", "'latency' needs a 'percentile'")),
            (None, None, Some(p)) => return Err(src.err(p.span(), "latency", "'percentile' needs a 'latency' (the distribution's name)")),
            (Some(m), _, _) => return Err(src.err(m.span(), "metric", "give either 'metric' or 'latency' with 'percentile', not both")),
        };
        let scale = match r.scale.as_ref().map(|s| (s.get_ref().as_str(), s.span())) {
            None | Some(("percent", _)) => Scale::Percent,
            Some(("ratio", _)) => Scale::Ratio,
            Some((other, sp)) => return Err(src.err(sp, "scale", format!("'{other}' is not 'percent' or 'ratio'"))),
        };
        let direction = match r.direction.get_ref().as_str() {
            "lower" => Direction::Lower,
            "higher" => Direction::Higher,
            "neutral" => Direction::Neutral,
            other => return Err(src.err(r.direction.span(), "direction", format!("'{other}' is not 'lower', 'higher' or 'neutral'"))),
        };
        let band_sp = r.band.span();
        let band = match r.band.get_ref().as_slice() {
            [lo, hi] if !lo.is_nan() && !hi.is_nan() && lo < hi => (*lo, *hi),
            [lo, hi] if !lo.is_nan() && !hi.is_nan() => return Err(src.err(band_sp, "band", format!("the lower bound {lo} must be below the upper bound {hi}"))),
            _ => return Err(src.err(band_sp, "band", "must be two numbers [low, high] (inf and -inf for open ends)")),
        };
        let (no_change, unit_word) = match scale {
            Scale::Percent => (0.0, "percent"),
            Scale::Ratio => (1.0, "ratio"),
        };
        if scale == Scale::Ratio && band.0 < 0.0 {
            return Err(src.err(band_sp, "band", "a ratio band cannot go below 0"));
        }
        let consistent = match direction {
            Direction::Lower => band.1 <= no_change,
            Direction::Higher => band.0 >= no_change,
            Direction::Neutral => band.0 <= no_change && no_change <= band.1,
        };
        if !consistent {
            return Err(src.err(
                band_sp,
                "band",
                format!("[{}, {}] ({unit_word}) does not fit direction '{}' (no change is {no_change})", band.0, band.1, direction.word()),
            ));
        }
        let p = r.published.get_ref();
        if p.baseline.is_none() && p.variant.is_none() && p.change.is_none() && p.text.as_deref().map_or(true, |t| t.trim().is_empty()) {
            return Err(src.err(r.published.span(), "published", "give at least one of baseline, variant, change, text"));
        }
        if p.variant.is_some() && p.baseline.is_none() {
            return Err(src.err(r.published.span(), "published", "a published variant value needs the baseline value beside it"));
        }
        let published = Published { baseline: p.baseline, variant: p.variant, change: p.change, text: p.text.clone() };
        let compare_level = match &r.compare_level {
            Some(c) if *c.get_ref() && p.baseline.is_none() => return Err(src.err(c.span(), "compare_level", "needs a published baseline value")),
            Some(c) => *c.get_ref(),
            None => p.baseline.is_some(),
        };
        let statistic = nonempty(&r.statistic, "statistic")?;
        rows.push(Row {
            id: format!("{stem}/{name}"),
            file: file.to_string(),
            line: src.line(row_span.start),
            figure_line,
            change: change.clone(),
            benchmark: r.benchmark.trim().to_string(),
            machine,
            kernel,
            baseline,
            variant,
            variant_name,
            noise,
            governor,
            full,
            quick,
            seeds,
            quick_seeds,
            figure,
            unit: r.unit.clone(),
            scale,
            published,
            statistic,
            source,
            direction,
            band,
            cause: r.cause.as_ref().map(|c| c.trim().to_string()).filter(|c| !c.is_empty()),
            notes: r.notes.as_ref().map(|c| c.trim().to_string()).filter(|c| !c.is_empty()),
            compare_level,
        });
    }
    Ok(SpecFile {
        order: raw.order.unwrap_or(i64::MAX),
        stem: stem.to_string(),
        change,
        title: raw.title.trim().to_string(),
        author: raw.author.trim().to_string(),
        date: raw.date.trim().to_string(),
        notes: raw.notes.map(|n| n.trim().to_string()).filter(|n| !n.is_empty()),
        rows,
    })
}

/// The spec directory: `--specs DIR`, else `./reproduce` if it exists, else the source tree's.
pub fn spec_dir(given: Option<&Path>) -> Result<PathBuf, UserError> {
    if let Some(d) = given {
        if !d.is_dir() {
            return Err(UserError(format!("--specs {}: not a directory", d.display())));
        }
        return Ok(d.to_path_buf());
    }
    let here = PathBuf::from("reproduce");
    if here.is_dir() {
        return Ok(here);
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reproduce");
    if built.is_dir() {
        return Ok(built);
    }
    Err(UserError("no reproduction specs: there is no ./reproduce directory (run from the wakesim source tree, or pass --specs DIR)".into()))
}

/// Every `*.toml` in `dir`, sorted by name, read and checked.
pub fn load_dir(dir: &Path) -> Result<Vec<SpecFile>, UserError> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| UserError(format!("cannot read {}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(UserError(format!("{}: no reproduction specs (*.toml)", dir.display())));
    }
    let mut specs = paths.iter().map(|p| load_file(p)).collect::<Result<Vec<_>, _>>()?;
    specs.sort_by(|a, b| (a.order, &a.stem).cmp(&(b.order, &b.stem)));
    Ok(specs)
}

/// The rows `names` select (a file's stem: all its rows; `STEM/ROW`: one), in spec order;
/// every row when `names` is empty. An unknown name lists the known ones.
pub fn select<'a>(specs: &'a [SpecFile], names: &[String]) -> Result<Vec<&'a Row>, UserError> {
    let all: Vec<&Row> = specs.iter().flat_map(|s| s.rows.iter()).collect();
    if names.is_empty() {
        return Ok(all);
    }
    for n in names {
        if !specs.iter().any(|s| &s.stem == n) && !all.iter().any(|r| &r.id == n) {
            let mut known = Vec::new();
            for s in specs {
                known.push(s.stem.clone());
                known.extend(s.rows.iter().map(|r| r.id.clone()));
            }
            return Err(UserError(format!("unknown reproduction '{n}' (known: {})", known.join(", "))));
        }
    }
    Ok(all.into_iter().filter(|r| names.iter().any(|n| &r.id == n || r.id.split('/').next() == Some(n.as_str()))).collect())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal valid spec on the small test machine (other modules' tests start from it too).
    pub(crate) const GOOD: &str = r#"
change = "SM_IDLE"
title = "t"
author = "a"
date = "2024"
machine = "test-2x4"
kernel = "v6.7"
variant = "+SM_IDLE"
source = "https://example.org/post"

[[row]]
name = "ipistorm"
benchmark = "ipistorm"
command = "ipistorm numipi=100 single=1 offset=1 cpulist=1 wait=1"
scale = "ratio"
published = { change = 0.25 }
statistic = "mean of 10 runs"
direction = "lower"
band = [0.2, 0.95]
quick = { command = "ipistorm numipi=10 single=1 offset=1 cpulist=1 wait=1", seeds = 1 }
"#;

    fn err(text: &str) -> String {
        parse(text, "x.toml", "x").unwrap_err().0
    }

    #[test]
    fn a_good_spec_reads_with_its_defaults() {
        let s = parse(GOOD, "x.toml", "x").unwrap();
        let r = &s.rows[0];
        assert_eq!(r.id, "x/ipistorm");
        assert_eq!(r.variant_name, "sm_idle");
        assert_eq!(r.figure, Figure::Metric(None));
        assert_eq!((r.full.copies, r.full.duration), (1, 60.0));
        assert_eq!(r.quick.command[1], "numipi=10");
        assert_eq!(r.quick_seeds, Some(1));
        assert!(!r.compare_level, "no published absolute value");
        assert_eq!(r.line, 11);
    }

    #[test]
    fn a_row_may_ask_for_more_seeds_but_not_for_none() {
        assert_eq!(parse(GOOD, "x.toml", "x").unwrap().rows[0].seeds, None);
        let s = parse(&GOOD.replace("scale = \"ratio\"", "scale = \"ratio\"\nseeds = 15"), "x.toml", "x").unwrap();
        assert_eq!((s.rows[0].seeds, s.rows[0].quick_seeds), (Some(15), Some(1)));
        let e = err(&GOOD.replace("scale = \"ratio\"", "scale = \"ratio\"\nseeds = 0"));
        assert!(e.starts_with("x.toml:16: key 'seeds': must be at least 1"), "{e}");
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_key() {
        let e = err(&GOOD.replace("band = [0.2, 0.95]", "band = [0.95, 0.2]"));
        assert!(e.starts_with("x.toml:19: key 'band':"), "{e}");
        let e = err(&GOOD.replace("band = [0.2, 0.95]", "band = [1.2, 1.5]"));
        assert!(e.contains("key 'band'") && e.contains("direction 'lower'"), "{e}");
        let e = err(&GOOD.replace("direction = \"lower\"", "direction = \"down\""));
        assert!(e.starts_with("x.toml:18: key 'direction':"), "{e}");
        let e = err(&GOOD.replace("band = [0.2, 0.95]", "band = \"wide\""));
        assert!(e.starts_with("x.toml:19: key 'band':"), "{e}");
        let e = err(&GOOD.replace("statistic =", "statistik ="));
        assert!(e.starts_with("x.toml:") && e.contains("statistik"), "{e}");
        let e = err(&GOOD.replace("variant = \"+SM_IDLE\"", "variant = \"+NO_SUCH\""));
        assert!(e.starts_with("x.toml:8: key 'variant':") && e.contains("NO_SUCH"), "{e}");
        let e = err(&GOOD.replace("machine = \"test-2x4\"", "machine = \"no-such-box\""));
        assert!(e.starts_with("x.toml:6: key 'machine':"), "{e}");
        let e = err(&GOOD.replace("numipi=10 ", "numipi=lots "));
        assert!(e.starts_with("x.toml:20: key 'quick.command':"), "{e}");
        let e = err(&GOOD.replace("published = { change = 0.25 }", "published = { change = \"a lot\" }"));
        assert!(e.starts_with("x.toml:16: key 'change':"), "{e}");
        let e = err(&GOOD.replace("scale = \"ratio\"", "scale = \"ratio\"\nlatency = \"Wakeup Latencies\""));
        assert!(e.contains("key 'percentile'"), "{e}");
    }

    #[test]
    fn names_select_files_or_rows_and_unknown_names_list_the_known_ones() {
        let specs = vec![parse(GOOD, "x.toml", "x").unwrap()];
        assert_eq!(select(&specs, &[]).unwrap().len(), 1);
        assert_eq!(select(&specs, &["x".into()]).unwrap().len(), 1);
        assert_eq!(select(&specs, &["x/ipistorm".into()]).unwrap().len(), 1);
        let e = select(&specs, &["y".into()]).unwrap_err().0;
        assert_eq!(e, "unknown reproduction 'y' (known: x, x/ipistorm)");
    }

    #[test]
    fn variant_names_come_from_the_feature_spec() {
        assert_eq!(default_variant_name("+TTWU_QUEUE_IDLE"), "ttwu_queue_idle");
        assert_eq!(default_variant_name("-CSD_POLL"), "no_csd_poll");
        assert_eq!(default_variant_name("+A,-B"), "a.no_b");
    }
}
