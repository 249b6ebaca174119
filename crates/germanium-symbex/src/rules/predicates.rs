//! Predicate instances (Silicon's predicate rules): a chunk `P(args)` holds an amount of
//! permission and a snapshot. `unfold` consumes the chunk and produces the body from its
//! snapshot, so values found inside are functions of the snapshot; `fold` consumes the body
//! and builds the chunk's snapshot from the values it held; `unfolding P(args) in e`
//! unfolds on a copy of the heap. Each fold and unfold also records `P%trigger(snap, args)`,
//! which lets function definitions unroll in step with the program (see `function_axioms`).

use germanium_semantics::CallTarget;
use germanium_smt::{FunDecl, Sort, Symbol, Term};
use germanium_syntax::ast::{Expr, ExprKind};
use germanium_syntax::Span;

use crate::errors::{ErrorContext, Reason};
use crate::rules::context::{Abort, Verifier, R};
use crate::state::{Chunk, Heap, Permission, State};

/// A predicate access as written: `P(args)` or `acc(P(args), amount)`.
pub struct PredicateAccess<'x> {
    pub name: String,
    pub call: &'x Expr,
    pub args: &'x [Expr],
    pub amount: Option<&'x Expr>,
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// The predicate access in `e` (a bare instance or `acc` of one), if it is one.
    pub fn as_predicate_access<'x>(&self, e: &'x Expr) -> Option<PredicateAccess<'x>> {
        let (call, amount) = match &e.kind {
            ExprKind::Acc(loc, amount) => (&**loc, amount.as_deref()),
            ExprKind::Call(..) => (e, None),
            _ => return None,
        };
        let ExprKind::Call(_, args) = &call.kind else {
            return None;
        };
        match self.env.sem.call(call.id) {
            Some(CallTarget::Predicate(name)) => Some(PredicateAccess {
                name: name.clone(),
                call,
                args,
                amount,
            }),
            _ => None,
        }
    }

    /// `P%trigger(snap, args)`: records that an instance was folded or unfolded.
    pub fn predicate_trigger(
        &mut self,
        name: &str,
        snap: Term,
        args: Vec<Term>,
        span: Span,
    ) -> R<Term> {
        let mut sorts = vec![self.env.snap.sort.clone()];
        sorts.extend(args.iter().map(|a| a.sort().clone()));
        let decl = FunDecl::new(Symbol::user(&format!("sx.ptrig.{name}")), sorts, Sort::Bool);
        self.ensure_declared(&decl, span)?;
        let mut all = vec![snap];
        all.extend(args);
        Ok(Term::app(&decl, all))
    }

    /// Evaluates the arguments and the amount (scaled; `None` for `wildcard`).
    pub fn eval_predicate_access(
        &mut self,
        st: &State,
        heap: &Heap,
        pa: &PredicateAccess<'_>,
        ctx: &ErrorContext,
    ) -> R<(Vec<Term>, Option<Permission>)> {
        let mut args = Vec::new();
        for a in pa.args {
            args.push(self.eval(st, heap, a, ctx)?);
        }
        let amount = match pa.amount {
            Some(x) if self.positive_only && matches!(x.kind, ExprKind::NoPerm) => {
                Some(Permission::none())
            }
            _ if self.positive_only => None,
            None => Some(self.scaled(Permission::write())),
            Some(x) if matches!(x.kind, ExprKind::Wildcard) => None,
            Some(x) => {
                let p = Permission::of(self.eval(st, heap, x, ctx)?);
                Some(self.scaled(p))
            }
        };
        Ok((args, amount))
    }

    /// Whether the argument lists are equal (a term).
    fn same_args(a: &[Term], b: &[Term]) -> Term {
        Term::and(a.iter().zip(b).map(|(x, y)| Term::eq(x.clone(), y.clone())))
    }

    /// The parameters of predicate `name` (none if it is unknown).
    pub(crate) fn predicate_params(&self, name: &str) -> Vec<germanium_semantics::VarId> {
        self.env
            .sem
            .predicates
            .get(name)
            .map(|p| p.params.clone())
            .unwrap_or_default()
    }

    /// Whether the argument lists are equal as Viper values: collections compare
    /// extensionally (as `==` does), so `Multiset() union Multiset(x)` names the same
    /// instance as `Multiset(x)`.
    pub(crate) fn args_equal(&self, name: &str, a: &[Term], b: &[Term]) -> Term {
        let params = self.predicate_params(name);
        let parts = a.iter().zip(b).enumerate().map(|(i, (x, y))| {
            let ty = params.get(i).map(|v| self.env.sem.var(*v).ty.clone());
            match (ty, &self.env.theories) {
                (Some(ty), Some(t)) => t
                    .equal(&ty, x.clone(), y.clone())
                    .unwrap_or_else(|_| Term::eq(x.clone(), y.clone())),
                _ => Term::eq(x.clone(), y.clone()),
            }
        });
        Term::and(parts.collect::<Vec<_>>())
    }

    /// The chunk of `name(args)`: syntactic match first, then one the solver proves equal.
    pub fn find_predicate_chunk(
        &mut self,
        heap: &Heap,
        name: &str,
        args: &[Term],
        span: Span,
    ) -> R<Option<usize>> {
        if let Some(i) = heap.find_predicate_syntactic(name, args) {
            return Ok(Some(i));
        }
        let candidates: Vec<usize> = heap.of_predicate(name).collect();
        for i in candidates {
            let Chunk::Predicate { args: other, .. } = &heap.chunks[i] else {
                continue;
            };
            let same = self.args_equal(name, args, &other.clone());
            if self.prove(same, span)? {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// `perm(name(args))` in `heap`.
    pub fn predicate_perm(&self, heap: &Heap, name: &str, args: &[Term]) -> Permission {
        let mut parts = vec![Permission::none().0];
        for i in heap.of_predicate(name) {
            if let Chunk::Predicate {
                args: other, perm, ..
            } = &heap.chunks[i]
            {
                parts.push(Term::ite(
                    Self::same_args(args, other),
                    perm.0.clone(),
                    Permission::none().0,
                ));
            }
        }
        Permission(Term::add(parts))
    }

    /// Adds `amount` of `name(args)` with snapshot `snap` (fresh if none), merging with a
    /// chunk for the same instance; instances that turn out equal have equal snapshots.
    pub fn produce_predicate(
        &mut self,
        st: &mut State,
        name: &str,
        args: Vec<Term>,
        amount: Permission,
        snap: Option<Term>,
        span: Span,
    ) -> R<()> {
        let snap = match snap {
            Some(s) => s,
            None => self.fresh(&format!("snap.{name}"), self.env.snap.sort.clone(), span)?,
        };
        let amount = amount.when(&self.guard());
        if amount.is_literally_none() {
            return Ok(());
        }
        if let Some(i) = self.find_predicate_chunk(&st.heap.clone(), name, &args, span)? {
            let old = st.heap.chunks[i].clone();
            let both = Term::and([old.perm().is_positive(), amount.is_positive()]);
            self.assume(
                Term::implies(both, Term::eq(snap.clone(), old.value().clone())),
                span,
            )?;
            if !self.prove(old.perm().is_positive(), span)? {
                let merged = Term::ite(old.perm().is_positive(), old.value().clone(), snap);
                st.heap.chunks[i].set_value(merged);
            }
            st.heap.chunks[i].set_perm(old.perm().add(&amount));
            return Ok(());
        }
        let others: Vec<Chunk> = st
            .heap
            .of_predicate(name)
            .map(|j| st.heap.chunks[j].clone())
            .collect();
        for other in others {
            if let Chunk::Predicate {
                args: o_args,
                snap: o_snap,
                perm: o_perm,
                ..
            } = other
            {
                let both = Term::and([
                    Self::same_args(&args, &o_args),
                    amount.is_positive(),
                    o_perm.is_positive(),
                ]);
                self.assume(Term::implies(both, Term::eq(snap.clone(), o_snap)), span)?;
            }
        }
        st.heap.push(Chunk::Predicate {
            name: name.to_string(),
            args,
            snap,
            perm: amount,
        });
        Ok(())
    }

    /// Removes `amount` (`None`: some positive amount, for `wildcard`) of `name(args)` and
    /// returns the instance's snapshot. Missing permission is reported with `ctx` at `at`.
    #[allow(clippy::too_many_arguments)]
    pub fn consume_predicate(
        &mut self,
        st: &mut State,
        name: &str,
        args: &[Term],
        amount: Option<Permission>,
        at: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let span = at.span;
        if self.assuming {
            return self.assume_predicate_held(st, name, args, amount, span);
        }
        if let Some(p) = &amount {
            self.check(p.is_non_negative(), ctx, Reason::NegativePermission, at)?;
        }
        let guard = self.guard();
        let found = self.find_predicate_chunk(&st.heap.clone(), name, args, span)?;
        let enough = match (found, &amount) {
            (Some(i), Some(p)) => {
                !self.checking || self.prove(st.heap.chunks[i].perm().at_least(p), span)?
            }
            (Some(i), None) => {
                !self.checking || self.prove(st.heap.chunks[i].perm().is_positive(), span)?
            }
            (None, _) => false,
        };
        if let (Some(i), true) = (found, enough) {
            let chunk = st.heap.chunks[i].clone();
            let taken = match amount {
                Some(p) => p,
                None => {
                    let w = Permission(self.fresh("wildcard", Sort::Real, span)?);
                    let bounds = Term::and([
                        w.is_positive(),
                        Term::lt(w.0.clone(), chunk.perm().0.clone()),
                    ]);
                    self.assume(Term::implies(guard.clone(), bounds), span)?;
                    w
                }
            };
            st.heap.chunks[i].set_perm(chunk.perm().sub(&taken.when(&guard)));
            st.heap.drop_empty();
            return Ok(chunk.value().clone());
        }
        // Spread over chunks whose arguments may be equal.
        if let Some(p) = &amount {
            let total = self.predicate_perm(&st.heap, name, args);
            if self.prove(total.at_least(p), span)? {
                let mut remaining = p.when(&guard);
                return self.take_from_instance_chunks(
                    st,
                    name,
                    args,
                    Term::tt(),
                    span,
                    |_, same, perm| {
                        let available =
                            Permission(Term::ite(same, perm.0.clone(), Permission::none().0));
                        let taken = Permission(Term::ite(
                            available.at_least(&remaining),
                            remaining.0.clone(),
                            available.0.clone(),
                        ));
                        remaining = remaining.sub(&taken);
                        Ok(taken)
                    },
                );
            }
        }
        // Some positive amount (wildcard, or inside a function) of an instance held in
        // chunks whose arguments may be equal: some of each chunk that is the instance.
        if amount.is_none() {
            let total = self.predicate_perm(&st.heap, name, args);
            if self.prove(total.is_positive(), span)? {
                let when = guard.clone();
                return self.take_from_instance_chunks(
                    st,
                    name,
                    args,
                    when,
                    span,
                    |v, same, perm| {
                        let this_one = Term::and([guard.clone(), same, perm.is_positive()]);
                        let w = Permission(v.fresh("wildcard", Sort::Real, span)?);
                        let bounds =
                            Term::and([w.is_positive(), Term::lt(w.0.clone(), perm.0.clone())]);
                        v.assume(Term::implies(this_one.clone(), bounds), span)?;
                        Ok(Permission(Term::ite(this_one, w.0, Permission::none().0)))
                    },
                );
            }
        }
        if !self.checking || self.dead_path(span)? {
            return self.fresh(&format!("snap.{name}"), self.env.snap.sort.clone(), span);
        }
        self.report(ctx, Reason::InsufficientPermission, at);
        Err(Abort::Failed)
    }

    /// Takes from every chunk of `name` that may be the instance `args`: `take` gets whether
    /// a chunk is the instance and its amount, and says how much of it goes. Returns the
    /// instance's snapshot: that of a chunk that is it and holds some of it (under `when`).
    fn take_from_instance_chunks(
        &mut self,
        st: &mut State,
        name: &str,
        args: &[Term],
        when: Term,
        span: Span,
        mut take: impl FnMut(&mut Self, Term, &Permission) -> R<Permission>,
    ) -> R<Term> {
        let mut snap = self.fresh(&format!("snap.{name}"), self.env.snap.sort.clone(), span)?;
        let indices: Vec<usize> = st.heap.of_predicate(name).collect();
        for i in indices {
            let Chunk::Predicate {
                args: o_args,
                snap: o_snap,
                perm,
                ..
            } = st.heap.chunks[i].clone()
            else {
                continue;
            };
            let same = Self::same_args(args, &o_args);
            let holds = Term::and([when.clone(), same.clone(), perm.is_positive()]);
            snap = Term::ite(holds, o_snap, snap);
            let taken = take(self, same, &perm)?;
            st.heap.chunks[i].set_perm(perm.sub(&taken));
        }
        st.heap.drop_empty();
        Ok(snap)
    }

    /// Binds the predicate's parameters to `args` while `f` runs, with amounts scaled by
    /// `amount`.
    pub(crate) fn in_predicate_body<T>(
        &mut self,
        name: &str,
        args: &[Term],
        amount: &Permission,
        span: Span,
        f: impl FnOnce(&mut Self, &'a Expr) -> R<T>,
    ) -> R<T> {
        let Some(predicate) = self.env.predicates.get(name).copied() else {
            return Err(self.unsupported(span, "an unknown predicate"));
        };
        let Some(body) = predicate.body.as_ref() else {
            return Err(self.unsupported(span, "folding or unfolding an abstract predicate"));
        };
        let params = self.predicate_params(name);
        let depth = self.bound.len();
        self.bound
            .extend(params.into_iter().zip(args.iter().cloned()));
        let saved_scale = self.perm_scale.replace(amount.clone());
        let r = f(self, body);
        self.perm_scale = saved_scale;
        self.bound.truncate(depth);
        r
    }

    /// `unfold acc(P(args), p)`, also used by `unfolding`: the chunk is consumed from `st`
    /// and the body produced into it from the chunk's snapshot.
    pub fn unfold(
        &mut self,
        st: &mut State,
        eval_heap: &Heap,
        access: &Expr,
        ctx: &ErrorContext,
    ) -> R<()> {
        let Some(pa) = self.as_predicate_access(access) else {
            return Err(self.unsupported(access.span, "this unfold"));
        };
        let (args, requested) = self.eval_predicate_access(st, eval_heap, &pa, ctx)?;
        let amount = match requested.clone() {
            Some(p) => p,
            None => {
                // Some positive amount, less than what is held (see `consume_predicate`).
                let w = Permission(self.fresh("wildcard", Sort::Real, access.span)?);
                self.assume(w.is_positive(), access.span)?;
                w
            }
        };
        if requested.is_some() {
            if let Some(x) = pa.amount {
                self.require_positive(&amount, x, access, ctx)?;
            }
        }
        let snap = self.consume_predicate(st, &pa.name, &args, requested, pa.call, ctx)?;
        if self.in_axiom && self.axiom_trigger_unfoldings.contains(&access.id) {
            self.axiom_unfoldings
                .push((pa.name.clone(), snap.clone(), args.clone()));
        }
        let trigger = self.predicate_trigger(&pa.name, snap.clone(), args.clone(), access.span)?;
        self.assume_guarded(trigger, access.span)?;
        // The body was checked to be well-formed with the predicate: nothing to check here
        // (an `unfolding` inside it may need more than the amount unfolded leaves).
        self.body_unfold_depth += 1;
        let checking = std::mem::replace(&mut self.checking, false);
        let amounts = std::mem::replace(
            &mut self.body_amounts_checked,
            checking && !self.in_axiom && !self.assuming,
        );
        // An unfold produces the inhale parts of `[a, b]`, whose layout the snapshot has
        // (also while a contract is read with its exhale parts).
        let exhale_parts = std::mem::replace(&mut self.exhale_parts, false);
        let enclosing = self
            .instance(&pa.name, &args)
            .map(|inst| (inst, snap.clone()));
        self.nesting.enclosing.push(enclosing);
        let r = self.in_predicate_body(&pa.name, &args, &amount, access.span, |v, body| {
            v.produce_from(st, body, Some(snap), ctx)
        });
        self.nesting.enclosing.pop();
        // Instances folded in the body are below this one (for termination measures).
        let r = r.and_then(|()| self.assume_nested_instances(st, &pa.name, &args, access.span));
        self.exhale_parts = exhale_parts;
        self.body_amounts_checked = amounts;
        self.checking = checking;
        self.body_unfold_depth -= 1;
        r
    }

    /// Folding and unfolding need a positive amount (`permission.not.positive`).
    fn require_positive(
        &mut self,
        amount: &Permission,
        x: &Expr,
        access: &Expr,
        ctx: &ErrorContext,
    ) -> R<()> {
        if !self.checking
            || self.assuming
            || self.prove(amount.is_positive(), x.span)?
            || self.dead_path(x.span)?
        {
            return Ok(());
        }
        let text = crate::errors::text_of(self.env.sources, x.span);
        let d = germanium_syntax::Diagnostic::new(
            format!("{}:permission.not.positive", ctx.error_id),
            ctx.node.unwrap_or(access.span),
            format!("{} Fraction {text} might not be positive.", ctx.headline),
        );
        self.add_error(d);
        // Go on with a positive amount: what else might fail (e.g. not holding the
        // instance at all) is reported as well.
        self.assume_guarded(amount.is_positive(), x.span)?;
        Ok(())
    }

    /// `fold acc(P(args), p)`: consumes the body (amounts times `p`) and adds the instance
    /// with the snapshot of what the body held.
    pub fn fold(&mut self, st: &mut State, access: &Expr, ctx: &ErrorContext) -> R<()> {
        let Some(pa) = self.as_predicate_access(access) else {
            return Err(self.unsupported(access.span, "this fold"));
        };
        let heap = st.heap.clone();
        let (args, requested) = self.eval_predicate_access(st, &heap, &pa, ctx)?;
        let amount = match requested.clone() {
            Some(p) => p,
            None => {
                let w = Permission(self.fresh("wildcard", Sort::Real, access.span)?);
                self.assume(w.is_positive(), access.span)?;
                w
            }
        };
        // A wildcard fold takes some positive amount of everything in the body.
        let positive_only = self.positive_only || requested.is_none();
        if let Some(x) = pa.amount {
            if !matches!(x.kind, ExprKind::Wildcard) {
                self.require_positive(&amount, x, access, ctx)?;
            }
        }
        // The snapshot is read through the body's inhale parts (the layout an unfold
        // produces from); the exhale parts are consumed.
        let snap = self.in_predicate_body(&pa.name, &args, &amount, access.span, |v, body| {
            let snap = v.fold_snapshot(st, &heap, body)?;
            let saved = std::mem::replace(&mut v.positive_only, positive_only);
            let r = v.consume(st, &heap, body, ctx);
            v.positive_only = saved;
            r?;
            Ok(snap)
        })?;
        let (snap, nested) = snap;
        let snap = match snap {
            Some(s) => s,
            None => self.env.snap.unit(),
        };
        let trigger = self.predicate_trigger(&pa.name, snap.clone(), args.clone(), access.span)?;
        self.assume_guarded(trigger, access.span)?;
        // The instances the body held are now inside the new one.
        if let Some(outer) = self.instance(&pa.name, &args) {
            for (inner, inner_snap, held) in nested {
                self.assume_inside(
                    (outer.clone(), snap.clone()),
                    (inner, inner_snap),
                    held,
                    access.span,
                )?;
            }
        }
        self.produce_predicate(st, &pa.name, args, amount, Some(snap), access.span)
    }

    /// `unfolding acc(P(args), p) in body`, evaluated on a copy of the heap.
    pub fn eval_unfolding(
        &mut self,
        st: &State,
        heap: &Heap,
        access: &Expr,
        body: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        // An `unfolding` inside a predicate body produced by an unfold inside another: a
        // recursive predicate would unfold forever. Its value is left unknown (the body's
        // well-formedness is checked with the predicate).
        if self.body_unfold_depth >= 2 {
            let ty = self.type_of(body)?;
            let sort = self.sort_of(&ty, body.span)?;
            return self.fresh("unfolding", sort, body.span);
        }
        if self.lenient_unfolding_unheld(st, heap, access, ctx)? {
            return self.eval(st, heap, body, ctx);
        }
        let mut scratch = State {
            store: st.store.clone(),
            heap: heap.clone(),
            old_heaps: st.old_heaps.clone(),
        };
        // An expression: its amounts are not scaled by an enclosing fold or unfold; inside
        // a function only some positive amount is needed.
        let positive_only = self.current_function.is_some() || self.in_axiom || self.positive_only;
        let saved = (
            self.perm_heap.take(),
            self.perm_scale.take(),
            std::mem::replace(&mut self.positive_only, positive_only),
        );
        let r = self.unfold(&mut scratch, heap, access, ctx);
        self.perm_heap = saved.0;
        self.perm_scale = saved.1;
        self.positive_only = saved.2;
        r?;
        let heap = scratch.heap.clone();
        // `perm(..)` in the body sees the unfolded heap (the instance's body is held there).
        let outer_perm_heap = self.perm_heap.take();
        let value = self.eval(&scratch, &heap, body, ctx);
        self.perm_heap = outer_perm_heap;
        value
    }
}
