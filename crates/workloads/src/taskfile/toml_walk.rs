//! Reading a TOML document with positions: every value keeps its byte span
//! (`toml::de::DeTable`), so each error can name `file:line`. Unknown keys are errors.

use crate::WorkloadError;
use std::ops::Range;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// The file being read: its name for messages, its text and where each line starts.
pub(crate) struct Src<'a> {
    pub path: &'a str,
    pub text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> Src<'a> {
    pub fn new(path: &'a str, text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Src {
            path,
            text,
            line_starts,
        }
    }

    /// 1-based line of byte offset `off`.
    pub fn line(&self, off: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= off).max(1)
    }

    pub fn err_at_line(&self, line: usize, msg: impl Into<String>) -> WorkloadError {
        WorkloadError::File {
            path: self.path.to_string(),
            line,
            msg: msg.into(),
        }
    }

    pub fn err(&self, span: &Range<usize>, msg: impl Into<String>) -> WorkloadError {
        self.err_at_line(self.line(span.start), msg)
    }

    /// A TOML syntax error, at its position.
    pub fn toml_err(&self, e: &toml::de::Error) -> WorkloadError {
        let line = e.span().map(|s| self.line(s.start)).unwrap_or(1);
        self.err_at_line(line, format!("TOML syntax: {}", e.message().trim()))
    }

    /// The lines of a string value with the file line of each (multi-line strings included:
    /// TOML drops a newline right after the opening `"""`/`'''`).
    pub fn string_lines(&self, span: &Range<usize>, value: &str) -> Vec<(usize, String)> {
        let raw = self.text.get(span.clone()).unwrap_or("");
        let mut first = self.line(span.start);
        let body = raw.get(3..).unwrap_or("");
        if (raw.starts_with("\"\"\"") || raw.starts_with("'''"))
            && (body.starts_with('\n') || body.starts_with("\r\n"))
        {
            first += 1;
        }
        value
            .lines()
            .enumerate()
            .map(|(k, l)| (first + k, l.to_string()))
            .collect()
    }
}

/// A table and what it is called in messages (`[[task]]`, `[report]`, the top level).
pub(crate) struct Tbl<'s, 'i> {
    pub src: &'s Src<'s>,
    pub t: &'s DeTable<'i>,
    pub span: Range<usize>,
    pub what: &'static str,
}

pub(crate) type V<'s, 'i> = &'s Spanned<DeValue<'i>>;

impl<'s, 'i> Tbl<'s, 'i> {
    /// Every key must be one of `allowed`.
    pub fn deny_unknown(&self, allowed: &[&str]) -> Result<(), WorkloadError> {
        // Report the first unknown key in file order.
        let mut unknown: Vec<_> = self
            .t
            .iter()
            .filter(|(k, _)| !allowed.contains(&k.get_ref().as_ref()))
            .collect();
        unknown.sort_by_key(|(k, _)| k.span().start);
        if let Some((k, _)) = unknown.first() {
            return Err(self.src.err(
                &k.span(),
                format!(
                    "unknown key '{}' in {} (allowed: {})",
                    k.get_ref(),
                    self.what,
                    allowed.join(", ")
                ),
            ));
        }
        Ok(())
    }

    pub fn get(&self, key: &str) -> Option<V<'s, 'i>> {
        self.t.get(key)
    }

    fn type_err(&self, key: &str, v: V, want: &str) -> WorkloadError {
        self.src.err(
            &v.span(),
            format!(
                "'{key}' in {} must be {want}, not a {}",
                self.what,
                v.get_ref().type_str()
            ),
        )
    }

    pub fn str(&self, key: &str) -> Result<Option<(String, Range<usize>)>, WorkloadError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.get_ref().as_str() {
                Some(s) => Ok(Some((s.to_string(), v.span()))),
                None => Err(self.type_err(key, v, "a string")),
            },
        }
    }

    pub fn req_str(&self, key: &str) -> Result<(String, Range<usize>), WorkloadError> {
        self.str(key)?.ok_or_else(|| {
            self.src
                .err(&self.span, format!("{} needs '{key}'", self.what))
        })
    }

    pub fn int(&self, key: &str) -> Result<Option<(i64, Range<usize>)>, WorkloadError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => Ok(Some((int_of(self.src, key, v)?, v.span()))),
        }
    }

    /// A string, or an integer taken as its decimal text (for `mm` and `group` keys).
    pub fn key(&self, key: &str) -> Result<Option<(String, Range<usize>)>, WorkloadError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.get_ref() {
                DeValue::String(s) => Ok(Some((s.to_string(), v.span()))),
                DeValue::Integer(_) => Ok(Some((int_of(self.src, key, v)?.to_string(), v.span()))),
                _ => Err(self.type_err(key, v, "a string or an integer")),
            },
        }
    }

    /// `[[key]]` entries (an array of tables), each as a `Tbl` called `what`.
    pub fn tables(&self, key: &str, what: &'static str) -> Result<Vec<Tbl<'s, 'i>>, WorkloadError> {
        let Some(v) = self.get(key) else {
            return Ok(Vec::new());
        };
        let Some(arr) = v.get_ref().as_array() else {
            return Err(self.type_err(key, v, &format!("an array of tables ({what})")));
        };
        arr.iter()
            .map(|item| match item.get_ref().as_table() {
                Some(t) => Ok(Tbl {
                    src: self.src,
                    t,
                    span: item.span(),
                    what,
                }),
                None => Err(self.src.err(
                    &item.span(),
                    format!("entries of '{key}' must be tables ({what})"),
                )),
            })
            .collect()
    }

    pub fn table(
        &self,
        key: &str,
        what: &'static str,
    ) -> Result<Option<Tbl<'s, 'i>>, WorkloadError> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        match v.get_ref().as_table() {
            Some(t) => Ok(Some(Tbl {
                src: self.src,
                t,
                span: v.span(),
                what,
            })),
            None => Err(self.type_err(key, v, &format!("a table ({what})"))),
        }
    }
}

pub(crate) fn int_of(src: &Src, key: &str, v: V) -> Result<i64, WorkloadError> {
    match v.get_ref().as_integer() {
        Some(i) => i64::from_str_radix(i.as_str(), i.radix())
            .map_err(|_| src.err(&v.span(), format!("'{key}' is out of range"))),
        None => Err(src.err(
            &v.span(),
            format!(
                "'{key}' must be an integer, not a {}",
                v.get_ref().type_str()
            ),
        )),
    }
}
