//! `wakesim reproduce`: the table's structure in `--quick` mode on the repository's cheapest
//! specs (every row present, the published column filled, the printed compare command gives
//! the same figures when run on its own), `--write-docs`, resume, `--list` over every spec,
//! `--strict`, and bad input. Nothing here depends on the model's current numbers: the strict
//! test compares a variant with itself, whose change is exactly zero.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The repository's reproduction specs.
fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reproduce")
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

/// The table's body rows (after the header and the separator).
fn table_rows(doc: &str) -> Vec<Vec<String>> {
    doc.lines()
        .skip_while(|l| !l.starts_with("| row |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect())
        .collect()
}

/// The fenced command of experiment `label` in the Commands section.
fn command_of(doc: &str, label: &str) -> String {
    let at = doc.find(&format!("\n{label} (")).unwrap_or_else(|| panic!("no {label} in\n{doc}"));
    let rest = &doc[at..];
    let start = rest.find("```sh\n").unwrap() + 6;
    rest[start..start + rest[start..].find('\n').unwrap()].to_string()
}

/// Every `run-*.json` under `dir` with its modification time: a run written again (a new
/// file renamed into place) changes it.
fn run_files(dir: &Path) -> Vec<(PathBuf, std::time::SystemTime)> {
    entries_under(dir)
        .into_iter()
        .filter(|p| p.is_file() && p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .map(|p| {
            let t = std::fs::metadata(&p).unwrap().modified().unwrap();
            (p, t)
        })
        .collect()
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The row ids of every spec in the repository, in file order, from the files themselves.
fn repo_row_ids() -> Vec<String> {
    spec_values("name").into_iter().map(|(stem, n)| format!("{stem}/{n}")).collect()
}

/// Every `KEY = "…"` line that opens a line of the repository's specs, with its spec's stem:
/// a row's `name` or its full-size `command` (the `--quick` one sits inside `quick = { … }`).
fn spec_values(key: &str) -> Vec<(String, String)> {
    let prefix = format!("{key} = \"");
    let mut out = Vec::new();
    for e in std::fs::read_dir(spec_dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let stem = p.file_stem().unwrap().to_str().unwrap().to_string();
            let spec = std::fs::read_to_string(&p).unwrap();
            out.extend(spec.lines().filter_map(|l| l.strip_prefix(prefix.as_str())).map(|v| (stem.clone(), v.trim_end_matches('"').to_string())));
        }
    }
    out
}

/// `wakesim reproduce --quick`, every spec of the repository: the CI run.
#[test]
fn quick_table_has_every_row_filled_and_its_commands_reproduce_it() {
    let d = TempDir::new("repro-quick");
    let out = d.join("out");
    let specs = spec_dir();
    let args = ["reproduce", "--quick", "--specs", s(&specs), "--out", s(&out)];
    let doc = ok(&args);
    assert!(doc.starts_with("# The changes against their published results\n"), "{doc}");
    assert!(doc.contains("`--quick`: reduced sizes"), "quick mode says so");
    let rows = table_rows(&doc);
    let mut ids: Vec<String> = rows.iter().map(|r| r[0].split("<br>").next().unwrap().trim_matches('`').to_string()).collect();
    let mut want = repo_row_ids();
    ids.sort();
    want.sort();
    assert_eq!(ids, want, "every row of every spec, once");
    for r in &rows {
        assert_eq!(r.len(), 9, "{r:?}");
        assert!(r[2].contains("https://lore.kernel.org/") && r[2].split("; ").count() >= 3, "published column (figure; statistic; source): {r:?}");
        assert!(r[3].contains(" → ") && !r[3].contains("n/a"), "wakesim column: {r:?}");
        assert!(r[4].contains('%') || r[4].contains('×'), "change: {r:?}");
        assert!(["✓", "✗", "—"].iter().any(|m| r[5].contains(m)), "direction: {r:?}");
        assert!(r[6].starts_with("within") || r[6].starts_with("**outside**"), "size: {r:?}");
        assert!(r[7] == "—" || r[7].contains("2×"), "level: {r:?}");
        assert!(r[8].starts_with('C') && doc.contains(&format!("\n{} (", r[8])), "command label: {r:?}");
    }
    assert!(doc.contains("## Rows outside their band or in the wrong direction"));
    assert!(!doc.contains(s(d.path())), "no temporary path in the document");

    // The printed compare command, run on its own, gives the figures the table was made of.
    let json = read_json(&out.join("reproduce.json"));
    let row = json["rows"].as_array().unwrap().iter().find(|r| r["id"] == "newidle-skip-ipi/ipistorm-revert").unwrap();
    let cmd = command_of(&doc, row["experiment"].as_str().unwrap());
    assert!(cmd.starts_with("wakesim compare --machine epyc-9754 --kernel v6.7 --variant newidle_skip_ipi=+NEWIDLE_SKIP_IPI --variant no_csd_poll=-CSD_POLL --runs 2 --seed 1"), "{cmd}");
    let again = d.join("again");
    let mut argv: Vec<&str> = cmd.split(' ').skip(1).collect();
    let dash = argv.iter().position(|a| *a == "--").unwrap();
    argv.splice(dash..dash, ["--out", s(&again)]);
    ok(&argv);
    let values = |variant: &str| -> Vec<f64> {
        (0..2).map(|k| read_json(&again.join(format!("runs/{variant}/all/run-{k}.json")))["record"]["metrics"][0]["value"].as_f64().unwrap()).collect()
    };
    let as_f64 = |v: &Value| -> Vec<f64> { v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect() };
    assert_eq!(values("baseline"), as_f64(&row["baseline_values"]));
    assert_eq!(values("no_csd_poll"), as_f64(&row["variant_values"]));
    // The same median, to within floating-point rounding.
    let (m, kept_m) = (median(&values("no_csd_poll")), row["variant_median"].as_f64().unwrap());
    assert!((m - kept_m).abs() <= 1e-8 * m.abs(), "{m} vs {kept_m}");
    // And the compare directory reproduce kept is that same experiment.
    let kept = out.join("newidle-skip-ipi/ipistorm-skip-ipi");
    assert_eq!(read_json(&kept.join("experiment.json"))["experiment"], read_json(&again.join("experiment.json"))["experiment"]);
    assert!(kept.join("commands.txt").exists() && kept.join("summary.csv").exists());

    // Rerunning on the same --out resumes: nothing runs again (every run file is the one the
    // first pass wrote, untouched), the same table comes out.
    let before = run_files(&out.join("sis-filter"));
    assert!(!before.is_empty(), "the first pass kept its runs");
    let mut one = args.to_vec();
    one.push("sis-filter");
    let again = ok(&one);
    assert_eq!(run_files(&out.join("sis-filter")), before, "resumed, not rerun");
    let no_label = |r: &Vec<String>| r[..8].to_vec();
    assert_eq!(table_rows(&again).iter().map(no_label).collect::<Vec<_>>(), rows.iter().filter(|r| r[0].starts_with("`sis-filter/")).map(no_label).collect::<Vec<_>>());
}

/// docs/results.md is `wakesim reproduce --write-docs docs/results.md`'s output: a spec row
/// added without regenerating it shows here. Its figures and verdicts are the model's and are
/// not checked (`--strict` is the check for UNEXPLAINED rows).
#[test]
fn docs_results_md_is_the_generated_table_of_every_spec_row() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results.md")).unwrap();
    assert!(doc.contains("Generated by `wakesim reproduce --write-docs docs/results.md`"), "docs/results.md is not the generated document");
    assert!(!doc.contains("--quick"), "docs/results.md was generated with --quick");
    let mut ids: Vec<String> = table_rows(&doc).iter().map(|r| r[0].split("<br>").next().unwrap().trim_matches('`').to_string()).collect();
    let mut want = repo_row_ids();
    ids.sort();
    want.sort();
    assert_eq!(ids, want, "docs/results.md has not been regenerated since the specs changed");
    // A row's command line changed in its spec (a loop count, a flag) and the document not
    // regenerated: its Commands section still runs the old one.
    let cmds = spec_values("command");
    assert!(cmds.len() >= 10, "the specs' rows have commands: {cmds:?}");
    for (_, cmd) in cmds {
        assert!(doc.contains(&format!(" -- {cmd}\n")), "docs/results.md does not run `{cmd}`: regenerate it");
    }
}

#[test]
fn write_docs_writes_the_generated_document_with_links_from_where_it_lives() {
    let d = TempDir::new("repro-docs");
    std::fs::create_dir(d.join("docs")).unwrap();
    let o = wakesim_in(Some(d.path()), &["reproduce", "sm-idle", "--quick", "--seeds", "1", "--write-docs", "docs/results.md"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let file = std::fs::read_to_string(d.join("docs/results.md")).unwrap();
    assert_eq!(file, stdout(&o), "stdout is the document");
    assert!(file.contains("Generated by `wakesim reproduce sm-idle --quick --seeds 1 --write-docs docs/results.md`"), "{file}");
    assert!(file.contains("](../reproduce/README.md)") && file.contains("](../docs/noise.md)"), "links from docs/: {file}");
    assert!(file.contains("1 seeds per row") || file.contains("1 seed"), "{file}");
    assert!(file.contains("## Commands") && file.contains("--runs 1 --seed 1"), "{file}");
    let rejected = wakesim(&["reproduce", "sm-idle", "--quick", "--write-docs", s(&d.join("no/such/dir/results.md"))]);
    assert_one_line_error(&rejected, "unwritable --write-docs");
}

#[test]
fn list_names_every_row_of_every_spec() {
    let specs = spec_dir();
    let text = ok(&["reproduce", "--list", "--specs", s(&specs)]);
    let mut rows = 0;
    for e in std::fs::read_dir(spec_dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let stem = p.file_stem().unwrap().to_str().unwrap().to_string();
            let spec = std::fs::read_to_string(&p).unwrap();
            assert!(text.lines().any(|l| l.starts_with(&format!("{stem}  "))), "{stem} missing:\n{text}");
            for name in spec.lines().filter_map(|l| l.strip_prefix("name = \"")).map(|n| n.trim_end_matches('"')) {
                assert!(text.contains(&format!("  {stem}/{name} ")), "{stem}/{name} missing:\n{text}");
                rows += 1;
            }
        }
    }
    assert_eq!(text.lines().filter(|l| l.starts_with("  ")).count(), rows);
}

/// A spec on the small test machine whose variant turns on a feature v6.5 already has: the
/// runs are the baseline's, the change is exactly 0.
fn zero_spec(rows: &str) -> String {
    format!(
        r#"change = "TTWU_QUEUE"
title = "a variant equal to its baseline"
author = "the tests"
date = "now"
machine = "test-2x4"
kernel = "v6.5"
variant = "+TTWU_QUEUE"
source = "https://example.org/"
{rows}"#
    )
}

const ROW: &str = r#"
[[row]]
name = "NAME"
benchmark = "pipe"
command = "perf bench sched pipe -l 200"
published = { change = 10.0 }
statistic = "one run"
direction = "higher"
band = [5.0, 20.0]
"#;

#[test]
fn strict_fails_only_on_rows_without_a_cause() {
    let d = TempDir::new("repro-strict");
    let specs = d.join("specs");
    std::fs::create_dir(&specs).unwrap();
    let with_cause = ROW.replace("NAME", "explained") + "cause = \"the variant is the baseline\"\n";
    std::fs::write(specs.join("zero.toml"), zero_spec(&(ROW.replace("NAME", "bare") + &with_cause))).unwrap();
    let o = wakesim(&["reproduce", "--specs", s(&specs), "--seeds", "1", "--strict"]);
    let line = assert_one_line_error(&o, "strict with an unexplained row");
    assert!(line.contains("zero/bare") && !line.contains("zero/explained") && line.contains("UNEXPLAINED"), "{line}");
    let doc = stdout(&o);
    assert!(doc.contains("- `zero/bare` (wrong direction, outside its band): **UNEXPLAINED**"), "{doc}");
    assert!(doc.contains("- `zero/explained` (wrong direction, outside its band): the variant is the baseline"), "{doc}");
    assert!(table_rows(&doc).iter().all(|r| r[4] == "0.0 %" && r[5].contains('✗')), "{doc}");
    // Without --strict the same table is not an error; with only explained rows --strict passes.
    ok(&["reproduce", "--specs", s(&specs), "--seeds", "1"]);
    ok(&["reproduce", "zero/explained", "--specs", s(&specs), "--seeds", "1", "--strict"]);
}

#[test]
fn a_row_runs_the_seeds_its_spec_asks_for_and_the_table_says_so() {
    let d = TempDir::new("repro-seeds");
    let specs = d.join("specs");
    std::fs::create_dir(&specs).unwrap();
    let few = ROW.replace("NAME", "few").replace("band =", "seeds = 2\nband =");
    let many = ROW.replace("NAME", "many").replace("-l 200", "-l 300").replace("band =", "seeds = 3\nband =");
    let plain = ROW.replace("NAME", "plain").replace("-l 200", "-l 250");
    std::fs::write(specs.join("zero.toml"), zero_spec(&(few + &many + &plain))).unwrap();
    let doc = ok(&["reproduce", "--specs", s(&specs)]);
    assert!(doc.contains("2–5 seeds per row"), "{doc}");
    let rows = table_rows(&doc);
    let change = |id: &str| rows.iter().find(|r| r[0].contains(id)).map(|r| r[4].clone()).unwrap();
    assert_eq!(change("zero/few"), "0.0 %; 2 seeds");
    assert_eq!(change("zero/many"), "0.0 %; 3 seeds");
    assert_eq!(change("zero/plain"), "0.0 %", "the default count goes without saying");
    assert!(command_of(&doc, "C1").contains("--runs 2"), "{doc}");
    assert!(command_of(&doc, "C2").contains("--runs 3"), "{doc}");
    // --seeds overrides every row's own count.
    let doc = ok(&["reproduce", "--specs", s(&specs), "--seeds", "1"]);
    assert!(table_rows(&doc).iter().all(|r| r[4] == "0.0 %") && command_of(&doc, "C2").contains("--runs 1"), "{doc}");
}

#[test]
fn bad_input_is_one_line_naming_what_is_wrong() {
    let repo = spec_dir();
    let e = rejects(&["reproduce", "--specs", s(&repo), "no-such-change"], &["unknown reproduction 'no-such-change'", "known:", "sm-idle", "ttwu-queue-idle/context1"]);
    assert!(e.contains("sis-filter/hackbench-g48"), "{e}");
    rejects(&["reproduce", "--specs", s(&repo), "sm-idle/nope"], &["unknown reproduction 'sm-idle/nope'"]);
    rejects(&["reproduce", "--specs", s(&repo), "--seeds", "0", "sm-idle"], &["--seeds"]);
    rejects(&["reproduce", "--specs", s(&repo), "--jobs", "0", "sm-idle"], &["--jobs"]);

    let d = TempDir::new("repro-bad");
    let bad = |name: &str, text: &str, mentions: &[&str]| {
        let dir = d.join(name);
        std::fs::create_dir(&dir).unwrap();
        let file = dir.join("broken.toml");
        std::fs::write(&file, text).unwrap();
        let mut m = vec![s(&file)];
        m.extend_from_slice(mentions);
        rejects(&["reproduce", "--specs", s(&dir)], &m);
    };
    let good = zero_spec(&ROW.replace("NAME", "r"));
    bad("band", &good.replace("band = [5.0, 20.0]", "band = [20.0, 5.0]"), &[":17: key 'band'", "below"]);
    bad("direction", &good.replace("band = [5.0, 20.0]", "band = [-20.0, -5.0]"), &[":17: key 'band'", "direction 'higher'"]);
    bad("type", &good.replace("band = [5.0, 20.0]", "band = \"wide\""), &[":17: key 'band'"]);
    bad("unknown-key", &good.replace("statistic =", "statistics ="), &["statistics"]);
    bad("missing-key", &good.replace("direction = \"higher\"\n", ""), &["direction"]);
    bad("feature", &good.replace("+TTWU_QUEUE", "+NO_SUCH_FEATURE"), &[":7: key 'variant'", "NO_SUCH_FEATURE"]);
    bad("machine", &good.replace("test-2x4", "no-such-machine"), &[":5: key 'machine'"]);
    bad("command", &good.replace("-l 200", "-l 0"), &[":13: key 'command'"]);
    bad("syntax", &good.replace("band = [5.0, 20.0]", "band = [5.0, 20.0"), &[":17"]);
    let twice = zero_spec(&(ROW.replace("NAME", "r") + &ROW.replace("NAME", "r")));
    bad("twice", &twice, &["key 'name'", "defined twice"]);
    // A metric the benchmark does not report is found after the runs, still naming the key.
    bad("metric", &good.replace("statistic =", "metric = \"no such metric\"\nstatistic ="), &[":15: key 'metric'", "usecs/op"]);
}

/// `--sensitivity`: every row rerun with one cost scaled per factor, the scaled runs kept apart
/// in `--out` with the scale in their experiment, and the scale reaching the model (a pipe
/// ping-pong's figures move when its context switch costs twice as much).
#[test]
fn sensitivity_reruns_each_row_with_one_cost_scaled() {
    let d = TempDir::new("repro-sens");
    let specs = d.join("specs");
    std::fs::create_dir(&specs).unwrap();
    std::fs::write(specs.join("zero.toml"), zero_spec(&ROW.replace("NAME", "r"))).unwrap();
    let out = d.join("out");
    let doc = ok(&["reproduce", "--specs", s(&specs), "--seeds", "1", "--sensitivity", "context_switch,ipi_delivery", "--out", s(&out)]);
    assert!(doc.starts_with("# How the published rows depend on the cost estimates\n"), "{doc}");
    for key in ["context_switch", "ipi_delivery"] {
        let at = doc.find(&format!("## `{key}`")).unwrap_or_else(|| panic!("no section for {key}:\n{doc}"));
        let section = &doc[at..];
        assert!(section.contains("At ×1: ") && section.contains(" ns"), "the profile's value: {section}");
        assert!(section.contains("| row | published | band | ×0.5 | ×1 | ×2 |"), "{section}");
        // The variant is the baseline: its change is exactly zero at every factor.
        assert!(section.contains("| `zero/r` | +10 % | [+5 %, +20 %] | 0.0 % ✗ | 0.0 % ✗ | 0.0 % ✗ |"), "the published change as the post gives it: {section}");
    }
    let metric = |dir: &str| read_json(&out.join(dir).join("zero/r/runs/baseline/all/run-0.json"))["record"]["metrics"][0]["value"].as_f64().unwrap();
    let exp = read_json(&out.join("context_switch=2/zero/r/experiment.json"));
    assert_eq!(exp["experiment"]["cost_scale"], serde_json::json!(["context_switch=2"]));
    assert!(read_json(&out.join("base/zero/r/experiment.json"))["experiment"].get("cost_scale").is_none());
    assert_ne!(metric("context_switch=2"), metric("base"), "the scale reached the runs");
    assert_ne!(metric("context_switch=0.5"), metric("base"));
    // A scaled run's file names the `wakesim run` that reproduces it, scale included.
    let run = read_json(&out.join("context_switch=2/zero/r/runs/baseline/all/run-0.json"));
    let argv: Vec<String> = run["argv"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    assert!(argv.join(" ").contains(" --cost-scale context_switch=2 "), "{argv:?}");
    let json = d.join("again.json");
    let mut again: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
    again.splice(1..1, ["--json", s(&json)]);
    ok(&again);
    assert_eq!(read_json(&json)["stats"], run["stats"], "that argv gives the same statistics");
    assert!(!run["stats"].is_null());

    rejects(&["reproduce", "--specs", s(&specs), "--sensitivity", "no_such_cost"], &["unknown cost key 'no_such_cost'"]);
    rejects(&["reproduce", "--specs", s(&specs), "--sensitivity", "idle_exit", "--factors", "-1"], &["--factors"]);
}
