//! AMD EPYC profiles: Zen3 (7763), Zen4 (9654), Zen4c (9754).
//!
//! All three use acpi_idle with the same _CST shape (as `cpupower idle-info` reports it) and
//! share the kernel code-path costs of `generic`; they differ in core-to-core transfer figures
//! (KCORES/core-to-core-latency-plus).

use super::x86::{generic, poll_state, x86_migration_penalty};
use crate::{CostProfile, IdleState, LineCosts};

/// acpi_idle states on EPYC (ACPI _CST as reported by `cpupower idle-info`). Target residency =
/// exit latency × `latency_factor` 2
/// (`drivers/acpi/processor_idle.c`, `acpi_processor_setup_cstates()`).
fn epyc_idle_states() -> Vec<IdleState> {
    vec![
        poll_state(),
        // C1 "ACPI FFH MWAIT 0x0", latency 1 µs; MWAIT keeps TIF_POLLING_NRFLAG set.
        IdleState {
            name: "C1".into(),
            exit_latency: 1_000,
            target_residency: 2_000,
            polling: true,
        },
        // C2 "ACPI IOPORT 0x414" (CC6), typical firmware latency 18 µs (`cpupower idle-info` on
        // many Zen systems; 30 µs on an EPYC server in A. Chiao's 2024 power-management notes;
        // 800 µs on a 9754 box in an EPYC tuning guide, BIOS-configurable: override in a costs
        // file). Measured on Zen2 (EPYC Rome, CC6): 19.8–23.5 µs median from the waker's
        // sched_waking to the wakee's idle exit, IPI included (Schöne et al., "Energy Efficiency
        // Aspects of the AMD Zen 2 Architecture", arXiv:2108.00808). IO-port entry: not polling,
        // so waking a CPU in C2 needs an IPI.
        IdleState {
            name: "C2".into(),
            exit_latency: 18_000,
            target_residency: 36_000,
            polling: false,
        },
    ]
}

/// cpuidle_poll_time(): first residency ≥ CPUIDLE_POLL_MIN (10 µs) is C2's 36 µs (< 62.5 µs cap).
const EPYC_POLL_LIMIT: u64 = 36_000;

/// AnandTech's EPYC Rome review: "L3 hit latency ~34 cycles (~10 ns) on Zen2" → 1024 lines ×
/// 10 ns / 10 in flight ≈ 1 µs
/// (see `x86_migration_penalty`).
const ZEN_LLC_REFILL: u64 = 1_000;

/// AMD EPYC 7763 (Zen3 Milan): 8-core CCX = one LLC of 16 CPUs.
pub(crate) fn zen3() -> CostProfile {
    CostProfile {
        name: "zen3".into(),
        private_cache_bytes: 512 << 10, // Zen3: 512 KiB L2 per core (AMD 19h PPR)
        line: LineCosts {
            // [SRC: AMD SOG Family 19h (56665) §2.6.2, L1D "4- or 5-cycle integer load-to-use latency"
            // (quoted in llvm X86ScheduleZnver3.td), https://www.amd.com/system/files/TechDocs/56665.zip]
            local: 2,        // own line: an L1/L2 hit
            smt: 10,         // EPYC 7763 SMT sibling 10.2 ns (KCORES/core-to-core-latency-plus)
            cluster: 25,     // no clusters on Zen3: as llc
            llc: 25,         // EPYC 7763 same CCX median 25 ns (KCORES)
            cross_llc: 120,  // EPYC 7763 cross-CCX same socket median 120–127 ns (KCORES)
            cross_node: 304, // EPYC 7763 cross-socket median 304 ns (KCORES)
            // A second Milan agrees: EPYC 7R13, same CCX 20–26 ns, cross-CCX 90–115 ns; a 7453
            // host shows 218–225 ns cross-CCD (nviennot/core-to-core-latency results/, issue #125).
        },
        // No per-core mesh offsets: the 7R13's same-CCX pairs in the same results/ do not fit
        // base + one figure per core (R² 0.15; Cascade Lake's fit 0.97, see `skx`).
        line_mesh_offset: 0,
        idle_states: epyc_idle_states(),
        poll_limit: EPYC_POLL_LIMIT,
        migration_penalty: x86_migration_penalty(ZEN_LLC_REFILL),
        ..generic()
    }
}

/// AMD EPYC 9654 (Zen4 Genoa): 8-core CCX = one LLC of 16 CPUs.
pub(crate) fn zen4() -> CostProfile {
    CostProfile {
        name: "zen4".into(),
        private_cache_bytes: 1 << 20, // Zen4: 1 MiB L2 per core (AMD 19h Genoa PPR)
        line: LineCosts {
            // [SRC: AMD SOG Family 19h Zen4 (57647) §2.6.2, L1D "4- or 5-cycle integer load-to-use latency"
            // (quoted in llvm X86ScheduleZnver4.td), https://www.amd.com/system/files/TechDocs/57647.zip]
            local: 2,        // own line: an L1/L2 hit
            smt: 10, // EPYC 9454 (Zen4) SMT sibling 10.3 ns (KCORES; 9654 was measured SMT-off)
            cluster: 27, // no clusters on Zen4: as llc
            llc: 27, // EPYC 9654 same CCX median 27 ns (KCORES)
            cross_llc: 99, // EPYC 9654 cross-CCX median 99 ns (KCORES)
            cross_node: 192, // EPYC 9654 cross-socket median 192 ns (KCORES)
        },
        idle_states: epyc_idle_states(),
        poll_limit: EPYC_POLL_LIMIT,
        migration_penalty: x86_migration_penalty(ZEN_LLC_REFILL),
        ..generic()
    }
}

/// AMD EPYC 9754 (Zen4c Bergamo): 8-core CCX (half a CCD) = one LLC of 16 CPUs.
pub(crate) fn zen4c() -> CostProfile {
    CostProfile {
        name: "zen4c".into(),
        private_cache_bytes: 1 << 20, // Zen4c: 1 MiB L2 per core, as Zen4 (AMD 19h Bergamo PPR)
        line: LineCosts {
            // [SRC: AMD SOG Fam. 19h Zen4 (57647) §2.6.2, Zen4c being the Zen4 core: L1D "4- or 5-cycle integer
            // load-to-use" (quoted in llvm X86ScheduleZnver4.td), https://www.amd.com/system/files/TechDocs/57647.zip]
            local: 2,        // own line: an L1/L2 hit
            smt: 13,         // EPYC 9754 SMT sibling 12.7 ns (KCORES)
            cluster: 33,     // no clusters on Zen4c: as llc
            llc: 33,         // EPYC 9754 same CCX median 32.5 ns (KCORES)
            cross_llc: 110, // EPYC 9754 cross-CCX median 110 ns, line homed locally (KCORES)
            cross_node: 204, // EPYC 9754 cross-socket median 204 ns (KCORES)
        },
        idle_states: epyc_idle_states(),
        poll_limit: EPYC_POLL_LIMIT,
        migration_penalty: x86_migration_penalty(ZEN_LLC_REFILL),
        ..generic()
    }
}
