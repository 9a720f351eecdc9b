//! The per-CPU timeline of one run, read from a Chrome trace-event file (`trace.json`).
//!
//! Only complete events (`"ph": "X"`) are used: `tid` is the CPU, `ts`/`dur` are microseconds,
//! `name` is the task. Every other event kind (instant events, flow arrows, metadata) is
//! ignored, and so are complete events whose category says they are not a task's run
//! (`wakesim run --trace` marks task slices `"cat": "task"` and also writes idle-state and
//! newidle-balance slices). Both the object form `{"traceEvents": [...]}` and the bare array are accepted, as
//! Perfetto and `chrome://tracing` accept them.

use serde::Serialize;
use serde_json::Value;

/// At most this many slices are drawn (the earliest ones), to keep the page light.
pub const MAX_SLICES: usize = 20_000;

/// One task running on one CPU.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Slice {
    pub cpu: u64,
    /// Start, µs.
    pub start: f64,
    /// Duration, µs.
    pub dur: f64,
    pub name: String,
}

/// The slices of a trace, ordered by (start, cpu, name).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Timeline {
    pub slices: Vec<Slice>,
    /// Slices dropped beyond [`MAX_SLICES`].
    pub dropped: usize,
}

impl Timeline {
    /// Parse Chrome trace-event JSON. Errors name what is wrong.
    pub fn parse(text: &str) -> Result<Timeline, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let events = match &v {
            Value::Array(a) => a,
            Value::Object(o) => o.get("traceEvents").and_then(Value::as_array).ok_or("no \"traceEvents\" array")?,
            _ => return Err("neither an object nor an array of trace events".into()),
        };
        let mut slices = Vec::new();
        for e in events {
            if e.get("ph").and_then(Value::as_str) != Some("X") {
                continue;
            }
            if e.get("cat").and_then(Value::as_str).is_some_and(|c| c != "task") {
                continue;
            }
            let num = |k: &str| e.get(k).and_then(Value::as_f64);
            let (Some(cpu), Some(start), Some(dur)) = (e.get("tid").and_then(Value::as_u64), num("ts"), num("dur")) else {
                return Err(format!("complete event without numeric tid/ts/dur: {e}"));
            };
            let name = e.get("name").and_then(Value::as_str).unwrap_or("?").to_string();
            slices.push(Slice { cpu, start, dur, name });
        }
        slices.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.cpu.cmp(&b.cpu)).then(a.name.cmp(&b.name)));
        let dropped = slices.len().saturating_sub(MAX_SLICES);
        slices.truncate(MAX_SLICES);
        Ok(Timeline { slices, dropped })
    }

    /// CPUs that ran something, ascending.
    pub fn cpus(&self) -> Vec<u64> {
        let mut c: Vec<u64> = self.slices.iter().map(|s| s.cpu).collect();
        c.sort_unstable();
        c.dedup();
        c
    }

    /// Task names in order of first appearance.
    pub fn tasks(&self) -> Vec<String> {
        let mut t: Vec<String> = Vec::new();
        for s in &self.slices {
            if !t.contains(&s.name) {
                t.push(s.name.clone());
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_events_become_slices_and_other_kinds_are_ignored() {
        let t = Timeline::parse(
            r#"{"traceEvents":[
                {"ph":"X","pid":0,"tid":1,"ts":5.5,"dur":2,"name":"b"},
                {"ph":"X","pid":0,"tid":1,"ts":1,"dur":4,"name":"poll","cat":"idle"},
                {"ph":"X","pid":0,"tid":0,"ts":1,"dur":3,"name":"a"},
                {"ph":"i","pid":0,"tid":0,"ts":2,"name":"ipi"},
                {"ph":"s","id":1,"pid":0,"tid":0,"ts":2,"name":"wakeup"},
                {"ph":"M","pid":0,"name":"process_name","args":{"name":"cpus"}}
            ]}"#,
        )
        .unwrap();
        assert_eq!(t.slices.len(), 2);
        assert_eq!(t.slices[0], Slice { cpu: 0, start: 1.0, dur: 3.0, name: "a".into() });
        assert_eq!(t.cpus(), vec![0, 1]);
        assert_eq!(t.tasks(), vec!["a".to_string(), "b".to_string()]);
        assert_eq!(Timeline::parse(r#"[{"ph":"X","tid":3,"ts":0,"dur":1,"name":"x"}]"#).unwrap().cpus(), vec![3]);
    }

    #[test]
    fn malformed_traces_are_refused_with_a_reason() {
        assert!(Timeline::parse("{").unwrap_err().starts_with("not JSON"));
        assert!(Timeline::parse("{}").unwrap_err().contains("traceEvents"));
        assert!(Timeline::parse(r#"[{"ph":"X","tid":"cpu0","ts":0,"dur":1}]"#).unwrap_err().contains("tid"));
    }
}
