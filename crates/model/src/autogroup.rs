//! The task group a benchmark runs in (kernel/sched/autogroup.c, `CONFIG_SCHED_AUTOGROUP`).
//!
//! Distribution kernels (Debian, Ubuntu, Fedora, RHEL) build with `CONFIG_SCHED_AUTOGROUP=y`
//! and boot with `kernel.sched_autogroup_enabled = 1`: `sched_autogroup_create_attach()` at
//! `setsid()` puts every new session, so a benchmark started from a login shell, into a task
//! group of its own (`/proc/PID/autogroup` names it; the development VM's shell is in
//! `/autogroup-591`). A task in a cgroup with the cpu controller gets that group instead
//! (`task_wants_autogroup()`): either way the benchmark is not in the root task group, so its
//! enqueues, dequeues and migrations update the group's load (`update_tg_load_avg()` on the
//! shared `tg->load_avg`, see `enqueue`). `TaskGroups::Root` is a benchmark run with autogroup
//! off (`noautogroup`) outside any cpu cgroup, as the model ran before.

use std::str::FromStr;

/// The group id of the session's autogroup; task files name their own groups from 1 up.
pub const AUTOGROUP: u32 = u32::MAX;

/// Where the workload's tasks without a group of their own run (`--cgroup`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TaskGroups {
    /// One autogroup for the whole benchmark, as a distribution kernel gives a session.
    #[default]
    Autogroup,
    /// The root task group.
    Root,
}

impl TaskGroups {
    pub fn name(self) -> &'static str {
        match self {
            TaskGroups::Autogroup => "autogroup",
            TaskGroups::Root => "root",
        }
    }

    /// The group a workload task of group `group` (0: none of its own) runs in.
    pub fn group_of(self, group: u32) -> u32 {
        match (self, group) {
            (TaskGroups::Autogroup, 0) => AUTOGROUP,
            _ => group,
        }
    }
}

impl FromStr for TaskGroups {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "autogroup" => Ok(TaskGroups::Autogroup),
            "root" => Ok(TaskGroups::Root),
            _ => Err(format!("unknown task-group setup '{s}' (known: autogroup, root)")),
        }
    }
}
