//! A shared cache line (or a group of lines that move together: a lock and the state it
//! guards): where it is and until when it is busy. See `lines` for the mechanism that charges
//! the CPUs that take it.

use wakesim_engine::Time;

/// A shared cache line: its owner CPU (the last writer, whose cache holds it), the time until
/// which a writer holds it, and its access statistics. Models no one kernel structure: any
/// line written with an atomic RMW or under a short lock (`tg->load_avg`, a SHARED_RUNQ
/// shard's lock, the SIS_FILTER mask, a pipe's `pipe->mutex` and ring, a futex hash bucket).
#[derive(Clone, Copy, Debug, Default)]
pub struct SharedLine {
    pub owner: u32,
    pub free_at: Time,
    /// Accesses, accesses that had to wait, and the total wait.
    pub accesses: u64,
    pub contended: u64,
    pub wait: Time,
}

impl SharedLine {
    /// A line that starts in `owner`'s cache.
    pub fn owned_by(owner: u32) -> SharedLine {
        SharedLine { owner, ..Default::default() }
    }

    /// `cpu` takes the line exclusively at `now` for `hold` ns, paying `transfer` to pull it
    /// from its owner (the caller prices the transfer from `self.owner`): it waits until the
    /// line is free, then becomes its owner. Returns the CPU time this costs `cpu` from `now`
    /// (wait + transfer + hold). Charges nothing: the caller decides who pays.
    #[inline]
    pub fn take(&mut self, cpu: u32, now: Time, transfer: Time, hold: Time) -> Time {
        let start = now.max(self.free_at);
        self.accesses += 1;
        if start > now {
            self.contended += 1;
            self.wait += start - now;
        }
        let done = start + transfer + hold;
        self.free_at = done;
        self.owner = cpu;
        done - now
    }
}
