//! Bad input never panics: every truncation and every single-line deletion of a valid task file,
//! and mangled command lines, give either a workload or an error.

use wakesim_workloads::{from_command_line, from_toml_str};

#[test]
fn mangled_task_files_give_errors_not_panics() {
    let doc = include_str!("../../FORMAT.md");
    let start = doc.find("```toml\n").unwrap() + 8;
    let text = &doc[start..start + doc[start..].find("```").unwrap()];
    for cut in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
        let _ = from_toml_str(&text[..cut], "cut.toml");
    }
    let lines: Vec<&str> = text.lines().collect();
    for k in 0..lines.len() {
        let mut l = lines.clone();
        l.remove(k);
        let _ = from_toml_str(&l.join("\n"), "del.toml");
        let mut l = lines.clone();
        l[k] = "}";
        let _ = from_toml_str(&l.join("\n"), "brace.toml");
    }
}

#[test]
fn mangled_command_lines_give_errors_not_panics() {
    let words = [
        "perf", "bench", "sched", "pipe", "-l", "-", "--", "-T", "taskset", "-c", "0", "0x",
        "--loop=", "-G", ",",
    ];
    for a in &words {
        for b in &words {
            for c in &words {
                let v: Vec<String> = [*a, *b, *c].iter().map(|s| s.to_string()).collect();
                let _ = from_command_line(&v);
                let mut w: Vec<String> = ["perf", "bench", "sched", "pipe"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                w.extend(v);
                let _ = from_command_line(&w);
            }
        }
    }
}
