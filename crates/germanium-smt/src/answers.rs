//! Answers to queries kept between runs: a [`Solver`](crate::Solver) given an
//! [`AnswerStore`] looks each query up under a [`QueryKey`] before sending `check-sat`, and
//! records what Z3 answered.
//!
//! A key is the SHA-256 of a *canonical* text of everything the solver holds when the query
//! is asked: the options and the commands up to the checkpoint (the preamble, verbatim),
//! then every assertion of the open scopes, and the query with its limits. Names made after
//! the checkpoint are renamed by order of first occurrence, and the first occurrence of a
//! name declared after the checkpoint brings its declaration: so the key does not depend on
//! how many names the members before this one in a session used (which changes when some of
//! them come from the result cache), but two keys are equal only when the two assertion sets
//! are the same up to a one-to-one renaming of such names, with the same sorts, which
//! changes nothing about their satisfiability.
//!
//! What is renamed: a symbol declared after the checkpoint (with its declaration), or one that
//! contains `@` (a fresh name: a bound variable) and does not occur in the preamble. Every
//! other symbol (built-ins, user names, what the preamble declares) is kept verbatim, which
//! is always safe.
//! Tracking stops (no key) until the next rewind when something happens that this does not
//! follow: an option set after the checkpoint, or a declaration sent as raw text.

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

use crate::session::SatResult;

/// Where a solver finds and leaves answers. Implementations decide how long answers are
/// kept; lookups must not see answers recorded during the same run (a run's verdicts would
/// then depend on which worker asked first).
pub trait AnswerStore: Send + Sync + std::fmt::Debug {
    fn answer(&self, key: &QueryKey) -> Option<SatResult>;
    fn record(&self, key: QueryKey, answer: &SatResult);
}

/// The identity of one query: see the module documentation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct QueryKey(pub [u8; 32]);

/// Whether an answer is worth keeping: `sat`, `unsat`, `unknown` for incompleteness, and
/// `unknown` for running out of resources when `only_rlimit` (Z3 had no `:timeout`, so the
/// limit was `:rlimit`, which counts work: Z3 gives that answer again). Never an answer of
/// time or memory, which depend on the machine.
pub fn worth_keeping(answer: &SatResult, only_rlimit: bool) -> bool {
    !answer.is_resource_out() || (only_rlimit && !answer.is_machine_limit())
}

/// Follows the solver's commands since the checkpoint and makes [`QueryKey`]s.
#[derive(Clone)]
pub(crate) struct KeyTracker {
    /// The hash of the options and the preamble.
    base: Sha256,
    /// Every symbol the preamble mentions (kept verbatim).
    preamble_symbols: HashSet<Box<str>>,
    /// Declarations made after the checkpoint, printed (declarations are global: never
    /// popped).
    declarations: HashMap<Box<str>, String>,
    /// The hash of the assertions of the open scopes so far.
    stream: Sha256,
    /// Canonical numbers of renamed names, and the names in order of their numbers.
    renaming: HashMap<Box<str>, u32>,
    renamed: Vec<Box<str>>,
    /// Per open scope: `stream` and `renamed.len()` when it was opened.
    scopes: Vec<(Sha256, usize)>,
    /// Something happened that keys cannot follow: no keys until the next rewind.
    lost: bool,
}

impl KeyTracker {
    /// A tracker for a solver whose options print as `options` and whose commands up to the
    /// checkpoint print as `preamble`.
    pub(crate) fn new<'a>(options: &str, preamble: impl Iterator<Item = &'a str>) -> KeyTracker {
        let mut base = Sha256::new();
        base.update(b"germanium query key 1\0");
        base.update(options.as_bytes());
        let mut preamble_symbols = HashSet::new();
        for text in preamble {
            base.update([0]);
            base.update(text.as_bytes());
            for token in tokens(text) {
                if let Token::Symbol(s) = token {
                    if !preamble_symbols.contains(s) {
                        preamble_symbols.insert(s.into());
                    }
                }
            }
        }
        KeyTracker {
            stream: base.clone(),
            base,
            preamble_symbols,
            declarations: HashMap::new(),
            renaming: HashMap::new(),
            renamed: Vec::new(),
            scopes: Vec::new(),
            lost: false,
        }
    }

    /// Back to the state at the checkpoint (after `(reset)` and a replay of the preamble).
    pub(crate) fn rewind(&mut self) {
        self.stream = self.base.clone();
        self.declarations.clear();
        self.renaming.clear();
        self.renamed.clear();
        self.scopes.clear();
        self.lost = false;
    }

    /// A declaration of `name` (printed as `text`) made after the checkpoint.
    pub(crate) fn declared(&mut self, name: &str, text: &str) {
        self.declarations.insert(name.into(), text.to_string());
    }

    /// A command made after the checkpoint that keys cannot follow.
    pub(crate) fn lose_track(&mut self) {
        self.lost = true;
    }

    /// An assertion (or other scoped command) printed as `text`.
    pub(crate) fn scoped(&mut self, text: &str) {
        if text.contains("(declare-") || text.contains("(define-") {
            // A declaration as raw text: its name would be read as a bound variable.
            self.lost = true;
            return;
        }
        let mut stream = std::mem::replace(&mut self.stream, Sha256::new());
        stream.update([1]);
        self.feed(&mut stream, text, 0);
        self.stream = stream;
    }

    pub(crate) fn push(&mut self) {
        self.scopes.push((self.stream.clone(), self.renamed.len()));
    }

    pub(crate) fn pop(&mut self, n: usize) {
        for _ in 0..n {
            let Some((stream, renamed)) = self.scopes.pop() else {
                // More pops than pushes since the checkpoint: the tracker missed something.
                self.lost = true;
                return;
            };
            self.stream = stream;
            self.forget_renamings_after(renamed);
        }
    }

    /// The key of the query printed as `query`, asked with limits printed as `limits`; `None`
    /// when keys cannot be trusted.
    pub(crate) fn key(&mut self, query: &str, limits: &str) -> Option<QueryKey> {
        if self.lost {
            return None;
        }
        let mark = self.renamed.len();
        let mut h = self.stream.clone();
        h.update([2]);
        self.feed(&mut h, query, 0);
        h.update([3]);
        h.update(limits.as_bytes());
        self.forget_renamings_after(mark);
        Some(QueryKey(h.finalize().into()))
    }

    fn forget_renamings_after(&mut self, mark: usize) {
        for name in self.renamed.drain(mark..) {
            self.renaming.remove(&name);
        }
    }

    /// Hashes `text` canonically into `h`; `depth` counts declarations being expanded.
    fn feed(&mut self, h: &mut Sha256, text: &str, depth: usize) {
        for token in tokens(text) {
            match token {
                Token::Open => h.update(b"("),
                Token::Close => h.update(b")"),
                Token::Atom(a) => {
                    h.update([b'a']);
                    h.update(a.as_bytes());
                    h.update([0]);
                }
                Token::Symbol(s) => self.feed_symbol(h, s, depth),
            }
        }
    }

    fn feed_symbol(&mut self, h: &mut Sha256, s: &str, depth: usize) {
        if let Some(&n) = self.renaming.get(s) {
            h.update([b'#']);
            h.update(n.to_le_bytes());
            return;
        }
        // A name declared after the checkpoint goes with its declaration even if the preamble
        // mentions it (there it can only have been a bound variable).
        let declaration = self.declarations.get(s).cloned();
        let fresh = declaration.is_none() && s.contains('@') && !self.preamble_symbols.contains(s);
        if declaration.is_none() && !fresh {
            h.update([b's']);
            h.update(s.as_bytes());
            h.update([0]);
            return;
        }
        let n = self.renamed.len() as u32;
        self.renaming.insert(s.into(), n);
        self.renamed.push(s.into());
        h.update([b'#']);
        h.update(n.to_le_bytes());
        match declaration {
            // Declarations mention only names declared before them, so this ends; the bound
            // is for safety, and past it the key is simply lost.
            Some(_) if depth > 64 => self.lost = true,
            Some(text) => {
                h.update([b'{']);
                self.feed(h, &text, depth + 1);
                h.update([b'}']);
            }
            None => h.update([b'b']),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Token<'a> {
    Open,
    Close,
    Symbol(&'a str),
    /// Numerals, strings, keywords and other literals, kept as written.
    Atom(&'a str),
}

/// The tokens of SMT-LIB text as the printer writes it (`|...|` symbols are given without
/// their bars, so `|a|` and `a` are one symbol, as in SMT-LIB).
fn tokens(text: &str) -> impl Iterator<Item = Token<'_>> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= bytes.len() {
            return None;
        }
        let start = i;
        match bytes[i] {
            b'(' => {
                i += 1;
                Some(Token::Open)
            }
            b')' => {
                i += 1;
                Some(Token::Close)
            }
            b'|' => {
                let end = text[i + 1..].find('|').map_or(bytes.len(), |k| i + 1 + k);
                i = (end + 1).min(bytes.len());
                Some(Token::Symbol(&text[start + 1..end]))
            }
            b'"' => {
                // `""` inside a string is an escaped quote.
                i += 1;
                while i < bytes.len() {
                    if bytes[i] == b'"' {
                        if bytes.get(i + 1) == Some(&b'"') {
                            i += 2;
                            continue;
                        }
                        i += 1;
                        break;
                    }
                    i += 1;
                }
                Some(Token::Atom(&text[start..i]))
            }
            first => {
                while i < bytes.len()
                    && !bytes[i].is_ascii_whitespace()
                    && !matches!(bytes[i], b'(' | b')' | b'|' | b'"')
                {
                    i += 1;
                }
                let word = &text[start..i];
                let literal = first.is_ascii_digit() || first == b':' || first == b'#';
                Some(if literal {
                    Token::Atom(word)
                } else {
                    Token::Symbol(word)
                })
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracker() -> KeyTracker {
        KeyTracker::new(
            "(set-option :smt.mbqi false)",
            [
                "(declare-sort Ref 0)",
                "(declare-fun f (Ref) Int)",
                "(declare-fun pre@1 () Int)",
            ]
            .into_iter(),
        )
    }

    /// Asserts `assertions` (declaring `decls` first, as global declarations) and gives the
    /// key of `(check-sat)`.
    fn key_of(t: &mut KeyTracker, decls: &[(&str, &str)], assertions: &[&str]) -> QueryKey {
        for (name, text) in decls {
            t.declared(name, text);
        }
        t.push();
        for a in assertions {
            t.scoped(a);
        }
        let key = t.key("(check-sat)", "rlimit 10").unwrap();
        t.pop(1);
        key
    }

    #[test]
    fn answers_of_the_clock_or_memory_are_not_kept() {
        let unknown = |why: &str| SatResult::Unknown(why.into());
        assert!(worth_keeping(&SatResult::Unsat, false));
        assert!(worth_keeping(&SatResult::Sat, false));
        assert!(worth_keeping(&unknown("(incomplete quantifiers)"), false));
        assert!(worth_keeping(&unknown("canceled"), true));
        assert!(!worth_keeping(&unknown("canceled"), false));
        assert!(!worth_keeping(&unknown("timeout (wall clock)"), true));
        assert!(!worth_keeping(&unknown(crate::config::OUT_OF_MEMORY), true));
        assert!(!worth_keeping(&unknown("memout"), true));
        assert!(!worth_keeping(&unknown("max. memory exceeded"), true));
    }

    #[test]
    fn tokens_read_symbols_literals_and_quoted_names() {
        let got: Vec<Token> =
            tokens("(assert (! (= |a b| x@1 #x0f 12 \"s\"\"t\") :named n))").collect();
        use Token::*;
        assert_eq!(
            got,
            vec![
                Open,
                Symbol("assert"),
                Open,
                Symbol("!"),
                Open,
                Symbol("="),
                Symbol("a b"),
                Symbol("x@1"),
                Atom("#x0f"),
                Atom("12"),
                Atom("\"s\"\"t\""),
                Close,
                Atom(":named"),
                Symbol("n"),
                Close,
                Close
            ]
        );
    }

    #[test]
    fn fresh_names_are_renamed_by_first_occurrence() {
        let mut a = tracker();
        let mut b = tracker();
        let ka = key_of(
            &mut a,
            &[("x@5", "(declare-fun x@5 () Ref)")],
            &["(assert (> (f x@5) 0))"],
        );
        let kb = key_of(
            &mut b,
            &[("x@9", "(declare-fun x@9 () Ref)")],
            &["(assert (> (f x@9) 0))"],
        );
        assert_eq!(ka, kb);
    }

    #[test]
    fn sorts_of_renamed_names_count() {
        let mut a = tracker();
        let mut b = tracker();
        let ka = key_of(
            &mut a,
            &[("x@5", "(declare-fun x@5 () Ref)")],
            &["(assert (= x@5 x@5))"],
        );
        let kb = key_of(
            &mut b,
            &[("x@5", "(declare-fun x@5 () Int)")],
            &["(assert (= x@5 x@5))"],
        );
        assert_ne!(ka, kb);
    }

    #[test]
    fn preamble_names_are_never_renamed() {
        // `pre@1` means what the preamble says of it; `y@2` is any constant.
        let mut a = tracker();
        let mut b = tracker();
        let ka = key_of(&mut a, &[], &["(assert (> pre@1 0))"]);
        let kb = key_of(
            &mut b,
            &[("y@2", "(declare-fun y@2 () Int)")],
            &["(assert (> y@2 0))"],
        );
        assert_ne!(ka, kb);
        // Built-ins and user names are kept as written.
        let mut c = tracker();
        let mut d = tracker();
        assert_ne!(
            key_of(&mut c, &[], &["(assert (and true false))"]),
            key_of(&mut d, &[], &["(assert (or true false))"])
        );
    }

    #[test]
    fn a_declaration_counts_even_for_a_name_the_preamble_binds() {
        let preamble = ["(assert (forall ((v Int)) (> (f v) 0)))"];
        let mut a = KeyTracker::new("", preamble.into_iter());
        let mut b = KeyTracker::new("", preamble.into_iter());
        assert_ne!(
            key_of(
                &mut a,
                &[("v", "(declare-fun v () Int)")],
                &["(assert (= v v))"]
            ),
            key_of(
                &mut b,
                &[("v", "(declare-fun v () Bool)")],
                &["(assert (= v v))"]
            )
        );
    }

    #[test]
    fn distinct_names_stay_distinct_and_shared_ones_shared() {
        let decls = [
            ("x@1", "(declare-fun x@1 () Int)"),
            ("x@2", "(declare-fun x@2 () Int)"),
        ];
        let mut a = tracker();
        let mut b = tracker();
        assert_ne!(
            key_of(&mut a, &decls, &["(assert (distinct x@1 x@2))"]),
            key_of(&mut b, &decls, &["(assert (distinct x@1 x@1))"])
        );
    }

    #[test]
    fn popped_assertions_leave_the_key() {
        let mut a = tracker();
        let empty = key_of(&mut a, &[], &[]);
        a.push();
        a.scoped("(assert false)");
        a.pop(1);
        assert_eq!(key_of(&mut a, &[], &[]), empty);
        // Renamings made inside a popped scope are forgotten too: the key after it is the
        // key of a fresh tracker.
        let decls = [("z@3", "(declare-fun z@3 () Int)")];
        let mut b = tracker();
        b.push();
        b.scoped("(assert (> z@3 1))");
        b.pop(1);
        let mut c = tracker();
        assert_eq!(
            key_of(&mut b, &decls, &["(assert (= z@3 0))"]),
            key_of(&mut c, &decls, &["(assert (= z@3 0))"])
        );
    }

    #[test]
    fn limits_and_queries_count() {
        let mut a = tracker();
        a.push();
        let k1 = a.key("(check-sat)", "rlimit 10");
        let k2 = a.key("(check-sat)", "rlimit 20");
        let k3 = a.key("(check-sat-assuming (p))", "rlimit 10");
        assert_ne!(k1, k2);
        assert_ne!(k1, k3);
    }

    #[test]
    fn raw_declarations_and_lost_pops_stop_the_keys() {
        let mut a = tracker();
        a.push();
        a.scoped("(declare-fun q@1 () Int)");
        assert_eq!(a.key("(check-sat)", ""), None);
        a.rewind();
        assert!(a.key("(check-sat)", "").is_some());
        a.pop(1);
        assert_eq!(a.key("(check-sat)", ""), None);
    }
}
