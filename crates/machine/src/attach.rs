//! `Machine::from_topology`: domains plus the per-CPU pointers of `update_top_cache_domain()`.

use crate::{
    build_domains_with, Arch, CpuSet, DomainOptions, Machine, MachineError, SdFlags, Topology,
};

impl Machine {
    /// Builds a machine from a topology with default [`DomainOptions`]
    /// (`node_reclaim_distance` = 30).
    pub fn from_topology(
        name: impl Into<String>,
        description: impl Into<String>,
        arch: Arch,
        cost_profile: impl Into<String>,
        topo: Topology,
    ) -> Result<Machine, MachineError> {
        Self::from_topology_with(
            name,
            description,
            arch,
            cost_profile,
            topo,
            &DomainOptions::default(),
        )
    }

    /// Validates `topo`, builds its sched domains ([`build_domains_with`]) and, per CPU, what
    /// `update_top_cache_domain()` caches:
    /// * `sd_llc` = the highest domain with SD_SHARE_LLC (`highest_flag_domain()`, which stops
    ///   at the first level without it since SD_SHARE_LLC is SDF_SHARED_CHILD);
    /// * `sd_llc_size` = its weight (1 if none), `sd_llc_id` = its first CPU (the CPU if none);
    /// * `sd_share_id` = the first CPU of the lowest SD_CLUSTER domain, else the LLC id.
    pub fn from_topology_with(
        name: impl Into<String>,
        description: impl Into<String>,
        arch: Arch,
        cost_profile: impl Into<String>,
        topo: Topology,
        opts: &DomainOptions,
    ) -> Result<Machine, MachineError> {
        topo.validate()?;
        let domains = build_domains_with(&topo, opts);
        let n = topo.cpus.len();
        let mut m = Machine {
            name: name.into(),
            description: description.into(),
            arch,
            cost_profile: cost_profile.into(),
            max_cstate: None,
            cpuidle_governor: crate::DEFAULT_GOVERNOR,
            hz: None,
            base_slice: None,
            topo,
            domains,
            sd_llc: vec![None; n],
            llc_size: vec![1; n],
            llc_id: (0..n as u32).collect(),
            share_id: (0..n as u32).collect(),
            llc_span: (0..n).map(|c| CpuSet::from_cpus([c])).collect(),
        };
        for cpu in 0..n {
            let doms = &m.domains[cpu];
            let llc = doms
                .iter()
                .take_while(|sd| sd.has(SdFlags::SHARE_LLC))
                .count();
            if llc > 0 {
                let sd = &doms[llc - 1];
                m.sd_llc[cpu] = Some((llc - 1) as u8);
                m.llc_size[cpu] = sd.span_weight;
                m.llc_id[cpu] = sd.span.first().unwrap_or(cpu) as u32;
                m.llc_span[cpu] = sd.span.clone();
            }
            m.share_id[cpu] = match doms.iter().find(|sd| sd.has(SdFlags::CLUSTER)) {
                Some(sd) => sd.span.first().unwrap_or(cpu) as u32,
                None => m.llc_id[cpu],
            };
        }
        Ok(m)
    }

    pub fn nr_cores(&self) -> usize {
        self.topo.nr_cores()
    }

    pub fn nr_llcs(&self) -> usize {
        self.topo.nr_llcs()
    }

    /// Names of CPU `cpu`'s domain levels bottom-up, e.g. `["SMT", "MC", "NUMA"]`.
    pub fn level_names(&self, cpu: usize) -> Vec<String> {
        self.domains[cpu].iter().map(|sd| sd.level.name()).collect()
    }

    /// The lowest SD_NUMA domain index of `cpu` (`sd_numa`), if any.
    pub fn sd_numa(&self, cpu: usize) -> Option<usize> {
        self.domains[cpu]
            .iter()
            .position(|sd| sd.has(SdFlags::NUMA))
    }
}
