//! `Sim`: the whole simulated system, and its construction from a machine, a cost profile,
//! features and a workload.

use crate::exec::{Ev, Frame};
use crate::cpuidle::GovernorKind;
use crate::features::Features;
use wakesim_machine::NoiseProfile;
use crate::data::ReadMostlyLine;
use crate::state::*;
use crate::tunables::{nice_to_weight, Tunables};
use wakesim_costs::CostProfile;
use wakesim_engine::{EventQueue, Time};
use wakesim_machine::{CpuSet, Machine};
use wakesim_stats::{CpuSchedstat, DomainSchedstat, LatencyHist, NewidleLevel, NewidleStats, WakeStats};
use wakesim_workloads::{ChanKind, MarkRecord, Op, Origin, Program, Workload};

/// Everything one run needs besides the workload.
#[derive(Clone)]
pub struct Config {
    pub machine: Machine,
    pub costs: CostProfile,
    pub features: Features,
    pub seed: u64,
    /// Stop the run at this simulated time even if the workload has not finished.
    pub duration_cap: Time,
    /// Background activity (`noise`): `NoiseProfile::none()` is the quiet machine.
    pub noise: NoiseProfile,
    /// The cpuidle governor (`cpuidle`).
    pub governor: GovernorKind,
    /// The task group of the workload's tasks that name none (`autogroup`).
    pub task_groups: crate::TaskGroups,
}

pub struct Sim {
    pub m: Machine,
    pub c: CostProfile,
    pub f: Features,
    pub t: Tunables,
    pub q: EventQueue<Ev>,
    pub tasks: Vec<Task>,
    /// The tasks' scheduling entities (`p->se`), indexed like `tasks`: the arena the runqueues'
    /// [`crate::eevdf::CfsRq`] methods work on.
    pub se: Vec<Entity>,
    pub cpus: Vec<Cpu>,
    pub doms: Vec<Vec<DomState>>,
    pub llcs: Vec<LlcShared>,
    pub chans: Vec<Chan>,
    pub futexes: Vec<Futex>,
    pub barriers: Vec<Barrier>,
    pub shared_runq: crate::data::SharedRunq,
    pub mutexes: Vec<Mutex>,
    /// Per-CPU user-space locks (`user_locks`): array `set`'s lock of CPU `c` is
    /// `cpu_locks[set * nr_cpus + c]`.
    pub cpu_locks: Vec<crate::user_locks::CpuLock>,
    pub programs: Vec<Program>,
    /// SMT siblings of each CPU including itself, ascending (`cpu_smt_mask` as a list, so the hot
    /// path does not scan a whole cpumask).
    pub smt: Vec<Vec<u32>>,
    /// CPUs of each LLC (indexed like `llcs`), ascending, for the idle scan.
    pub llc_cpus: Vec<Vec<u32>>,
    /// Per CPU, the line transfers of probing every CPU of its own LLC one after another (the
    /// idle scan's full charge takes its share, `ScanLines`; another LLC's is its size times one
    /// transfer, all its CPUs being at one distance).
    pub llc_scan_own: Vec<Time>,
    /// Root-domain overload flag (`rd->overloaded`): some CPU has more than one runnable task.
    pub rd_overloaded: bool,
    /// CPU that last wrote the root-domain line.
    pub rd_line_owner: u32,
    pub nohz: Nohz,
    /// The task group's `tg->load_avg` cache line.
    pub tg_line: ReadMostlyLine,
    /// Per CPU, message memory written so far (`lines::read_msgs`' reuse distance).
    pub msg_written: Vec<u64>,
    /// Each CPU's mesh offset, ns (`crate::mesh`), added to its line transfers with other cores;
    /// empty on a uniform die.
    pub mesh_off: Vec<i32>,
    // statistics
    pub sched: Vec<CpuSchedstat>,
    pub dstat: Vec<Vec<DomainSchedstat>>,
    pub wake: WakeStats,
    pub newidle: NewidleStats,
    pub wakeup_lat: LatencyHist,
    pub run_delay: LatencyHist,
    pub marks: Vec<MarkRecord>,
    pub live_tasks: u32,
    pub first_task: TaskId,
    pub seed: u64,
    pub cap: Time,
    pub capped: bool,
    /// The schedule recorder, when the run is traced ([`Sim::with_trace`]).
    pub(crate) tracer: Option<Box<crate::trace::Tracer>>,
    /// The work-conservation checker (`waste`), and its scratch list of closed intervals.
    pub waste: crate::waste::WasteChecker,
    pub(crate) waste_out: Vec<(wakesim_stats::WastedInterval, u8)>,
    /// Background activity (`noise`); its tasks follow the workload's in the arena.
    pub noise: crate::noise::Noise,
    /// Jitter of every kernel step's duration (`NoiseProfile::cost_jitter`); `None`: exact costs.
    pub(crate) jitter: Option<Box<crate::jitter::CostJitter>>,
    /// The CPU the benchmark is launched from (the forking parent of its first tasks): CPU 0
    /// on the quiet machine, drawn from the seed when background activity runs.
    pub launch_cpu: u32,
    /// When and from which CPU each workload task is forked (`wake_up_new_task()`), indexed
    /// from `first_task`: in the workload's order, one `fork` or `clone_thread` apart, from the
    /// launch CPU or the daemon's; (0, launch CPU) for a task that exists from the start.
    pub spawn_at: Vec<(Time, u32)>,
    pub governor: GovernorKind,
}

impl Sim {
    pub fn new(mut cfg: Config, wl: &Workload) -> Result<Sim, String> {
        limit_cstates(&mut cfg.costs, cfg.machine.max_cstate);
        let m = cfg.machine;
        let n = m.nr_cpus();
        let mut t = Tunables::for_cpus(n);
        if let Some(hz) = m.hz {
            t.hz = hz;
        }
        if let Some(slice) = m.base_slice {
            t.base_slice = slice;
        }
        t.tick_offset = t.phase_for_seed(cfg.seed);
        // LLC index per CPU.
        let mut llc_ids: Vec<u32> = m.llc_id.clone();
        llc_ids.sort_unstable();
        llc_ids.dedup();
        let llcs: Vec<LlcShared> = llc_ids
            .iter()
            .map(|&id| {
                let span = m.llc_span[id as usize].clone();
                let w = span.weight() as u32;
                LlcShared {
                    sis_filter: crate::data::SisFilter::new(span.clone(), id),
                    span,
                    has_idle_cores: false,
                    is_busy: false,
                    nr_idle_scan: w,
                    // sd_init(): every CPU counts as busy until it stops its tick in idle
                    // (nohz_balance_enter_idle() → set_cpu_sd_state_idle()).
                    nr_busy_cpus: w,
                    nr_avail_idle: w,
                    avg_scan_cost: 0,
                    line_owner: id,
                }
            })
            .collect();
        let mut cpus = Vec::with_capacity(n);
        let mut tasks = Vec::with_capacity(n + wl.tasks.len());
        let mut se = Vec::with_capacity(n + wl.tasks.len());
        let slice = t.base_slice as i64;
        for c in 0..n {
            let llc = llc_ids.binary_search(&m.llc_id[c]).unwrap() as u32;
            tasks.push(Task::new(format!("swapper/{c}"), true, 0, CpuSet::from_cpus([c]), c as u32, 0, 0, cfg.seed, c as u64));
            se.push(Entity::new(1024, slice));
            tasks[c].stack.push(Frame::Idle { phase: crate::idle::IdlePhase::LoopTop });
            tasks[c].on_cpu = true;
            cpus.push(Cpu::new(c as u32, c as TaskId, llc, &t, cfg.governor));
        }
        // Per-domain mutable state, with the precomputed cost of reading every rq in the span.
        let mesh_off = crate::mesh::mesh_offsets(&m, cfg.costs.line_mesh_offset);
        let masks = crate::read_costs::DistanceMasks::new(&m.topo);
        let mut mesh_sums = crate::read_costs::MeshSums::new(&mesh_off);
        let doms = (0..n)
            .map(|c| {
                m.domains[c]
                    .iter()
                    .map(|sd| DomState {
                        balance_interval_ms: sd.min_interval_ms as u64,
                        scan_cost: crate::read_costs::line_share(
                            masks.span_line_cost(&m.topo, c, &sd.span, &cfg.costs.line, &mut mesh_sums),
                            cfg.costs.lb_walk_line_pct,
                        ) + sd.span_weight as u64 * cfg.costs.lb_stats_per_cpu,
                        ..Default::default()
                    })
                    .collect()
            })
            .collect();
        let dstat = (0..n).map(|c| vec![DomainSchedstat::default(); m.domains[c].len()]).collect();
        let max_levels = m.domains.iter().map(|d| d.len()).max().unwrap_or(0);
        let levels = (0..max_levels)
            .map(|i| NewidleLevel {
                name: m.domains.iter().find_map(|d| d.get(i)).map(|sd| sd.level.name()).unwrap_or_default(),
                ..Default::default()
            })
            .collect();

        // Workload tasks.
        let all = CpuSet::range(0, n);
        let mut programs = Vec::with_capacity(wl.tasks.len());
        let first_task = tasks.len() as TaskId;
        for (i, ts) in wl.tasks.iter().enumerate() {
            if let Some(a) = &ts.allowed {
                if let Some(bad) = a.iter().find(|&c| c >= n) {
                    return Err(format!("task '{}' may run on CPU {bad}, but machine '{}' has {n} CPUs (0-{})", ts.name, m.name, n - 1));
                }
            }
            let allowed = ts.allowed.as_ref().map(|a| a.and(&all)).unwrap_or_else(|| all.clone());
            if allowed.is_empty() {
                return Err(format!("task '{}' may run on no CPU of machine '{}'", ts.name, m.name));
            }
            programs.push(ts.program.clone());
            let start = ts.start_cpu.unwrap_or(u32::MAX);
            if start != u32::MAX && !allowed.contains(start as usize) {
                return Err(format!("task '{}' starts on CPU {} outside its allowed CPUs", ts.name, start));
            }
            let mut task = Task::new(
                ts.name.clone(),
                false,
                i as u32,
                allowed,
                if start == u32::MAX { 0 } else { start },
                ts.mm,
                cfg.task_groups.group_of(ts.group),
                cfg.seed,
                i as u64,
            );
            task.state = TState::Sleeping;
            task.start_cpu = start;
            task.stack.push(Frame::User);
            task.smt_throughput = ts.smt_throughput.unwrap_or(cfg.costs.smt_throughput);
            tasks.push(task);
            se.push(Entity::new(nice_to_weight(ts.nice) as u64, slice));
        }
        let chans = wl
            .channels
            .iter()
            .map(|ch| {
                let c = &cfg.costs;
                let (send_cost, recv_cost, lines) = match ch.kind {
                    ChanKind::Pipe => (c.pipe_send, c.pipe_recv, c.pipe_lines),
                    ChanKind::UnixStream => (c.unix_send, c.unix_recv, c.sock_lines),
                    ChanKind::TcpLoopback => (c.tcp_send, c.tcp_recv, c.sock_lines),
                    ChanKind::UdpLoopback => (c.udp_send, c.udp_recv, c.sock_lines),
                };
                let skb = ch.kind != ChanKind::Pipe;
                Chan {
                    capacity: ch.capacity,
                    sync: true,
                    send_cost,
                    recv_cost,
                    wait_cost: if skb { c.sock_wait } else { c.pipe_wait },
                    lines,
                    wake_writers_at_quarter: ch.kind == ChanKind::UnixStream,
                    skb,
                    msg_cold: if skb { c.sock_msg_cold } else { 0 },
                    msg_lines: if skb { c.sock_msg_lines } else { c.pipe_msg_lines },
                    frags: ch.kind == ChanKind::TcpLoopback,
                    frag_reader: crate::state::NO_CPU,
                    ..Default::default()
                }
            })
            .collect();
        let futexes = (0..wl.futexes).map(|_| Futex::default()).collect();
        // Barriers and mutexes are named by id in the programs; size their tables up front.
        let (mut nb, mut nm, mut nsets) = (0usize, 0usize, 0usize);
        for (ts, prog) in wl.tasks.iter().zip(&programs) {
            for op in prog {
                match *op {
                    Op::Barrier { id, .. } => nb = nb.max(id as usize + 1),
                    Op::Lock { id } | Op::Unlock { id } => nm = nm.max(id as usize + 1),
                    Op::CpuSpinLock { set } | Op::CpuSpinUnlock { set } => nsets = nsets.max(set as usize + 1),
                    Op::CallFunc { cpu, .. } if cpu as usize >= n => {
                        return Err(format!("task '{}' calls a function on CPU {cpu}, but machine '{}' has {n} CPUs", ts.name, m.name));
                    }
                    _ => {}
                }
            }
        }
        let barriers = vec![Barrier::default(); nb];
        let mutexes = vec![Mutex::default(); nm];
        let cpu_locks = (0..nsets * n).map(|i| crate::user_locks::CpuLock::new((i % n) as u32)).collect();
        let nt = wl.tasks.len() as u32;
        let smt = (0..n).map(|c| m.topo.smt_mask[c].iter().map(|x| x as u32).collect()).collect();
        let llc_cpus: Vec<Vec<u32>> = llcs.iter().map(|l| l.span.iter().map(|x| x as u32).collect()).collect();
        let llc_span: Vec<CpuSet> = llcs.iter().map(|l| l.span.clone()).collect();
        let llc_of: Vec<u32> = cpus.iter().map(|c| c.llc).collect();
        if !crate::read_costs::llc_spans_are_topology_llcs(&m, &masks, &llc_span, &llc_of) {
            return Err(format!("machine '{}': an LLC domain span is not one LLC of the topology", m.name));
        }
        let llc_scan_own = crate::read_costs::own_llc_scan_lines(&m, &masks, &llc_span, &llc_of, &cfg.costs.line, &mut mesh_sums);
        let shared_runq = crate::data::SharedRunq::new(&llc_cpus, n, tasks.len());
        // The shells the benchmark and its server daemons were started from: CPU 0 on the quiet
        // machine, drawn from the seed when background activity runs (a different run).
        let shell_cpu = |stream: &str| {
            if cfg.noise.is_none() {
                0
            } else {
                wakesim_engine::RngStream::new(cfg.seed, wakesim_engine::stream_id(stream), 0).below(n as u64) as u32
            }
        };
        let (launch_cpu, daemon_cpu) = (shell_cpu("launch"), shell_cpu("daemon"));
        let nr_work = tasks.len() as u32;
        let spawn_at = fork_times(wl, &cfg.costs, launch_cpu, daemon_cpu);
        let mut sim = Sim {
            shared_runq,
            llc_scan_own,
            smt,
            llc_cpus,
            t,
            // One slot per CPU for its generation-guarded events (its next step, its POLL timeout).
            q: EventQueue::with_slots(n),
            tasks,
            se,
            cpus,
            doms,
            llcs,
            chans,
            futexes,
            barriers,
            mutexes,
            cpu_locks,
            programs,
            rd_overloaded: false,
            rd_line_owner: 0,
            nohz: Nohz::default(),
            tg_line: ReadMostlyLine::new(n),
            msg_written: vec![0; n],
            mesh_off,
            sched: vec![CpuSchedstat::default(); n],
            dstat,
            wake: WakeStats::default(),
            newidle: NewidleStats { levels, ..Default::default() },
            wakeup_lat: LatencyHist::new(),
            run_delay: LatencyHist::new(),
            marks: Vec::new(),
            live_tasks: nt,
            first_task,
            seed: cfg.seed,
            cap: cfg.duration_cap,
            capped: false,
            tracer: None,
            waste: crate::waste::WasteChecker::new(&m, crate::waste::DEFAULT_WASTED_THRESHOLD),
            waste_out: Vec::new(),
            noise: crate::noise::Noise { noise_first: nr_work, ..Default::default() },
            jitter: crate::jitter::CostJitter::new(cfg.noise.cost_jitter, cfg.seed, n).map(Box::new),
            launch_cpu,
            spawn_at,
            governor: cfg.governor,
            c: cfg.costs,
            f: cfg.features,
            m,
        };
        sim.add_noise(&cfg.noise);
        // The shared runqueue keeps a slot per task, background tasks included.
        sim.shared_runq = crate::data::SharedRunq::new(&sim.llc_cpus, n, sim.tasks.len());
        Ok(sim)
    }

    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    pub fn now(&self) -> Time {
        self.q.now()
    }

    pub fn jiffies(&self) -> u64 {
        self.t.jiffies(self.now())
    }
}

/// `intel_idle.max_cstate=N` (the machine's boot configuration): keep the POLL state and the
/// first `N` C-states of the profile; `0` leaves POLL, or the shallowest state if there is none.
fn limit_cstates(c: &mut CostProfile, max_cstate: Option<u32>) {
    let Some(n) = max_cstate else { return };
    let keep = (n as usize + usize::from(c.has_poll_loop())).clamp(1, c.idle_states.len());
    c.idle_states.truncate(keep);
}

/// The fork loop: task `i` is created when the fork of every forked task up to it has run, a
/// new address space costing `fork` and a thread of an existing one `clone_thread`; a daemon's
/// handler is forked from the daemon's CPU as its client connects.
fn fork_times(wl: &Workload, c: &CostProfile, launch: u32, daemon: u32) -> Vec<(Time, u32)> {
    let mut mms: std::collections::HashSet<u32> = std::collections::HashSet::new();
    let mut t = 0;
    wl.tasks
        .iter()
        .map(|ts| {
            let parent = match ts.origin {
                Origin::Existing => return (0, launch),
                Origin::Launched => launch,
                Origin::Daemon => daemon,
            };
            // A new mm is a process: fork(); a task sharing an earlier one's is a thread: clone().
            t += if mms.insert(ts.mm) { c.fork } else { c.clone_thread };
            (t, parent)
        })
        .collect()
}
