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
    Config { machine: m, costs: c, features, seed, duration_cap: 10 * wakesim_engine::SEC, noise: wakesim_model::NoiseProfile::none(), governor: wakesim_model::GovernorKind::Ewma, task_groups: wakesim_model::TaskGroups::Root }
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
    Workload { name: "ping-pong".into(), tasks, channels, futexes: 0, reporter: Box::new(Elapsed), duration: None }
}

/// Two processes (different `mm`) pinned to `a` and `b`, ping-ponging one byte through two
/// pipes for `rounds` round trips.
pub fn pinned_ping_pong(a: usize, b: usize, rounds: u64) -> Workload {
    let first = looped(rounds, vec![Op::Send { chan: 0, bytes: 1 }, Op::Recv { chan: 1, bytes: 1 }]);
    let second = looped(rounds, vec![Op::Recv { chan: 0, bytes: 1 }, Op::Send { chan: 1, bytes: 1 }]);
    let process = |name: &str, prog, cpu: usize, mm| TaskSpec { mm, ..pinned(task(name, prog), &[cpu]) };
    let tasks = vec![process("a", first, a, 1), process("b", second, b, 2)];
    Workload { name: "pipe ping-pong".into(), tasks, channels: vec![pipe("ab"), pipe("ba")], futexes: 0, reporter: Box::new(Elapsed), duration: None }
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
    Workload { name: "sleepers".into(), tasks, channels: vec![], futexes: 0, reporter: Box::new(Elapsed), duration: None }
}

/// CPU hogs computing `work` each.
pub fn hogs(n: u32, work: Time) -> Workload {
    let tasks = (0..n).map(|i| TaskSpec::new(format!("hog{i}"), vec![Op::Compute(Dur::Fixed(work)), Op::Exit])).collect();
    Workload { name: "hogs".into(), tasks, channels: vec![], futexes: 0, reporter: Box::new(Elapsed), duration: None }
}

pub fn run(machine: &str, f: Features, wl: &Workload, seed: u64) -> RunResult {
    let sim = Sim::new(config(machine, f, seed), wl).expect("sim");
    sim.run()
}

pub const _U: Time = USEC;
pub const _M: Time = MSEC;

// ---------------------------------------------------------------------------------------------
// Builders for mechanism tests (hand-built task graphs, pinned tasks, cost overrides).

use wakesim_machine::CpuSet;

/// A task spec with a program.
/// A task that exists from time 0 (no fork delay), as a task file's.
pub fn task(name: &str, program: Vec<Op>) -> TaskSpec {
    TaskSpec { origin: wakesim_workloads::Origin::Existing, ..TaskSpec::new(name, program) }
}

/// `body` run `count` times, then exit.
pub fn looped(count: u64, body: Vec<Op>) -> Vec<Op> {
    let mut p = vec![Op::LoopStart { count, end: body.len() as u32 + 1 }];
    p.extend(body);
    p.extend([Op::LoopEnd { start: 0 }, Op::Exit]);
    p
}

/// Restricts `t` to `cpus` (and starts it on the first of them unless a start CPU is set).
pub fn pinned(mut t: TaskSpec, cpus: &[usize]) -> TaskSpec {
    t.allowed = Some(CpuSet::from_cpus(cpus.iter().copied()));
    t
}

/// Starts `t` on `cpu` (fork placement skipped).
pub fn start_on(mut t: TaskSpec, cpu: u32) -> TaskSpec {
    t.start_cpu = Some(cpu);
    t
}

pub fn nice(mut t: TaskSpec, n: i32) -> TaskSpec {
    t.nice = n;
    t
}

/// A workload from tasks, `nchan` pipes and `nfutex` futexes.
pub fn workload(tasks: Vec<TaskSpec>, nchan: u32, nfutex: u32) -> Workload {
    let channels = (0..nchan).map(|i| pipe(&format!("ch{i}"))).collect();
    Workload { name: "test".into(), tasks, channels, futexes: nfutex, reporter: Box::new(Elapsed), duration: None }
}

pub fn compute(ns: Time) -> Op {
    Op::Compute(Dur::Fixed(ns))
}

pub fn sleep(ns: Time) -> Op {
    Op::Sleep(Dur::Fixed(ns))
}

/// A simulation ready to be stepped (see `wakesim_model::testkit`).
pub fn sim(machine: &str, f: Features, wl: &Workload, seed: u64) -> Sim {
    Sim::new(config(machine, f, seed), wl).expect("sim")
}

/// A simulation whose config was adjusted by `adj` (cost overrides, features...).
pub fn sim_with(machine: &str, wl: &Workload, seed: u64, adj: impl FnOnce(&mut Config)) -> Sim {
    let mut cfg = config(machine, v6_6(), seed);
    adj(&mut cfg);
    cfg.costs.validate().expect("valid cost override");
    Sim::new(cfg, wl).expect("sim")
}

/// Cost override: the only idle state is a non-polling one (HLT/WFI-like, 1 µs exit), so every
/// kick of an idle CPU needs a real IPI.
pub fn non_polling_idle(cfg: &mut Config) {
    cfg.costs.idle_states = vec![wakesim_costs::IdleState {
        name: "HLT".into(),
        exit_latency: 1_000,
        target_residency: 1_000,
        polling: false,
    }];
}

/// `cpu`'s SMT sibling on preset `machine` (its lowest domain's other CPU).
pub fn smt_sibling(machine: &str, cpu: usize) -> usize {
    let m = preset(machine).expect("preset");
    let sib = m.domains[cpu][0].span.iter().find(|&c| c != cpu).expect("an SMT sibling");
    sib
}

/// Two CPU hogs of 400 ms started on CPU 0 and its SMT sibling of test-smt2 (4 cores x 2
/// threads, one LLC); `pin` restricts each to its CPU.
pub fn hogs_on_one_core(pin: bool) -> Workload {
    let sib = smt_sibling("test-smt2", 0);
    let hog = |name: &str, cpu: usize| {
        let t = start_on(task(name, vec![compute(400 * MSEC), Op::Exit]), cpu as u32);
        if pin {
            pinned(t, &[cpu])
        } else {
            t
        }
    };
    workload(vec![hog("a", 0), hog("b", sib)], 0, 0)
}

/// The v6.6 profile: the kernel most mechanism tests are written against (EEVDF, SIS_UTIL,
/// no delayed dequeue, no SM_IDLE).
pub fn v6_6() -> Features {
    Features::for_kernel("v6.6").unwrap()
}

/// The v6.6 profile with a `--features` spec (`+A,-B`) applied.
pub fn feat(spec: &str) -> Features {
    let mut f = v6_6();
    f.apply(spec).expect("feature");
    f
}

/// Steps `sim` one event at a time until `cond` holds (checked after each event), at most
/// until `limit`; panics with `what` if it never does. Returns the time it became true.
pub fn step_until_cond(sim: &mut Sim, limit: Time, what: &str, mut cond: impl FnMut(&Sim) -> bool) -> Time {
    loop {
        if cond(sim) {
            return sim.now();
        }
        match sim.step() {
            Some((t, _)) if t <= limit => {}
            _ => panic!("never happened before {limit} ns: {what}"),
        }
    }
}

/// A deterministic xorshift generator for building random task graphs in tests.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// A random small task graph: pipe ping-pong pairs with compute between messages, futex
/// producer/consumer pairs (semaphore semantics: no lost wakeups), sleepers and hogs, some
/// pinned, some niced. Every task can finish whatever the schedule.
pub fn random_graph(seed: u64, ncpus: usize) -> Workload {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut tasks = Vec::new();
    let (mut nchan, mut nfutex) = (0u32, 0u32);
    let groups = r.range(4, 9);
    for g in 0..groups {
        match r.range(0, 3) {
            0 => {
                // pipe ping-pong pair
                let (a, b) = (nchan, nchan + 1);
                nchan += 2;
                let loops = r.range(20, 200);
                let w = r.range(0, 20) * USEC;
                let ta = vec![
                    Op::LoopStart { count: loops, end: 4 },
                    Op::Recv { chan: a, bytes: 8 },
                    Op::Compute(Dur::Exp { mean: w.max(1) }),
                    Op::Send { chan: b, bytes: 8 },
                    Op::LoopEnd { start: 0 },
                    Op::Exit,
                ];
                let tb = vec![
                    Op::LoopStart { count: loops, end: 4 },
                    Op::Send { chan: a, bytes: 8 },
                    Op::Recv { chan: b, bytes: 8 },
                    Op::Compute(Dur::Uniform { lo: 0, hi: w }),
                    Op::LoopEnd { start: 0 },
                    Op::Exit,
                ];
                tasks.push(task(&format!("g{g}pa"), ta));
                tasks.push(task(&format!("g{g}pb"), tb));
            }
            1 => {
                // futex producer / consumers
                let fx = nfutex;
                nfutex += 1;
                let consumers = r.range(1, 3);
                let per = r.range(10, 100);
                let prod = vec![
                    Op::LoopStart { count: per * consumers, end: 3 },
                    Op::Compute(Dur::Exp { mean: r.range(1, 50) * USEC }),
                    Op::FutexWake { futex: fx, n: 1 },
                    Op::LoopEnd { start: 0 },
                    Op::Exit,
                ];
                tasks.push(task(&format!("g{g}prod"), prod));
                for k in 0..consumers {
                    let cons = vec![
                        Op::LoopStart { count: per, end: 3 },
                        Op::FutexWait { futex: fx },
                        Op::Compute(Dur::Normal { mean: 20 * USEC, sd: 10 * USEC }),
                        Op::LoopEnd { start: 0 },
                        Op::Exit,
                    ];
                    let mut t = task(&format!("g{g}cons{k}"), cons);
                    if r.range(0, 3) == 0 {
                        let c = r.range(0, ncpus as u64 - 1) as usize;
                        t = pinned(t, &[c, (c + 1) % ncpus]);
                    }
                    tasks.push(t);
                }
            }
            2 => {
                // sleepers
                for k in 0..r.range(1, 4) {
                    let t = task(
                        &format!("g{g}sl{k}"),
                        vec![
                            Op::LoopStart { count: r.range(5, 50), end: 3 },
                            Op::Compute(Dur::Uniform { lo: USEC, hi: 300 * USEC }),
                            Op::Sleep(Dur::Exp { mean: r.range(10, 500) * USEC }),
                            Op::LoopEnd { start: 0 },
                            Op::Exit,
                        ],
                    );
                    tasks.push(nice(t, r.range(0, 10) as i32 - 5));
                }
            }
            _ => {
                // a hog, sometimes pinned
                let mut t = task(&format!("g{g}hog"), vec![compute(r.range(1, 20) * MSEC), Op::Exit]);
                if r.range(0, 1) == 0 {
                    t = pinned(t, &[r.range(0, ncpus as u64 - 1) as usize]);
                }
                tasks.push(t);
            }
        }
    }
    workload(tasks, nchan, nfutex)
}
