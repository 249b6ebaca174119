//! Statements and blocks. Semicolons between statements are optional.

use super::{PResult, Parser};
use crate::ast::{
    BinaryOp, Block, Decreases, DecreasesKind, Expr, ExprKind, NewFields, Stmt, StmtKind,
};
use crate::token::{Sym, TokenKind};

impl Parser<'_> {
    /// `{ stmt [;] stmt [;] ... }`. `allow_define` is false inside a macro body, where Viper
    /// forbids nested `define`s.
    pub(super) fn parse_block(&mut self, allow_define: bool) -> PResult<Block> {
        self.enter(1)?;
        let r = self.parse_block_inner(allow_define);
        self.leave(1);
        r
    }

    fn parse_block_inner(&mut self, allow_define: bool) -> PResult<Block> {
        let open = self.expect_sym(Sym::LBrace)?;
        let mut stmts = Vec::new();
        while !self.at_sym(Sym::RBrace) {
            if self.at_eof() {
                return Err(self.error_expected("`}`"));
            }
            self.parse_stmt(allow_define, &mut stmts)?;
            self.eat_sym(Sym::Semi);
        }
        self.bump();
        Ok(Block {
            stmts,
            span: self.span_from(open.start),
        })
    }

    /// Parses one statement into `out` (`var x: Ref := new(f)` becomes two statements).
    fn parse_stmt(&mut self, allow_define: bool, out: &mut Vec<Stmt>) -> PResult<()> {
        let start = self.peek().start;
        let annotations = self.parse_annotations()?;
        let first = out.len();
        self.parse_stmt_kind(allow_define, out)?;
        if let Some(s) = out.get_mut(first) {
            if !annotations.is_empty() {
                s.span = self.span(start, s.span.end);
                s.annotations = annotations;
            }
        }
        Ok(())
    }

    fn parse_stmt_kind(&mut self, allow_define: bool, out: &mut Vec<Stmt>) -> PResult<()> {
        let t = self.peek();
        let start = t.start;
        if t.kind == TokenKind::Sym(Sym::LBrace) {
            let b = self.parse_block(allow_define)?;
            let span = b.span;
            out.push(self.mk_stmt(StmtKind::Block(b), span));
            return Ok(());
        }
        let word = if t.kind == TokenKind::Ident {
            self.tok_text(t)
        } else {
            ""
        };
        let kind = match word {
            "assert" | "assume" | "inhale" | "exhale" | "refute" | "apply" => {
                self.bump();
                let e = self.parse_exp()?;
                match word {
                    "assert" => StmtKind::Assert(e),
                    "assume" => StmtKind::Assume(e),
                    "inhale" => StmtKind::Inhale(e),
                    "exhale" => StmtKind::Exhale(e),
                    "refute" => StmtKind::Refute(e),
                    _ => StmtKind::Apply(e),
                }
            }
            "fold" | "unfold" => {
                self.bump();
                let e = self.parse_predicate_access()?;
                if word == "fold" {
                    StmtKind::Fold(e)
                } else {
                    StmtKind::Unfold(e)
                }
            }
            "package" => {
                self.bump();
                let wand = self.parse_exp()?;
                let proof = if self.at_sym(Sym::LBrace) {
                    Some(self.parse_block(allow_define)?)
                } else {
                    None
                };
                StmtKind::Package(wand, proof)
            }
            "if" => return self.parse_if(allow_define, out),
            "while" => {
                self.bump();
                let cond = self.paren_cond()?;
                let mut invariants = Vec::new();
                let mut decreases = Vec::new();
                loop {
                    if self.eat_kw("invariant") {
                        invariants.push(self.parse_exp()?);
                    } else if self.at_kw("decreases") {
                        decreases.push(self.parse_decreases()?);
                    } else {
                        break;
                    }
                    self.eat_sym(Sym::Semi);
                }
                let body = self.parse_block(allow_define)?;
                StmtKind::While {
                    cond,
                    invariants,
                    decreases,
                    body,
                }
            }
            "var" => {
                self.bump();
                let vars = self.binding_list()?;
                if self.eat_sym(Sym::Assign) {
                    if self.at_kw("new") {
                        // `var x: Ref := new(f)`: a declaration, then an allocation.
                        let decl_span = self.span_from(start);
                        let target = match vars.as_slice() {
                            [v] => v.name.clone(),
                            _ => {
                                return Err(
                                    self.error_expected("a single variable before `:= new(...)`")
                                )
                            }
                        };
                        out.push(self.mk_stmt(StmtKind::VarDecl(vars, None), decl_span));
                        let tspan = target.span;
                        let target = self.mk_expr(ExprKind::Ident(target), tspan);
                        let fields = self.parse_new()?;
                        let span = self.span_from(start);
                        out.push(self.mk_stmt(StmtKind::New(target, fields), span));
                        return Ok(());
                    }
                    let init = self.parse_exp()?;
                    StmtKind::VarDecl(vars, Some(init))
                } else {
                    StmtKind::VarDecl(vars, None)
                }
            }
            "define" => {
                if !allow_define {
                    return Err(self.error_at(
                        t,
                        "macros cannot be defined inside a macro body".to_string(),
                    ));
                }
                let def = self.parse_define()?;
                StmtKind::Define(Box::new(def))
            }
            "goto" => {
                self.bump();
                StmtKind::Goto(self.ident()?)
            }
            "label" => {
                self.bump();
                let name = self.ident()?;
                let mut invs = Vec::new();
                loop {
                    if self.eat_kw("invariant") {
                        invs.push(self.parse_exp()?);
                    } else {
                        break;
                    }
                    self.eat_sym(Sym::Semi);
                }
                StmtKind::Label(name, invs)
            }
            "quasihavoc" => {
                self.bump();
                let (cond, res) = self.havoc_body()?;
                StmtKind::Quasihavoc(cond, res)
            }
            "quasihavocall" => {
                self.bump();
                let vars = self.binding_list()?;
                self.expect_sym(Sym::ColonColon)?;
                let (cond, res) = self.havoc_body()?;
                StmtKind::Quasihavocall(vars, cond, res)
            }
            _ => return self.parse_assign_or_call(out),
        };
        let span = self.span_from(start);
        out.push(self.mk_stmt(kind, span));
        Ok(())
    }

    /// `[cond ==>] resource`: an unparenthesised implication at the top splits.
    fn havoc_body(&mut self) -> PResult<(Option<Expr>, Expr)> {
        let e = self.parse_exp()?;
        if !self.parenthesized.contains(&e.id) {
            if let ExprKind::Binary(BinaryOp::Implies, ..) = e.kind {
                if let ExprKind::Binary(_, l, r) = e.kind {
                    return Ok((Some(*l), *r));
                }
            }
        }
        Ok((None, e))
    }

    /// `( e )` after `if`, `elseif` and `while`.
    fn paren_cond(&mut self) -> PResult<Expr> {
        self.expect_sym(Sym::LParen)?;
        let e = self.parse_exp()?;
        self.expect_sym(Sym::RParen)?;
        Ok(e)
    }

    /// `if (c) { } elseif (c) { } else { }`; `elseif` branches nest as an `If` alone in the
    /// else block.
    fn parse_if(&mut self, allow_define: bool, out: &mut Vec<Stmt>) -> PResult<()> {
        let start = self.bump().start;
        let cond = self.paren_cond()?;
        let then = self.parse_block(allow_define)?;
        // Collect the elseif chain iteratively.
        let mut branches = vec![(start, cond, then)];
        let mut otherwise = None;
        loop {
            if self.at_kw("elseif") {
                let s = self.bump().start;
                let c = self.paren_cond()?;
                let b = self.parse_block(allow_define)?;
                branches.push((s, c, b));
            } else if self.eat_kw("else") {
                otherwise = Some(self.parse_block(allow_define)?);
                break;
            } else {
                break;
            }
        }
        let end = self.prev_end();
        while let Some((s, cond, then)) = branches.pop() {
            let span = self.span(s, end);
            let stmt = self.mk_stmt(
                StmtKind::If {
                    cond,
                    then,
                    otherwise: otherwise.take(),
                },
                span,
            );
            if branches.is_empty() {
                out.push(stmt);
                break;
            }
            otherwise = Some(Block {
                span,
                stmts: vec![stmt],
            });
        }
        Ok(())
    }

    /// `decreases e1, ..., en [if c]`, `decreases _ [if c]`, `decreases *`.
    pub(super) fn parse_decreases(&mut self) -> PResult<Decreases> {
        let start = self.expect_kw("decreases")?.start;
        let kind = if self.eat_sym(Sym::Star) {
            return Ok(Decreases {
                kind: DecreasesKind::Star,
                condition: None,
                span: self.span_from(start),
            });
        } else if self.at_kw("_") {
            self.bump();
            DecreasesKind::Wildcard
        } else {
            // The tuple may be empty: `decreases` alone (what follows may not be an expression).
            let mut exprs = Vec::new();
            if self.starts_expression() {
                if let Some(first) = self.attempt(|p| p.parse_exp()) {
                    exprs.push(first);
                    while self.eat_sym(Sym::Comma) {
                        exprs.push(self.parse_exp()?);
                    }
                }
            }
            DecreasesKind::Tuple(exprs)
        };
        let condition = if self.eat_kw("if") {
            Some(self.parse_exp()?)
        } else {
            None
        };
        Ok(Decreases {
            kind,
            condition,
            span: self.span_from(start),
        })
    }

    /// Whether the current token can begin an expression (for the optional tuple of
    /// `decreases`).
    fn starts_expression(&self) -> bool {
        let t = self.peek();
        match t.kind {
            TokenKind::Int => true,
            TokenKind::Sym(s) => matches!(
                s,
                Sym::LParen | Sym::LBracket | Sym::Bar | Sym::Minus | Sym::Bang | Sym::At
            ),
            TokenKind::Ident => {
                let w = self.tok_text(t);
                !super::is_keyword(w)
                    || matches!(
                        w,
                        "true"
                            | "false"
                            | "null"
                            | "result"
                            | "old"
                            | "acc"
                            | "perm"
                            | "let"
                            | "forall"
                            | "exists"
                            | "forperm"
                            | "unfolding"
                            | "applying"
                            | "write"
                            | "none"
                            | "wildcard"
                            | "epsilon"
                            | "Seq"
                            | "Set"
                            | "Multiset"
                            | "Map"
                            | "range"
                            | "domain"
                    )
            }
            _ => false,
        }
    }

    /// `new(f, g)` / `new(*)` / `new()`, after `:=`.
    fn parse_new(&mut self) -> PResult<NewFields> {
        self.expect_kw("new")?;
        self.expect_sym(Sym::LParen)?;
        let fields = if self.eat_sym(Sym::Star) {
            NewFields::All
        } else {
            let mut names = Vec::new();
            if !self.at_sym(Sym::RParen) {
                loop {
                    names.push(self.ident()?);
                    if !self.eat_sym(Sym::Comma) {
                        break;
                    }
                }
            }
            NewFields::Fields(names)
        };
        self.expect_sym(Sym::RParen)?;
        Ok(fields)
    }

    /// `targets := e`, `m(args)` or a statement macro `A`.
    fn parse_assign_or_call(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        let start = self.peek().start;
        let mut targets = vec![self.assign_target()?];
        while self.eat_sym(Sym::Comma) {
            targets.push(self.assign_target()?);
        }
        if self.eat_sym(Sym::Assign) {
            if self.at_kw("new") {
                if targets.len() != 1 {
                    return Err(self.error_expected("a single target before `:= new(...)`"));
                }
                let fields = self.parse_new()?;
                let target = targets.pop().ok_or(super::Fail)?;
                let span = self.span_from(start);
                out.push(self.mk_stmt(StmtKind::New(target, fields), span));
                return Ok(());
            }
            let rhs = self.parse_exp()?;
            let span = self.span_from(start);
            out.push(self.mk_stmt(StmtKind::Assign(targets, rhs), span));
            return Ok(());
        }
        if targets.len() == 1 {
            let target = targets.pop().ok_or(super::Fail)?;
            let span = target.span;
            match target.kind {
                ExprKind::Call(name, args) => {
                    out.push(self.mk_stmt(StmtKind::Call(name, args), span));
                    return Ok(());
                }
                ExprKind::Ident(name) => {
                    out.push(self.mk_stmt(StmtKind::MacroRef(name), span));
                    return Ok(());
                }
                _ => {}
            }
        }
        Err(self.error_expected("`:=`"))
    }

    /// A field access, call or identifier before `:=` (calls are only valid if they are
    /// macros, which macro expansion checks).
    fn assign_target(&mut self) -> PResult<Expr> {
        let t = self.peek();
        let e = self.parse_suffixed(false)?;
        match e.kind {
            ExprKind::FieldAccess(..) | ExprKind::Call(..) | ExprKind::Ident(..) => Ok(e),
            _ => Err(self.error_at(t, format!("expected statement, found {}", self.describe(t)))),
        }
    }
}
