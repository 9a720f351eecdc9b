//! The cpuidle governors against the kernel's rules: menu (`menu_select()`,
//! `get_typical_interval()`, `menu_update()`), teo (`teo_select()`, `teo_update()`), haltpoll
//! (`haltpoll_select()`, `adjust_poll_limit()`), each driven directly on a state table; then
//! through the simulator, that the idle loop applies their tick decisions and time limits.

use crate::common::*;
use wakesim_costs::IdleState;
use wakesim_engine::{Time, MSEC, USEC};
use wakesim_model::cpuidle::haltpoll::Haltpoll;
use wakesim_model::cpuidle::menu::{Menu, DECAY, RESOLUTION};
use wakesim_model::cpuidle::teo::Teo;
use wakesim_model::cpuidle::{Governor, SelectInput, Selection, Wakeup, LATENCY_REQ_NONE};
use wakesim_model::GovernorKind;

const TICK: Time = MSEC; // HZ=1000
const POLL: usize = 0;
const C1: usize = 1;
const C1E: usize = 2;
const C6: usize = 3;

fn st(name: &str, exit_us: u64, residency_us: u64) -> IdleState {
    IdleState { name: name.into(), exit_latency: exit_us * USEC, target_residency: residency_us * USEC, polling: true }
}

/// intel_idle's skx_cstates behind the POLL state (the `skx` profile).
fn skx() -> Vec<IdleState> {
    vec![st("POLL", 0, 0), st("C1", 2, 2), st("C1E", 10, 20), st("C6", 133, 600)]
}

/// A selection with the next timer `sleep` away and the tick running (next tick in half a
/// period unless the timer comes first).
fn input(states: &[IdleState], sleep: Time) -> SelectInput<'_> {
    SelectInput {
        states,
        sleep_length: sleep,
        delta_tick: sleep.min(TICK / 2),
        tick_stopped: false,
        latency_req: LATENCY_REQ_NONE,
        tick_nsec: TICK,
        now: 0,
    }
}

fn wake(state: usize, residency: Time) -> Wakeup {
    Wakeup { state, residency, tick: false, poll_time_limit: false, now: residency, tick_nsec: TICK }
}

fn sel(state: usize, stop_tick: bool) -> Selection {
    Selection { state, stop_tick }
}

// --- menu ------------------------------------------------------------------------------------

#[test]
fn menu_polls_and_keeps_the_tick_when_the_next_timer_is_closer_than_state_1s_residency() {
    let s = skx();
    // C1's target residency is 2 µs: a timer 1.5 µs away leaves POLL, and POLL keeps the tick.
    assert_eq!(Menu::new().select(&input(&s, 1_500)), sel(POLL, false));
    // 3 µs away: C1 fits (and, the prediction being shorter than a tick, the tick stays).
    assert_eq!(Menu::new().select(&input(&s, 3 * USEC)), sel(C1, false));
    // A driver without a POLL state: state 0 is a real C-state, the tick may stop.
    let hlt = vec![st("C1", 1, 2), st("C6", 100, 500)];
    assert_eq!(Menu::new().select(&input(&hlt, 1_500)), sel(0, true));
}

#[test]
fn menu_eight_equal_idle_intervals_make_get_typical_interval_pick_the_matching_state() {
    let s = skx();
    let mut m = Menu::new();
    // No history: the timer 10 ms away is the prediction, C6 and a stopped tick.
    assert_eq!(m.select(&input(&s, 10 * MSEC)), sel(C6, true));
    assert_eq!(m.get_typical_interval(), u32::MAX, "no intervals yet");
    // Eight wakeups 30 µs into C1 (32 µs measured, less the 2 µs exit latency).
    for _ in 0..8 {
        m.reflect(&s, &wake(C1, 32 * USEC));
    }
    assert_eq!(m.get_typical_interval(), 30, "eight equal intervals: their average, µs");
    // The timer is still 10 ms away, but 30 µs is the typical idle: C1E (20 µs) fits, C6
    // (600 µs) does not, and below a tick the tick stays.
    assert_eq!(m.select(&input(&s, 10 * MSEC)), sel(C1E, false));
    // One outlier among the eight is dropped (seven left, > 3/4): still typical.
    m.reflect(&s, &wake(C1, 5_002 * USEC));
    assert_eq!(m.get_typical_interval(), 30);
}

#[test]
fn menu_scattered_intervals_give_no_typical_interval() {
    let mut m = Menu::new();
    m.intervals = [50, 150, 60, 140, 70, 130, 80, 120];
    // Variance 1250 µs² > 400 and avg² < 36 × variance; dropping 150 and 140 leaves 6 of 8.
    assert_eq!(m.get_typical_interval(), u32::MAX);
    m.intervals = [95, 105, 100, 98, 102, 101, 99, 100];
    assert_eq!(m.get_typical_interval(), 100, "variance ≤ 400 µs²");
}

#[test]
fn menu_repeated_early_wakeups_lower_the_correction_factor_and_the_chosen_state() {
    let s = skx();
    let mut m = Menu::new();
    // The timer is always 10 ms away but something wakes the CPU after 40–300 µs, irregularly
    // (no typical interval): the 10 ms bucket's factor falls until C6 no longer fits.
    let early = [40u64, 300, 60, 250, 45, 280, 70, 200];
    let mut chosen = Vec::new();
    for i in 0..48 {
        let k = m.select(&input(&s, 10 * MSEC)).state;
        chosen.push(k);
        let lat = s[k].exit_latency;
        m.reflect(&s, &wake(k, early[i % 8] * USEC + lat));
        assert_eq!(m.get_typical_interval(), u32::MAX, "wakeup {i}: no typical interval");
    }
    assert_eq!(chosen[0], C6, "a fresh factor trusts the timer");
    assert_eq!(*chosen.last().unwrap(), C1E, "the learned factor predicts ~150 µs: {chosen:?}");
    // which_bucket(10 ms) is the 10–100 ms bucket.
    assert_eq!(wakesim_model::cpuidle::menu::which_bucket(10 * MSEC), 4);
    let f = m.correction_factor[4] as u64;
    assert!(f < RESOLUTION * DECAY / 20, "factor {f} of {}", RESOLUTION * DECAY);
    // Other buckets were not touched.
    assert_eq!(m.correction_factor[2] as u64, RESOLUTION * DECAY);
}

#[test]
fn menu_keeps_the_tick_when_the_prediction_is_below_the_tick_period() {
    let s = skx();
    let mut m = Menu::new();
    m.intervals = [300; 8]; // typical 300 µs < TICK_NSEC
    assert_eq!(m.select(&input(&s, 10 * MSEC)), sel(C1E, false));
    m.intervals = [5_000; 8]; // typical 5 ms ≥ TICK_NSEC
    assert_eq!(m.select(&input(&s, 10 * MSEC)), sel(C6, true));
    // Kept tick: the state must also fit before the next tick. Typical 800 µs picks C6 (600
    // µs), but with the tick 400 µs away C1E is taken instead.
    m.intervals = [800; 8];
    let mut inp = input(&s, 10 * MSEC);
    inp.delta_tick = 400 * USEC;
    assert_eq!(m.select(&inp), sel(C1E, false));
}

#[test]
fn menu_with_the_tick_already_stopped_uses_the_next_timer_for_a_short_prediction() {
    let s = skx();
    let mut m = Menu::new();
    m.intervals = [30; 8]; // typical 30 µs
    let mut inp = input(&s, 5 * MSEC);
    assert_eq!(m.select(&inp), sel(C1E, false), "tick running: the short prediction");
    // With the tick stopped a shallow misprediction could last till the timer: the timer (5 ms)
    // is used, C6 is chosen, and the tick stays stopped.
    inp.tick_stopped = true;
    inp.delta_tick = inp.sleep_length;
    assert_eq!(m.select(&inp), sel(C6, true));
}

#[test]
fn menu_latency_requirement_caps_the_exit_latency() {
    let s = skx();
    let mut inp = input(&s, 10 * MSEC);
    inp.latency_req = 5 * USEC;
    assert_eq!(Menu::new().select(&inp).state, C1, "C1E's 10 µs exit exceeds 5 µs");
    inp.latency_req = 0;
    assert_eq!(Menu::new().select(&inp), sel(POLL, false), "no latency allowed: POLL");
    // v6.12: with the tick running, the prediction itself caps the exit latency. Typical 12 µs
    // (below RESIDENCY_THRESHOLD_NS: the timer is not looked up) allows C1 (2 µs exit), not
    // C1E (10 µs) whose residency fits neither.
    let mut m = Menu::new();
    m.intervals = [12; 8];
    assert_eq!(m.select(&input(&s, 10 * MSEC)), sel(C1, false));
}

#[test]
fn menu_a_tick_wakeup_beyond_the_timer_counts_as_a_long_sleep() {
    let s = skx();
    let mut early = Menu::new();
    let mut ticked = Menu::new();
    early.select(&input(&s, 10 * MSEC));
    ticked.select(&input(&s, 10 * MSEC));
    early.reflect(&s, &wake(C6, 1 * MSEC));
    ticked.reflect(&s, &Wakeup { tick: true, ..wake(C6, 1 * MSEC) });
    // The ordinary early wakeup: 1 ms less the exit latency, and the factor falls.
    assert_eq!(early.intervals[0], 867);
    assert!((early.correction_factor[4] as u64) < RESOLUTION * DECAY);
    // The tick woke it with the timer 10 ms away: 9/10 of MAX_INTERESTING, capped at the timer
    // — a perfect prediction, the factor stays 1.0.
    assert_eq!(ticked.intervals[0], 10_000);
    assert_eq!(ticked.correction_factor[4] as u64, RESOLUTION * DECAY);
}

#[test]
fn menu_a_poll_time_out_counts_as_sleeping_till_the_timer() {
    // A deep C1 (100 µs residency): a timer 80 µs away leaves POLL.
    let s = vec![st("POLL", 0, 0), st("C1", 50, 100)];
    let mut m = Menu::new();
    assert_eq!(m.select(&input(&s, 80 * USEC)), sel(POLL, false));
    m.reflect(&s, &Wakeup { poll_time_limit: true, ..wake(POLL, 20 * USEC) });
    assert_eq!(m.intervals[0], 80, "the time limit hit: as if slept till the timer, µs");
    let mut m = Menu::new();
    m.select(&input(&s, 80 * USEC));
    m.reflect(&s, &wake(POLL, 20 * USEC));
    assert_eq!(m.intervals[0], 20, "a wakeup inside POLL: what was measured");
}

// --- teo -------------------------------------------------------------------------------------

#[test]
fn teo_intercepts_pull_the_choice_shallower() {
    let s = skx();
    let mut t = Teo::new();
    // No history: the deepest state within the 10 ms timer, the tick stopped.
    assert_eq!(t.select(&input(&s, 10 * MSEC)), sel(C6, true));
    // Woken 48 µs in, well before the timer: an intercept in C1E's bin [20 µs, 600 µs).
    t.reflect(&s, &Wakeup { now: 96 * USEC, ..wake(C6, 96 * USEC) });
    let sel2 = t.select(&input(&s, 10 * MSEC));
    assert_eq!(t.state_bins[C1E].intercepts, 1024);
    assert_eq!(sel2, sel(C1E, false), "intercepts below C6 outweigh everything: C1E, and intercepts before the tick keep it");
}

#[test]
fn teo_hits_keep_the_deepest_state() {
    let s = skx();
    let mut t = Teo::new();
    for _ in 0..10 {
        let k = t.select(&input(&s, 10 * MSEC)).state;
        assert_eq!(k, C6);
        // The timer woke it, on time.
        t.reflect(&s, &Wakeup { now: 10 * MSEC, ..wake(k, 10 * MSEC) });
    }
    // C6's 600 µs is below the tick: on-time wakeups beyond the tick are teo's tick hits.
    assert!(t.tick_hits > 0 && t.state_bins.iter().all(|b| b.intercepts == 0));
}

#[test]
fn teo_caps_the_candidate_by_the_next_timer() {
    let s = skx();
    // No history, the timer 100 µs away: C6 (600 µs) is too deep, C1E fits; below the tick
    // the tick stays.
    assert_eq!(Teo::new().select(&input(&s, 100 * USEC)), sel(C1E, false));
}

// --- haltpoll --------------------------------------------------------------------------------

#[test]
fn haltpoll_grows_the_poll_window_after_a_short_halt_and_shrinks_it_after_a_long_block() {
    // The cpuidle-haltpoll driver: POLL and "haltpoll idle" (HLT, 1 µs).
    let s = vec![st("POLL", 0, 0), IdleState { polling: false, ..st("haltpoll idle", 1, 1) }];
    let mut h = Haltpoll::new();
    let inp = input(&s, 10 * MSEC);
    // No window yet: halt, and the tick may stop.
    assert_eq!(h.select(&inp), sel(1, true));
    // The halt lasted 30 µs (≤ guest_halt_poll_ns 200 µs): the window starts at grow_start.
    h.reflect(&wake(1, 30 * USEC));
    assert_eq!(h.poll_limit_ns, 50 * USEC);
    // After a halt: poll, keeping the tick, for up to the window.
    assert_eq!(h.select(&inp), sel(0, false));
    let g = Governor::Haltpoll(h.clone());
    assert_eq!(g.poll_limit(), Some(50 * USEC), "poll_idle()'s time limit is the window");
    // A wakeup inside the window: poll again.
    h.reflect(&wake(0, 10 * USEC));
    assert_eq!(h.select(&inp), sel(0, false));
    // The window ran out: halt next.
    h.reflect(&Wakeup { poll_time_limit: true, ..wake(0, 50 * USEC) });
    assert_eq!(h.select(&inp), sel(1, true));
    // That halt lasted 120 µs (> 50, ≤ 200): the window doubles.
    h.reflect(&wake(1, 120 * USEC));
    assert_eq!(h.poll_limit_ns, 100 * USEC);
    h.reflect(&wake(1, 150 * USEC));
    assert_eq!(h.poll_limit_ns, 200 * USEC, "× 2, at most guest_halt_poll_ns");
    // Long blocks (> 200 µs) halve it, and below grow_start it is 0: halting only.
    h.reflect(&wake(1, 5 * MSEC));
    assert_eq!(h.poll_limit_ns, 100 * USEC);
    h.reflect(&wake(1, 5 * MSEC));
    assert_eq!(h.poll_limit_ns, 50 * USEC);
    h.reflect(&wake(1, 5 * MSEC));
    assert_eq!(h.poll_limit_ns, 0, "25 µs < grow_start: no polling");
    assert_eq!(h.select(&inp), sel(1, true));
}

// --- through the simulator -------------------------------------------------------------------

fn with_governor(g: GovernorKind) -> impl FnOnce(&mut wakesim_model::Config) {
    move |cfg| cfg.governor = g
}

/// One task on CPU 1: `work` of compute, then a `sleep` (an hrtimer on CPU 1), `n` times.
fn periodic_on_cpu1(n: u64, work: Time, sleep_for: Time) -> wakesim_workloads::Workload {
    workload(vec![pinned(task("p", looped(n, vec![compute(work), sleep(sleep_for)])), &[1])], 0, 0)
}

#[test]
fn menu_keeps_the_tick_of_a_cpu_whose_idle_periods_are_shorter_than_a_tick() {
    // CPU 1 idles ~200 µs at a time, woken by its task's timer.
    let wl = periodic_on_cpu1(400, 50 * USEC, 200 * USEC);
    let mut s = sim_with("test-smt2", &wl, 1, with_governor(GovernorKind::Menu));
    s.step_until(20 * MSEC);
    // Sample CPU 1 while it idles in a state: the tick runs, CPU 1 is out of the NOHZ mask.
    let (mut idle_samples, mut in_c1) = (0, 0);
    s.step_until_with(60 * MSEC, |s, _, _| {
        if s.cpus[1].mode == wakesim_model::state::Mode::Idle {
            idle_samples += 1;
            assert!(!s.cpus[1].tick_stopped, "menu stopped the tick at {}", s.now());
            assert!(!s.nohz.idle_cpus.contains(1), "CPU 1 joined the NOHZ idle mask at {}", s.now());
            // C1 (2 µs) fits 200 µs, C6 (500 µs) does not; after a tick that lands just before
            // the timer, what is left may be POLL's.
            assert_ne!(s.cpus[1].idle_state, 2, "C6 at {}", s.now());
            in_c1 += (s.cpus[1].idle_state == 1) as u32;
        }
    });
    assert!(idle_samples > 100 && in_c1 * 10 > idle_samples * 9, "{in_c1} of {idle_samples} in C1");
    // The other CPUs, idle with no timer, stopped their ticks in the deepest state.
    assert!(s.cpus[5].tick_stopped && s.nohz.idle_cpus.contains(5));
    assert_eq!(s.cpus[5].idle_state, 2);

    // The EWMA stops the tick at every idle entry.
    let mut s = sim_with("test-smt2", &wl, 1, with_governor(GovernorKind::Ewma));
    s.step_until(20 * MSEC);
    let mut stopped = 0;
    s.step_until_with(60 * MSEC, |s, _, _| {
        stopped += (s.cpus[1].mode == wakesim_model::state::Mode::Idle && s.cpus[1].tick_stopped) as u32;
    });
    assert!(stopped > 100, "{stopped}");
}

#[test]
fn menu_sees_the_next_timer_and_stops_the_tick_for_a_long_sleep() {
    // CPU 1 sleeps 5 ms at a time: C6 (500 µs) fits, the tick stops for the sleep.
    let wl = periodic_on_cpu1(20, 100 * USEC, 5 * MSEC);
    let mut s = sim_with("test-smt2", &wl, 1, with_governor(GovernorKind::Menu));
    s.step_until(20 * MSEC);
    step_until_cond(&mut s, 40 * MSEC, "CPU 1 asleep in C6 with its tick stopped", |s| {
        s.cpus[1].mode == wakesim_model::state::Mode::Idle && s.cpus[1].idle_state == 2 && s.cpus[1].tick_stopped
    });
    assert!(s.nohz.idle_cpus.contains(1), "a stopped tick enters the NOHZ idle mask");
    assert_eq!(s.cpus[1].timers.len(), 1, "its task's timer is armed on CPU 1");
}

#[test]
fn haltpoll_guest_cpu_polls_its_short_idles_once_the_window_has_grown() {
    // CPU 1 idles 30 µs at a time: the first halt grows the window to 50 µs, then it polls.
    let wl = periodic_on_cpu1(200, 20 * USEC, 30 * USEC);
    let mut s = sim_with("test-smt2", &wl, 1, with_governor(GovernorKind::Haltpoll));
    s.step_until(2 * MSEC);
    let mut polls = 0;
    s.step_until_with(4 * MSEC, |s, _, _| {
        if s.cpus[1].mode == wakesim_model::state::Mode::Idle {
            polls += 1;
            assert_eq!(s.cpus[1].idle_state, 0, "polling, not halting, at {}", s.now());
        }
    });
    assert!(polls > 10, "{polls}");
    assert_eq!(s.cpus[1].gov.poll_limit(), Some(50 * USEC));
}

#[test]
fn a_poll_time_out_goes_round_the_idle_loop_to_a_deeper_state() {
    // menu, CPU 1 woken every 40 µs: POLL is not chosen for that, so force the case with the
    // haltpoll window: 50 µs of POLL, then the idle CPU with no timer halts.
    let wl = periodic_on_cpu1(50, 20 * USEC, 30 * USEC);
    let mut s = sim_with("test-smt2", &wl, 1, with_governor(GovernorKind::Haltpoll));
    // After the task's last sleep CPU 1 polls for the window, times out and halts (state 1).
    s.step_until(20 * MSEC);
    assert_eq!(s.cpus[1].mode, wakesim_model::state::Mode::Idle);
    assert_eq!(s.cpus[1].idle_state, 1, "halted after the window ran out");
    assert!(s.cpus[1].tick_stopped, "halt stops the tick");
}


