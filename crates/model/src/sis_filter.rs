//! SIS_FILTER — Abel Wu's SIS filter, v6 "SIS_CORE" (ByteDance, Oct 2022; not merged;
//! research §11.2): each LLC keeps a mask of (probably) idle CPUs at core granularity, set when
//! a CPU goes idle and no CPU of its core is in the mask yet; `select_idle_cpu()` scans only the
//! mask. Bits are not cleared when a CPU becomes busy (false positives): a failed scan marks its
//! target so that the next scan probes the SMT siblings of each masked CPU, clearing bits whose
//! whole core is busy; a full failed idle-core scan clears the mask. Every update of the mask is
//! a write to a line shared by the whole LLC, charged with its transfer and serialisation.

use crate::sim::Sim;
use crate::state::{ScanKind, ScanResume, TaskId};
use wakesim_engine::Time;
use wakesim_stats::SisOutcome;

impl Sim {
    /// On idle entry (`__update_idle_core` hook): publish this CPU if its core is absent.
    pub(crate) fn sis_filter_idle_enter(&mut self, cpu: usize) {
        if self.cpus[cpu].ttwu_pending {
            return;
        }
        let l = self.cpus[cpu].llc as usize;
        let present = self.smt[cpu].iter().any(|&s| self.llcs[l].sis_filter.mask.contains(s as usize));
        if !present {
            self.filter_set_cpu(cpu);
        }
    }

    /// `filter_set_cpu(cpu, cpu)`: `cpu` joins its LLC's mask, a read-modify-write of the mask's
    /// line charged to `cpu`.
    pub(crate) fn filter_set_cpu(&mut self, cpu: usize) {
        let l = self.cpus[cpu].llc as usize;
        let mut line = self.llcs[l].sis_filter.line;
        self.line_rmw(cpu, &mut line, 0);
        self.llcs[l].sis_filter.line = line;
        self.llcs[l].sis_filter.mask.set(cpu);
    }

    /// A scan's write of the LLC's mask line from `this` (bits it cleared). Returns the cost
    /// and charges nothing: the scan adds it to the cost it returns, which the wakeup pays with
    /// the placement (`try_to_wake_up` busies the waker for `select_task_rq_fair()`'s cost).
    pub(crate) fn sis_mask_write(&mut self, this: usize, l: usize) -> Time {
        let now = self.now();
        let transfer = self.line_xfer(this, self.llcs[l].sis_filter.line.owner as usize);
        self.llcs[l].sis_filter.line.take(this as u32, now, transfer, 0)
    }

    /// `select_idle_cpu()` with the filter as the v5 series posted it (5/5, on top of the LLC
    /// state of 4/5): the same scan as without it, over the mask of idle CPUs instead of the
    /// LLC (`cpumask_and(cpus, sched_domain_icpus(sd), p->cpus_ptr)` when SMT is active); a scan
    /// that finds nothing marks the LLC busy and empties the mask (`clear_idle_cpus()`).
    /// `resume`: as for [`Sim::select_idle_cpu_scan`], over the mask as it is now (the kernel's
    /// scan goes on over the copy it took at its start, a few µs older).
    pub(crate) fn select_idle_cpu_filter_v5(&mut self, this: usize, p: TaskId, has_idle_core: bool, target: usize, nr: i64, resume: Option<ScanResume>) -> (Option<(usize, SisOutcome)>, Time) {
        if !self.m.topo.smt_active() {
            return self.select_idle_cpu_scan(this, p, has_idle_core, target, nr, None, resume);
        }
        let l = self.cpus[target].llc as usize;
        let cpus = self.llcs[l].sis_filter.mask.and(&self.tasks[p as usize].allowed);
        // Reading the shared mask line.
        let read = self.line_xfer(this, self.llcs[l].sis_filter.line.owner as usize);
        let (found, cost) = self.select_idle_cpu_scan(this, p, has_idle_core, target, nr, Some(&cpus), resume);
        (found, read + cost)
    }

    /// `select_idle_cpu()` with the filter (v6 4/4 scan-failure handling). Returns the CPU found
    /// and the scan's cost (probes, the mask line's read, any mask write) and charges nothing:
    /// the wakeup pays it with the placement. `resume`: as for the v5 filter.
    pub(crate) fn select_idle_cpu_filter(&mut self, this: usize, p: TaskId, has_idle_core: bool, target: usize, mut nr: i64, resume: Option<ScanResume>) -> (Option<(usize, SisOutcome)>, Time) {
        let l = self.cpus[target].llc as usize;
        let scan_sibling = match resume {
            Some(ScanResume { kind: ScanKind::FilterV6 { scan_sibling }, .. }) => scan_sibling,
            _ => std::mem::take(&mut self.cpus[target].sis_filter.scan_sibling),
        };
        let kind = ScanKind::FilterV6 { scan_sibling };
        let allowed = &self.tasks[p as usize].allowed;
        let cpus = self.llcs[l].sis_filter.mask.and(allowed);
        // Reading the shared mask line.
        let mut cost = self.line_xfer(this, self.llcs[l].sis_filter.line.owner as usize);
        let mut idle: Option<usize> = resume.and_then(|r| r.idle_cpu).map(|c| c as usize);
        let mut found: Option<(usize, SisOutcome)> = None;
        let mut sl = crate::read_costs::ScanLines::default();
        let mut cleared = false;
        let wpos = crate::sis::wrap_pos(self.nr_cpus(), target);
        let after = resume.map(|r| wpos(r.at as usize));
        let mut left = None; // where the loop stood when it returned a CPU
        for c in cpus.iter_wrap(target + 1).skip_while(|&c| after.is_some_and(|a| wpos(c) <= a)) {
            nr -= 1;
            if nr <= 0 {
                break;
            }
            let at = |found: usize, idle_cpu: Option<usize>| ScanResume { target: target as u32, found: found as u32, at: c as u32, nr, has_idle_core, idle_cpu: idle_cpu.map(|i| i as u32), kind };
            if has_idle_core {
                let idle_before = idle;
                let mut all_idle = true;
                for i in 0..self.smt[c].len() {
                    let s = self.smt[c][i] as usize;
                    sl.probe(self.line_xfer(this, s));
                    if !self.available_idle(s) {
                        all_idle = false;
                    } else if idle.is_none() && allowed.contains(s) {
                        idle = Some(s);
                    }
                }
                if all_idle {
                    found = Some((c, SisOutcome::IdleCore));
                    left = Some(at(c, idle_before));
                    break;
                }
            } else if scan_sibling {
                let mut sib = None;
                for i in 0..self.smt[c].len() {
                    let s = self.smt[c][i] as usize;
                    sl.probe(self.line_xfer(this, s));
                    if allowed.contains(s) && self.available_idle(s) {
                        sib = Some(s);
                        break;
                    }
                }
                match sib {
                    Some(s) => {
                        idle = Some(s);
                        left = Some(at(s, None));
                        break;
                    }
                    None => {
                        // A false positive: the whole core is busy.
                        self.llcs[l].sis_filter.mask.clear(c);
                        cleared = true;
                    }
                }
            } else {
                sl.probe(self.line_xfer(this, c));
                if self.available_idle(c) {
                    idle = Some(c);
                    left = Some(at(c, None));
                    break;
                }
            }
        }
        cost += self.scan_lines_cost(&sl);
        if cleared {
            cost += self.sis_mask_write(this, l);
        }
        if has_idle_core {
            self.llcs[l].has_idle_cores = false;
        }
        if found.is_none() {
            if let Some(c) = idle {
                found = Some((c, SisOutcome::IdleCpu));
            } else if nr > 0 && has_idle_core {
                // A full idle-core scan found nothing idle: the mask is all wrong.
                self.llcs[l].sis_filter.mask = wakesim_machine::CpuSet::new();
                cost += self.sis_mask_write(this, l);
            } else if !(nr > 0 && scan_sibling) {
                self.cpus[target].sis_filter.scan_sibling = true;
            }
        }
        self.wake.sis_probes += sl.probes();
        if found.is_some() {
            self.wake.sis_found += 1;
        }
        self.tasks[p as usize].scan_resume = left;
        (found, cost)
    }
}
