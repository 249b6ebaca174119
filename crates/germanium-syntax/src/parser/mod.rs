//! Recursive-descent parser for Viper, following the grammar of Viper's `FastParser`.
//!
//! - `decl`: top-level declarations (fields, methods, functions, predicates, domains, ADTs,
//!   `define`, `import`) and annotations.
//! - `stmt`: statements and blocks.
//! - `expr`: expressions, with Viper's precedences (an explicit operator stack, so long
//!   operator chains do not recurse).
//! - `types`: types.
//!
//! Errors: like Viper, a declaration stops at its first syntax error; the parser then skips to
//! the next top-level keyword and goes on, so a file yields one message per broken
//! declaration. Nesting deeper than [`MAX_DEPTH`] is an error, not a stack overflow.

mod decl;
mod expr;
mod stmt;
mod types;

#[cfg(test)]
mod tests;

use std::collections::HashSet;

use crate::ast::{Expr, ExprKind, Item, NodeId, NodeIdGen, Stmt, StmtKind};
use crate::lexer;
use crate::token::{Sym, Token, TokenKind};
use crate::{Diagnostic, FileId, Span};

/// Deepest nesting of expressions, statements and types accepted. Parsing and every later
/// pass recurse over the tree, so this bounds their stack use (a few hundred bytes per level
/// in each pass; threads have 2 MiB by default).
pub const MAX_DEPTH: u32 = 256;

/// Longest chain of binary operators in one expression (parsed without recursion, but later
/// passes recurse along the resulting tree).
pub const MAX_CHAIN: u32 = 2000;

/// Words Viper reserves: they can never name a declaration or variable.
pub const KEYWORDS: &[&str] = &[
    "result",
    "Int",
    "Perm",
    "Bool",
    "Ref",
    "Rational",
    "true",
    "false",
    "null",
    "import",
    "method",
    "function",
    "predicate",
    "domain",
    "axiom",
    "var",
    "returns",
    "field",
    "define",
    "interpretation",
    "requires",
    "ensures",
    "invariant",
    "fold",
    "unfold",
    "inhale",
    "exhale",
    "new",
    "assert",
    "assume",
    "package",
    "apply",
    "quasihavoc",
    "quasihavocall",
    "while",
    "if",
    "elseif",
    "else",
    "goto",
    "label",
    "Seq",
    "Set",
    "Multiset",
    "union",
    "intersection",
    "setminus",
    "subset",
    "Map",
    "range",
    "unfolding",
    "in",
    "applying",
    "old",
    "lhs",
    "let",
    "forall",
    "exists",
    "forperm",
    "acc",
    "wildcard",
    "write",
    "none",
    "epsilon",
    "perm",
    "unique",
    // Keywords of Viper's default plugins (termination, ADTs, refute).
    "decreases",
    "adt",
    "refute",
];

pub fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
}

/// Parses one source file into its top-level items. Never panics; problems come back as
/// `parser.error` diagnostics, with as many items as could be recovered.
pub fn parse_file(file: FileId, text: &str, ids: &mut NodeIdGen) -> (Vec<Item>, Vec<Diagnostic>) {
    let (tokens, lex_diags) = lexer::lex(file, text);
    let mut p = Parser {
        text,
        file,
        tokens,
        pos: 0,
        ids,
        diags: Vec::new(),
        depth: 0,
        bracketed: false,
        parenthesized: HashSet::new(),
    };
    let items = p.parse_items();
    let mut diags = p.diags;
    // A lexical problem is reported where the parser trips over it, unless the parser
    // reported nothing at that token (e.g. an unterminated comment at the end). A set, not a
    // scan per lexical error: a file can have tens of thousands of both.
    let mut reported_at: HashSet<u32> = diags.iter().map(|e| e.span.start).collect();
    for d in lex_diags {
        if reported_at.insert(d.span.start) {
            diags.push(d);
        }
    }
    diags.sort_by_key(|d| d.span.start);
    (items, diags)
}

/// Marker for a failed parse; the diagnostic has already been recorded.
#[derive(Debug)]
pub(crate) struct Fail;

pub(crate) type PResult<T> = Result<T, Fail>;

pub(crate) struct Parser<'a> {
    text: &'a str,
    file: FileId,
    tokens: Vec<Token>,
    pos: usize,
    ids: &'a mut NodeIdGen,
    diags: Vec<Diagnostic>,
    depth: u32,
    /// Set right after an opening parenthesis: a call that starts the parenthesised expression
    /// may carry a type, `(f(x): T)`.
    bracketed: bool,
    /// Expressions written in parentheses (`quasihavoc (a ==> b)` does not split).
    parenthesized: HashSet<NodeId>,
}

impl<'a> Parser<'a> {
    // --- token access ------------------------------------------------------------------

    fn peek(&self) -> Token {
        self.peek_at(0)
    }

    fn peek_at(&self, n: usize) -> Token {
        let i = (self.pos + n).min(self.tokens.len() - 1);
        self.tokens[i]
    }

    fn bump(&mut self) -> Token {
        let t = self.peek();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn tok_text(&self, t: Token) -> &'a str {
        self.text
            .get(t.start as usize..t.end as usize)
            .unwrap_or("")
    }

    fn at_eof(&self) -> bool {
        self.peek().kind == TokenKind::Eof
    }

    fn at_sym(&self, s: Sym) -> bool {
        self.peek().kind == TokenKind::Sym(s)
    }

    fn at_sym_n(&self, n: usize, s: Sym) -> bool {
        self.peek_at(n).kind == TokenKind::Sym(s)
    }

    fn eat_sym(&mut self, s: Sym) -> bool {
        if self.at_sym(s) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect_sym(&mut self, s: Sym) -> PResult<Token> {
        if self.at_sym(s) {
            Ok(self.bump())
        } else {
            Err(self.error_expected(&format!("`{}`", s.text())))
        }
    }

    /// Whether the next token is the word `kw`.
    fn at_kw(&self, kw: &str) -> bool {
        self.at_kw_n(0, kw)
    }

    fn at_kw_n(&self, n: usize, kw: &str) -> bool {
        let t = self.peek_at(n);
        t.kind == TokenKind::Ident && self.tok_text(t) == kw
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.at_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect_kw(&mut self, kw: &str) -> PResult<Token> {
        if self.at_kw(kw) {
            Ok(self.bump())
        } else {
            Err(self.error_expected(&format!("`{kw}`")))
        }
    }

    /// Whether the next token is `(` directly after the previous token (only spaces between),
    /// as Viper requires for calls.
    fn at_call_paren(&self) -> bool {
        let t = self.peek();
        t.kind == TokenKind::Sym(Sym::LParen) && t.spaces_before
    }

    /// End offset of the last consumed token.
    fn prev_end(&self) -> u32 {
        if self.pos == 0 {
            0
        } else {
            self.tokens[self.pos - 1].end
        }
    }

    fn span(&self, start: u32, end: u32) -> Span {
        Span::new(self.file, start, end.max(start))
    }

    /// Span from `start` to the end of the last consumed token.
    fn span_from(&self, start: u32) -> Span {
        self.span(start, self.prev_end())
    }

    fn tok_span(&self, t: Token) -> Span {
        self.span(t.start, t.end)
    }

    // --- identifiers ---------------------------------------------------------------------

    fn at_ident(&self) -> bool {
        let t = self.peek();
        t.kind == TokenKind::Ident && !is_keyword(self.tok_text(t))
    }

    /// A name that is not a reserved word.
    fn ident(&mut self) -> PResult<crate::ast::Ident> {
        let t = self.peek();
        if t.kind == TokenKind::Ident {
            let name = self.tok_text(t);
            if is_keyword(name) {
                return Err(
                    self.error_at(t, format!("expected identifier, found keyword `{name}`"))
                );
            }
            self.bump();
            return Ok(crate::ast::Ident {
                name: name.to_string(),
                span: self.tok_span(t),
            });
        }
        Err(self.error_expected("identifier"))
    }

    // --- nodes ---------------------------------------------------------------------------

    fn mk_expr(&mut self, kind: ExprKind, span: Span) -> Expr {
        Expr {
            id: self.ids.fresh(),
            kind,
            span,
        }
    }

    fn mk_stmt(&mut self, kind: StmtKind, span: Span) -> Stmt {
        Stmt {
            id: self.ids.fresh(),
            annotations: Vec::new(),
            kind,
            span,
        }
    }

    // --- errors and nesting --------------------------------------------------------------

    fn describe(&self, t: Token) -> String {
        match t.kind {
            TokenKind::Eof => "end of file".to_string(),
            _ => format!("`{}`", self.tok_text(t)),
        }
    }

    fn error_at(&mut self, t: Token, msg: String) -> Fail {
        let span = self.tok_span(t);
        self.error_span(span, msg)
    }

    fn error_span(&mut self, span: Span, msg: String) -> Fail {
        self.diags.push(Diagnostic::parser(span, msg));
        Fail
    }

    fn error_expected(&mut self, what: &str) -> Fail {
        let t = self.peek();
        let found = self.describe(t);
        self.error_at(t, format!("expected {what}, found {found}"))
    }

    /// Enters one level of nesting; fails (once) beyond [`MAX_DEPTH`].
    fn enter(&mut self, levels: u32) -> PResult<()> {
        self.depth += levels;
        if self.depth > MAX_DEPTH {
            let t = self.peek();
            self.depth -= levels;
            return Err(self.error_at(
                t,
                format!("nesting too deep (more than {MAX_DEPTH} levels)"),
            ));
        }
        Ok(())
    }

    fn leave(&mut self, levels: u32) {
        self.depth = self.depth.saturating_sub(levels);
    }

    /// Runs `f`; if it fails, rewinds to where it started and forgets its errors.
    fn attempt<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> Option<T> {
        let (pos, n_diags, depth) = (self.pos, self.diags.len(), self.depth);
        match f(self) {
            Ok(v) => Some(v),
            Err(Fail) => {
                self.pos = pos;
                self.diags.truncate(n_diags);
                self.depth = depth;
                self.bracketed = false;
                None
            }
        }
    }

    /// Text of a string-literal token without its quotes.
    fn string_contents(&self, t: Token) -> String {
        let s = self.tok_text(t);
        s.strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(s)
            .to_string()
    }
}
