//! `select_idle_sibling()` and the LLC idle scan (kernel/sched/fair.c, v6.6): target, prev and
//! recent_used_cpu shortcuts, `select_idle_smt()`, `select_idle_cpu()` with `select_idle_core()`,
//! the SIS_UTIL scan depth (`nr_idle_scan`, written by `update_idle_cpu_scan()`) and the
//! `has_idle_cores` hint (`__update_idle_core()`).
//!
//! Every CPU probed costs the waker a read of that CPU's rq line (by distance) plus the
//! per-probe overhead, charged on the waker's CPU. The shortcuts (target, prev, recent_used_cpu,
//! `select_idle_smt()`) each wait for their line in full; the probes of `select_idle_cpu()`'s
//! loop overlap their misses ([`ScanLines`]).

use crate::read_costs::ScanLines;
use crate::sim::Sim;
use crate::state::{ScanKind, ScanResume, TaskId};
use wakesim_engine::Time;
use wakesim_machine::CpuSet;
use wakesim_stats::SisOutcome;

impl Sim {
    /// Cost of probing CPU `c` from `from` (remote rq line read + probe work).
    #[inline]
    fn probe_cost(&self, from: usize, c: usize) -> Time {
        self.c.sis_probe + self.line_xfer(from, c)
    }

    /// What the probes of one `select_idle_cpu()` loop cost (`sis_probe_line_pct`).
    #[inline]
    pub(crate) fn scan_lines_cost(&self, sl: &ScanLines) -> Time {
        sl.cost(self.c.sis_probe, self.c.sis_probe_line_pct)
    }

    fn sis_done(&mut self, o: SisOutcome, cpu: usize, cost: Time) -> (usize, Time) {
        self.wake.sis_outcome[o as usize] += 1;
        (cpu, cost)
    }

    /// `select_idle_sibling(p, prev, target)`, run on `this`; returns (cpu, scan cost).
    pub(crate) fn select_idle_sibling(&mut self, this: usize, p: TaskId, prev: usize, target: usize) -> (usize, Time) {
        let mut cost = self.probe_cost(this, target);
        if self.available_idle(target) {
            return self.sis_done(SisOutcome::Target, target, cost);
        }
        if prev != target && self.m.share_cache(prev, target) {
            cost += self.probe_cost(this, prev);
            if self.available_idle(prev) {
                return self.sis_done(SisOutcome::Prev, prev, cost);
            }
        }
        // (3) per-CPU kthread stacking does not arise: workloads have no kthreads.
        let recent = self.tasks[p as usize].recent_used_cpu as usize;
        self.tasks[p as usize].recent_used_cpu = prev as u32;
        let allowed = &self.tasks[p as usize].allowed;
        if recent != prev && recent != target && self.m.share_cache(recent, target) && allowed.contains(recent) {
            cost += self.probe_cost(this, recent);
            if self.available_idle(recent) {
                return self.sis_done(SisOutcome::Recent, recent, cost);
            }
        }
        let llc = self.cpus[target].llc as usize;
        let mut has_idle_core = false;
        if self.m.topo.smt_active() {
            cost += self.line_xfer(this, self.llcs[llc].line_owner as usize);
            has_idle_core = self.llcs[llc].has_idle_cores;
            if !has_idle_core && self.m.share_cache(prev, target) {
                // select_idle_smt(p, sd, prev)
                for i in 0..self.smt[prev].len() {
                    let s = self.smt[prev][i] as usize;
                    if s == prev || !allowed.contains(s) || !self.m.llc_span[target].contains(s) {
                        continue;
                    }
                    cost += self.probe_cost(this, s);
                    if self.available_idle(s) {
                        return self.sis_done(SisOutcome::SmtSibling, s, cost);
                    }
                }
            }
        }
        let (i, scan) = self.select_idle_cpu(this, p, has_idle_core, target);
        cost += scan;
        if let Some((c, o)) = i {
            return self.sis_done(o, c, cost);
        }
        self.sis_done(SisOutcome::Fallback, target, cost)
    }

    /// `select_idle_cpu()` + `select_idle_core()`: scans the target's LLC from `target + 1`,
    /// wrapping; full scan for an idle core when the hint says one exists, otherwise at most
    /// `nr_idle_scan` CPUs (SIS_UTIL). Returns the CPU found and the scan's cost.
    fn select_idle_cpu(&mut self, this: usize, p: TaskId, has_idle_core: bool, target: usize) -> (Option<(usize, SisOutcome)>, Time) {
        let llc = self.cpus[target].llc as usize;
        let mut nr: i64 = i64::MAX;
        let cost: Time = 0;
        // SIS_LLC_BUSY: `if (!test_idle_cpus(target)) return -1;` (v5 4/5).
        if self.f.SIS_LLC_BUSY && self.llcs[llc].is_busy {
            return (None, cost);
        }
        if self.f.SIS_IDLE_CORE_LIMIT {
            // v5 2/5: a speculative scan of two cores at zero depth while the hint is set.
            if self.f.SIS_UTIL {
                nr = self.llcs[llc].nr_idle_scan as i64 + 1;
                if has_idle_core {
                    nr = if nr > 1 { i64::MAX } else { 3 };
                } else if nr == 1 {
                    return (None, cost);
                }
            }
        } else if self.f.SIS_UTIL && !(self.f.SIS_UTIL_IDLE_CORE && has_idle_core) {
            // SIS_UTIL_IDLE_CORE: `if (sched_feat(SIS_UTIL) && !has_idle_core)` (v5 1/5).
            nr = self.llcs[llc].nr_idle_scan as i64 + 1;
            if nr == 1 {
                return (None, cost);
            }
        }
        if self.f.SIS_FILTER {
            self.wake.sis_scans += 1;
            if self.f.SIS_LLC_BUSY {
                // v5 5/5: the series' filter, the same scan over the LLC's mask of idle CPUs.
                return self.select_idle_cpu_filter_v5(this, p, has_idle_core, target, nr, None);
            }
            return self.select_idle_cpu_filter(this, p, has_idle_core, target, nr, None);
        }
        let prop = self.f.SIS_PROP && !has_idle_core;
        if prop {
            nr = self.sis_prop_depth(this, llc) as i64;
        }
        self.wake.sis_scans += 1;
        let (found, cost) = self.select_idle_cpu_scan(this, p, has_idle_core, target, nr, None, None);
        if prop {
            // Account the scan time against this CPU's idle budget and the LLC's average.
            let c = &mut self.cpus[this];
            c.wake_avg_idle -= c.wake_avg_idle.min(cost);
            let l = &mut self.llcs[llc];
            l.avg_scan_cost = (l.avg_scan_cost as i64 + (cost as i64 - l.avg_scan_cost as i64) / 8) as u64;
        }
        (found, cost)
    }

    /// The CPU an idle scan returned, read when the scan reaches it. The model runs the scan
    /// when `try_to_wake_up()` starts; the kernel's `select_idle_cpu()` reads each CPU as its
    /// probe comes, so it reads the CPU it returns at the end of the scan's time, which is when
    /// the waker calls this. If another wakeup claimed that CPU (or, for an idle core, a CPU of
    /// the core) meanwhile, the kernel's probe would have found it busy and gone on: the scan
    /// goes on past it with the depth it had left (`ScanResume`), and returns the CPU it finds,
    /// else `select_idle_sibling()`'s target, with the further probes' cost. None: the CPU is
    /// still what the scan found (or no scan returned one).
    pub(crate) fn sis_recheck(&mut self, this: usize, p: TaskId) -> Option<(usize, Time)> {
        let mut r = self.tasks[p as usize].scan_resume.take()?;
        let x = r.found as usize;
        let still = if r.has_idle_core {
            self.smt[x].iter().all(|&s| self.available_idle(s as usize))
        } else {
            self.available_idle(x)
        };
        if still {
            return None;
        }
        if r.has_idle_core && r.idle_cpu.is_none() && self.available_idle(x) {
            // Only a sibling was taken: the probe of the core would have kept `x` as its idle CPU.
            r.idle_cpu = Some(r.found);
        }
        self.wake.sis_rescans += 1;
        self.wake.sis_found -= 1; // the scan counts again by what it finds now
        let was = if r.has_idle_core && r.at == r.found { SisOutcome::IdleCore } else { SisOutcome::IdleCpu };
        self.wake.sis_outcome[was as usize] -= 1;
        let target = r.target as usize;
        let (found, cost) = match r.kind {
            ScanKind::Llc { prop } => {
                let (found, cost) = self.select_idle_cpu_scan(this, p, r.has_idle_core, target, r.nr, None, Some(r));
                if prop {
                    // The further probes' time comes off the waker's idle budget too (the
                    // kernel's single sample of the scan's time in avg_scan_cost is left as
                    // the first part's).
                    let c = &mut self.cpus[this];
                    c.wake_avg_idle -= c.wake_avg_idle.min(cost);
                }
                (found, cost)
            }
            ScanKind::FilterV5 => {
                let l = self.cpus[target].llc as usize;
                let cpus = self.llcs[l].sis_filter.mask.and(&self.tasks[p as usize].allowed);
                self.select_idle_cpu_scan(this, p, r.has_idle_core, target, r.nr, Some(&cpus), Some(r))
            }
            ScanKind::FilterV6 { .. } => self.select_idle_cpu_filter(this, p, r.has_idle_core, target, r.nr, Some(r)),
        };
        let (cpu, o) = found.unwrap_or((target, SisOutcome::Fallback));
        self.wake.sis_outcome[o as usize] += 1;
        self.wake.cost_scan += cost;
        Some((cpu, cost))
    }

    /// The end of `select_idle_cpu()` after a scan that returned no idle core, `idle` the idle
    /// CPU it found (if any): the hint's update, a write to the LLC-shared line. Without
    /// SIS_LLC_BUSY: `if (has_idle_core) set_idle_cores(target, false)`. With it (v5 4/5):
    /// `if (idle_cpu == -1) clear_idle_cpus(target); else if (has_idle_core) set_idle_cores(target, 0)`.
    fn select_idle_cpu_end(&mut self, this: usize, llc: usize, has_idle_core: bool, idle: bool) -> Time {
        let busy = self.f.SIS_LLC_BUSY && !idle;
        if !busy && !has_idle_core {
            return 0;
        }
        let l = &mut self.llcs[llc];
        l.has_idle_cores = false;
        l.is_busy = busy;
        let mut cost = self.llc_shared_write(this, llc);
        if busy && self.f.SIS_FILTER && self.m.topo.smt_active() {
            // v5 5/5 clear_idle_cpus(): filter_reset() empties the mask (and bumps its seq).
            self.llcs[llc].sis_filter.mask = CpuSet::new();
            cost += self.sis_mask_write(this, llc);
        }
        cost
    }

    /// SIS_PROP scan depth (v5.13–v6.6 form): the waker CPU's decayed `wake_avg_idle` spread over
    /// the LLC, divided by the average scan cost; at least 4.
    fn sis_prop_depth(&mut self, this: usize, llc: usize) -> u64 {
        let j = self.jiffies();
        let c = &mut self.cpus[this];
        while c.wake_stamp < j && c.wake_avg_idle > 0 {
            c.wake_stamp += 1;
            c.wake_avg_idle >>= 1;
        }
        let avg_cost = self.llcs[llc].avg_scan_cost + 1;
        let span_avg = self.llc_cpus[llc].len() as u64 * self.cpus[this].wake_avg_idle;
        if span_avg > 4 * avg_cost {
            span_avg / avg_cost
        } else {
            4
        }
    }

    /// The scan loop of `select_idle_cpu()` over the LLC, or over `mask` (the v5 filter's CPUs).
    /// With SIS_IDLE_CORE_LIMIT (v5 2/5) `if (!--nr) break;` heads every visit, idle-core scan
    /// or not, and a scan cut short reaches the hint's update; without it only the CPU scan
    /// counts down and returns -1 at zero.
    ///
    /// `resume`: the scan goes on past the CPU it had returned, claimed by another wakeup
    /// before the scan reached it ([`ScanResume`]). A scan that returns a CPU from its loop
    /// leaves where it stood in the wakee's `scan_resume`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn select_idle_cpu_scan(&mut self, this: usize, p: TaskId, has_idle_core: bool, target: usize, mut nr: i64, mask: Option<&CpuSet>, resume: Option<ScanResume>) -> (Option<(usize, SisOutcome)>, Time) {
        let llc = self.cpus[target].llc as usize;
        let allowed = &self.tasks[p as usize].allowed;
        let mut cost: Time = 0;
        let n = self.llc_cpus[llc].len();
        let limit = self.f.SIS_IDLE_CORE_LIMIT;
        // A task allowed on every CPU skips reading its mask (a line of its own, often cold).
        let all_allowed = self.tasks[p as usize].nr_cpus_allowed as usize == self.nr_cpus();
        if self.llcs[llc].nr_avail_idle == 0
            && mask.is_none()
            && resume.is_none()
            && !(limit && has_idle_core && nr < i64::MAX)
            && (all_allowed || self.m.llc_span[target].is_subset_of(allowed))
        {
            // No CPU of the LLC is idle: the scan probes as the loop below would and finds
            // nothing. Charge exactly those probes without walking them.
            let probes = if has_idle_core { n as u64 } else { (nr - 1).min(n as i64) as u64 };
            // The CPUs the loop would probe: the first `probes` after target, wrapping.
            let start = self.llc_cpus[llc].partition_point(|&c| (c as usize) <= target);
            let last = if has_idle_core {
                self.last_idle_core_probe(llc, start)
            } else {
                self.llc_cpus[llc][(start + probes as usize + n - 1) % n] as usize
            };
            let lines = if probes == n as u64 {
                self.scan_lines_full(this, llc)
            } else {
                (0..probes as usize).map(|k| self.line_xfer(this, self.llc_cpus[llc][(start + k) % n] as usize)).sum()
            };
            let mut cost = if probes == 0 { 0 } else { self.scan_lines_cost(&ScanLines::of(probes, lines, self.line_xfer(this, last))) };
            self.wake.sis_probes += probes;
            // The loop ends without `return -1` for an idle-core scan, a CPU scan whose depth
            // outlasts the LLC, and any scan cut short under SIS_IDLE_CORE_LIMIT.
            if has_idle_core || limit || nr - 1 >= n as i64 {
                cost += self.select_idle_cpu_end(this, llc, has_idle_core, false);
            }
            return (None, cost);
        }
        let mut idle_cpu: Option<usize> = resume.and_then(|r| r.idle_cpu).map(|c| c as usize);
        let mut sl = ScanLines::default();
        let mut found: Option<(usize, SisOutcome)> = None;
        let mut returned = false; // `return -1` from inside the loop (depth exhausted)
        // for_each_cpu_wrap(cpu, cpus, target + 1) over the LLC's CPU list, or the mask; a
        // resumed scan starts after the CPU it had returned.
        let wpos = wrap_pos(self.nr_cpus(), target);
        let after = resume.map(|r| wpos(r.at as usize));
        let start = self.llc_cpus[llc].partition_point(|&c| (c as usize) <= target);
        let llc_cpus = &self.llc_cpus[llc];
        let order = || {
            let from_llc = mask.is_none().then(|| (0..n).map(move |k| llc_cpus[(start + k) % n] as usize));
            let from_mask = mask.map(|m| m.iter_wrap(target + 1));
            from_llc.into_iter().flatten().chain(from_mask.into_iter().flatten())
        };
        let mut examined = CpuSet::new(); // cores already examined by select_idle_core
        if let (Some(a), true) = (after, has_idle_core) {
            // The cores the scan examined before it returned: every allowed CPU of its order up
            // to the one it returned (cpumask_andnot() took each examined core's siblings out).
            let mut mark = |c: usize| {
                if allowed.contains(c) {
                    for &s in self.smt[c].iter() {
                        examined.set(s as usize);
                    }
                }
            };
            order().take_while(|&c| wpos(c) <= a).for_each(&mut mark);
        }
        let kind = match mask {
            Some(_) => ScanKind::FilterV5,
            None => ScanKind::Llc { prop: self.f.SIS_PROP && !has_idle_core && !self.f.SIS_FILTER },
        };
        let mut left = None; // where the loop stood when it returned a CPU
        for c in order().skip_while(|&c| after.is_some_and(|a| wpos(c) <= a)) {
            if !allowed.contains(c) || examined.contains(c) {
                continue;
            }
            if limit {
                nr -= 1;
                if nr <= 0 {
                    break;
                }
            }
            if has_idle_core {
                // select_idle_core(): every sibling must be idle.
                let idle_before = idle_cpu;
                let mut all_idle = true;
                for i in 0..self.smt[c].len() {
                    let s = self.smt[c][i] as usize;
                    sl.probe(self.line_xfer(this, s));
                    if !self.available_idle(s) {
                        all_idle = false;
                        if idle_cpu.is_some() {
                            break;
                        }
                        continue;
                    }
                    if idle_cpu.is_none() && allowed.contains(s) {
                        idle_cpu = Some(s);
                    }
                }
                if all_idle {
                    found = Some((c, SisOutcome::IdleCore));
                    let idle_cpu = idle_before.map(|i| i as u32);
                    left = Some(ScanResume { target: target as u32, found: c as u32, at: c as u32, nr, has_idle_core, idle_cpu, kind });
                    break;
                }
                for i in 0..self.smt[c].len() {
                    examined.set(self.smt[c][i] as usize);
                }
            } else {
                if !limit {
                    nr -= 1;
                    if nr <= 0 {
                        returned = true;
                        break;
                    }
                }
                sl.probe(self.line_xfer(this, c));
                if self.available_idle(c) {
                    found = Some((c, SisOutcome::IdleCpu));
                    left = Some(ScanResume { target: target as u32, found: c as u32, at: c as u32, nr, has_idle_core, idle_cpu: None, kind });
                    break;
                }
            }
        }
        if has_idle_core && found.is_none() {
            if let Some(c) = idle_cpu {
                found = Some((c, SisOutcome::IdleCpu));
            }
        }
        cost += self.scan_lines_cost(&sl);
        // Past the loop (no idle core returned from it, no `return -1`): the hint's update.
        if !returned && !matches!(found, Some((_, SisOutcome::IdleCore))) {
            cost += self.select_idle_cpu_end(this, llc, has_idle_core, found.is_some());
        }
        self.wake.sis_probes += sl.probes();
        if found.is_some() {
            self.wake.sis_found += 1;
        }
        self.tasks[p as usize].scan_resume = left;
        (found, cost)
    }

    /// The CPU an idle-core scan of a busy LLC probes last: the last sibling of the core the
    /// loop reaches last, i.e. of the CPU latest in the loop's order (`start` the position of
    /// target + 1 in the LLC's list) none of whose siblings came before it. Searched from the
    /// end of the order: with two threads a core, found within a few CPUs.
    fn last_idle_core_probe(&self, llc: usize, start: usize) -> usize {
        let cpus = &self.llc_cpus[llc];
        let n = cpus.len();
        let pos = |z: u32| (cpus.partition_point(|&c| c < z) + n - start) % n;
        for k in (0..n).rev() {
            let y = cpus[(start + k) % n];
            if self.smt[y as usize].iter().all(|&s| s == y || pos(s) > k) {
                return *self.smt[y as usize].last().expect("a CPU is its own sibling") as usize;
            }
        }
        unreachable!("the loop's first CPU has no sibling before it")
    }

    /// The line transfers of probing every CPU of LLC `llc` from `this`, one after another.
    fn scan_lines_full(&self, this: usize, llc: usize) -> Time {
        if self.cpus[this].llc as usize == llc {
            return self.llc_scan_own[this];
        }
        let cpus = &self.llc_cpus[llc];
        cpus.len() as u64 * self.line_xfer(this, cpus[0] as usize)
    }

    /// `__update_idle_core()`: when `cpu` switches to idle and all its SMT siblings are idle,
    /// set the LLC's has_idle_cores hint (a write to the LLC-shared line if it changes).
    pub(crate) fn update_idle_core(&mut self, cpu: usize) {
        if !self.m.topo.smt_active() {
            return;
        }
        // SIS_IDLE_CORE_PENDING: `if (rq->ttwu_pending) return;` (v5 3/5).
        if self.f.SIS_IDLE_CORE_PENDING && self.cpus[cpu].ttwu_pending {
            return;
        }
        if self.f.SIS_LLC_BUSY {
            return self.update_idle_core_state(cpu);
        }
        let llc = self.cpus[cpu].llc as usize;
        if self.llcs[llc].has_idle_cores {
            return;
        }
        let all = self.smt[cpu].iter().all(|&s| s as usize == cpu || self.available_idle(s as usize));
        if all {
            let c = self.llc_shared_write(cpu, llc);
            self.charge(cpu, c);
            self.llcs[llc].has_idle_cores = true;
        }
    }

    /// A write of `sd_llc_shared` (has_idle_cores, the LLC state, nr_idle_scan) from `cpu`: the
    /// line moves to `cpu`; returns the transfer, which the caller charges or adds to its cost.
    fn llc_shared_write(&mut self, cpu: usize, llc: usize) -> Time {
        let owner = std::mem::replace(&mut self.llcs[llc].line_owner, cpu as u32) as usize;
        self.line_xfer(cpu, owner)
    }

    /// `__update_idle_core()` of v5 4/5 and 5/5: the LLC's state becomes "has idle cores" when
    /// the whole core is idle, else "has idle CPUs" (so any CPU entering idle ends "fully
    /// busy"); with SIS_FILTER the CPU joins the filter unless it or an idle sibling is in it
    /// (`filter_test_cpu()`: the patch's seq test, a bit of the mask here).
    fn update_idle_core_state(&mut self, cpu: usize) {
        let llc = self.cpus[cpu].llc as usize;
        let l = &self.llcs[llc];
        let old_icores = l.has_idle_cores;
        let filter = self.f.SIS_FILTER;
        let mut exist = !filter || l.sis_filter.mask.contains(cpu);
        if old_icores && exist {
            return;
        }
        let mut core_idle = true;
        for &s in self.smt[cpu].iter() {
            let s = s as usize;
            if s == cpu {
                continue;
            }
            if !self.available_idle(s) {
                core_idle = false;
                if exist {
                    break;
                }
                continue; // (a SCHED_IDLE sibling would count: workloads have none)
            }
            if !exist {
                exist = self.llcs[llc].sis_filter.mask.contains(s);
            }
        }
        if !exist {
            self.filter_set_cpu(cpu);
        }
        // `if (old != sd_has_icores && old != new)`: old is "has idle CPUs" or "fully busy".
        if !old_icores && (core_idle || self.llcs[llc].is_busy) {
            let c = self.llc_shared_write(cpu, llc);
            self.charge(cpu, c);
            let l = &mut self.llcs[llc];
            l.has_idle_cores = core_idle;
            l.is_busy = false;
        }
    }

    /// `update_idle_cpu_scan()`: SIS_UTIL depth from the LLC's summed utilisation, computed at
    /// the periodic (not newidle) balance of the domain whose span is the LLC.
    pub(crate) fn update_idle_cpu_scan(&mut self, cpu: usize, level: usize) {
        if !self.f.SIS_UTIL {
            return;
        }
        let sd = &self.m.domains[cpu][level];
        let w = self.m.llc_size[cpu] as u64;
        if sd.span_weight as u64 != w {
            return;
        }
        let sum_util: u64 = sd.span.iter().map(|c| self.cpu_util(c)).sum();
        let x = sum_util / w;
        let pct = sd.imbalance_pct as u64;
        let t = (x * x * pct * pct / 10000 / 1024).min(1024);
        let y = 1024 - t;
        let nr = (y * w / 1024) as u32;
        let llc = self.cpus[cpu].llc as usize;
        if self.llcs[llc].nr_idle_scan != nr {
            let c = self.llc_shared_write(cpu, llc);
            self.charge(cpu, c);
            self.llcs[llc].nr_idle_scan = nr;
        }
    }

    /// `cpu_util_cfs()`: max(util_avg, util_est) capped at capacity.
    pub(crate) fn cpu_util(&self, c: usize) -> u64 {
        let cfs = &self.cpus[c].cfs;
        let mut u = cfs.avg.util_avg;
        if self.f.UTIL_EST {
            u = u.max(cfs.util_est);
        }
        u.min(self.cpus[c].capacity)
    }
}

/// The position of CPU `c` in `for_each_cpu_wrap(c, mask, target + 1)`'s order on a machine of
/// `n` CPUs: 0 for `target + 1`, counting up and wrapping.
pub(crate) fn wrap_pos(n: usize, target: usize) -> impl Fn(usize) -> usize {
    let first = (target + 1) % n;
    move |c| (c + n - first) % n
}
