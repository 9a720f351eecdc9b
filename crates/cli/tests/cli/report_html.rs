//! `wakesim report DIR`: the HTML page, loaded in a real headless browser (Debian's chromium):
//! no console messages or script errors, and every chart draws the expected number of series.

use crate::common::*;
use std::path::Path;
use std::process::Command;

/// The chromium binary: `$CHROMIUM` or the first of Debian's names found on PATH.
fn chromium() -> String {
    if let Ok(c) = std::env::var("CHROMIUM") {
        return c;
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if Command::new(name).arg("--version").output().is_ok_and(|o| o.status.success()) {
            return name.to_string();
        }
    }
    panic!("chromium not found: the HTML report test needs a headless browser (`apt-get install chromium`, as .ci/run does)");
}

/// Loads `page` headless; returns (the DOM after scripts ran, chromium's console lines).
fn load(page: &Path, profile: &Path) -> (String, Vec<String>) {
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let o = Command::new(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--virtual-time-budget=5000", "--dump-dom", &url])
        .output()
        .expect("cannot start chromium");
    assert!(o.status.success(), "chromium failed: {}", String::from_utf8_lossy(&o.stderr));
    let console = String::from_utf8_lossy(&o.stderr).lines().filter(|l| l.contains(":CONSOLE")).map(String::from).collect();
    (String::from_utf8(o.stdout).unwrap(), console)
}

/// The text of `<pre id="ID">…</pre>` in a DOM dump.
fn pre(dom: &str, id: &str) -> String {
    let start = dom.find(&format!("<pre id=\"{id}\">")).unwrap_or_else(|| panic!("#{id} missing")) + id.len() + 11;
    dom[start..start + dom[start..].find("</pre>").unwrap()].to_string()
}

#[test]
fn report_page_loads_offline_without_errors_and_draws_every_series() {
    let d = TempDir::new("report-html");
    let out = d.join("x");
    let o = wakesim(&[
        "compare", "--machine", "test-2x4", "--kernel", "v6.5", "--variant", "sh=+SHARED_RUNQ", "--variant", "gated=+SHARED_RUNQ,+SHARED_RUNQ_GATED",
        "--runs", "2", "--sweep", "m=1,2", "--format", "mmtests", "--out", s(&out), "--", "schbench", "-m", "{m}", "-t", "2", "-r", "1", "-w", "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // compare recorded the schedule of its first run (baseline, m=1, run 0) for the timeline.
    assert!(out.join("trace.json").is_file(), "compare writes trace.json");
    let o = wakesim(&["report", s(&out)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (dom, console) = load(&out.join("report.html"), &d.join("profile0"));
    assert_eq!(console, Vec::<String>::new(), "console messages");
    assert_eq!(pre(&dom, "wakesim-errors"), "errors: none");
    let summary = pre(&dom, "wakesim-summary");
    let timeline = summary.lines().find(|l| l.starts_with("timeline: ")).unwrap_or_else(|| panic!("no timeline: {summary}"));
    let n: usize = timeline["timeline: ".len()..].split(' ').next().unwrap().parse().unwrap();
    // schbench -m 1 -t 2 ran on at least two CPUs in its first 20 ms.
    assert!(n >= 2 && timeline == format!("timeline: {n} series (expected {n})"), "{timeline}");

    // Without a trace: the timeline panel says so.
    std::fs::remove_file(out.join("trace.json")).unwrap();
    let o = wakesim(&["report", s(&out)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (dom, console) = load(&out.join("report.html"), &d.join("profile1"));
    assert_eq!(console, Vec::<String>::new(), "console messages");
    assert_eq!(pre(&dom, "wakesim-errors"), "errors: none");
    assert!(dom.contains("<div id=\"timeline\">no trace recorded</div>"), "timeline panel");
    let summary = pre(&dom, "wakesim-summary");
    let lines: Vec<&str> = summary.lines().collect();
    // schbench: 3 metrics (rps, wakeup p99, request p99); latencies: schbench's 2 + the
    // model's, at 2 points = 6 CDFs. Three variants on each.
    assert_eq!(lines.len(), 3 + 6, "{summary}");
    for l in &lines {
        assert!(l.ends_with(": 3 series (expected 3)"), "{l}");
    }

    // With a trace (a fixture in Chrome trace-event format): 4 CPUs, 4 tasks.
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trace.json"), out.join("trace.json")).unwrap();
    let html = d.join("page.html");
    let o = wakesim(&["report", s(&out), "-o", s(&html)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (dom, console) = load(&html, &d.join("profile2"));
    assert_eq!(console, Vec::<String>::new(), "console messages");
    assert_eq!(pre(&dom, "wakesim-errors"), "errors: none");
    assert!(pre(&dom, "wakesim-summary").lines().any(|l| l == "timeline: 4 series (expected 4)"), "{}", pre(&dom, "wakesim-summary"));
    assert!(!dom.contains("<div id=\"timeline\">no trace recorded</div>"));
}

#[test]
fn report_is_deterministic_and_refuses_an_unfinished_or_foreign_directory() {
    let d = TempDir::new("report-bad");
    let out = d.join("x");
    let o = wakesim(&["compare", "--machine", "test-2x4", "--runs", "2", "--format", "mmtests", "--out", s(&out), "--", "perf", "bench", "sched", "pipe", "-l", "200"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The page is a pure function of the directory.
    let (a, b) = (d.join("a.html"), d.join("b.html"));
    for f in [&a, &b] {
        assert_eq!(wakesim(&["report", s(&out), "-o", s(f)]).status.code(), Some(0));
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap(), "report is deterministic");
    std::fs::write(out.join("trace.json"), "{").unwrap();
    rejects(&["report", s(&out)], &["trace.json", "not JSON"]);
    std::fs::remove_file(out.join("trace.json")).unwrap();
    std::fs::remove_file(out.join("runs/baseline/all/run-1.json")).unwrap();
    rejects(&["report", s(&out)], &["1 of 2 runs are not finished"]);
    assert!(!out.join("report.html").exists());
    rejects(&["report", s(d.path())], &["no wakesim experiment"]);
}
