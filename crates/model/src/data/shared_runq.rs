//! SHARED_RUNQ's state (David Vernet, 2023; see `shared_runq` for the mechanism): each LLC's
//! FIFO of runnable tasks, in shards with a lock each.

use super::SharedLine;
use crate::state::TaskId;
use std::collections::VecDeque;

/// CPUs per shard (`SHARED_RUNQ_SHARD_SZ` = 6 in v3).
pub const SHARD_SZ: usize = 6;

/// `struct shared_runq_shard`: a list of tasks and its lock.
#[derive(Clone, Debug, Default)]
pub struct Shard {
    pub tasks: VecDeque<TaskId>,
    /// The shard's lock and list head: one cache line.
    pub line: SharedLine,
}

/// `struct shared_runq` (one per LLC in the patch set) for the whole machine: shards per LLC and each CPU's home shard.
#[derive(Clone, Debug, Default)]
pub struct SharedRunq {
    pub shards: Vec<Shard>,
    /// `(first shard, number of shards)` of each LLC.
    pub llc_shards: Vec<(u32, u32)>,
    pub home: Vec<u32>,
    /// Which shard a task is queued on (`u32::MAX`: none).
    pub queued_on: Vec<u32>,
}

impl SharedRunq {
    pub fn new(llc_cpus: &[Vec<u32>], nr_cpus: usize, nr_tasks: usize) -> Self {
        let mut s = SharedRunq { home: vec![0; nr_cpus], queued_on: vec![u32::MAX; nr_tasks], ..Default::default() };
        for cpus in llc_cpus {
            let n = cpus.len().div_ceil(SHARD_SZ).max(1);
            let base = s.shards.len() as u32;
            for i in 0..n {
                let owner = cpus[(i * SHARD_SZ).min(cpus.len() - 1)];
                s.shards.push(Shard { tasks: VecDeque::new(), line: SharedLine::owned_by(owner) });
            }
            s.llc_shards.push((base, n as u32));
            // v3 picks a CPU's shard from its number so that SMT siblings tend to share one;
            // modelled as (cpu / 2) mod shards (research §11.1).
            for &c in cpus {
                s.home[c as usize] = base + ((c as usize / 2) % n) as u32;
            }
        }
        s
    }
}
