//! SIS_FILTER's state (Abel Wu, 2022; see `sis_filter` for the mechanism).

use super::SharedLine;
use wakesim_machine::CpuSet;

/// SIS_FILTER, per LLC (a field of `sd_llc_shared` in the patch set): the CPUs believed idle,
/// at most one per core (starts as the whole LLC), and the shared line the mask lives on.
#[derive(Clone, Debug)]
pub struct SisFilter {
    pub mask: CpuSet,
    pub line: SharedLine,
}

impl SisFilter {
    /// The filter of an LLC spanning `span`, its line in `owner`'s cache.
    pub fn new(span: CpuSet, owner: u32) -> SisFilter {
        SisFilter { mask: span, line: SharedLine::owned_by(owner) }
    }
}

/// SIS_FILTER, per CPU (a field of `struct rq` in the patch set).
#[derive(Clone, Copy, Debug, Default)]
pub struct SisFilterCpu {
    /// The next scan targeting this CPU also probes SMT siblings (after a failure).
    pub scan_sibling: bool,
}
