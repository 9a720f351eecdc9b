//! What `build_sched_domains()` does to each CPU's full domain chain before attaching it:
//! the `imb_numa_nr` computation, then `cpu_attach_domain()`'s removal of degenerate levels.

use crate::levels::TopologyLevel;
use crate::{SchedDomain, SdFlags};

/// Flags with the `SDF_NEEDS_GROUPS` meta flag (include/linux/sched/sd_flags.h): every flag but
/// SD_WAKE_AFFINE. Such a flag only matters in a domain with at least two groups.
const SD_DEGENERATE_GROUPS_MASK: u32 = !SdFlags::WAKE_AFFINE;

/// The "allowed NUMA imbalance" loop of `build_sched_domains()` (v5.18+, Mel Gorman's
/// "Adjust the allowed NUMA imbalance when SD_NUMA spans multiple LLCs"), on the chain as built,
/// i.e. before degenerate levels are removed:
///
/// at the first level above the LLC (`!(sd->flags & SD_SHARE_LLC) && child has it`):
/// `nr_llcs = sd->span_weight / child->span_weight`; `imb = nr_llcs == 1 ? span_weight >> 3 :
/// nr_llcs`, at least 1; `imb_span` = the span of the first SD_NUMA parent (else this level's).
/// Every other level gets `imb * max(1, span_weight / imb_span)` (0 below the LLC).
pub(crate) fn set_imb_numa_nr(chain: &mut [(usize, SchedDomain)]) {
    let mut imb = 0u32;
    let mut imb_span = 1u32;
    for k in 0..chain.len() {
        let sd = &chain[k].1;
        let child_llc = k > 0 && chain[k - 1].1.has(SdFlags::SHARE_LLC);
        if !sd.has(SdFlags::SHARE_LLC) && child_llc {
            let child_w = chain[k - 1].1.span_weight.max(1);
            let nr_llcs = sd.span_weight / child_w;
            imb = if nr_llcs == 1 {
                sd.span_weight >> 3
            } else {
                nr_llcs
            }
            .max(1);
            imb_span = chain[k + 1..]
                .iter()
                .find(|(_, p)| p.has(SdFlags::NUMA))
                .map_or(sd.span_weight, |(_, p)| p.span_weight)
                .max(1);
            chain[k].1.imb_numa_nr = imb;
        } else {
            let factor = (sd.span_weight / imb_span).max(1);
            chain[k].1.imb_numa_nr = imb * factor;
        }
    }
}

/// Whether the domain at level index `t` of `cpu` has more than one group: its first group is
/// the (pre-degenerate) child's span, so it has one group exactly when that equals its span.
fn multi_group(levels: &[TopologyLevel], t: usize, cpu: usize) -> bool {
    if t == 0 {
        levels[0].spans[cpu].weight() > 1
    } else {
        levels[t - 1].spans[cpu] != levels[t].spans[cpu]
    }
}

/// `sd_degenerate()`.
fn sd_degenerate(sd: &SchedDomain, multi: bool) -> bool {
    if sd.span_weight == 1 {
        return true;
    }
    if sd.flags.0 & SD_DEGENERATE_GROUPS_MASK != 0 && multi {
        return false;
    }
    !sd.has(SdFlags::WAKE_AFFINE)
}

/// `sd_parent_degenerate()`: the parent is redundant if degenerate itself, or if it spans the
/// same CPUs and adds no flag the child lacks (group flags don't count with a single group).
fn sd_parent_degenerate(child: &SchedDomain, parent: &SchedDomain, parent_multi: bool) -> bool {
    if sd_degenerate(parent, parent_multi) {
        return true;
    }
    if child.span != parent.span {
        return false;
    }
    let mut pflags = parent.flags.0;
    if !parent_multi {
        pflags &= !SD_DEGENERATE_GROUPS_MASK;
    }
    !child.flags.0 & pflags == 0
}

/// `cpu_attach_domain()`'s pruning: walk up removing degenerate parents (a removed parent's
/// SD_PREFER_SIBLING moves down to the child), then drop the base domain if it is degenerate.
pub(crate) fn attach(chain: &mut Vec<(usize, SchedDomain)>, levels: &[TopologyLevel], cpu: usize) {
    let mut k = 0;
    while k + 1 < chain.len() {
        let pt = chain[k + 1].0;
        if sd_parent_degenerate(&chain[k].1, &chain[k + 1].1, multi_group(levels, pt, cpu)) {
            let (_, parent) = chain.remove(k + 1);
            if parent.has(SdFlags::PREFER_SIBLING) {
                chain[k].1.flags.0 |= SdFlags::PREFER_SIBLING;
            }
        } else {
            k += 1;
        }
    }
    if let Some((t, base)) = chain.first() {
        if sd_degenerate(base, multi_group(levels, *t, cpu)) {
            chain.remove(0);
        }
    }
}
