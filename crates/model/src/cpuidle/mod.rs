//! cpuidle governors (drivers/cpuidle/governors/): which idle state a CPU enters and whether it
//! stops its tick. One module per governor, named after it.

/// The governor a kernel runs (`/sys/devices/system/cpu/cpuidle/current_governor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GovernorKind {
    /// The model's first governor, kept as a labelled option: the deepest state whose target
    /// residency fits an EWMA (1/8) of the CPU's recent idle periods. Not a kernel governor.
    Ewma,
}

impl GovernorKind {
    pub const NAMES: &'static [&'static str] = &["ewma"];

    pub fn name(self) -> &'static str {
        match self {
            GovernorKind::Ewma => "ewma",
        }
    }
}

impl std::str::FromStr for GovernorKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ewma" => Ok(GovernorKind::Ewma),
            _ => Err(format!("unknown cpuidle governor '{s}' (known: {})", GovernorKind::NAMES.join(", "))),
        }
    }
}
