//! Inhale and exhale of assertions over the explicit state. Inhaling `acc(e.f, p)` adds `p`
//! to the permission map at `e` (which then is not null and holds at most a whole
//! permission); exhaling checks that much is held and takes it away, and when the whole
//! assertion is exhaled the heap is havocked wherever no permission is left (what another
//! thread or callee may have changed meanwhile). Expressions of an exhale are evaluated in
//! the state before it; pure parts are checked, then assumed.

use germanium_smt::{Symbol, Term};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind};
use germanium_verifier::errors::{ErrorContext, Reason};

use crate::lower::{unsupported, Lower, R};
use crate::state::{join, Memory, State};

/// A location of `acc`: in the heap and permission maps `map` (a field or predicate name),
/// at `index`, an amount; `node` is the location as written, `amount_node` the amount.
pub struct Held<'x> {
    pub map: String,
    pub index: Term,
    pub amount: Term,
    pub field: bool,
    pub node: &'x Expr,
    pub amount_node: Option<&'x Expr>,
    /// The amount is `wildcard`: taking it needs only some permission, and takes less.
    pub wildcard: bool,
}

/// Whether `take` checks what it takes (exhale, assert) or assumes it (impure `assume`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Taking {
    Checked,
    Assumed,
}

/// Puts `var` back as it was in `st` before a `let` bound it.
fn restore(st: &mut State, var: germanium_semantics::VarId, saved: Option<Term>) {
    match saved {
        Some(v) => st.store.insert(var, v),
        None => st.store.remove(&var),
    };
}

/// The wand and amount of `a` if it holds a magic wand (`A --* B` or `acc(A --* B, p)`).
fn wand_access(a: &Expr) -> Option<(&Expr, Option<&Expr>)> {
    match &a.kind {
        ExprKind::Binary(BinaryOp::Wand, ..) => Some((a, None)),
        ExprKind::Acc(loc, amount) if matches!(loc.kind, ExprKind::Binary(BinaryOp::Wand, ..)) => {
            Some((loc, amount.as_deref()))
        }
        _ => None,
    }
}

/// Whether `e` has an `[a, b]` anywhere.
pub fn has_inhale_exhale(e: &Expr) -> bool {
    let mut found = false;
    germanium_semantics::visit::walk_expr(e, &mut |x| {
        found |= matches!(x.kind, ExprKind::InhaleExhale(..));
    });
    found
}

/// Whether an assertion holds permissions (then it is not a plain boolean expression).
pub fn is_impure(sem: &germanium_semantics::Semantics, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Acc(..) | ExprKind::InhaleExhale(..) => true,
        ExprKind::Unfolding(_, body) => is_impure(sem, body),
        ExprKind::Binary(BinaryOp::Wand, ..) => true,
        ExprKind::Binary(BinaryOp::And | BinaryOp::Implies, a, b) => {
            is_impure(sem, a) || is_impure(sem, b)
        }
        ExprKind::Cond(_, a, b) => is_impure(sem, a) || is_impure(sem, b),
        ExprKind::Ascribed(x, _) | ExprKind::Annotated(_, x) => is_impure(sem, x),
        ExprKind::Quantifier { body, .. } | ExprKind::Let(_, _, body) => is_impure(sem, body),
        ExprKind::Call(..) => matches!(
            sem.call(e.id),
            Some(germanium_semantics::CallTarget::Predicate(_))
        ),
        _ => false,
    }
}

impl Lower<'_, '_> {
    /// Adds `a` to `st`; ill-defined parts are reported in `ctx`.
    pub fn inhale(&mut self, st: &mut State, a: &Expr, ctx: &ErrorContext) -> R<()> {
        if !is_impure(self.t.sem, a) {
            let reach = st.reach.clone();
            let t = self.expr(st, &reach, a, ctx)?;
            st.reach = self.vc.assume(&st.reach, t);
            return Ok(());
        }
        match &a.kind {
            ExprKind::Ascribed(x, _) | ExprKind::Annotated(_, x) => self.inhale(st, x, ctx),
            // `[a, b]`: `a` where inhaled, `b` where exhaled.
            ExprKind::InhaleExhale(x, y) => {
                let part = if self.modes.exhale_parts { y } else { x };
                self.inhale(st, part, ctx)
            }
            ExprKind::Binary(BinaryOp::And, x, y) => {
                self.inhale(st, x, ctx)?;
                self.inhale(st, y, ctx)
            }
            ExprKind::Binary(BinaryOp::Implies, c, x) => {
                let reach = st.reach.clone();
                let c = self.expr(st, &reach, c, ctx)?;
                self.branch(st, c, |l, s| l.inhale(s, x, ctx), |_, _| Ok(()))
            }
            ExprKind::Cond(c, x, y) => {
                let reach = st.reach.clone();
                let c = self.expr(st, &reach, c, ctx)?;
                self.branch(
                    st,
                    c,
                    |l, s| l.inhale(s, x, ctx),
                    |l, s| l.inhale(s, y, ctx),
                )
            }
            ExprKind::Quantifier { .. } => self.inhale_quantified(st, a, ctx),
            ExprKind::Let(_, value, body) => {
                let reach = st.reach.clone();
                // In a wand checked well-formed, a binding is read where the wand is used.
                let v = if self.modes.wand_wellformedness {
                    self.leniently(|l| l.expr(st, &reach, value, ctx))?
                } else {
                    self.expr(st, &reach, value, ctx)?
                };
                let Some(var) = self.t.sem.binders.get(&(a.id, 0)).copied() else {
                    return unsupported(a.span, "this `let`");
                };
                let saved = st.store.insert(var, v);
                let r = self.inhale(st, body, ctx);
                restore(st, var, saved);
                r
            }
            ExprKind::Binary(BinaryOp::Wand, ..) if !self.modes.lenient => {
                self.check_wand_wellformed(st, a)?;
                match self.resource(st, a, ctx)? {
                    Some(held) => self.inhale_held(st, a, held, ctx),
                    None => unsupported(a.span, "this magic wand"),
                }
            }
            _ => match self.resource(st, a, ctx)? {
                Some(held) => self.inhale_held(st, a, held, ctx),
                None => unsupported(a.span, "this assertion (quantifiers, wands)"),
            },
        }
    }

    /// Adds the amount of `held` to the state.
    fn inhale_held(
        &mut self,
        st: &mut State,
        a: &Expr,
        held: Held<'_>,
        ctx: &ErrorContext,
    ) -> R<()> {
        let Held {
            map,
            index,
            amount: p,
            field,
            amount_node,
            ..
        } = held;
        let reach = st.reach.clone();
        let nonnegative = Term::ge(p.clone(), Term::real(0, 1));
        let offending = amount_node.unwrap_or(a);
        self.check(
            &reach,
            nonnegative,
            ctx,
            Reason::NegativePermission,
            offending,
        );
        let p = if self.modes.wildcard_amounts {
            // Some positive amount where one is written (`none` stays nothing).
            let some = self.vc.fresh("wildcard", germanium_smt::Sort::Real);
            self.vc.witness_value(&some);
            self.vc.fact(Term::gt(some.clone(), Term::real(0, 1)));
            let positive = Term::gt(p, Term::real(0, 1));
            Term::ite(positive, some, Term::real(0, 1))
        } else {
            p
        };
        let mask = st.memory.mask[&map].clone();
        let before = Term::select(mask.clone(), index.clone());
        let now = Term::add(vec![before.clone(), p.clone()]);
        let updated = self
            .vc
            .define(&format!("M_{map}"), Term::store(mask, index.clone(), now));
        if self.modes.fresh_on_inhale {
            let heap = st.memory.heap[&map].clone();
            let sort = match heap.sort().array_parts() {
                Some((_, value)) => value.clone(),
                None => return unsupported(a.span, "this location"),
            };
            let value = self.vc.fresh("v", sort);
            self.vc.witness_value(&value);
            let kept = Term::ite(
                Term::gt(before, Term::real(0, 1)),
                Term::select(heap.clone(), index.clone()),
                value,
            );
            let heap = self
                .vc
                .define(&format!("H_{map}"), Term::store(heap, index.clone(), kept));
            st.memory.heap.insert(map.clone(), heap);
        }
        if map.starts_with("wand%") {
            // An instance inhaled has footprint values of its own (not another's).
            let frame = self.vc.fresh("wand", self.t.frames.sort.clone());
            let heap = Term::store(st.memory.heap[&map].clone(), index.clone(), frame);
            let heap = self.vc.define(&format!("H_{map}"), heap);
            st.memory.heap.insert(map.clone(), heap);
        }
        let facts = if field {
            Term::and([
                Term::implies(
                    Term::gt(p, Term::real(0, 1)),
                    Term::not(Term::eq(index.clone(), self.t.theories.null())),
                ),
                Term::le(Term::select(updated.clone(), index), Term::real(1, 1)),
            ])
        } else {
            Term::tt()
        };
        st.memory.mask.insert(map, updated);
        st.reach = self.vc.assume(&st.reach, facts);
        Ok(())
    }

    /// Inhales a contract's clauses (checking that they are well-formed in `ctx`). Where
    /// one has inhale and exhale parts, the clauses with their exhale parts are checked too,
    /// on a path of their own from the same state.
    pub fn inhale_contract(
        &mut self,
        st: &mut State,
        clauses: &[Expr],
        ctx: &ErrorContext,
    ) -> R<()> {
        if clauses.iter().any(has_inhale_exhale) {
            let mut side = st.clone();
            self.side_path(&st.reach, |l, reach| {
                side.reach = reach;
                l.with_modes(
                    |m| m.exhale_parts = true,
                    |l| {
                        clauses
                            .iter()
                            .try_for_each(|c| l.inhale(&mut side, c, &ctx.for_clause(c)))
                    },
                )
            })?;
        }
        for c in clauses {
            self.inhale(st, c, &ctx.for_clause(c))?;
        }
        Ok(())
    }

    /// Checks and takes `a` from `st` (expressions read in `st` as it was before), then
    /// havocs what no permission holds any more. With `keep`, nothing is taken (`assert`).
    pub fn exhale(&mut self, st: &mut State, a: &Expr, ctx: &ErrorContext, keep: bool) -> R<()> {
        self.exhale_all(st, &[(a, ctx.clone())], keep)
    }

    /// Exhales the clauses as one assertion (each with its error context): all read the
    /// state before the exhale, and the heap is havocked once, after the last.
    pub fn exhale_all(
        &mut self,
        st: &mut State,
        clauses: &[(&Expr, ErrorContext)],
        keep: bool,
    ) -> R<()> {
        if keep {
            let mut taking = st.clone();
            let mark = self.extracted_so_far();
            self.take_all(&mut taking, clauses)?;
            st.reach = taking.reach;
            // Inside a package, what the assertion extracted stays with the witnesses.
            self.add_extracted(st, mark);
            return Ok(());
        }
        for map in self.take_all(st, clauses)? {
            self.havoc_unheld(&mut st.memory, &map);
        }
        Ok(())
    }

    /// Checks and takes the clauses from `st`, reading the state before; returns the maps
    /// whose permissions changed (the heap is not havocked: `apply` adds to them first).
    pub fn take_all(
        &mut self,
        st: &mut State,
        clauses: &[(&Expr, ErrorContext)],
    ) -> R<Vec<String>> {
        let before = st.clone();
        let outer = self.perm_masks.take();
        self.entering_exhale();
        let taken = (|| -> R<()> {
            for (a, ctx) in clauses {
                self.take(&before, st, a, ctx, Taking::Checked)?;
            }
            Ok(())
        })();
        self.leaving_exhale();
        self.perm_masks = outer;
        taken?;
        Ok(st
            .memory
            .mask
            .iter()
            .filter(|(f, m)| before.memory.mask.get(*f) != Some(*m))
            .map(|(f, _)| f.clone())
            .collect())
    }

    /// A fresh heap map for `name` (a field or predicate), equal to the old one wherever
    /// permission is held. Not inside a package: its statements are ghost code, and what
    /// its witnesses do not hold keeps the values of the state around.
    pub fn havoc_unheld(&mut self, memory: &mut Memory, name: &str) {
        if !self.in_package() {
            self.fresh_where_unheld(memory, name);
        }
    }

    /// A fresh heap map for `name` equal to the old one wherever permission is held (also
    /// inside a package: the values of locations a body or a left-hand side adds).
    pub fn fresh_where_unheld(&mut self, memory: &mut Memory, name: &str) {
        let old = memory.heap[name].clone();
        let mask = memory.mask[name].clone();
        let index = match old.sort().array_parts() {
            Some((index, _)) => index.clone(),
            None => self.t.reference.clone(),
        };
        let new = self.vc.fresh(&format!("H_{name}"), old.sort().clone());
        self.vc.witness_value(&new);
        let r = Term::var(Symbol::user("r"), index.clone());
        let read = Term::select(new.clone(), r.clone());
        self.vc.fact(Term::forall(
            vec![(Symbol::user("r"), index)],
            Term::implies(
                Term::gt(Term::select(mask, r.clone()), Term::real(0, 1)),
                Term::eq(read.clone(), Term::select(old, r)),
            ),
            vec![vec![read]],
        ));
        memory.heap.insert(name.to_string(), new);
    }

    /// Takes `a` from `st` (reading `eval`): its amounts and facts checked, or (`Assumed`,
    /// for an impure `assume`) assumed.
    fn take(
        &mut self,
        eval: &State,
        st: &mut State,
        a: &Expr,
        ctx: &ErrorContext,
        how: Taking,
    ) -> R<()> {
        // Evaluation sees the path as it is now (earlier parts were assumed after their
        // check), reads the heap as it was, and `perm` sees what is left.
        let view = State {
            reach: st.reach.clone(),
            ..self.with_extracted(eval)
        };
        self.perm_masks = Some(st.memory.mask.clone());
        if !is_impure(self.t.sem, a) {
            let reach = st.reach.clone();
            if how == Taking::Checked && forall_unfolding(a) {
                // Checked at fresh values of its variables (true there iff true for all),
                // where what an `unfolding` assumes holds of those values; assumed closed.
                let at_fresh = self.forall_at_fresh_values(&view, &reach, a, ctx)?;
                self.check(&reach, at_fresh, ctx, Reason::AssertionFalse, a);
                let t = self.leniently(|l| l.expr(&view, &reach, a, ctx))?;
                st.reach = self.vc.assume(&st.reach, t);
                return Ok(());
            }
            let t = self.expr(&view, &reach, a, ctx)?;
            if how == Taking::Checked {
                self.check(&reach, t.clone(), ctx, Reason::AssertionFalse, a);
            }
            st.reach = self.vc.assume(&st.reach, t);
            return Ok(());
        }
        match &a.kind {
            ExprKind::Ascribed(x, _) | ExprKind::Annotated(_, x) => {
                self.take(eval, st, x, ctx, how)
            }
            // An impure `assume` inhales: its inhale part.
            ExprKind::InhaleExhale(x, y) => {
                let part = if how == Taking::Assumed { x } else { y };
                self.take(eval, st, part, ctx, how)
            }
            ExprKind::Binary(BinaryOp::And, x, y) => {
                self.take(eval, st, x, ctx, how)?;
                self.take(eval, st, y, ctx, how)
            }
            ExprKind::Binary(BinaryOp::Implies, c, x) => {
                let reach = st.reach.clone();
                let c = self.expr(&view, &reach, c, ctx)?;
                self.branch(st, c, |l, s| l.take(eval, s, x, ctx, how), |_, _| Ok(()))
            }
            ExprKind::Cond(c, x, y) => {
                let reach = st.reach.clone();
                let c = self.expr(&view, &reach, c, ctx)?;
                self.branch(
                    st,
                    c,
                    |l, s| l.take(eval, s, x, ctx, how),
                    |l, s| l.take(eval, s, y, ctx, how),
                )
            }
            ExprKind::Quantifier { .. } => self.take_quantified(eval, st, a, ctx, how),
            ExprKind::Let(_, value, body) => {
                let reach = st.reach.clone();
                let v = self.expr(&view, &reach, value, ctx)?;
                let Some(var) = self.t.sem.binders.get(&(a.id, 0)).copied() else {
                    return unsupported(a.span, "this `let`");
                };
                let mut inner = eval.clone();
                inner.store.insert(var, v.clone());
                let saved = st.store.insert(var, v);
                let r = self.take(&inner, st, body, ctx, how);
                restore(st, var, saved);
                r
            }
            _ => {
                let Some(held) = self.resource(&view, a, ctx)? else {
                    return unsupported(a.span, "this assertion (quantifiers, wands)");
                };
                let offending = held.amount_node.unwrap_or(a);
                let (map, index, p) = (held.map, held.index, held.amount);
                if how == Taking::Checked && !held.wildcard {
                    self.extract(st, &map, &index, &p, held.field)?;
                }
                let reach = st.reach.clone();
                let mask = st.memory.mask[&map].clone();
                let amount_held = Term::select(mask.clone(), index.clone());
                let nonnegative = Term::ge(p.clone(), Term::real(0, 1));
                // Inside a function every amount is a wildcard.
                let (p, wildcard) = if !held.wildcard && self.verifying_function.is_some() {
                    let some = self.some_amount();
                    let positive = Term::gt(p, Term::real(0, 1));
                    (Term::ite(positive, some, Term::real(0, 1)), true)
                } else {
                    (p, held.wildcard)
                };
                let enough = if wildcard {
                    // Less than what is held, where some is.
                    let less = Term::implies(
                        Term::gt(p.clone(), Term::real(0, 1)),
                        Term::lt(p.clone(), amount_held.clone()),
                    );
                    st.reach = self.vc.assume(&st.reach, less);
                    Term::implies(
                        Term::gt(p.clone(), Term::real(0, 1)),
                        Term::gt(amount_held.clone(), Term::real(0, 1)),
                    )
                } else {
                    Term::ge(amount_held.clone(), p.clone())
                };
                match how {
                    Taking::Checked => {
                        let negative = Reason::NegativePermission;
                        self.check(&reach, nonnegative, ctx, negative, offending);
                        let missing = self.missing_reason(&map);
                        self.check(&reach, enough, ctx, missing, held.node);
                    }
                    Taking::Assumed => {
                        let somewhere = if held.field {
                            Term::implies(
                                Term::gt(p.clone(), Term::real(0, 1)),
                                Term::not(Term::eq(index.clone(), self.t.theories.null())),
                            )
                        } else {
                            Term::tt()
                        };
                        let facts = Term::and([nonnegative, enough, somewhere]);
                        st.reach = self.vc.assume(&st.reach, facts);
                    }
                }
                let updated = self.vc.define(
                    &format!("M_{map}"),
                    Term::store(mask, index, Term::sub(amount_held, p)),
                );
                st.memory.mask.insert(map, updated);
                Ok(())
            }
        }
    }

    /// Where `a` holds permission, if it is `acc` of a field or a predicate instance: the
    /// map, the index in it and the amount (times `scale`).
    pub fn resource<'x>(
        &mut self,
        st: &State,
        a: &'x Expr,
        ctx: &ErrorContext,
    ) -> R<Option<Held<'x>>> {
        let reach = st.reach.clone();
        let located = match self.modes.receivers_in.clone() {
            Some((also, maps)) => self.with_also_held(st, &also, &maps),
            None => st.clone(),
        };
        let (held, amount_node) = if let Some(pa) = crate::predicates::access(self.t.sem, a) {
            let index = self.instance(&located, &reach, &pa, ctx)?;
            let held = Held {
                map: pa.name.clone(),
                index,
                amount: Term::real(1, 1),
                field: false,
                node: pa.call,
                amount_node: pa.amount,
                wildcard: false,
            };
            (held, pa.amount)
        } else if let Some((wand, amount)) = wand_access(a) {
            let (map, index) = self.wand_location(st, &reach, wand, ctx)?;
            let held = Held {
                map,
                index,
                amount: Term::real(1, 1),
                field: false,
                node: a,
                amount_node: amount,
                wildcard: false,
            };
            (held, amount)
        } else if let ExprKind::Acc(loc, amount) = &a.kind {
            let ExprKind::FieldAccess(rcv, field) = &loc.kind else {
                return unsupported(loc.span, "this resource");
            };
            if !self.t.is_field(&field.name) {
                return unsupported(field.span, "this field");
            }
            let r = self.expr(&located, &reach, rcv, ctx)?;
            let held = Held {
                map: field.name.clone(),
                index: r,
                amount: Term::real(1, 1),
                field: true,
                node: loc,
                amount_node: amount.as_deref(),
                wildcard: false,
            };
            (held, amount.as_deref())
        } else {
            return Ok(None);
        };
        let mut held = held;
        match amount_node {
            Some(x) if matches!(x.kind, ExprKind::Wildcard) => {
                held.amount = self.some_amount();
                held.wildcard = true;
            }
            Some(x) => {
                let p = self.expr(st, &reach, x, ctx)?;
                held.amount = germanium_theories::operators::real(p);
            }
            None => {}
        }
        if self.modes.wildcard_take && !held.wildcard {
            // Some of what the body says, if it says some (a fold with a wildcard).
            let positive = Term::gt(held.amount.clone(), Term::real(0, 1));
            let some = self.some_amount();
            held.amount = Term::ite(positive, some, Term::real(0, 1));
            held.wildcard = true;
        } else if let Some(scale) = self.modes.scale.clone() {
            held.amount = self.product(scale, held.amount);
        }
        Ok(Some(held))
    }

    /// `st` holding also what `also` holds in `maps` (the amounts added).
    fn with_also_held(&mut self, st: &State, also: &Memory, maps: &[String]) -> State {
        let mut out = st.clone();
        for map in maps {
            let (Some(mine), Some(theirs)) = (st.memory.mask.get(map), also.mask.get(map)) else {
                continue;
            };
            let Some((index, _)) = mine.sort().array_parts() else {
                continue;
            };
            let index = index.clone();
            let sum = self.vc.fresh(&format!("M_{map}"), mine.sort().clone());
            let r = Term::var(Symbol::user("r"), index.clone());
            let at = |m: &Term| Term::select(m.clone(), r.clone());
            self.vc.fact(Term::forall(
                vec![(Symbol::user("r"), index)],
                Term::eq(at(&sum), Term::add(vec![at(mine), at(theirs)])),
                vec![vec![at(&sum)]],
            ));
            out.memory.mask.insert(map.clone(), sum);
        }
        out
    }

    /// `assume a` with permissions: what holds if `a` could be exhaled here (the amounts are
    /// held, the pure parts true), assumed, and nothing taken.
    pub fn assume_exhalable(&mut self, st: &mut State, a: &Expr, ctx: &ErrorContext) -> R<()> {
        if !is_impure(self.t.sem, a) {
            let reach = st.reach.clone();
            let t = self.expr(st, &reach, a, ctx)?;
            st.reach = self.vc.assume(&st.reach, t);
            return Ok(());
        }
        // All parts at once (`acc(x.f, 1/2) && acc(x.f, 1/2)` needs a whole permission),
        // taken from a copy: nothing is taken from the state itself.
        let mut taking = st.clone();
        let outer = self.perm_masks.take();
        let taken = self.take(st, &mut taking, a, ctx, Taking::Assumed);
        self.perm_masks = outer;
        taken?;
        st.reach = taking.reach;
        Ok(())
    }

    /// Runs `then` where `c` holds and `otherwise` where it does not, and joins the two.
    pub fn branch(
        &mut self,
        st: &mut State,
        c: Term,
        then: impl FnOnce(&mut Self, &mut State) -> R<()>,
        otherwise: impl FnOnce(&mut Self, &mut State) -> R<()>,
    ) -> R<()> {
        let mut a = st.clone();
        a.reach = self.vc.assume(&st.reach, c.clone());
        let mut b = st.clone();
        b.reach = self.vc.assume(&st.reach, Term::not(c.clone()));
        self.entering_branch(c.clone());
        let r = then(self, &mut a);
        self.leaving_branch();
        r?;
        self.entering_branch(Term::not(c.clone()));
        let r = otherwise(self, &mut b);
        self.leaving_branch();
        r?;
        *st = if self.in_package() {
            // The same for every witness where the condition is.
            crate::state::join_on(&mut self.vc, &c, &a, &b)
        } else {
            join(&mut self.vc, &a, &b)
        };
        Ok(())
    }
}

/// A `forall` whose body opens a predicate instance (`unfolding`).
fn forall_unfolding(a: &Expr) -> bool {
    let ExprKind::Quantifier {
        kind: germanium_syntax::ast::QuantifierKind::Forall,
        body,
        ..
    } = &a.kind
    else {
        return false;
    };
    let mut found = false;
    germanium_semantics::visit::walk_expr(body, &mut |x| {
        found |= matches!(x.kind, ExprKind::Unfolding(..));
    });
    found
}
