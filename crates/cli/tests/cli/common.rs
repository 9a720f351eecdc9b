//! Helpers shared by the CLI integration tests: run the built `wakesim` binary, check the
//! one-line error contract, make private temporary directories, parse perf's output.

#![allow(dead_code)] // each test file uses a different subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The binary under test: the one cargo built in the same profile as the tests, or another build
/// of the same source named by `WAKESIM_BIN` (scripts/build-pgo checks its binary this way
/// against the golden corpus).
pub fn bin() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| std::env::var("WAKESIM_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_wakesim").to_string()))
}

/// Run `wakesim ARGS` with no stdin, in `cwd` if given, and wait for it.
/// RUST_BACKTRACE=1 makes any panic loud, so the "no backtrace" checks below have teeth.
pub fn wakesim_in(cwd: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args).stdin(Stdio::null()).env("RUST_BACKTRACE", "1");
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    cmd.output().expect("cannot start the wakesim binary")
}

pub fn wakesim(args: &[&str]) -> Output {
    wakesim_in(None, args)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is not UTF-8")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is not UTF-8")
}

/// A successful run: exit code 0 and nothing on stderr. Returns stdout.
#[track_caller]
pub fn ok(args: &[&str]) -> String {
    let o = wakesim(args);
    assert_eq!(o.status.code(), Some(0), "wakesim {args:?} failed\nstderr:\n{}\nstdout:\n{}", stderr(&o), stdout(&o));
    assert_eq!(stderr(&o), "", "wakesim {args:?} wrote to stderr");
    stdout(&o)
}

/// The bad-input contract: exit code 2, stderr exactly one non-empty line starting with
/// `wakesim: error: `, no panic, no backtrace. Returns that line (without the newline).
#[track_caller]
pub fn assert_one_line_error(o: &Output, what: &str) -> String {
    let err = stderr(o);
    let out = stdout(o);
    assert!(!err.contains("panicked"), "{what}: panicked\n{err}");
    assert!(!err.contains("stack backtrace") && !err.contains("RUST_BACKTRACE"), "{what}: backtrace\n{err}");
    assert_eq!(o.status.code(), Some(2), "{what}: exit code\nstderr:\n{err}\nstdout:\n{out}");
    assert!(err.ends_with('\n'), "{what}: stderr does not end with a newline: {err:?}");
    let body = &err[..err.len() - 1];
    assert!(!body.contains('\n'), "{what}: stderr has more than one line:\n{err}");
    assert!(body.starts_with("wakesim: error: "), "{what}: stderr does not start with 'wakesim: error: ': {body:?}");
    assert!(body.len() > "wakesim: error: ".len(), "{what}: empty error message");
    body.to_string()
}

/// Run `wakesim ARGS`, expect a one-line error that mentions every string in `mentions`,
/// and expect nothing on stdout (bad input is rejected before anything looks like a result).
#[track_caller]
pub fn rejects(args: &[&str], mentions: &[&str]) -> String {
    let o = wakesim(args);
    let what = format!("wakesim {args:?}");
    let line = assert_one_line_error(&o, &what);
    for m in mentions {
        assert!(line.contains(m), "{what}: error line does not mention {m:?}: {line}");
    }
    assert_eq!(stdout(&o), "", "{what}: printed something on stdout before failing");
    line
}

/// A private temporary directory, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let p = std::env::temp_dir().join(format!("wakesim-cli-test-{tag}-{}-{n}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).expect("cannot create a temporary directory");
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    /// Write `name` in this directory and return its path.
    pub fn write(&self, name: &str, contents: &str) -> PathBuf {
        let p = self.join(name);
        std::fs::write(&p, contents).expect("cannot write a test file");
        p
    }
    /// The names in this directory, sorted (hidden files included).
    pub fn entries(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("non-UTF-8 temp path")
}

/// mmtests' perf-pipe regex `^\s+([0-9.]+) usecs/op`: the value on the first matching line.
pub fn usecs_per_op(text: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        if !l.starts_with(char::is_whitespace) {
            return None;
        }
        let rest = l.trim_start();
        let (num, tail) = rest.split_once(' ')?;
        if tail != "usecs/op" || num.is_empty() || !num.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return None;
        }
        num.parse().ok()
    })
}

/// mmtests' regex `Total time: ([0-9.]+) \[sec\]`.
pub fn total_time_sec(text: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let i = l.find("Total time: ")?;
        let rest = &l[i + "Total time: ".len()..];
        let (num, tail) = rest.split_once(' ')?;
        if !tail.starts_with("[sec]") || num.is_empty() || !num.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return None;
        }
        num.parse().ok()
    })
}

/// The complete example of crates/workloads/FORMAT.md (between the example markers).
pub fn format_md_example_tasks() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../workloads/FORMAT.md");
    let text = std::fs::read_to_string(&path).expect("cannot read crates/workloads/FORMAT.md");
    let start = text.find("<!-- example-begin -->").expect("example-begin marker");
    let end = text.find("<!-- example-end -->").expect("example-end marker");
    let block = &text[start..end];
    block.lines().skip_while(|l| !l.starts_with("```")).skip(1).take_while(|l| !l.starts_with("```")).collect::<Vec<_>>().join("\n") + "\n"
}

/// Every file and directory under `dir`, at any depth, sorted.
pub fn entries_under(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p.clone());
            }
            v.push(p);
        }
    }
    v.sort();
    v
}

/// The names of the machine presets shipped in crates/machine/presets.
pub fn preset_files() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../machine/presets");
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("cannot read crates/machine/presets")
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".toml").map(str::to_string))
        .collect();
    v.sort();
    v
}

/// Serialises the tests that time the host (calibrate, validate) with the tests that load both
/// CPUs (the golden corpus runs two simulations at a time): on a 2-CPU machine a calibration
/// measured beside them times the other test, not the host. Poison-tolerant, so one failing test
/// does not fail the others.
pub fn exclusive_cpus() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// `wakesim run PRE… -- CMD…` as an argument list.
pub fn run_with<'a>(pre: &[&'a str], cmd: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["run"];
    v.extend_from_slice(pre);
    v.push("--");
    v.extend_from_slice(cmd);
    v
}
