//! Constructs that speak of the permissions held rather than take them: `forperm` (a
//! property of every location held), `quasihavoc` (the value of a location becomes unknown,
//! whatever is held) and `asserting` (an assertion checked inside an expression).

use germanium_smt::{Quantifier, QuantifierKind, Symbol, Term};
use germanium_syntax::ast::{Expr, ExprKind, Stmt};
use germanium_verifier::errors::{ErrorContext, Reason};

use crate::lower::{unsupported, Lower, R};
use crate::state::State;

impl Lower<'_, '_> {
    /// The permission map and index of a resource as written (`e.f` or `P(args)`), in `st`.
    fn resource_at(
        &mut self,
        st: &State,
        guard: &Term,
        res: &Expr,
        ctx: &ErrorContext,
    ) -> R<(String, Term)> {
        if let Some(pa) = crate::predicates::access(self.t.sem, res) {
            let index = self.instance(st, guard, &pa, ctx)?;
            return Ok((pa.name, index));
        }
        match &res.kind {
            ExprKind::FieldAccess(rcv, field) if self.t.is_field(&field.name) => {
                let r = self.expr(st, guard, rcv, ctx)?;
                Ok((field.name.clone(), r))
            }
            _ => unsupported(res.span, "this resource (wands)"),
        }
    }

    /// `forperm xs [r(xs)] :: body`: `body` of every `xs` whose `r(xs)` some permission is
    /// held of (during an exhale: left).
    pub fn forperm(
        &mut self,
        st: &State,
        guard: &Term,
        e: &Expr,
        resources: &[Expr],
        body: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let [res] = resources else {
            return unsupported(e.span, "`forperm` over several resources");
        };
        // Evaluated in the current state: during an exhale, reads need what is left.
        let mut inner = st.clone();
        if let Some(left) = &self.perm_masks {
            inner.memory.mask = left.clone();
        }
        let mut to_vars = std::collections::HashMap::new();
        let mut vars = Vec::new();
        let count = match &e.kind {
            ExprKind::Forperm { vars, .. } => vars.len(),
            _ => 0,
        };
        for i in 0..count {
            let Some(var) = self.t.sem.binders.get(&(e.id, i)).copied() else {
                return unsupported(e.span, "this `forperm`");
            };
            let info = self.t.sem.var(var).clone();
            let sort = self.sort(&info.ty, e.span)?;
            let constant = self.vc.fresh(&info.name, sort.clone());
            let symbol = Symbol::user(&format!("{}%p{}", info.name, e.id.0));
            to_vars.insert(constant.clone(), Term::var(symbol.clone(), sort.clone()));
            inner.store.insert(var, constant);
            vars.push((symbol, sort));
        }
        let (map, index) = self.leniently(|l| l.resource_at(&inner, guard, res, ctx))?;
        let masks = self.perm_masks.as_ref().unwrap_or(&st.memory.mask);
        let Some(mask) = masks.get(&map) else {
            return unsupported(res.span, "this resource");
        };
        let amount = Term::select(mask.clone(), index);
        let held = Term::gt(amount.clone(), Term::real(0, 1));
        let inside = Term::and([guard.clone(), held.clone()]);
        let value = self.expr(&inner, &inside, body, ctx)?;
        let body = germanium_smt::substitute(&Term::implies(held, value), &to_vars);
        let trigger = germanium_smt::substitute(&amount, &to_vars);
        Ok(Term::quantifier(Quantifier {
            kind: QuantifierKind::Forall,
            vars,
            body,
            triggers: vec![vec![trigger]],
            qid: None,
            weight: None,
        }))
    }

    /// `asserting (a) in e`: `a` checked where `e` is evaluated, then `e`.
    pub fn asserting(
        &mut self,
        st: &State,
        guard: &Term,
        a: &Expr,
        e: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        if crate::assertions::is_impure(self.t.sem, a) {
            let mut scratch = State {
                reach: guard.clone(),
                ..st.clone()
            };
            self.exhale(&mut scratch, a, ctx, true)?;
        } else {
            let t = self.expr(st, guard, a, ctx)?;
            self.check(guard, t, ctx, Reason::AssertionFalse, a);
        }
        self.expr(st, guard, e, ctx)
    }

    /// `quasihavoc c ==> r`: where `c` holds, the value at `r` becomes unknown (permissions
    /// stay as they are).
    pub fn quasihavoc(
        &mut self,
        st: &mut State,
        s: &Stmt,
        cond: Option<&Expr>,
        res: &Expr,
    ) -> R<()> {
        let ctx = ErrorContext::at("quasihavoc.failed", s.span, "Quasihavoc might fail.");
        let reach = st.reach.clone();
        let c = match cond {
            Some(c) => self.expr(st, &reach, c, &ctx)?,
            None => Term::tt(),
        };
        let under = Term::and([reach, c.clone()]);
        let (map, index) = self.resource_at(st, &under, res, &ctx)?;
        let Some(heap) = st.memory.heap.get(&map).cloned() else {
            return unsupported(res.span, "this resource");
        };
        let Some((_, value_sort)) = heap.sort().array_parts() else {
            return unsupported(res.span, "this resource");
        };
        let unknown = self.vc.fresh(&format!("havoc_{map}"), value_sort.clone());
        let old = Term::select(heap.clone(), index.clone());
        let new = Term::store(heap, index, Term::ite(c, unknown, old));
        let new = self.vc.define(&format!("H_{map}"), new);
        st.memory.heap.insert(map, new);
        Ok(())
    }
}
