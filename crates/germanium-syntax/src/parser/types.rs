//! Types: `Int`, `Bool`, `Perm`, `Ref`, `Rational`, `Seq[T]`, `Set[T]`, `Multiset[T]`,
//! `Map[K, V]` and named types `D` / `D[T, ...]` (domains, ADTs, type variables).

use super::{PResult, Parser};
use crate::ast::{TypeExpr, TypeExprKind};
use crate::token::{Sym, TokenKind};

impl Parser<'_> {
    pub(super) fn parse_type(&mut self) -> PResult<TypeExpr> {
        self.enter(1)?;
        let r = self.parse_type_inner();
        self.leave(1);
        r
    }

    fn parse_type_inner(&mut self) -> PResult<TypeExpr> {
        let t = self.peek();
        if t.kind != TokenKind::Ident {
            return Err(self.error_expected("type"));
        }
        let start = t.start;
        let word = self.tok_text(t);
        let simple = match word {
            "Int" => Some(TypeExprKind::Int),
            "Bool" => Some(TypeExprKind::Bool),
            "Perm" => Some(TypeExprKind::Perm),
            "Ref" => Some(TypeExprKind::Ref),
            "Rational" => Some(TypeExprKind::Rational),
            _ => None,
        };
        if let Some(kind) = simple {
            self.bump();
            return Ok(TypeExpr {
                kind,
                span: self.tok_span(t),
            });
        }
        let kind = match word {
            "Seq" | "Set" | "Multiset" => {
                self.bump();
                self.expect_sym(Sym::LBracket)?;
                let elem = Box::new(self.parse_type()?);
                self.expect_sym(Sym::RBracket)?;
                match word {
                    "Seq" => TypeExprKind::Seq(elem),
                    "Set" => TypeExprKind::Set(elem),
                    _ => TypeExprKind::Multiset(elem),
                }
            }
            "Map" => {
                self.bump();
                self.expect_sym(Sym::LBracket)?;
                let k = Box::new(self.parse_type()?);
                self.expect_sym(Sym::Comma)?;
                let v = Box::new(self.parse_type()?);
                self.expect_sym(Sym::RBracket)?;
                TypeExprKind::Map(k, v)
            }
            _ => {
                let name = self.ident()?;
                let mut args = Vec::new();
                if self.at_sym(Sym::LBracket) {
                    args = self.type_list()?;
                }
                TypeExprKind::Named(name, args)
            }
        };
        Ok(TypeExpr {
            kind,
            span: self.span_from(start),
        })
    }

    /// `[T, U, ...]` (possibly empty).
    pub(super) fn type_list(&mut self) -> PResult<Vec<TypeExpr>> {
        self.expect_sym(Sym::LBracket)?;
        let mut tys = Vec::new();
        if !self.at_sym(Sym::RBracket) {
            loop {
                tys.push(self.parse_type()?);
                if !self.eat_sym(Sym::Comma) {
                    break;
                }
            }
        }
        self.expect_sym(Sym::RBracket)?;
        Ok(tys)
    }
}
