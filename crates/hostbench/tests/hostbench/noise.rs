//! The background-activity measurement: the gap detector and the tick finder on synthetic clock
//! series, the trace reader on tracefs and osnoise text, and the census and profile made from
//! them (rates and lengths checked against what the synthetic input holds).

use std::collections::BTreeSet;
use std::fmt::Write;

use wakesim_hostbench::noise::{self, gaps, trace, Gap, Kind, LoopRun, Verdict};
use wakesim_machine::{Arrival, NoiseProfile};

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000_000_000;

#[test]
fn the_gap_detector_finds_an_injected_gap_and_nothing_below_the_threshold() {
    // A loop reading the clock every 30 ns for 1 ms, interrupted for 5 µs at 400 µs and for
    // 900 ns (below the 1 µs threshold) at 700 µs.
    let mut t = 0u64;
    let mut v = Vec::new();
    while t < MS {
        v.push(t);
        t += match t {
            399_990..=400_010 => 5_000,
            699_990..=700_010 => 900,
            _ => 30,
        };
    }
    let g = gaps::find_gaps(&v, gaps::DEFAULT_THRESHOLD_NS);
    assert_eq!(g.len(), 1, "{g:?}");
    assert!(g[0].start >= 399_990 && g[0].start <= 400_010, "{g:?}");
    assert_eq!(g[0].len, 5_000);
    assert_eq!(g[0].end(), g[0].start + 5_000);
    // At the threshold exactly it counts; a clock that goes back counts nothing.
    assert_eq!(gaps::find_gaps(&[0, 1_000, 500, 600], 1_000), vec![Gap { start: 0, len: 1_000 }]);
    assert!(gaps::find_gaps(&[], 1).is_empty());
}

#[test]
fn the_tick_is_found_by_its_phase_and_a_tick_that_preempted_is_not_the_tick() {
    // 1 s at HZ=250: a 3 µs tick at phase 1.234 ms of every 4 ms, plus unrelated 2 µs gaps
    // at other phases, plus one tick followed by 3 ms of another thread.
    let tick = 4 * MS;
    let mut g: Vec<Gap> = Vec::new();
    for k in 0..250u64 {
        g.push(Gap { start: k * tick + 1_234_000 + (k % 5) * 1_000, len: if k == 100 { 3 * MS } else { 3_000 } });
        g.push(Gap { start: k * tick + 2_900_000 + k * 7_919 % 900_000, len: 2_000 });
    }
    g.sort_by_key(|x| x.start);
    let is_tick = gaps::tick_gaps(&g, tick, SEC);
    let ticks: Vec<&Gap> = g.iter().zip(&is_tick).filter(|x| *x.1).map(|x| x.0).collect();
    assert_eq!(ticks.len(), 249, "every tick but the one that preempted");
    assert!(ticks.iter().all(|x| x.len == 3_000));
    // Too few gaps at any phase: no tick.
    assert!(gaps::tick_gaps(&g[..20], tick, SEC).iter().all(|t| !t));
    // The loop method turns them into the tick and unattributed gaps, short and long apart.
    let run = LoopRun { cpu: 0, tid: 1, start: 0, end: SEC, gaps: g.clone(), dropped: 0, iterations: 1 };
    let ints = noise::loop_interferences(&[run], Some(250));
    let n = |name: &str| ints.iter().filter(|i| i.name == name).count();
    assert_eq!((n("local_timer"), n("interruptions < 10 us"), n("interruptions >= 10 us")), (249, 250, 1));
}

#[test]
fn the_self_timing_loop_runs_pinned_and_accounts_for_its_window() {
    let cpus = wakesim_hostbench::sys::allowed_cpus();
    let r = gaps::self_timing_loops(&cpus[..1], 20 * MS, gaps::DEFAULT_THRESHOLD_NS).unwrap();
    assert_eq!(r.len(), 1);
    let r = &r[0];
    assert_eq!(r.cpu, cpus[0]);
    assert!(r.end - r.start >= 20 * MS && r.iterations > 1000, "{} ns, {} reads", r.end - r.start, r.iterations);
    assert!(r.lost_ns() <= r.end - r.start);
    assert!(r.gaps.iter().all(|g| g.len >= gaps::DEFAULT_THRESHOLD_NS && g.start >= r.start && g.end() <= r.end));
    assert!(gaps::self_timing_loops(&[100_000], MS, 1_000).unwrap_err().to_string().contains("CPU 100000"));
    assert!(gaps::self_timing_loops(&[], MS, 1_000).is_err());
}

#[test]
fn trace_lines_split_into_cpu_time_event_and_body() {
    let l = trace::parse_line("            bash-22496   [000] d.h1.  8319.196217: local_timer_entry: vector=236").unwrap();
    assert_eq!((l.task, l.cpu, l.ts, l.event, l.body), ("bash-22496", 0, 8_319_196_217_000, "local_timer_entry", "vector=236"));
    // A comm with spaces and brackets; no flags column.
    let l = trace::parse_line(" Web [Content]-77 [013]  12.5: sched_switch: prev_comm=a b prev_pid=1").unwrap();
    assert_eq!((l.task, l.cpu, l.ts, l.event), ("Web [Content]-77", 13, 12_500_000_000, "sched_switch"));
    // The osnoise tracer's summary line has no event name.
    let l = trace::parse_line("           <...>-859     [000] ....    81.637220: 1000000        190  99.98100       9     18      0   1007     18      1").unwrap();
    assert_eq!(l.event, "");
    assert!(trace::parse_line("# tracer: nop").is_none());
    assert!(trace::parse_line("").is_none());
    assert_eq!(trace::parse_secs("5789.857529929"), Some(5_789_857_529_929));
    assert_eq!(trace::parse_secs("1.5"), Some(1_500_000_000));
    assert_eq!(trace::parse_secs("1.x"), None);
}

#[test]
fn per_cpu_kthreads_are_grouped_by_family_and_the_rest_by_comm() {
    assert_eq!(noise::thread_group("kworker/3:1"), ("kworker/{cpu}".into(), Some(3)));
    assert_eq!(noise::thread_group("kworker/3:0H"), ("kworker/{cpu}H".into(), Some(3)));
    assert_eq!(noise::thread_group("kworker/u8:2"), ("kworker/u*".into(), None));
    assert_eq!(noise::thread_group("ksoftirqd/12"), ("ksoftirqd/{cpu}".into(), Some(12)));
    assert_eq!(noise::thread_group("migration/0"), ("migration/{cpu}".into(), Some(0)));
    assert_eq!(noise::thread_group("kworker/R-mm_percpu_wq"), ("kworker/R-mm_percpu_wq".into(), None));
    assert_eq!(noise::thread_group("jbd2/vda1-8"), ("jbd2/vda1-8".into(), None));
    assert_eq!(noise::thread_group("rcu_preempt"), ("rcu_preempt".into(), None));
}

/// A tracefs text trace of `secs` s on 2 CPUs, as the tracefs method records it: the tick at
/// 250 Hz (3 µs) with a TIMER softirq every 10th tick holding a nested 2 µs device interrupt;
/// a NIC interrupt of 4 µs on CPU 0 100 times a second; per-CPU kworkers waking 10 times a
/// second for 20 µs; a daemon waking every 200 ms for 50 µs preempted once by the tick; our
/// own loop thread (pid 900/901) in between.
fn synthetic_trace(secs: u64) -> String {
    let mut ev: Vec<(u64, usize, String)> = Vec::new();
    let us = 1_000u64;
    for cpu in 0..2usize {
        let own = 900 + cpu;
        for k in 0..250 * secs {
            let t = k * 4 * MS + 100 * us + cpu as u64 * 2 * MS;
            ev.push((t, cpu, "local_timer_entry: vector=236".into()));
            ev.push((t + 3 * us, cpu, "local_timer_exit: vector=236".into()));
            if k % 10 == 0 {
                ev.push((t + 4 * us, cpu, "softirq_entry: vec=1 [action=TIMER]".into()));
                ev.push((t + 5 * us, cpu, "irq_handler_entry: irq=40 name=virtio3-tx".into()));
                ev.push((t + 7 * us, cpu, "irq_handler_exit: irq=40 ret=handled".into()));
                ev.push((t + 10 * us, cpu, "softirq_exit: vec=1 [action=TIMER]".into()));
            }
        }
        for k in 0..10 * secs {
            let t = k * 100 * MS + 37 * MS + cpu as u64 * MS;
            let kw = 50 + cpu;
            ev.push((t, cpu, format!("sched_switch: prev_comm=loop prev_pid={own} prev_prio=120 prev_state=R+ ==> next_comm=kworker/{cpu}:1 next_pid={kw} next_prio=120")));
            ev.push((t + 20 * us, cpu, format!("sched_switch: prev_comm=kworker/{cpu}:1 prev_pid={kw} prev_prio=120 prev_state=I ==> next_comm=loop next_pid={own} next_prio=120")));
        }
    }
    for k in 0..100 * secs {
        let t = k * 10 * MS + 3 * MS + 500 * us;
        ev.push((t, 0, "irq_handler_entry: irq=41 name=virtio3-rx".into()));
        ev.push((t + 4 * us, 0, "irq_handler_exit: irq=41 ret=handled".into()));
    }
    // The daemon: 30 µs, preempted (R), 20 µs more, then sleeps (S).
    for k in 0..5 * secs {
        let t = k * 200 * MS + 61 * MS;
        ev.push((t, 1, "sched_switch: prev_comm=loop prev_pid=901 prev_prio=120 prev_state=R ==> next_comm=my daemon next_pid=700 next_prio=125".into()));
        ev.push((t + 30 * us, 1, "sched_switch: prev_comm=my daemon prev_pid=700 prev_prio=125 prev_state=R+ ==> next_comm=loop next_pid=901 next_prio=120".into()));
        ev.push((t + 40 * us, 1, "sched_switch: prev_comm=loop prev_pid=901 prev_prio=120 prev_state=R ==> next_comm=my daemon next_pid=700 next_prio=125".into()));
        ev.push((t + 60 * us, 1, "sched_switch: prev_comm=my daemon prev_pid=700 prev_prio=125 prev_state=S ==> next_comm=loop next_pid=901 next_prio=120".into()));
    }
    ev.sort_by_key(|e| (e.0, e.1));
    let mut s = String::from("# tracer: nop\n#\n");
    for (t, cpu, body) in ev {
        writeln!(s, "          loop-{}   [{cpu:03}] d.h1. {:>6}.{:06}: {body}", 900 + cpu, 100 + t / SEC, t % SEC / 1_000).unwrap();
    }
    s
}

#[test]
fn a_tracefs_trace_becomes_a_census_and_a_profile_with_the_rates_it_holds() {
    let secs = 2;
    let t = noise::parse_trace(&synthetic_trace(secs));
    let w0 = 100 * SEC;
    let own: BTreeSet<i32> = [900, 901].into();
    let c = noise::census(&t.interferences, (w0, w0 + secs * SEC), secs * SEC, &[0, 1], &own, &BTreeSet::new(), Some(250));
    let src = |name: &str| c.sources.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name}: {:?}", c.sources.iter().map(|s| &s.name).collect::<Vec<_>>()));
    let tick = src("local_timer");
    assert_eq!((tick.verdict.clone(), tick.count()), (Verdict::Tick, 1000));
    assert!((tick.mean_ns() - 3_000.0).abs() < 1.0);
    // The softirq's 6 µs net of the 2 µs interrupt inside it.
    let timer = src("TIMER");
    assert_eq!((timer.kind, timer.count()), (Kind::Softirq, 100));
    assert!((timer.mean_ns() - 4_000.0).abs() < 1.0, "{}", timer.mean_ns());
    assert_eq!(src("virtio3-rx").count(), 200);
    assert_eq!(src("virtio3-rx").instances.keys().collect::<Vec<_>>(), [&0]);
    let kw = src("kworker/{cpu}");
    assert!(!kw.anywhere);
    assert_eq!(kw.count(), 40);
    assert_eq!(kw.arrival(), Arrival::Periodic);
    // The daemon's two runs are one activation of 50 µs; our own threads are not in the census.
    let d = src("my daemon");
    assert!(d.anywhere);
    assert_eq!(d.count(), 10);
    assert!((d.mean_ns() - 50_000.0).abs() < 1.0, "{}", d.mean_ns());
    assert!(c.sources.iter().all(|s| s.name != "loop"));

    let p = c.to_profile("host-measured", "measured by a test", false, 2, 500);
    // The tick is the model's own: no entry at exactly HZ.
    assert!(p.irqs.iter().all(|i| i.name != "local_timer" && i.name != "hrtimer"), "{p:?}");
    let irq = |n: &str| p.irqs.iter().find(|i| i.name == n).unwrap_or_else(|| panic!("{n}: {p:?}"));
    let rx = irq("virtio3-rx");
    assert!(!rx.per_cpu && rx.cpus == "0");
    assert!((rx.period_ms - 10.0).abs() < 1e-6 && (rx.handler_us - 4.0).abs() < 1e-6, "{rx:?}");
    let softirq = irq("TIMER softirq");
    assert!(softirq.per_cpu && softirq.cpus == "all");
    assert!((softirq.period_ms - 40.0).abs() < 1e-6 && (softirq.handler_us - 4.0).abs() < 1e-6, "{softirq:?}");
    let task = |n: &str| p.tasks.iter().find(|t| t.name == n).unwrap_or_else(|| panic!("{n}: {p:?}"));
    let k = task("kworker/{cpu}");
    assert!(k.per_cpu && k.cpus == "all" && k.arrival == Arrival::Periodic);
    assert!((k.period_ms - 100.0).abs() < 1e-6 && (k.run_us - 20.0).abs() < 1e-6 && k.nice == 0, "{k:?}");
    let dm = task("my daemon");
    assert!(!dm.per_cpu && dm.cpus == "all" && dm.nice == 5);
    assert!((dm.period_ms - 200.0).abs() < 1e-6 && (dm.run_us - 50.0).abs() < 1e-6, "{dm:?}");
    assert!(dm.source.starts_with("measured by a test: 10 in 2.0 s"), "{}", dm.source);
    // The file parses back to the same profile.
    assert_eq!(NoiseProfile::from_toml_str(&p.to_toml()).unwrap(), p);
}

#[test]
fn interrupts_beyond_hz_are_hrtimers_and_uneven_sources_get_one_entry_per_cpu() {
    // CPU 0: 300 local_timer/s at HZ=250 → 50 hrtimer interrupts/s beyond the tick;
    // CPU 1: 250. A device interrupt 100/s on CPU 0 and 10/s on CPU 1: one entry each.
    let mut ints = Vec::new();
    let mk = |cpu, name: &str, start, dur| trace::Interference { cpu, kind: Kind::Irq, name: name.into(), pid: -1, prio: 120, start, dur, ends_activation: true };
    for (cpu, n) in [(0usize, 300u64), (1, 250)] {
        for k in 0..n {
            ints.push(mk(cpu, "local_timer", k * SEC / n, 2_000));
        }
    }
    for (cpu, n) in [(0usize, 100u64), (1, 10)] {
        for k in 0..n {
            ints.push(mk(cpu, "eth0", k * SEC / n + 1, 5_000));
        }
    }
    let c = noise::census(&ints, (0, SEC), SEC, &[0, 1], &BTreeSet::new(), &BTreeSet::new(), Some(250));
    let p = c.to_profile("t", "test", true, 4, 0);
    assert!(p.skew_tick);
    let hr = p.irqs.iter().find(|i| i.name == "hrtimer").expect("hrtimer entry");
    assert!(hr.per_cpu && hr.cpus == "0-1", "two of four CPUs measured: {hr:?}");
    assert!((hr.period_ms - 40.0).abs() < 1e-6, "25 per CPU per second: {hr:?}");
    let eth: Vec<_> = p.irqs.iter().filter(|i| i.name.starts_with("eth0")).collect();
    assert_eq!(eth.len(), 2, "{eth:?}");
    assert!((eth[0].period_ms - 10.0).abs() < 1e-6 && eth[0].cpus == "0" && eth[0].name == "eth0 (CPU 0)");
    assert!((eth[1].period_ms - 100.0).abs() < 1e-6 && eth[1].cpus == "1");
    assert_eq!(NoiseProfile::from_toml_str(&p.to_toml()).unwrap(), p);
}

#[test]
fn osnoise_events_become_interferences_and_the_summary_is_read() {
    // From Documentation/trace/osnoise-tracer.rst, plus a softirq, an NMI and hardware noise.
    let text = "\
# tracer: osnoise
           <...>-859     [000] ....    81.637220: 1000000        190  99.98100       9     18      0   1007     18      1
       osnoise/8-961     [008] d.h.  5789.857532: irq_noise: local_timer:236 start 5789.857529929 duration 1845 ns
       osnoise/8-961     [008] dNh.  5789.858408: irq_noise: local_timer:236 start 5789.858404871 duration 2848 ns
     migration/8-54      [008] d...  5789.858413: thread_noise: migration/8:54 start 5789.858409300 duration 3068 ns
       osnoise/8-961     [008] ....  5789.858413: sample_threshold: start 5789.858404555 duration 8812 ns interference 2
       osnoise/8-961     [008] ..s.  5789.859000: softirq_noise:    TIMER:1 start 5789.858990000 duration 2000 ns
     kworker/8:1-77      [008] d...  5789.859100: thread_noise: kworker/8:1:77 start 5789.859090000 duration 4000 ns
       osnoise/8-961     [008] d.h.  5789.859200: nmi_noise: start 5789.859190000 duration 900 ns
       osnoise/8-961     [008] ....  5789.859300: sample_threshold: start 5789.859290000 duration 7000 ns interference 0
";
    let t = noise::parse_trace(text);
    assert_eq!(t.summaries.len(), 1);
    let s = &t.summaries[0];
    assert_eq!((s.cpu, s.runtime_us, s.noise_us, s.max_single_us, s.hw, s.nmi, s.irq, s.softirq, s.thread), (0, 1_000_000, 190, 9, 18, 0, 1007, 18, 1));
    let got: Vec<(Kind, &str, i32, u64)> = t.interferences.iter().map(|i| (i.kind, i.name.as_str(), i.pid, i.dur)).collect();
    assert_eq!(
        got,
        vec![
            (Kind::Irq, "local_timer", -1, 1845),
            (Kind::Irq, "local_timer", -1, 2848),
            (Kind::Thread, "migration/8", 54, 3068),
            (Kind::Softirq, "TIMER", -1, 2000),
            (Kind::Thread, "kworker/8:1", 77, 4000),
            (Kind::Nmi, "NMI", -1, 900),
            (Kind::Gap, "hardware or hypervisor", -1, 7000),
        ]
    );
    assert_eq!(t.interferences[2].start, 5_789_858_409_300);
    // Into a profile: the kworker is CPU 8's; the hardware noise less the entry/exit cost.
    let c = noise::census(&t.interferences, (0, u64::MAX), SEC, &[8], &BTreeSet::new(), &BTreeSet::new(), Some(1000));
    let p = c.to_profile("t", "osnoise test", false, 16, 500);
    let kw = p.tasks.iter().find(|t| t.name == "kworker/{cpu}").unwrap();
    assert!(kw.per_cpu && kw.cpus == "8" && (kw.run_us - 4.0).abs() < 1e-9 && (kw.period_ms - 1000.0).abs() < 1e-9, "{kw:?}");
    let hw = p.irqs.iter().find(|i| i.name == "hardware or hypervisor").unwrap();
    assert!((hw.handler_us - 6.5).abs() < 1e-9, "{hw:?}");
    assert!(p.irqs.iter().any(|i| i.name == "NMI") && p.irqs.iter().any(|i| i.name == "TIMER softirq"));
    assert_eq!(NoiseProfile::from_toml_str(&p.to_toml()).unwrap(), p);
}

#[test]
fn a_loop_gap_with_no_event_inside_is_hardware_noise() {
    let text = "\
          loop-900   [000] d.h1.   100.000010: local_timer_entry: vector=236
          loop-900   [000] d.h1.   100.000012: local_timer_exit: vector=236
";
    let t = noise::parse_trace(text);
    // A gap around the tick (the event 7 µs into it), one with none, one on another CPU.
    let run = |cpu, gaps| LoopRun { cpu, tid: 900, start: 100 * SEC, end: 101 * SEC, gaps, dropped: 0, iterations: 1 };
    let g = |start_us: u64, len_us: u64| Gap { start: 100 * SEC + start_us * 1_000, len: len_us * 1_000 };
    let hw = noise::unattributed_gaps(&[run(0, vec![g(3, 12), g(500, 2)]), run(1, vec![g(3, 12)])], &t);
    let got: Vec<(usize, u64)> = hw.iter().map(|i| (i.cpu, i.start)).collect();
    assert_eq!(got, vec![(0, 100 * SEC + 500_000), (1, 100 * SEC + 3_000)]);
    assert!(hw.iter().all(|i| i.kind == Kind::Gap));
}

#[test]
fn transient_and_cpu_hungry_thread_groups_are_listed_but_not_profiled() {
    let th = |pid, name: &str, start, dur| trace::Interference { cpu: 0, kind: Kind::Thread, name: name.into(), pid, prio: 120, start, dur, ends_activation: true };
    let ints = vec![th(10, "rustc", 1_000, 200 * MS), th(11, "cron", 2_000, 10_000), th(12, "agent", 3_000, 10_000)];
    let transient: BTreeSet<i32> = [11].into();
    let c = noise::census(&ints, (0, SEC), SEC, &[0], &BTreeSet::new(), &transient, None);
    let v = |n: &str| c.sources.iter().find(|s| s.name == n).unwrap().verdict.clone();
    assert!(matches!(v("rustc"), Verdict::Excluded(w) if w.contains("20 % of a CPU")));
    assert!(matches!(v("cron"), Verdict::Excluded(w) if w.contains("transient")));
    assert_eq!(v("agent"), Verdict::Noise);
    let p = c.to_profile("t", "test", false, 1, 0);
    assert_eq!(p.tasks.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["agent"]);
    // This process is older than a minute only in a long test run; its own pid is a live user
    // thread, a pid that does not exist is gone: transient.
    assert!(noise::transient_threads([i32::MAX - 1], noise::MIN_AGE_S).contains(&(i32::MAX - 1)));
}
