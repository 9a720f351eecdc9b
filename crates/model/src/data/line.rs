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

/// A line every CPU reads and some write (`tg->load_avg`): a [`SharedLine`] for the writes,
/// plus which version of it each CPU's cache holds, so that a read from a current copy is free.
#[derive(Clone, Debug, Default)]
pub struct ReadMostlyLine {
    pub line: SharedLine,
    /// Writes so far, and per CPU the version its copy holds.
    pub version: u64,
    pub seen: Vec<u64>,
    /// Whether a read has fetched the line since its last write: it is shared, and further
    /// readers get copies without holding it.
    pub shared: bool,
    /// Reads that missed (the reader's copy was stale) and their total wait.
    pub read_misses: u64,
    pub read_wait: Time,
}

impl ReadMostlyLine {
    /// A line on a machine of `cpus` CPUs, no copy of it stale.
    pub fn new(cpus: usize) -> ReadMostlyLine {
        ReadMostlyLine { seen: vec![0; cpus], ..Default::default() }
    }

    /// Whether `cpu`'s copy is current (no other CPU wrote since it last read or wrote).
    #[inline]
    pub fn is_current(&self, cpu: usize) -> bool {
        self.seen[cpu] == self.version
    }

    /// `cpu` writes the line ([`SharedLine::take`]): every other CPU's copy goes stale.
    #[inline]
    pub fn write(&mut self, cpu: usize, now: Time, transfer: Time, hold: Time) -> Time {
        let cost = self.line.take(cpu as u32, now, transfer, hold);
        self.version += 1;
        self.seen[cpu] = self.version;
        self.shared = false;
        cost
    }

    /// A read at `now` by `cpu`, whose copy is stale, pulling the line for `transfer` ns: it
    /// waits for the writes already queued on the line (each holds it exclusively). The first
    /// read after a write also holds it for its transfer (the writer's modified copy is snooped
    /// and downgraded to shared, a transaction the line's home serialises with the writes);
    /// later readers get shared copies side by side without holding it. Returns the CPU time it
    /// costs the reader from `now` (wait + transfer). Charges nothing.
    #[inline]
    pub fn read(&mut self, cpu: usize, now: Time, transfer: Time) -> Time {
        self.seen[cpu] = self.version;
        let start = now.max(self.line.free_at);
        self.read_misses += 1;
        self.read_wait += start - now;
        let done = start + transfer;
        if !self.shared {
            self.shared = true;
            self.line.free_at = done;
        }
        done - now
    }
}
