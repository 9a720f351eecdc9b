//! Running a simulation: task creation (`wake_up_new_task`), the event loop, and the results.

use crate::exec::Ev;
use crate::sim::Sim;
use crate::state::{TState, TaskId, NO_CPU};
use wakesim_engine::Time;
use wakesim_stats::{Stats, TaskStat};
use wakesim_workloads::Outcome;

/// Everything a run produced.
pub struct RunResult {
    /// What the workload's reporter reads.
    pub outcome: Outcome,
    /// The statistics: schedstat counters, wakeup-path counters, latency histograms.
    pub stats: Stats,
    /// Events the engine processed.
    pub events: u64,
    /// Largest number of pending events at once.
    pub queue_max: usize,
    /// Busy time of each CPU (ns), for utilisation.
    pub cpu_busy: Vec<Time>,
}

impl Sim {
    /// `wake_up_new_task()`: fork placement, first enqueue, and a kick of the chosen CPU.
    pub(crate) fn spawn(&mut self, p: TaskId) {
        // The forking parent's CPU (the launch CPU or the daemon's), where the task may run there.
        let allowed = &self.tasks[p as usize].allowed;
        let fork_cpu = self.spawn_at[(p - self.first_task) as usize].1 as usize;
        let parent = if allowed.contains(fork_cpu) { fork_cpu } else { allowed.first().unwrap_or(0) };
        let start = self.tasks[p as usize].start_cpu;
        let target = if start != NO_CPU { start as usize } else { self.find_idlest_cpu(parent, p) };
        let t = &mut self.tasks[p as usize];
        t.cpu = target as u32;
        t.recent_used_cpu = target as u32;
        t.state = TState::Runnable;
        self.se[p as usize].exec_start = self.q.now();
        self.activate_task(target, p, false, true);
        // The forking parent runs elsewhere in reality; here the kick always crosses CPUs.
        let from = if parent == target { (target + 1) % self.nr_cpus() } else { parent };
        self.wakeup_preempt(from, target, p);
    }

    /// The run's start: every CPU enters its idle loop, every workload task is queued for
    /// `wake_up_new_task` at its fork time (`spawn_at`), and the background sources are armed.
    pub(crate) fn start_events(&mut self) {
        for c in 0..self.nr_cpus() {
            self.resume(c);
        }
        for t in self.first_task..self.noise.noise_first {
            let (at, _) = self.spawn_at[(t - self.first_task) as usize];
            self.q.push(at, Ev::Spawn { task: t });
        }
        self.arm_noise();
    }

    /// Runs until every task has exited or the duration cap is reached.
    pub fn run(self) -> RunResult {
        self.run_traced().0
    }

    /// The event loop of [`Sim::run`].
    pub(crate) fn run_loop(&mut self) {
        self.start_events();
        while self.live_tasks > 0 {
            let Some((t, ev)) = self.q.pop() else { break };
            if t > self.cap {
                self.capped = true;
                break;
            }
            self.dispatch(ev);
            if wakesim_engine::CHECKS {
                self.check_invariants_light();
            }
        }
        let end = if self.capped { self.cap } else { self.q.now() };
        self.waste_flush(end);
    }

    pub(crate) fn finish(mut self) -> RunResult {
        for s in &self.shared_runq.shards {
            self.wake.shard_lock_acquires += s.line.accesses;
            self.wake.shard_lock_contended += s.line.contended;
            self.wake.shard_lock_wait += s.line.wait;
        }
        self.wake.tg_updates = self.tg_line.line.accesses;
        self.wake.tg_contended = self.tg_line.line.contended;
        self.wake.tg_wait = self.tg_line.line.wait;
        self.wake.tg_read_misses = self.tg_line.read_misses;
        self.wake.tg_read_wait = self.tg_line.read_wait;
        let nr = self.nr_cpus();
        let now = if self.capped { self.cap } else { self.q.now() };
        let idle = self.idle_stats();
        // Each distinct span is printed once: the CPUs of a domain share it.
        let mut masks: std::collections::HashMap<&wakesim_machine::CpuSet, String> = std::collections::HashMap::new();
        let domains = (0..self.nr_cpus())
            .map(|c| {
                self.m.domains[c]
                    .iter()
                    .zip(&self.dstat[c])
                    .map(|(sd, st)| {
                        let mask = masks.entry(&sd.span).or_insert_with(|| sd.span.to_mask_string(nr)).clone();
                        (sd.level.name(), mask, st.clone())
                    })
                    .collect()
            })
            .collect();
        let tasks = self.tasks[self.first_task as usize..self.noise.noise_first as usize]
            .iter()
            .zip(&self.se[self.first_task as usize..self.noise.noise_first as usize])
            .map(|(t, se)| TaskStat {
                name: t.name.clone(),
                runtime_ns: se.sum_exec_runtime,
                wait_ns: t.counters.wait_time,
                nr_wakeups: t.counters.nr_wakeups,
                nr_migrations: t.counters.nr_migrations,
                nr_switches: t.counters.nr_switches,
                nvcsw: t.counters.nvcsw,
                nivcsw: t.counters.nivcsw,
            })
            .collect();
        let nf = self.noise.noise_first as usize;
        let noise_stats = wakesim_stats::NoiseStats {
            profile: self.noise.name.clone(),
            launch_cpu: self.launch_cpu,
            tasks: (self.tasks.len() - nf) as u64,
            irq_sources: self.noise.irqs.len() as u64,
            task_wakeups: self.tasks[nf..].iter().map(|t| t.counters.nr_wakeups).sum(),
            task_runtime_ns: self.se[nf..].iter().map(|s| s.sum_exec_runtime).sum(),
            irqs: self.noise.irq_count,
            irq_time_ns: self.noise.irq_time,
        };
        let outcome = Outcome {
            end_time: now,
            capped: self.capped,
            marks: self.marks,
            task_exit: self.tasks[self.first_task as usize..self.noise.noise_first as usize].iter().map(|t| t.exit_time).collect(),
        };
        let stats = Stats {
            nr_cpus: nr,
            sim_time_ns: now,
            cpus: self.sched,
            domains,
            wake: self.wake,
            newidle: self.newidle,
            wakeup_latency: self.wakeup_lat,
            run_delay: self.run_delay,
            tasks,
            wasted: self.waste.stats,
            noise: noise_stats,
            idle,
        };
        RunResult { outcome, stats, events: self.q.stats().popped, queue_max: self.q.stats().max_len, cpu_busy: self.cpus.iter().map(|c| c.busy_time).collect() }
    }
}
