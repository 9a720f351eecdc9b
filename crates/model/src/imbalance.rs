//! How much one balance pass should move, and in what unit: the checks of
//! `find_busiest_group()` once the busiest group is known, and `calculate_imbalance()`
//! (kernel/sched/fair.c as of v6.0), for the group types the model classifies (has_spare,
//! fully_busy, overloaded; no misfit, asym-packing, imbalanced or v6.6's smt_balance groups).
//! v6.6's `sibling_imbalance()` gives the same count between groups of equal core counts (every
//! preset's) but none to a busy CPU; the model keeps the v6.0 form on every profile.

use crate::balance::{GroupStats, GroupType, IDLE_BUSY};
use crate::find_idlest::adjust_numa_imbalance;

/// `enum migration_type`: what `env->imbalance` counts and `detach_tasks()` subtracts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrationType {
    /// `migrate_load`: `task_h_load()` units, between overloaded groups.
    Load,
    /// `migrate_util`: utilisation, to fill an idle group's spare capacity across LLCs.
    Util,
    /// `migrate_task`: a number of tasks, to even out running tasks or idle CPUs.
    Task,
}

/// The domain's totals (`struct sd_lb_stats`: total_load, total_capacity).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SdStats {
    pub load: u64,
    pub capacity: u64,
}

/// What `calculate_imbalance()` reads of the domain and the pass.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ImbalanceEnv {
    /// `sd->imbalance_pct`.
    pub pct: u64,
    /// The pass's idle type (`IDLE_*` of balance.rs).
    pub idle: u8,
    /// `sds->prefer_sibling`: the child domain has SD_PREFER_SIBLING.
    pub prefer_sibling: bool,
    /// SD_SHARE_LLC (SD_SHARE_PKG_RESOURCES before v6.10) or SMT.
    pub share_llc: bool,
    /// `sd->imb_numa_nr` on an SD_NUMA level with NUMA_IMBALANCE on.
    pub numa_imb_nr: Option<u64>,
}

/// `avg_load`, which `update_sg_lb_stats()` computes for overloaded groups only (0 otherwise).
fn avg_load(g: &GroupStats) -> u64 {
    if g.kind == GroupType::Overloaded {
        g.load * 1024 / g.capacity.max(1)
    } else {
        0
    }
}

/// From the busiest group on: `None` when the kernel goes to out_balanced (or computes a zero
/// imbalance), else the migration type and `env->imbalance`.
pub(crate) fn calculate_imbalance(local: &GroupStats, b: &GroupStats, sds: SdStats, env: &ImbalanceEnv) -> Option<(MigrationType, u64)> {
    // find_busiest_group(): a local group busier than the busiest pulls nothing.
    if local.kind > b.kind {
        return None;
    }
    let sd_avg = sds.load * 1024 / sds.capacity.max(1);
    if local.kind == GroupType::Overloaded {
        let (l, bb) = (avg_load(local), avg_load(b));
        if l >= bb || l >= sd_avg || 100 * bb <= env.pct * l {
            return None;
        }
    }
    // "Try to move all excess tasks to a sibling domain of the busiest group's child domain."
    let force = env.prefer_sibling && local.kind == GroupType::HasSpare && b.nr > local.nr + 1;
    if !force && b.kind != GroupType::Overloaded {
        // A busy CPU leaves an even spread to idle CPUs; a difference of one idle CPU is
        // balanced; a busiest group with one task has nothing waiting.
        if env.idle == IDLE_BUSY || (b.weight > 1 && local.idle_cpus <= b.idle_cpus + 1) || b.nr == 1 {
            return None;
        }
    }
    // calculate_imbalance().
    let (mt, imb) = if local.kind == GroupType::HasSpare {
        if b.kind > GroupType::FullyBusy && !env.share_llc {
            // Fill the local group's spare capacity; an idle CPU whose group shows no spare
            // (utilisation caught up with capacity) still pulls one waiting task.
            let imb = local.capacity.max(local.util) - local.util;
            if env.idle != IDLE_BUSY && imb == 0 {
                (MigrationType::Task, 1)
            } else {
                (MigrationType::Util, imb)
            }
        } else {
            let mut imb = if b.weight == 1 || env.prefer_sibling {
                b.nr.saturating_sub(local.nr)
            } else {
                local.idle_cpus.saturating_sub(b.idle_cpus)
            };
            if let Some(nr) = env.numa_imb_nr {
                imb = adjust_numa_imbalance(imb, local.nr + 1, nr);
            }
            // Number of tasks to move to restore balance.
            (MigrationType::Task, imb >> 1)
        }
    } else {
        let b_avg = avg_load(b);
        let mut l_avg = avg_load(local);
        if local.kind < GroupType::Overloaded {
            // Local will become overloaded: its avg_load is needed now.
            l_avg = local.load * 1024 / local.capacity.max(1);
            if l_avg >= b_avg || l_avg >= sd_avg {
                return None;
            }
        }
        let imb = (b_avg.saturating_sub(sd_avg) * b.capacity).min(sd_avg.saturating_sub(l_avg) * local.capacity) / 1024;
        (MigrationType::Load, imb)
    };
    (imb > 0).then_some((mt, imb))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::balance::{IDLE_IDLE, IDLE_NEWLY};

    fn group(nr: u64, idle_cpus: u64, weight: u64, util: u64, kind: GroupType) -> GroupStats {
        GroupStats { nr, idle_cpus, load: nr * 1024, util, runnable: util, capacity: weight * 1024, weight, overloaded_cpu: nr > weight, kind }
    }

    fn env(idle: u8, prefer_sibling: bool, share_llc: bool, numa: Option<u64>) -> ImbalanceEnv {
        ImbalanceEnv { pct: 117, idle, prefer_sibling, share_llc, numa_imb_nr: numa }
    }

    fn sds(a: &GroupStats, b: &GroupStats) -> SdStats {
        SdStats { load: a.load + b.load, capacity: a.capacity + b.capacity }
    }

    #[test]
    fn an_idle_node_fills_its_spare_capacity_from_an_overloaded_one_by_utilisation() {
        // Two 48-CPU nodes: all the work on one (SD_NUMA, no shared LLC).
        let local = group(0, 48, 48, 100, GroupType::HasSpare);
        let busy = group(60, 0, 48, 48 * 1024, GroupType::Overloaded);
        let r = calculate_imbalance(&local, &busy, sds(&local, &busy), &env(IDLE_IDLE, true, false, Some(12)));
        assert_eq!(r, Some((MigrationType::Util, 48 * 1024 - 100)));
    }

    #[test]
    fn inside_an_llc_the_excess_tasks_are_halved_onto_a_spare_sibling_group() {
        let local = group(0, 2, 2, 0, GroupType::HasSpare);
        let busy = group(4, 0, 2, 2048, GroupType::Overloaded);
        let r = calculate_imbalance(&local, &busy, sds(&local, &busy), &env(IDLE_IDLE, true, true, None));
        assert_eq!(r, Some((MigrationType::Task, 2)));
        // One task more than local is balanced (1 >> 1 == 0), unless the group is overloaded.
        let busy = group(1, 1, 2, 1024, GroupType::HasSpare);
        assert_eq!(calculate_imbalance(&local, &busy, sds(&local, &busy), &env(IDLE_NEWLY, true, true, None)), None);
    }

    #[test]
    fn a_busy_cpu_does_not_pull_from_a_group_that_is_not_overloaded() {
        let local = group(1, 1, 2, 1024, GroupType::HasSpare);
        let busy = group(2, 0, 2, 2048, GroupType::FullyBusy);
        assert_eq!(calculate_imbalance(&local, &busy, sds(&local, &busy), &env(IDLE_BUSY, false, true, None)), None);
        // Idle, it evens out idle CPUs only when they differ by more than one.
        assert_eq!(calculate_imbalance(&local, &busy, sds(&local, &busy), &env(IDLE_IDLE, false, true, None)), None);
        let local = group(0, 2, 2, 0, GroupType::HasSpare);
        assert_eq!(calculate_imbalance(&local, &busy, sds(&local, &busy), &env(IDLE_IDLE, false, true, None)), Some((MigrationType::Task, 1)));
    }

    #[test]
    fn between_overloaded_groups_load_moves_toward_the_domain_average() {
        let local = group(3, 0, 2, 2048, GroupType::Overloaded);
        let busy = group(6, 0, 2, 2048, GroupType::Overloaded);
        let (mt, imb) = calculate_imbalance(&local, &busy, sds(&local, &busy), &env(IDLE_BUSY, true, true, None)).unwrap();
        // avg_load 1536 and 3072 per 1024 of capacity around an average of 2304: 768 × 2.
        assert_eq!((mt, imb), (MigrationType::Load, 1536));
        // Within imbalance_pct of each other: balanced.
        let busy = group(3, 0, 2, 2048, GroupType::Overloaded);
        assert_eq!(calculate_imbalance(&local, &busy, sds(&local, &busy), &env(IDLE_BUSY, true, true, None)), None);
    }
}
