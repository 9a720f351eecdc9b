//! `--governor` and the machine's `cpuidle_governor`: bad names are one-line errors that write
//! nothing, and each governor gives the same output for the same seed.

use crate::common::*;

const PIPE: &[&str] = &["perf", "bench", "sched", "pipe", "-l", "300"];

#[test]
fn an_unknown_governor_is_one_line_naming_it_exit_2_and_nothing_is_written() {
    let dir = TempDir::new("bad-governor");
    let json = dir.join("never.json");
    let line = rejects(&run_with(&["--machine", "test-smt2", "--governor", "ladder", "--json", s(&json)], PIPE), &["--governor", "'ladder'"]);
    assert!(line.contains("menu, teo, haltpoll, ewma"), "the known governors are listed: {line}");
    let out = dir.join("cmp");
    rejects(
        &["compare", "--machine", "test-smt2", "--governor", "Menu", "--runs", "1", "--out", s(&out), "--", "perf", "bench", "sched", "pipe", "-l", "10"],
        &["'Menu'"],
    );
    assert!(!json.exists() && !out.exists());
    assert!(dir.entries().is_empty(), "{:?}", dir.entries());
    // In a machine file: the file, the line and the value.
    let m = dir.write("box.toml", "name = \"box\"\nsockets = 1\ncores_per_llc = 2\ncpuidle_governor = \"ladder\"\n");
    rejects(&run_with(&["--machine", s(&m)], PIPE), &[&format!("{}:4:", m.display()), "'ladder'"]);
}

#[test]
fn the_same_seed_gives_identical_json_under_each_governor() {
    let dir = TempDir::new("governor-seed");
    let tasks = dir.write("rpc.toml", &format_md_example_tasks());
    for g in ["menu", "teo", "haltpoll"] {
        let texts: Vec<String> = (0..2)
            .map(|r| {
                let json = dir.join(&format!("{g}-{r}.json"));
                ok(&["run", "--machine", "test-2x4", "--seed", "11", "--governor", g, "--tasks", s(&tasks), "--json", s(&json)]);
                let text = std::fs::read_to_string(&json).unwrap();
                text[..text.find("\"engine\"").expect("an engine block")].to_string()
            })
            .collect();
        assert_eq!(texts[0], texts[1], "--governor {g}: JSON differs between two runs with the same seed");
    }
}

#[test]
fn a_machine_file_names_its_governor_and_the_flag_overrides_it() {
    let dir = TempDir::new("governor-file");
    let m = dir.write("guest.toml", "name = \"guest\"\nsockets = 1\ncores_per_llc = 2\ncpuidle_governor = \"haltpoll\"\n");
    let shown = ok(&["machines", "show", s(&m)]);
    assert!(shown.contains("cpuidle governor haltpoll"), "{shown}");
    // The file's governor and the same one by flag give the same run; another differs.
    let by_file = ok(&run_with(&["--machine", s(&m)], PIPE));
    let by_flag = ok(&run_with(&["--machine", s(&m), "--governor", "haltpoll"], PIPE));
    let other = ok(&run_with(&["--machine", s(&m), "--governor", "menu"], PIPE));
    assert_eq!(by_file, by_flag);
    assert_ne!(by_file, other, "haltpoll and menu should idle differently on a pipe ping-pong");
}

#[test]
fn the_run_records_its_governor_and_the_idle_states_it_chose() {
    let dir = TempDir::new("governor-json");
    let json = dir.join("r.json");
    let out = ok(&run_with(&["--machine", "test-smt2", "--governor", "teo", "--json", s(&json)], PIPE));
    let line = out.lines().find(|l| l.starts_with("idle states")).unwrap_or_else(|| panic!("no idle states line:\n{out}"));
    assert!(line.contains("teo:") && line.contains("POLL") && line.contains("C6") && line.contains("tick kept"), "{line}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["governor"], "teo");
    let idle = &v["stats"]["idle"];
    assert_eq!(idle["governor"], "teo");
    let names: Vec<&str> = idle["states"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["POLL", "C1", "C6"], "the generic profile's states");
    let stays: u64 = idle["states"].as_array().unwrap().iter().map(|s| s["usage"].as_u64().unwrap()).sum();
    assert!(stays > 0 && idle["selects"].as_u64().unwrap() > 0, "{idle}");
}

#[test]
fn compare_names_the_governor_in_its_header() {
    let out = ok(&["compare", "--machine", "test-2x4", "--governor", "haltpoll", "--runs", "1", "--jobs", "1", "--format", "mmtests", "--", "perf", "bench", "sched", "pipe", "-l", "50"]);
    assert!(out.lines().next().unwrap().contains("governor haltpoll"), "{out}");
}
