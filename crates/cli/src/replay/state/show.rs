//! `--show`: a disagreement with the replay's view of that cfs_rq.

use super::*;

impl<'a> Replay<'a> {
    // ---- --show -------------------------------------------------------------------------------

    pub(super) fn describe(
        &self,
        cpu: usize,
        prev: u32,
        state: &str,
        next: u32,
        pick: TaskId,
    ) -> String {
        let l = self.cpus[cpu].hist.back().cloned().unwrap_or_default();
        let rq = &self.cpus[cpu].rq;
        let v = rq.v(&self.se);
        let pick_pid = if pick == NO_TASK {
            "none".to_string()
        } else {
            self.pids[pick as usize].to_string()
        };
        let mut s = format!("cpu {cpu}: prev {prev} ({state}) -> kernel picked {next}, model picked {pick_pid}\n  at {l}\n");
        let mut ents: Vec<TaskId> = rq.queued.clone();
        if rq.curr != NO_TASK && rq.curr_on_rq {
            ents.push(rq.curr);
        }
        ents.sort_by_key(|&t| {
            (
                self.se[t as usize].deadline,
                self.se[t as usize].tree_seq,
            )
        });
        s += "  the replay's cfs_rq (by deadline):\n       pid        v-V        d-V\n";
        for t in ents {
            let se = &self.se[t as usize];
            let pid = self.pids[t as usize];
            let mut tags = Vec::new();
            if rq.eligible(&self.se, se.vruntime) {
                tags.push("eligible");
            }
            if self.tasks[t as usize].delayed {
                tags.push("delayed");
            }
            if t == rq.curr {
                tags.push("curr");
            }
            if pid == next {
                tags.push("<- kernel");
            }
            if t == pick {
                tags.push("<- model");
            }
            s += &format!(
                "  {pid:>8} {:>10} {:>10}  {}\n",
                se.vruntime - v,
                se.deadline - v,
                tags.join(" ")
            );
        }
        s += &format!("  last events on cpu {cpu}:\n");
        for h in &self.cpus[cpu].hist {
            s += &format!("    {h}\n");
        }
        s
    }
}
