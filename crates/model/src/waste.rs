//! The work-conservation checker, after Lozi et al., "The Linux Scheduler: a Decade of Wasted
//! Cores" (EuroSys 2016): the invariant "no CPU is idle while a CPU of its sched domains has a
//! runnable task waiting", checked throughout every run. An interval is reported when the
//! violation lasts longer than a threshold (`wakesim run --wasted-threshold`, default
//! [`DEFAULT_WASTED_THRESHOLD`]); see docs/work-conservation.md.
//!
//! **Definitions.** A CPU is *idle* while it runs its idle task with nothing on its runqueue
//! (`nr_running == 0`); the time it spends balancing before it gets there (newidle) is not idle.
//! A CPU is *waiting* while its runqueue's tree holds a runnable task that is not running: not a
//! DELAY_DEQUEUE'd sleeper, and allowed on every CPU. A task with a restricted affinity mask is
//! left out, so that affinity never reads as waste; the price is that waste involving only such
//! tasks is not seen (reading each waiting task's mask against the idle CPUs would cost a mask
//! operation per runqueue change). CPU
//! `i`'s domains are all of its sched domains; their union is its top domain's span, so `i` is
//! *wasted* while it is idle and some CPU of that span is waiting.
//!
//! **Cost.** The checker is an observer: it reads the runqueues and never changes a decision or
//! a time. It never scans all CPUs per event. The CPUs are grouped by top-domain span
//! ("components"; one on a machine whose top level spans it all); each component counts its
//! waiting CPUs and remembers since when that count is non-zero. A runqueue change of CPU `c`
//! (the hooks are `refresh_idle()`'s callers: activate/deactivate, the context switch, and the
//! delayed-dequeue paths) costs a comparison of `c`'s two flags with their previous values; a
//! transition updates a counter or a timestamp. An interval's length is only worked out when one
//! of its ends arrives, and the idle CPUs of a component are only visited when a waiting period
//! that lasted longer than the threshold ends — never in a run where nothing is wasted.

use crate::sim::Sim;
use crate::state::NO_TASK;
use wakesim_engine::{Time, MSEC};
use wakesim_machine::{CpuSet, Machine};
use wakesim_stats::{WastedInterval, WastedStats};

/// Default `--wasted-threshold`: 0.5 ms, `sysctl_sched_migration_cost` — the kernel's own
/// measure (`task_hot()`) of how long a task must have been off its CPU before moving it is
/// worth its cold cache. A task that waited longer than that while a CPU of its domains idled
/// was, by the kernel's own standard, worth moving. It is also below one EEVDF slice (3 ms on 8
/// CPUs), so a wakee stacked behind a running task for a slice — the paper's overload-on-wakeup
/// bug — is caught; a 4 ms tick would not catch it.
pub const DEFAULT_WASTED_THRESHOLD: Time = MSEC / 2;

const NOT_IDLE: Time = Time::MAX;
const NO_COMP: u32 = u32::MAX;

/// The checker's state (see the module docs).
pub struct WasteChecker {
    pub threshold: Time,
    /// A task counts as waiting only if it may run on all of these CPUs (see the module docs).
    pub(crate) nr_cpus: u32,
    /// Per CPU: whether it was idle / waiting at its last hook.
    pub(crate) idle: Vec<bool>,
    pub(crate) waiting: Vec<bool>,
    /// The same flags as sets (to find the idle CPUs of a span, the waiting CPUs near one).
    idle_set: CpuSet,
    waiting_set: CpuSet,
    /// Per CPU: since when it is idle (`NOT_IDLE`: it is not).
    idle_since: Vec<Time>,
    /// Per CPU: its component (its top domain's span), `NO_COMP` without domains.
    comp_of: Vec<u32>,
    /// Per CPU: the components whose span holds it.
    comps_with: Vec<Vec<u32>>,
    comp_span: Vec<CpuSet>,
    /// Per component: waiting CPUs in its span, and since when there is at least one.
    comp_waiting: Vec<u32>,
    comp_since: Vec<Time>,
    /// Distinct domain-level names, and per CPU and level the index of its level's name.
    pub level_names: Vec<String>,
    level_idx: Vec<Vec<u8>>,
    pub stats: WastedStats,
}

impl WasteChecker {
    /// The index in `level_names` of `cpu`'s domain level `level` (traces name levels by it).
    pub(crate) fn level_index(&self, cpu: usize, level: usize) -> u8 {
        self.level_idx[cpu][level]
    }

    pub fn new(m: &Machine, threshold: Time) -> WasteChecker {
        let n = m.nr_cpus();
        let mut comp_span: Vec<CpuSet> = Vec::new();
        let mut comp_of = vec![NO_COMP; n];
        let mut level_names: Vec<String> = Vec::new();
        let mut level_idx = Vec::with_capacity(n);
        for c in 0..n {
            let doms = &m.domains[c];
            level_idx.push(
                doms.iter()
                    .map(|sd| {
                        let name = sd.level.name();
                        let i = level_names.iter().position(|x| *x == name).unwrap_or_else(|| {
                            level_names.push(name.to_string());
                            level_names.len() - 1
                        });
                        i as u8
                    })
                    .collect(),
            );
            if let Some(top) = doms.last() {
                let k = comp_span.iter().position(|s| *s == top.span).unwrap_or_else(|| {
                    comp_span.push(top.span.clone());
                    comp_span.len() - 1
                });
                comp_of[c] = k as u32;
            }
        }
        let comps_with = (0..n)
            .map(|c| (0..comp_span.len() as u32).filter(|&k| comp_span[k as usize].contains(c)).collect())
            .collect();
        let nc = comp_span.len();
        // At boot every CPU runs its idle task with nothing queued.
        WasteChecker {
            threshold,
            nr_cpus: n as u32,
            idle: vec![true; n],
            waiting: vec![false; n],
            idle_set: CpuSet::range(0, n),
            waiting_set: CpuSet::default(),
            idle_since: vec![0; n],
            comp_of,
            comps_with,
            comp_span,
            comp_waiting: vec![0; nc],
            comp_since: vec![0; nc],
            level_names,
            level_idx,
            stats: WastedStats { threshold_ns: threshold, ..Default::default() },
        }
    }

    /// The lowest domain level of `idle` whose span holds a CPU of `cands`: (that CPU, level).
    fn nearest(&self, m: &Machine, idle: usize, cands: &CpuSet) -> (u32, u8) {
        for (l, sd) in m.domains[idle].iter().enumerate() {
            if let Some(j) = sd.span.and(cands).first() {
                return (j as u32, self.level_idx[idle][l]);
            }
        }
        (idle as u32, 0)
    }

    /// Closes `idle`'s interval at `now` if the violation began more than the threshold ago;
    /// returns it for the trace.
    fn close(&mut self, m: &Machine, idle: usize, since: Time, now: Time, waiter: Option<u32>) -> Option<(WastedInterval, u8)> {
        let start = self.idle_since[idle].max(since);
        if now.saturating_sub(start) <= self.threshold {
            return None;
        }
        let (j, lvl) = match waiter {
            Some(j) => {
                let l = m.domains[idle].iter().position(|sd| sd.span.contains(j as usize)).unwrap_or(0);
                (j, self.level_idx[idle].get(l).copied().unwrap_or(0))
            }
            None => {
                // The CPU leaving idle may have just become waiting itself (a task enqueued on
                // it, not yet running): the interval's waiter is another CPU.
                let mut others = self.waiting_set.clone();
                others.clear(idle);
                self.nearest(m, idle, &others)
            }
        };
        let iv = WastedInterval {
            start_ns: start,
            dur_ns: now - start,
            idle_cpu: idle as u32,
            waiting_cpu: j,
            level: self.level_names.get(lvl as usize).cloned().unwrap_or_default(),
        };
        self.stats.record(iv.clone());
        Some((iv, lvl))
    }

    /// CPU `c`'s flags changed (idle, waiting); intervals that ended go to `out`, for the trace.
    pub fn update(&mut self, m: &Machine, c: usize, idle: bool, waiting: bool, now: Time, out: &mut Vec<(WastedInterval, u8)>) {
        if waiting && !self.waiting[c] {
            self.waiting[c] = true;
            self.waiting_set.set(c);
            for &k in &self.comps_with[c] {
                let k = k as usize;
                if self.comp_waiting[k] == 0 {
                    self.comp_since[k] = now;
                }
                self.comp_waiting[k] += 1;
            }
        }
        if idle != self.idle[c] {
            self.idle[c] = idle;
            if idle {
                self.idle_set.set(c);
                self.idle_since[c] = now;
            } else {
                let k = self.comp_of[c];
                if k != NO_COMP && self.comp_waiting[k as usize] > 0 {
                    let since = self.comp_since[k as usize];
                    out.extend(self.close(m, c, since, now, None));
                }
                self.idle_set.clear(c);
                self.idle_since[c] = NOT_IDLE;
            }
        }
        if !waiting && self.waiting[c] {
            self.waiting[c] = false;
            for i in 0..self.comps_with[c].len() {
                let k = self.comps_with[c][i] as usize;
                self.comp_waiting[k] -= 1;
                if self.comp_waiting[k] == 0 && now - self.comp_since[k] > self.threshold {
                    // A long waiting period ended: close the intervals of the idle CPUs it covered.
                    let since = self.comp_since[k];
                    let idle_here = self.comp_span[k].and(&self.idle_set);
                    for i in idle_here.iter() {
                        if self.comp_of[i] == k as u32 {
                            out.extend(self.close(m, i, since, now, Some(c as u32)));
                        }
                    }
                }
            }
            self.waiting_set.clear(c);
        }
    }

    /// The end of the run: close every open interval.
    pub fn flush(&mut self, m: &Machine, now: Time, out: &mut Vec<(WastedInterval, u8)>) {
        for i in self.idle_set.iter().collect::<Vec<_>>() {
            let k = self.comp_of[i];
            if k != NO_COMP && self.comp_waiting[k as usize] > 0 {
                let since = self.comp_since[k as usize];
                let cands = self.comp_span[k as usize].and(&self.waiting_set);
                let (j, _) = self.nearest(m, i, &cands);
                out.extend(self.close(m, i, since, now, Some(j)));
            }
        }
    }
}

impl Sim {
    /// Sets the work-conservation checker's threshold (default [`DEFAULT_WASTED_THRESHOLD`]).
    pub fn with_wasted_threshold(mut self, threshold: Time) -> Sim {
        self.waste.threshold = threshold;
        self.waste.stats.threshold_ns = threshold;
        self
    }

    /// The checker's hook: CPU `c`'s runqueue or current task changed.
    #[inline]
    pub(crate) fn waste_refresh(&mut self, c: usize) {
        let cpu = &self.cpus[c];
        let idle = cpu.curr == cpu.idle_task && cpu.nr_running == 0;
        let tasks = &self.tasks;
        let all = self.waste.nr_cpus;
        let waiting = !cpu.cfs.queued.is_empty()
            && cpu.cfs.queued.iter().any(|&t| t != NO_TASK && !tasks[t as usize].delayed && tasks[t as usize].nr_cpus_allowed == all);
        if idle != self.waste.idle[c] || waiting != self.waste.waiting[c] {
            self.waste_change(c, idle, waiting);
        }
    }

    #[inline(never)]
    fn waste_change(&mut self, c: usize, idle: bool, waiting: bool) {
        let now = self.q.now();
        let mut out = std::mem::take(&mut self.waste_out);
        self.waste.update(&self.m, c, idle, waiting, now, &mut out);
        self.waste_emit(&mut out);
        self.waste_out = out;
    }

    fn waste_emit(&mut self, out: &mut Vec<(WastedInterval, u8)>) {
        for (iv, lvl) in out.drain(..) {
            crate::trace::trace_ev!(
                self,
                wakesim_trace::TraceEvent::Wasted { cpu: iv.idle_cpu, waiting_cpu: iv.waiting_cpu, start: iv.start_ns, level: lvl }
            );
        }
    }

    /// The end of the run: close the checker's open intervals at `now`.
    pub(crate) fn waste_flush(&mut self, now: Time) {
        let mut out = std::mem::take(&mut self.waste_out);
        self.waste.flush(&self.m, now, &mut out);
        self.waste_emit(&mut out);
        self.waste_out = out;
    }
}

#[cfg(test)]
mod tests {
    use super::WasteChecker;
    use wakesim_engine::MSEC;

    #[test]
    fn an_idle_cpu_that_gets_a_waiting_task_names_the_other_waiter() {
        // test-smt2: one LLC of 8 CPUs. CPU 2 has a task waiting from 1 ms; CPU 1 idles from
        // boot until, at 10 ms, a task is enqueued on it that has not run yet (so CPU 1 leaves
        // idle and is itself waiting in the same change).
        let m = wakesim_machine::preset("test-smt2").unwrap();
        let mut w = WasteChecker::new(&m, MSEC / 2);
        let mut out = Vec::new();
        for c in [0, 2, 3, 4, 5, 6, 7] {
            w.update(&m, c, false, false, 0, &mut out);
        }
        w.update(&m, 2, false, true, MSEC, &mut out);
        w.update(&m, 1, false, true, 10 * MSEC, &mut out);
        let iv: Vec<_> = out.iter().map(|(iv, _)| iv.clone()).collect();
        assert_eq!(iv.len(), 1, "{iv:?}");
        assert_eq!((iv[0].idle_cpu, iv[0].waiting_cpu), (1, 2));
        assert_eq!((iv[0].start_ns, iv[0].dur_ns), (MSEC, 9 * MSEC));
    }
}
