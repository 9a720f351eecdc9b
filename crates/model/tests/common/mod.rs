//! Shared helpers for the model's behaviour tests: small machines, hand-built workloads.
#![allow(dead_code)]

use wakesim_costs::profile_for;
use wakesim_engine::{Time, MSEC, USEC};
use wakesim_machine::preset;
use wakesim_model::{Config, Features, RunResult, Sim};
use wakesim_workloads::{ChanKind, ChannelSpec, Dur, Metric, Op, Outcome, Reporter, TaskSpec, Workload};

#[derive(Debug)]
pub struct Elapsed;
impl Reporter for Elapsed {
    fn render(&self, out: &Outcome) -> String {
        format!("{}", out.end_time)
    }
    fn metric(&self, out: &Outcome) -> Metric {
        Metric { name: "elapsed".into(), unit: "ns".into(), value: out.end_time as f64, higher_is_better: false }
    }
}

pub fn config(machine: &str, features: Features, seed: u64) -> Config {
    let m = preset(machine).expect("preset");
    let c = profile_for(&m.cost_profile).expect("profile");
    Config { machine: m, costs: c, features, seed, duration_cap: 10 * wakesim_engine::SEC }
}

pub fn pipe(name: &str) -> ChannelSpec {
    ChannelSpec { name: name.into(), kind: ChanKind::Pipe, capacity: 65536 }
}

/// `pairs` ping-pong pairs over two pipes each, `loops` round trips.
pub fn ping_pong(pairs: u32, loops: u64) -> Workload {
    let mut tasks = Vec::new();
    let mut channels = Vec::new();
    for i in 0..pairs {
        let (a, b) = (2 * i, 2 * i + 1);
        channels.push(pipe(&format!("p{a}")));
        channels.push(pipe(&format!("p{b}")));
        let pa = vec![
            Op::LoopStart { count: loops, end: 3 },
            Op::Recv { chan: a, bytes: 4 },
            Op::Send { chan: b, bytes: 4 },
            Op::LoopEnd { start: 0 },
            Op::Exit,
        ];
        let pb = vec![
            Op::Mark(0),
            Op::LoopStart { count: loops, end: 4 },
            Op::Send { chan: a, bytes: 4 },
            Op::Recv { chan: b, bytes: 4 },
            Op::LoopEnd { start: 1 },
            Op::Mark(1),
            Op::Exit,
        ];
        let mut ta = TaskSpec::new(format!("pp{i}a"), pa);
        ta.mm = 2 * i;
        let mut tb = TaskSpec::new(format!("pp{i}b"), pb);
        tb.mm = 2 * i + 1;
        tasks.push(ta);
        tasks.push(tb);
    }
    Workload { name: "ping-pong".into(), tasks, channels, futexes: 0, reporter: Box::new(Elapsed) }
}

/// Tasks that compute `work` in `chunks` pieces separated by `sleep`.
pub fn sleepers(n: u32, chunks: u64, work: Time, sleep: Time) -> Workload {
    let tasks = (0..n)
        .map(|i| {
            TaskSpec::new(
                format!("s{i}"),
                vec![
                    Op::LoopStart { count: chunks, end: 3 },
                    Op::Compute(Dur::Fixed(work)),
                    Op::Sleep(Dur::Fixed(sleep)),
                    Op::LoopEnd { start: 0 },
                    Op::Exit,
                ],
            )
        })
        .collect();
    Workload { name: "sleepers".into(), tasks, channels: vec![], futexes: 0, reporter: Box::new(Elapsed) }
}

/// CPU hogs computing `work` each.
pub fn hogs(n: u32, work: Time) -> Workload {
    let tasks = (0..n).map(|i| TaskSpec::new(format!("hog{i}"), vec![Op::Compute(Dur::Fixed(work)), Op::Exit])).collect();
    Workload { name: "hogs".into(), tasks, channels: vec![], futexes: 0, reporter: Box::new(Elapsed) }
}

pub fn run(machine: &str, f: Features, wl: &Workload, seed: u64) -> RunResult {
    let sim = Sim::new(config(machine, f, seed), wl).expect("sim");
    sim.run()
}

pub const _U: Time = USEC;
pub const _M: Time = MSEC;
