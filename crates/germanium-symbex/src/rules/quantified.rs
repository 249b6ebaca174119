//! Quantified field permissions, `forall x :: c(x) ==> acc(e(x).f, p(x))`, produced and
//! consumed as quantified chunks (see `resources::location`).
//!
//! Each is read at a fresh constant standing for `x` (so well-definedness is checked for
//! an arbitrary `x`), then turned into terms over a bound variable. The amount held of a
//! location `r` is `p(inv(r))` where `c(inv(r))` and `e(inv(r)) == r`, with `inv` an
//! inverse of the receiver, `c(x) && p(x) > 0 ==> inv(e(x)) == x`, assumed once the
//! receiver is checked injective where the amount is positive (`qp.not.injective`). Consuming checks the amount at an arbitrary location (a fresh
//! constant `r`) against what all chunks of the field hold there, then takes it from them
//! in order. Values at the locations are a fresh function of the receiver (a value map).
//!
//! Not yet: more than one bound variable with a receiver other than a variable, predicates,
//! quantified permissions in functions, predicate bodies and `fold`/`unfold`, snapshots of
//! quantified assertions; those are `internal:feature.unsupported`.

use std::collections::HashMap;

use germanium_smt::{substitute, FunDecl, Sort, Symbol, Term};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind};

use crate::errors::{ErrorContext, Reason};
use crate::resources;
use crate::rules::context::{Abort, Verifier, R};
use crate::rules::triggers;
use crate::state::{Heap, Permission, Resource, State};

/// One `c ==> acc(e.f, p)` under the quantifier, read at the fresh constants `at` and as
/// terms over the bound variables `vars`.
struct Access<'x> {
    field: String,
    loc: &'x Expr,
    amount_expr: Option<&'x Expr>,
    vars: Vec<(Symbol, Sort)>,
    at: Vec<Term>,
    cond: Term,
    receiver: Term,
    amount: Permission,
    triggers: Vec<Vec<Term>>,
}

impl Access<'_> {
    fn to_vars(&self, t: &Term) -> Term {
        let map: HashMap<Term, Term> = self
            .at
            .iter()
            .cloned()
            .zip(
                self.vars
                    .iter()
                    .map(|(v, s)| Term::var(v.clone(), s.clone())),
            )
            .collect();
        substitute(t, &map)
    }

    /// `t` (over the fresh constants) with other constants in their place.
    fn renamed(&self, t: &Term, others: &[Term]) -> Term {
        let map: HashMap<Term, Term> = self
            .at
            .iter()
            .cloned()
            .zip(others.iter().cloned())
            .collect();
        substitute(t, &map)
    }

    /// The receiver is the (only) bound variable itself.
    fn identity(&self) -> bool {
        self.at.len() == 1 && self.receiver == self.at[0]
    }
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// Whether a quantified assertion can be handled here (see the module documentation).
    fn quantified_supported(&mut self, e: &Expr, snap: &Option<Term>) -> R<()> {
        let unsupported = snap.is_some()
            || self.modes.in_axiom
            || self.modes.perm_scale.is_some()
            || self.modes.positive_only
            || self.modes.assuming
            || self.modes.current_function.is_some();
        if unsupported {
            return Err(self.unsupported(e.span, "quantified permissions here"));
        }
        Ok(())
    }

    /// Produces `forall ... :: c ==> acc(e.f, p)` (the quantifier `e`).
    pub(crate) fn produce_quantified(
        &mut self,
        st: &mut State,
        e: &Expr,
        snap: Option<Term>,
        ctx: &ErrorContext,
    ) -> R<()> {
        self.quantified_supported(e, &snap)?;
        let heap = st.heap.clone();
        for access in self.quantified_accesses(st, &heap, e, ctx)? {
            self.check_quantified(&access, e, ctx)?;
            let (r, held) = self.held_map(&access, e)?;
            let value_map = FunDecl::new(
                self.decider.fresh_symbol(&format!("qv.{}", access.field)),
                vec![self.env.null().sort().clone()],
                self.field_sort(&access.field, e)?,
            );
            self.ensure_declared(&value_map, e.span)?;
            let var = Term::var(r.clone(), self.env.null().sort().clone());
            resources::add_quantified(
                &mut st.heap,
                &Resource::Field(access.field.clone()),
                (r, self.env.null().sort().clone()),
                Term::app(&value_map, vec![var]),
                held,
            );
        }
        Ok(())
    }

    /// Consumes `forall ... :: c ==> acc(e.f, p)` (the quantifier `e`) from `st`.
    pub(crate) fn consume_quantified(
        &mut self,
        st: &mut State,
        eval_heap: &Heap,
        e: &Expr,
        ctx: &ErrorContext,
    ) -> R<()> {
        self.quantified_supported(e, &None)?;
        for access in self.quantified_accesses(st, eval_heap, e, ctx)? {
            self.check_quantified(&access, e, ctx)?;
            let (r, needed) = self.held_map(&access, e)?;
            let resource = Resource::Field(access.field.clone());
            let sort = self.env.null().sort().clone();
            // What is needed at an arbitrary location, against what is held there.
            let somewhere = self.fresh("r", sort.clone(), e.span)?;
            let at = |t: &Term| {
                let var = Term::var(r.clone(), sort.clone());
                substitute(t, &[(var, somewhere.clone())].into_iter().collect())
            };
            let total = resources::perm_of(&st.heap, &resource, std::slice::from_ref(&somewhere));
            let enough = Permission(at(&needed.0)).at_most(&total);
            if self.modes.checking && !self.prove(enough, e.span)? && !self.dead_path(e.span)? {
                self.report(ctx, Reason::InsufficientPermission, access.loc);
                return Err(Abort::Failed);
            }
            resources::take_quantified(
                &mut self.decider,
                &mut st.heap,
                &resource,
                (r, sort),
                &needed,
            )
            .map_err(|err| self.solver_failed(err, e.span))?;
        }
        Ok(())
    }

    /// The parts `c ==> acc(e.f, p)` of the quantifier `e`, read in `heap`.
    fn quantified_accesses<'x>(
        &mut self,
        st: &State,
        heap: &Heap,
        e: &'x Expr,
        ctx: &ErrorContext,
    ) -> R<Vec<Access<'x>>> {
        let ExprKind::Quantifier {
            vars: declared,
            triggers: given,
            body,
            ..
        } = &e.kind
        else {
            return Err(self.unsupported(e.span, "quantified permissions"));
        };
        let mut vars = Vec::new();
        let mut at = Vec::new();
        let mut bound = Vec::new();
        for i in 0..declared.len() {
            let Some(var) = self.env.sem.binders.get(&(e.id, i)).copied() else {
                return Err(self.unsupported(e.span, "this quantifier"));
            };
            let info = self.env.sem.var(var).clone();
            let sort = self.sort_of(&info.ty, e.span)?;
            at.push(self.fresh(&info.name, sort.clone(), e.span)?);
            vars.push((
                self.decider.fresh_symbol(&format!("sx.q.{}", info.name)),
                sort,
            ));
            bound.push(var);
        }
        let mut parts = Vec::new();
        split_accesses(body, Vec::new(), &mut parts);
        let bindings: Vec<_> = bound.into_iter().zip(at.iter().cloned()).collect();
        let depth = self.member.bound.len();
        self.member.bound.extend(bindings.iter().cloned());
        self.member.quantifier_depth += 1;
        let read = (|| -> R<Vec<Access<'x>>> {
            let mut out = Vec::new();
            for (conds, acc) in parts {
                let ExprKind::Acc(loc, amount) = &acc.kind else {
                    return Err(self.unsupported(acc.span, "this quantified permission"));
                };
                let (field, rcv) = self.field_location(loc)?;
                let mut cond = self.guard();
                for c in conds {
                    let t = self.under(cond.clone(), |v| v.eval(st, heap, c, ctx))?;
                    cond = Term::and([cond, t]);
                }
                let receiver = self.under(cond.clone(), |v| v.eval(st, heap, rcv, ctx))?;
                let amount = match amount.as_deref() {
                    None => Permission::write(),
                    Some(x) if matches!(x.kind, ExprKind::Wildcard) => {
                        return Err(self.unsupported(x.span, "a quantified `wildcard`"));
                    }
                    Some(x) => {
                        Permission::of(self.under(cond.clone(), |v| v.eval(st, heap, x, ctx))?)
                    }
                };
                out.push(Access {
                    field,
                    loc,
                    amount_expr: amount_expr(acc),
                    vars: vars.clone(),
                    at: at.clone(),
                    cond,
                    receiver,
                    amount,
                    triggers: Vec::new(),
                });
            }
            Ok(out)
        })();
        self.member.quantifier_depth -= 1;
        self.member.bound.truncate(depth);
        let mut accesses = read?;
        // The program's triggers, read like the receiver (over the fresh constants).
        let mut sets = Vec::new();
        self.member.bound.extend(bindings);
        for set in given {
            let terms: Vec<Term> = set
                .exprs
                .iter()
                .filter_map(|x| {
                    self.with_modes(|m| m.checking = false, |v| v.eval(st, heap, x, ctx))
                        .ok()
                })
                .collect();
            if terms.len() == set.exprs.len() {
                sets.push(terms);
            }
        }
        self.member.bound.truncate(depth);
        for access in &mut accesses {
            access.triggers = sets
                .iter()
                .map(|set| set.iter().map(|t| access.to_vars(t)).collect())
                .collect();
        }
        Ok(accesses)
    }

    /// The checks of a quantified permission: amounts not negative, receivers not null and
    /// injective where the amount is positive.
    fn check_quantified(&mut self, access: &Access, e: &Expr, ctx: &ErrorContext) -> R<()> {
        let (c, p, rcv) = (&access.cond, &access.amount, &access.receiver);
        let offending = access.amount_expr.unwrap_or(access.loc);
        self.check(
            Term::implies(c.clone(), p.is_non_negative()),
            ctx,
            Reason::NegativePermission,
            offending,
        )?;
        if access.identity() {
            return Ok(());
        }
        let mut others = Vec::new();
        for (_, sort) in &access.vars {
            others.push(self.fresh("q", sort.clone(), e.span)?);
        }
        let both = Term::and([
            Term::not(Term::and(
                access
                    .at
                    .iter()
                    .zip(&others)
                    .map(|(a, b)| Term::eq(a.clone(), b.clone())),
            )),
            c.clone(),
            access.renamed(c, &others),
            p.is_positive(),
            Permission(access.renamed(&p.0, &others)).is_positive(),
        ]);
        let distinct = Term::not(Term::eq(rcv.clone(), access.renamed(rcv, &others)));
        self.check(
            Term::implies(both, distinct),
            ctx,
            Reason::NotInjective,
            access.loc,
        )?;
        Ok(())
    }

    /// The amount the access holds of each location, over a fresh variable `r`, with the
    /// facts about its inverse assumed (and receivers not null where held).
    fn held_map(&mut self, access: &Access, e: &Expr) -> R<(Symbol, Permission)> {
        let reference = self.env.null().sort().clone();
        let r = self.decider.fresh_symbol("sx.q.r");
        let r_var = Term::var(r.clone(), reference.clone());
        let x = |t: &Term| access.to_vars(t);
        let (c, p, rcv) = (x(&access.cond), x(&access.amount.0), x(&access.receiver));
        let positive = Term::and([c.clone(), Permission(p.clone()).is_positive()]);
        let not_null = Term::not(Term::eq(rcv.clone(), self.env.null()));
        let symbols: Vec<Symbol> = access.vars.iter().map(|(v, _)| v.clone()).collect();
        let mut patterns = access.triggers.clone();
        if access.identity() {
            // No inverse needed: the location is the variable. (A state holding some of
            // `null.f` is infeasible, so nothing is lost where `c(null)` holds.)
            if patterns.is_empty() {
                patterns = triggers::infer(&symbols, &c);
            }
            if !patterns.is_empty() {
                let fact = Term::implies(positive.clone(), not_null);
                self.assume(Term::forall(access.vars.clone(), fact, patterns), e.span)?;
            }
            let map: HashMap<Term, Term> = [(rcv.clone(), r_var.clone())].into_iter().collect();
            let at_r = |t: &Term| substitute(t, &map);
            let held = Term::ite(at_r(&c), at_r(&p), Permission::none().0);
            return Ok((r, Permission(held)));
        }
        let [(_, var_sort)] = access.vars.as_slice() else {
            return Err(self.unsupported(e.span, "quantified permissions over several variables"));
        };
        let inverse = FunDecl::new(
            self.decider.fresh_symbol(&format!("inv.{}", access.field)),
            vec![reference.clone()],
            var_sort.clone(),
        );
        self.ensure_declared(&inverse, e.span)?;
        let var = Term::var(access.vars[0].0.clone(), var_sort.clone());
        if patterns.is_empty() {
            patterns = triggers::infer(&symbols, &rcv);
        }
        if patterns.is_empty() {
            return Err(self.unsupported(e.span, "a quantified permission without triggers"));
        }
        let inv_of_rcv = Term::app(&inverse, vec![rcv.clone()]);
        let forward = Term::forall(
            access.vars.clone(),
            Term::implies(
                positive.clone(),
                Term::and([Term::eq(inv_of_rcv, var.clone()), not_null]),
            ),
            patterns,
        );
        let inv_r = Term::app(&inverse, vec![r_var.clone()]);
        let back_map: HashMap<Term, Term> = [(var, inv_r)].into_iter().collect();
        let back = |t: &Term| substitute(t, &back_map);
        self.assume(forward, e.span)?;
        // Held at `r` only where `r` is the receiver at `inv(r)`: the inverse says nothing
        // of locations that are no receiver.
        let image = Term::eq(back(&rcv), r_var.clone());
        let held = Term::ite(Term::and([back(&c), image]), back(&p), Permission::none().0);
        Ok((r, Permission(held)))
    }

    fn field_sort(&mut self, field: &str, e: &Expr) -> R<Sort> {
        let ty = self.env.sem.fields.get(field).map(|f| f.ty.clone());
        let Some(ty) = ty else {
            return Err(self.unsupported(e.span, "an unknown field"));
        };
        self.sort_of(&ty, e.span)
    }
}

/// The amount expression of `acc(loc, p)`, if written.
fn amount_expr(acc: &Expr) -> Option<&Expr> {
    match &acc.kind {
        ExprKind::Acc(_, Some(p)) => Some(p),
        _ => None,
    }
}

/// Splits a quantifier's body into its accessibility predicates, each with the conditions
/// (left of `==>`) it is under.
fn split_accesses<'x>(
    body: &'x Expr,
    conds: Vec<&'x Expr>,
    out: &mut Vec<(Vec<&'x Expr>, &'x Expr)>,
) {
    match &body.kind {
        ExprKind::Binary(BinaryOp::Implies, c, rest) => {
            let mut more = conds;
            more.push(c);
            split_accesses(rest, more, out);
        }
        ExprKind::Binary(BinaryOp::And, l, r) => {
            split_accesses(l, conds.clone(), out);
            split_accesses(r, conds, out);
        }
        _ => out.push((conds, body)),
    }
}
