//! Constructs that speak of the permissions held rather than take them: `forperm` (a
//! property of every location held), `quasihavoc` (the value of a location becomes unknown,
//! whatever is held) and `asserting` (an assertion checked inside an expression).

use germanium_smt::{Quantifier, QuantifierKind, Symbol, Term};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind, Stmt};
use germanium_verifier::errors::{ErrorContext, Reason};

use crate::lower::{unsupported, Lower, R};
use crate::state::State;

impl Lower<'_, '_> {
    /// The permission map and index of a resource as written (`e.f`, `P(args)` or a wand),
    /// in `st`.
    pub(crate) fn resource_at(
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
            ExprKind::Binary(BinaryOp::Wand, ..) => self.wand_location(st, guard, res, ctx),
            _ => unsupported(res.span, "this resource"),
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
        if self.modes.wand_wellformedness {
            return self.expr(st, guard, e, ctx);
        }
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

    /// `quasihavocall xs :: c ==> r`: the value at each location `r` names where `c` holds
    /// becomes unknown. The heap map is a new one, equal to the old one at every location
    /// no such `xs` names (an existential over `xs`, unless `r` is a field of one bound
    /// reference, which names itself).
    pub fn quasihavocall(
        &mut self,
        st: &mut State,
        s: &Stmt,
        count: usize,
        cond: Option<&Expr>,
        res: &Expr,
    ) -> R<()> {
        let ctx = ErrorContext::at("quasihavocall.failed", s.span, "Quasihavocall might fail.");
        // The condition and location for some values of the variables, as constants.
        let named = |l: &mut Self| -> R<(Vec<Term>, Term, String, Term)> {
            let mut inner = st.clone();
            let mut constants = Vec::new();
            for i in 0..count {
                let Some(var) = l.t.sem.binders.get(&(s.id, i)).copied() else {
                    return unsupported(s.span, "this `quasihavocall`");
                };
                let info = l.t.sem.var(var).clone();
                let sort = l.sort(&info.ty, s.span)?;
                let constant = l.vc.fresh(&info.name, sort);
                inner.store.insert(var, constant.clone());
                constants.push(constant);
            }
            let reach = st.reach.clone();
            let checks = l.vc.checks.len();
            let found = l.leniently(|l| -> R<(Term, String, Term)> {
                let c = match cond {
                    Some(c) => l.expr(&inner, &reach, c, &ctx)?,
                    None => Term::tt(),
                };
                let under = Term::and([reach.clone(), c.clone()]);
                let (map, index) = l.resource_at(&inner, &under, res, &ctx)?;
                Ok((c, map, index))
            });
            l.vc.checks.truncate(checks);
            let (c, map, index) = found?;
            Ok((constants, c, map, index))
        };
        let binding = |l: &mut Self| l.with_modes(|m| m.binding = true, named);
        let (constants, c, map, index) = binding(self)?;
        // Distinct values name distinct locations.
        let (others, c2, _, index2) = binding(self)?;
        let same_location = Term::and([c.clone(), c2, Term::eq(index.clone(), index2)]);
        let same_values = Term::and(
            constants
                .iter()
                .zip(&others)
                .map(|(a, b)| Term::eq(a.clone(), b.clone())),
        );
        let text = germanium_verifier::errors::text_of(self.t.sources, res.span);
        let error = germanium_syntax::Diagnostic::new(
            "quasihavocall.failed:quasihavocall.not.injective",
            s.span,
            format!("Quasihavocall might fail. The receiver {text} might not be injective."),
        );
        let under = self.assumable();
        let reach = st.reach.clone();
        self.vc.check_under(
            &reach,
            under,
            Term::implies(same_location, same_values),
            error,
            true,
        );
        let mut to_vars = std::collections::HashMap::new();
        let mut vars = Vec::new();
        for (i, constant) in constants.iter().enumerate() {
            let symbol = Symbol::user(&format!("h{i}%h{}", s.id.0));
            let sort = constant.sort().clone();
            to_vars.insert(constant.clone(), Term::var(symbol.clone(), sort.clone()));
            vars.push((symbol, sort));
        }
        let (c, index) = (
            germanium_smt::substitute(&c, &to_vars),
            germanium_smt::substitute(&index, &to_vars),
        );
        let Some(heap) = st.memory.heap.get(&map).cloned() else {
            return unsupported(res.span, "this resource");
        };
        let Some((index_sort, _)) = heap.sort().array_parts() else {
            return unsupported(res.span, "this resource");
        };
        let index_sort = index_sort.clone();
        let new = self.vc.fresh(&format!("H_{map}"), heap.sort().clone());
        let l = Symbol::user(&format!("l%h{}", s.id.0));
        let at = Term::var(l.clone(), index_sort.clone());
        let named_here = match (vars.as_slice(), index.kind()) {
            ([(x, _)], germanium_smt::TermKind::Var(v)) if v == x => {
                germanium_smt::substitute(&c, &[(index.clone(), at.clone())].into_iter().collect())
            }
            _ => Term::quantifier(Quantifier {
                kind: QuantifierKind::Exists,
                vars: vars.clone(),
                body: Term::and([c, Term::eq(index, at.clone())]),
                triggers: vec![],
                qid: None,
                weight: None,
            }),
        };
        let kept = Term::eq(
            Term::select(new.clone(), at.clone()),
            Term::select(heap, at.clone()),
        );
        self.vc.fact(Term::quantifier(Quantifier {
            kind: QuantifierKind::Forall,
            vars: vec![(l, index_sort)],
            body: Term::or([named_here, kept]),
            triggers: vec![vec![Term::select(new.clone(), at)]],
            qid: None,
            weight: None,
        }));
        st.memory.heap.insert(map, new);
        Ok(())
    }
}
