//! rt-app JSON workloads (`scheduler-tools/rt-app@55cb0c0:doc/tutorial.txt`, `src/rt-app.c`):
//! `rt-app FILE.json`. The documented subset:
//!
//! * `global`: `duration` (s, -1 = until the threads end) sets the workload's duration;
//!   `default_policy` must be SCHED_OTHER; `calibration`, `pi_enabled`, `lock_pages`, `logdir`,
//!   `log_basename`, `log_size`, `ftrace`, `gnuplot`, `io_device`, `mem_buffer_size`,
//!   `cumulative_slack` are accepted and have no effect. `resources` is accepted and ignored.
//! * a task: `instance` (1), `loop` (-1 = forever), `delay` (µs), `cpus` ([..]), `priority`
//!   (the nice value for SCHED_OTHER), `policy` (SCHED_OTHER only), `taskgroup`, `phases`
//!   (each with `loop`, default 1, `cpus`, and events), or events directly.
//! * events, in file order, a key matching by prefix (`run0`, `sleep1`…): `run` / `runtime`
//!   (µs of CPU work), `sleep` (µs), `timer` `{ "ref", "period" }` (a periodic timer; one timer
//!   per thread: shared or differently named timers are rejected), `lock` / `unlock` (a pthread
//!   mutex), `sem_post` / `sem_wait` (a semaphore), `signal` / `wait` `{ "ref", "mutex" }`
//!   (a condition variable, modelled with semaphore semantics: a signal sent while nobody waits
//!   is remembered, where rt-app's would be lost), `barrier` (parties = every thread instance
//!   that references the name).
//! * anything else — `broad`, `sync`, `suspend`/`resume`, `mem`, `iorun`, `memrun`, `yield`,
//!   `fork`, other policies, `dl-*`, `util_min`/`util_max`, `nodes_membind` — is an error naming
//!   the key and its `file:line:col`.
//!
//! The timer counts its periods from the thread's first timer event (rt-app: from the thread's
//! start), and a late period does not re-anchor it (rt-app's default "relative" mode does).
//!
//! Output (rt-app itself writes one log file per thread): the `[rt-app] <notice>` start lines,
//! then per thread instance one line with the columns of rt-app's log (`log_timing`) averaged
//! over its activations (one activation = one phase iteration): count, mean `run` and
//! `period`, mean `slack` and `wu_lat` of its timer events.

use super::json::{self, Json, Node};
use super::prog::{Prog, FOREVER};
use super::{Invocation, Tool};
use crate::{Dur, Metric, Op, Outcome, Reporter, TaskSpec, Workload, WorkloadError};
use std::collections::HashMap;
use wakesim_engine::{Time, SEC};
use wakesim_machine::CpuSet;

pub(crate) const TOOL: Tool = Tool {
    name: "rt-app",
    command: &["rt-app"],
    flags: "FILE.json: tasks with instance, loop, delay, cpus, priority (nice), taskgroup, \
            phases; events run, runtime, sleep, timer, lock, unlock, sem_post, sem_wait, signal, \
            wait, barrier; global duration",
    build,
};

/// Per phase iteration: start and end.
pub const MARK_ACT_START: u32 = 0;
pub const MARK_ACT_END: u32 = 1;
/// Around a timer event: `MARK_TIMER + period_us * 2` before, `+ 1` after.
pub const MARK_TIMER: u32 = 1_000_000;

fn build(inv: &Invocation) -> Result<Workload, WorkloadError> {
    let [path] = inv.args else {
        return Err(WorkloadError::arg("rt-app", "usage: rt-app FILE.json"));
    };
    let text = std::fs::read_to_string(path).map_err(|source| WorkloadError::Io { path: path.clone(), source })?;
    from_json(&text, path)
}

struct Cx<'a> {
    path: &'a str,
}

impl Cx<'_> {
    fn err(&self, n: &Node, msg: impl std::fmt::Display) -> WorkloadError {
        WorkloadError::File { path: format!("{}:{}", self.path, n.line), line: n.col, msg: msg.to_string() }
    }
    fn int(&self, n: &Node, what: &str) -> Result<i64, WorkloadError> {
        match n.v {
            Json::Num(x) if x.fract() == 0.0 && x.abs() < 9e15 => Ok(x as i64),
            _ => Err(self.err(n, format!("'{what}' must be an integer, not {}", n.type_name()))),
        }
    }
    fn us(&self, n: &Node, what: &str) -> Result<Time, WorkloadError> {
        let v = self.int(n, what)?;
        if v < 0 {
            return Err(self.err(n, format!("'{what}' must not be negative")));
        }
        Ok(v as Time * 1_000)
    }
    fn str<'n>(&self, n: &'n Node, what: &str) -> Result<&'n str, WorkloadError> {
        match &n.v {
            Json::Str(s) => Ok(s),
            _ => Err(self.err(n, format!("'{what}' must be a string, not {}", n.type_name()))),
        }
    }
}

/// A parsed event; names are resolved to ids later.
#[derive(Clone, Debug)]
enum Ev {
    Run(Time),
    Sleep(Time),
    Timer { name: String, period: Time },
    Lock(String),
    Unlock(String),
    Post(String),
    WaitSem(String),
    CondWait { cond: String, mutex: String },
    Barrier(String),
}

struct Phase {
    loops: i64,
    cpus: Option<CpuSet>,
    events: Vec<Ev>,
}

struct Thread {
    name: String,
    instances: u32,
    loops: i64,
    delay: Time,
    cpus: Option<CpuSet>,
    nice: i32,
    group: Option<String>,
    phases: Vec<Phase>,
}

const KNOWN_EVENTS: &str = "run, runtime, sleep, timer, lock, unlock, sem_post, sem_wait, signal, wait, barrier";

fn event_kind(key: &str) -> Option<&'static str> {
    // rt-app matches the event type by prefix; longer names first.
    ["runtime", "run", "sleep", "timer", "lock", "unlock", "sem_post", "sem_wait", "signal", "wait", "barrier", "broad", "sync", "suspend", "resume", "memrun", "mem", "iorun", "yield", "fork"]
        .into_iter()
        .find(|k| key.starts_with(k))
}

fn cpus(cx: &Cx, n: &Node) -> Result<CpuSet, WorkloadError> {
    let Json::Arr(a) = &n.v else { return Err(cx.err(n, "'cpus' must be an array of CPU numbers")) };
    let mut set = CpuSet::new();
    for c in a {
        let v = cx.int(c, "cpus")?;
        if v < 0 || v as usize >= wakesim_machine::MAX_CPUS {
            return Err(cx.err(c, format!("CPU {v} is not a CPU number")));
        }
        set.set(v as usize);
    }
    if set.is_empty() {
        return Err(cx.err(n, "'cpus' is empty"));
    }
    Ok(set)
}

/// Reads the events (and phase-level properties) of one phase object.
fn phase(cx: &Cx, obj: &Node, thread_level: bool) -> Result<Phase, WorkloadError> {
    let Json::Obj(kv) = &obj.v else { return Err(cx.err(obj, "a phase must be an object")) };
    let mut p = Phase { loops: 1, cpus: None, events: Vec::new() };
    for (k, v) in kv {
        match k.as_str() {
            "loop" if !thread_level => p.loops = cx.int(v, "loop")?,
            "cpus" => p.cpus = Some(cpus(cx, v)?),
            "loop" | "instance" | "delay" | "priority" | "phases" | "taskgroup" | "policy" => {}
            "nodes_membind" | "util_min" | "util_max" | "dl-runtime" | "dl-period" | "dl-deadline" => {
                return Err(cx.err(v, format!("'{k}' is not modelled")));
            }
            _ => {
                let ev = match event_kind(k) {
                    Some("run") | Some("runtime") => Ev::Run(cx.us(v, k)?),
                    Some("sleep") => Ev::Sleep(cx.us(v, k)?),
                    Some("timer") => {
                        let r = v.get("ref").ok_or_else(|| cx.err(v, "'timer' needs \"ref\""))?;
                        let per = v.get("period").ok_or_else(|| cx.err(v, "'timer' needs \"period\""))?;
                        if let Some(m) = v.get("mode") {
                            let m = cx.str(m, "mode")?;
                            if m != "relative" && m != "absolute" {
                                return Err(cx.err(v, format!("timer mode '{m}' (known: relative, absolute)")));
                            }
                        }
                        let period = cx.us(per, "period")?;
                        if period == 0 || period > 1_000_000_000_000 {
                            return Err(cx.err(per, "'period' must be in 1..=1000000000 us"));
                        }
                        Ev::Timer { name: cx.str(r, "ref")?.to_string(), period }
                    }
                    Some("lock") => Ev::Lock(cx.str(v, k)?.into()),
                    Some("unlock") => Ev::Unlock(cx.str(v, k)?.into()),
                    Some("sem_post") | Some("signal") => Ev::Post(cx.str(v, k)?.into()),
                    Some("sem_wait") => Ev::WaitSem(cx.str(v, k)?.into()),
                    Some("wait") => {
                        let r = v.get("ref").ok_or_else(|| cx.err(v, "'wait' needs \"ref\""))?;
                        let m = v.get("mutex").ok_or_else(|| cx.err(v, "'wait' needs \"mutex\""))?;
                        Ev::CondWait { cond: cx.str(r, "ref")?.into(), mutex: cx.str(m, "mutex")?.into() }
                    }
                    Some("barrier") => Ev::Barrier(cx.str(v, k)?.into()),
                    Some(other) => return Err(cx.err(v, format!("event '{k}' ({other}) is not supported (supported: {KNOWN_EVENTS})"))),
                    None => return Err(cx.err(v, format!("unknown key '{k}' (events: {KNOWN_EVENTS})"))),
                };
                p.events.push(ev);
            }
        }
    }
    Ok(p)
}

fn thread(cx: &Cx, name: &str, obj: &Node) -> Result<Thread, WorkloadError> {
    if !matches!(obj.v, Json::Obj(_)) {
        return Err(cx.err(obj, format!("task '{name}' must be an object")));
    }
    let mut t = Thread { name: name.into(), instances: 1, loops: -1, delay: 0, cpus: None, nice: 0, group: None, phases: Vec::new() };
    if let Some(v) = obj.get("instance") {
        let n = cx.int(v, "instance")?;
        if !(0..=100_000).contains(&n) {
            return Err(cx.err(v, format!("'instance' must be in 0..=100000, got {n}")));
        }
        t.instances = n as u32;
    }
    if let Some(v) = obj.get("loop") {
        t.loops = cx.int(v, "loop")?;
    }
    if let Some(v) = obj.get("delay") {
        t.delay = cx.us(v, "delay")?;
    }
    if let Some(v) = obj.get("cpus") {
        t.cpus = Some(cpus(cx, v)?);
    }
    if let Some(v) = obj.get("policy") {
        let p = cx.str(v, "policy")?;
        if p != "SCHED_OTHER" {
            return Err(cx.err(v, format!("policy '{p}' is not modelled (only SCHED_OTHER)")));
        }
    }
    if let Some(v) = obj.get("priority") {
        let n = cx.int(v, "priority")?;
        if !(-20..=19).contains(&n) {
            return Err(cx.err(v, format!("'priority' (the nice value for SCHED_OTHER) must be in -20..=19, got {n}")));
        }
        t.nice = n as i32;
    }
    if let Some(v) = obj.get("taskgroup") {
        let g = cx.str(v, "taskgroup")?;
        t.group = (!g.is_empty()).then(|| g.to_string());
    }
    match obj.get("phases") {
        Some(ph) => {
            let Json::Obj(kv) = &ph.v else { return Err(cx.err(ph, "'phases' must be an object")) };
            for (_, p) in kv {
                t.phases.push(phase(cx, p, false)?);
            }
        }
        None => t.phases.push(phase(cx, obj, true)?),
    }
    Ok(t)
}

/// Builds the workload from rt-app JSON text; `path` names the file in errors.
pub fn from_json(text: &str, path: &str) -> Result<Workload, WorkloadError> {
    let cx = Cx { path };
    let root = json::parse(text).map_err(|e| WorkloadError::File { path: path.into(), line: 0, msg: e }).map_err(|e| match e {
        WorkloadError::File { path, msg, .. } => {
            let (pos, m) = msg.split_once(": ").unwrap_or(("0:0", &msg));
            let (l, c) = pos.split_once(':').unwrap_or(("0", "0"));
            WorkloadError::File { path: format!("{path}:{l}"), line: c.parse().unwrap_or(0), msg: m.to_string() }
        }
        e => e,
    })?;
    let Json::Obj(top) = &root.v else { return Err(cx.err(&root, "the file must be a JSON object with \"tasks\"")) };
    let mut duration = None;
    for (k, v) in top {
        match k.as_str() {
            "tasks" | "resources" => {}
            "global" => {
                let Json::Obj(g) = &v.v else { return Err(cx.err(v, "'global' must be an object")) };
                for (gk, gv) in g {
                    match gk.as_str() {
                        "duration" => {
                            let d = cx.int(gv, "duration")?;
                            if d > 0 {
                                duration = Some(d as u64 * SEC);
                            }
                        }
                        "default_policy" => {
                            let p = cx.str(gv, gk)?;
                            if p != "SCHED_OTHER" {
                                return Err(cx.err(gv, format!("default_policy '{p}' is not modelled (only SCHED_OTHER)")));
                            }
                        }
                        "calibration" | "pi_enabled" | "lock_pages" | "logdir" | "log_basename" | "log_size" | "ftrace" | "gnuplot" | "io_device" | "mem_buffer_size" | "cumulative_slack" => {}
                        _ => return Err(cx.err(gv, format!("unknown global key '{gk}'"))),
                    }
                }
            }
            _ => return Err(cx.err(v, format!("unknown top-level key '{k}' (known: tasks, global, resources)"))),
        }
    }
    let tasks_node = root.get("tasks").ok_or_else(|| cx.err(&root, "no \"tasks\" object"))?;
    let Json::Obj(tk) = &tasks_node.v else { return Err(cx.err(tasks_node, "'tasks' must be an object")) };
    let mut threads = Vec::new();
    for (name, obj) in tk {
        threads.push((thread(&cx, name, obj)?, obj));
    }
    // Resolve names: mutexes, semaphores (futexes), barriers and their parties.
    let mut mutex: HashMap<String, u32> = HashMap::new();
    let mut sem: HashMap<String, u32> = HashMap::new();
    let mut barrier: HashMap<String, (u32, u32)> = HashMap::new();
    let mut timer_users: HashMap<String, u32> = HashMap::new();
    for (t, obj) in &threads {
        let mut timers = std::collections::HashSet::new();
        for p in &t.phases {
            for e in &p.events {
                match e {
                    Ev::Barrier(b) => {
                        let next = barrier.len() as u32;
                        barrier.entry(b.clone()).or_insert((next, 0)).1 += t.instances;
                    }
                    Ev::Timer { name, .. } => {
                        timers.insert(name.clone());
                    }
                    _ => {}
                }
            }
        }
        if timers.len() > 1 {
            return Err(cx.err(obj, format!("task '{}' uses {} timers; one timer per thread is modelled", t.name, timers.len())));
        }
        for name in timers {
            let shared = !name.starts_with("unique");
            *timer_users.entry(name.clone()).or_default() += if shared { t.instances } else { 1 };
            if shared && timer_users[&name] > 1 {
                return Err(cx.err(obj, format!("timer '{name}' is shared by several threads (use a \"unique\" ref); shared timers are not modelled")));
            }
        }
    }
    let mut tasks = Vec::new();
    let mut groups: HashMap<String, u32> = HashMap::new();
    let mut names = Vec::new();
    for (t, _) in &threads {
        let mut p = Prog::new();
        if t.delay > 0 {
            p.op(Op::Sleep(Dur::Fixed(t.delay)));
        }
        p.repeat(if t.loops < 0 { FOREVER } else { t.loops as u64 });
        for ph in &t.phases {
            if ph.loops <= 0 {
                continue;
            }
            p.repeat(ph.loops as u64).mark(MARK_ACT_START);
            for e in &ph.events {
                let id = |m: &mut HashMap<String, u32>, k: &str| {
                    let n = m.len() as u32;
                    *m.entry(k.to_string()).or_insert(n)
                };
                match e {
                    Ev::Run(ns) => {
                        p.compute(*ns);
                    }
                    Ev::Sleep(ns) => {
                        if *ns > 0 {
                            p.op(Op::Sleep(Dur::Fixed(*ns)));
                        }
                    }
                    Ev::Timer { period, .. } => {
                        let us = (*period / 1_000) as u32;
                        p.mark(MARK_TIMER + 2 * us).op(Op::SleepUntilNext { period: *period }).mark(MARK_TIMER + 2 * us + 1);
                    }
                    Ev::Lock(m) => {
                        p.op(Op::Lock { id: id(&mut mutex, m) });
                    }
                    Ev::Unlock(m) => {
                        p.op(Op::Unlock { id: id(&mut mutex, m) });
                    }
                    Ev::Post(s) => {
                        p.wake(id(&mut sem, s), 1);
                    }
                    Ev::WaitSem(s) => {
                        p.wait(id(&mut sem, s));
                    }
                    Ev::CondWait { cond, mutex: m } => {
                        // pthread_cond_wait: release the mutex, wait, retake it.
                        let mid = id(&mut mutex, m);
                        p.op(Op::Unlock { id: mid }).wait(id(&mut sem, cond)).op(Op::Lock { id: mid });
                    }
                    Ev::Barrier(b) => {
                        let (bid, parties) = barrier[b];
                        p.op(Op::Barrier { id: bid, parties });
                    }
                }
            }
            p.mark(MARK_ACT_END).end();
        }
        p.end();
        let prog = p.build();
        let group = match &t.group {
            None => 0,
            Some(g) => {
                let n = groups.len() as u32 + 1;
                *groups.entry(g.clone()).or_insert(n)
            }
        };
        for i in 0..t.instances {
            let mut ts = TaskSpec::new(format!("{}-{}", t.name, i), prog.clone());
            ts.mm = 1; // threads of the rt-app process
            ts.nice = t.nice;
            ts.group = group;
            let phase_cpus = t.phases.iter().find_map(|p| p.cpus.clone());
            ts.allowed = t.cpus.clone().or(phase_cpus);
            names.push(ts.name.clone());
            tasks.push(ts);
        }
    }
    if tasks.is_empty() {
        return Err(cx.err(tasks_node, "no thread to run (every task has instance 0)"));
    }
    Ok(Workload {
        name: "rt-app".into(),
        tasks,
        channels: vec![],
        futexes: sem.len() as u32,
        reporter: Box::new(RtAppReporter { names }),
        duration,
    })
}

#[derive(Debug, Clone)]
pub struct RtAppReporter {
    pub names: Vec<String>,
}

/// Per thread: activations and the means of rt-app's log columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadSummary {
    pub activations: u64,
    pub period_us: f64,
    pub slack_us: f64,
    pub wu_lat_us: f64,
    pub max_wu_lat_us: f64,
}

impl RtAppReporter {
    pub fn summarize(&self, out: &Outcome) -> Vec<ThreadSummary> {
        let mut s = vec![ThreadSummary::default(); self.names.len()];
        let mut start: Vec<Option<Time>> = vec![None; self.names.len()];
        let mut period_sum = vec![0u64; self.names.len()];
        // Timer grid per thread: next boundary (first call + periods), as the model keeps it.
        let mut next: Vec<Option<Time>> = vec![None; self.names.len()];
        let mut call: Vec<Time> = vec![0; self.names.len()];
        let (mut slack, mut wu, mut nt) = (vec![0f64; self.names.len()], vec![0f64; self.names.len()], vec![0u64; self.names.len()]);
        for m in &out.marks {
            let i = m.task as usize;
            if i >= s.len() {
                continue;
            }
            match m.mark {
                MARK_ACT_START => start[i] = Some(m.time),
                MARK_ACT_END => {
                    if let Some(t0) = start[i].take() {
                        s[i].activations += 1;
                        period_sum[i] += m.time - t0;
                    }
                }
                x if x >= MARK_TIMER => {
                    let period = u64::from((x - MARK_TIMER) / 2) * 1_000;
                    if (x - MARK_TIMER) % 2 == 0 {
                        call[i] = m.time;
                        let b = next[i].unwrap_or(m.time) + period;
                        next[i] = Some(b);
                        slack[i] += (b as f64 - m.time as f64) / 1e3;
                    } else if let Some(b) = next[i] {
                        let late = m.time.saturating_sub(b) as f64 / 1e3;
                        let w = if b > call[i] { late } else { 0.0 };
                        wu[i] += w;
                        s[i].max_wu_lat_us = s[i].max_wu_lat_us.max(w);
                        nt[i] += 1;
                    }
                }
                _ => {}
            }
        }
        for i in 0..s.len() {
            let a = s[i].activations.max(1) as f64;
            s[i].period_us = period_sum[i] as f64 / a / 1e3;
            let n = nt[i].max(1) as f64;
            s[i].slack_us = slack[i] / n;
            s[i].wu_lat_us = wu[i] / n;
        }
        s
    }
}

impl Reporter for RtAppReporter {
    fn render(&self, out: &Outcome) -> String {
        let mut o = String::new();
        for (i, n) in self.names.iter().enumerate() {
            o += &format!("[rt-app] <notice> [{i}] starting thread {n} ...\n");
        }
        o += &format!("{:<24} {:>8} {:>12} {:>12} {:>12} {:>12}\n", "#thread", "loops", "period(us)", "slack(us)", "wu_lat(us)", "max_wu(us)");
        for (n, s) in self.names.iter().zip(self.summarize(out)) {
            o += &format!("{n:<24} {:>8} {:>12.1} {:>12.1} {:>12.1} {:>12.1}\n", s.activations, s.period_us, s.slack_us, s.wu_lat_us, s.max_wu_lat_us);
        }
        o += &format!("[rt-app] <notice> Exiting after {:.6} s\n", out.end_time as f64 / 1e9);
        o
    }

    fn metric(&self, out: &Outcome) -> Metric {
        let s = self.summarize(out);
        let v = s.iter().map(|x| x.wu_lat_us).sum::<f64>() / s.len().max(1) as f64;
        Metric { name: "mean timer wakeup latency".into(), unit: "us".into(), value: v, higher_is_better: false }
    }
}
