//! Reading an assertion's snapshot off the heap: the values of the locations and the
//! snapshots of the predicate instances it requires, combined in the assertion's static
//! shape (see `state::snapshot`). Used for function applications (the function's value
//! depends on exactly this) and for `fold` (the new instance's snapshot).

use germanium_smt::Term;
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind};

use crate::env::analysis::is_impure;
use crate::errors::ErrorContext;
use crate::resources;
use crate::rules::context::{Abort, Verifier, R};
use crate::state::{Heap, Permission, Resource, State};

impl<'e, 'a> Verifier<'e, 'a> {
    /// The snapshot of the permissions `a` requires, read from `heap` (`None`: `a` is pure).
    /// Nothing is checked; what cannot be read becomes an unknown snapshot.
    pub fn assertion_snapshot(&mut self, st: &State, heap: &Heap, a: &Expr) -> R<Option<Term>> {
        Ok(self.snapshot_collecting(st, heap, a, false)?.0)
    }

    /// The snapshot of a predicate body `a` a fold reads, with the instances found in it:
    /// their `sx.Inst` terms, snapshots and the conditions under which they are held (for
    /// `nesting`).
    pub fn fold_snapshot(
        &mut self,
        st: &State,
        heap: &Heap,
        a: &Expr,
    ) -> R<crate::rules::nesting::FoldSnapshot> {
        self.snapshot_collecting(st, heap, a, true)
    }

    /// Reads the snapshot; collects the instances found only if `collect` (a function
    /// application while the arguments are evaluated reads its own snapshot, not collected).
    fn snapshot_collecting(
        &mut self,
        st: &State,
        heap: &Heap,
        a: &Expr,
        collect: bool,
    ) -> R<crate::rules::nesting::FoldSnapshot> {
        let saved = std::mem::replace(&mut self.nesting.found, collect.then(Vec::new));
        let r = self.snapshot_reading(st, heap, a);
        let found = std::mem::replace(&mut self.nesting.found, saved).unwrap_or_default();
        Ok((r?, found))
    }

    fn snapshot_reading(&mut self, st: &State, heap: &Heap, a: &Expr) -> R<Option<Term>> {
        if !is_impure(self.env.sem, a) {
            return Ok(None);
        }
        let ctx = ErrorContext::at("application.precondition", a.span, "");
        let result = self.with_modes(|m| m.checking = false, |v| v.snapshot_of(st, heap, a, &ctx));
        match result {
            Ok(t) => Ok(t),
            // Could not read it: an unknown snapshot is always sound.
            Err(Abort::Failed) => Ok(Some(self.fresh(
                "snap",
                self.env.snap.sort.clone(),
                a.span,
            )?)),
            Err(other) => Err(other),
        }
    }

    /// The snapshot of `a` where `cond` holds. On a branch the path rules out (e.g. the
    /// instance `P(x.next)` of `x.next != null ==> P(x.next)` when `x.next` is null) nothing
    /// is held: the snapshot is the unit (`None`), which is what the guarded part reads as.
    fn snapshot_under(
        &mut self,
        st: &State,
        heap: &Heap,
        cond: Term,
        a: &Expr,
        ctx: &ErrorContext,
    ) -> R<Option<Term>> {
        self.under(cond, |v| match v.snapshot_of(st, heap, a, ctx) {
            Err(Abort::Failed) if v.dead_path(a.span)? => Ok(None),
            other => other,
        })
    }

    fn snapshot_of(
        &mut self,
        st: &State,
        heap: &Heap,
        a: &Expr,
        ctx: &ErrorContext,
    ) -> R<Option<Term>> {
        if !is_impure(self.env.sem, a) {
            return Ok(None);
        }
        let unit = self.env.snap.unit();
        if let Some(pa) = self.as_predicate_access(a) {
            let (args, amount) = self.eval_predicate_access(st, heap, &pa, ctx)?;
            let resource = Resource::Predicate(pa.name.clone());
            let snap = match self.find(heap, &resource, &args, a.span)? {
                Some(i) => self.value_through(heap, i, &resource, &args, a.span)?,
                None if resources::holds_quantified(heap, Some(&resource)) => {
                    self.read_value(heap, &resource, &args, a.span)?
                }
                None => return Err(Abort::Failed),
            };
            let held = amount.map_or(Term::tt(), |p| p.is_positive());
            if self.nesting.found.is_some() {
                if let Some(inst) = self.instance(&pa.name, &args) {
                    let when = Term::and([self.guard(), held.clone()]);
                    self.nesting.found.get_or_insert_with(Vec::new).push((
                        inst,
                        snap.clone(),
                        when,
                    ));
                }
            }
            return Ok(Some(Term::ite(held, snap, unit)));
        }
        match &a.kind {
            ExprKind::Binary(BinaryOp::And, l, r) => {
                let l = self.snapshot_of(st, heap, l, ctx)?;
                let r = self.snapshot_of(st, heap, r, ctx)?;
                Ok(self.env.snap.join(l, r))
            }
            ExprKind::Binary(BinaryOp::Implies, c, body) => {
                let c = self.eval(st, heap, c, ctx)?;
                let b = self.snapshot_under(st, heap, c.clone(), body, ctx)?;
                // The body is impure (so is the implication): a dead branch reads as unit.
                Ok(Some(Term::ite(c, b.unwrap_or_else(|| unit.clone()), unit)))
            }
            ExprKind::Cond(c, x, y) => {
                let c = self.eval(st, heap, c, ctx)?;
                let x = self.snapshot_under(st, heap, c.clone(), x, ctx)?;
                let y = self.snapshot_under(st, heap, Term::not(c.clone()), y, ctx)?;
                Ok(Some(Term::ite(
                    c,
                    x.unwrap_or(unit.clone()),
                    y.unwrap_or(unit),
                )))
            }
            ExprKind::Let(_, value, body) => {
                let v = self.eval(st, heap, value, ctx)?;
                let Some(var) = self.env.sem.binders.get(&(a.id, 0)).copied() else {
                    return Err(Abort::Failed);
                };
                self.member.bound.push((var, v));
                let r = self.snapshot_of(st, heap, body, ctx);
                self.member.bound.pop();
                r
            }
            // The layout of the part an unfold produces and a function's definition is
            // translated from (see `inhale_exhale`).
            ExprKind::Annotated(_, x) | ExprKind::InhaleExhale(x, _) => {
                self.snapshot_of(st, heap, x, ctx)
            }
            ExprKind::Quantifier { .. } => self.quantified_snapshot(st, heap, a, ctx).map(Some),
            // A wand's snapshot is its chunk's (which instance, if several: the first found).
            ExprKind::Binary(BinaryOp::Wand, ..) => {
                let (resource, args) = self.wand_location(st, heap, a, ctx)?;
                match self.find(heap, &resource, &args, a.span)? {
                    Some(i) => Ok(Some(self.value_through(heap, i, &resource, &args, a.span)?)),
                    None => Err(Abort::Failed),
                }
            }
            ExprKind::Acc(loc, amount) => {
                let (field, rcv) = self.field_location(loc)?;
                let r = self.eval(st, heap, rcv, ctx)?;
                let held = match amount {
                    Some(x) if !crate::rules::read_permissions::is_wildcard(x) => {
                        let p = Permission::of(self.eval(st, heap, x, ctx)?);
                        p.is_positive()
                    }
                    _ => Term::tt(),
                };
                let resource = Resource::Field(field.clone());
                let args = [r];
                let value = match self.find(heap, &resource, &args, loc.span)? {
                    Some(i) => self.value_through(heap, i, &resource, &args, loc.span)?,
                    None => self.read_value(heap, &resource, &args, loc.span)?,
                };
                let wrapped = self.wrap(value, loc.span)?;
                Ok(Some(Term::ite(held, wrapped, unit)))
            }
            _ => Err(Abort::Failed),
        }
    }
}
