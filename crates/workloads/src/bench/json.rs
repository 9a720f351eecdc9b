//! A small JSON reader for rt-app files: keeps object keys in file order (rt-app events are
//! ordered and may repeat, e.g. `"run"`, `"sleep"`, `"run"`), and remembers each value's line
//! and column so errors can name the file position.

#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Node>),
    Obj(Vec<(String, Node)>),
}

/// A value and where it starts (1-based line and column).
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub v: Json,
    pub line: usize,
    pub col: usize,
}

impl Node {
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.v {
            Json::Obj(kv) => kv.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn type_name(&self) -> &'static str {
        match self.v {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Num(_) => "number",
            Json::Str(_) => "string",
            Json::Arr(_) => "array",
            Json::Obj(_) => "object",
        }
    }
}

struct P<'a> {
    s: &'a [u8],
    i: usize,
    line: usize,
    col: usize,
}

/// Parses `text`; the error is `line:col: message`.
pub fn parse(text: &str) -> Result<Node, String> {
    let mut p = P { s: text.as_bytes(), i: 0, line: 1, col: 1 };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i < p.s.len() {
        return Err(p.err("unexpected text after the top-level value"));
    }
    Ok(v)
}

impl P<'_> {
    fn err(&self, m: &str) -> String {
        format!("{}:{}: {m}", self.line, self.col)
    }
    fn bump(&mut self) -> Option<u8> {
        let c = *self.s.get(self.i)?;
        self.i += 1;
        if c == b'\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_ascii_whitespace() {
                self.bump();
            } else if c == b'/' && self.s.get(self.i + 1) == Some(&b'*') {
                // workgen accepts C comments; so do we.
                self.bump();
                self.bump();
                while self.peek().is_some() && !(self.peek() == Some(b'*') && self.s.get(self.i + 1) == Some(&b'/')) {
                    self.bump();
                }
                self.bump();
                self.bump();
            } else {
                break;
            }
        }
    }
    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.bump();
            Ok(())
        } else {
            Err(self.err(&format!("expected '{}'", c as char)))
        }
    }
    fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > 64 {
            return Err(self.err("nesting too deep"));
        }
        let (line, col) = (self.line, self.col);
        let v = match self.peek() {
            Some(b'{') => {
                self.bump();
                let mut kv = Vec::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.bump();
                } else {
                    loop {
                        self.ws();
                        let k = match self.string()? {
                            Json::Str(s) => s,
                            _ => unreachable!(),
                        };
                        self.ws();
                        self.expect(b':')?;
                        self.ws();
                        let v = self.value(depth + 1)?;
                        kv.push((k, v));
                        self.ws();
                        match self.bump() {
                            Some(b',') => continue,
                            Some(b'}') => break,
                            _ => return Err(self.err("expected ',' or '}' in an object")),
                        }
                    }
                }
                Json::Obj(kv)
            }
            Some(b'[') => {
                self.bump();
                let mut a = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.bump();
                } else {
                    loop {
                        self.ws();
                        a.push(self.value(depth + 1)?);
                        self.ws();
                        match self.bump() {
                            Some(b',') => continue,
                            Some(b']') => break,
                            _ => return Err(self.err("expected ',' or ']' in an array")),
                        }
                    }
                }
                Json::Arr(a)
            }
            Some(b'"') => self.string()?,
            Some(b't') => self.word("true", Json::Bool(true))?,
            Some(b'f') => self.word("false", Json::Bool(false))?,
            Some(b'n') => self.word("null", Json::Null)?,
            Some(c) if c == b'-' || c.is_ascii_digit() => {
                let start = self.i;
                while matches!(self.peek(), Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
                    self.bump();
                }
                let t = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                Json::Num(t.parse().map_err(|_| format!("{line}:{col}: bad number '{t}'"))?)
            }
            _ => return Err(self.err("expected a value")),
        };
        Ok(Node { v, line, col })
    }
    fn word(&mut self, w: &str, v: Json) -> Result<Json, String> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            for _ in 0..w.len() {
                self.bump();
            }
            Ok(v)
        } else {
            Err(self.err("expected a value"))
        }
    }
    fn string(&mut self) -> Result<Json, String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            match self.bump() {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => break,
                Some(b'\\') => match self.bump() {
                    Some(b'n') => out.push(b'\n'),
                    Some(b't') => out.push(b'\t'),
                    Some(b'u') => {
                        let h: String = (0..4).filter_map(|_| self.bump().map(char::from)).collect();
                        let c = u32::from_str_radix(&h, 16).ok().and_then(char::from_u32).unwrap_or('?');
                        out.extend(c.to_string().as_bytes());
                    }
                    Some(c) => out.push(c),
                    None => return Err(self.err("unterminated string")),
                },
                Some(c) => out.push(c),
            }
        }
        Ok(Json::Str(String::from_utf8_lossy(&out).into_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_positions() {
        let n = parse("{\n \"run\": 10,\n \"sleep\": 5, \"run\": 3 /* c */ }").unwrap();
        let Json::Obj(kv) = &n.v else { panic!() };
        assert_eq!(kv.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), ["run", "sleep", "run"]);
        assert_eq!((kv[1].1.line, kv[1].1.col), (3, 11));
        assert!(parse("{\"a\": }").unwrap_err().starts_with("1:7: expected a value"));
        assert!(parse("[1, 2").unwrap_err().contains("expected ','"));
    }
}
