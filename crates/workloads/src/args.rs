//! A small getopt_long / perf parse-options style parser for benchmark command lines.
//!
//! Accepted forms (as glibc `getopt_long` and perf's `tools/lib/subcmd/parse-options.c`):
//! `-l 10`, `-l10`, bundled booleans `-Tl 10`, `--loop 10`, `--loop=10`, unambiguous long
//! prefixes (`--lo 10`), and `--` to end the options. Every error names the flag.

use crate::WorkloadError;

/// One option a tool accepts.
pub(crate) struct Opt {
    pub short: Option<char>,
    pub long: &'static str,
    /// Takes a value (`-l 10`) rather than being a boolean switch (`-T`).
    pub value: bool,
}

/// One option as given: its long name (the key), its value, and how the user spelled it.
pub(crate) struct Given {
    pub long: &'static str,
    pub value: Option<String>,
    pub spelled: String,
}

pub(crate) struct Parsed {
    pub opts: Vec<Given>,
    /// Non-option arguments, in order (everything after the first one when `stop_at_positional`).
    pub positional: Vec<String>,
}

fn known_list(spec: &[Opt]) -> String {
    spec.iter()
        .map(|o| match o.short {
            Some(c) => format!("-{c}/--{}", o.long),
            None => format!("--{}", o.long),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses `args`. With `stop_at_positional`, parsing stops at the first non-option and the rest
/// is returned untouched in `positional` (perf's `PARSE_OPT_STOP_AT_NON_OPTION`).
pub(crate) fn parse(
    tool: &str,
    args: &[String],
    spec: &[Opt],
    stop_at_positional: bool,
) -> Result<Parsed, WorkloadError> {
    let mut out = Parsed {
        opts: Vec::new(),
        positional: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            out.positional.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(body) = a.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let o = find_long(tool, spec, name)?;
            let value = if o.value {
                match inline {
                    Some(v) => Some(v),
                    None => {
                        let v = args.get(i).cloned().ok_or_else(|| {
                            WorkloadError::arg(tool, format!("option '--{}' needs a value", o.long))
                        })?;
                        i += 1;
                        Some(v)
                    }
                }
            } else {
                if inline.is_some() {
                    return Err(WorkloadError::arg(
                        tool,
                        format!("option '--{}' takes no value", o.long),
                    ));
                }
                None
            };
            out.opts.push(Given {
                long: o.long,
                value,
                spelled: format!("--{}", o.long),
            });
        } else if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let c = chars[k];
                k += 1;
                let o = spec.iter().find(|o| o.short == Some(c)).ok_or_else(|| {
                    WorkloadError::arg(
                        tool,
                        format!("unknown option '-{c}' (known: {})", known_list(spec)),
                    )
                })?;
                if o.value {
                    let rest: String = chars[k..].iter().collect();
                    let v = if !rest.is_empty() {
                        rest
                    } else {
                        let v = args.get(i).cloned().ok_or_else(|| {
                            WorkloadError::arg(tool, format!("option '-{c}' needs a value"))
                        })?;
                        i += 1;
                        v
                    };
                    out.opts.push(Given {
                        long: o.long,
                        value: Some(v),
                        spelled: format!("-{c}"),
                    });
                    break;
                }
                out.opts.push(Given {
                    long: o.long,
                    value: None,
                    spelled: format!("-{c}"),
                });
            }
        } else {
            out.positional.push(a.clone());
            if stop_at_positional {
                out.positional.extend(args[i..].iter().cloned());
                break;
            }
        }
    }
    Ok(out)
}

fn find_long<'s>(tool: &str, spec: &'s [Opt], name: &str) -> Result<&'s Opt, WorkloadError> {
    if let Some(o) = spec.iter().find(|o| o.long == name) {
        return Ok(o);
    }
    let cands: Vec<&Opt> = if name.is_empty() {
        Vec::new()
    } else {
        spec.iter().filter(|o| o.long.starts_with(name)).collect()
    };
    match cands.len() {
        1 => Ok(cands[0]),
        0 => Err(WorkloadError::arg(
            tool,
            format!("unknown option '--{name}' (known: {})", known_list(spec)),
        )),
        _ => Err(WorkloadError::arg(
            tool,
            format!(
                "ambiguous option '--{name}' (could be {})",
                cands
                    .iter()
                    .map(|o| format!("--{}", o.long))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Parses a base-10 integer option value like `strtol(s, &end, 10)` with `*end == 0`.
pub(crate) fn int_value(tool: &str, g: &Given) -> Result<i64, WorkloadError> {
    let v = g.value.as_deref().unwrap_or("");
    let t = v.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    t.parse::<i64>().map_err(|_| {
        WorkloadError::arg(
            tool,
            format!("option '{}' expects a whole number, got '{v}'", g.spelled),
        )
    })
}
