//! `detach_tasks()` (kernel/sched/fair.c): one balance pass moves as much as its imbalance
//! asks for, in the unit of its migration type, leaving the busiest CPU at least one task.

use crate::common::*;
use wakesim_engine::MSEC;
use wakesim_machine::SdFlags;
use wakesim_stats::IdleType;
use wakesim_workloads::Op;

#[test]
fn an_idle_llc_pulls_half_the_excess_tasks_in_one_pass() {
    // test-2x4: two LLCs of eight CPUs under one package domain.
    let m = wakesim_machine::preset("test-2x4").expect("preset");
    let pkg = m.domains[0].iter().position(|sd| !sd.has(SdFlags::SHARE_LLC) && !sd.has(SdFlags::SHARE_CPUCAPACITY)).expect("a level above the LLC");
    let llc0 = &m.domains[0][pkg - 1].span;
    let other: Vec<usize> = (0..16).filter(|&c| !llc0.contains(c)).collect();
    let mut allowed = other.clone();
    allowed.push(0);
    // Five hogs on CPU 0, free to run on the other LLC but on no other CPU of their own.
    let hog = |i: usize| pinned(start_on(task(&format!("h{i}"), vec![compute(200 * MSEC), Op::Exit]), 0), &allowed);
    let wl = workload((0..5).map(hog).collect(), 0, 0);
    // With the v6.13 NOHZ fix idle CPUs balance (before it a polling x86 CPU skips the kick);
    // without CACHE_HOT, as task_hot() would keep the hog that ran last.
    let mut s = sim("test-2x4", feat("+ILB_POLLING_FIX,-CACHE_HOT"), &wl, 1);
    let gained = |s: &wakesim_model::Sim| other.iter().map(|&c| s.dstat[c][pkg].lb_gained[IdleType::Idle as usize]).sum::<u64>();
    step_until_cond(&mut s, 100 * MSEC, "an idle balance across the LLCs", |s| gained(s) > 0);
    // Five tasks in a group with spare capacity, none in the local one, SD_PREFER_SIBLING
    // below: migrate_task with an imbalance of 5 >> 1 = 2, both detached in one pass.
    assert_eq!(gained(&s), 2, "two hogs in the first pass that moved anything");
    assert_eq!(s.nr_running(0), 3);
}
