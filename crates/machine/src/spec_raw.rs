//! The machine file as TOML deserializes it: every key optional and spanned, so that
//! validation errors can name the line. Unknown keys are errors (`deny_unknown_fields`).

use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSpec {
    pub name: Option<Spanned<String>>,
    pub description: Option<String>,
    pub arch: Option<Spanned<String>>,
    pub cost_profile: Option<Spanned<String>>,
    pub node_reclaim_distance: Option<Spanned<u32>>,
    pub max_cstate: Option<Spanned<u32>>,
    pub cpuidle_governor: Option<Spanned<String>>,
    pub hz: Option<Spanned<u64>>,
    // Regular shape.
    pub sockets: Option<Spanned<u32>>,
    pub nodes_per_socket: Option<Spanned<u32>>,
    pub llcs_per_node: Option<Spanned<u32>>,
    pub clusters_per_llc: Option<Spanned<u32>>,
    pub cores_per_cluster: Option<Spanned<u32>>,
    pub cores_per_llc: Option<Spanned<u32>>,
    pub threads_per_core: Option<Spanned<u32>>,
    pub llc_is_cluster: Option<Spanned<bool>>,
    // Distances.
    pub numa_distance: Option<Spanned<Vec<Vec<u32>>>>,
    pub socket_distance: Option<Spanned<u32>>,
    pub sibling_node_distance: Option<Spanned<u32>>,
    // Explicit shape.
    pub cpu: Option<Vec<Spanned<RawCpu>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCpu {
    pub id: Option<u32>,
    pub core: u32,
    pub cluster: Option<u32>,
    pub llc: u32,
    pub package: u32,
    pub node: Option<u32>,
}
