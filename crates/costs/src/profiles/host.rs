//! `host`: a generic VM-like default for the machine wakesim runs on.
//!
//! The base that `wakesim calibrate` starts from: it measures this machine and writes a complete
//! `host-calibrated` costs file (via [`crate::to_toml`]) that `--machine host` loads instead of
//! these estimates (docs/accuracy.md). Fields calibrate does not measure keep these values.
//!
//! Why VM-like: the development host is a KVM/Firecracker guest whose cpuidle driver is `none`,
//! so the idle loop runs `default_idle_call()` → HLT with TIF_POLLING_NRFLAG cleared
//! (`kernel/sched/idle.c`). Every wake of an idle vCPU therefore needs an IPI, which traps to the
//! hypervisor, and the halted vCPU must be rescheduled by the host ("in a VM, waking an idle vCPU
//! is expensive": docs/model.md, "Waking a CPU").

use super::x86::{generic, CPUIDLE_POLL_MAX_HZ1000};
use crate::{CostProfile, IdleState, LineCosts};

pub(crate) fn host() -> CostProfile {
    CostProfile {
        name: "host".into(),
        // A KVM guest ran perf bench sched pipe at 8.1 µs/op, 5.0 with haltpoll (Mihai Carabas,
        // LKML haltpoll series, Nov 2023): each of
        // the 2 cross-vCPU wakes per op costs ~1.5 µs more when the vCPU halts instead of polling.
        // Split [EST] between the sender's trapped ICR write, delivery, guest entry and HLT exit.
        // [EST] ICR write → VM exit + KVM IPI emulation (no IPI virtualization). On the
        // development VM (KVM on AMD EPYC) `calibrate` measures 5.6–7.1 µs: the waker's
        // futex_wake of a sleeper on the other vCPU, idle or busy (docs/accuracy.md, "Streams").
        // Kept as the generic default: hosts with IPI virtualisation (Intel IPIv, AMD AVIC) do
        // not exit at all.
        ipi_send: 500,
        ipi_delivery: LineCosts {
            local: 0,         // [EST] no self-IPI on the wakeup path
            smt: 200,         // [EST] host kick / posted interrupt to the vCPU, ~2× bare metal
            cluster: 200,     // [EST] as smt
            llc: 200,         // [EST] as smt
            cross_llc: 600,   // [EST] bare-metal 400 + host overhead
            cross_node: 1500, // [EST] bare-metal 1150 + host overhead
        },
        irq_entry_exit: 600, // [EST] bare metal 500 + virtual APIC EOI
        // cpuidle driver "none": HLT only, not polling. Exit [EST] 1 µs: the host wakes the vCPU
        // thread and re-enters the guest (~1.5 µs extra per wake vs haltpoll in Carabas's figures, minus IPI).
        // Residency = 2 × latency, like acpi_idle's latency_factor.
        idle_states: vec![IdleState {
            name: "HLT".into(),
            exit_latency: 1_000,
            target_residency: 2_000,
            polling: false,
        }],
        // No POLL state: unused; the CPUIDLE_POLL_MAX default.
        poll_limit: CPUIDLE_POLL_MAX_HZ1000,
        // A small C program's fork() (parent side) and pthread_create() on the development VM:
        // medians 50–54 and 19–29 µs over 400 each. Not measured by `calibrate`: a fork of its
        // own, larger process would copy more page tables than a benchmark's parent does.
        fork: 50_000,
        clone_thread: 20_000,
        ..generic()
    }
}
