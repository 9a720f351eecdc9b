//! The judgement of each row against its published figure, and the markdown document:
//! the table, the rows outside their band with their causes, the specs' notes, the commands.
//! Nothing in it depends on the clock or the checkout (docs/results.md is this text).

use super::run::{median_min_max, Experiment, Measured};
use super::spec::{Direction, Row, Scale, SpecFile};
use std::fmt::Write;

/// One row, run and judged.
#[derive(Debug)]
pub struct Judged<'a> {
    pub row: &'a Row,
    /// The experiment's label (`C3`).
    pub exp: String,
    pub m: Measured,
    pub base: (f64, f64, f64),
    pub var: (f64, f64, f64),
    pub change: (f64, f64, f64),
    /// `None` for a neutral row (only its size is judged).
    pub direction_ok: Option<bool>,
    pub in_band: bool,
    /// wakesim / published for the baseline and (if published) the variant, and whether both
    /// are within 2×.
    pub level: Option<(f64, Option<f64>, bool)>,
}

impl Judged<'_> {
    pub fn wrong(&self) -> bool {
        !self.in_band || self.direction_ok == Some(false)
    }

    pub fn unexplained(&self) -> bool {
        self.wrong() && self.row.cause.is_none()
    }
}

/// `comparable`: the runs had the published setup's size (not `--quick`'s), so absolute
/// levels mean something.
pub fn judge<'a>(row: &'a Row, exp: String, m: Measured, comparable: bool) -> Judged<'a> {
    let base = median_min_max(&m.baseline);
    let var = median_min_max(&m.variant);
    let change = median_min_max(&m.change);
    let none = match row.scale {
        Scale::Percent => 0.0,
        Scale::Ratio => 1.0,
    };
    let c = change.0;
    let direction_ok = match row.direction {
        Direction::Neutral => None,
        _ if c.is_nan() => Some(false),
        Direction::Lower => Some(c < none),
        Direction::Higher => Some(c > none),
    };
    let in_band = !c.is_nan() && row.band.0 <= c && c <= row.band.1;
    let level = match (row.compare_level && comparable, row.published.baseline) {
        (true, Some(pb)) => {
            let rb = base.0 / pb;
            let rv = row.published.variant.map(|pv| var.0 / pv);
            let within = |r: f64| (0.5..=2.0).contains(&r);
            Some((rb, rv, within(rb) && rv.map_or(true, within)))
        }
        _ => None,
    };
    Judged { row, exp, m, base, var, change, direction_ok, in_band, level }
}

/// A number as the tables show it: integers with thousands separators, else 4 significant
/// digits; a minus sign, not a hyphen.
pub fn num(v: f64) -> String {
    if v.is_nan() {
        return "n/a".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "∞".into() } else { "−∞".into() };
    }
    let decimals = if v.fract() == 0.0 || v.abs() >= 1000.0 { 0 } else { (3 - v.abs().log10().floor() as i32).clamp(0, 6) as usize };
    let s = format!("{:.*}", decimals, v.abs());
    let (int, frac) = s.split_once('.').map_or((s.as_str(), None), |(i, f)| (i, Some(f)));
    let mut grouped = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    let sign = if v < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0') { "−" } else { "" };
    match frac.map(|f| f.trim_end_matches('0')).filter(|f| !f.is_empty()) {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// A published value as the spec gives it (shortest exact form, thousands grouped).
fn exact(v: f64) -> String {
    let s = format!("{}", v.abs());
    let (int, frac) = s.split_once('.').map_or((s.as_str(), None), |(i, f)| (i, Some(f)));
    let grouped = if int.len() > 4 { num(int.parse::<f64>().unwrap_or(0.0)) } else { int.to_string() };
    let sign = if v < 0.0 { "−" } else { "" };
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// A published change as the post gives it (up to two decimals).
fn published_change(v: f64, scale: Scale) -> String {
    match scale {
        Scale::Percent => {
            let s = format!("{:+.2}", v);
            let s = s.trim_end_matches('0').trim_end_matches('.');
            format!("{s} %").replacen('-', "−", 1)
        }
        Scale::Ratio => format!("{v:.2}×"),
    }
}

/// A change in the row's scale: `+11.2 %` or `0.55×`.
pub fn change(v: f64, scale: Scale) -> String {
    if v.is_nan() {
        return "n/a".into();
    }
    match scale {
        Scale::Percent => {
            let s = format!("{:+.1}", v);
            if s.trim_start_matches(['+', '-']) == "0.0" {
                return "0.0 %".into();
            }
            format!("{s} %").replacen('-', "−", 1)
        }
        Scale::Ratio => format!("{v:.2}×"),
    }
}

fn bound(v: f64, scale: Scale) -> String {
    match scale {
        Scale::Percent => format!("{:+} %", v).replacen('-', "−", 1),
        Scale::Ratio => format!("{v}×"),
    }
}

/// The accepted band: `[−40 %, −20 %]`, `≤ −10 %`, `≥ +5 %`, `[0.45×, 0.7×]`.
pub fn band(row: &Row) -> String {
    let (lo, hi) = row.band;
    match (lo.is_infinite(), hi.is_infinite()) {
        (true, false) => format!("≤ {}", bound(hi, row.scale)),
        (false, true) => format!("≥ {}", bound(lo, row.scale)),
        _ => format!("[{}, {}]", bound(lo, row.scale), bound(hi, row.scale)),
    }
}

/// URLs in free text become autolinks.
fn links(s: &str) -> String {
    s.split(' ').map(|w| if w.starts_with("https://") || w.starts_with("http://") { format!("<{w}>") } else { w.to_string() }).collect::<Vec<_>>().join(" ")
}

/// Table cells hold no newlines or pipes.
fn cell(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

/// The published change alone (the post's text for a neutral row): `−40.0 %`, `0.55×`.
pub fn published_change_of(row: &Row) -> String {
    let p = &row.published;
    match (&p.text, p.baseline, p.variant, p.change) {
        (_, _, _, Some(c)) => published_change(c, row.scale),
        (None, Some(b), Some(v), None) => change(
            match row.scale {
                Scale::Percent => (v / b - 1.0) * 100.0,
                Scale::Ratio => v / b,
            },
            row.scale,
        ),
        (Some(t), ..) => cell(t.trim()),
        _ => "—".into(),
    }
}

fn unit_of(j: &Judged) -> String {
    j.row.unit.clone().unwrap_or_else(|| match j.m.unit.as_str() {
        "usec" | "us" => "µs".into(),
        u => u.into(),
    })
}

fn published(j: &Judged) -> String {
    let p = &j.row.published;
    let fig = match (&p.text, p.baseline, p.variant, p.change) {
        (Some(t), ..) => t.trim().to_string(),
        (None, Some(b), Some(v), c) => {
            let c = match c {
                Some(c) => published_change(c, j.row.scale),
                None => change(
                    match j.row.scale {
                        Scale::Percent => (v / b - 1.0) * 100.0,
                        Scale::Ratio => v / b,
                    },
                    j.row.scale,
                ),
            };
            format!("{} → {} {} ({c})", exact(b), exact(v), unit_of(j))
        }
        (None, Some(b), None, Some(c)) => format!("{} {} ({})", exact(b), unit_of(j), published_change(c, j.row.scale)),
        (None, _, _, Some(c)) => published_change(c, j.row.scale),
        (None, Some(b), None, None) => format!("{} {}", exact(b), unit_of(j)),
        (None, None, _, None) => String::new(),
    };
    cell(&format!("{fig}; {}; {}", j.row.statistic, links(&j.row.source)))
}

fn spread((med, lo, hi): (f64, f64, f64)) -> String {
    if num(lo) == num(hi) {
        num(med)
    } else {
        format!("{} ({} … {})", num(med), num(lo), num(hi))
    }
}

fn change_spread((med, lo, hi): (f64, f64, f64), scale: Scale) -> String {
    if change(lo, scale) == change(hi, scale) {
        change(med, scale)
    } else {
        format!("{} ({} … {})", change(med, scale), change(lo, scale), change(hi, scale))
    }
}

fn level(j: &Judged) -> String {
    match j.level {
        None => "—".into(),
        Some((rb, rv, within)) => {
            let r = |x: f64| format!("{x:.2}×");
            let both = match rv {
                Some(v) => format!("{}, {}", r(rb), r(v)),
                None => r(rb),
            };
            format!("{both}: {}", if within { "within 2×" } else { "**outside 2×**" })
        }
    }
}

fn direction(j: &Judged) -> String {
    match j.direction_ok {
        None => "— (neutral)".into(),
        Some(true) => format!("✓ {}", j.row.direction.word()),
        Some(false) => format!("**✗** (published {})", j.row.direction.word()),
    }
}

/// `; N seeds` after a row's change when the rows ran different numbers of seeds and this one
/// did not run the default (5, or 2 with `--quick`): its spec's `seeds` or `quick.seeds`.
fn seed_count(j: &Judged, ctx: &Context) -> String {
    let n = j.m.change.len() as u32;
    let default = if ctx.quick { super::run::QUICK_SEEDS } else { super::run::SEEDS };
    match n {
        _ if ctx.seeds.0 == ctx.seeds.1 || n == default => String::new(),
        1 => "; 1 seed".into(),
        n => format!("; {n} seeds"),
    }
}

/// What a document's header says about how it was made.
pub struct Context<'a> {
    /// The command that wrote it, as the user typed it (without `--out`/`--jobs`).
    pub command: String,
    pub quick: bool,
    /// Seeds per row (min, max over rows).
    pub seeds: (u32, u32),
    /// Which rows ran (None: every spec's rows).
    pub subset: bool,
    pub specs: &'a [SpecFile],
    /// Link prefix from the document to the repository's root (`../` for docs/results.md).
    pub root: String,
}

/// The markdown document.
pub fn document(ctx: &Context, judged: &[Judged], exps: &[Experiment]) -> String {
    let mut s = String::new();
    let seeds = if ctx.seeds.0 == ctx.seeds.1 { format!("{}", ctx.seeds.0) } else { format!("{}–{}", ctx.seeds.0, ctx.seeds.1) };
    let _ = writeln!(s, "# The changes against their published results\n");
    let _ = writeln!(
        s,
        "Generated by `{}` from the reproduction specs in [`reproduce/`]({root}reproduce/) (their format: \
         [reproduce/README.md]({root}reproduce/README.md)). Do not edit it by hand: change a spec and run the \
         command again.{}",
        ctx.command,
        if ctx.quick { " **`--quick`: reduced sizes (each spec's `quick` table), not the published setups.**" } else { "" },
        root = ctx.root
    );
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "Each row is one published figure: its change on the machine and kernel profile it was published on, \
         {seeds} seeds per row (seeds 1 to N), the baseline and the variant paired seed by seed (`wakesim compare`'s \
         common random numbers). Every machine runs its defaults: the `server` background activity \
         ([docs/noise.md]({root}docs/noise.md)), its preset's cpuidle governor, and the benchmark in its session's \
         autogroup as a distribution kernel runs it (`--cgroup`), unless the spec says otherwise.{}",
        if ctx.subset { " Only the rows named on the command line ran." } else { "" },
        root = ctx.root
    );
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "How to read it: *wakesim* is the median over the seeds (min–max) of the baseline → the variant; *change* is the \
         median of the per-seed paired changes (min–max), in percent or as a ratio as the post gives it; *direction* ✓ \
         when that median moves the way the published figure did (neutral rows are judged by size only); *size* \
         whether it lies in the accepted band, which each spec derives from the published figures; *level* the \
         wakesim medians over the published absolute values, where the post gives them for the same setup (within 2× \
         or not). A row outside its band or in the wrong direction carries its spec's written cause below, or is \
         marked UNEXPLAINED. Hand-written analysis of the rows: [docs/results-notes.md]({root}docs/results-notes.md).",
        root = ctx.root
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "| row | setup | published (statistic, source) | wakesim: baseline → variant | change | direction | size (band) | level | cmd |");
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|");
    for j in judged {
        let r = j.row;
        let setup = format!(
            "{}, {}, {}{}",
            r.machine,
            r.kernel,
            if r.baseline.is_empty() { String::new() } else { format!("{} vs ", r.baseline) },
            r.variant
        );
        let size = format!("{} {}", if j.in_band { "within" } else { "**outside**" }, band(r));
        let _ = writeln!(
            s,
            "| `{}`<br>{} | {} | {} | {} → {} {} | {} | {} | {} | {} | {} |",
            r.id,
            cell(&r.benchmark),
            cell(&setup),
            published(j),
            spread(j.base),
            spread(j.var),
            unit_of(j),
            change_spread(j.change, r.scale) + &seed_count(j, ctx),
            direction(j),
            size,
            level(j),
            j.exp
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "## Rows outside their band or in the wrong direction\n");
    let wrong: Vec<&Judged> = judged.iter().filter(|j| j.wrong()).collect();
    if wrong.is_empty() {
        let _ = writeln!(s, "None.");
    }
    for j in &wrong {
        let what = match (j.in_band, j.direction_ok) {
            (false, Some(false)) => "wrong direction, outside its band",
            (true, Some(false)) => "wrong direction",
            _ => "outside its band",
        };
        match &j.row.cause {
            Some(c) => {
                let _ = writeln!(s, "- `{}` ({what}): {}", j.row.id, c.split_whitespace().collect::<Vec<_>>().join(" "));
            }
            None => {
                let _ = writeln!(s, "- `{}` ({what}): **UNEXPLAINED** — its `[[row]]` (`{}`, line {}) has no `cause`.", j.row.id, j.row.file_name(), j.row.line);
            }
        }
    }
    let stale: Vec<&Judged> = judged.iter().filter(|j| !j.wrong() && j.row.cause.is_some()).collect();
    if !stale.is_empty() {
        let _ = writeln!(s, "\nWithin their band now, though their spec still gives a cause (to be reviewed):\n");
        for j in stale {
            let _ = writeln!(s, "- `{}`: {}", j.row.id, j.row.cause.as_deref().unwrap_or("").split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "## Notes from the specs\n");
    for f in ctx.specs {
        let rows: Vec<&Judged> = judged.iter().filter(|j| j.row.id.split('/').next() == Some(f.stem.as_str())).collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(s, "### {} — {}, “{}”, {}\n", f.change, f.author, f.title, f.date);
        if let Some(n) = &f.notes {
            let _ = writeln!(s, "{}\n", paragraphs(n));
        }
        let noted: Vec<&&Judged> = rows.iter().filter(|j| j.row.notes.is_some()).collect();
        for j in &noted {
            let _ = writeln!(s, "- `{}`: {}", j.row.id, j.row.notes.as_deref().unwrap_or("").split_whitespace().collect::<Vec<_>>().join(" "));
        }
        if !noted.is_empty() {
            let _ = writeln!(s);
        }
    }
    let _ = writeln!(s, "## Commands\n");
    let _ = writeln!(
        s,
        "Each experiment is one `wakesim compare`; with `--out DIR` it also writes every run's own `wakesim run` \
         line (`DIR/commands.txt`) and its data. `wakesim reproduce --out DIR` keeps them all, one directory per \
         experiment, and resumes from them.\n"
    );
    for e in exps {
        let rows: Vec<String> = e.rows.iter().map(|r| format!("`{r}`")).collect();
        let _ = writeln!(s, "{} ({}):\n", e.label, rows.join(", "));
        let _ = writeln!(s, "```sh\n{}\n```\n", e.command_line());
    }
    s.trim_end().to_string() + "\n"
}

/// Free text with its blank-line paragraphs kept and other line breaks joined.
fn paragraphs(t: &str) -> String {
    t.split("\n\n").map(|p| p.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|p| !p.is_empty()).collect::<Vec<_>>().join("\n\n")
}

impl Row {
    /// The spec file's name (no directory: the document must not depend on where it ran).
    fn file_name(&self) -> String {
        std::path::Path::new(&self.file).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| self.file.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_the_posts_write_them() {
        assert_eq!(num(3221686.4), "3,221,686");
        assert_eq!(num(4.065), "4.065");
        assert_eq!(num(0.0935), "0.0935");
        assert_eq!(num(16.5), "16.5");
        assert_eq!(published_change(11.25, Scale::Percent), "+11.25 %");
        assert_eq!(exact(3221686.4), "3,221,686.4");
        assert_eq!(exact(1.2703), "1.2703");
        assert_eq!(exact(2.25), "2.25");
        assert_eq!(published_change(-30.0, Scale::Percent), "−30 %");
        assert_eq!(num(12.0), "12");
        assert_eq!(num(-1234.6), "−1,235");
        assert_eq!(change(-6.54, Scale::Percent), "−6.5 %");
        assert_eq!(change(85.2, Scale::Percent), "+85.2 %");
        assert_eq!(change(-0.002, Scale::Percent), "0.0 %");
        assert_eq!(change(0.554, Scale::Ratio), "0.55×");
    }
}
