//! The one-op-per-line program syntax (see FORMAT.md): parsing a line into a [`Stmt`],
//! durations with units and distributions, and `{i}` name templates.

use crate::Dur;
use wakesim_engine::Time;

/// Which futex wake a `wake…` statement is (see `Op`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WakeKind {
    /// `wake F N`: a semaphore post (`Op::FutexWake`).
    Post,
    /// `wake_waiters F N`: `FUTEX_WAKE`, lost without waiters (`Op::FutexWakeWaiters`).
    Waiters,
    /// `wake_all_sync F`: a write to a polled pipe (`Op::FutexWakeAllSync`).
    AllSync,
}

/// One parsed program line; names are still templates (`pipe{i}`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Stmt {
    Compute(Dur),
    Sleep(Dur),
    Send {
        chan: String,
        bytes: u64,
    },
    Recv {
        chan: String,
        bytes: u64,
    },
    /// `sendto CH BYTES`: a datagram, dropped when `CH` is full.
    SendDgram {
        chan: String,
        bytes: u64,
    },
    Wait {
        futex: String,
    },
    Wake {
        futex: String,
        n: u32,
        kind: WakeKind,
    },
    /// `loop N {` (`loop forever {` = `u64::MAX`).
    Loop(u64),
    /// `}`
    End,
    Mark(u32),
    Exit,
    /// `call CPU [nowait]`: smp_call_function_single.
    Call { cpu: String, wait: bool },
    /// `barrier NAME PARTIES`.
    Barrier { name: String, parties: u32 },
    Lock { name: String },
    Unlock { name: String },
    /// `cpu_lock A` / `cpu_unlock A`: the lock of the current CPU in per-CPU lock array `A`
    /// (schbench's `lock_this_cpu()`; `Op::CpuSpinLock`).
    CpuLock { name: String },
    CpuUnlock { name: String },
    /// `every 1ms`: periodic timer.
    Every(u64),
}

const KNOWN: &str =
    "compute, sleep, send, recv, wait, wake, loop, }, mark, exit, call, barrier, lock, unlock, cpu_lock, cpu_unlock, every";

/// Parses one line; `Ok(None)` for blank and comment-only lines. `#` starts a comment.
pub(crate) fn parse_stmt(line: &str) -> Result<Option<Stmt>, String> {
    let code = line.split('#').next().unwrap_or("");
    let mut toks: Vec<&str> = code.split_whitespace().collect();
    // `loop 10{` is `loop 10 {`.
    if toks.first() == Some(&"loop") {
        if let Some(last) = toks.last().copied() {
            if last.len() > 1 && last.ends_with('{') {
                toks.pop();
                toks.push(&last[..last.len() - 1]);
                toks.push("{");
            }
        }
    }
    let Some(&op) = toks.first() else {
        return Ok(None);
    };
    let rest = &toks[1..];
    let arg_text = || rest.concat();
    let nargs = |n: usize, usage: &str| {
        if rest.len() == n {
            Ok(())
        } else {
            Err(format!("'{op}' takes {usage}"))
        }
    };
    let s = match op {
        "compute" | "sleep" => {
            if rest.is_empty() {
                return Err(format!("'{op}' needs a duration, e.g. '{op} 10us'"));
            }
            let d = parse_dur(&arg_text())?;
            if op == "compute" {
                Stmt::Compute(d)
            } else {
                Stmt::Sleep(d)
            }
        }
        "send" | "recv" | "sendto" => {
            nargs(2, "a channel and a byte count, e.g. 'send ch 100'")?;
            let bytes = positive(rest[1], "byte count")?;
            let chan = name_arg(rest[0])?;
            if op == "send" {
                Stmt::Send { chan, bytes }
            } else if op == "sendto" {
                Stmt::SendDgram { chan, bytes }
            } else {
                Stmt::Recv { chan, bytes }
            }
        }
        "wait" => {
            nargs(1, "a futex name, e.g. 'wait f'")?;
            Stmt::Wait {
                futex: name_arg(rest[0])?,
            }
        }
        "wake_all_sync" => {
            nargs(1, "a futex name, e.g. 'wake_all_sync go'")?;
            Stmt::Wake {
                futex: name_arg(rest[0])?,
                n: u32::MAX,
                kind: WakeKind::AllSync,
            }
        }
        "wake" | "wake_waiters" => {
            if rest.is_empty() || rest.len() > 2 {
                return Err(format!(
                    "'{op}' takes a futex name and an optional count, e.g. '{op} f 1'"
                ));
            }
            let n = match rest.get(1) {
                None => 1,
                Some(t) => u32::try_from(positive(t, "wake count")?)
                    .map_err(|_| format!("wake count '{t}' is too large"))?,
            };
            Stmt::Wake {
                futex: name_arg(rest[0])?,
                n,
                kind: if op == "wake" { WakeKind::Post } else { WakeKind::Waiters },
            }
        }
        "loop" => {
            if rest.len() != 2 || rest[1] != "{" {
                return Err("expected 'loop N {' (or 'loop forever {')".into());
            }
            let n = if rest[0] == "forever" {
                u64::MAX
            } else {
                positive(rest[0], "loop count")?
            };
            Stmt::Loop(n)
        }
        "}" => {
            nargs(0, "nothing: a closing '}' stands alone on its line")?;
            Stmt::End
        }
        "mark" => {
            nargs(1, "a mark id, e.g. 'mark 0'")?;
            let t = rest[0].replace('_', "");
            Stmt::Mark(
                t.parse::<u32>()
                    .map_err(|_| format!("bad mark id '{}' (0..{})", rest[0], u32::MAX))?,
            )
        }
        "exit" => {
            nargs(0, "no arguments")?;
            Stmt::Exit
        }
        "call" => {
            let wait = match rest {
                [_] => true,
                [_, "nowait"] => false,
                _ => return Err("'call' takes a CPU and an optional 'nowait', e.g. 'call 8' or 'call {i+1} nowait'".into()),
            };
            Stmt::Call { cpu: rest[0].to_string(), wait }
        }
        "barrier" => {
            nargs(2, "a barrier name and the number of parties, e.g. 'barrier b 4'")?;
            let parties = u32::try_from(positive(rest[1], "party count")?)
                .map_err(|_| format!("party count '{}' is too large", rest[1]))?;
            Stmt::Barrier { name: name_arg(rest[0])?, parties }
        }
        "lock" | "unlock" => {
            nargs(1, "a mutex name, e.g. 'lock m'")?;
            let name = name_arg(rest[0])?;
            if op == "lock" {
                Stmt::Lock { name }
            } else {
                Stmt::Unlock { name }
            }
        }
        "cpu_lock" | "cpu_unlock" => {
            nargs(1, "a lock-array name, e.g. 'cpu_lock percpu'")?;
            let name = name_arg(rest[0])?;
            if op == "cpu_lock" {
                Stmt::CpuLock { name }
            } else {
                Stmt::CpuUnlock { name }
            }
        }
        "every" => {
            if rest.is_empty() {
                return Err("'every' needs a period, e.g. 'every 1ms'".into());
            }
            match parse_dur(&arg_text())? {
                Dur::Fixed(p) => Stmt::Every(p),
                _ => return Err("'every' takes a fixed period, not a distribution".into()),
            }
        }
        other => return Err(format!("unknown op '{other}' (known: {KNOWN})")),
    };
    Ok(Some(s))
}

fn name_arg(t: &str) -> Result<String, String> {
    if t == "{" || t == "}" {
        return Err(format!("expected a name, found '{t}'"));
    }
    Ok(t.to_string())
}

/// A whole number > 0; `_` separators allowed (`1_000_000`).
fn positive(t: &str, what: &str) -> Result<u64, String> {
    let clean = t.replace('_', "");
    if clean.starts_with('-') {
        return Err(format!("{what} must be positive, got '{t}'"));
    }
    match clean.parse::<u64>() {
        Ok(0) => Err(format!("{what} must be positive, got '{t}'")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("bad {what} '{t}' (expected a whole number)")),
    }
}

/// Parses `10us`, `exp(50us)`, `uniform(10us,20us)`, `normal(1ms,100us)` (no spaces).
pub(crate) fn parse_dur(s: &str) -> Result<Dur, String> {
    let call = |name: &str| -> Option<Vec<&str>> {
        let inner = s.strip_prefix(name)?.strip_prefix('(')?.strip_suffix(')')?;
        Some(inner.split(',').collect())
    };
    if let Some(a) = call("exp") {
        let [m] = a[..] else {
            return Err(format!("'exp' takes one mean, e.g. exp(50us), got '{s}'"));
        };
        return Ok(Dur::Exp {
            mean: time(m, false)?,
        });
    }
    if let Some(a) = call("uniform") {
        let [lo, hi] = a[..] else {
            return Err(format!(
                "'uniform' takes two bounds, e.g. uniform(10us,20us), got '{s}'"
            ));
        };
        let (lo, hi) = (time(lo, true)?, time(hi, false)?);
        if lo > hi {
            return Err(format!("uniform bounds are reversed in '{s}' (low > high)"));
        }
        return Ok(Dur::Uniform { lo, hi });
    }
    if let Some(a) = call("normal") {
        let [m, sd] = a[..] else {
            return Err(format!(
                "'normal' takes a mean and a deviation, e.g. normal(1ms,100us), got '{s}'"
            ));
        };
        return Ok(Dur::Normal {
            mean: time(m, false)?,
            sd: time(sd, true)?,
        });
    }
    if s.contains('(') {
        return Err(format!(
            "unknown distribution in '{s}' (known: exp, uniform, normal)"
        ));
    }
    Ok(Dur::Fixed(time(s, false)?))
}

/// `<number><unit>` with unit ns, us (µs), ms or s, to nanoseconds.
fn time(s: &str, zero_ok: bool) -> Result<Time, String> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_' || c == '-' || c == '+'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "" => {
            return Err(format!(
                "missing unit in duration '{s}' (use ns, us, ms or s)"
            ))
        }
        u => {
            return Err(format!(
                "bad duration unit '{u}' in '{s}' (use ns, us, ms or s)"
            ))
        }
    };
    let v: f64 = num
        .replace('_', "")
        .parse()
        .map_err(|_| format!("bad duration '{s}'"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("duration '{s}' must not be negative"));
    }
    let ns = (v * scale).round();
    if ns >= u64::MAX as f64 {
        return Err(format!("duration '{s}' is too large"));
    }
    if ns == 0.0 && !zero_ok {
        return Err(format!("duration '{s}' must be positive"));
    }
    Ok(ns as Time)
}

/// Expands `{i}`, `{i+K}`, `{i-K}` in `template` for replica `i`. With `wrap`, the result is
/// taken modulo `count` (rings: `send pipe{i+1} 4`); without, it must not go below 0.
pub(crate) fn expand(template: &str, i: u64, count: u64, wrap: bool) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| format!("unclosed '{{' in '{template}'"))?;
        let expr: String = after[..close]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let bad = || {
            format!("bad placeholder '{{{expr}}}' in '{template}' (use {{i}}, {{i+K}} or {{i-K}})")
        };
        let tail = expr.strip_prefix('i').ok_or_else(bad)?;
        let off: i128 = if tail.is_empty() {
            0
        } else if let Some(k) = tail.strip_prefix('+') {
            k.parse::<u64>().map_err(|_| bad())? as i128
        } else if let Some(k) = tail.strip_prefix('-') {
            -(k.parse::<u64>().map_err(|_| bad())? as i128)
        } else {
            return Err(bad());
        };
        let v = i as i128 + off;
        let v = if wrap {
            v.rem_euclid(count.max(1) as i128)
        } else if v < 0 {
            return Err(format!("'{template}' is negative for replica {i}"));
        } else {
            v
        };
        out.push_str(&v.to_string());
        rest = &after[close + 1..];
    }
    if rest.contains('}') {
        return Err(format!("unmatched '}}' in '{template}'"));
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_wrap_for_names_and_not_for_cpus() {
        assert_eq!(expand("p{i+1}", 3, 4, true).unwrap(), "p0");
        assert_eq!(expand("p{i-1}", 0, 4, true).unwrap(), "p3");
        assert_eq!(expand("{i+4}", 3, 4, false).unwrap(), "7");
        assert!(expand("{i-1}", 0, 4, false)
            .unwrap_err()
            .contains("negative"));
        assert!(expand("p{j}", 0, 1, true)
            .unwrap_err()
            .contains("bad placeholder '{j}'"));
        assert!(expand("p{i", 0, 1, true).unwrap_err().contains("unclosed"));
        assert!(expand("p}", 0, 1, true).unwrap_err().contains("unmatched"));
    }

    #[test]
    fn statements_parse_with_flexible_spacing() {
        assert_eq!(
            parse_stmt("  loop forever {  # spin").unwrap(),
            Some(Stmt::Loop(u64::MAX))
        );
        assert_eq!(parse_stmt("loop 1_000{").unwrap(), Some(Stmt::Loop(1000)));
        assert_eq!(
            parse_stmt("compute uniform( 0us, 2 us )").unwrap(),
            Some(Stmt::Compute(Dur::Uniform { lo: 0, hi: 2000 }))
        );
        assert_eq!(
            parse_stmt("sleep 3µs").unwrap(),
            Some(Stmt::Sleep(Dur::Fixed(3000)))
        );
        assert_eq!(parse_stmt("   # only a comment").unwrap(), None);
        assert!(parse_stmt("loop 3")
            .unwrap_err()
            .contains("expected 'loop N {'"));
        assert!(parse_stmt("wake f 1 2")
            .unwrap_err()
            .contains("optional count"));
        assert!(parse_stmt("send c")
            .unwrap_err()
            .contains("a channel and a byte count"));
        assert!(parse_stmt("} x").unwrap_err().contains("stands alone"));
        assert!(parse_stmt("mark -1").unwrap_err().contains("bad mark id"));
        assert!(parse_stmt("compute")
            .unwrap_err()
            .contains("needs a duration"));
        assert!(parse_stmt("compute exp(1us,2us)")
            .unwrap_err()
            .contains("one mean"));
    }
}
