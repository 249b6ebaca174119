//! Expressions. Precedences, lowest first, as in Viper's `FastParser`:
//!
//! | level | operators | associativity |
//! | --- | --- | --- |
//! | 0 | `c ? a : b` | right |
//! | 1 | `<==>` | right |
//! | 2 | `==>` | right |
//! | 3 | `--*` (left: an or-expression, right: a whole expression) | right |
//! | 4 | `\|\|` | right |
//! | 5 | `&&` | right |
//! | 6 | `==` `!=` | right |
//! | 7 | `<` `<=` `>` `>=` `in` (chains `a < b <= c` mean `a < b && b <= c`) | left |
//! | 8 | `++` `+` `-` `union` `intersection` `setminus` `subset` | left |
//! | 9 | `*` `/` `\` `%` | left |
//! | 10 | prefix `-` `!`, then postfix `.f`, `[...]` | |
//!
//! Binary operators are parsed with an explicit operator stack, so long chains such as
//! `a && b && ... && z` need no recursion.

use super::{PResult, Parser, MAX_CHAIN};
use crate::ast::{
    Annotation, BinaryOp, CollectionKind, Expr, ExprKind, Ident, QuantifierKind, Trigger, UnaryOp,
    VarDecl,
};
use crate::token::{Sym, TokenKind};
use crate::Span;

const PREC_WAND: u8 = 3;
const PREC_CMP: u8 = 7;

/// An operand on the stack, remembering whether it is a comparison built in the current chain
/// (then a further comparison operator continues the chain instead of nesting).
struct Operand {
    expr: Expr,
    chained: bool,
    /// The operand's source with any parentheses around it (`expr.span` leaves them out),
    /// so an expression over it spans them: `(a) && b`, not `a) && b`.
    outer: Span,
}

impl Parser<'_> {
    /// A whole expression (one nesting level).
    pub(super) fn parse_exp(&mut self) -> PResult<Expr> {
        self.enter(1)?;
        let r = self.parse_ite();
        self.leave(1);
        r
    }

    /// `c1 ? t1 : c2 ? t2 : e`, folded to the right without recursion on the else side.
    #[inline(never)]
    fn parse_ite(&mut self) -> PResult<Expr> {
        let first = self.parse_binary()?;
        if !self.at_sym(Sym::Question) {
            return Ok(first);
        }
        self.parse_cond_tail(first)
    }

    #[inline(never)]
    fn parse_cond_tail(&mut self, first: Expr) -> PResult<Expr> {
        let mut branches = Vec::new();
        let mut cond = first;
        let otherwise = loop {
            self.bump();
            let then = self.parse_exp()?;
            self.expect_sym(Sym::Colon)?;
            let e = self.parse_binary()?;
            branches.push((cond, then));
            if self.at_sym(Sym::Question) {
                cond = e;
            } else {
                break e;
            }
        };
        let mut acc = otherwise;
        while let Some((c, t)) = branches.pop() {
            let span = c.span.to(acc.span);
            acc = self.mk_expr(
                ExprKind::Cond(Box::new(c), Box::new(t), Box::new(acc)),
                span,
            );
        }
        Ok(acc)
    }

    /// The binary operator at the current token, with its precedence and whether it is
    /// right-associative.
    fn peek_binop(&self) -> Option<(BinaryOp, u8, bool)> {
        let t = self.peek();
        let r = match t.kind {
            TokenKind::Sym(s) => match s {
                Sym::Iff => (BinaryOp::Iff, 1, true),
                Sym::Implies => (BinaryOp::Implies, 2, true),
                Sym::Wand => (BinaryOp::Wand, PREC_WAND, true),
                Sym::OrOr => (BinaryOp::Or, 4, true),
                Sym::AndAnd => (BinaryOp::And, 5, true),
                Sym::EqEq => (BinaryOp::Eq, 6, true),
                Sym::Ne => (BinaryOp::Ne, 6, true),
                Sym::Lt => (BinaryOp::Lt, PREC_CMP, false),
                Sym::Le => (BinaryOp::Le, PREC_CMP, false),
                Sym::Gt => (BinaryOp::Gt, PREC_CMP, false),
                Sym::Ge => (BinaryOp::Ge, PREC_CMP, false),
                Sym::PlusPlus => (BinaryOp::Concat, 8, false),
                Sym::Plus => (BinaryOp::Add, 8, false),
                Sym::Minus => (BinaryOp::Sub, 8, false),
                Sym::Star => (BinaryOp::Mul, 9, false),
                Sym::Slash => (BinaryOp::Div, 9, false),
                Sym::Backslash => (BinaryOp::IntDiv, 9, false),
                Sym::Percent => (BinaryOp::Mod, 9, false),
                _ => return None,
            },
            TokenKind::Ident => match self.tok_text(t) {
                "in" => (BinaryOp::In, PREC_CMP, false),
                "union" => (BinaryOp::Union, 8, false),
                "intersection" => (BinaryOp::Intersection, 8, false),
                "setminus" => (BinaryOp::Setminus, 8, false),
                "subset" => (BinaryOp::Subset, 8, false),
                _ => return None,
            },
            _ => return None,
        };
        Some(r)
    }

    /// Levels 1 to 9 (see the module documentation).
    #[inline(never)]
    fn parse_binary(&mut self) -> PResult<Expr> {
        let start = self.peek().start;
        let first = self.parse_unary()?;
        let outer = self.span(start, self.prev_end());
        let mut operands = vec![Operand {
            expr: first,
            chained: false,
            outer,
        }];
        let mut ops: Vec<(BinaryOp, u8)> = Vec::new();
        let mut count = 0u32;
        while let Some((op, prec, right_assoc)) = self.peek_binop() {
            count += 1;
            if count > MAX_CHAIN {
                let t = self.peek();
                return Err(self.error_at(
                    t,
                    format!("expression too long (more than {MAX_CHAIN} operators in a row)"),
                ));
            }
            while let Some(&(_, top)) = ops.last() {
                let reduce = if op == BinaryOp::Wand {
                    top > PREC_WAND
                } else {
                    top > prec || (top == prec && !right_assoc)
                };
                if !reduce {
                    break;
                }
                self.reduce(&mut operands, &mut ops);
            }
            self.bump();
            if op == BinaryOp::Wand {
                // The right side of a wand is a whole expression.
                let rhs = self.parse_exp()?;
                let lhs = operands.pop();
                if let Some(lhs) = lhs {
                    let span = lhs.outer.to(self.span(rhs.span.start, self.prev_end()));
                    let lhs = lhs.expr;
                    let e = self.mk_expr(
                        ExprKind::Binary(BinaryOp::Wand, Box::new(lhs), Box::new(rhs)),
                        span,
                    );
                    operands.push(Operand {
                        expr: e,
                        chained: false,
                        outer: span,
                    });
                }
                continue;
            }
            ops.push((op, prec));
            let start = self.peek().start;
            let rhs = self.parse_unary()?;
            let outer = self.span(start, self.prev_end());
            operands.push(Operand {
                expr: rhs,
                chained: false,
                outer,
            });
        }
        while !ops.is_empty() {
            self.reduce(&mut operands, &mut ops);
        }
        match operands.pop() {
            Some(o) => Ok(o.expr),
            None => Err(self.error_expected("expression")),
        }
    }

    #[inline(never)]
    fn reduce(&mut self, operands: &mut Vec<Operand>, ops: &mut Vec<(BinaryOp, u8)>) {
        let (Some((op, prec)), Some(right), Some(left)) =
            (ops.pop(), operands.pop(), operands.pop())
        else {
            return;
        };
        let span = left.outer.to(right.outer);
        if prec == PREC_CMP && left.chained {
            // `a < b <= c`: continue the chain as `a < b && b <= c`, copying the middle.
            let middle = match &left.expr.kind {
                ExprKind::Binary(BinaryOp::And, _, last) => match &last.kind {
                    ExprKind::Binary(_, _, m) => Some(m.as_ref().clone()),
                    _ => None,
                },
                ExprKind::Binary(_, _, m) => Some(m.as_ref().clone()),
                _ => None,
            };
            if let Some(mut middle) = middle {
                self.refresh_ids(&mut middle);
                let cmp_span = middle.span.to(right.expr.span);
                let cmp = self.mk_expr(
                    ExprKind::Binary(op, Box::new(middle), Box::new(right.expr)),
                    cmp_span,
                );
                let and = self.mk_expr(
                    ExprKind::Binary(BinaryOp::And, Box::new(left.expr), Box::new(cmp)),
                    span,
                );
                operands.push(Operand {
                    expr: and,
                    chained: true,
                    outer: span,
                });
                return;
            }
        }
        let e = self.mk_expr(
            ExprKind::Binary(op, Box::new(left.expr), Box::new(right.expr)),
            span,
        );
        operands.push(Operand {
            expr: e,
            chained: prec == PREC_CMP,
            outer: span,
        });
    }

    /// Gives every node of a copied expression a fresh id.
    pub(super) fn refresh_ids(&mut self, e: &mut Expr) {
        crate::macros::walk::refresh_expr_ids(e, self.ids);
    }

    /// Prefix `-` and `!` (iteratively), then a suffixed atom.
    #[inline(never)]
    fn parse_unary(&mut self) -> PResult<Expr> {
        let bracketed = std::mem::take(&mut self.bracketed);
        let mut prefixes = Vec::new();
        loop {
            let t = self.peek();
            let op = match t.kind {
                TokenKind::Sym(Sym::Minus) => UnaryOp::Neg,
                TokenKind::Sym(Sym::Bang) => UnaryOp::Not,
                _ => break,
            };
            self.bump();
            prefixes.push((op, t.start));
        }
        let levels = prefixes.len() as u32;
        if levels > 0 {
            self.enter(levels)?;
        }
        let r = self.parse_suffixed(bracketed && levels == 0);
        if levels > 0 {
            self.leave(levels);
        }
        let mut e = r?;
        // Up to the last token read: the operand's closing parenthesis, if any.
        let end = self.prev_end();
        while let Some((op, start)) = prefixes.pop() {
            let span = self.span(start, end);
            e = self.mk_expr(ExprKind::Unary(op, Box::new(e)), span);
        }
        Ok(e)
    }

    /// An atom followed by field accesses and index, slice and update suffixes.
    #[inline(never)]
    pub(super) fn parse_suffixed(&mut self, bracketed: bool) -> PResult<Expr> {
        let mut e = self.parse_atom(bracketed)?;
        loop {
            if self.at_sym(Sym::Dot) {
                self.bump();
                let field = self.ident()?;
                let span = e.span.to(field.span);
                e = self.mk_expr(ExprKind::FieldAccess(Box::new(e), field), span);
            } else if self.at_sym(Sym::LBracket) {
                e = self.parse_index_suffix(e)?;
            } else {
                return Ok(e);
            }
        }
    }

    /// `[i]`, `[i := v]`, `[a..b]`, `[a..]`, `[..b]` after `e`.
    #[inline(never)]
    fn parse_index_suffix(&mut self, e: Expr) -> PResult<Expr> {
        self.bump();
        let kind = if self.eat_sym(Sym::DotDot) {
            let hi = self.parse_exp()?;
            ExprKind::Slice(Box::new(e), None, Some(Box::new(hi)))
        } else {
            let i = self.parse_exp()?;
            if self.eat_sym(Sym::Assign) {
                let v = self.parse_exp()?;
                ExprKind::Update(Box::new(e), Box::new(i), Box::new(v))
            } else if self.eat_sym(Sym::DotDot) {
                let hi = if self.at_sym(Sym::RBracket) {
                    None
                } else {
                    Some(Box::new(self.parse_exp()?))
                };
                ExprKind::Slice(Box::new(e), Some(Box::new(i)), hi)
            } else {
                ExprKind::Index(Box::new(e), Box::new(i))
            }
        };
        let close = self.expect_sym(Sym::RBracket)?;
        let start = match &kind {
            ExprKind::Slice(b, ..) | ExprKind::Update(b, ..) | ExprKind::Index(b, _) => {
                b.span.start
            }
            _ => close.start,
        };
        let span = self.span(start, close.end);
        Ok(self.mk_expr(kind, span))
    }

    #[inline(never)]
    fn parse_atom(&mut self, bracketed: bool) -> PResult<Expr> {
        let t = self.peek();
        match t.kind {
            TokenKind::Int => {
                self.bump();
                let text = self.tok_text(t).to_string();
                Ok(self.mk_expr(ExprKind::IntLit(text), self.tok_span(t)))
            }
            TokenKind::Sym(Sym::At) => self.parse_annotated_atom(),
            TokenKind::Sym(Sym::LParen) => self.parse_paren_or_atom(),
            TokenKind::Sym(Sym::Bar) => self.parse_length(),
            TokenKind::Sym(Sym::LBracket) => self.parse_bracket_atom(),
            TokenKind::Ident => {
                let word = self.tok_text(t);
                if super::is_keyword(word) || matches!(word, "asserting") {
                    return self.parse_keyword_atom(word);
                }
                self.parse_name_atom(bracketed)
            }
            _ => Err(self.error_expected("expression")),
        }
    }

    #[inline(never)]
    fn parse_annotated_atom(&mut self) -> PResult<Expr> {
        let start = self.peek().start;
        let ann = self.parse_annotation()?;
        let inner = self.parse_paren_or_atom()?;
        let span = self.span(start, inner.span.end);
        Ok(self.mk_expr(ExprKind::Annotated(ann, Box::new(inner)), span))
    }

    #[inline(never)]
    fn parse_length(&mut self) -> PResult<Expr> {
        let start = self.bump().start;
        let inner = self.parse_exp()?;
        self.expect_sym(Sym::Bar)?;
        Ok(self.mk_expr(ExprKind::Length(Box::new(inner)), self.span_from(start)))
    }

    /// `[a, b]` (inhale-exhale) or `[a..b)` (range).
    #[inline(never)]
    fn parse_bracket_atom(&mut self) -> PResult<Expr> {
        let start = self.bump().start;
        let a = self.parse_exp()?;
        if self.eat_sym(Sym::Comma) {
            let b = self.parse_exp()?;
            self.expect_sym(Sym::RBracket)?;
            Ok(self.mk_expr(
                ExprKind::InhaleExhale(Box::new(a), Box::new(b)),
                self.span_from(start),
            ))
        } else if self.eat_sym(Sym::DotDot) {
            let b = self.parse_exp()?;
            self.expect_sym(Sym::RParen)?;
            Ok(self.mk_expr(
                ExprKind::Range(Box::new(a), Box::new(b)),
                self.span_from(start),
            ))
        } else {
            Err(self.error_expected("`,` or `..`"))
        }
    }

    /// A variable or a call `f(args)`, typed `(f(args): T)` right after `(`.
    #[inline(never)]
    fn parse_name_atom(&mut self, bracketed: bool) -> PResult<Expr> {
        let start = self.peek().start;
        let name = self.ident()?;
        if self.at_call_paren() {
            let args = self.arg_list()?;
            let call = self.mk_expr(ExprKind::Call(name, args), self.span_from(start));
            if bracketed && self.eat_sym(Sym::Colon) {
                let ty = self.parse_type()?;
                return Ok(self.mk_expr(
                    ExprKind::Ascribed(Box::new(call), ty),
                    self.span_from(start),
                ));
            }
            return Ok(call);
        }
        let span = name.span;
        Ok(self.mk_expr(ExprKind::Ident(name), span))
    }

    /// `( e )` or an atom (after an annotation).
    #[inline(never)]
    fn parse_paren_or_atom(&mut self) -> PResult<Expr> {
        if self.at_sym(Sym::LParen) {
            self.bump();
            self.bracketed = true;
            let e = self.parse_exp();
            self.bracketed = false;
            let e = e?;
            self.expect_sym(Sym::RParen)?;
            self.parenthesized.insert(e.id);
            Ok(e)
        } else {
            self.parse_atom(false)
        }
    }

    /// `(e1, ..., en)`.
    pub(super) fn arg_list(&mut self) -> PResult<Vec<Expr>> {
        self.expect_sym(Sym::LParen)?;
        let mut args = Vec::new();
        if !self.at_sym(Sym::RParen) {
            loop {
                args.push(self.parse_exp()?);
                if !self.eat_sym(Sym::Comma) {
                    break;
                }
            }
        }
        self.expect_sym(Sym::RParen)?;
        Ok(args)
    }

    fn paren_exp(&mut self) -> PResult<Expr> {
        self.expect_sym(Sym::LParen)?;
        let e = self.parse_exp()?;
        self.expect_sym(Sym::RParen)?;
        Ok(e)
    }

    #[inline(never)]
    fn parse_keyword_atom(&mut self, word: &str) -> PResult<Expr> {
        let t = self.peek();
        let start = t.start;
        let simple = match word {
            "true" => Some(ExprKind::BoolLit(true)),
            "false" => Some(ExprKind::BoolLit(false)),
            "null" => Some(ExprKind::Null),
            "result" => Some(ExprKind::Result),
            "write" => Some(ExprKind::Write),
            "none" => Some(ExprKind::NoPerm),
            "wildcard" => Some(ExprKind::Wildcard),
            "epsilon" => Some(ExprKind::Epsilon),
            _ => None,
        };
        if let Some(kind) = simple {
            self.bump();
            return Ok(self.mk_expr(kind, self.tok_span(t)));
        }
        let kind = match word {
            "old" => {
                self.bump();
                let mut label = None;
                if self.eat_sym(Sym::LBracket) {
                    let l = self.peek();
                    label = Some(if self.at_kw("lhs") {
                        self.bump();
                        Ident {
                            name: "lhs".to_string(),
                            span: self.tok_span(l),
                        }
                    } else {
                        self.ident()?
                    });
                    self.expect_sym(Sym::RBracket)?;
                }
                ExprKind::Old(label, Box::new(self.paren_exp()?))
            }
            "acc" => return self.parse_acc(),
            "perm" => {
                self.bump();
                let loc = self.paren_exp()?;
                self.check_resource(&loc, true)?;
                ExprKind::Perm(Box::new(loc))
            }
            "let" => {
                self.bump();
                let name = self.ident()?;
                self.expect_sym(Sym::EqEq)?;
                let value = self.paren_exp()?;
                self.expect_kw("in")?;
                let body = self.parse_exp()?;
                ExprKind::Let(name, Box::new(value), Box::new(body))
            }
            "forall" | "exists" => {
                self.bump();
                let vars = self.binding_list()?;
                self.expect_sym(Sym::ColonColon)?;
                let mut triggers = Vec::new();
                while self.at_sym(Sym::LBrace) {
                    let open = self.bump();
                    let mut exprs = Vec::new();
                    if !self.at_sym(Sym::RBrace) {
                        loop {
                            exprs.push(self.parse_exp()?);
                            if !self.eat_sym(Sym::Comma) {
                                break;
                            }
                        }
                    }
                    self.expect_sym(Sym::RBrace)?;
                    triggers.push(Trigger {
                        exprs,
                        span: self.span_from(open.start),
                    });
                }
                let body = Box::new(self.parse_exp()?);
                let kind = if word == "forall" {
                    QuantifierKind::Forall
                } else {
                    QuantifierKind::Exists
                };
                ExprKind::Quantifier {
                    kind,
                    vars,
                    triggers,
                    body,
                }
            }
            "forperm" => {
                self.bump();
                let vars = self.binding_list()?;
                self.expect_sym(Sym::LBracket)?;
                let res = self.parse_exp()?;
                self.check_resource(&res, true)?;
                self.expect_sym(Sym::RBracket)?;
                self.expect_sym(Sym::ColonColon)?;
                let body = Box::new(self.parse_exp()?);
                ExprKind::Forperm {
                    vars,
                    resources: vec![res],
                    body,
                }
            }
            "unfolding" => {
                self.bump();
                let pred = self.parse_predicate_access()?;
                self.expect_kw("in")?;
                let body = self.parse_exp()?;
                ExprKind::Unfolding(Box::new(pred), Box::new(body))
            }
            "applying" | "asserting" => {
                self.bump();
                let first = self.paren_exp()?;
                self.expect_kw("in")?;
                let body = self.parse_exp()?;
                if word == "applying" {
                    ExprKind::Applying(Box::new(first), Box::new(body))
                } else {
                    ExprKind::Asserting(Box::new(first), Box::new(body))
                }
            }
            "Seq" | "Set" | "Multiset" => {
                self.bump();
                let ty = if self.at_sym(Sym::LBracket) {
                    self.bump();
                    let ty = self.parse_type()?;
                    self.expect_sym(Sym::RBracket)?;
                    Some(ty)
                } else {
                    None
                };
                let paren = self.peek();
                let args = self.arg_list()?;
                if ty.is_some() && !args.is_empty() {
                    return Err(self.error_at(
                        paren,
                        "a collection with a type argument must be empty".to_string(),
                    ));
                }
                let kind = match word {
                    "Seq" => CollectionKind::Seq,
                    "Set" => CollectionKind::Set,
                    _ => CollectionKind::Multiset,
                };
                ExprKind::Collection(kind, ty, args)
            }
            "Map" => {
                self.bump();
                let tys = if self.at_sym(Sym::LBracket) {
                    self.bump();
                    let k = self.parse_type()?;
                    self.expect_sym(Sym::Comma)?;
                    let v = self.parse_type()?;
                    self.expect_sym(Sym::RBracket)?;
                    Some((k, v))
                } else {
                    None
                };
                let paren = self.expect_sym(Sym::LParen)?;
                let mut pairs = Vec::new();
                if !self.at_sym(Sym::RParen) {
                    loop {
                        let k = self.parse_exp()?;
                        self.expect_sym(Sym::Assign)?;
                        let v = self.parse_exp()?;
                        pairs.push((k, v));
                        if !self.eat_sym(Sym::Comma) {
                            break;
                        }
                    }
                }
                self.expect_sym(Sym::RParen)?;
                if tys.is_some() && !pairs.is_empty() {
                    return Err(
                        self.error_at(paren, "a map with type arguments must be empty".to_string())
                    );
                }
                ExprKind::MapLit(tys, pairs)
            }
            "range" | "domain" => {
                self.bump();
                let e = Box::new(self.paren_exp()?);
                if word == "range" {
                    ExprKind::MapRange(e)
                } else {
                    ExprKind::MapDomain(e)
                }
            }
            "new" => {
                return Err(self.error_at(
                    t,
                    "`new` can only be the right-hand side of an assignment".to_string(),
                ));
            }
            _ => return Err(self.error_expected("expression")),
        };
        Ok(self.mk_expr(kind, self.span_from(start)))
    }

    /// `acc(loc[, amount])`.
    #[inline(never)]
    fn parse_acc(&mut self) -> PResult<Expr> {
        let start = self.bump().start;
        self.expect_sym(Sym::LParen)?;
        let loc = self.parse_suffixed(false)?;
        self.check_resource(&loc, false)?;
        let amount = if self.eat_sym(Sym::Comma) {
            Some(Box::new(self.parse_exp()?))
        } else {
            None
        };
        self.expect_sym(Sym::RParen)?;
        Ok(self.mk_expr(ExprKind::Acc(Box::new(loc), amount), self.span_from(start)))
    }

    /// `acc(P(x), p)` or `P(x)`, as after `unfolding`, `fold` and `unfold`.
    #[inline(never)]
    pub(super) fn parse_predicate_access(&mut self) -> PResult<Expr> {
        if self.at_kw("acc") {
            return self.parse_acc();
        }
        let start = self.peek().start;
        let name = self.ident()?;
        if !self.at_call_paren() {
            return Err(self.error_expected("`(`"));
        }
        let args = self.arg_list()?;
        Ok(self.mk_expr(ExprKind::Call(name, args), self.span_from(start)))
    }

    /// A location (field access or predicate call), or with `allow_wand` also a magic wand.
    fn check_resource(&mut self, e: &Expr, allow_wand: bool) -> PResult<()> {
        match &e.kind {
            ExprKind::FieldAccess(..) | ExprKind::Call(..) => Ok(()),
            ExprKind::Binary(BinaryOp::Wand, ..) if allow_wand => Ok(()),
            _ => {
                let what = if allow_wand {
                    "a field access, predicate access or magic wand"
                } else {
                    "a field access or predicate access"
                };
                Err(self.error_span(e.span, format!("expected {what}")))
            }
        }
    }

    /// `x: T, y: U` (at least one).
    pub(super) fn binding_list(&mut self) -> PResult<Vec<VarDecl>> {
        let mut vars = Vec::new();
        loop {
            vars.push(self.binding()?);
            if !self.eat_sym(Sym::Comma) {
                return Ok(vars);
            }
        }
    }

    /// `x: T`.
    pub(super) fn binding(&mut self) -> PResult<VarDecl> {
        let name = self.ident()?;
        self.expect_sym(Sym::Colon)?;
        let ty = self.parse_type()?;
        let span = name.span.to(ty.span);
        Ok(VarDecl { name, ty, span })
    }

    /// `@name("arg", ...)`; the name may contain dots.
    #[inline(never)]
    pub(super) fn parse_annotation(&mut self) -> PResult<Annotation> {
        let at = self.expect_sym(Sym::At)?;
        let first = self.peek();
        if first.kind != TokenKind::Ident || !first.spaces_before || first.start != at.end {
            return Err(self.error_expected("annotation name"));
        }
        self.bump();
        let mut end = first.end;
        // Dotted names: `@a.b`, all glued together.
        while self.at_sym(Sym::Dot)
            && self.peek().start == end
            && self.peek_at(1).kind == TokenKind::Ident
            && self.peek_at(1).start == self.peek().end
        {
            self.bump();
            end = self.bump().end;
        }
        let name = Ident {
            name: self
                .text
                .get(first.start as usize..end as usize)
                .unwrap_or("")
                .to_string(),
            span: self.span(first.start, end),
        };
        self.expect_sym(Sym::LParen)?;
        let mut args = Vec::new();
        if !self.at_sym(Sym::RParen) {
            loop {
                let s = self.peek();
                if s.kind != TokenKind::Str {
                    return Err(self.error_expected("string literal"));
                }
                self.bump();
                args.push(self.string_contents(s));
                if !self.eat_sym(Sym::Comma) {
                    break;
                }
            }
        }
        self.expect_sym(Sym::RParen)?;
        Ok(Annotation {
            name,
            args,
            span: self.span_from(at.start),
        })
    }

    /// Annotations before a declaration or statement.
    pub(super) fn parse_annotations(&mut self) -> PResult<Vec<Annotation>> {
        let mut anns = Vec::new();
        while self.at_sym(Sym::At) {
            anns.push(self.parse_annotation()?);
        }
        Ok(anns)
    }
}
