//! Top-level declarations and error recovery between them.

use super::{PResult, Parser};
use crate::ast::{
    Adt, AdtConstructor, Axiom, Contract, Derive, Domain, DomainFunction, DomainParam, FieldDecl,
    Function, Import, ImportTarget, Item, ItemKind, MacroBody, MacroDef, Method, Predicate,
};
use crate::token::{Sym, TokenKind};

/// Words that start a top-level declaration (recovery resumes at them).
const MEMBER_KEYWORDS: &[&str] = &[
    "import",
    "define",
    "field",
    "method",
    "domain",
    "function",
    "predicate",
    "adt",
];

impl Parser<'_> {
    pub(super) fn parse_items(&mut self) -> Vec<Item> {
        let mut items = Vec::new();
        while !self.at_eof() {
            let start = self.pos;
            self.depth = 0;
            match self.parse_item() {
                Ok(item) => items.push(item),
                Err(_) => self.recover(start),
            }
        }
        items
    }

    /// After an error in the declaration that began at token `start`, skips to the next token
    /// that starts a declaration outside any braces (or at the start of a line).
    fn recover(&mut self, start: usize) {
        let mut depth: i64 = 0;
        for t in &self.tokens[start..self.pos] {
            match t.kind {
                TokenKind::Sym(Sym::LBrace) => depth += 1,
                TokenKind::Sym(Sym::RBrace) => depth -= 1,
                _ => {}
            }
        }
        // Resume after the token the error was found at.
        match self.peek().kind {
            TokenKind::Sym(Sym::LBrace) => depth += 1,
            TokenKind::Sym(Sym::RBrace) => depth -= 1,
            _ => {}
        }
        self.bump();
        while !self.at_eof() {
            let t = self.peek();
            match t.kind {
                TokenKind::Sym(Sym::LBrace) => depth += 1,
                TokenKind::Sym(Sym::RBrace) => depth -= 1,
                TokenKind::Ident if MEMBER_KEYWORDS.contains(&self.tok_text(t)) => {
                    let line_start = t.start == 0
                        || self.text.as_bytes().get(t.start as usize - 1) == Some(&b'\n');
                    if depth <= 0 || line_start {
                        return;
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }

    fn parse_item(&mut self) -> PResult<Item> {
        let start = self.peek().start;
        let annotations = self.parse_annotations()?;
        let t = self.peek();
        let word = if t.kind == TokenKind::Ident {
            self.tok_text(t)
        } else {
            ""
        };
        let kind = match word {
            "import" => ItemKind::Import(self.parse_import()?),
            "define" => ItemKind::Macro(self.parse_define()?),
            "field" => {
                self.bump();
                let mut fields = Vec::new();
                loop {
                    let b = self.binding()?;
                    fields.push(FieldDecl {
                        name: b.name,
                        ty: b.ty,
                        span: b.span,
                    });
                    if !self.eat_sym(Sym::Comma) {
                        break;
                    }
                }
                self.eat_sym(Sym::Semi);
                ItemKind::Field(fields)
            }
            "method" => ItemKind::Method(self.parse_method()?),
            "function" => ItemKind::Function(self.parse_function()?),
            "predicate" => {
                self.bump();
                let name = self.ident()?;
                let params = self.formal_args()?;
                let body = if self.at_sym(Sym::LBrace) {
                    Some(self.braced_exp()?)
                } else {
                    None
                };
                ItemKind::Predicate(Predicate { name, params, body })
            }
            "domain" => ItemKind::Domain(self.parse_domain()?),
            "adt" => ItemKind::Adt(self.parse_adt()?),
            _ => return Err(self.error_expected("declaration")),
        };
        Ok(Item {
            annotations,
            kind,
            span: self.span_from(start),
        })
    }

    /// `import "path"` or `import <path>`.
    fn parse_import(&mut self) -> PResult<Import> {
        let start = self.bump().start;
        let t = self.peek();
        let target = match t.kind {
            TokenKind::Str => {
                self.bump();
                ImportTarget::Local(self.string_contents(t))
            }
            TokenKind::Sym(Sym::Lt) => {
                // The path is raw text up to `>`; skip the tokens it was lexed into.
                let from = t.end as usize;
                let rest = self.text.get(from..).unwrap_or("");
                let Some(len) = rest.find('>') else {
                    return Err(self.error_expected("`>`"));
                };
                let path = rest[..len].to_string();
                let close = (from + len + 1) as u32;
                while !self.at_eof() && self.peek().start < close {
                    self.bump();
                }
                if path.trim().is_empty() || path.contains('\n') {
                    return Err(self.error_at(t, "expected a library path in `<...>`".to_string()));
                }
                ImportTarget::Standard(path)
            }
            _ => return Err(self.error_expected("`\"` or `<`")),
        };
        Ok(Import {
            target,
            span: self.span_from(start),
        })
    }

    /// `define name[(params)] body` where body is a block or an expression.
    pub(super) fn parse_define(&mut self) -> PResult<MacroDef> {
        let start = self.expect_kw("define")?.start;
        let name = self.ident()?;
        let params = if self.at_sym(Sym::LParen) && self.at_param_list() {
            self.bump();
            let mut ps = Vec::new();
            if !self.at_sym(Sym::RParen) {
                loop {
                    ps.push(self.ident()?);
                    if !self.eat_sym(Sym::Comma) {
                        break;
                    }
                }
            }
            self.expect_sym(Sym::RParen)?;
            Some(ps)
        } else {
            None
        };
        let body = if self.at_sym(Sym::LBrace) {
            MacroBody::Stmts(self.parse_block(false)?)
        } else {
            MacroBody::Expr(self.parse_exp()?)
        };
        Ok(MacroDef {
            name,
            params,
            body,
            span: self.span_from(start),
        })
    }

    /// Whether `( ident, ... )` follows: otherwise a `(` after a macro's name starts its body,
    /// as in `define NO_VALUE (-1)`.
    fn at_param_list(&self) -> bool {
        let mut n = 1;
        if self.at_sym_n(n, Sym::RParen) {
            return true;
        }
        loop {
            let t = self.peek_at(n);
            if t.kind != TokenKind::Ident || super::is_keyword(self.tok_text(t)) {
                return false;
            }
            n += 1;
            if self.at_sym_n(n, Sym::RParen) {
                return true;
            }
            if !self.at_sym_n(n, Sym::Comma) {
                return false;
            }
            n += 1;
        }
    }

    /// `(x: T, ...)`.
    fn formal_args(&mut self) -> PResult<Vec<crate::ast::VarDecl>> {
        self.expect_sym(Sym::LParen)?;
        let mut args = Vec::new();
        if !self.at_sym(Sym::RParen) {
            loop {
                args.push(self.binding()?);
                if !self.eat_sym(Sym::Comma) {
                    break;
                }
            }
        }
        self.expect_sym(Sym::RParen)?;
        Ok(args)
    }

    fn braced_exp(&mut self) -> PResult<crate::ast::Expr> {
        self.expect_sym(Sym::LBrace)?;
        let e = self.parse_exp()?;
        self.expect_sym(Sym::RBrace)?;
        Ok(e)
    }

    /// `requires`, `ensures` and `decreases` clauses, in any order, each optionally
    /// followed by `;`.
    fn parse_contract(&mut self) -> PResult<Contract> {
        let mut c = Contract::default();
        loop {
            if self.eat_kw("requires") {
                c.requires.push(self.parse_exp()?);
            } else if self.eat_kw("ensures") {
                c.ensures.push(self.parse_exp()?);
            } else if self.at_kw("decreases") {
                c.decreases.push(self.parse_decreases()?);
            } else {
                return Ok(c);
            }
            self.eat_sym(Sym::Semi);
        }
    }

    fn parse_method(&mut self) -> PResult<Method> {
        self.bump();
        let name = self.ident()?;
        let params = self.formal_args()?;
        let returns = if self.eat_kw("returns") {
            self.formal_args()?
        } else {
            Vec::new()
        };
        let contract = self.parse_contract()?;
        let body = if self.at_sym(Sym::LBrace) {
            Some(self.parse_block(true)?)
        } else {
            None
        };
        Ok(Method {
            name,
            params,
            returns,
            contract,
            body,
        })
    }

    fn parse_function(&mut self) -> PResult<Function> {
        self.bump();
        let name = self.ident()?;
        let params = self.formal_args()?;
        self.expect_sym(Sym::Colon)?;
        let result = self.parse_type()?;
        let contract = self.parse_contract()?;
        let body = if self.at_sym(Sym::LBrace) {
            Some(self.braced_exp()?)
        } else {
            None
        };
        Ok(Function {
            name,
            params,
            result,
            contract,
            body,
        })
    }

    /// `[A, B]` type parameters of a domain or ADT (optional).
    fn type_params(&mut self) -> PResult<Vec<crate::ast::Ident>> {
        let mut ps = Vec::new();
        if self.eat_sym(Sym::LBracket) {
            if !self.at_sym(Sym::RBracket) {
                loop {
                    ps.push(self.ident()?);
                    if !self.eat_sym(Sym::Comma) {
                        break;
                    }
                }
            }
            self.expect_sym(Sym::RBracket)?;
        }
        Ok(ps)
    }

    fn parse_domain(&mut self) -> PResult<Domain> {
        let start = self.bump().start;
        let name = self.ident()?;
        let type_params = self.type_params()?;
        let interpretation = if self.eat_kw("interpretation") {
            self.expect_sym(Sym::LParen)?;
            let mut pairs = Vec::new();
            if !self.at_sym(Sym::RParen) {
                loop {
                    let key = self.ident()?;
                    self.expect_sym(Sym::Colon)?;
                    let s = self.peek();
                    if s.kind != TokenKind::Str {
                        return Err(self.error_expected("string literal"));
                    }
                    self.bump();
                    pairs.push((key, self.string_contents(s)));
                    if !self.eat_sym(Sym::Comma) {
                        break;
                    }
                }
            }
            self.expect_sym(Sym::RParen)?;
            Some(pairs)
        } else {
            None
        };
        self.expect_sym(Sym::LBrace)?;
        let mut functions = Vec::new();
        let mut axioms = Vec::new();
        while !self.eat_sym(Sym::RBrace) {
            let mstart = self.peek().start;
            let annotations = self.parse_annotations()?;
            if self.at_kw("axiom") {
                self.bump();
                let aname = if self.at_sym(Sym::LBrace) {
                    None
                } else {
                    Some(self.ident()?)
                };
                let body = self.braced_exp()?;
                self.eat_sym(Sym::Semi);
                axioms.push(Axiom {
                    annotations,
                    name: aname,
                    body,
                    span: self.span_from(mstart),
                });
            } else if self.at_kw("function") || self.at_kw("unique") {
                let unique = self.eat_kw("unique");
                self.expect_kw("function")?;
                let fname = self.ident()?;
                self.expect_sym(Sym::LParen)?;
                let mut params = Vec::new();
                if !self.at_sym(Sym::RParen) {
                    loop {
                        params.push(self.domain_param()?);
                        if !self.eat_sym(Sym::Comma) {
                            break;
                        }
                    }
                }
                self.expect_sym(Sym::RParen)?;
                self.expect_sym(Sym::Colon)?;
                let result = self.parse_type()?;
                let interpretation = if self.eat_kw("interpretation") {
                    let s = self.peek();
                    if s.kind != TokenKind::Str {
                        return Err(self.error_expected("string literal"));
                    }
                    self.bump();
                    Some(self.string_contents(s))
                } else {
                    None
                };
                self.eat_sym(Sym::Semi);
                functions.push(DomainFunction {
                    annotations,
                    unique,
                    name: fname,
                    params,
                    result,
                    interpretation,
                    span: self.span_from(mstart),
                });
            } else {
                return Err(self.error_expected("`function`, `axiom` or `}`"));
            }
        }
        Ok(Domain {
            name,
            type_params,
            interpretation,
            functions,
            axioms,
            span: self.span_from(start),
        })
    }

    /// `x: T` or just `T`.
    fn domain_param(&mut self) -> PResult<DomainParam> {
        let start = self.peek().start;
        if self.at_ident() && self.at_sym_n(1, Sym::Colon) {
            let b = self.binding()?;
            return Ok(DomainParam {
                name: Some(b.name),
                ty: b.ty,
                span: b.span,
            });
        }
        let ty = self.parse_type()?;
        Ok(DomainParam {
            name: None,
            ty,
            span: self.span_from(start),
        })
    }

    /// `adt Name[T] { Ctor(f: T) ... } [derives { contains [without a, b] ... }]`.
    fn parse_adt(&mut self) -> PResult<Adt> {
        self.bump();
        let name = self.ident()?;
        let type_params = self.type_params()?;
        self.expect_sym(Sym::LBrace)?;
        let mut constructors = Vec::new();
        while !self.eat_sym(Sym::RBrace) {
            let cstart = self.peek().start;
            let annotations = self.parse_annotations()?;
            let cname = self.ident()?;
            let fields = self.formal_args()?;
            self.eat_sym(Sym::Semi);
            constructors.push(AdtConstructor {
                annotations,
                name: cname,
                fields,
                span: self.span_from(cstart),
            });
        }
        let mut derives = Vec::new();
        if self.eat_kw("derives") {
            self.expect_sym(Sym::LBrace)?;
            while !self.eat_sym(Sym::RBrace) {
                let dstart = self.peek().start;
                let dname = self.ident()?;
                let type_arg = if self.eat_sym(Sym::LBracket) {
                    let ty = self.parse_type()?;
                    self.expect_sym(Sym::RBracket)?;
                    Some(ty)
                } else {
                    None
                };
                let mut without = Vec::new();
                if self.eat_kw("without") {
                    loop {
                        without.push(self.ident()?);
                        if !self.eat_sym(Sym::Comma) {
                            break;
                        }
                    }
                }
                derives.push(Derive {
                    name: dname,
                    type_arg,
                    without,
                    span: self.span_from(dstart),
                });
            }
        }
        Ok(Adt {
            name,
            type_params,
            constructors,
            derives,
        })
    }
}
