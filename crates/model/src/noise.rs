//! Background activity: the machine's own tasks and interrupts beside the benchmark
//! (docs/noise.md). A [`NoiseProfile`] entry becomes
//!
//! * a **task** (`[[task]]`): an ordinary fair task, asleep on an armed hrtimer at the start,
//!   whose program is "run, sleep until the next activation" forever. Its wakeups go through
//!   `try_to_wake_up()` like any other: it is placed by `select_task_rq_fair()`, takes rq locks,
//!   stacks on a busy CPU (setting `rd->overload`, so newidle balancing has work), preempts or
//!   waits, moves PELT and `avg_idle`, and wakes idle CPUs;
//! * an **interrupt source** (`[[irq]]`): a hard-irq handler of its length on its CPU, taken
//!   like the tick (`handle_irq()`), deferred by interrupt-disabled regions, waking an idle CPU
//!   out of its state.
//!
//! With background activity on, the start state is seeded too: the benchmark is launched from
//! a CPU drawn from the seed (the CPU the shell ran on), and every source starts at a random
//! phase of its period, so different seeds are different runs of the same experiment. With
//! `--noise none` the machine is the quiet one with the launch on CPU 0.
//!
//! Noise tasks are not part of the workload: the run ends when the workload's tasks have
//! exited, and the benchmark's outputs and per-task statistics cover its own tasks only.

use crate::exec::Ev;
use crate::sim::Sim;
use crate::state::{TState, Task};
use crate::tunables::nice_to_weight;
use wakesim_engine::{stream_id, RngStream, Time, USEC};
use wakesim_machine::{Arrival, CpuSet, NoiseProfile};
use wakesim_workloads::{Dur, Op};

/// One interrupt source of the profile, on one CPU.
#[derive(Clone, Debug)]
pub struct IrqSource {
    pub cpu: u32,
    /// Mean interval, ns.
    pub period: Time,
    pub arrival: Arrival,
    /// Handler time, ns.
    pub handler: Time,
    pub rng: RngStream,
}

/// The run's background activity: its interrupt sources and where its tasks start in the task
/// arena (`noise_first..tasks.len()`).
#[derive(Clone, Debug, Default)]
pub struct Noise {
    pub name: String,
    pub irqs: Vec<IrqSource>,
    pub noise_first: u32,
    /// Interrupts delivered and their handler time.
    pub irq_count: u64,
    pub irq_time: Time,
}

fn cpus_of(list: &str, n: usize) -> CpuSet {
    let all = CpuSet::range(0, n);
    if list == "all" {
        return all;
    }
    // NoiseProfile::check() validated the list; CPUs beyond this machine are dropped.
    CpuSet::parse_list(list).map(|s| s.and(&all)).unwrap_or(all)
}

fn us(x: f64) -> Time {
    (x * USEC as f64).round() as Time
}

/// An exponential draw of mean `mean` (the interval of a Poisson process).
fn exp_draw(rng: &mut RngStream, mean: Time) -> Time {
    rng.exponential(mean as f64) as Time
}

/// A source's first activation after the run starts: a uniform phase of a periodic source's
/// period, or a Poisson source's first arrival (memoryless: a draw of its interval).
fn first_arrival(rng: &mut RngStream, arrival: Arrival, period: Time) -> Time {
    match arrival {
        Arrival::Periodic => (rng.unit() * period as f64) as Time,
        Arrival::Poisson => exp_draw(rng, period),
    }
}

impl Sim {
    /// Adds the profile's tasks and interrupt sources (called by `Sim::new`, after the workload's
    /// tasks, so those keep their ids and random streams).
    pub(crate) fn add_noise(&mut self, p: &NoiseProfile) {
        let n = self.nr_cpus();
        let seed = self.seed;
        let mut phase_rng = RngStream::new(seed, stream_id("noise-phase"), 0);
        self.noise.name = p.name.clone();
        self.noise.noise_first = self.tasks.len() as u32;
        if p.skew_tick {
            // tick_setup_sched_timer(): offset = (TICK_NSEC >> 1) / num_possible_cpus() * cpu.
            let step = (self.t.tick_nsec() >> 1) / n as Time;
            for (c, cpu) in self.cpus.iter_mut().enumerate() {
                cpu.tick_skew = step * c as Time;
            }
        }
        let slice = self.t.base_slice as i64;
        for spec in &p.tasks {
            let cpus = cpus_of(&spec.cpus, n);
            if cpus.is_empty() {
                continue;
            }
            let period = us(spec.period_ms * 1000.0).max(1);
            let run = if spec.run_sd_us > 0.0 {
                Dur::Normal { mean: us(spec.run_us), sd: us(spec.run_sd_us) }
            } else {
                Dur::Fixed(us(spec.run_us))
            };
            let sleep = match spec.arrival {
                // A periodic timer re-armed from its last expiry (hrtimer_forward / a delayed
                // work's next jiffy): activations stay on the period's grid.
                Arrival::Periodic => Op::SleepUntilNext { period },
                Arrival::Poisson => Op::Sleep(Dur::Exp { mean: period }),
            };
            // One program for every instance of the source (programs are immutable).
            let prog_id = self.programs.len() as u32;
            self.programs.push(vec![Op::LoopStart { count: u64::MAX, end: 3 }, Op::Compute(run), sleep, Op::LoopEnd { start: 0 }]);
            let instances: Vec<(String, CpuSet)> = if spec.per_cpu {
                cpus.iter().map(|c| (spec.name.replace("{cpu}", &c.to_string()), CpuSet::from_cpus([c]))).collect()
            } else {
                vec![(spec.name.clone(), cpus)]
            };
            for (name, allowed) in instances {
                let k = (self.tasks.len() as u32 - self.noise.noise_first) as u64;
                // Where the task last ran: its pinned CPU, or one of its CPUs drawn from the seed.
                let w = allowed.weight() as u64;
                let cpu = allowed.iter().nth(phase_rng.below(w) as usize).unwrap_or(0) as u32;
                let mut task = Task::new(name, false, prog_id, allowed, cpu, 0, 0, seed, k);
                task.rng = RngStream::new(seed, stream_id("noise"), k);
                task.state = TState::Sleeping;
                task.stack.push(crate::exec::Frame::User);
                task.smt_throughput = self.c.smt_throughput;
                // The first activation; SleepUntilNext counts its grid from it, and
                // `arm_noise` arms the task's hrtimer there.
                task.timer_next = first_arrival(&mut phase_rng, spec.arrival, period).max(1);
                self.tasks.push(task);
                self.se.push(crate::state::Entity::new(nice_to_weight(spec.nice) as u64, slice));
            }
        }
        for (i, spec) in p.irqs.iter().enumerate() {
            let cpus = cpus_of(&spec.cpus, n);
            let targets: Vec<usize> = if spec.per_cpu { cpus.iter().collect() } else { cpus.first().into_iter().collect() };
            for c in targets {
                let k = self.noise.irqs.len() as u64;
                self.noise.irqs.push(IrqSource {
                    cpu: c as u32,
                    period: us(spec.period_ms * 1000.0).max(1),
                    arrival: spec.arrival,
                    handler: us(spec.handler_us),
                    rng: RngStream::new(seed, stream_id("noise-irq"), k ^ ((i as u64) << 32)),
                });
            }
        }
    }

    /// Arms every noise source's first activation (from `run()`'s start).
    pub(crate) fn arm_noise(&mut self) {
        for t in self.noise.noise_first..self.tasks.len() as u32 {
            // The hrtimer armed on the CPU the task last ran on (hrtimer_start before it slept);
            // the CPU knows it (the idle governor's next timer).
            let (at, cpu) = (self.tasks[t as usize].timer_next, self.tasks[t as usize].cpu);
            self.hrtimer_start(cpu as usize, at, t);
        }
        for s in 0..self.noise.irqs.len() {
            let src = &mut self.noise.irqs[s];
            let at = first_arrival(&mut src.rng, src.arrival, src.period);
            self.q.push(at.max(1), Ev::DevIrq { src: s as u32 });
        }
    }

    /// An interrupt of source `src` arrives: its handler is pending on its CPU; the next
    /// arrival is scheduled.
    pub(crate) fn dev_irq(&mut self, src: usize) {
        let s = &mut self.noise.irqs[src];
        let cpu = s.cpu as usize;
        let handler = s.handler;
        let next = match s.arrival {
            Arrival::Periodic => s.period,
            Arrival::Poisson => exp_draw(&mut s.rng, s.period).max(1),
        };
        let at = self.now() + next;
        self.q.push(at, Ev::DevIrq { src: src as u32 });
        self.noise.irq_count += 1;
        self.noise.irq_time += handler;
        self.note_irq_arrival(cpu);
        let c = &mut self.cpus[cpu];
        c.pend_dev += handler;
        c.pend_dev_count += 1;
        self.raise_irq(cpu);
    }
}
