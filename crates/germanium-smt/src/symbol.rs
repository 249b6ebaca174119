//! SMT-LIB symbols: mangling of user names, quoting, and fresh names.
//!
//! A [`Symbol`] holds the symbol *as the solver sees it* (already mangled, without `|...|`
//! quotes). Three disjoint families exist, so they can never clash:
//!
//! * user names ([`Symbol::user`]): every `%`, `@`, `|`, `\`, `"` and every byte outside
//!   printable ASCII is written `%XX` (hex of the UTF-8 byte). A name that would collide
//!   with an SMT-LIB or Z3 built-in (`abs`, `select`, `Int`, `bvadd`, ...) gets a `%` appended.
//!   User symbols therefore never contain a raw `@`.
//! * fresh names ([`NameGenerator::fresh`]): `base@N` — the only family with a raw `@`.
//!   Names are unique per generator; use one generator per solver session.
//! * solver names ([`Symbol::from_solver`]): read back from Z3's answers, kept verbatim.
//!
//! Printing quotes a symbol with `|...|` exactly when it is not a simple SMT-LIB symbol; the
//! mangling guarantees that the content never needs a character `|...|` cannot hold.

use std::fmt;
use std::sync::Arc;

/// An SMT-LIB symbol (function, sort, variable, quantifier id or assertion name).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Symbol(Arc<str>);

/// Characters (besides letters and digits) allowed in simple (unquoted) SMT-LIB symbols.
const SIMPLE_SYMBOL_PUNCTUATION: &str = "~!@$%^&*_-+=<>.?/";

/// Names that SMT-LIB or Z3 give a meaning to; a user name equal to one of these is mangled.
const RESERVED: &[&str] = &[
    // SMT-LIB reserved words and predefined symbols.
    "!",
    "_",
    "as",
    "BINARY",
    "DECIMAL",
    "exists",
    "HEXADECIMAL",
    "forall",
    "let",
    "match",
    "NUMERAL",
    "par",
    "STRING",
    "lambda",
    "error",
    "sat",
    "unsat",
    "unknown",
    "success",
    "unsupported",
    "continued-execution",
    "immediate-exit",
    "incomplete",
    "logic",
    "memout",
    "theory",
    // Command names.
    "assert",
    "check-sat",
    "check-sat-assuming",
    "declare-const",
    "declare-datatype",
    "declare-datatypes",
    "declare-fun",
    "declare-sort",
    "define-fun",
    "define-fun-rec",
    "define-funs-rec",
    "define-sort",
    "echo",
    "exit",
    "get-assertions",
    "get-assignment",
    "get-info",
    "get-model",
    "get-option",
    "get-proof",
    "get-unsat-assumptions",
    "get-unsat-core",
    "get-value",
    "pop",
    "push",
    "reset",
    "reset-assertions",
    "set-info",
    "set-logic",
    "set-option",
    // Core, Ints, Reals, Reals_Ints, ArraysEx.
    "Bool",
    "true",
    "false",
    "not",
    "and",
    "or",
    "xor",
    "=>",
    "=",
    "ite",
    "implies",
    "iff",
    "distinct",
    "equiv",
    "Int",
    "Real",
    "div",
    "mod",
    "abs",
    "rem",
    "to_real",
    "to_int",
    "is_int",
    "Array",
    "select",
    "store",
    "const",
    "-",
    "+",
    "*",
    "/",
    "<",
    "<=",
    ">",
    ">=",
    // Bit-vectors and floating point (non-prefixed names).
    "BitVec",
    "concat",
    "extract",
    "repeat",
    "zero_extend",
    "sign_extend",
    "rotate_left",
    "rotate_right",
    "FloatingPoint",
    "Float16",
    "Float32",
    "Float64",
    "Float128",
    "RoundingMode",
    "RNE",
    "RNA",
    "RTP",
    "RTN",
    "RTZ",
    "roundNearestTiesToEven",
    "roundNearestTiesToAway",
    "roundTowardPositive",
    "roundTowardNegative",
    "roundTowardZero",
    "to_fp",
    "to_fp_unsigned",
    "to_ieee_bv",
    "NaN",
    "+oo",
    "-oo",
    "+zero",
    "-zero",
    // Z3 built-in sorts and functions that are easy to hit by accident.
    "String",
    "Seq",
    "RegEx",
    "RegLan",
    "Set",
    "List",
    "Unit",
    "Char",
    "min",
    "max",
    "as-array",
    "subset",
    "union",
    "intersection",
    "setminus",
    "complement",
    "member",
    "array-ext",
    "map",
    "default",
    "is",
    "nil",
    "cons",
    "head",
    "tail",
    "insert",
    "power",
    "root-obj",
    "pi",
    "euler",
    "exp",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
];

/// Z3 name spaces: a user name starting with one of these is mangled.
const RESERVED_PREFIXES: &[&str] = &["bv", "fp.", "str.", "seq.", "re.", "int.", "char."];

impl Symbol {
    /// The symbol for a name chosen by the user of this crate (a Viper identifier, a domain
    /// name, ...). Distinct names give distinct symbols, and none of them is a built-in or a
    /// fresh name.
    pub fn user(name: &str) -> Symbol {
        let mut out = escape(name);
        if needs_reserved_marker(&out) {
            out.push('%');
        }
        Symbol(out.into())
    }

    /// A symbol exactly as the solver printed it (e.g. `S!val!0` in a model). Not mangled.
    pub fn from_solver(text: &str) -> Symbol {
        Symbol(text.into())
    }

    /// The symbol's content, without `|...|` quotes.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this symbol came from a [`NameGenerator`].
    pub fn is_fresh(&self) -> bool {
        self.0.contains('@')
    }

    /// The user name this symbol was made from by [`Symbol::user`], or `None` for fresh names
    /// and for contents that are not a mangled user name.
    pub fn user_name(&self) -> Option<String> {
        if self.is_fresh() {
            return None;
        }
        let text = self.0.strip_suffix('%').unwrap_or(&self.0);
        unescape(text)
    }

    /// Whether the symbol can be printed without `|...|`.
    pub fn is_simple(&self) -> bool {
        is_simple_symbol(&self.0)
    }
}

impl fmt::Debug for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Symbol({})", self)
    }
}

/// Prints the symbol as SMT-LIB text, quoted when needed.
impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if is_simple_symbol(&self.0) {
            f.write_str(&self.0)
        } else {
            // Content never contains `|` or `\` for user and fresh names; a solver name that
            // does cannot have come from Z3, which cannot print it either.
            write!(f, "|{}|", self.0)
        }
    }
}

/// Whether `text` is an SMT-LIB simple symbol (and not a reserved word that needs quoting).
pub(crate) fn is_simple_symbol(text: &str) -> bool {
    let mut chars = text.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    if first.is_ascii_digit() {
        return false;
    }
    let simple_char = |c: char| c.is_ascii_alphanumeric() || SIMPLE_SYMBOL_PUNCTUATION.contains(c);
    simple_char(first)
        && chars.all(simple_char)
        && !matches!(
            text,
            "!" | "_" | "as" | "let" | "exists" | "forall" | "match" | "par" | "lambda"
        )
}

fn must_escape(byte: u8) -> bool {
    matches!(byte, b'%' | b'@' | b'|' | b'\\' | b'"') || !(0x21..=0x7e).contains(&byte)
}

fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (index, ch) in name.char_indices() {
        let mut buf = [0u8; 4];
        let bytes = ch.encode_utf8(&mut buf).as_bytes();
        // SMT-LIB reserves symbols starting with `.` for solver use.
        let leading_dot = index == 0 && ch == '.';
        if leading_dot || bytes.iter().any(|&b| must_escape(b)) {
            for b in bytes {
                out.push_str(&format!("%{b:02x}"));
            }
        } else {
            out.push(ch);
        }
    }
    out
}

fn unescape(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn needs_reserved_marker(escaped: &str) -> bool {
    escaped.is_empty()
        || RESERVED.contains(&escaped)
        || RESERVED_PREFIXES.iter().any(|p| escaped.starts_with(p))
}

/// Generates fresh symbols `base@N` that cannot clash with [`Symbol::user`] symbols nor with
/// each other. Deterministic: the same sequence of requests yields the same names, which
/// keeps logs of parallel workers reproducible.
#[derive(Debug, Default, Clone)]
pub struct NameGenerator {
    next: u64,
}

impl NameGenerator {
    /// A generator starting at `base@0`.
    pub fn new() -> NameGenerator {
        NameGenerator::default()
    }

    /// A fresh symbol whose readable part is derived from `base` (which may be any string).
    pub fn fresh(&mut self, base: &str) -> Symbol {
        let base = if base.is_empty() { "fresh" } else { base };
        let n = self.next;
        self.next += 1;
        Symbol(format!("{}@{n}", escape(base)).into())
    }

    /// How many names have been generated.
    pub fn count(&self) -> u64 {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed(name: &str) -> String {
        Symbol::user(name).to_string()
    }

    #[test]
    fn plain_names_print_as_they_are() {
        assert_eq!(printed("x"), "x");
        assert_eq!(printed("Seq_length"), "Seq_length");
        assert_eq!(printed("$Snap.combine"), "$Snap.combine");
    }

    #[test]
    fn odd_characters_are_quoted() {
        assert_eq!(printed("Seq[Int]"), "|Seq[Int]|");
        assert_eq!(printed("1st"), "|1st|");
        assert_eq!(printed("a b"), "a%20b");
        assert_eq!(printed("a:b"), "|a:b|");
    }

    #[test]
    fn characters_quotes_cannot_hold_are_escaped() {
        assert_eq!(printed("a|b"), "a%7cb");
        assert_eq!(printed("a\\b"), "a%5cb");
        assert_eq!(printed("a\"b(c)"), "|a%22b(c)|");
        assert_eq!(printed("ü"), "%c3%bc");
        assert_eq!(printed("a@1"), "a%401");
        assert_eq!(printed("100%"), "|100%25|");
        assert_eq!(printed(".hidden"), "%2ehidden");
    }

    #[test]
    fn builtin_names_are_mangled() {
        assert_eq!(printed("abs"), "abs%");
        assert_eq!(printed("select"), "select%");
        assert_eq!(printed("Int"), "Int%");
        assert_eq!(printed("bvadd"), "bvadd%");
        assert_eq!(printed("seq.len"), "seq.len%");
        assert_eq!(printed("forall"), "forall%");
        assert_eq!(printed(""), "%");
        assert_eq!(printed("_"), "_%");
    }

    #[test]
    fn mangling_is_injective_on_tricky_names() {
        let names = [
            "abs", "abs%", "abs%25", "a@1", "a%401", "", "%", "a|", "a%7c", "_x", "x",
        ];
        let symbols: Vec<Symbol> = names.iter().map(|n| Symbol::user(n)).collect();
        for (i, a) in symbols.iter().enumerate() {
            assert_eq!(
                a.user_name().as_deref(),
                Some(names[i]),
                "round trip of {:?}",
                names[i]
            );
            for b in &symbols[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn fresh_names_never_equal_user_names() {
        let mut names = NameGenerator::new();
        let a = names.fresh("x");
        let b = names.fresh("x");
        assert_eq!(a.to_string(), "x@0");
        assert_eq!(b.to_string(), "x@1");
        assert!(a.is_fresh() && !Symbol::user("x@0").is_fresh());
        assert_ne!(a, Symbol::user("x@0"));
        assert_eq!(names.fresh("").to_string(), "fresh@2");
        assert_eq!(names.fresh("a|b").to_string(), "a%7cb@3");
        assert_eq!(a.user_name(), None);
    }

    #[test]
    fn simple_symbol_rules() {
        assert!(is_simple_symbol("x!0"));
        assert!(is_simple_symbol("<=>"));
        assert!(!is_simple_symbol("0x"));
        assert!(!is_simple_symbol(""));
        assert!(!is_simple_symbol("let"));
        assert!(!is_simple_symbol("a#b"));
    }
}
