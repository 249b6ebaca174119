//! Production (inhale): adds an assertion's permissions to the heap and its pure parts to
//! the path conditions. Impure conditionals (`c ==> acc(..)`, `c ? A : B`) are produced under
//! guards: the chunk's amount is `c ? p : none`.

use germanium_semantics::FieldTarget;
use germanium_smt::Term;
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind};
use germanium_syntax::Span;

use crate::env::analysis::is_impure;
use crate::errors::ErrorContext;
use crate::rules::context::{Verifier, R};
use crate::state::{Permission, Resource, State};
use crate::trace::Step;

/// The amount a `wildcard` stands for while a function's axioms are translated: one
/// constant, positive and small at the outermost solver level, so that a precondition with a wildcard
/// does not make the axioms' premises mention a symbol of their own. A definition or
/// postcondition that mentions it (`perm` of a wildcard) is not used.
pub fn axiom_wildcard() -> germanium_smt::FunDecl {
    germanium_smt::FunDecl::constant(
        germanium_smt::Symbol::user("sx.axiom_wildcard"),
        germanium_smt::Sort::Real,
    )
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// Some positive amount, for `wildcard` (see [`axiom_wildcard`] for axioms).
    pub fn wildcard_amount(&mut self, span: Span) -> R<Term> {
        if self.modes.in_axiom {
            return Ok(Term::constant(&axiom_wildcard()));
        }
        Ok(self.some_amount(span)?.0)
    }

    pub fn produce(&mut self, st: &mut State, a: &Expr, ctx: &ErrorContext) -> R<()> {
        self.produce_from(st, a, None, ctx)
    }

    /// Produces `a` from snapshot `snap` (its shape as in `state::snapshot`): chunk values
    /// and instance snapshots are parts of it. Without one, they are fresh.
    pub fn produce_from(
        &mut self,
        st: &mut State,
        a: &Expr,
        snap: Option<Term>,
        ctx: &ErrorContext,
    ) -> R<()> {
        let view = self.view_of(st, &st.heap);
        self.traced(Step::Produce, a.span, view, String::new, |v| {
            v.produce_step(st, a, snap, ctx)
        })
    }

    fn produce_step(
        &mut self,
        st: &mut State,
        a: &Expr,
        snap: Option<Term>,
        ctx: &ErrorContext,
    ) -> R<()> {
        if let Some(pa) = self.as_predicate_access(a) {
            let heap = st.heap.clone();
            let (args, amount) = self.with_modes(
                |m| m.positive_only = false,
                |v| v.eval_predicate_access(st, &heap, &pa, ctx),
            )?;
            let amount = match amount {
                Some(p) => {
                    if let Some(x) = pa.amount {
                        self.check_amount(&p, ctx, x)?;
                    }
                    if self.modes.positive_only && !p.is_literally_none() {
                        self.some_where_positive(&p, a.span)?
                    } else {
                        p
                    }
                }
                None => Permission(self.wildcard_amount(a.span)?),
            };
            // A part of an unfolded body's snapshot gets a name of its own, so the next
            // unfold's terms do not repeat this one's.
            let snap = match snap {
                Some(s) => Some(self.name_term(s, &format!("snap.{}", pa.name), a.span)?),
                None => None,
            };
            if let Some(s) = &snap {
                self.record_unfolded_nesting(&pa.name, &args, s, amount.is_positive(), a.span)?;
            }
            let amount = amount.when(&self.guard());
            let resource = Resource::Predicate(pa.name.clone());
            return self.produce_resource(st, &resource, args, amount, snap, a.span);
        }
        match &a.kind {
            ExprKind::Binary(BinaryOp::And, l, r) if is_impure(self.env.sem, a) => {
                let (ls, rs) = match (
                    &snap,
                    is_impure(self.env.sem, l),
                    is_impure(self.env.sem, r),
                ) {
                    (Some(s), true, true) => {
                        (Some(self.env.snap.first(s)), Some(self.env.snap.second(s)))
                    }
                    (s, _, _) => (s.clone(), s.clone()),
                };
                if let (Some(s), Some(l_snap), Some(r_snap)) = (&snap, &ls, &rs) {
                    if l_snap != r_snap {
                        let whole = self.env.snap.combine(l_snap.clone(), r_snap.clone());
                        self.assume_snapshot_shape(s, whole, Term::tt(), a.span)?;
                    }
                }
                self.produce_from(st, l, ls, ctx)?;
                self.produce_from(st, r, rs, ctx)
            }
            ExprKind::Binary(BinaryOp::Implies, c, body) if is_impure(self.env.sem, body) => {
                let heap = st.heap.clone();
                let c = self.eval(st, &heap, c, ctx)?;
                self.under(c, |v| v.produce_from(st, body, snap, ctx))
            }
            ExprKind::Cond(c, x, y) if is_impure(self.env.sem, a) => {
                let heap = st.heap.clone();
                let c = self.eval(st, &heap, c, ctx)?;
                self.under(c.clone(), |v| v.produce_from(st, x, snap.clone(), ctx))?;
                self.under(Term::not(c), |v| v.produce_from(st, y, snap, ctx))
            }
            ExprKind::Let(_, value, body) if is_impure(self.env.sem, body) => {
                let heap = st.heap.clone();
                let v = self.eval(st, &heap, value, ctx)?;
                let Some(var) = self.env.sem.binders.get(&(a.id, 0)).copied() else {
                    return Err(self.unsupported(a.span, "this `let`"));
                };
                self.member.bound.push((var, v));
                let r = self.produce_from(st, body, snap, ctx);
                self.member.bound.pop();
                r
            }
            // `@reveal()` changes how its application is evaluated: left to `eval`.
            ExprKind::Annotated(a, x) if a.name.name != "reveal" => {
                self.produce_from(st, x, snap, ctx)
            }
            ExprKind::InhaleExhale(x, y) => {
                let part = if self.modes.exhale_parts { y } else { x };
                self.produce_from(st, part, snap, ctx)
            }
            ExprKind::Acc(loc, amount) => self.produce_acc(st, loc, amount.as_deref(), snap, ctx),
            ExprKind::Binary(BinaryOp::Wand, ..) => self.produce_wand(st, a, snap, ctx),
            ExprKind::Quantifier { .. } if is_impure(self.env.sem, a) => {
                self.produce_quantified(st, a, snap, ctx)
            }
            _ if is_impure(self.env.sem, a) => Err(self.unsupported_assertion(a)),
            // `[a, b]` under pure operators (`[a, b] || c`): read the whole expression.
            _ if crate::rules::inhale_exhale::contains_inhale_exhale(a) => {
                let part = if self.modes.exhale_parts {
                    crate::rules::inhale_exhale::Part::Exhale
                } else {
                    crate::rules::inhale_exhale::Part::Inhale
                };
                let read = crate::rules::inhale_exhale::reading(a, part).into_owned();
                self.produce_from(st, &read, snap, ctx)
            }
            _ => {
                let heap = st.heap.clone();
                let t = self.eval(st, &heap, a, ctx)?;
                self.assume_guarded(t, a.span)
            }
        }
    }

    /// When an unfold produces a predicate body from the instance's snapshot: the snapshot
    /// is made of its parts (`whole`), as the snapshot a fold builds is. Without this, two
    /// instances whose parts are equal could have different snapshots (and functions of
    /// them different values). Holds when `held` (and the current guards) do. Not assumed
    /// for function preconditions, whose path conditions become axiom premises.
    fn assume_snapshot_shape(&mut self, s: &Term, whole: Term, held: Term, span: Span) -> R<()> {
        if self.member.body_unfold_depth == 0 || self.modes.in_axiom {
            return Ok(());
        }
        let fact = Term::implies(held, Term::eq(s.clone(), whole));
        self.assume_guarded(fact, span)
    }

    /// An amount produced must not be negative; checked also in the body an unfold
    /// produces (see `body_amounts_checked`).
    fn check_amount(&mut self, p: &Permission, ctx: &ErrorContext, x: &Expr) -> R<()> {
        if self.modes.checking || !self.modes.body_amounts_checked {
            self.check_not_negative(p, ctx, x)?;
            return Ok(());
        }
        self.with_modes(|m| m.checking = true, |v| v.check_not_negative(p, ctx, x))
            .map(|_| ())
    }

    /// The unsupported-feature error for an impure assertion Germanium cannot handle.
    pub fn unsupported_assertion(&mut self, a: &Expr) -> crate::rules::context::Abort {
        let what = match &a.kind {
            ExprKind::Call(..) => "predicates",
            ExprKind::Binary(BinaryOp::Wand, ..) => "magic wands",
            ExprKind::Quantifier { .. } => "quantified permissions",
            ExprKind::Unfolding(..) => "`unfolding` (predicates)",
            ExprKind::Applying(..) => "`applying` (magic wands)",
            _ => "this assertion",
        };
        self.unsupported(a.span, what)
    }

    /// The field and receiver expression of a location `e.f`, or unsupported.
    pub fn field_location<'x>(&mut self, loc: &'x Expr) -> R<(String, &'x Expr)> {
        if let ExprKind::FieldAccess(rcv, _) = &loc.kind {
            if let Some(FieldTarget::Field(f)) = self.env.sem.field_access(loc.id) {
                return Ok((f.clone(), rcv));
            }
        }
        Err(self.unsupported_assertion_kind(loc))
    }

    fn unsupported_assertion_kind(&mut self, loc: &Expr) -> crate::rules::context::Abort {
        match &loc.kind {
            ExprKind::Call(..) => self.unsupported(loc.span, "predicates"),
            ExprKind::Binary(BinaryOp::Wand, ..) => self.unsupported(loc.span, "magic wands"),
            _ => self.unsupported(loc.span, "this resource"),
        }
    }

    fn produce_acc(
        &mut self,
        st: &mut State,
        loc: &Expr,
        amount: Option<&Expr>,
        snap: Option<Term>,
        ctx: &ErrorContext,
    ) -> R<()> {
        let (field, rcv) = self.field_location(loc)?;
        let heap = st.heap.clone();
        let r = self.as_receiver(|v| v.eval(st, &heap, rcv, ctx))?;
        let p = match amount {
            None => Permission::write(),
            Some(x) => {
                let p = Permission::of(self.eval(st, &heap, x, ctx)?);
                if !crate::rules::read_permissions::is_wildcard(x) {
                    self.check_amount(&p, ctx, x)?;
                }
                p
            }
        };
        let p = if self.modes.positive_only && !p.is_literally_none() {
            self.some_where_positive(&p, loc.span)?
        } else {
            self.scaled(p)
        };
        let guard = self.guard();
        let not_null = Term::not(Term::eq(r.clone(), self.env.null()));
        self.assume(
            Term::implies(Term::and([guard.clone(), p.is_positive()]), not_null),
            loc.span,
        )?;
        let value = match snap {
            Some(s) => {
                let ty = self.env.sem.fields.get(&field).map(|f| f.ty.clone());
                let Some(ty) = ty else {
                    return Err(self.unsupported(loc.span, "an unknown field"));
                };
                let sort = self.sort_of(&ty, loc.span)?;
                let value = self.unwrap(s.clone(), &sort, loc.span)?;
                let wrapped = self.wrap(value.clone(), loc.span)?;
                self.assume_snapshot_shape(&s, wrapped, p.is_positive(), loc.span)?;
                // Named, so a receiver read from it is the same term in every chunk.
                Some(self.name_term(value, &field, loc.span)?)
            }
            None => None,
        };
        let resource = Resource::Field(field);
        self.produce_resource(st, &resource, vec![r], p.when(&guard), value, loc.span)
    }

    /// Adds `amount` to `receiver.field`, merging with a chunk for the same location.
    pub fn add_field_chunk(
        &mut self,
        st: &mut State,
        field: &str,
        receiver: Term,
        amount: Permission,
        loc: &Expr,
    ) -> R<()> {
        let resource = Resource::Field(field.to_string());
        self.produce_resource(st, &resource, vec![receiver], amount, None, loc.span)
    }
}
