//! `wakesim calibrate`: measure this machine and write the `host-calibrated` cost profile and
//! the `host-measured` noise profile.
//!
//! | measurement (crate `wakesim-hostbench`) | field | how |
//! |---|---|---|
//! | `getppid` loop | `syscall` | direct |
//! | pipe write+read, 32 KiB vs 64 B | `copy_ps_per_byte` | direct |
//! | unix socketpair 100 B write + read, one thread (the hot pair) | `unix_send`, `unix_recv` start values; the base of `sock_msg_cold` and the line counts | direct, minus syscalls and copies |
//! | a unix socket streamed between two threads pinned to one CPU, each side's CPU time | the `unix_send : unix_recv` split | each side minus its syscall and copy |
//! | a read of an empty pipe / unix socket returning `EAGAIN` | `pipe_wait`, `sock_wait` | direct, minus the syscall |
//! | pipe 100 B write + read, one thread | `pipe_send`, `pipe_recv` | direct, minus syscalls and copies |
//! | loopback TCP / UDP, bursts of 64 B sends then the receives draining them, one thread | `tcp_send`, `tcp_recv`, `udp_send`, `udp_recv` | direct, minus the syscall and copy |
//! | sysfs `cpu0/cache/index*` | `private_cache_bytes` | the largest cache shared only within the core |
//! | the unix pair with ≥ 8 such caches' worth of skbs queued on one pinned thread | `sock_msg_cold` | minus the hot pair |
//! | one cache line bounced between two pinned threads, per distance class | `line.<class>` | direct (half a round trip) |
//! | a pipe / socketpair handed between two pinned threads (nearest pair), no sleeping, single messages and bursts of 16 | `pipe_lines`, `sock_lines`, `pipe_msg_lines`, `sock_msg_lines` | the burst's extra per message gives the message's lines; the rest of the single round trip, the channel's (`handoff` module doc) |
//! | a 16 KiB buffer two pinned threads (nearest pair) take turns writing and reading, and the same copies on one CPU | `stream_write_overlap`, `stream_read_overlap` | 256 lines × line transfer / the extra copy time (`reuse` module doc) |
//! | runqueue lines one CPU writes and another walks as `update_sg_lb_stats()` does, then walks again (nearest pair of two cores) | `lb_walk_line_pct` | (first walk − second) / CPUs / line (`lb_scan` module doc) |
//! | the same runqueue lines probed as `select_idle_cpu()`'s loop does, over busy CPUs | `sis_probe_line_pct` | (first scan − second) / CPUs / line |
//! | `taskset -c C perf bench sched pipe -T`, natively | `context_switch` | model solved to match |
//! | the same with processes | `context_switch_mm` | model solved to match |
//! | `taskset -c C hackbench -g 1 -l 200`, natively | `unix_send`, `unix_recv` (in place; step 4's split) | model solved to match |
//! | `FUTEX_WAIT` on a changed word (returns at once), one thread | `futex_wait`, `futex_wake` | direct, minus the syscall |
//! | futex wake, target CPU idle minus target busy | idle state `exit_latency` | direct |
//! | the same idle-target futex wake, the waker's `futex_wake` call (nearest pair) | `ipi_send` | model solved to match |
//! | `perf bench sched pipe` with its two processes pinned to a pair, per distance class | `ipi_delivery.<class>` | model solved to match (the pipe's costs are measured above) |
//! | futex wake to an idle CPU, nearest pair (alternating with the pipe) | `futex_lines` | model solved to match; without the pipe figure, `ipi_delivery` instead |
//!
//! Last, the background activity ([`noise`]): the osnoise tracer, else a self-timing loop on
//! every CPU with tracefs naming what interrupted it, else the loop alone; written as a noise
//! profile beside the cost profile (`host-noise.toml`), `--machine host` runs' default `--noise`.
//!
//! Everything else keeps the built-in `host` profile's value (its source comments in
//! `crates/costs/src/profiles/host.rs`). A measurement that cannot run (one usable CPU, pinning
//! refused) is skipped with the reason, and its fields keep their base values.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use crate::args::CalibrateArgs;
use crate::fit::{simulate, solve};
use crate::quiet::{column, dropped_note, quiet_rounds};

mod file;
pub mod noise;
use file::{annotate, header, print_table, Measured};
use crate::UserError;
use wakesim_costs::{CostProfile, IdleState};
use wakesim_hostbench::{calib, handoff, queued, sys, Summary};
use wakesim_machine::{Dist, Machine};
use wakesim_model::Features;

/// `$XDG_CONFIG_HOME/wakesim/host-costs.toml`, else `$HOME/.config/wakesim/host-costs.toml`
/// (XDG Base Directory spec: a relative `XDG_CONFIG_HOME` is ignored).
pub fn default_profile_path() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from).filter(|p| p.is_absolute());
    let dir = xdg.or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(dir.join("wakesim").join("host-costs.toml"))
}

/// Where `wakesim calibrate` writes this machine's measured noise profile, beside the cost
/// profile; `--machine host` runs use it as their default `--noise`.
pub fn default_noise_path() -> Option<PathBuf> {
    default_profile_path().map(|p| p.with_file_name("host-noise.toml"))
}


fn progress(step: usize, total: usize, what: &str) {
    eprintln!("calibrate: [{step}/{total}] {what}");
}

pub fn calibrate(a: CalibrateArgs) -> Result<(), UserError> {
    let t0 = Instant::now();
    let reps = a.reps.unwrap_or(if a.quick { 3 } else { 7 });
    if reps == 0 {
        return Err(UserError("--reps must be at least 1".into()));
    }
    let scale: u64 = if a.quick { 10 } else { 1 };
    // Only the default location's directory is created; an explicit --out must have one.
    let default_dir = a.out.is_none();
    let path = match a.out.clone() {
        Some(p) => p,
        None => default_profile_path().ok_or_else(|| {
            UserError("no default location for the profile: neither XDG_CONFIG_HOME nor HOME is set; use --out FILE".into())
        })?,
    };
    if default_dir {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).map_err(|e| UserError(format!("cannot create {}: {e}", d.display())))?;
        }
    }
    let noise_window = noise::check_window(a.noise_window.unwrap_or(if a.quick { 1.0 } else { noise::DEFAULT_WINDOW_S }))?;
    let noise_path = noise::out_path(a.noise_out.as_deref(), (!default_dir).then_some(path.as_path()))
        .ok_or_else(|| UserError("no default location for the noise profile: neither XDG_CONFIG_HOME nor HOME is set; use --noise-out FILE".into()))?;
    noise::preflight(a.noise_method)?;
    if a.noise_only {
        return noise_only(&a, &noise_path, noise_window, t0);
    }
    crate::output::check_writable(&path)?;
    crate::output::check_writable(&noise_path)?;

    let mut other = wakesim_hostbench::sys::OtherLoad::start();
    let machine = wakesim_machine::host()?;
    let features = Features::for_kernel(wakesim_model::features::NEWEST_KERNEL).map_err(UserError)?;
    let cpus = sys::allowed_cpus();
    let pairs = distance_pairs(&machine, &cpus);
    // 8 one-CPU steps; per distance class the line and two futex wakes (the idle one alternating
    // with a pipe ping-pong); the nearest pair's two handoffs and its buffer turns (or one line
    // saying the cross-CPU part was skipped); the balance walk on the nearest pair of two cores.
    // The background activity last.
    let walk_pair = pairs.iter().position(|&(d, _, _)| d != Dist::Smt);
    let total = 9 + if pairs.is_empty() { 1 } else { 3 * pairs.len() + 3 + 2 * walk_pair.is_some() as usize };
    let mut p = wakesim_costs::profile_for("host")?;
    p.name = "host-calibrated".into();
    let mut notes: BTreeMap<String, String> = BTreeMap::new();
    let mut table: Vec<Measured> = Vec::new();
    let note = |s: &Summary, unit: &str| {
        let p = if unit == "s" { 4 } else { 1 };
        format!("measured median {:.p$} {unit}, min {:.p$}, max {:.p$}, n {}", s.median, s.min, s.max, s.n)
    };

    // 1. syscall
    progress(1, total, "null syscall (getppid) loop");
    let s = Summary::of(&calib::syscall_ns(200_000 / scale, reps)).ok_or("no syscall figure")?;
    p.syscall = s.median.round() as u64;
    notes.insert("syscall".into(), note(&s, "ns"));
    table.push(Measured { what: "syscall (getppid)".into(), unit: "ns", result: Ok(s) });

    // 2. the futex's own work: a FUTEX_WAIT that returns at once (its word differs) does all of
    // futex_wait_setup() (key, hash, bucket lock, word read); minus the syscall. A wake with a
    // waiter does the same bucket work plus the walk and unqueue: it is given the same figure.
    progress(2, total, "futex ops that do not sleep (FUTEX_WAIT on a changed word, FUTEX_WAKE with no waiter)");
    let (fw, fk) = calib::futex_ops_ns(200_000 / scale, reps);
    let (fw, fk) = (Summary::of(&fw).ok_or("no futex figure")?, Summary::of(&fk).ok_or("no futex figure")?);
    let own = (fw.median - p.syscall as f64).max(0.0).round() as u64;
    (p.futex_wait, p.futex_wake) = (own, own);
    notes.insert("futex_wait".into(), format!("measured: FUTEX_WAIT on a changed word − syscall, {}", note(&fw, "ns")));
    notes.insert(
        "futex_wake".into(),
        format!("measured: as futex_wait (a wake with a waiter does its bucket work and more; one with none, {:.0} ns, skips the lock)", fk.median),
    );
    table.push(Measured { what: "FUTEX_WAIT, word changed".into(), unit: "ns", result: Ok(fw) });
    table.push(Measured { what: "FUTEX_WAKE, no waiter".into(), unit: "ns", result: Ok(fk) });

    // 3. copy
    progress(3, total, "pipe copy per byte (32 KiB vs 64 B writes)");
    let copy = calib::copy_ps_per_byte(20_000 / scale, reps).map_err(|e| e.to_string()).and_then(|v| Summary::of(&v).ok_or("no figure".into()));
    if let Ok(s) = &copy {
        p.copy_ps_per_byte = s.median.round() as u64;
        notes.insert("copy_ps_per_byte".into(), note(s, "ps/B"));
    }
    table.push(Measured { what: "pipe copy".into(), unit: "ps/B", result: copy });

    // 4. per-message socket work: unix_send + unix_recv = pair − 2 syscalls − 2 copies, split as
    // a socket stream between two threads on one CPU splits its CPU time (`stream` module doc:
    // the split decides whether a woken receiver preempts its sender); without that figure, in
    // the base profile's ratio.
    let cpu = cpus.first().copied().unwrap_or(0);
    progress(4, total, "unix socket 100-byte write + read, one thread (and a pipe for comparison); reads of the empty channels; a socket stream between two threads on one CPU; loopback TCP and UDP sends and receives");
    let pipe_pair = summarise(calib::channel_pair_ns(false, 100, 20_000 / scale, reps));
    let sock = summarise(calib::channel_pair_ns(true, 100, 20_000 / scale, reps));
    let stream = wakesim_hostbench::stream::stream_split_ns(cpu, 50_000 / scale, reps).map_err(|e| format!("skipped: {e}"));
    let side = |f: fn(&wakesim_hostbench::stream::Split) -> f64| -> Result<Summary, String> {
        let v: Vec<f64> = stream.as_ref().map_err(Clone::clone)?.iter().map(f).collect();
        Summary::of(&v).ok_or_else(|| "no figure".into())
    };
    let (sender, receiver) = (side(|s| s.sender_ns), side(|s| s.receiver_ns));
    if let Ok(s) = &sock {
        let extra = (s.median - 2.0 * p.syscall as f64 - 2.0 * p.copy(100) as f64).max(0.0);
        // Each side's own socket work in the stream: its time per message − syscall − copy.
        let own = |x: &Summary| (x.median - (p.syscall + p.copy(100)) as f64).max(1.0).round() as u64;
        let (n, (ws, wr)) = match (&sender, &receiver) {
            (Ok(a), Ok(b)) => (
                format!("measured: socket pair {:.0} ns − 2 syscalls − 2 copies, split as a one-CPU stream's sender {:.0} : receiver {:.0} ns/message (each − syscall − copy), pair {}", s.median, a.median, b.median, note(s, "ns")),
                (own(a), own(b)),
            ),
            _ => (format!("measured: base profile's share of (socket pair {:.0} ns − 2 syscalls − 2 copies), pair {}", s.median, note(s, "ns")), (p.unix_send, p.unix_recv)),
        };
        (p.unix_send, p.unix_recv) = split(extra, ws, wr);
        notes.insert("unix_send".into(), n.clone());
        notes.insert("unix_recv".into(), n);
    }
    if let Ok(s) = &pipe_pair {
        let extra = (s.median - 2.0 * p.syscall as f64 - 2.0 * p.copy(100) as f64).max(0.0);
        let (send, recv) = split(extra, p.pipe_send, p.pipe_recv);
        (p.pipe_send, p.pipe_recv) = (send, recv);
        let n = format!("measured: share of (pipe pair {:.0} ns − 2 syscalls − 2 copies), pair {}", s.median, note(s, "ns"));
        notes.insert("pipe_send".into(), n.clone());
        notes.insert("pipe_recv".into(), n);
    }
    // A blocking read's check before it sleeps: a read of the empty channel returning EAGAIN,
    // minus the syscall.
    let empty = [false, true].map(|socket| summarise(calib::empty_read_ns(socket, 20_000 / scale, reps)));
    let syscall = p.syscall as f64;
    for (s, (field, slot)) in empty.iter().zip([("pipe_wait", &mut p.pipe_wait), ("sock_wait", &mut p.sock_wait)]) {
        if let Ok(s) = s {
            *slot = (s.median - syscall).max(0.0).round() as u64;
            notes.insert(field.into(), format!("measured: read of the empty channel (EAGAIN) − syscall, {}", note(s, "ns")));
        }
    }
    let hot_pairs = [pipe_pair.as_ref().ok().map(|s| s.median), sock.as_ref().ok().map(|s| s.median)];
    table.push(Measured { what: "pipe 100 B write+read".into(), unit: "ns", result: pipe_pair });
    table.push(Measured { what: "unix socket 100 B write+read".into(), unit: "ns", result: sock });
    let [pipe_empty, sock_empty] = empty;
    table.push(Measured { what: "read of an empty pipe (EAGAIN)".into(), unit: "ns", result: pipe_empty });
    table.push(Measured { what: "read of an empty unix socket (EAGAIN)".into(), unit: "ns", result: sock_empty });
    table.push(Measured { what: format!("socket stream on CPU {cpu}, sender per message"), unit: "ns", result: sender });
    table.push(Measured { what: format!("socket stream on CPU {cpu}, receiver per message"), unit: "ns", result: receiver });
    // Loopback TCP and UDP, each side on its own: a send's path includes the NET_RX softirq on
    // this CPU up to the receive queue; minus the syscall and the 64-byte copy.
    for tcp in [true, false] {
        let name = if tcp { "TCP" } else { "UDP" };
        let r = calib::loopback_ns(tcp, 20_000 / scale, reps).map_err(|e| format!("skipped: {e}"));
        let side = |pick: fn(&(Vec<f64>, Vec<f64>)) -> &Vec<f64>| -> Result<Summary, String> {
            Summary::of(pick(r.as_ref().map_err(Clone::clone)?)).ok_or_else(|| "no figure".into())
        };
        let (send, recv) = (side(|x| &x.0), side(|x| &x.1));
        let own = (p.syscall + p.copy(64)) as f64;
        let (fs, fr) = if tcp { (&mut p.tcp_send, &mut p.tcp_recv) } else { (&mut p.udp_send, &mut p.udp_recv) };
        for (res, (field, slot)) in [(&send, (if tcp { "tcp_send" } else { "udp_send" }, fs)), (&recv, (if tcp { "tcp_recv" } else { "udp_recv" }, fr))] {
            if let Ok(x) = res {
                *slot = (x.median - own).max(1.0).round() as u64;
                notes.insert(field.into(), format!("measured: loopback {name} 64 B, one thread, bursts of {} − syscall − copy, {}", calib::LOOPBACK_BURST, note(x, "ns")));
            }
        }
        table.push(Measured { what: format!("loopback {name} 64 B send (incl. NET_RX softirq)"), unit: "ns", result: send });
        table.push(Measured { what: format!("loopback {name} 64 B receive"), unit: "ns", result: recv });
    }

    // 5. socket messages that left the cache: the same pair with ≥ 8 private caches' worth of
    // skbs queued, minus the hot pair.
    let cache = queued::private_cache_bytes(cpu);
    if let Some(bytes) = cache {
        p.private_cache_bytes = bytes;
        notes.insert("private_cache_bytes".into(), format!("sysfs: CPU {cpu}'s largest cache shared only within its core"));
    }
    let sockets = queued::sockets_for(8 * p.private_cache_bytes);
    let what = format!("unix socket 100 B write+read, {} skbs queued", sockets * queued::DEPTH);
    progress(5, total, &what);
    let deep = summarise(queued::queued_pair_ns(cpu, sockets, (4 / scale).max(1), reps));
    if let (Ok(d), Some(hot)) = (&deep, hot_pairs[1]) {
        p.sock_msg_cold = (d.median - hot).max(0.0).round() as u64;
        notes.insert("sock_msg_cold".into(), format!("measured: queued pair {:.0} ns − hot pair {hot:.0} ns, queued {}", d.median, note(d, "ns")));
    }
    table.push(Measured { what, unit: "ns", result: deep });

    // 6-7. context switch on one CPU: pinned pipe ping-pong, threads then processes. Their
    // repetitions alternate (threads, processes, threads, …): this VM's pinned pipe switches
    // between a fast and a slow state from one minute to the next, and measured one after the
    // other the two could meet different states and solve `context_switch_mm` (their
    // difference) to nonsense.
    let loops = 20_000 / scale;
    let host_cpus = cpus.len().max(1) as u32;
    let cmd_for = |threaded: bool| {
        let mut cmd = vec!["taskset".to_string(), "-c".into(), cpu.to_string(), "perf".into(), "bench".into(), "sched".into(), "pipe".into()];
        if threaded {
            cmd.push("-T".into());
        }
        cmd.extend(["-l".to_string(), loops.to_string()]);
        cmd
    };
    progress(6, total, &format!("pipe ping-pong pinned to CPU {cpu}, threads and processes alternating"));
    let pingpongs = quiet_rounds(reps, host_cpus, || Ok(vec![pingpong(&cmd_for(true), host_cpus, 1)?.median, pingpong(&cmd_for(false), host_cpus, 1)?.median]));
    progress(7, total, "solving context_switch and context_switch_mm through the model");
    for (threaded, field) in [(true, "context_switch"), (false, "context_switch_mm")] {
        let cmd = cmd_for(threaded);
        let dropped = pingpongs.as_ref().map_or(0, |x| x.repeated);
        let what = format!("pipe ping-pong pinned to CPU {cpu}, {}{}", if threaded { "threads" } else { "processes" }, if threaded { dropped_note(dropped) } else { String::new() });
        let measured = pingpongs.as_ref().map_err(|e| e.clone()).and_then(|r| column(&r.rounds, usize::from(!threaded)));
        if let Ok(s) = &measured {
            let w = crate::native::workload(&cmd, machine.nr_cpus() as u32)?;
            let base = if threaded { p.context_switch } else { p.context_switch_mm };
            let set = |p: &mut CostProfile, v| if threaded { p.context_switch = v } else { p.context_switch_mm = v };
            let mut trial = p.clone();
            let sol = solve(base, s.median, |v| {
                set(&mut trial, v);
                Ok(simulate(&machine, &trial, &features, &w, 1)? * 1000.0)
            })?;
            set(&mut p, sol.value);
            notes.insert(field.into(), solved_note(&sol, format!("model {:.0} ns/round trip = {}", sol.achieved, note(s, "ns/round trip"))));
        }
        table.push(Measured { what, unit: "ns/rt", result: measured });
    }

    // 8. socket work in place: the hot one-thread pair above keeps everything in L1; inside a
    // process-mode hackbench on one CPU (40 processes, 20 sockets, skbs queued and freed out of
    // order) each message costs about twice as much. unix_send + unix_recv are solved, in the
    // split step 4 measured, until the model's pinned hackbench matches the native one; the model's
    // other charges (switches, wakeups, cold messages) stay in place. Cross-CPU costs are not
    // in this fit: one CPU.
    let cmd = pinned_hackbench(cpu, 200 / scale);
    let mut what = format!("hackbench -g 1 -l {} pinned to CPU {cpu}", 200 / scale);
    progress(8, total, &what);
    let measured = quiet_rounds(reps, host_cpus, || Ok(vec![native_metric(&cmd, host_cpus, 1, 1.0)?.median])).and_then(|r| {
        what += &dropped_note(r.repeated);
        column(&r.rounds, 0)
    });
    if let Ok(s) = &measured {
        let w = crate::native::workload(&cmd, machine.nr_cpus() as u32)?;
        let (send0, recv0) = (p.unix_send, p.unix_recv);
        let mut trial = p.clone();
        let sol = solve(send0 + recv0, s.median, |v| {
            (trial.unix_send, trial.unix_recv) = split(v as f64, send0, recv0);
            simulate(&machine, &trial, &features, &w, 1)
        })?;
        (p.unix_send, p.unix_recv) = split(sol.value as f64, send0, recv0);
        let n = solved_note(&sol, format!("model {:.3} s for `{}` (from {send0} + {recv0}: the hot pair in step 4's split) = {}", sol.achieved, cmd.join(" "), note(s, "s")));
        notes.insert("unix_send".into(), n.clone());
        notes.insert("unix_recv".into(), n);
    }
    table.push(Measured { what, unit: "s", result: measured });

    // 9.. cross-CPU wakeups per distance class, idle target then busy target.
    let mut step = 9;
    let mut first_pair = true;
    if pairs.is_empty() {
        let why = format!("only one CPU usable (online and allowed: {cpus:?})");
        progress(step, total, &format!("cross-CPU wakeups skipped: {why}"));
        table.push(Measured { what: "cross-CPU wakeup".into(), unit: "ns", result: Err(why) });
    }
    let rounds = 5_000 / scale;
    let (mut exit_set, mut futex_set, mut ipi_send_set) = (false, false, false);
    for (i, (dist, a, b)) in pairs.into_iter().enumerate() {
        let class = dist.name();
        // The line transfer first: the wake solve below runs the model, which charges it.
        progress(step, total, &format!("cache line bounced CPU {a} <-> {b} ({class})"));
        let line = summarise(calib::line_transfer_ns(a, b, 200_000 / scale, reps));
        step += 1;
        if let Ok(s) = &line {
            p.line.set(dist, s.median.round() as u64);
            notes.insert(format!("line.{class}"), format!("measured: half a round trip, {}", note(s, "ns")));
        }
        let line_ns = line.as_ref().ok().map(|s| s.median);
        table.push(Measured { what: format!("line transfer {a}<->{b} {class}"), unit: "ns", result: line });
        if first_pair {
            first_pair = false;
            // Nearest pair only: how many lines a pipe / socket op and each message pull from
            // the other CPU (handoff module doc: single messages, then bursts).
            for (i, socket) in [false, true].into_iter().enumerate() {
                let kind = if socket { "unix socket" } else { "pipe" };
                progress(step, total, &format!("{kind} handed CPU {a} <-> {b} without sleeping, single messages and bursts of {BURST}"));
                step += 1;
                let one = summarise(handoff::channel_handoff_ns(socket, a, b, 1, 20_000 / scale, reps));
                let burst = summarise(handoff::channel_handoff_ns(socket, a, b, BURST, 20_000 / scale / BURST as u64, reps));
                if let (Ok(s1), Ok(sk), Some(hot), Some(l)) = (&one, &burst, hot_pairs[i], line_ns) {
                    let (chan, msg) = channel_lines(s1.median, sk.median, hot, l);
                    let (cf, mf) = if socket { ("sock_lines", "sock_msg_lines") } else { ("pipe_lines", "pipe_msg_lines") };
                    if socket { (p.sock_lines, p.sock_msg_lines) = (chan, msg) } else { (p.pipe_lines, p.pipe_msg_lines) = (chan, msg) }
                    let how = format!("{kind} handoff {:.0} ns/rt single, {:.0} bursts of {BURST}; hot pair {hot:.0}, line {l:.0}", s1.median, sk.median);
                    notes.insert(mf.into(), format!("measured: ((burst − single) / {} msgs − hot pair) / line; {how}", 2 * (BURST - 1)));
                    notes.insert(cf.into(), format!("measured: (single − 2 hot pairs − 2 flag lines − 2 msgs' lines) / 4 ops / line; {how}"));
                }
                table.push(Measured { what: format!("{kind} handed {a}<->{b}, 2 writes + 2 reads"), unit: "ns/rt", result: one });
                table.push(Measured { what: format!("{kind} handed {a}<->{b}, bursts of {BURST}"), unit: "ns/rt", result: burst });
            }
            // Nearest pair only: a 16 KiB buffer the two CPUs take turns on, as a loopback TCP
            // stream's page frag (reuse module doc): the misses a streaming copy overlaps.
            progress(step, total, &format!("16 KiB buffer written on CPU {a} and read on {b} in turns"));
            step += 1;
            use wakesim_hostbench::reuse::{buffer_turns_ns, Turns};
            let turns = buffer_turns_ns(a, b, reps).map_err(|e| format!("skipped: {e}"));
            let of = |f: fn(&Turns) -> Option<f64>| turns.as_ref().ok().and_then(|ts| Summary::of(&ts.iter().filter_map(f).collect::<Vec<_>>()));
            let lines = of(|t| Some(t.line)).map_or(f64::NAN, |s| s.median);
            for (key, overlap, field) in [
                ("stream_write_overlap", of(|t| t.write_overlap), &mut p.stream_write_overlap),
                ("stream_read_overlap", of(|t| t.read_overlap), &mut p.stream_read_overlap),
            ] {
                if let Some(s) = overlap {
                    *field = (s.median.round() as u64).max(1);
                    notes.insert(key.into(), format!("measured: 256 lines × each turn's line ({lines:.0} ns median) / (copy after the other CPU − copy on one CPU), {}", note(&s, "in flight")));
                }
            }
            for (what, copy) in [("16 KiB write after the other CPU's read", of(|t| Some(t.write))), ("16 KiB read after the other CPU's write", of(|t| Some(t.read)))] {
                let result = turns.as_ref().map_err(Clone::clone).and_then(|_| copy.ok_or_else(|| "no figure".to_string()));
                table.push(Measured { what: format!("{what} ({a}<->{b})"), unit: "ns", result });
            }
        }
        if walk_pair == Some(i) {
            // The first pair of two cores (SMT siblings share the lines the walks read): a
            // balance pass's walk and select_idle_cpu()'s loop over runqueues the other CPU
            // wrote (lb_scan module doc). A repetition whose line took under half the pair's
            // measured one ran where the two CPUs shared their caches (a hypervisor may move vCPUs).
            use wakesim_hostbench::lb_scan::{idle_probe_line_share, median_share, walk_line_share};
            let min_line = line_ns.map_or(0.0, |l| l / 2.0);
            /// One walk over runqueues the other CPU wrote, and the cost key it measures.
            struct ShareStep {
                verb: &'static str,
                kernel: &'static str,
                name: &'static str,
                walk: fn(usize, usize, usize) -> std::io::Result<Vec<wakesim_hostbench::lb_scan::Scan>>,
                key: &'static str,
                set: fn(&mut wakesim_costs::CostProfile, u64),
                max: f64,
                per: &'static str,
            }
            let walks = [
                ShareStep { verb: "walked", kernel: "update_sg_lb_stats()", name: "balance walk", walk: |a, b, r| walk_line_share(a, b, false, r), key: "lb_walk_line_pct", set: |p, v| p.lb_walk_line_pct = v, max: 600.0, per: "per CPU" },
                ShareStep { verb: "probed", kernel: "select_idle_cpu()", name: "idle scan", walk: idle_probe_line_share, key: "sis_probe_line_pct", set: |p, v| p.sis_probe_line_pct = v, max: 300.0, per: "per probe" },
            ];
            for ShareStep { verb, kernel, name, walk, key, set, max, per } in walks {
                progress(step, total, &format!("runqueue lines written on CPU {a}, {verb} on {b} as {kernel} does"));
                step += 1;
                let share = walk(a, b, reps)
                    .map_err(|e| format!("skipped: {e}"))
                    .and_then(|s| median_share(&s, min_line).ok_or_else(|| "no repetition between two cores".to_string()));
                if let Ok(s) = &share {
                    set(&mut p, (s.median * 100.0).round().clamp(0.0, max) as u64);
                    notes.insert(key.into(), format!("measured: ({name} after the other CPU's writes − the same {name} again) / CPUs / line, × 100; {}", note(s, &format!("line transfers {per}"))));
                }
                table.push(Measured { what: format!("{name} {a}<->{b}, {per}"), unit: "lines", result: share });
            }
        }
        // The idle-target futex wake and a pipe ping-pong between two processes pinned to the same CPUs,
        // repetitions alternating (the host's state changes from one minute to the next; their
        // difference is what separates the futex's own cross-CPU cost from the IPI's).
        progress(step, total, &format!("futex wakeup CPU {a} -> {b} ({class}), target idle, alternating with a pipe ping-pong between them"));
        let pipe_w = pinned_pipe(&machine, a, b, 20_000 / scale)?;
        // A round is the futex wake then the pipe; a failing pipe leaves the futex figures.
        let both = quiet_rounds(reps, host_cpus, || {
            let f = calib::cross_cpu_wake_reps(a, b, false, 0, rounds, 1).map_err(|e| e.to_string())?[0];
            Ok(vec![f.latency, workload_metric(&pipe_w, 1, 1000.0).map_or(f64::NAN, |x| x.median), f.call])
        });
        let dropped = both.as_ref().map_or(0, |x| x.repeated);
        let idle = both.as_ref().map_err(|e| e.clone()).and_then(|r| column(&r.rounds, 0));
        let call = both.as_ref().map_err(|e| e.clone()).and_then(|r| column(&r.rounds, 2));
        let pipe = both.as_ref().map_err(|e| e.clone()).and_then(|r| {
            if r.rounds.iter().any(|x| x[1].is_nan()) {
                Err("skipped: the pinned pipe ping-pong did not run".to_string())
            } else {
                column(&r.rounds, 1)
            }
        });
        progress(step + 1, total, &format!("futex wakeup CPU {a} -> {b} ({class}), target busy (SCHED_IDLE spinner)"));
        let busy = summarise(calib::cross_cpu_wake_ns(a, b, true, rounds, reps));
        step += 2;
        if let (Ok(i), Ok(bz), false) = (&idle, &busy, exit_set) {
            exit_set = true;
            set_idle_exit(&mut p, (i.median - bz.median).max(0.0).round() as u64, &mut notes, &format!("idle − busy wake latency, {} − {} ns ({class})", i.median.round(), bz.median.round()));
        }
        // The IPI's send from the waker's side of the idle-target wake (nearest pair: one figure
        // for the machine): how long the `futex_wake` that wakes a sleeper on an idle CPU keeps
        // the waker. In a guest without IPI virtualisation that is the trapped ICR write and the
        // hypervisor's kick of the halted vCPU, microseconds that a streaming sender pays at
        // every wakeup (its receiver's CPU idles between bursts).
        if let (Ok(c), false) = (&call, ipi_send_set) {
            ipi_send_set = true;
            let call_w = calib::wake_call_workload(a, b, 2_000);
            let mut trial = p.clone();
            let sol = solve(p.ipi_send, c.median, |v| {
                trial.ipi_send = v;
                simulate(&machine, &trial, &features, &call_w, 1)
            })?;
            if sol.slope > 0.0 {
                p.ipi_send = sol.value;
            }
            notes.insert("ipi_send".into(), solved_note(&sol, format!("model futex_wake of a sleeper on an idle CPU {:.0} ns ({class}) = {}", sol.achieved, note(c, "ns (waker's call)"))));
        }
        // The IPI from the pipe ping-pong (its channel costs are measured above); then the
        // futex's lines from the futex wake, whose other terms are now all set. Without the pipe
        // figure the IPI comes from the futex wake and the futex keeps its base line count.
        let wake_w = calib::wake_workload(a, b, 2_000);
        let ipi_from = if pipe.is_ok() { (&pipe_w, &pipe, "model pipe ping-pong", "ns/round trip") } else { (&wake_w, &idle, "model wake latency", "ns (idle target)") };
        if let (w, Ok(m), what, unit) = ipi_from {
            let scale = if pipe.is_ok() { 1000.0 } else { 1.0 };
            let mut trial = p.clone();
            let sol = solve(p.ipi_delivery.get(dist), m.median, |v| {
                trial.ipi_delivery.set(dist, v);
                Ok(simulate(&machine, &trial, &features, w, 1)? * scale)
            })?;
            if sol.slope > 0.0 {
                p.ipi_delivery.set(dist, sol.value);
            }
            notes.insert(format!("ipi_delivery.{class}"), solved_note(&sol, format!("{what} {:.0} {unit} = {}", sol.achieved, note(m, unit))));
        }
        if let (Ok(i), Ok(_), false) = (&idle, &pipe, futex_set) {
            futex_set = true;
            let mut trial = p.clone();
            let sol = solve(p.futex_lines, i.median, |v| {
                trial.futex_lines = v;
                simulate(&machine, &trial, &features, &wake_w, 1)
            })?;
            if sol.slope > 0.0 {
                p.futex_lines = sol.value;
            }
            notes.insert("futex_lines".into(), solved_note(&sol, format!("model futex wake latency {:.0} ns ({class}) = {}", sol.achieved, note(i, "ns (idle target)"))));
        }
        table.push(Measured { what: format!("pipe ping-pong {a}<->{b}, pinned processes{}", dropped_note(dropped)), unit: "ns/rt", result: pipe });
        table.push(Measured { what: format!("wake {a}->{b} {class}, idle target"), unit: "ns", result: idle });
        table.push(Measured { what: format!("wake {a}->{b} {class}, idle target: the waker's futex_wake call"), unit: "ns", result: call });
        table.push(Measured { what: format!("wake {a}->{b} {class}, busy target"), unit: "ns", result: busy });
    }
    p.validate()?;

    progress(total, total, &format!("background activity, {:.1} s with every CPU busy", noise_window as f64 / 1e9));
    let t_noise = Instant::now();
    let bg = noise::measure(a.noise_method, noise_window, &cpus, p.irq_entry_exit, machine.nr_cpus())?;
    let noise_text = noise::file_text(&bg, &machine, t_noise.elapsed().as_secs_f64());

    let secs = t0.elapsed().as_secs_f64();
    let other = other.stop(cpus.len().max(1) as u32);
    let text = header(&machine, secs, a.quick, other, &table) + &annotate(&wakesim_costs::to_toml(&p), &notes);
    crate::output::write_atomic(&path, &text)?;
    crate::output::write_atomic(&noise_path, &noise_text)?;
    print_table(&table);
    noise::print(&bg);
    crate::outln!();
    if let Some(x) = other.filter(|x| x.other_pct + x.steal_pct > 10.0) {
        crate::outln!("note: while measuring, other processes used {:.0} % of the machine and the hypervisor stole {:.0} %; for a clean profile, calibrate on a quiet machine", x.other_pct, x.steal_pct);
    }
    crate::outln!("wrote {} ({:.1} s); `--machine host` loads it from the default location, `--costs FILE` from anywhere", path.display(), secs);
    crate::outln!("wrote {}; `--machine host` runs with it from the default location, `--noise FILE` from anywhere", noise_path.display());
    Ok(())
}

/// `calibrate --noise-only`: the background activity alone; the cost profile is left as it is
/// (its `irq_entry_exit`, from the calibrated profile if there is one, is the only figure used).
fn noise_only(a: &CalibrateArgs, noise_path: &std::path::Path, window: u64, t0: Instant) -> Result<(), UserError> {
    if a.noise_out.is_none() && a.out.is_none() {
        if let Some(d) = noise_path.parent() {
            std::fs::create_dir_all(d).map_err(|e| UserError(format!("cannot create {}: {e}", d.display())))?;
        }
    }
    crate::output::check_writable(noise_path)?;
    let machine = wakesim_machine::host()?;
    let costs = crate::run::resolve_costs(&machine, None)?;
    let cpus = sys::allowed_cpus();
    progress(1, 1, &format!("background activity, {:.1} s with every CPU busy", window as f64 / 1e9));
    let bg = noise::measure(a.noise_method, window, &cpus, costs.irq_entry_exit, machine.nr_cpus())?;
    crate::output::write_atomic(noise_path, &noise::file_text(&bg, &machine, t0.elapsed().as_secs_f64()))?;
    noise::print(&bg);
    crate::outln!();
    crate::outln!("wrote {} ({:.1} s); `--machine host` runs with it from the default location, `--noise FILE` from anywhere", noise_path.display(), t0.elapsed().as_secs_f64());
    Ok(())
}

/// The file note of a solved field. A solve that did not converge (the model's figure did not
/// move with the field, or the target lies beyond the field's floor of 0) says so, and says it
/// on screen too, so a field left at its base or at 0 is not mistaken for a measurement.
fn solved_note(sol: &crate::fit::Solved, what: String) -> String {
    if sol.slope <= 0.0 {
        eprintln!("calibrate: warning: not solved, the model's figure did not respond ({what}); the base value is kept");
        format!("NOT solved (the model's figure did not respond; base value kept): {what}")
    } else if sol.value == 0 {
        eprintln!("calibrate: warning: solved to 0, the target is below what the model charges without this cost ({what})");
        format!("solved to 0 (target below the model's floor; implausible, recalibrate on a quieter machine): {what}")
    } else {
        format!("solved: {what}")
    }
}

/// Messages per burst in the second handoff measurement.
const BURST: usize = 16;

/// (channel lines per op, lines per message) from the handoff round trips with single messages
/// and with bursts of [`BURST`] (handoff module doc):
/// `rt(k) = 2k · (hot + msg · line) + 2 · line + 4 · chan · line`.
fn channel_lines(single: f64, burst: f64, hot: f64, line: f64) -> (u64, u64) {
    let line = line.max(1.0);
    let per_msg = (burst - single) / (2.0 * (BURST - 1) as f64);
    let msg = ((per_msg - hot) / line).max(0.0);
    let chan = (single - 2.0 * hot - 2.0 * line - 2.0 * msg * line) / (4.0 * line);
    (chan.round().clamp(0.0, 64.0) as u64, msg.round().clamp(0.0, 64.0) as u64)
}

/// `total` ns split between a send and a receive side in the ratio of their base values (the
/// send side allocates and queues, the larger part).
fn split(total: f64, send: u64, recv: u64) -> (u64, u64) {
    let base = (send + recv).max(1) as f64;
    let s = (total * send as f64 / base).round() as u64;
    (s, (total.round() as u64).saturating_sub(s))
}

fn summarise(r: std::io::Result<Vec<f64>>) -> Result<Summary, String> {
    r.map_err(|e| format!("skipped: {e}")).and_then(|v| Summary::of(&v).ok_or_else(|| "no figure".into()))
}

/// ns per round trip of a native pinned ping-pong, per repetition.
fn pingpong(cmd: &[String], host_cpus: u32, reps: usize) -> Result<Summary, String> {
    native_metric(cmd, host_cpus, reps, 1000.0)
}

/// The benchmark's own metric (× `scale`) over `reps` native runs of `cmd`.
fn native_metric(cmd: &[String], host_cpus: u32, reps: usize, scale: f64) -> Result<Summary, String> {
    let w = crate::native::workload(cmd, host_cpus).map_err(|e| e.0)?;
    workload_metric(&w, reps, scale)
}

/// `perf bench sched pipe -l LOOPS` with its two processes pinned to `a` and `b`: every wake
/// crosses to an idle CPU, with the pipe's costs the handoffs measured. Processes, not threads:
/// on this kernel two threads of one process ping-pong ~1 µs per round trip slower across CPUs
/// than two processes (a cost of the shared mm the model does not charge), which would
/// otherwise land in the IPI.
fn pinned_pipe(m: &Machine, a: usize, b: usize, loops: u64) -> Result<wakesim_workloads::Workload, UserError> {
    let cmd: Vec<String> = ["perf", "bench", "sched", "pipe", "-l", &loops.to_string()].iter().map(|s| s.to_string()).collect();
    let mut w = crate::native::workload(&cmd, m.nr_cpus() as u32)?;
    for (t, cpu) in w.tasks.iter_mut().zip([a, b]) {
        t.allowed = Some(wakesim_machine::CpuSet::from_cpus([cpu]));
    }
    Ok(w)
}

/// `taskset -c CPU hackbench -g 1 -l LOOPS`: the one-CPU run calibrate fits the socket work
/// to, and the basis validate's drift line and ratio table re-run.
pub fn pinned_hackbench(cpu: usize, loops: u64) -> Vec<String> {
    ["taskset", "-c", &cpu.to_string(), "hackbench", "-g", "1", "-l", &loops.to_string()].iter().map(|s| s.to_string()).collect()
}

/// The workload's own metric (× `scale`) over `reps` native runs.
fn workload_metric(w: &wakesim_workloads::Workload, reps: usize, scale: f64) -> Result<Summary, String> {
    let mut v = Vec::new();
    for seed in 1..=reps as u64 {
        let r = crate::native::run_workload(w, 60.0, seed).map_err(|e| format!("skipped: {}", e.0))?;
        v.push(w.reporter.metric(&r.outcome).value * scale);
    }
    Summary::of(&v).ok_or_else(|| "no figure".into())
}

/// One usable CPU pair per distance class, nearest classes first (the first CPU paired with the
/// first CPU at each distance).
fn distance_pairs(m: &Machine, cpus: &[usize]) -> Vec<(Dist, usize, usize)> {
    let mut out: Vec<(Dist, usize, usize)> = Vec::new();
    let usable: Vec<usize> = cpus.iter().copied().filter(|&c| c < m.nr_cpus()).collect();
    let Some(&a) = usable.first() else { return out };
    for &b in &usable[1..] {
        let d = m.dist(a, b);
        if !out.iter().any(|(x, _, _)| *x == d) {
            out.push((d, a, b));
        }
    }
    out.sort_by_key(|(d, _, _)| *d as u8);
    out
}

/// The idle state an idle CPU sits in between wakes of a ping-pong: the kernel's cpuidle driver
/// `none` means `default_idle` (HLT, one non-polling state); otherwise the deepest non-polling
/// state keeps the base table and takes the measured exit.
fn set_idle_exit(p: &mut CostProfile, exit: u64, notes: &mut BTreeMap<String, String>, how: &str) {
    let driver = std::fs::read_to_string("/sys/devices/system/cpu/cpuidle/current_driver").unwrap_or_default();
    if driver.trim() == "none" || p.idle_states.len() == 1 {
        // default_idle_call(): HLT, TIF_POLLING_NRFLAG clear; residency 2× exit as acpi_idle's
        // latency_factor (drivers/acpi/processor_idle.c).
        p.idle_states = vec![IdleState { name: "HLT".into(), exit_latency: exit, target_residency: 2 * exit, polling: false }];
        notes.insert("idle_states.HLT.exit_latency".into(), format!("measured: {how}"));
    } else if let Some(st) = p.idle_states.iter_mut().find(|s| !s.polling) {
        st.exit_latency = exit;
        notes.insert(format!("idle_states.{}.exit_latency", st.name), format!("measured: {how}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_location_follows_xdg_config_home_then_home() {
        // Read-only check of the rule on whatever this process has; the CLI tests set the variable.
        let p = default_profile_path();
        if let Some(p) = p {
            assert!(p.ends_with("wakesim/host-costs.toml"), "{}", p.display());
        }
    }
}
