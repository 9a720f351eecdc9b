//! What `wakesim replay` prints, and its JSON document.

use super::state::{Counts, WakeCount};
use serde::Serialize;
use wakesim_stats::pct;

fn wake(name: &str, w: WakeCount) -> String {
    format!(
        "{name} {} (preempt: kernel {}, model {}, agree {})",
        w.n,
        pct(w.kernel_preempt, w.n),
        pct(w.model_preempt, w.n),
        pct(w.agree, w.n)
    )
}

pub fn text(c: &Counts, comm: &str, shown: &[String]) -> String {
    let mut s = format!(
        "replay: {} CPUs, {} tasks ({comm}), {} events, {:.2} s of trace\n",
        c.cpus, c.tasks, c.events, c.trace_seconds
    );
    s += &format!(
        "picks          {} of {} agree ({})",
        c.picks_agree,
        c.picks,
        pct(c.picks_agree, c.picks)
    );
    if c.picks_unchecked > 0 {
        s += &format!(
            "   {} more to tasks not yet seen (not checked)",
            c.picks_unchecked
        );
    }
    s += "\n";
    let local = WakeCount::merged(c.wake_local_placed, c.wake_local_delayed);
    let remote = WakeCount::merged(c.wake_remote_placed, c.wake_remote_delayed);
    s += &format!(
        "wakeups        {} | {} | delayed requeues {}\n",
        wake("local", local),
        wake("remote", remote),
        c.delayed_requeues
    );
    s += &format!(
        "  by wakee     {} | {}\n               {} | {}\n",
        wake("local placed", c.wake_local_placed),
        wake("local delayed", c.wake_local_delayed),
        wake("remote placed", c.wake_remote_placed),
        wake("remote delayed", c.wake_remote_delayed)
    );
    s += &format!(
        "sleeps         blocked {} (delayed {})   load-balance moves {}\n",
        c.blocked,
        pct(c.blocked_delayed, c.blocked),
        c.load_balance_moves
    );
    let odd = [
        ("implicit switch-ins", c.implicit_switch_ins),
        ("running but not curr", c.running_not_curr),
        ("runtime of a non-curr task", c.runtime_not_curr),
        ("next queued on another CPU", c.next_on_other_cpu),
        ("wakeups of queued tasks", c.wakeup_of_queued),
        ("delayed tasks migrated", c.migrate_delayed),
        ("malformed lines skipped", c.malformed_lines),
    ];
    let odd: Vec<String> = odd
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    if !odd.is_empty() {
        s += &format!("trace vs state {}\n", odd.join(", "));
    }
    for (k, d) in shown.iter().enumerate() {
        s += &format!("\ndisagreement {}: {d}", k + 1);
    }
    s
}

#[derive(Serialize)]
pub struct Json<'a> {
    pub wakesim_version: &'static str,
    pub file: &'a str,
    pub comm: &'a str,
    pub slice_ns: u64,
    pub hz: u64,
    pub pick_agreement: f64,
    pub counts: &'a Counts,
}
