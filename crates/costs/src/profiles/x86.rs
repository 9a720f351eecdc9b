//! x86 profiles: the shared kernel code-path costs, `generic` and `skx`.

use crate::{CostProfile, IdleState, LineCosts};

/// `TICK_NSEC / 16` at HZ=1000: `CPUIDLE_POLL_MAX` in `drivers/cpuidle/cpuidle.c`, the cap of
/// `cpuidle_poll_time()` (Mel Gorman, LKML reply to Tianchen Ding, May 2022: "between 10 and
/// 62 microseconds for HZ=1000").
pub(crate) const CPUIDLE_POLL_MAX_HZ1000: u64 = 62_500;

/// The cpuidle POLL state (`drivers/cpuidle/poll_state.c`): exit latency 0, target residency 0,
/// `CPUIDLE_FLAG_POLLING`.
pub(crate) fn poll_state() -> IdleState {
    IdleState {
        name: "POLL".into(),
        exit_latency: 0,
        target_residency: 0,
        polling: true,
    }
}

/// IPI delivery by distance on bare-metal x86, \[EST\] from send→handler totals built from their
/// components (no published bare-metal figure for these CPUs; `docs/model.md`, "Sources") minus
/// the sender (`ipi_send` 200), the receiver's entry/exit (`irq_entry_exit` 500)
/// and the CSD flush (`csd_flush` 150), i.e. delivery = total − 850 ns.
/// Upper bounds from guests, whose IPIs add a VM exit and a posted interrupt: Norov's IPI
/// benchmark on a 2-socket Skylake-SP, 80-vCPU guest, 2.24 µs send→handler (Wanpeng Li, commit
/// 4180bf1b655a); two pinned vCPUs polling in idle, 1.45 µs (Zeng Guang, IPIv v7 cover letter,
/// 2022; the target's distance is not given in either). The in-LLC total here, 0.95 µs, sits
/// below both. Used by `generic` and the AMD profiles; Skylake-SP has its measured figure
/// ([`skx_ipi_delivery`]). The one bare-metal AMD matrix found, a single-socket EPYC 7281
/// (Zen1 Naples: four dies, two CCXs each; khale/ipi-heatmaps `machines/tinker3`), does not
/// depend on distance either: 1,480 cycles one way between every pair (705 ns at a 2.1 GHz
/// TSC), where these figures give 300 ns in a CCX and 600 ns across. Zen1 is not the presets'
/// Zen3/Zen4, so these stay \[EST\].
pub(crate) fn x86_ipi_delivery() -> LineCosts {
    LineCosts {
        local: 0,         // [EST] self-IPIs are not used on the wakeup path (local work runs inline)
        smt: 100,         // [EST] SMT/same LLC send→handler 0.7–1.2 µs, midpoint 0.95 µs − 850
        cluster: 100,     // same as SMT/LLC (x86 has no cluster level on these parts)
        llc: 100,         // [EST] same LLC 0.7–1.2 µs, midpoint 0.95 µs − 850
        cross_llc: 400,   // [EST] cross LLC (AMD CCX) 1.0–1.5 µs, midpoint 1.25 µs − 850
        cross_node: 1150, // [EST] cross socket 1.5–2.5 µs, midpoint 2.0 µs − 850
    }
}

/// The shared kernel code-path costs and the neutral x86 hardware figures (`generic`).
///
/// Split of the same-CPU pipe ping-pong, **3.7 µs per round trip** (Andrei Vagin's WF_SYNC
/// patch on LKML, which moved the pair onto one CPU: 8.8 → 3.7 µs/op; perf bench sched pipe
/// defaults to processes, so both switches change mm). One round
/// trip = 4 pipe syscalls + 2 local sync wakeups + 2 switches (4-byte copies are negligible;
/// the pipe's lines stay on the one CPU):
///
/// ```text
///   4 × syscall 150 + 2 × (pipe_send 110 + pipe_recv 90)                    = 1000
///   2 × (ttwu_base 100 + select_base 80 + rq_lock 20 + enqueue 200
///        + wakeup_preempt 50)                                               =  900
///   2 × (rq_lock 20 + dequeue 150 + pick 100 + context_switch 380
///        + context_switch_mm 250)                                           = 1800
///                                                                     total = 3700 ns
/// ```
/// The fixed parts (syscall, enqueue, ...) were chosen inside their \[EST\] ranges (below);
/// `context_switch` is the remainder (380 + 250 = 0.63 µs, inside the \[EST\] raw
/// `__schedule` + switch_mm 0.5–1.5 µs).
pub(crate) fn generic() -> CostProfile {
    CostProfile {
        name: "generic".into(),
        line: LineCosts {
            // [SRC: AnandTech, EPYC Rome review p.7: Xeon 8280 (Cascade Lake) L1 4 / L2 14 cycles
            // @2.7 GHz ≈ 1.5 / 5.2 ns, https://www.anandtech.com/show/14694/amd-rome-epyc-2nd-gen/7]
            local: 2,        // own line: an L1/L2 hit, a few cycles
            smt: 10,         // SMT siblings 7.5–13 ns (nviennot and KCORES core-to-core-latency)
            cluster: 45,     // no clusters on generic x86: same as llc
            llc: 45,         // Intel same LLC 45–55 ns (nviennot and KCORES core-to-core-latency)
            // [SRC: KCORES/core-to-core-latency-plus results/, same-socket cross-CCX medians EPYC 7763
            // 124, 9654 99, 9754 110 ns, https://github.com/KCORES/core-to-core-latency-plus]
            cross_llc: 110,  // cross LLC 80–150 ns, midpoint ≈ 110 (Zen3 85–135 ns, KCORES)
            cross_node: 200, // cross socket 108–304 ns (nviennot and KCORES core-to-core-latency), ≈ midpoint
        },
        line_mesh_offset: 0, // every pair of one distance the same (test machines)
        // x2APIC ICR write + CSD queueing. V. Pallipadi ("[RFC] Extend mwait idle to optimize
        // away IPIs", LKML 2012-02-06): a flag write instead of the IPI cut the sender's
        // smp_call_function_single() from ~1600 to ~1200 cycles (Westmere, same socket):
        // ~400 cycles, 0.13–0.17 µs at 2.4–2.9 GHz. [EST] 200 ns: that, rounded up (no figure
        // for Cascade Lake or Zen found).
        ipi_send: 200,
        ipi_delivery: x86_ipi_delivery(),
        // Receiver entry/exit (the handler's work, e.g. csd_flush, is charged apart). A Linux
        // kernel IPI with a trivial handler, received back to back by a CPU running a user
        // loop, costs it 1,582 cycles on a Xeon Gold 5418Y (Sapphire Rapids) at a fixed
        // 2.0 GHz, Linux 6.0 (yhtzd/skyloft, docs/sosp24-ae.md §4.6, the SOSP 2024 artifact's
        // kernel-IPI receive figure): 0.51–0.66 µs at the presets' 2.4–3.1 GHz. 500 ns, the
        // low end. No Skylake-SP, Zen or Neoverse figure found.
        irq_entry_exit: 500,
        idle_states: vec![
            poll_state(),
            // C1 1–2 µs (intel_idle.c: skx_cstates 2 µs, icx/spr_cstates 1 µs); MWAIT state, so
            // TIF_POLLING_NRFLAG stays set and a waker only writes the flag (`set_nr_if_polling()`).
            // Residency = 2 × latency, acpi_idle's default `latency_factor` 2 (processor_idle.c).
            IdleState {
                name: "C1".into(),
                exit_latency: 1_000,
                target_residency: 2_000,
                polling: true,
            },
            // C6 50–150 µs → 100 µs [SRC: drivers/idle/intel_idle.c skx_cstates C6 133 µs, 92 µs with PC6
            // off (skx_idle_state_table_update); icx 170, spr 290]; residency 5× (skx C6 133/600 ≈ 4.5×).
            IdleState {
                name: "C6".into(),
                exit_latency: 100_000,
                target_residency: 500_000,
                polling: true,
            },
        ],
        // cpuidle_poll_time(): first state with residency ≥ CPUIDLE_POLL_MIN (10 µs) is C6
        // (500 µs), capped at CPUIDLE_POLL_MAX = TICK_NSEC/16 = 62.5 µs (drivers/cpuidle/cpuidle.c).
        poll_limit: CPUIDLE_POLL_MAX_HZ1000,
        // [EST] menu_select(): tick_nohz_get_sleep_length() (timer-wheel + hrtimer next-event
        // lookup, ~200 ns) + the state walk and data update (~100 ns) + tick_nohz_idle_enter()
        // and cpuidle_enter_state() clock reads/tracepoints (~100 ns). The cost SM_IDLE's
        // ipistorm numbers expose: the idle re-entry, not the wire, bounds IPI throughput (SM_IDLE, commit
        // 3dcac251b066: ipistorm 0.25× on a dual EPYC Zen3).
        idle_select: 400,
        // [EST] cpuidle_reflect() (menu_update) + tick_nohz_idle_exit() accounting with the tick
        // still running (ktime_get, idle-time update) ≈ 150 ns.
        idle_exit: 150,
        // [EST] sched_balance_newidle() gated: ~15 loads incl. rd->overload and nohz.has_blocked
        // (shared read-mostly lines, hits), rq_clock, rcu_read_lock/unlock ≈ 60 ns.
        newidle_gate: 60,
        // derived above from the 3.7 µs same-CPU pipe round trip (Vagin's WF_SYNC patch)
        context_switch: 380,
        // [EST]: cross-mm switch +0.2–0.5 µs (CR3 switch, PCID avoids the TLB flush); low end.
        // Checked, not measured: PCID saves "around 100ns on cross-process context switches
        // ... a little over a 10% speedup. Most of the time is spent in the scheduler" (Andy
        // Lutomirski, "[RFC 00/13] x86/mm: PCID and INVPCID", LKML 2016-01-08, Skylake
        // laptop): a cross-process switch of ~1 µs, as the model's schedule() path here
        // (rq_lock + dequeue + pick + context_switch + context_switch_mm = 900 ns).
        context_switch_mm: 250,
        // x86 with mitigations 0.1–0.3 µs [EST]; getppid ≈ 0.2 µs (perf bench syscall, LKML 2025);
        // getpid() on Skylake-X 191–217 ns with 37 audit rules (A. Arora, Oracle Linux blog,
        // "Syscall latency", 2023): an upper bound; Cascade Lake needs no KPTI, so likely lower.
        syscall: 150,
        // [EST] ~0.1 ns/B: copy_to/from_user of cache-hot data at ~10 GB/s
        copy_ps_per_byte: 100,
        // [EST] uncontended spinlock acquire+release, local line ~20 ns
        rq_lock: 20,
        // [EST] rq-lock hold 0.3–2 µs total; PELT 50–150 ns/level
        enqueue: 200,
        // [EST] like enqueue minus placement: update_curr + PELT + rbtree erase
        dequeue: 150,
        // [EST] check_preempt_wakeup_fair: update_curr + one pick_eevdf compare
        wakeup_preempt: 50,
        // [EST] pick_eevdf + set_next_entity on a short tree
        pick: 100,
        // [EST] pi_lock, p->__state checks, barriers, ttwu_stat() in kernel/sched/core.c
        ttwu_base: 100,
        // [EST] record_wakee + wake_wide + wake_affine arithmetic on hot lines
        select_base: 80,
        // Measured: a loop in select_idle_cpu()'s shape (for_each_cpu_wrap() through an
        // out-of-line cpumask_next_wrap(), cpu_rq() from a per-CPU offset table, idle_cpu() out
        // of line, sched_idle_cpu()) over busy runqueue images in its own cache: 6–12 ns per CPU
        // (six runs, each over 16 and 48 CPUs; Milan guest; `cargo run --release -p
        // wakesim-hostbench --example lb_scan -- --idle-scan`, `IdleScanKernel`).
        sis_probe: 10,
        // Measured by the same loop after another core wrote the three lines it reads of each
        // rq (`curr`/`idle`, `nr_running`, `cfs.h_nr_idle`), against the loop again from its
        // own cache: 0.15–0.40 line transfers per probe, median 0.31 over the nine spans of
        // those runs whose lines took 33–41 ns (one L3, the scan's distance; 0.19–0.29 at 206–218 ns): about
        // three CPUs', ten lines', misses in flight. A tight loop without the calls keeps eight
        // to ten CPUs' in flight (0.10–0.13), so the loop's length bounds it, not Zen 3's miss
        // buffers; ten lines is about what Skylake's L1D fill buffers hold (10–12 in the
        // accounts found, no vendor table cited). One figure for every profile, as the walk's.
        sis_probe_line_pct: 31,
        // [EST] llist_add cmpxchg + ttwu_pending store, lines charged separately
        wakelist_queue: 60,
        // [EST] receiver 0.5–1.0 µs incl. flush, minus entry/exit 500
        csd_flush: 150,
        // One load_balance() pass = lb_base + lb_stats_per_cpu and lb_walk_line_pct of an rq-line
        // transfer per CPU of the span. Bounded by max_newidle_lb_cost on a bare-metal 2× Xeon
        // E5-2680 v3 (Haswell-EP, 12C/24T per socket, 6.8.1; Vitalii Bursov, "[PATCH v3 0/3]
        // sched/fair: allow disabling sched_balance_newidle with sched_relax_domain_level", LKML
        // 2024-04-03, <cover.1712147341.git.vitaly@bursov.com>). Each figure is a decaying
        // maximum, so it bounds every pass of its window. With newidle stopped above SMT (relax levels 1–3)
        // the 2-CPU SMT level recorded 309, 276 and 289 ns, update_blocked_averages() included
        // (v5.16); the 24-CPU MC level 2,776, 3,192 and 1,999 ns (3,444 as shipped).
        // [EST] the split: update_sg_lb_stats()' own work per CPU besides the line read.
        lb_stats_per_cpu: 40,
        // Measured: a walk laid out and coded as update_sg_lb_stats() (6.18's rq offsets, four
        // lines of a busy CPU's rq, six of an idle one's, 20–70 ns of work per CPU, the rqs in
        // shuffled order), after another core wrote every line it reads, against the same walk
        // again from its own cache: 0.67, 0.69, 0.72, 0.78 and 0.80 line transfers per CPU
        // (five runs' medians, each over 45–72 repetitions of 24- and 256-CPU spans; Milan
        // guest, lines of 35–220 ns; `cargo run --release -p wakesim-hostbench --example
        // lb_scan`): 72. A constant stride between the rqs lets Zen's L1 stride prefetcher hide
        // them (0.07); Intel's IP prefetcher follows strides up to 2 KB only (Intel 64 and IA-32
        // Optimization Reference Manual), and per-CPU areas lie further apart. One figure for
        // every profile: how far ahead a core runs depends on its window, measured on Zen 3 only.
        lb_walk_line_pct: 72,
        // The fixed part: what the smallest SMT maximum (276 ns) leaves after update_blocked
        // (100) and two CPUs' stats and rq-line reads (2 × 40, plus 72 % of skx's 10 ns of own
        // and sibling lines): ≈ 80 ns, shared by every profile (software). The 1 µs this replaced
        // took the 1,306 ns of a dump with newidle at every level, not the SMT pass alone.
        // Test: a_failed_newidle_pass_records_no_more_than_the_maxima_haswell_ep_recorded.
        lb_base: 80,
        // [EST] pull 1–3 µs incl. double lock (detach_task + attach_task) → ~0.8 µs without the locks
        migrate_task: 800,
        // [EST] PELT update per entity level 50–150 ns, midpoint
        update_blocked: 100,
        // [EST] timer irq + sched_tick + task_tick_fair (update_curr, PELT per level)
        tick: 1_000,
        // [EST] update_tg_load_avg()'s own work (the delta, its check, the atomic add once the
        // line is here); the line's transfer and any wait for it are paid apart (its contention:
        // Aaron Lu, LKML 2023)
        tg_load_update: 60,
        migration_penalty: x86_migration_penalty(2_000),
        smt_throughput: 1.15, // the kernel's old smt_gain 1178/1024 = 1.15 (removed by 765d0af19f5f)
        // ttwu_queue() without the wakelist (Peter Zijlstra: the reason not to queue within an
        // LLC was "cache bouncing", LKML): the lines of the target's rq that update_rq_clock(),
        // ttwu_do_activate() and enqueue_task_fair() read or write, counted on the layouts of
        // struct rq, cfs_rq and sched_entity in v6.18's BTF (`pahole -C rq
        // /sys/kernel/btf/vmlinux`, x86-64; docs/accuracy.md, "The lines of a remote enqueue").
        // rq: curr/idle/leaf_cfs_rq_list (2688), clock_update_flags/clock (2752), clock_task/
        // clock_pelt (2816), cpu/cfs_tasks (2944), idle_stamp/avg_idle (3200); the root cfs_rq:
        // load/nr_queued/sums/tree root (+0), leftmost/curr (+64), avg (+128), removed (+192),
        // tg/on_list (+320). The lock's own line (+0 of rq, with nr_running) is paid by the lock.
        enqueue_lines: 10,
        // One task-group level (autogroup): its cfs_rq's six lines on the target (as the root
        // cfs_rq's five, plus tg_load_avg_contrib at +256) and its entity's four (sched_entity is
        // 256 bytes: load/run_node, on_rq/vruntime, vlag/depth/cfs_rq, avg), same source.
        group_enqueue_lines: 10,
        // task_struct on the same layout: on_rq/prio/wake_cpu (+64), se (+128, four lines),
        // sched_info (+1008, last_queued written by sched_info_enqueue()).
        task_sched_lines: 6,
        // [EST] unix_stream_sendmsg: skb alloc + queue + sock_def_readable; recv: dequeue + free.
        unix_send: 400,
        unix_recv: 300,
        // fs/pipe.c: pipe_write() takes pipe->mutex, merges into the last buffer or sets up a
        // slot, updates head; pipe_read() the same on the tail side. A 100 B write + read pair
        // measured 0.54–0.70 µs on the development VM (Sapphire Rapids), of which two syscalls
        // are ~0.32 µs and the copies ~0.02: ~200 ns left for the two, split 11:9 [EST] (the
        // writer sets up the slot). `wakesim calibrate` measures the pair on the host.
        pipe_send: 110,
        pipe_recv: 90,
        // A read of an empty MSG_DONTWAIT unix socket / O_NONBLOCK pipe returning EAGAIN took
        // 305 / 245 ns on the development VM (Sapphire Rapids, 2026-11-22), getppid 190: the
        // check a blocking read makes before it sleeps. `wakesim calibrate` measures them.
        sock_wait: 115,
        // [EST] The receive queue's critical section: spin_lock_irqsave, a 4-pointer list
        // insert or unlink and the qlen update, spin_unlock_irqrestore on a line the CPU already
        // holds (net/core/skbuff.c `skb_queue_tail()` / `skb_unlink()`): two uncontended atomics
        // of ~20 cycles each plus a few stores, ~50 ns at 2.5–3.5 GHz.
        sock_queue_hold: 50,
        pipe_wait: 55,
        // [EST] fs/pipe.c, the pipe's own lines both ends write: pipe->mutex (mutex_lock/unlock
        // by each op), head/tail (pipe_update_tail by the reader, head by the writer).
        // `wakesim calibrate`'s handoff measured 2 on the development VM (serial-miss
        // equivalents), beside 4 per message.
        pipe_lines: 2,
        // [EST] net/unix/af_unix.c: other->sk_receive_queue.lock and its list head, the peer's
        // state line, the sender's sk_wmem_alloc that the receiver's free decrements. Measured 4
        // on the development VM, beside 9 per message; scaled to this profile's earlier total
        // of 24 line transfers per cross-CPU round trip (4 ops × 3 + 2 messages × 6).
        sock_lines: 3,
        // [EST] A 100 B pipe message: the data lines the writer fills and the reader drains and
        // the pipe_buffer slot (len/offset). Measured 4 on the development VM.
        pipe_msg_lines: 4,
        // [EST] A 100 B unix message: the skb (232 B: 4 lines), the data head and its shared
        // info, and the slab freelist a remote kfree writes (SLUB `__slab_free`). 6 here; 9
        // measured on the development VM.
        sock_msg_lines: 6,
        // Skylake-SP / Cascade Lake: 1 MiB L2 per core (Intel optimization manual, 2.2).
        private_cache_bytes: 1 << 20,
        // [EST] A 100 B unix write+read pair costs 0.7–1.6 µs more with 15–17 MB of skbs queued
        // than with one (development VM, Sapphire Rapids, 2 MiB L2, across runs; `wakesim
        // calibrate` measures it): the skb's 4 lines and the data head's ~3 come from L3 or
        // DRAM, and the slab frees take their slow path. 600: a little under the VM's low end, as
        // bare-metal misses are cheaper than a guest's.
        sock_msg_cold: 600,
        // [EST] Line misses in flight while a CPU streams through a buffer another CPU holds
        // (a loopback TCP receiver copying out the sender's page frag; the sender writing the
        // frag page its receiver has just read). Measured on one Milan guest (EPYC family 25
        // model 1, the two vCPUs on different L3s, 207–235 ns a line): a 16 KiB copy takes
        // 1.9–2.3 µs more than on one CPU when reading, 24–37 misses in flight, median 28,
        // and 4.1–6.0 µs more when writing, 9–15 in flight, median 10.6 (`cargo run --release
        // -p wakesim-hostbench --example buffer_turns`); with the vCPUs on one L3 (39 ns),
        // 30–46 and 9–13. No published figure for these CPUs; `wakesim calibrate` measures the
        // host's.
        stream_read_overlap: 28,
        stream_write_overlap: 10,
        // A FUTEX_WAIT whose word no longer matches (futex_wait_setup(): key, hash, bucket lock
        // and waiter count, get_user, unlock) measured 300–315 ns beside getppid's 160–173 on the
        // development VM (Sapphire Rapids, 6.18): ~140 beyond the syscall. Queueing the futex_q
        // adds a plist insert [EST: within that figure].
        futex_wait: 140,
        // [EST] futex_wake() with a waiter: key, hash, bucket lock, the chain walk, and the
        // waiter's unqueue + wake_q add: the bucket work of the wait side (a FUTEX_WAKE that finds
        // no waiter skips the lock: 45 ns beyond the syscall on the same VM).
        futex_wake: 140,
        // kernel/futex/futex.h: the waker writes the hash bucket (`futex_hash_bucket`, one
        // cache-aligned line: lock, waiters, chain head), the waiter's `futex_q` (on its stack,
        // ~2 lines: the plist node, then key/task/lock_ptr) and user space the futex word.
        // `wakesim calibrate` solves the count on the host.
        futex_lines: 4,
        // [EST] "a few µs per side" per TCP_RR transaction: tcp_sendmsg + IP + loopback
        // xmit + NET_RX softirq (tcp_v4_rcv, on the sender's CPU) plus tcp_recvmsg ≈ 3.5 µs a
        // message; UDP skips connection state and ACKs: ≈ 60 % of it, 2.2 µs. Split as
        // `wakesim calibrate` measured the two sides on the development VM (Sapphire Rapids,
        // 6.18: 64 B on one thread, send incl. the softirq 3.32 / receive 0.64 µs for TCP,
        // 2.25 / 0.39 µs for UDP, beyond the syscall and copy): the sender does 84–85 %.
        tcp_send: 2_950,
        tcp_recv: 550,
        // [EST] `perf record -a -g` of a native 16 KiB loopback TCP_STREAM on a Milan guest
        // (6.18) put 86 % of `tcp_ack()` under the sender's `tcp_sendmsg()` →
        // `__release_sock()`, 2.0–2.4 µs per message (1.1 µs at 1 KiB sends, 3.4 µs at 64 KiB;
        // docs/accuracy.md); the one-thread calibration's ACKs cost ~0.3 µs and stay in
        // `tcp_send`/`tcp_recv`. No bare-metal figure found.
        tcp_ack: 2_000,
        udp_send: 1_870,
        udp_recv: 330,
        // [EST] csd lock + setup on the sender; the ipistorm handler does nothing.
        call_function: 50,
        // fork() of a small process measured 45–55 µs (median of 400, parent side) and
        // pthread_create() 17–29 µs on the development VM (Sapphire Rapids guest, 6.18);
        // [EST] bare metal below a guest's (no nested page-table walks): 40 and 15 µs.
        fork: 40_000,
        clone_thread: 15_000,
    }
}

/// Cold-cache penalty after a migration, \[EST\]: the next run re-fetches its hot set. Assume a hot
/// set of 1024 lines (64 KB: L1D + the hot part of L2) fetched with ~10 misses in flight.
/// * SMT: 0 (siblings share L1/L2).
/// * same LLC: `llc_refill` = 1024 × L3 hit latency / 10 (SKX ~18 ns → 2 µs; Zen ~10 ns → 1 µs,
///   AnandTech's EPYC Rome/Milan reviews: "L3 hit latency ~34 cycles on Zen2, ~46 cycles on
///   Xeon 8280").
/// * cross LLC: the LLC is cold too, lines come from DRAM (113–134 ns, AnandTech) for a larger
///   set → ~10 µs.
/// * cross node: remote DRAM (~2× local) and the memory stays on the old node → ~20 µs.
pub(crate) fn x86_migration_penalty(llc_refill: u64) -> LineCosts {
    LineCosts {
        local: 0,            // no move
        smt: 0,              // [EST] shared L1/L2
        cluster: llc_refill, // no clusters on these x86 parts: as llc
        llc: llc_refill,     // [EST] see above
        cross_llc: 10_000,   // [EST] see above
        cross_node: 20_000,  // [EST] see above
    }
}

/// IPI delivery on Skylake-SP, one figure at every distance. [SRC: khale/ipi-heatmaps
/// `machines/jebe/data.csv`, https://github.com/khale/ipi-heatmaps: one-way IPIs on bare
/// metal, 2-socket Xeon Gold 6130 (Skylake-SP, 2.1 GHz), TSC read by the sender before its ICR
/// write and by the receiver's handler (the Nautilus kernel's IPI test), 10 trials for each
/// ordered pair of the 64 CPUs.] Each pair's two directions averaged (the cores' TSC offsets
/// cancel): median 744 cycles = 354 ns, 5th–95th percentile of the pairs 298–431 ns, and no
/// split of the CPUs into two halves (by number, parity, or the best a 2-means clustering
/// finds) separates them by more than 17 ns: crossing the socket costs an IPI nothing
/// measurable. Here send → handler = `ipi_send` 200 + delivery 100 (+ the receiver's entry,
/// charged in `irq_entry_exit`) ≈ 300–350 ns at every distance.
pub(crate) fn skx_ipi_delivery() -> LineCosts {
    LineCosts { local: 0, smt: 100, cluster: 100, llc: 100, cross_llc: 100, cross_node: 100 }
}

/// Intel Skylake-SP / Cascade Lake (xeon-8269cy, xeon-8260, xeon-4s).
pub(crate) fn skx() -> CostProfile {
    CostProfile {
        name: "skx".into(),
        line: LineCosts {
            // [SRC: AnandTech, EPYC Rome review p.7: Xeon 8280 (Cascade Lake) L1 4 / L2 14 cycles
            // @2.7 GHz ≈ 1.5 / 5.2 ns, https://www.anandtech.com/show/14694/amd-rome-epyc-2nd-gen/7]
            local: 2,        // own line: an L1/L2 hit
            smt: 8,          // Xeon 8275CL (CLX) SMT sibling 7.6 ns (nviennot/core-to-core-latency)
            cluster: 47,     // no clusters on SKX: as llc
            llc: 47,         // Xeon 8275CL same LLC median 46.6 ns (nviennot/core-to-core-latency)
            cross_llc: 134, // SKX has one LLC per package: not used; set to the cross-socket figure
            cross_node: 134, // Xeon 8275CL cross-socket median 134 ns (nviennot/core-to-core-latency)
            // A second Cascade Lake part agrees: dual Xeon Gold 6242, same socket 43–53 ns, cross
            // socket 134–146 ns, SMT 7.3–7.6 ns (nviennot/core-to-core-latency results/).
        },
        // The same matrices, per pair of cores: a pair's latency is close to the sum of one
        // figure per core (its tile's place on the mesh). Least squares over each socket's
        // pairs, lat(i, j) = base + e_i + e_j: 8275CL e_i from −3.3 to +2.2 ns, sd 1.8 (R² 0.97,
        // residual sd 0.4 ns; pairs 41.5–51.3 ns, CV 5.3 %), 6242 −3.3 to +2.2, sd 1.7 (R² 0.98).
        // The cross-socket pairs carry the same per-core figure (correlation 0.97 with e_i).
        line_mesh_offset: 3,
        ipi_delivery: skx_ipi_delivery(),
        idle_states: vec![
            poll_state(),
            // drivers/idle/intel_idle.c skx_cstates, exit/residency µs; MWAIT states poll
            // (TIF_POLLING_NRFLAG stays set). With package C6 disabled in the BIOS,
            // skx_idle_state_table_update() makes C6 92/276 µs; `idle_cpu_skx.use_acpi` turns off
            // the states the BIOS _CST does not list (C1E, CPUIDLE_FLAG_ALWAYS_ENABLE, stays on).
            // Measured core-C6 exit (wult, NIC wakeup, 99.99th percentile): 92 µs Skylake-SP,
            // 96 µs Cascade Lake, 89 µs Cooper Lake (Chen Yu, "intel_idle: Adjust the SKX C6
            // latency and residency if PC6 is disabled", linux-pm 2021-05-28), under the table's 133.
            IdleState {
                name: "C1".into(),
                exit_latency: 2_000,
                target_residency: 2_000,
                polling: true,
            },
            IdleState {
                name: "C1E".into(),
                exit_latency: 10_000,
                target_residency: 20_000,
                polling: true,
            },
            IdleState {
                name: "C6".into(),
                exit_latency: 133_000,
                target_residency: 600_000,
                polling: true,
            },
        ],
        // cpuidle_poll_time(): first residency ≥ CPUIDLE_POLL_MIN (10 µs) is C1E's 20 µs
        // (< CPUIDLE_POLL_MAX 62.5 µs), drivers/cpuidle/cpuidle.c.
        poll_limit: 20_000,
        // Xeon 8280 L3 hit ~46 cycles (AnandTech) ≈ 18 ns at 2.5 GHz → 1024 × 18 / 10 ≈ 2 µs.
        migration_penalty: x86_migration_penalty(2_000),
        ..generic()
    }
}
