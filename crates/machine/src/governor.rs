//! The cpuidle governor a box's kernel runs (`/sys/devices/system/cpu/cpuidle/current_governor`):
//! part of the machine's boot configuration, like `max_cstate` and `hz`. The governors
//! themselves are modelled in `wakesim_model::cpuidle`.

use std::path::Path;

/// A cpuidle governor (`drivers/cpuidle/governors/`), or the model's first predictor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GovernorKind {
    /// `menu.c`: next timer event × correction factor, repeating-interval detection, the tick
    /// rules. What x86 and arm64 server kernels (CONFIG_NO_HZ_IDLE) run by default.
    Menu,
    /// `teo.c`: the timer-events-oriented governor (hits and intercepts per state bin).
    Teo,
    /// `haltpoll.c`: a KVM guest's governor with the cpuidle-haltpoll driver (poll, then halt,
    /// with an adaptive poll window).
    Haltpoll,
    /// The model's first predictor, kept as a labelled option: the deepest state whose target
    /// residency fits an EWMA (1/8) of the CPU's recent idle periods; the tick always stops.
    /// Not a kernel governor.
    Ewma,
}

/// The governor a machine runs unless its file or `--governor` says otherwise.
pub const DEFAULT_GOVERNOR: GovernorKind = GovernorKind::Menu;

impl GovernorKind {
    pub const ALL: [GovernorKind; 4] = [GovernorKind::Menu, GovernorKind::Teo, GovernorKind::Haltpoll, GovernorKind::Ewma];
    pub const NAMES: &'static [&'static str] = &["menu", "teo", "haltpoll", "ewma"];

    pub fn name(self) -> &'static str {
        match self {
            GovernorKind::Menu => "menu",
            GovernorKind::Teo => "teo",
            GovernorKind::Haltpoll => "haltpoll",
            GovernorKind::Ewma => "ewma",
        }
    }
}

impl std::fmt::Display for GovernorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for GovernorKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        GovernorKind::ALL
            .into_iter()
            .find(|g| g.name() == s)
            .ok_or_else(|| format!("unknown cpuidle governor '{s}' (known: {})", GovernorKind::NAMES.join(", ")))
    }
}

/// The governor of the kernel whose sysfs is at `root` (normally `/sys`):
/// `devices/system/cpu/cpuidle/current_governor_ro`, else `current_governor`. `None` when
/// neither is readable; `Err(name)` for a governor the model does not have (`ladder`).
pub fn running_governor(root: &Path) -> Option<Result<GovernorKind, String>> {
    let dir = root.join("devices/system/cpu/cpuidle");
    let text = ["current_governor_ro", "current_governor"]
        .iter()
        .find_map(|f| std::fs::read_to_string(dir.join(f)).ok())?;
    let name = text.trim();
    Some(name.parse().map_err(|_| name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_named() {
        for g in GovernorKind::ALL {
            assert_eq!(g.name().parse::<GovernorKind>(), Ok(g));
        }
        let e = "ladder".parse::<GovernorKind>().unwrap_err();
        assert!(e.contains("'ladder'") && e.contains("menu, teo, haltpoll, ewma"), "{e}");
    }

    #[test]
    fn the_running_governor_is_read_from_sysfs() {
        let root = std::env::temp_dir().join(format!("wakesim-governor-{}", std::process::id()));
        let dir = root.join("devices/system/cpu/cpuidle");
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(running_governor(&root), None);
        std::fs::write(dir.join("current_governor"), "teo\n").unwrap();
        assert_eq!(running_governor(&root), Some(Ok(GovernorKind::Teo)));
        // The read-only file wins (it is what a kernel without cpuidle_sysfs_switch offers).
        std::fs::write(dir.join("current_governor_ro"), "haltpoll\n").unwrap();
        assert_eq!(running_governor(&root), Some(Ok(GovernorKind::Haltpoll)));
        std::fs::write(dir.join("current_governor_ro"), "ladder\n").unwrap();
        assert_eq!(running_governor(&root), Some(Err("ladder".to_string())));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
