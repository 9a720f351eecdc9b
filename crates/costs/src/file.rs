//! Cost overrides from a TOML file (format: `crates/costs/FORMAT.md`), and the writer that
//! calibration uses. One table of field accessors drives the reader, the writer and the
//! unknown-key check, so they cannot drift apart.

use std::ops::Range;
use std::path::Path;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::{profile_for, CostError, CostProfile, IdleState, LineCosts};

type Get = fn(&CostProfile) -> u64;
type Set = fn(&mut CostProfile, u64);

/// Top-level integer (ns) fields, in the order the writer emits them.
const SCALARS: &[(&str, Get, Set)] = &[
    ("line_mesh_offset", |p| p.line_mesh_offset, |p, v| p.line_mesh_offset = v),
    ("ipi_send", |p| p.ipi_send, |p, v| p.ipi_send = v),
    (
        "irq_entry_exit",
        |p| p.irq_entry_exit,
        |p, v| p.irq_entry_exit = v,
    ),
    ("poll_limit", |p| p.poll_limit, |p, v| p.poll_limit = v),
    (
        "context_switch",
        |p| p.context_switch,
        |p, v| p.context_switch = v,
    ),
    (
        "context_switch_mm",
        |p| p.context_switch_mm,
        |p, v| p.context_switch_mm = v,
    ),
    ("syscall", |p| p.syscall, |p, v| p.syscall = v),
    (
        "copy_ps_per_byte",
        |p| p.copy_ps_per_byte,
        |p, v| p.copy_ps_per_byte = v,
    ),
    ("rq_lock", |p| p.rq_lock, |p, v| p.rq_lock = v),
    ("enqueue", |p| p.enqueue, |p, v| p.enqueue = v),
    ("dequeue", |p| p.dequeue, |p, v| p.dequeue = v),
    (
        "wakeup_preempt",
        |p| p.wakeup_preempt,
        |p, v| p.wakeup_preempt = v,
    ),
    ("pick", |p| p.pick, |p, v| p.pick = v),
    ("ttwu_base", |p| p.ttwu_base, |p, v| p.ttwu_base = v),
    ("select_base", |p| p.select_base, |p, v| p.select_base = v),
    ("sis_probe", |p| p.sis_probe, |p, v| p.sis_probe = v),
    ("sis_probe_line_pct", |p| p.sis_probe_line_pct, |p, v| p.sis_probe_line_pct = v),
    (
        "wakelist_queue",
        |p| p.wakelist_queue,
        |p, v| p.wakelist_queue = v,
    ),
    ("csd_flush", |p| p.csd_flush, |p, v| p.csd_flush = v),
    ("idle_select", |p| p.idle_select, |p, v| p.idle_select = v),
    ("idle_exit", |p| p.idle_exit, |p, v| p.idle_exit = v),
    ("newidle_gate", |p| p.newidle_gate, |p, v| p.newidle_gate = v),
    (
        "lb_stats_per_cpu",
        |p| p.lb_stats_per_cpu,
        |p, v| p.lb_stats_per_cpu = v,
    ),
    ("lb_walk_line_pct", |p| p.lb_walk_line_pct, |p, v| p.lb_walk_line_pct = v),
    ("lb_base", |p| p.lb_base, |p, v| p.lb_base = v),
    (
        "migrate_task",
        |p| p.migrate_task,
        |p, v| p.migrate_task = v,
    ),
    (
        "update_blocked",
        |p| p.update_blocked,
        |p, v| p.update_blocked = v,
    ),
    ("tick", |p| p.tick, |p, v| p.tick = v),
    (
        "tg_load_update",
        |p| p.tg_load_update,
        |p, v| p.tg_load_update = v,
    ),
    ("unix_send", |p| p.unix_send, |p, v| p.unix_send = v),
    ("unix_recv", |p| p.unix_recv, |p, v| p.unix_recv = v),
    ("pipe_send", |p| p.pipe_send, |p, v| p.pipe_send = v),
    ("pipe_recv", |p| p.pipe_recv, |p, v| p.pipe_recv = v),
    ("pipe_wait", |p| p.pipe_wait, |p, v| p.pipe_wait = v),
    ("sock_wait", |p| p.sock_wait, |p, v| p.sock_wait = v),
    ("sock_queue_hold", |p| p.sock_queue_hold, |p, v| p.sock_queue_hold = v),
    ("pipe_lines", |p| p.pipe_lines, |p, v| p.pipe_lines = v),
    ("sock_lines", |p| p.sock_lines, |p, v| p.sock_lines = v),
    ("pipe_msg_lines", |p| p.pipe_msg_lines, |p, v| p.pipe_msg_lines = v),
    ("sock_msg_lines", |p| p.sock_msg_lines, |p, v| p.sock_msg_lines = v),
    ("private_cache_bytes", |p| p.private_cache_bytes, |p, v| p.private_cache_bytes = v),
    ("sock_msg_cold", |p| p.sock_msg_cold, |p, v| p.sock_msg_cold = v),
    ("stream_read_overlap", |p| p.stream_read_overlap, |p, v| p.stream_read_overlap = v),
    ("stream_write_overlap", |p| p.stream_write_overlap, |p, v| p.stream_write_overlap = v),
    ("futex_wait", |p| p.futex_wait, |p, v| p.futex_wait = v),
    ("futex_wake", |p| p.futex_wake, |p, v| p.futex_wake = v),
    ("futex_lines", |p| p.futex_lines, |p, v| p.futex_lines = v),
    ("tcp_send", |p| p.tcp_send, |p, v| p.tcp_send = v),
    ("tcp_recv", |p| p.tcp_recv, |p, v| p.tcp_recv = v),
    ("tcp_ack", |p| p.tcp_ack, |p, v| p.tcp_ack = v),
    ("udp_send", |p| p.udp_send, |p, v| p.udp_send = v),
    ("udp_recv", |p| p.udp_recv, |p, v| p.udp_recv = v),
    ("call_function", |p| p.call_function, |p, v| p.call_function = v),
    ("fork", |p| p.fork, |p, v| p.fork = v),
    ("clone_thread", |p| p.clone_thread, |p, v| p.clone_thread = v),
    ("enqueue_lines", |p| p.enqueue_lines, |p, v| p.enqueue_lines = v),
    ("group_enqueue_lines", |p| p.group_enqueue_lines, |p, v| p.group_enqueue_lines = v),
    ("task_sched_lines", |p| p.task_sched_lines, |p, v| p.task_sched_lines = v),
];

type LineGet = fn(&LineCosts) -> u64;
type LineSet = fn(&mut LineCosts, u64);

/// Keys of a by-distance table (`[line]`, `[ipi_delivery]`, `[migration_penalty]`).
const LINE_KEYS: &[(&str, LineGet, LineSet)] = &[
    ("local", |l| l.local, |l, v| l.local = v),
    ("smt", |l| l.smt, |l, v| l.smt = v),
    ("cluster", |l| l.cluster, |l, v| l.cluster = v),
    ("llc", |l| l.llc, |l, v| l.llc = v),
    ("cross_llc", |l| l.cross_llc, |l, v| l.cross_llc = v),
    ("cross_node", |l| l.cross_node, |l, v| l.cross_node = v),
];

type LinesMut = fn(&mut CostProfile) -> &mut LineCosts;
type LinesRef = fn(&CostProfile) -> &LineCosts;

/// The by-distance tables.
const LINE_TABLES: &[(&str, LinesRef, LinesMut)] = &[
    ("line", |p| &p.line, |p| &mut p.line),
    ("ipi_delivery", |p| &p.ipi_delivery, |p| &mut p.ipi_delivery),
    (
        "migration_penalty",
        |p| &p.migration_penalty,
        |p| &mut p.migration_penalty,
    ),
];

/// Read `path` and apply it on top of `base` (see [`from_toml_str`]).
pub fn load_overrides(base: CostProfile, path: &Path) -> Result<CostProfile, CostError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| CostError::Invalid(format!("cannot read cost file {shown}: {e}")))?;
    from_toml_str(base, &text, &shown)
}

/// Apply the TOML overrides in `text` on top of `base` (or on top of the built-in profile named by
/// a `base = "..."` key), then validate. `path` is only used in error messages.
///
/// Errors ([`CostError::File`]) carry the 1-based line of the offending key and name the key:
/// syntax errors, unknown keys, wrong types, negative or non-integer ns values, an unknown
/// `base`, and failed validation (see [`CostProfile::validate`]).
pub fn from_toml_str(base: CostProfile, text: &str, path: &str) -> Result<CostProfile, CostError> {
    let err = |span: Range<usize>, msg: String| CostError::File {
        path: path.into(),
        line: line_of(text, span.start),
        msg,
    };
    let doc = DeTable::parse(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
        CostError::File {
            path: path.into(),
            line,
            msg: e.message().trim().to_string(),
        }
    })?;
    let mut entries: Vec<_> = doc.get_ref().iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start); // report problems in file order

    // `base` first, whatever its position: the other keys override it.
    let mut p = base;
    if let Some((k, v)) = entries.iter().find(|(k, _)| k.get_ref() == "base") {
        let name = string(v, "base").map_err(|m| err(k.span(), m))?;
        p = profile_for(&name).map_err(|e| err(k.span(), format!("key 'base': {e}")))?;
    }

    for (k, v) in &entries {
        let key: &str = k.get_ref();
        let at = |m: String| err(k.span(), m);
        match key {
            "base" => {}
            "name" => p.name = string(v, key).map_err(at)?,
            "smt_throughput" => p.smt_throughput = float(v, key).map_err(at)?,
            "idle_states" => p.idle_states = idle_states(v, text, path)?,
            _ => {
                if let Some((_, _, set)) = SCALARS.iter().find(|(n, _, _)| *n == key) {
                    set(&mut p, ns(v, key).map_err(at)?);
                } else if let Some((_, _, lines)) = LINE_TABLES.iter().find(|(n, _, _)| *n == key) {
                    apply_lines(lines(&mut p), key, v, text, path)?;
                } else {
                    return Err(at(format!("unknown key '{key}'")));
                }
            }
        }
    }

    p.check().map_err(
        |(key, msg)| match entries.iter().find(|(k, _)| k.get_ref() == key) {
            Some((k, _)) => err(k.span(), msg),
            None => CostError::Invalid(format!("{path}: {msg}")),
        },
    )?;
    Ok(p)
}

/// Write `p` as a complete costs file; [`from_toml_str`] reads it back to an equal profile.
pub fn to_toml(p: &CostProfile) -> String {
    let mut s = String::new();
    s.push_str("# wakesim cost profile (format: crates/costs/FORMAT.md). Times in ns.\n");
    s.push_str(&format!("name = {}\n", quote(&p.name)));
    for (name, get, _) in SCALARS {
        s.push_str(&format!("{name} = {}\n", get(p)));
    }
    s.push_str(&format!(
        "smt_throughput = {}\n",
        fmt_float(p.smt_throughput)
    ));
    for (table, lines, _) in LINE_TABLES {
        s.push_str(&format!("\n[{table}]\n"));
        for (key, get, _) in LINE_KEYS {
            s.push_str(&format!("{key} = {}\n", get(lines(p))));
        }
    }
    for st in &p.idle_states {
        s.push_str("\n[[idle_states]]\n");
        s.push_str(&format!("name = {}\n", quote(&st.name)));
        s.push_str(&format!("exit_latency = {}\n", st.exit_latency));
        s.push_str(&format!("target_residency = {}\n", st.target_residency));
        s.push_str(&format!("polling = {}\n", st.polling));
    }
    s
}

type Val<'a> = Spanned<DeValue<'a>>;

fn apply_lines(
    l: &mut LineCosts,
    table: &str,
    v: &Val,
    text: &str,
    path: &str,
) -> Result<(), CostError> {
    let err = |span: Range<usize>, msg: String| CostError::File {
        path: path.into(),
        line: line_of(text, span.start),
        msg,
    };
    let DeValue::Table(t) = v.get_ref() else {
        return Err(err(
            v.span(),
            format!("key '{table}' must be a table of ns by distance"),
        ));
    };
    for (k, v) in sorted(t) {
        let key: &str = k.get_ref();
        let full = format!("{table}.{key}");
        match LINE_KEYS.iter().find(|(n, _, _)| *n == key) {
            Some((_, _, set)) => set(l, ns(v, &full).map_err(|m| err(k.span(), m))?),
            None => {
                let known: Vec<&str> = LINE_KEYS.iter().map(|(n, _, _)| *n).collect();
                return Err(err(
                    k.span(),
                    format!("unknown key '{full}' (known: {})", known.join(", ")),
                ));
            }
        }
    }
    Ok(())
}

fn idle_states(v: &Val, text: &str, path: &str) -> Result<Vec<IdleState>, CostError> {
    let err = |span: Range<usize>, msg: String| CostError::File {
        path: path.into(),
        line: line_of(text, span.start),
        msg,
    };
    let DeValue::Array(items) = v.get_ref() else {
        return Err(err(
            v.span(),
            "key 'idle_states' must be an array of tables ([[idle_states]])".into(),
        ));
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let DeValue::Table(t) = item.get_ref() else {
            return Err(err(
                item.span(),
                format!("idle_states[{i}] must be a table"),
            ));
        };
        let (mut name, mut exit, mut res, mut polling) = (None, None, None, None);
        for (k, v) in sorted(t) {
            let key: &str = k.get_ref();
            let full = format!("idle_states[{i}].{key}");
            let at = |m: String| err(k.span(), m);
            match key {
                "name" => name = Some(string(v, &full).map_err(at)?),
                "exit_latency" => exit = Some(ns(v, &full).map_err(at)?),
                "target_residency" => res = Some(ns(v, &full).map_err(at)?),
                "polling" => polling = Some(boolean(v, &full).map_err(at)?),
                _ => {
                    return Err(at(format!(
                    "unknown key '{full}' (known: name, exit_latency, target_residency, polling)"
                )))
                }
            }
        }
        let missing = |k: &str| err(item.span(), format!("idle_states[{i}]: missing key '{k}'"));
        out.push(IdleState {
            name: name.ok_or_else(|| missing("name"))?,
            exit_latency: exit.ok_or_else(|| missing("exit_latency"))?,
            target_residency: res.ok_or_else(|| missing("target_residency"))?,
            polling: polling.ok_or_else(|| missing("polling"))?,
        });
    }
    Ok(out)
}

/// Entries of a table in file order.
fn sorted<'t, 'a>(t: &'t DeTable<'a>) -> Vec<(&'t Spanned<toml::de::DeString<'a>>, &'t Val<'a>)> {
    let mut v: Vec<_> = t.iter().collect();
    v.sort_by_key(|(k, _)| k.span().start);
    v
}

/// A non-negative integer number of nanoseconds.
fn ns(v: &Val, key: &str) -> Result<u64, String> {
    match v.get_ref() {
        DeValue::Integer(i) => {
            let s = i.as_str();
            if s.starts_with('-') && s.trim_start_matches(['-', '0']).chars().any(|c| c != '_') {
                return Err(format!(
                    "key '{key}' must be a non-negative integer (ns), got -{}",
                    s.trim_start_matches('-')
                ));
            }
            u64::from_str_radix(s.trim_start_matches('-'), i.radix())
                .map_err(|_| format!("key '{key}': integer {s} is out of range for ns"))
        }
        DeValue::Float(f) => Err(format!(
            "key '{key}' must be an integer number of ns, got {}",
            f.as_str()
        )),
        other => Err(format!(
            "key '{key}' must be an integer number of ns, got a {}",
            other.type_str()
        )),
    }
}

fn float(v: &Val, key: &str) -> Result<f64, String> {
    match v.get_ref() {
        DeValue::Float(f) => f
            .as_str()
            .parse::<f64>()
            .map_err(|_| format!("key '{key}': bad number {}", f.as_str())),
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .map(|x| x as f64)
            .map_err(|_| format!("key '{key}': integer {} out of range", i.as_str())),
        other => Err(format!(
            "key '{key}' must be a number, got a {}",
            other.type_str()
        )),
    }
}

fn string(v: &Val, key: &str) -> Result<String, String> {
    match v.get_ref() {
        DeValue::String(s) => Ok(s.to_string()),
        other => Err(format!(
            "key '{key}' must be a string, got a {}",
            other.type_str()
        )),
    }
}

fn boolean(v: &Val, key: &str) -> Result<bool, String> {
    match v.get_ref() {
        DeValue::Boolean(b) => Ok(*b),
        other => Err(format!(
            "key '{key}' must be true or false, got a {}",
            other.type_str()
        )),
    }
}

/// 1-based line number of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML float that parses back to the same f64 (`{:?}` is the shortest round-trip form).
fn fmt_float(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else {
        let s = format!("{x:?}");
        if s.contains(['.', 'e', 'E']) {
            s
        } else {
            format!("{s}.0")
        }
    }
}

/// One key of `--cost-scale` / `describe_cost`: a scalar, the distances of a by-distance table
/// (all, or the one named after the dot), or the idle states' latencies.
enum CostKey {
    Scalar(Get, Set),
    Table(LinesRef, LinesMut, Vec<&'static (&'static str, LineGet, LineSet)>),
    IdleStates,
}

/// Resolves `key` (`idle_exit`, `ipi_delivery`, `ipi_delivery.cross_node`, `idle_states`).
fn cost_key(key: &str) -> Option<CostKey> {
    if let Some((_, get, set)) = SCALARS.iter().find(|(n, _, _)| *n == key) {
        return Some(CostKey::Scalar(*get, *set));
    }
    if key == "idle_states" {
        return Some(CostKey::IdleStates);
    }
    let (table, dist) = match key.split_once('.') {
        Some((t, d)) => (t, Some(d)),
        None => (key, None),
    };
    let (_, get, set) = LINE_TABLES.iter().find(|(n, _, _)| *n == table)?;
    let entries: Vec<_> = LINE_KEYS.iter().filter(|(n, _, _)| dist.is_none_or(|d| d == *n)).collect();
    (!entries.is_empty()).then_some(CostKey::Table(*get, *set, entries))
}

/// Multiply one cost of `p` by `factor` (rounded to the nearest ns), for sensitivity studies
/// (`--cost-scale KEY=FACTOR`). `key` is a cost file's key: a scalar (`idle_exit`), a whole
/// by-distance table (`ipi_delivery`: every distance) or one entry of it
/// (`ipi_delivery.cross_node`), or `idle_states` (every state's exit latency and target
/// residency; `poll_limit` is its own key). The result is validated as a cost file's is.
pub fn scale_cost(p: &mut CostProfile, key: &str, factor: f64) -> Result<(), CostError> {
    if !(factor.is_finite() && factor >= 0.0) {
        return Err(CostError::Invalid(format!("cost scale for '{key}' must be a non-negative number, got {factor}")));
    }
    let scaled = |v: u64| (v as f64 * factor).round() as u64;
    match cost_key(key) {
        Some(CostKey::Scalar(get, set)) => {
            let v = scaled(get(p));
            set(p, v);
        }
        Some(CostKey::Table(_, lines, entries)) => {
            let l = lines(p);
            for (_, get, set) in entries {
                let v = scaled(get(l));
                set(l, v);
            }
        }
        Some(CostKey::IdleStates) => {
            for st in &mut p.idle_states {
                st.exit_latency = scaled(st.exit_latency);
                st.target_residency = scaled(st.target_residency);
            }
        }
        None => {
            let known: Vec<&str> = LINE_KEYS.iter().map(|(n, _, _)| *n).collect();
            return Err(CostError::Invalid(format!(
                "unknown cost key '{key}' (a time key of crates/costs/FORMAT.md, a [line], [ipi_delivery] or [migration_penalty] table or one of its distances ({}), or idle_states)",
                known.join(", ")
            )));
        }
    }
    p.check().map_err(|(_, m)| CostError::Invalid(format!("cost scale {key}={factor}: {m}")))
}

/// The value(s) of one cost key of `p` as a short text (`300 ns`; `llc 100, cross_node 1150 ns`
/// for a table; `C1 1000/2000 ns` for the idle states' exit latency / target residency), for
/// reports of a `--cost-scale`; `None` for an unknown key.
pub fn describe_cost(p: &CostProfile, key: &str) -> Option<String> {
    let parts: Vec<String> = match cost_key(key)? {
        CostKey::Scalar(get, _) => vec![get(p).to_string()],
        CostKey::Table(lines, _, entries) => entries.iter().map(|(n, get, _)| format!("{n} {}", get(lines(p)))).collect(),
        CostKey::IdleStates => p.idle_states.iter().filter(|s| s.exit_latency > 0).map(|s| format!("{} {}/{}", s.name, s.exit_latency, s.target_residency)).collect(),
    };
    Some(format!("{}{}", parts.join(", "), unit_of(key)))
}

/// The unit a key's value is in, as `describe_cost` prints it: most are ns; the line counts and
/// the misses in flight are plain counts.
fn unit_of(key: &str) -> &'static str {
    match key {
        k if k.ends_with("_lines") || k.ends_with("_overlap") => "",
        "private_cache_bytes" => " B",
        "copy_ps_per_byte" => " ps/B",
        _ => " ns",
    }
}
