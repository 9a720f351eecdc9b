//! EEVDF picking (kernel/sched/fair.c, v6.6): virtual time `V` as the load-weighted average
//! vruntime, eligibility (`vruntime <= V`), virtual deadlines, lag placement on enqueue
//! (`place_entity`), run-to-parity, and the wakeup-preemption decision (`pick_eevdf`).
//!
//! A runqueue holds few tasks in practice, so the rb-tree is a vector scanned in O(n); the
//! selection result is the same as the augmented tree's.

use crate::features::Features;
use crate::pelt::SchedAvg;
use crate::state::{Entity, TaskId, NO_TASK};
use crate::tunables::NICE_0_LOAD;
use wakesim_engine::Time;

/// A CPU's root `struct cfs_rq`. It works on scheduling entities (`struct sched_entity`, here
/// [`Entity`]), not tasks: its methods take the entity arena (`Sim::se`, indexed by task id,
/// an entity's id being its task's) and the id of the entity they act on, as the kernel's take
/// `(cfs_rq, se)`.
#[derive(Clone, Debug, Default)]
pub struct CfsRq {
    /// Queued entities not currently running (the tree).
    pub queued: Vec<TaskId>,
    /// The running entity, if it is a fair task (`cfs_rq->curr`).
    pub curr: TaskId,
    /// Whether `curr` is still on the runqueue (it is dequeued when it blocks).
    pub curr_on_rq: bool,
    /// Σ weight of queued entities incl. curr (`load.weight`).
    pub load: u64,
    /// `avg_vruntime` = Σ (v_i − min_vruntime)·w_i over the tree (curr added on use).
    pub avg_vruntime: i128,
    /// `avg_load` = Σ w_i over the tree.
    pub avg_load: i64,
    pub min_vruntime: i64,
    pub avg: SchedAvg,
    /// Σ util_est of queued tasks.
    pub util_est: u64,
    /// Insertions into the tree so far (stamps `Entity::tree_seq`).
    pub inserted: u64,
}

/// `calc_delta_fair()`: real time → virtual time for an entity of weight `w`.
#[inline]
pub fn calc_delta_fair(delta: i64, w: u64) -> i64 {
    if w == NICE_0_LOAD {
        delta
    } else if let Some(p) = delta.checked_mul(NICE_0_LOAD as i64) {
        // The same quotient in 64 bits whenever the product fits (any delta under 2^43 ns);
        // 128-bit division is a library call on x86-64.
        p / w as i64
    } else {
        ((delta as i128 * NICE_0_LOAD as i128) / w as i128) as i64
    }
}

impl CfsRq {
    pub fn new() -> Self {
        CfsRq { curr: NO_TASK, ..Default::default() }
    }

    /// Number of fair entities on the runqueue (`cfs_rq->nr_running`).
    pub fn nr_running(&self) -> u32 {
        self.queued.len() as u32 + self.curr_on_rq as u32
    }

    pub(crate) fn key(&self, v: i64) -> i64 {
        v - self.min_vruntime
    }

    fn avg_add(&mut self, se: &Entity) {
        self.avg_vruntime += self.key(se.vruntime) as i128 * se.weight as i128;
        self.avg_load += se.weight as i64;
    }

    fn avg_sub(&mut self, se: &Entity) {
        self.avg_vruntime -= self.key(se.vruntime) as i128 * se.weight as i128;
        self.avg_load -= se.weight as i64;
    }

    /// `avg_vruntime()`: V, rounded toward −∞ so that an entity exactly at V is eligible.
    pub fn v(&self, se: &[Entity]) -> i64 {
        let (mut avg, mut load) = (self.avg_vruntime, self.avg_load as i128);
        if self.curr != NO_TASK && self.curr_on_rq {
            let c = &se[self.curr as usize];
            avg += self.key(c.vruntime) as i128 * c.weight as i128;
            load += c.weight as i128;
        }
        if load > 0 {
            if avg < 0 {
                avg -= load - 1;
            }
            // In 64 bits when both fit (the quotient is the same), else in 128.
            avg = match (i64::try_from(avg), i64::try_from(load)) {
                (Ok(a), Ok(l)) => (a / l) as i128,
                _ => avg / load,
            };
        }
        self.min_vruntime + avg as i64
    }

    /// `vruntime_eligible()`: Σ(v_j − v0)w_j ≥ (v − v0)·Σw_j, without division.
    pub fn eligible(&self, se: &[Entity], vruntime: i64) -> bool {
        let (mut avg, mut load) = (self.avg_vruntime, self.avg_load as i128);
        if self.curr != NO_TASK && self.curr_on_rq {
            let c = &se[self.curr as usize];
            avg += self.key(c.vruntime) as i128 * c.weight as i128;
            load += c.weight as i128;
        }
        avg >= self.key(vruntime) as i128 * load
    }

    /// `update_min_vruntime()`: monotonic follower of min(curr, leftmost) vruntime.
    pub fn update_min_vruntime(&mut self, se: &[Entity]) {
        let mut v = self.min_vruntime;
        let curr = (self.curr != NO_TASK && self.curr_on_rq).then(|| se[self.curr as usize].vruntime);
        let left = self.queued.iter().map(|&t| se[t as usize].vruntime).min();
        match (curr, left) {
            (Some(c), Some(l)) => v = c.min(l),
            (Some(c), None) => v = c,
            (None, Some(l)) => v = l,
            (None, None) => {}
        }
        if v > self.min_vruntime {
            let delta = v - self.min_vruntime;
            self.avg_vruntime -= self.avg_load as i128 * delta as i128;
            self.min_vruntime = v;
        }
    }

    /// `update_curr()`: charge `now − exec_start` to the running entity. Returns true when its
    /// deadline was reached and it must be rescheduled (`update_deadline` with nr_running > 1;
    /// EEVDF only — CFS decides at the tick, `check_preempt_tick`).
    pub fn update_curr(&mut self, se: &mut [Entity], now: Time) -> bool {
        if self.curr == NO_TASK {
            return false;
        }
        let c = &mut se[self.curr as usize];
        let delta = now.saturating_sub(c.exec_start);
        if delta == 0 {
            return false;
        }
        c.exec_start = now;
        c.sum_exec_runtime += delta;
        c.vruntime += calc_delta_fair(delta as i64, c.weight);
        let mut resched = false;
        if c.vruntime >= c.deadline {
            c.deadline = c.vruntime + calc_delta_fair(c.slice, c.weight);
            resched = true;
        }
        self.update_min_vruntime(se);
        resched && self.nr_running() > 1
    }

    /// `place_entity()` + `__enqueue_entity()` for a waking, migrated-in or new task. `slice` is
    /// the EEVDF base slice, or with CFS the latency period.
    pub fn enqueue(&mut self, se: &mut [Entity], t: TaskId, f: &Features, initial: bool, slice: i64) {
        if !f.EEVDF {
            return self.enqueue_cfs(se, t, initial, slice);
        }
        let v_now = self.v(se);
        let nr = self.nr_running();
        let mut load = self.avg_load;
        if self.curr != NO_TASK && self.curr_on_rq {
            load += se[self.curr as usize].weight as i64;
        }
        let p = &mut se[t as usize];
        p.slice = slice;
        let mut lag: i64 = 0;
        if f.PLACE_LAG && nr > 0 {
            let l = p.vlag as i128 * (load as i128 + p.weight as i128);
            lag = (l / (load.max(1) as i128)) as i64;
        }
        p.vruntime = v_now - lag;
        let mut vslice = calc_delta_fair(slice, p.weight);
        if f.PLACE_DEADLINE_INITIAL && initial {
            vslice /= 2;
        }
        p.deadline = p.vruntime + vslice;
        self.insert(se, t);
    }

    /// Puts a queued entity back into the tree after it stopped running (`put_prev_entity`).
    pub fn put_prev(&mut self, se: &mut [Entity], t: TaskId) {
        debug_assert_eq!(self.curr, t);
        self.curr = NO_TASK;
        self.curr_on_rq = false;
        self.stamp(&mut se[t as usize]);
        self.avg_add(&se[t as usize]);
        self.queued.push(t);
    }

    /// `rb_add_cached()` order: an entity goes after every entity already in the tree with an
    /// equal key (`__entity_less()` is a strict `<`), so ties go to the one inserted first.
    fn stamp(&mut self, se: &mut Entity) {
        self.inserted += 1;
        se.tree_seq = self.inserted;
    }

    /// `set_next_entity()`: takes `t` out of the tree as the running entity, stashing its deadline
    /// for RUN_TO_PARITY.
    pub fn set_next(&mut self, se: &mut [Entity], t: TaskId, now: Time) {
        let i = self.queued.iter().position(|&x| x == t).expect("set_next: task not queued");
        self.queued.swap_remove(i);
        self.avg_sub(&se[t as usize]);
        self.curr = t;
        self.curr_on_rq = true;
        let p = &mut se[t as usize];
        p.exec_start = now;
        p.prev_sum_exec = p.sum_exec_runtime;
        p.protect_deadline = Some(p.deadline);
    }

    /// `dequeue_entity()` for a queued (not running) task, e.g. a migration. Saves its lag.
    pub fn dequeue_queued(&mut self, se: &mut [Entity], t: TaskId, tick: i64) {
        let v = self.v(se);
        let i = self.queued.iter().position(|&x| x == t).expect("dequeue: task not queued");
        self.queued.swap_remove(i);
        self.avg_sub(&se[t as usize]);
        let p = &mut se[t as usize];
        save_lag(p, v, tick);
        p.on_rq = false;
        self.load -= p.weight;
        self.util_est = self.util_est.saturating_sub(p.util_est);
    }

    /// Dequeue of the running task when it blocks or exits (it stays `curr` until the switch).
    pub fn dequeue_curr(&mut self, se: &mut [Entity], tick: i64) {
        let t = self.curr;
        debug_assert!(t != NO_TASK && self.curr_on_rq);
        let v = self.v(se);
        self.curr_on_rq = false;
        let p = &mut se[t as usize];
        save_lag(p, v, tick);
        p.on_rq = false;
        self.load -= p.weight;
        self.util_est = self.util_est.saturating_sub(p.util_est);
    }

    /// The entity to run next: EEVDF's pick, or CFS's leftmost vruntime.
    pub fn pick(&self, se: &[Entity], f: &Features) -> TaskId {
        if f.EEVDF {
            self.pick_eevdf(se, f)
        } else {
            self.pick_cfs(se)
        }
    }

    /// `__enqueue_entity()` + accounting: inserts `t`, already placed, into the tree.
    pub(crate) fn insert(&mut self, se: &mut [Entity], t: TaskId) {
        let p = &mut se[t as usize];
        p.on_rq = true;
        self.load += p.weight;
        self.stamp(p);
        let p = &se[t as usize];
        self.avg_add(p);
        self.queued.push(t);
        self.util_est += p.util_est;
    }

    /// `pick_eevdf()`: the eligible entity with the earliest deadline; with RUN_TO_PARITY the
    /// current entity keeps the CPU while its deadline is the one it was picked with.
    pub fn pick_eevdf(&self, se: &[Entity], f: &Features) -> TaskId {
        let curr = (self.curr != NO_TASK && self.curr_on_rq).then_some(self.curr);
        if self.nr_running() == 1 {
            return curr.unwrap_or_else(|| self.queued[0]);
        }
        let curr = curr.filter(|&c| self.eligible(se, se[c as usize].vruntime));
        if let Some(c) = curr {
            let e = &se[c as usize];
            if f.RUN_TO_PARITY && e.protect_deadline == Some(e.deadline) {
                return c;
            }
        }
        let mut best = NO_TASK;
        let mut best_key = (i64::MAX, u64::MAX);
        for &t in &self.queued {
            let e = &se[t as usize];
            // The tree's order: deadline, then insertion (see `stamp`).
            if (e.deadline, e.tree_seq) < best_key && self.eligible(se, e.vruntime) {
                best = t;
                best_key = (e.deadline, e.tree_seq);
            }
        }
        let best_d = best_key.0;
        if let Some(c) = curr {
            if best == NO_TASK || se[c as usize].deadline < best_d {
                return c;
            }
        }
        if best == NO_TASK {
            // No eligible entity cannot happen with a consistent V; fall back to the leftmost.
            best = *self.queued.iter().min_by_key(|&&t| (se[t as usize].vruntime, t)).unwrap_or(&NO_TASK);
        }
        best
    }
}

/// `update_entity_lag()`: vlag = clamp(V − v, ±calc_delta_fair(max(2·slice, TICK_NSEC))).
fn save_lag(se: &mut Entity, v: i64, tick: i64) {
    let limit = calc_delta_fair((2 * se.slice).max(tick), se.weight);
    se.vlag = (v - se.vruntime).clamp(-limit, limit);
}
