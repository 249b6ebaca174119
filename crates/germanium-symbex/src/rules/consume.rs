//! Consumption (exhale, assert, preconditions, postconditions, invariants): checks an
//! assertion and removes its permissions. Expressions are evaluated in the heap as it was
//! before the consumption started (`eval_heap`), chunks are removed from the current one.
//! A pure conjunct is assumed once checked (failed ones after being reported), under the
//! guards it was checked under; a missing permission ends the path.

use germanium_smt::Term;
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind};

use crate::env::analysis::is_impure;
use crate::errors::{ErrorContext, Reason};
use crate::rules::context::{Verifier, R};
use crate::state::{Heap, Permission, Resource, State};
use crate::trace::Step;

impl<'e, 'a> Verifier<'e, 'a> {
    pub fn consume(
        &mut self,
        st: &mut State,
        eval_heap: &Heap,
        a: &Expr,
        ctx: &ErrorContext,
    ) -> R<()> {
        let view = self.view_of(st, &st.heap);
        self.traced(Step::Consume, a.span, view, String::new, |v| {
            v.consume_step(st, eval_heap, a, ctx)
        })
    }

    fn consume_step(
        &mut self,
        st: &mut State,
        eval_heap: &Heap,
        a: &Expr,
        ctx: &ErrorContext,
    ) -> R<()> {
        self.note_state_with(st, eval_heap);
        if let Some(pa) = self.as_predicate_access(a) {
            let born = self.member.reads.born.len();
            let (args, amount) = self.with_perm_heap(Some(st.heap.clone()), |v| {
                v.eval_predicate_access(st, eval_heap, &pa, ctx)
            })?;
            self.with_born_reads(born, |v| v.consume_instance(st, &pa, &args, amount, ctx))?;
            return Ok(());
        }
        match &a.kind {
            ExprKind::Binary(BinaryOp::And, l, r) => {
                self.consume(st, eval_heap, l, ctx)?;
                self.consume(st, eval_heap, r, ctx)
            }
            ExprKind::Binary(BinaryOp::Implies, c, body) if is_impure(self.env.sem, body) => {
                let c = self.eval_consuming(st, eval_heap, c, ctx)?;
                self.under(c, |v| v.consume(st, eval_heap, body, ctx))
            }
            ExprKind::Cond(c, x, y) if is_impure(self.env.sem, a) => {
                let c = self.eval_consuming(st, eval_heap, c, ctx)?;
                self.under(c.clone(), |v| v.consume(st, eval_heap, x, ctx))?;
                self.under(Term::not(c), |v| v.consume(st, eval_heap, y, ctx))
            }
            ExprKind::Let(_, value, body) if is_impure(self.env.sem, body) => {
                let v = self.eval_consuming(st, eval_heap, value, ctx)?;
                let Some(var) = self.env.sem.binders.get(&(a.id, 0)).copied() else {
                    return Err(self.unsupported(a.span, "this `let`"));
                };
                self.member.bound.push((var, v));
                let r = self.consume(st, eval_heap, body, ctx);
                self.member.bound.pop();
                r
            }
            // `@reveal()` changes how its application is evaluated: left to `eval`.
            ExprKind::Annotated(a, x) if a.name.name != "reveal" => {
                self.consume(st, eval_heap, x, ctx)
            }
            // `assume` takes the inhale part, like `inhale`.
            ExprKind::InhaleExhale(x, _) if self.modes.assuming => {
                self.consume(st, eval_heap, x, ctx)
            }
            ExprKind::InhaleExhale(_, x) => self.consume(st, eval_heap, x, ctx),
            ExprKind::Acc(loc, amount) => {
                self.consume_acc(st, eval_heap, loc, amount.as_deref(), ctx)
            }
            ExprKind::Binary(BinaryOp::Wand, ..) => {
                self.consume_wand(st, eval_heap, a, ctx).map(|_| ())
            }
            ExprKind::Quantifier { .. } if is_impure(self.env.sem, a) => {
                self.consume_quantified(st, eval_heap, a, ctx)
            }
            ExprKind::Unfolding(access, body)
                if self.modes.assuming && is_impure(self.env.sem, body) =>
            {
                self.assume_unfolding(st, eval_heap, access, body, ctx)
            }
            _ if is_impure(self.env.sem, a) => Err(self.unsupported_assertion(a)),
            // `[a, b]` under pure operators (`[a, b] || c`): read the whole expression.
            _ if crate::rules::inhale_exhale::contains_inhale_exhale(a) => {
                let part = if self.modes.assuming {
                    crate::rules::inhale_exhale::Part::Inhale
                } else {
                    crate::rules::inhale_exhale::Part::Exhale
                };
                let read = crate::rules::inhale_exhale::reading(a, part).into_owned();
                self.consume(st, eval_heap, &read, ctx)
            }
            _ => {
                let reported = self.errors.len();
                let t = self.eval_consuming(st, eval_heap, a, ctx)?;
                self.consume_pure(t, a, reported, ctx)
            }
        }
    }

    /// Consumes the pure assertion `a` whose value is `t` (errors up to `reported` were
    /// there before it was read).
    pub(crate) fn consume_pure(
        &mut self,
        t: Term,
        a: &Expr,
        reported: usize,
        ctx: &ErrorContext,
    ) -> R<()> {
        if self.modes.assuming {
            return self.assume_guarded(t, a.span);
        }
        // The conjunct is not well-defined (already reported): like Silicon, which stops
        // there, do not also report it false; go on as after a failed check.
        if self.modes.checking && self.errors.len() > reported {
            return self.assume_guarded(t, a.span);
        }
        // Like Silicon, keep what was checked: later code may need it (e.g. an extensional
        // collection equality). A failed check already assumed it, and without checking
        // nothing was proved, so nothing is kept then.
        if self.modes.checking && self.check(t.clone(), ctx, Reason::AssertionFalse, a)? {
            self.assume_guarded(t, a.span)?;
        }
        Ok(())
    }

    fn consume_acc(
        &mut self,
        st: &mut State,
        eval_heap: &Heap,
        loc: &Expr,
        amount: Option<&Expr>,
        ctx: &ErrorContext,
    ) -> R<()> {
        let (field, rcv) = self.field_location(loc)?;
        let r = self.as_receiver(|v| v.eval_consuming(st, eval_heap, rcv, ctx))?;
        let born = self.member.reads.born.len();
        let wildcard = self.modes.positive_only
            || amount.is_some_and(crate::rules::read_permissions::is_wildcard);
        let amount = match amount {
            // Some positive amount only where the amount is positive: of `none`, nothing.
            Some(x) if self.modes.positive_only && matches!(x.kind, ExprKind::NoPerm) => {
                Some(Permission::none())
            }
            _ if wildcard => None,
            None => Some(self.scaled(Permission::write())),
            Some(x) => {
                let p = Permission::of(self.eval_consuming(st, eval_heap, x, ctx)?);
                self.check_not_negative(&p, ctx, x)?;
                Some(self.scaled(p))
            }
        };
        let resource = Resource::Field(field);
        self.with_born_reads(born, |v| {
            v.consume_resource(st, &resource, &[r], amount, loc, ctx)
        })?;
        Ok(())
    }
}
