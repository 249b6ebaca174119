//! A small reader for the s-expressions Z3 answers with.
//!
//! [`Framer`] cuts the solver's output stream into complete top-level items (an atom such as
//! `success`, or a balanced list) without interpreting them; [`parse_one`] turns an item into
//! an [`SExpr`]. Both are iterative, so deeply nested answers cannot overflow the stack.
//!
//! Strings accept both SMT-LIB's doubled quote (`""`, used by Z3 in values) and a backslash
//! escape (`\"`, used by Z3 in error messages).

use std::collections::VecDeque;
use std::fmt;

/// A parsed s-expression.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum SExpr {
    /// A symbol, with `|...|` quotes removed.
    Symbol(String),
    /// A keyword, without the leading colon.
    Keyword(String),
    /// Decimal digits.
    Numeral(String),
    /// Digits with a fractional part, e.g. `1.5`.
    Decimal(String),
    /// A string literal, unescaped.
    String(String),
    /// `#x...` or `#b...`, verbatim.
    BitVec(String),
    List(Vec<SExpr>),
}

impl SExpr {
    pub fn as_symbol(&self) -> Option<&str> {
        match self {
            SExpr::Symbol(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[SExpr]> {
        match self {
            SExpr::List(items) => Some(items),
            _ => None,
        }
    }

    /// Whether this is the symbol `name`.
    pub fn is_symbol(&self, name: &str) -> bool {
        self.as_symbol() == Some(name)
    }
}

/// Dropping iteratively keeps deeply nested answers from overflowing the stack.
impl Drop for SExpr {
    fn drop(&mut self) {
        let SExpr::List(items) = self else { return };
        if !items
            .iter()
            .any(|item| matches!(item, SExpr::List(inner) if !inner.is_empty()))
        {
            return;
        }
        let mut pending = std::mem::take(items);
        while let Some(mut item) = pending.pop() {
            if let SExpr::List(inner) = &mut item {
                pending.append(inner);
            }
        }
    }
}

/// Prints the expression back as SMT-LIB text (symbols quoted when needed).
impl fmt::Display for SExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SExpr::Symbol(s) if crate::symbol::is_simple_symbol(s) => f.write_str(s),
            SExpr::Symbol(s) => write!(f, "|{s}|"),
            SExpr::Keyword(k) => write!(f, ":{k}"),
            SExpr::Numeral(s) | SExpr::Decimal(s) | SExpr::BitVec(s) => f.write_str(s),
            SExpr::String(s) => write!(f, "\"{}\"", s.replace('"', "\"\"")),
            SExpr::List(items) => {
                f.write_str("(")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// Why a text is not a well-formed s-expression.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseError {
    /// Byte offset in the text.
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for ParseError {}

/// Parses a text holding exactly one s-expression (comments and whitespace allowed).
pub fn parse_one(text: &str) -> Result<SExpr, ParseError> {
    let mut all = parse_all(text)?;
    match all.len() {
        1 => Ok(all.remove(0)),
        n => Err(ParseError {
            offset: 0,
            message: format!("expected one s-expression, found {n}"),
        }),
    }
}

/// Parses a sequence of s-expressions.
pub fn parse_all(text: &str) -> Result<Vec<SExpr>, ParseError> {
    let bytes = text.as_bytes();
    let mut stack: Vec<(usize, Vec<SExpr>)> = Vec::new();
    let mut top: Vec<SExpr> = Vec::new();
    let mut pos = 0;
    let error = |offset: usize, message: &str| ParseError {
        offset,
        message: message.to_string(),
    };
    while pos < bytes.len() {
        let start = pos;
        let item = match bytes[pos] {
            b if b.is_ascii_whitespace() => {
                pos += 1;
                continue;
            }
            b';' => {
                while pos < bytes.len() && bytes[pos] != b'\n' {
                    pos += 1;
                }
                continue;
            }
            b'(' => {
                stack.push((pos, Vec::new()));
                pos += 1;
                continue;
            }
            b')' => {
                let (_, items) = stack.pop().ok_or_else(|| error(pos, "unbalanced `)`"))?;
                pos += 1;
                SExpr::List(items)
            }
            b'"' => {
                let (value, end) =
                    read_string(text, pos).ok_or_else(|| error(pos, "unterminated string"))?;
                pos = end;
                SExpr::String(value)
            }
            b'|' => {
                let close = text[pos + 1..]
                    .find('|')
                    .ok_or_else(|| error(pos, "unterminated `|`"))?;
                let content = text[pos + 1..pos + 1 + close].to_string();
                pos += close + 2;
                SExpr::Symbol(content)
            }
            _ => {
                while pos < bytes.len() && !is_delimiter(bytes[pos]) {
                    pos += 1;
                }
                classify_atom(&text[start..pos])
            }
        };
        match stack.last_mut() {
            Some((_, items)) => items.push(item),
            None => top.push(item),
        }
    }
    if let Some((open, _)) = stack.last() {
        return Err(error(*open, "unclosed `(`"));
    }
    Ok(top)
}

fn is_delimiter(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'(' | b')' | b'"' | b';' | b'|')
}

fn classify_atom(atom: &str) -> SExpr {
    let bytes = atom.as_bytes();
    if let Some(keyword) = atom.strip_prefix(':') {
        return SExpr::Keyword(keyword.to_string());
    }
    if atom.starts_with("#x") || atom.starts_with("#b") {
        return SExpr::BitVec(atom.to_string());
    }
    if bytes[0].is_ascii_digit() {
        if bytes.iter().all(u8::is_ascii_digit) {
            return SExpr::Numeral(atom.to_string());
        }
        if let Some((whole, fraction)) = atom.split_once('.') {
            if whole.bytes().all(|b| b.is_ascii_digit())
                && !fraction.is_empty()
                && fraction.bytes().all(|b| b.is_ascii_digit())
            {
                return SExpr::Decimal(atom.to_string());
            }
        }
    }
    SExpr::Symbol(atom.to_string())
}

/// Reads a string literal starting at `start` (a `"`); returns its value and the offset
/// after the closing quote.
fn read_string(text: &str, start: usize) -> Option<(String, usize)> {
    let mut value = String::new();
    let mut chars = text[start + 1..].char_indices().peekable();
    while let Some((i, ch)) = chars.next() {
        match ch {
            '"' => {
                if let Some((_, '"')) = chars.peek() {
                    chars.next();
                    value.push('"');
                } else {
                    return Some((value, start + 1 + i + 1));
                }
            }
            '\\' => match chars.peek() {
                Some(&(_, c @ ('"' | '\\'))) => {
                    chars.next();
                    value.push(c);
                }
                _ => value.push('\\'),
            },
            _ => value.push(ch),
        }
    }
    None
}

/// Cuts a stream of solver output into complete top-level items.
#[derive(Default, Debug)]
pub struct Framer {
    buffer: String,
    depth: usize,
    state: FrameState,
    atom_open: bool,
    ready: VecDeque<String>,
}

#[derive(Default, Debug, Clone, Copy, PartialEq)]
enum FrameState {
    #[default]
    Normal,
    InString,
    /// Just saw a `"` inside a string: either a doubled quote or the end.
    StringQuote,
    StringBackslash,
    InQuotedSymbol,
    InComment,
}

impl Framer {
    pub fn new() -> Framer {
        Framer::default()
    }

    /// Feeds more output.
    pub fn push(&mut self, text: &str) {
        for ch in text.chars() {
            self.step(ch);
        }
    }

    /// The next complete item, if any.
    pub fn next_item(&mut self) -> Option<String> {
        self.ready.pop_front()
    }

    /// Whether a partial item is buffered.
    pub fn has_partial(&self) -> bool {
        !self.buffer.trim().is_empty()
    }

    fn emit(&mut self) {
        let item = self.buffer.trim().to_string();
        self.buffer.clear();
        self.atom_open = false;
        if !item.is_empty() {
            self.ready.push_back(item);
        }
    }

    fn step(&mut self, ch: char) {
        match self.state {
            FrameState::InComment => {
                if ch == '\n' {
                    self.state = FrameState::Normal;
                    if self.depth > 0 {
                        self.buffer.push('\n');
                    }
                }
            }
            FrameState::InString => {
                self.buffer.push(ch);
                match ch {
                    '"' => self.state = FrameState::StringQuote,
                    '\\' => self.state = FrameState::StringBackslash,
                    _ => {}
                }
            }
            FrameState::StringBackslash => {
                // The escaped character never ends the string.
                self.buffer.push(ch);
                self.state = FrameState::InString;
            }
            FrameState::StringQuote => {
                if ch == '"' {
                    self.buffer.push(ch);
                    self.state = FrameState::InString;
                } else {
                    self.state = FrameState::Normal;
                    self.step(ch);
                }
            }
            FrameState::InQuotedSymbol => {
                self.buffer.push(ch);
                if ch == '|' {
                    self.state = FrameState::Normal;
                }
            }
            FrameState::Normal => self.step_normal(ch),
        }
    }

    fn step_normal(&mut self, ch: char) {
        let top_level = self.depth == 0;
        match ch {
            ';' => {
                if top_level && self.atom_open {
                    self.emit();
                }
                self.state = FrameState::InComment;
            }
            '(' => {
                if top_level && self.atom_open {
                    self.emit();
                }
                self.buffer.push(ch);
                self.depth += 1;
            }
            ')' => {
                if top_level {
                    // A stray `)`: pass it on as its own item so the reader reports garbage.
                    if self.atom_open {
                        self.emit();
                    }
                    self.buffer.push(ch);
                    self.emit();
                } else {
                    self.buffer.push(ch);
                    self.depth -= 1;
                    if self.depth == 0 {
                        self.emit();
                    }
                }
            }
            c if c.is_whitespace() => {
                if top_level {
                    if self.atom_open {
                        self.emit();
                    }
                } else {
                    self.buffer.push(c);
                }
            }
            c => {
                self.buffer.push(c);
                if top_level {
                    self.atom_open = true;
                }
                match c {
                    '"' => self.state = FrameState::InString,
                    '|' => self.state = FrameState::InQuotedSymbol,
                    _ => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(s: &str) -> SExpr {
        SExpr::Symbol(s.to_string())
    }

    #[test]
    fn atoms_are_classified() {
        assert_eq!(parse_one("success").unwrap(), sym("success"));
        assert_eq!(parse_one("42").unwrap(), SExpr::Numeral("42".into()));
        assert_eq!(parse_one("1.50").unwrap(), SExpr::Decimal("1.50".into()));
        assert_eq!(
            parse_one(":reason-unknown").unwrap(),
            SExpr::Keyword("reason-unknown".into())
        );
        assert_eq!(parse_one("#x0a").unwrap(), SExpr::BitVec("#x0a".into()));
        assert_eq!(parse_one("|x@1 y|").unwrap(), sym("x@1 y"));
        assert_eq!(parse_one("S!val!0").unwrap(), sym("S!val!0"));
    }

    #[test]
    fn strings_accept_both_escapes() {
        assert_eq!(
            parse_one(r#""a""b""#).unwrap(),
            SExpr::String("a\"b".into())
        );
        assert_eq!(
            parse_one(r#"(error "unknown constant a\"b")"#).unwrap(),
            SExpr::List(vec![
                sym("error"),
                SExpr::String("unknown constant a\"b".into())
            ])
        );
        assert_eq!(parse_one(r#""\x""#).unwrap(), SExpr::String("\\x".into()));
    }

    #[test]
    fn lists_comments_and_errors() {
        let parsed = parse_one("(\n ;; universe\n (define-fun x () Int\n (- 5)))").unwrap();
        assert_eq!(parsed.to_string(), "((define-fun x () Int (- 5)))");
        assert!(parse_one("(a (b)").is_err());
        assert!(parse_one("a)").is_err());
        assert!(parse_one("a b").is_err());
        assert!(parse_one("\"open").is_err());
        assert!(parse_one("").is_err());
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let depth = 100_000;
        let text = format!("{}x{}", "(".repeat(depth), ")".repeat(depth));
        assert!(parse_one(&text).is_ok());
    }

    #[test]
    fn framer_splits_a_stream() {
        let mut framer = Framer::new();
        framer.push("success\nsat\n(\n  (define-fun x () Int\n");
        assert_eq!(framer.next_item().as_deref(), Some("success"));
        assert_eq!(framer.next_item().as_deref(), Some("sat"));
        assert_eq!(framer.next_item(), None);
        assert!(framer.has_partial());
        framer.push("    3) ; a comment with ) in it\n)\n");
        assert_eq!(
            framer.next_item().as_deref(),
            Some("(\n  (define-fun x () Int\n    3) \n)")
        );
        framer
            .push("(error \"line 2: unknown constant a\\\"b)\")\n(:reason-unknown \"timeout\")\n");
        assert_eq!(
            framer.next_item().as_deref(),
            Some("(error \"line 2: unknown constant a\\\"b)\")")
        );
        assert_eq!(
            framer.next_item().as_deref(),
            Some("(:reason-unknown \"timeout\")")
        );
        framer.push("((|a)b| 1))\n\"str\"\"ing\"\n; only a comment\nunsat");
        assert_eq!(framer.next_item().as_deref(), Some("((|a)b| 1))"));
        assert_eq!(framer.next_item().as_deref(), Some("\"str\"\"ing\""));
        assert_eq!(framer.next_item(), None);
        framer.push("\n)");
        assert_eq!(framer.next_item().as_deref(), Some("unsat"));
        assert_eq!(framer.next_item().as_deref(), Some(")"));
    }
}
