//! Collection expressions and quantifiers. Collections are the shared theories' operations
//! with the definedness checks of indexing (`seq.index.negative`, `seq.index.length`,
//! `map.key.contains`). A quantifier's body is first evaluated with its variables as fresh
//! constants, so its definedness checks hold for arbitrary values (as Carbon havocs them),
//! then the constants become the quantifier's variables.

use std::collections::HashMap;

use germanium_semantics::types::Type;
use germanium_smt::{Quantifier, QuantifierKind, Symbol, Term};
use germanium_syntax::ast::{CollectionKind, Expr, ExprKind, QuantifierKind as ViperKind};
use germanium_theories::TheoryOp;
use germanium_verifier::errors::{text_of, ErrorContext, Reason};

use crate::lower::{unsupported, Lower, R};
use crate::state::State;

fn element_type(ty: &Type) -> Type {
    match ty {
        Type::Seq(t) | Type::Set(t) | Type::Multiset(t) => (**t).clone(),
        _ => Type::Int,
    }
}

fn map_types(ty: &Type) -> (Type, Type) {
    match ty {
        Type::Map(k, v) => ((**k).clone(), (**v).clone()),
        _ => (Type::Int, Type::Int),
    }
}

impl Lower<'_, '_> {
    /// The term of a collection expression or quantifier; `None` for other expressions.
    pub fn collection(
        &mut self,
        st: &State,
        guard: &Term,
        e: &Expr,
        ctx: &ErrorContext,
    ) -> R<Option<Term>> {
        let term = match &e.kind {
            ExprKind::Collection(kind, _, elems) => {
                let elem = element_type(&self.type_of(e)?);
                let mut terms = Vec::new();
                for x in elems {
                    terms.push(self.expr(st, guard, x, ctx)?);
                }
                let op = match (kind, terms.is_empty()) {
                    (CollectionKind::Seq, true) => TheoryOp::SeqEmpty(elem),
                    (CollectionKind::Seq, false) => TheoryOp::SeqLiteral(elem),
                    (CollectionKind::Set, true) => TheoryOp::SetEmpty(elem),
                    (CollectionKind::Set, false) => TheoryOp::SetLiteral(elem),
                    (CollectionKind::Multiset, true) => TheoryOp::MultisetEmpty(elem),
                    (CollectionKind::Multiset, false) => TheoryOp::MultisetLiteral(elem),
                };
                self.apply(op, terms, e)?
            }
            ExprKind::MapLit(_, pairs) => {
                let (k, v) = map_types(&self.type_of(e)?);
                let mut terms = Vec::new();
                for (a, b) in pairs {
                    terms.push(self.expr(st, guard, a, ctx)?);
                    terms.push(self.expr(st, guard, b, ctx)?);
                }
                let op = if terms.is_empty() {
                    TheoryOp::MapEmpty(k, v)
                } else {
                    TheoryOp::MapLiteral(k, v)
                };
                self.apply(op, terms, e)?
            }
            ExprKind::Range(a, b) => {
                let a = self.expr(st, guard, a, ctx)?;
                let b = self.expr(st, guard, b, ctx)?;
                self.apply(TheoryOp::SeqRange, vec![a, b], e)?
            }
            ExprKind::Index(s, i) => {
                let ty = self.type_of(s)?;
                let seq = self.expr(st, guard, s, ctx)?;
                let index = self.expr(st, guard, i, ctx)?;
                match ty {
                    Type::Seq(elem) => {
                        self.check_index(guard, &seq, &index, &elem, s, i, ctx)?;
                        self.apply(TheoryOp::SeqIndex(*elem), vec![seq, index], e)?
                    }
                    Type::Map(k, v) => {
                        let op = TheoryOp::MapContainsKey(*k.clone(), *v.clone());
                        let has = self.apply(op, vec![index.clone(), seq.clone()], e)?;
                        let m = text_of(self.t.sources, s.span);
                        self.defined(guard, has, ctx, Reason::MapKeyContains(m), i);
                        self.apply(TheoryOp::MapLookup(*k, *v), vec![seq, index], e)?
                    }
                    _ => return unsupported(e.span, "this indexing"),
                }
            }
            ExprKind::Slice(s, from, to) => {
                let elem = element_type(&self.type_of(s)?);
                let mut t = self.expr(st, guard, s, ctx)?;
                let from = match from {
                    Some(f) => Some(self.expr(st, guard, f, ctx)?),
                    None => None,
                };
                if let Some(to) = to {
                    let to = self.expr(st, guard, to, ctx)?;
                    t = self.apply(TheoryOp::SeqTake(elem.clone()), vec![t, to], e)?;
                }
                if let Some(from) = from {
                    t = self.apply(TheoryOp::SeqDrop(elem), vec![t, from], e)?;
                }
                t
            }
            ExprKind::Update(s, i, v) => {
                let ty = self.type_of(s)?;
                let seq = self.expr(st, guard, s, ctx)?;
                let index = self.expr(st, guard, i, ctx)?;
                let value = self.expr(st, guard, v, ctx)?;
                match ty {
                    Type::Seq(elem) => {
                        self.check_index(guard, &seq, &index, &elem, s, i, ctx)?;
                        self.apply(TheoryOp::SeqUpdate(*elem), vec![seq, index, value], e)?
                    }
                    Type::Map(k, v) => {
                        self.apply(TheoryOp::MapUpdate(*k, *v), vec![seq, index, value], e)?
                    }
                    _ => return unsupported(e.span, "this update"),
                }
            }
            ExprKind::Length(x) => {
                let ty = self.type_of(x)?;
                let t = self.expr(st, guard, x, ctx)?;
                let op = match ty {
                    Type::Seq(t) => TheoryOp::SeqLength(*t),
                    Type::Set(t) => TheoryOp::SetCardinality(*t),
                    Type::Multiset(t) => TheoryOp::MultisetCardinality(*t),
                    Type::Map(k, v) => TheoryOp::MapCardinality(*k, *v),
                    _ => return unsupported(e.span, "this cardinality"),
                };
                self.apply(op, vec![t], e)?
            }
            ExprKind::MapDomain(m) | ExprKind::MapRange(m) => {
                let (k, v) = map_types(&self.type_of(m)?);
                let t = self.expr(st, guard, m, ctx)?;
                let op = if matches!(e.kind, ExprKind::MapDomain(_)) {
                    TheoryOp::MapDomain(k, v)
                } else {
                    TheoryOp::MapRange(k, v)
                };
                self.apply(op, vec![t], e)?
            }
            ExprKind::Quantifier {
                kind,
                vars,
                triggers,
                body,
            } => self.quantifier(st, guard, e, *kind, vars.len(), triggers, body, ctx)?,
            _ => return Ok(None),
        };
        Ok(Some(term))
    }

    pub fn apply(&self, op: TheoryOp, args: Vec<Term>, e: &Expr) -> R<Term> {
        self.t
            .theories
            .apply(&op, args)
            .or_else(|u| unsupported(e.span, u.0))
    }

    #[allow(clippy::too_many_arguments)]
    fn check_index(
        &mut self,
        guard: &Term,
        seq: &Term,
        index: &Term,
        elem: &Type,
        s: &Expr,
        i: &Expr,
        ctx: &ErrorContext,
    ) -> R<()> {
        let text = text_of(self.t.sources, s.span);
        let nonnegative = Term::ge(index.clone(), Term::int(0));
        self.defined(
            guard,
            nonnegative,
            ctx,
            Reason::SeqIndexNegative(text.clone()),
            i,
        );
        let len = self.apply(TheoryOp::SeqLength(elem.clone()), vec![seq.clone()], s)?;
        let below = Term::lt(index.clone(), len);
        self.defined(guard, below, ctx, Reason::SeqIndexLength(text), i);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn quantifier(
        &mut self,
        st: &State,
        guard: &Term,
        e: &Expr,
        kind: ViperKind,
        count: usize,
        triggers: &[germanium_syntax::ast::Trigger],
        body: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let in_definition = self.limited.is_some();
        self.with_modes(
            |m| {
                m.all_limited |= in_definition;
                m.binding = true;
            },
            |l| l.quantifier_inside(st, guard, e, kind, count, triggers, body, ctx),
        )
    }

    /// The body of the `forall` `e` at fresh values of its variables (not closed: valid
    /// there iff valid for all values).
    pub fn forall_at_fresh_values(
        &mut self,
        st: &State,
        guard: &Term,
        e: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let ExprKind::Quantifier { vars, body, .. } = &e.kind else {
            return unsupported(e.span, "this quantifier");
        };
        let bound = self.bind(e.id, vars.len(), e.span, "fa")?;
        self.expr(&bound.state(st), guard, body, ctx)
    }

    #[allow(clippy::too_many_arguments)]
    fn quantifier_inside(
        &mut self,
        st: &State,
        guard: &Term,
        e: &Expr,
        kind: ViperKind,
        count: usize,
        triggers: &[germanium_syntax::ast::Trigger],
        body: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let mut inner = st.clone();
        let mut to_vars: HashMap<Term, Term> = HashMap::new();
        let mut bound = Vec::new();
        for i in 0..count {
            let Some(var) = self.t.sem.binders.get(&(e.id, i)).copied() else {
                return unsupported(e.span, "this quantifier");
            };
            let info = self.t.sem.var(var).clone();
            let sort = self.sort(&info.ty, e.span)?;
            let constant = self.vc.fresh(&info.name, sort.clone());
            let symbol = Symbol::user(&format!("{}%q{}", info.name, e.id.0));
            let variable = Term::var(symbol.clone(), sort.clone());
            to_vars.insert(constant.clone(), variable.clone());
            inner.store.insert(var, constant);
            bound.push((symbol, sort, variable));
        }
        let body_term = self.expr(&inner, guard, body, ctx)?;
        // Triggers are patterns, not reads: nothing of them is checked.
        let checks = self.vc.checks.len();
        let mut patterns = Vec::new();
        for set in triggers {
            let mut terms = Vec::new();
            for x in &set.exprs {
                let t = self.leniently(|l| l.trigger_term(&inner, guard, x, ctx))?;
                terms.push(germanium_smt::substitute(&t, &to_vars));
            }
            patterns.push(terms);
        }
        self.vc.checks.truncate(checks);
        let body_term = germanium_smt::substitute(&body_term, &to_vars);
        let variables: Vec<Term> = bound.iter().map(|(_, _, v)| v.clone()).collect();
        if triggers.is_empty() {
            patterns = germanium_theories::infer_triggers(&variables, &body_term);
        }
        // Named by height: the same fact assumed at several places is one quantifier.
        Ok(germanium_smt::alpha_normal(Quantifier {
            kind: match kind {
                ViperKind::Forall => QuantifierKind::Forall,
                ViperKind::Exists => QuantifierKind::Exists,
            },
            vars: bound.into_iter().map(|(s, sort, _)| (s, sort)).collect(),
            body: body_term,
            triggers: patterns,
            qid: None,
            weight: None,
        }))
    }
}
