//! The task file's declarations, read from the spanned TOML tree with their line numbers.

use super::toml_walk::{int_of, Src, Tbl};
use crate::{ChanKind, WorkloadError};
use std::ops::Range;
use toml::de::{DeTable, DeValue};

/// Upper bound on `count` (tasks, channels, futexes per entry): keeps a typo from exhausting
/// memory.
pub(crate) const MAX_COUNT: i64 = 1 << 20;

pub(crate) struct Doc {
    pub name: Option<String>,
    pub channels: Vec<ChanDecl>,
    pub futexes: Vec<FutexDecl>,
    pub tasks: Vec<TaskDecl>,
    pub start_mark: Option<(u32, usize)>,
    pub end_mark: Option<(u32, usize)>,
}

pub(crate) struct ChanDecl {
    pub name: String,
    pub line: usize,
    pub kind: ChanKind,
    pub capacity: Option<u64>,
    pub count: u64,
}

pub(crate) struct FutexDecl {
    pub name: String,
    pub line: usize,
    pub count: u64,
}

pub(crate) struct TaskDecl {
    pub name: String,
    pub line: usize,
    pub count: u64,
    /// CPU list template and its line.
    pub cpus: Option<(String, usize)>,
    pub start_cpu: Option<(u64, usize)>,
    pub nice: i32,
    pub mm: Option<(String, usize)>,
    pub group: Option<(String, usize)>,
    pub smt_throughput: Option<f64>,
    /// Program lines with their file line numbers.
    pub program: Vec<(usize, String)>,
    pub program_line: usize,
}

pub(crate) fn read(
    src: &Src,
    root: &DeTable,
    root_span: Range<usize>,
) -> Result<Doc, WorkloadError> {
    let top = Tbl {
        src,
        t: root,
        span: root_span,
        what: "the task file",
    };
    top.deny_unknown(&["name", "channel", "futexes", "futex", "task", "report"])?;
    let mut futexes = Vec::new();
    if let Some(v) = top.get("futexes") {
        match v.get_ref() {
            DeValue::Integer(_) => {
                let n = int_of(src, "futexes", v)?;
                if !(0..=MAX_COUNT).contains(&n) {
                    return Err(src.err(
                        &v.span(),
                        format!("'futexes' must be in 0..={MAX_COUNT}, got {n}"),
                    ));
                }
                let line = src.line(v.span().start);
                futexes.extend((0..n).map(|k| FutexDecl {
                    name: k.to_string(),
                    line,
                    count: 1,
                }));
            }
            DeValue::Array(a) => {
                for item in a.iter() {
                    let Some(s) = item.get_ref().as_str() else {
                        return Err(src.err(
                            &item.span(),
                            "'futexes' entries must be futex names (strings)",
                        ));
                    };
                    futexes.push(FutexDecl {
                        name: s.to_string(),
                        line: src.line(item.span().start),
                        count: 1,
                    });
                }
            }
            other => {
                return Err(src.err(
                    &v.span(),
                    format!(
                        "'futexes' must be a count or a list of names, not a {}",
                        other.type_str()
                    ),
                ))
            }
        }
    }
    for t in top.tables("futex", "[[futex]]")? {
        t.deny_unknown(&["name", "count"])?;
        let (name, span) = t.req_str("name")?;
        futexes.push(FutexDecl {
            name,
            line: src.line(span.start),
            count: count(&t)?,
        });
    }
    let mut channels = Vec::new();
    for t in top.tables("channel", "[[channel]]")? {
        channels.push(read_channel(&t)?);
    }
    let mut tasks = Vec::new();
    for t in top.tables("task", "[[task]]")? {
        tasks.push(read_task(&t)?);
    }
    if tasks.is_empty() {
        return Err(src.err_at_line(1, "the task file declares no [[task]]"));
    }
    let (mut start_mark, mut end_mark) = (None, None);
    if let Some(r) = top.table("report", "[report]")? {
        r.deny_unknown(&["start_mark", "end_mark"])?;
        start_mark = mark(&r, "start_mark")?;
        end_mark = mark(&r, "end_mark")?;
    }
    let name = top.str("name")?.map(|(s, _)| s);
    Ok(Doc {
        name,
        channels,
        futexes,
        tasks,
        start_mark,
        end_mark,
    })
}

fn mark(t: &Tbl, key: &str) -> Result<Option<(u32, usize)>, WorkloadError> {
    match t.int(key)? {
        None => Ok(None),
        Some((v, span)) => u32::try_from(v)
            .map(|m| Some((m, t.src.line(span.start))))
            .map_err(|_| {
                t.src.err(
                    &span,
                    format!("'{key}' must be a mark id in 0..={}", u32::MAX),
                )
            }),
    }
}

fn count(t: &Tbl) -> Result<u64, WorkloadError> {
    match t.int("count")? {
        None => Ok(1),
        Some((n, span)) if (1..=MAX_COUNT).contains(&n) => {
            let _ = span;
            Ok(n as u64)
        }
        Some((n, span)) => Err(t.src.err(
            &span,
            format!("'count' must be in 1..={MAX_COUNT}, got {n}"),
        )),
    }
}

fn read_channel(t: &Tbl) -> Result<ChanDecl, WorkloadError> {
    t.deny_unknown(&["name", "kind", "capacity", "count"])?;
    let (name, span) = t.req_str("name")?;
    let kind = match t.str("kind")? {
        None => ChanKind::Pipe,
        Some((k, kspan)) => match k.as_str() {
            "pipe" => ChanKind::Pipe,
            "unix" => ChanKind::UnixStream,
            "tcp" => ChanKind::TcpLoopback,
            "udp" => ChanKind::UdpLoopback,
            _ => {
                return Err(t.src.err(
                    &kspan,
                    format!("unknown channel kind '{k}' (known: pipe, unix, tcp, udp)"),
                ))
            }
        },
    };
    let capacity = match t.int("capacity")? {
        None => None,
        Some((c, _)) if c > 0 => Some(c as u64),
        Some((c, cspan)) => {
            return Err(t.src.err(
                &cspan,
                format!("'capacity' must be a positive number of bytes, got {c}"),
            ))
        }
    };
    Ok(ChanDecl {
        name,
        line: t.src.line(span.start),
        kind,
        capacity,
        count: count(t)?,
    })
}

fn read_task(t: &Tbl) -> Result<TaskDecl, WorkloadError> {
    t.deny_unknown(&[
        "name",
        "count",
        "cpus",
        "start_cpu",
        "nice",
        "mm",
        "group",
        "program",
        "smt_throughput",
    ])?;
    let src = t.src;
    let (name, span) = t.req_str("name")?;
    let nice = match t.int("nice")? {
        None => 0,
        Some((n, _)) if (-20..=19).contains(&n) => n as i32,
        Some((n, nspan)) => {
            return Err(src.err(&nspan, format!("'nice' must be in -20..=19, got {n}")))
        }
    };
    let start_cpu = match t.int("start_cpu")? {
        None => None,
        Some((c, cspan)) if c >= 0 && (c as u64) < wakesim_machine::MAX_CPUS as u64 => {
            Some((c as u64, src.line(cspan.start)))
        }
        Some((c, cspan)) => {
            return Err(src.err(&cspan, format!("'start_cpu' {c} is not a CPU number")))
        }
    };
    let smt_throughput = match t.get("smt_throughput") {
        None => None,
        Some(v) => {
            let x = match v.get_ref() {
                DeValue::Float(f) => f.to_string().parse::<f64>().ok(),
                DeValue::Integer(i) => i.to_string().parse::<f64>().ok(),
                _ => None,
            };
            match x {
                Some(x) if (0.5..=2.0).contains(&x) => Some(x),
                _ => {
                    return Err(src.err(
                        &v.span(),
                        "'smt_throughput' must be a number in 0.5..=2.0 (core throughput with both SMT siblings busy, relative to one thread)",
                    ))
                }
            }
        }
    };
    let at_line = |o: Option<(String, Range<usize>)>| o.map(|(s, sp)| (s, src.line(sp.start)));
    let cpus = at_line(t.str("cpus")?);
    let mm = at_line(t.key("mm")?);
    let group = at_line(t.key("group")?);
    let Some(pv) = t.get("program") else {
        return Err(src.err(&t.span, format!("[[task]] '{name}' needs 'program'")));
    };
    let mut program = Vec::new();
    match pv.get_ref() {
        DeValue::String(s) => program = src.string_lines(&pv.span(), s),
        DeValue::Array(a) => {
            for item in a.iter() {
                let Some(s) = item.get_ref().as_str() else {
                    return Err(src.err(
                        &item.span(),
                        format!(
                            "program entries must be strings (one op each), not a {}",
                            item.get_ref().type_str()
                        ),
                    ));
                };
                program.extend(src.string_lines(&item.span(), s));
            }
        }
        other => {
            return Err(src.err(
                &pv.span(),
                format!(
                    "'program' must be a list of op strings or one multi-line string, not a {}",
                    other.type_str()
                ),
            ))
        }
    }
    Ok(TaskDecl {
        name,
        line: src.line(span.start),
        count: count(t)?,
        cpus,
        start_cpu,
        nice,
        mm,
        group,
        smt_throughput,
        program,
        program_line: src.line(pv.span().start),
    })
}
