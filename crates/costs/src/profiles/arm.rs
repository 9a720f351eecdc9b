//! Ampere Altra (Neoverse N1, arm64).
//!
//! No TIF_POLLING_NRFLAG in the default arm64 idle: "For archs without TIF_POLLING_NRFLAG (e.g.,
//! arm64), the IPI is unavoidable" (Tianchen Ding, LKML 2022). The only idle state is WFI,
//! which does not poll, so every wake of an idle CPU costs a GIC SGI plus the WFI exit.

use super::x86::{generic, CPUIDLE_POLL_MAX_HZ1000};
use crate::{CostProfile, IdleState, LineCosts};

pub(crate) fn altra() -> CostProfile {
    CostProfile {
        name: "altra".into(),
        private_cache_bytes: 1 << 20, // Neoverse N1: 1 MiB private L2 per core (Ampere Altra datasheet)
        line: LineCosts {
            // [SRC: WikiChip, Neoverse N1: L1D 4-cycle load-to-use, L2 9–11 cycles (1.3 / 3–3.7 ns @3.0 GHz),
            // https://en.wikichip.org/w/index.php?title=arm_holdings/microarchitectures/neoverse_n1&oldid=86847]
            local: 2,        // own line: an L1/L2 hit
            smt: 83,         // no SMT on N1: unused; set to the cluster figure
            // The BIOS's NUMA-off (monolithic) mode measures 93 and 181 ns for the same pairs
            // (KCORES, "NUMA-off" file); which mode the published boxes ran is not documented.
            cluster: 83,     // Altra Q80-30 DSU pair median 83 ns (KCORES/core-to-core-latency-plus, 2-node mode)
            llc: 158,        // no CPU-side shared cache (32 MB SLC is memory-side): as cross_llc
            cross_llc: 158,  // Altra other cores in the socket median 158 ns (KCORES)
            cross_node: 300, // [EST] 2S not measured; ~2× the in-socket figure, like Zen3's 304 ns
        },
        // No per-core mesh offsets: no per-pair matrix of the Altra was found (KCORES gives
        // medians). Graviton2, also N1 on a CMN-600 mesh, fits base + one figure per core only
        // partly (R² 0.70, sd 2.7 ns; nviennot/core-to-core-latency results/).
        line_mesh_offset: 0,
        ipi_send: 200, // [EST] GICv3 ICC_SGI1R_EL1 system-register write, like x2APIC ICR
        ipi_delivery: LineCosts {
            local: 0,         // [EST] no self-IPI on the wakeup path
            smt: 150,         // no SMT: unused; as cluster
            cluster: 150,     // [EST] x86 same-LLC 100 ns × Altra's slower pair c2c (83 vs 47 ns)
            llc: 400,         // [EST] mesh hop to another core's redistributor, as x86 cross-LLC
            cross_llc: 400,   // [EST] as llc
            cross_node: 1150, // [EST] as x86 cross-socket (1.5–2.5 µs total [EST])
        },
        // [EST] as x86: arm64 exception entry/exit with GIC ack/EOI.
        irq_entry_exit: 500,
        // Evidence that this wake path is too dear on N1 (values unchanged; see docs/sensitivity.md):
        // H. Okanovic, "arm64: cpuidle: Add arm_poll_idle" (LKML 2024-04-01), perf bench sched
        // pipe -l 2500000 on c6g.metal (Graviton2, N1, bare metal): 17.609 → 15.170 s with polling
        // idle, i.e. 7.04 → 6.07 µs a round trip, ≈ 0.5 µs saved per cross-CPU wake where
        // ipi_send + ipi_delivery + irq_entry_exit + the WFI exit here come to 1.85–2.1 µs.
        // Graviton2's core-to-core figures (30–57 ns, nviennot/core-to-core-latency) are also below
        // the Altra ones above (83/158 ns, KCORES). Not a measurement of the Altra itself.
        // WFI: drivers/cpuidle/cpuidle-psci.c / dt_idle_states state 0 "WFI", exit_latency 1 µs,
        // target_residency 1 µs. Not polling. Ampere's reference firmware (Mt. Jade,
        // tianocore/edk2-platforms Platform/Ampere/JadePkg/AcpiTables/CPU.asi) also declares an
        // ACPI _LPI "Standby" state per core, 2,900 µs wake latency and 1 µs residency, enabled by
        // the setup option "LPI Support" (default on). No production box's tables were found,
        // so it is left out; the menu governor would take it for a predicted idle of 2.9 ms and
        // more (or sooner with the tick stopped), which the published rows' µs-scale idles are not.
        idle_states: vec![IdleState {
            name: "WFI".into(),
            exit_latency: 1_000,
            target_residency: 1_000,
            polling: false,
        }],
        // No POLL state on arm64: unused; the CPUIDLE_POLL_MAX default.
        poll_limit: CPUIDLE_POLL_MAX_HZ1000,
        // [EST] ASIDs avoid the TLB flush: a TTBR0 write + barriers only.
        context_switch_mm: 150,
        // [EST] private 1 MB L2 per core and no shared CPU cache: any move beyond the core
        // refills from the memory-side SLC/DRAM, 1024 hot lines × ~40 ns / 10 in flight ≈ 4 µs.
        migration_penalty: LineCosts {
            local: 0,           // no move
            smt: 0,             // no SMT
            cluster: 4_000,     // [EST] see above (the DSU pair shares no cache)
            llc: 4_000,         // [EST] see above
            cross_llc: 4_000,   // [EST] see above
            cross_node: 20_000, // [EST] remote DRAM, as x86 cross-node
        },
        smt_throughput: 1.0, // no SMT on Neoverse N1
        ..generic()
    }
}
