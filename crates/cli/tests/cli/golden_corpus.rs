//! The golden corpus: every run in `tests/corpus/runs.txt` gives exactly the output it gave
//! when its snapshot was taken. Refactors and speed work leave it alone; a model change
//! regenerates it (`scripts/regen-corpus`) in a commit of its own that says why.
//!
//! A snapshot holds the run's stdout (the benchmark's own output and the statistics summary),
//! and SHA-256 digests of its `--json` file without the `engine` block (the only part that
//! measures the host, not the model) and of its `--trace` file where the run traces.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

struct CorpusRun {
    name: String,
    args: Vec<String>,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn corpus_runs() -> Vec<CorpusRun> {
    let text = std::fs::read_to_string(corpus_dir().join("runs.txt")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (name, args) = l.split_once(": ").unwrap_or_else(|| panic!("runs.txt: no 'name: ' in {l:?}"));
            CorpusRun { name: name.to_string(), args: args.split_whitespace().map(String::from).collect() }
        })
        .collect()
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs one corpus entry and renders its snapshot.
fn snapshot_of(run: &CorpusRun, tmp: &Path) -> String {
    let dir = corpus_dir();
    let trace = tmp.join(format!("{}.trace.json", run.name));
    let json = tmp.join(format!("{}.json", run.name));
    let mut args: Vec<String> = run
        .args
        .iter()
        .map(|a| a.replace("{dir}", dir.to_str().unwrap()).replace("{trace}", trace.to_str().unwrap()))
        .collect();
    let is_run = args[0] == "run";
    if is_run {
        args.insert(1, "--json".into());
        args.insert(2, json.to_str().unwrap().into());
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = crate::common::wakesim_in(Some(tmp), &argv);
    let stderr = crate::common::stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{}: wakesim {:?} failed:\n{stderr}", run.name, run.args);
    let mut s = format!("wakesim {}\n--- stdout ---\n{}", run.args.join(" "), crate::common::stdout(&o));
    if is_run {
        let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("engine");
        // Paths of the corpus inputs differ between checkouts.
        let text = serde_json::to_string(&v).unwrap().replace(dir.to_str().unwrap(), "{dir}");
        s += &format!("--- json without engine: sha256 {} ---\n", sha256_hex(text.as_bytes()));
    }
    if trace.exists() {
        s += &format!("--- trace: sha256 {} ---\n", sha256_hex(&std::fs::read(&trace).unwrap()));
    }
    s.replace(dir.to_str().unwrap(), "{dir}")
}

#[test]
fn golden_corpus_runs_give_their_recorded_output() {
    let _cpus = crate::common::exclusive_cpus();
    let runs = corpus_runs();
    let tmp = crate::common::TempDir::new("golden-corpus");
    let tmp = tmp.path();
    // Two runs at a time (the CI machine has two cores); snapshots are checked in list order.
    let next = Mutex::new(0usize);
    let results: Vec<Mutex<Option<String>>> = runs.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(run) = runs.get(i) else { break };
                *results[i].lock().unwrap() = Some(snapshot_of(run, tmp));
            });
        }
    });
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(corpus_dir().join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let failed: Vec<&str> = settings.bind(|| {
        runs.iter()
            .zip(&results)
            .filter_map(|(run, r)| {
                let snap = r.lock().unwrap().take().unwrap();
                let ok = std::panic::catch_unwind(|| insta::assert_snapshot!(run.name.as_str(), snap)).is_ok();
                (!ok).then_some(run.name.as_str())
            })
            .collect()
    });
    assert!(failed.is_empty(), "{} of {} corpus runs changed: {failed:?} (a model change regenerates them: scripts/regen-corpus)", failed.len(), runs.len());
}

#[test]
fn golden_corpus_covers_every_preset_kernel_change_and_benchmark() {
    let runs = corpus_runs();
    let all: Vec<String> = runs.iter().map(|r| format!(" {} ", r.args.join(" "))).collect();
    let has = |needle: &str| all.iter().any(|a| a.contains(needle));
    for m in wakesim_machine::preset_names() {
        assert!(has(&format!(" --machine {m} ")) || m == "xeon-8269cy" && has(" run -- "), "no corpus run on preset {m}");
    }
    // The newest profile is the default: a run without --kernel covers it.
    let default_kernel = |k: &str| k == wakesim_model::features::NEWEST_KERNEL && all.iter().any(|a| !a.contains(" --kernel "));
    for k in wakesim_model::features::KERNELS {
        assert!(has(&format!(" --kernel {} ", k.name)) || default_kernel(k.name), "no corpus run on kernel profile {}", k.name);
    }
    // The five mailing-list changes and the variants the project compares them with.
    for f in ["TTWU_QUEUE_IDLE", "WA_WEIGHT_NOEQUAL", "SHARED_RUNQ", "SHARED_RUNQ_GATED", "SIS_FILTER", "NEWIDLE_SKIP_IPI", "SM_IDLE", "-CSD_POLL"] {
        assert!(has(f), "no corpus run with {f}");
    }
    for b in ["perf bench sched pipe", "perf bench sched messaging", "hackbench", "schbench -m", "schbench --old", "tbench", "netperf -t TCP_RR", "netperf -t UDP_RR", "netperf -t TCP_STREAM", "netperf -t UDP_STREAM", "context1", "-- pipe", "ipistorm", "stream", "rt-app", "--tasks", "--trace", "--copies", "--schedstat 15", "--schedstat 16", "compare"] {
        assert!(has(b), "no corpus run of {b}");
    }
}
