//! What a balance pass pays for reading other CPUs' runqueues: `update_sg_lb_stats()`
//! (kernel/sched/fair.c) walks a group's CPUs and reads each one's `struct rq`: `nr_running`
//! and the NUMA counts (line 0), `cfs.h_nr_running` (the cfs_rq's first line), `cfs.avg`'s load,
//! runnable, util and util_est (its own line), `cpu_capacity` and `misfit_task_load`
//! (`cpu_overutilized()`, `sched_reduced_capacity()`) and, for a CPU with nothing running,
//! `idle_cpu()`'s `curr`, `idle` and `ttwu_pending`: four lines of a busy CPU's rq, six of an
//! idle one's. Their addresses come from `cpu_rq(i)` alone, so an out-of-order core issues the
//! misses of one CPU together and runs ahead into the next CPUs' while they are outstanding.
//! How many line transfers' time one CPU of the walk costs is what this measures.
//!
//! N runqueue images laid out at 6.18's offsets (`pahole -C rq`), 64 KiB apart, as per-CPU
//! areas are far apart; walked in a shuffled order of the images, or at their constant stride,
//! which Zen's L1 stride prefetcher follows (Intel's IP prefetcher follows strides of up to 2 KB
//! only). Per turn, CPU `a` bounces a flag with CPU `b` (the turn's line transfer, as in
//! [`crate::reuse`]) and writes every line the walk reads, as the rqs' owners do when they
//! enqueue, tick and update PELT; CPU `b` then runs the walk twice, timed: the first reads the
//! lines from `a`'s cache, the second from its own.
//!
//! `line equivalents per CPU = (first − second) / N / line`
//!
//! The model charges this figure, in percent, per CPU of a balance pass's span
//! (`lb_walk_line_pct`, `DomState::scan_cost`). The kernel's step per CPU is longer than these
//! reads alone (for_each_cpu_and() over two masks, cpu_util_cfs(), util_fits_cpu()), and how far
//! ahead a core runs depends on how many instructions each step holds in its window: `pad`
//! rounds of work on the values read stand for the rest of the step.

use std::io;

use crate::sys;
use crate::turns::{median, take_turns, timed};

/// Distance between two runqueue images.
const STRIDE: usize = 64 << 10;
/// Turns per repetition.
const TURNS: usize = 200;
/// 6.18's offsets in `struct rq` (x86-64, `pahole -C rq /sys/kernel/btf/vmlinux`).
mod off {
    pub const NR_RUNNING: usize = 4;
    pub const NR_NUMA_RUNNING: usize = 8;
    pub const NR_PREFERRED_RUNNING: usize = 12;
    pub const TTWU_PENDING: usize = 104;
    /// `cfs` at 128; `h_nr_queued` (v6.7's `h_nr_running`) at +20, `h_nr_idle` (v6.7's
    /// `idle_h_nr_running`) at +28.
    pub const CFS_H_NR: usize = 128 + 20;
    pub const CFS_H_NR_IDLE: usize = 128 + 28;
    /// `cfs.avg` at 128 + 128: `load_avg` +32, `runnable_avg` +40, `util_avg` +48, `util_est` +56.
    pub const AVG_LOAD: usize = 256 + 32;
    pub const AVG_RUNNABLE: usize = 256 + 40;
    pub const AVG_UTIL: usize = 256 + 48;
    pub const AVG_UTIL_EST: usize = 256 + 56;
    pub const CURR: usize = 2720;
    pub const IDLE: usize = 2736;
    pub const CPU_CAPACITY: usize = 2896;
    pub const MISFIT_TASK_LOAD: usize = 2920;
}

/// Which kernel loop the walk is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// `update_sg_lb_stats()` over a group (module doc).
    Balance,
    /// `select_idle_cpu()`'s probes over busy CPUs (v6.7, no idle core): `__select_idle_cpu()`
    /// → `available_idle_cpu()`, whose `idle_cpu()` compares `curr` with `idle` first, then
    /// `sched_idle_cpu()` (`nr_running` against `cfs.idle_h_nr_running`): three lines of each
    /// rq (+2688, +0, +128), a few instructions per CPU.
    IdleScan,
    /// The same probes in the kernel's shape: `for_each_cpu_wrap()` over a cpumask through an
    /// out-of-line `cpumask_next_wrap()` (`find_next_bit()` on the mask's words), the rq's
    /// address from a per-CPU offset table (`cpu_rq()`), `idle_cpu()` out of line, and the
    /// loop's `--nr` count: about three times the tight loop's instructions per CPU, which is
    /// what bounds how many CPUs' misses an out-of-order window holds at once.
    IdleScanKernel,
}

/// One configuration of the measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setup {
    pub walk: Walk,
    /// Runqueues walked.
    pub cpus: usize,
    /// Whether the CPUs have nothing running (the balance walk only: an idle CPU ends a scan).
    pub idle: bool,
    /// Rounds of work per CPU besides the reads (the balance walk only).
    pub pad: u64,
    /// The runqueues in a shuffled order, or at their constant stride.
    pub shuffled: bool,
}

impl Setup {
    /// Lines the walk reads per CPU.
    pub fn lines_per_cpu(&self) -> usize {
        match (self.walk, self.idle) {
            (Walk::IdleScan | Walk::IdleScanKernel, _) => 3,
            (Walk::Balance, false) => 4,
            (Walk::Balance, true) => 6,
        }
    }
}

/// One repetition's medians over its turns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scan {
    pub setup: Setup,
    /// One line transfer between `a` and `b`, ns.
    pub line: f64,
    /// The walk with the lines in `a`'s cache, and again with them in `b`'s, ns.
    pub remote: f64,
    pub local: f64,
    /// The median over turns of `(remote − local) / cpus / line`.
    pub line_equivalents: f64,
}

/// The walk's sums, as `struct sg_lb_stats` keeps them.
#[derive(Default)]
struct Sums {
    load: u64,
    util: u64,
    runnable: u64,
    h_nr: u64,
    nr: u64,
    numa: u64,
    preferred: u64,
    idle_cpus: u64,
    misfit: u64,
    overloaded: bool,
    overutilized: bool,
}

/// `update_sg_lb_stats()` for a non-local group of a newidle pass (v6.7, no asymmetric
/// capacities): `n` runqueue images from `base`, `STRIDE` apart.
///
/// # Safety
/// `base` points to `n * STRIDE` readable bytes.
unsafe fn update_sg_lb_stats(base: *const u8, slots: &[usize], pad: u64) -> Sums {
    let rd = |rq: *const u8, o: usize| unsafe { std::ptr::read_volatile(rq.add(o) as *const u64) };
    let rd32 = |rq: *const u8, o: usize| unsafe { std::ptr::read_volatile(rq.add(o) as *const u32) } as u64;
    let mut s = Sums::default();
    for &slot in slots {
        let rq = unsafe { base.add(slot * STRIDE) };
        let load = rd(rq, off::AVG_LOAD);
        s.load += load;
        // cpu_util_cfs(): max(util_avg, util_est) capped at the CPU's capacity (1024 here).
        let util = rd(rq, off::AVG_UTIL).max(rd32(rq, off::AVG_UTIL_EST)).min(1024);
        s.util += util;
        s.runnable += rd(rq, off::AVG_RUNNABLE);
        s.h_nr += rd32(rq, off::CFS_H_NR);
        let nr = rd32(rq, off::NR_RUNNING);
        s.nr += nr;
        s.overloaded |= nr > 1;
        // cpu_overutilized() → util_fits_cpu(): fits_capacity(util, capacity_of(cpu)).
        let cap = rd(rq, off::CPU_CAPACITY);
        s.overutilized |= util * 1280 >= cap * 1024;
        s.numa += rd32(rq, off::NR_NUMA_RUNNING);
        s.preferred += rd32(rq, off::NR_PREFERRED_RUNNING);
        // The rest of the kernel's step (module doc): `pad` rounds of work on what was read.
        let mut x = load ^ util;
        for j in 0..pad {
            x = (x.rotate_left(5) ^ (x >> 3)).wrapping_add(j);
        }
        s.misfit ^= x & 1;
        // idle_cpu(): curr == idle, nothing running, no wakeup pending.
        if nr == 0 && rd(rq, off::CURR) == rd(rq, off::IDLE) && rd32(rq, off::TTWU_PENDING) == 0 {
            s.idle_cpus += 1;
            continue;
        }
        // sched_reduced_capacity(): a CPU with cfs tasks whose capacity is cut by 10 %+.
        if rd32(rq, off::CFS_H_NR) > 0 && cap * 117 < 1024 * 100 {
            s.misfit = s.misfit.max(load).max(rd(rq, off::MISFIT_TASK_LOAD));
        }
    }
    s
}

/// `select_idle_cpu()`'s probes ([`Walk::IdleScan`]): the position of the first idle CPU.
///
/// # Safety
/// As [`update_sg_lb_stats`].
unsafe fn select_idle_cpu(base: *const u8, slots: &[usize]) -> Option<usize> {
    let rd = |rq: *const u8, o: usize| unsafe { std::ptr::read_volatile(rq.add(o) as *const u64) };
    let rd32 = |rq: *const u8, o: usize| unsafe { std::ptr::read_volatile(rq.add(o) as *const u32) };
    for (k, &slot) in slots.iter().enumerate() {
        let rq = unsafe { base.add(slot * STRIDE) };
        let idle_cpu = rd(rq, off::CURR) == rd(rq, off::IDLE) && rd32(rq, off::NR_RUNNING) == 0 && rd32(rq, off::TTWU_PENDING) == 0;
        let nr = rd32(rq, off::NR_RUNNING);
        if idle_cpu || (nr != 0 && nr == rd32(rq, off::CFS_H_NR_IDLE)) {
            return Some(k);
        }
    }
    None
}

/// `cpumask_next_wrap(n, mask, start)` over `mask`'s words: the next set bit after `n`,
/// wrapping once past `start` (lib/cpumask.c), `None` when the walk is back at `start`.
#[inline(never)]
fn cpumask_next_wrap(n: i64, mask: &[u64], start: usize, wrapped: &mut bool) -> Option<usize> {
    let bits = mask.len() * 64;
    let find = |from: usize| -> Option<usize> {
        let mut w = from / 64;
        if w >= mask.len() {
            return None;
        }
        let mut word = mask[w] & (!0u64 << (from % 64));
        loop {
            if word != 0 {
                return Some(w * 64 + word.trailing_zeros() as usize);
            }
            w += 1;
            if w == mask.len() {
                return None;
            }
            word = mask[w];
        }
    };
    let mut next = find((n + 1) as usize).filter(|&c| c < bits);
    if *wrapped && next.is_some_and(|c| c >= start) {
        return None;
    }
    if next.is_none() && !*wrapped {
        *wrapped = true;
        next = find(0).filter(|&c| c < start);
    }
    next
}

/// `idle_cpu()` (kernel/sched/core.c), out of line as the kernel's is.
///
/// # Safety
/// `rq` points to a runqueue image.
#[inline(never)]
unsafe fn idle_cpu(rq: *const u8) -> bool {
    let rd = |o: usize| unsafe { std::ptr::read_volatile(rq.add(o) as *const u64) };
    let rd32 = |o: usize| unsafe { std::ptr::read_volatile(rq.add(o) as *const u32) };
    if rd(off::CURR) != rd(off::IDLE) {
        return false;
    }
    rd32(off::NR_RUNNING) == 0 && rd32(off::TTWU_PENDING) == 0
}

/// `select_idle_cpu()`'s CPU scan in the kernel's shape ([`Walk::IdleScanKernel`]): CPUs
/// `0..n` of `mask`, from `target + 1`, `per_cpu_offset[cpu]` the rq's slot; the CPU found.
///
/// # Safety
/// As [`update_sg_lb_stats`].
unsafe fn select_idle_cpu_kernel(base: *const u8, per_cpu_offset: &[usize], mask: &[u64], target: usize) -> Option<usize> {
    let rd32 = |rq: *const u8, o: usize| unsafe { std::ptr::read_volatile(rq.add(o) as *const u32) };
    let mut nr = per_cpu_offset.len() as i64 + 1;
    let start = target + 1;
    let mut wrapped = false;
    let mut cpu = start as i64 - 1;
    while let Some(c) = cpumask_next_wrap(cpu, mask, start, &mut wrapped) {
        cpu = c as i64;
        nr -= 1;
        if nr <= 0 {
            return None;
        }
        let rq = unsafe { base.add(std::hint::black_box(per_cpu_offset[c]) * STRIDE) };
        // __select_idle_cpu(): available_idle_cpu() || sched_idle_cpu().
        let nr_running = rd32(rq, off::NR_RUNNING);
        if unsafe { idle_cpu(rq) } || (nr_running != 0 && nr_running == rd32(rq, off::CFS_H_NR_IDLE)) {
            return Some(c);
        }
    }
    None
}

/// What the owners write: every line the walk reads. `idle` CPUs have `curr == idle` and nothing
/// running (the walk reads six lines of each), busy ones run one task (four lines; `curr` too,
/// which the idle scan reads).
///
/// # Safety
/// `base` points to `n * STRIDE` writable bytes no other thread touches meanwhile.
unsafe fn owners_write(base: *mut u8, slots: &[usize], idle: bool, turn: u64) {
    let wr = |rq: *mut u8, o: usize, v: u64| unsafe { std::ptr::write_volatile(rq.add(o) as *mut u64, v) };
    let wr32 = |rq: *mut u8, o: usize, v: u32| unsafe { std::ptr::write_volatile(rq.add(o) as *mut u32, v) };
    for &slot in slots {
        let rq = unsafe { base.add(slot * STRIDE) };
        let nr = if idle { 0 } else { 1 };
        wr32(rq, off::NR_RUNNING, nr);
        wr32(rq, off::CFS_H_NR, nr);
        wr(rq, off::AVG_LOAD, 100 + (turn & 7));
        wr(rq, off::AVG_RUNNABLE, 100);
        wr(rq, off::AVG_UTIL, 100);
        wr(rq, off::CPU_CAPACITY, 1024);
        if idle {
            wr32(rq, off::TTWU_PENDING, 0);
        }
        // The idle task is 1 (Rqs::new), a running one 2.
        wr(rq, off::CURR, if idle { 1 } else { 2 });
    }
}

/// A page-aligned zeroed buffer for `n` runqueue images.
struct Rqs {
    buf: Vec<u8>,
    start: usize,
}

impl Rqs {
    fn new(n: usize) -> Rqs {
        let buf = vec![0u8; n * STRIDE + 4096];
        let start = buf.as_ptr().align_offset(4096);
        let mut r = Rqs { buf, start };
        for i in 0..n {
            // SAFETY: in bounds; `idle` equals `curr` for an idle CPU (1 = its idle task).
            unsafe { std::ptr::write(r.ptr().add(i * STRIDE + off::IDLE) as *mut u64, 1) };
        }
        r
    }
    fn ptr(&mut self) -> *mut u8 {
        // SAFETY: `start` < 4096 ≤ the slack allocated.
        unsafe { self.buf.as_mut_ptr().add(self.start) }
    }
}

/// `reps` repetitions of [`TURNS`] turns ([`take_turns`]): CPU `a` writes the runqueues of
/// `setup`, CPU `b` walks them twice. `Err` if pinning is refused.
pub fn lb_scan_ns(a: usize, b: usize, setup: Setup, reps: usize) -> io::Result<Vec<Scan>> {
    let _keep = sys::KeepAffinity::new();
    let Setup { walk: kind, cpus: n, idle, pad, shuffled } = setup;
    let idle = idle && kind == Walk::Balance;
    let slots = &placement(n, shuffled);
    // The scanned CPUs' cpumask (the kernel's walk starts after the waker's target, here the
    // last CPU, so that it covers every CPU in order).
    let mut mask = vec![0u64; n.div_ceil(64)];
    (0..n).for_each(|c| mask[c / 64] |= 1 << (c % 64));
    crate::calib::probe(&[a, b], false)?;
    let mut rqs = Rqs::new(n);
    // The walker reads the images only during its turns, the owner writes them only during its
    // own. A raw address crosses the thread boundary.
    let addr = rqs.ptr() as usize;
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        sys::pin_to(&[a])?;
        // SAFETY (both steps): the buffer holds the images of `slots`, and neither step runs
        // during the other's turn.
        let write = |i| unsafe { owners_write(addr as *mut u8, slots, idle, i) };
        let walk = |_| {
            let base = addr as *const u8;
            let once = || match kind {
                Walk::Balance => {
                    std::hint::black_box(unsafe { update_sg_lb_stats(base, slots, pad) });
                }
                Walk::IdleScan => {
                    std::hint::black_box(unsafe { select_idle_cpu(base, slots) });
                }
                Walk::IdleScanKernel => {
                    std::hint::black_box(unsafe { select_idle_cpu_kernel(base, slots, &mask, n - 1) });
                }
            };
            (timed(once), timed(once))
        };
        let t = take_turns(b, TURNS, "balance walk", write, walk)?;
        let eq: Vec<f64> = t.line.iter().zip(&t.second).map(|(&l, &(r, lo))| (r - lo) / n as f64 / l).collect();
        out.push(Scan {
            setup: Setup { idle, ..setup },
            line: median(&t.line),
            remote: median(&t.second.iter().map(|w| w.0).collect::<Vec<_>>()),
            local: median(&t.second.iter().map(|w| w.1).collect::<Vec<_>>()),
            line_equivalents: median(&eq),
        });
    }
    Ok(out)
}

/// The measurement behind `lb_walk_line_pct`: [`lb_scan_ns`] over spans of 24 and 256 CPUs,
/// busy and idle, with 20 and 40 rounds of work per CPU (about 20–70 ns, around the model's
/// `lb_stats_per_cpu`), `reps` repetitions each, the runqueues shuffled unless `strided`. Each
/// configuration's repetitions in turn (work, then busy/idle, then span).
pub fn walk_line_share(a: usize, b: usize, strided: bool, reps: usize) -> io::Result<Vec<Scan>> {
    let mut out = Vec::with_capacity(8 * reps);
    for pad in [20u64, 40] {
        for idle in [false, true] {
            for cpus in [24, 256] {
                out.extend(lb_scan_ns(a, b, Setup { walk: Walk::Balance, cpus, idle, pad, shuffled: !strided }, reps)?);
            }
        }
    }
    Ok(out)
}

/// The idle scan's probes over busy spans of 16 and 48 CPUs (an LLC's worth), in the tight
/// loop ([`Walk::IdleScan`]) and in the kernel's shape ([`Walk::IdleScanKernel`]), `reps`
/// repetitions each, shuffled unless `strided`.
pub fn idle_scan_line_share(a: usize, b: usize, strided: bool, reps: usize) -> io::Result<Vec<Scan>> {
    let mut out = idle_scan_spans(a, b, Walk::IdleScan, !strided, reps)?;
    out.extend(idle_scan_spans(a, b, Walk::IdleScanKernel, !strided, reps)?);
    Ok(out)
}

/// The measurement behind `sis_probe_line_pct`: the kernel-shaped idle scan
/// ([`Walk::IdleScanKernel`]) over busy, shuffled spans of 16 and 48 CPUs, `reps` repetitions each.
pub fn idle_probe_line_share(a: usize, b: usize, reps: usize) -> io::Result<Vec<Scan>> {
    idle_scan_spans(a, b, Walk::IdleScanKernel, true, reps)
}

/// `walk` (one of the idle scan's loops) over busy spans of 16 and 48 CPUs (an LLC's worth),
/// `reps` repetitions each.
fn idle_scan_spans(a: usize, b: usize, walk: Walk, shuffled: bool, reps: usize) -> io::Result<Vec<Scan>> {
    let mut out = Vec::with_capacity(2 * reps);
    for cpus in [16, 48] {
        out.extend(lb_scan_ns(a, b, Setup { walk, cpus, idle: false, pad: 0, shuffled }, reps)?);
    }
    Ok(out)
}

/// The median line equivalents of the repetitions whose line took at least `min_line` ns (a
/// repetition whose two CPUs shared their caches, as SMT siblings or vCPUs the hypervisor put
/// on one core, measures nothing); `None` if none did.
pub fn median_share(scans: &[Scan], min_line: f64) -> Option<crate::Summary> {
    crate::Summary::of(&scans.iter().filter(|s| s.line >= min_line).map(|s| s.line_equivalents).collect::<Vec<_>>())
}

/// Where runqueue `i` lies: slot `i` (a constant stride, as per-CPU areas within a node are), or
/// a fixed shuffle of the slots (no stride for a prefetcher to follow).
fn placement(n: usize, shuffled: bool) -> Vec<usize> {
    let mut slots: Vec<usize> = (0..n).collect();
    if shuffled {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in (1..n).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            slots.swap(i, (x % (i as u64 + 1)) as usize);
        }
    }
    slots
}
