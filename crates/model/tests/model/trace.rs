//! Traces (`run_with_trace`): the recorded schedule agrees with the run's own counters, the
//! Chrome JSON file has the shape Perfetto reads, windows and limits bound it, and recording
//! changes nothing about the run.

use crate::common::*;
use serde_json::Value;
use wakesim_engine::MSEC;
use wakesim_model::{run_with_trace, Trace, TraceEvent, TraceOpts};
use wakesim_workloads::Workload;

fn cmd(args: &[&str]) -> Workload {
    wakesim_workloads::from_command_line(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
}

fn traced(machine: &str, wl: &Workload, opts: TraceOpts) -> (wakesim_model::RunResult, Trace) {
    run_with_trace(config(machine, v6_6(), 1), wl, opts).unwrap()
}

fn events(json: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(json).expect("the trace is valid JSON");
    v["traceEvents"].as_array().expect("traceEvents is an array").clone()
}

fn ns(v: &Value) -> u64 {
    (v.as_f64().unwrap() * 1000.0).round() as u64
}

/// Complete events on the CPU tracks: (cpu, start ns, end ns, name, cat).
fn cpu_slices(evs: &[Value]) -> Vec<(u64, u64, u64, String, String)> {
    evs.iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 1)
        .map(|e| {
            let s = ns(&e["ts"]);
            (e["tid"].as_u64().unwrap(), s, s + ns(&e["dur"]), e["name"].as_str().unwrap().to_string(), e["cat"].as_str().unwrap().to_string())
        })
        .collect()
}

fn hackbench() -> Workload {
    cmd(&["hackbench", "-g", "2", "-f", "4", "-l", "20"])
}

#[test]
fn the_trace_is_json_with_one_named_thread_per_cpu() {
    let (_, tr) = traced("test-smt2", &hackbench(), TraceOpts::default());
    let evs = events(&tr.to_chrome_json());
    for c in 0..8u64 {
        assert!(
            evs.iter().any(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 1 && e["tid"] == c && e["args"]["name"] == format!("CPU {c}")),
            "no thread_name for CPU {c}"
        );
    }
    assert!(evs.iter().any(|e| e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "CPUs"));
    let s = cpu_slices(&evs);
    assert!(s.iter().any(|x| x.4 == "task") && s.iter().any(|x| x.3 == "poll" || x.3.starts_with("idle (")), "task and idle slices");
}

#[test]
fn cpu_slices_never_overlap_and_are_in_time_order() {
    let (r, tr) = traced("test-smt2", &hackbench(), TraceOpts::default());
    let s = cpu_slices(&events(&tr.to_chrome_json()));
    for c in 0..8 {
        let mine: Vec<_> = s.iter().filter(|x| x.0 == c).collect();
        assert!(!mine.is_empty(), "CPU {c} has slices");
        for w in mine.windows(2) {
            assert!(w[0].1 <= w[1].1, "CPU {c}: slices out of order {w:?}");
            assert!(w[0].2 <= w[1].1, "CPU {c}: slices overlap {w:?}");
        }
        assert!(mine.last().unwrap().2 <= r.outcome.end_time);
    }
}

#[test]
fn one_task_slice_per_switch_to_a_task_as_schedstat_counts_them() {
    let (r, tr) = traced("test-smt2", &hackbench(), TraceOpts::default());
    let s = cpu_slices(&events(&tr.to_chrome_json()));
    let pcount: u64 = r.stats.cpus.iter().map(|c| c.pcount).sum();
    let tasks = s.iter().filter(|x| x.4 == "task").count() as u64;
    assert!(pcount > 20, "{pcount}");
    assert_eq!(tasks, pcount, "task slices vs schedstat pcount");
}

#[test]
fn recorded_ipis_polling_wakes_and_migrations_match_the_counters() {
    // Non-polling idle makes every kick an IPI, so both kinds of event occur.
    let wl = hackbench();
    let mut cfg = config("test-2x4", v6_6(), 1);
    non_polling_idle(&mut cfg);
    let (r, tr) = run_with_trace(cfg, &wl, TraceOpts::default()).unwrap();
    let count = |f: &dyn Fn(&TraceEvent) -> bool| tr.events.iter().filter(|s| f(&s.ev)).count() as u64;
    let sent = count(&|e| matches!(e, TraceEvent::IpiSend { .. }));
    assert!(sent > 0);
    assert_eq!(sent, r.stats.wake.ipis_sent);
    assert_eq!(count(&|e| matches!(e, TraceEvent::PollWake { .. })), r.stats.wake.poll_wakes);
    let recv = count(&|e| matches!(e, TraceEvent::IpiRecv { .. }));
    assert!(recv <= sent && recv + 8 >= sent, "received {recv} of {sent}");
    let migr: u64 = r.stats.tasks.iter().map(|t| t.nr_migrations).sum();
    assert_eq!(count(&|e| matches!(e, TraceEvent::Migrate { .. })), migr);
    let ipis = events(&tr.to_chrome_json()).iter().filter(|e| e["ph"] == "i" && e["name"].as_str().unwrap().starts_with("IPI ")).count();
    assert_eq!(ipis as u64, recv, "one instant event per received IPI");
}

#[test]
fn every_wakeup_arrow_has_both_ends_and_points_forward() {
    let (r, tr) = traced("test-smt2", &hackbench(), TraceOpts::default());
    let evs = events(&tr.to_chrome_json());
    let mut starts = std::collections::BTreeMap::new();
    let mut ends = std::collections::BTreeMap::new();
    for e in &evs {
        let id = || e["id"].as_u64().unwrap();
        match e["ph"].as_str().unwrap() {
            "s" => assert!(starts.insert(id(), ns(&e["ts"])).is_none(), "flow id used twice"),
            "f" => {
                assert_eq!(e["bp"], "e");
                assert!(ends.insert(id(), ns(&e["ts"])).is_none(), "flow id ended twice");
            }
            _ => {}
        }
    }
    assert_eq!(starts.keys().collect::<Vec<_>>(), ends.keys().collect::<Vec<_>>());
    for (id, s) in &starts {
        assert!(*s <= ends[id], "arrow {id} points back in time");
    }
    // Nearly every wakeup of the run ends in a slice of its wakee (not those still waiting at the end).
    let n = starts.len() as u64;
    assert!(n <= r.stats.wake.wakeups && n + 16 >= r.stats.wake.wakeups, "{n} arrows, {} wakeups", r.stats.wake.wakeups);
}

#[test]
fn perf_pipe_on_two_cpus_alternates_the_two_tasks() {
    let wl = cmd(&["taskset", "-c", "0,2", "perf", "bench", "sched", "pipe", "-l", "50"]);
    let (_, tr) = traced("test-smt2", &wl, TraceOpts::default());
    let mut s: Vec<_> = cpu_slices(&events(&tr.to_chrome_json())).into_iter().filter(|x| x.4 == "task").collect();
    s.sort_by_key(|x| x.1);
    assert!(s.len() >= 100, "{}", s.len());
    assert!(s.iter().all(|x| x.0 == 0 || x.0 == 2), "only CPUs 0 and 2 run the tasks");
    // After both have started, the two tasks take turns and never run at once.
    let body = &s[2..];
    for w in body.windows(2) {
        assert_ne!(w[0].3, w[1].3, "the same task ran twice in a row: {w:?}");
        assert!(w[0].2 <= w[1].1, "both tasks ran at once: {w:?}");
        assert_ne!(w[0].0, w[1].0, "consecutive turns are on different CPUs: {w:?}");
    }
}

#[test]
fn the_same_seed_gives_a_byte_identical_trace() {
    // Random compute and sleep lengths drawn from the seeded streams.
    let wl = random_graph(3, 8);
    let a = traced("test-2x4", &wl, TraceOpts::default()).1.to_chrome_json();
    let b = traced("test-2x4", &wl, TraceOpts::default()).1.to_chrome_json();
    assert!(a == b, "traces differ");
    let c = run_with_trace(config("test-2x4", v6_6(), 2), &wl, TraceOpts::default()).unwrap().1.to_chrome_json();
    assert!(a != c, "another seed gives another trace");
}

#[test]
fn tracing_changes_nothing_about_the_run() {
    let wl = hackbench();
    let plain = run("test-smt2", v6_6(), &wl, 1);
    let (traced, _) = traced("test-smt2", &wl, TraceOpts { window: Some((0, MSEC)), limit: 50 });
    assert_eq!(plain.stats.to_json(), traced.stats.to_json());
    assert_eq!(plain.events, traced.events);
    assert_eq!(plain.outcome.end_time, traced.outcome.end_time);
    // And a Sim that is not traced returns no trace.
    assert!(sim("test-smt2", v6_6(), &wl, 1).run_traced().1.is_none());
}

#[test]
fn a_window_keeps_only_its_interval_and_opens_with_what_each_cpu_runs() {
    let wl = hackbench();
    let (r, full) = traced("test-smt2", &wl, TraceOpts::default());
    let (a, b) = (r.outcome.end_time / 3, 2 * r.outcome.end_time / 3);
    let (_, tr) = traced("test-smt2", &wl, TraceOpts { window: Some((a, b)), limit: usize::MAX });
    assert_eq!((tr.start, tr.end), (a, b));
    assert!(tr.events.iter().all(|s| s.t >= a && s.t <= b));
    let opening: Vec<_> = tr.events.iter().take(8).collect();
    assert!(opening.iter().enumerate().all(|(c, s)| s.t == a && matches!(s.ev, TraceEvent::Running { cpu, .. } if cpu == c as u32)));
    // Inside the window it holds exactly the full trace's events.
    let inside: Vec<_> = full.events.iter().filter(|s| s.t >= a && s.t <= b).collect();
    assert_eq!(tr.events[8..].iter().collect::<Vec<_>>(), inside);
    let s = cpu_slices(&events(&tr.to_chrome_json()));
    assert!(s.iter().all(|x| x.1 >= a && x.2 <= b), "slices stay in the window");
    for c in 0..8 {
        assert!(s.iter().any(|x| x.0 == c && x.1 == a), "CPU {c} has a slice from the window's start");
    }
}

#[test]
fn at_the_limit_recording_stops_and_the_trace_says_so() {
    let wl = hackbench();
    let (_, full) = traced("test-smt2", &wl, TraceOpts::default());
    let (_, tr) = traced("test-smt2", &wl, TraceOpts { window: None, limit: 100 });
    assert!(tr.truncated && !full.truncated);
    assert_eq!(tr.events.len(), 8 + 100, "the opening snapshot plus the limit");
    assert_eq!(tr.events[..], full.events[..108], "the first events are the full trace's");
    assert_eq!(tr.end, full.events[108].t, "ends at the first event not kept");
    let json = tr.to_chrome_json();
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["otherData"]["truncated"], true);
    assert!(cpu_slices(&events(&json)).iter().all(|x| x.2 <= tr.end));
}

#[test]
fn timestamps_are_microseconds_with_nanosecond_digits() {
    let (_, tr) = traced("test-smt2", &hackbench(), TraceOpts::default());
    let json = tr.to_chrome_json();
    // Every "ts" has at most three decimals and reads back to the ns it came from.
    for e in events(&json).iter().filter(|e| e.get("ts").is_some()) {
        let t = e["ts"].as_f64().unwrap();
        let s = e["ts"].to_string();
        let decimals = s.split_once('.').map_or(0, |(_, d)| d.len());
        assert!(decimals <= 3, "ts {s}");
        assert_eq!(((t * 1000.0).round() / 1000.0).to_string(), t.to_string());
    }
    assert!(tr.events.iter().any(|s| s.t % 1000 != 0), "some events fall between microseconds");
}

/// Balance-pass slices: (balanced CPU, start ns, level, result, busiest, run by).
fn balance_slices(evs: &[Value]) -> Vec<(u64, u64, String, String, Option<u64>, Option<u64>)> {
    evs.iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 4)
        .map(|e| {
            let a = &e["args"];
            let s = |k: &str| a[k].as_str().unwrap().to_string();
            (e["tid"].as_u64().unwrap(), ns(&e["ts"]), s("state"), s("result"), a["from"].as_u64(), a["by"].as_u64())
        })
        .collect()
}

#[test]
fn the_trace_shows_the_failed_idle_balances_that_lead_to_an_active_push() {
    // With the v6.13 NOHZ fix a kicked idle CPU balances for the others (see the next test).
    let (_, tr) = run_with_trace(config("test-smt2", feat("+ILB_POLLING_FIX"), 1), &hogs_on_one_core(false), TraceOpts::default()).unwrap();
    let evs = events(&tr.to_chrome_json());
    assert!(evs.iter().any(|e| e["ph"] == "M" && e["pid"] == 4 && e["args"]["name"] == "load balance"));
    let b = balance_slices(&evs);
    let push = b.iter().find(|x| x.3 == "active balance").expect("an active-balance kick in the trace");
    assert_eq!(push.2, "MC");
    assert!(push.4.is_some_and(|src| src != push.0), "the busiest CPU is another: {push:?}");
    // need_active_balance(): more than cache_nice_tries (1 at MC) + 2 failed passes first.
    let failed = b.iter().filter(|x| x.0 == push.0 && x.2 == "MC" && x.3 == "failed" && x.1 < push.1).count();
    assert!(failed >= 3, "{failed} failed MC passes on CPU {} before its push", push.0);
    // Idle CPUs with their tick stopped are balanced by the kicked CPU.
    assert!(evs.iter().any(|e| e["ph"] == "i" && e["name"] == "ilb kick"), "an ilb kick");
    assert!(b.iter().any(|x| x.5.is_some_and(|by| by != x.0)), "a NOHZ pass run by another CPU");
}

#[test]
fn before_v6_13_a_polling_cpu_kicked_to_balance_skips_it_and_the_trace_says_so() {
    let (_, tr) = traced("test-smt2", &hogs_on_one_core(false), TraceOpts::default());
    let evs = events(&tr.to_chrome_json());
    let kicks = evs.iter().filter(|e| e["ph"] == "i" && e["name"] == "ilb kick").count();
    let skips = evs.iter().filter(|e| e["ph"] == "i" && e["name"] == "ilb skipped").count();
    assert!(kicks > 0 && skips == kicks, "{kicks} kicks, {skips} skipped: a polling x86 CPU skips every one");
    assert!(balance_slices(&evs).iter().all(|x| x.5.is_none()), "no CPU balances for another");
}
