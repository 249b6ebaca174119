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

use crate::errors::ErrorContext;
use crate::rules::context::{Verifier, R};
use crate::state::{Heap, Permission, Resource, State};

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

    /// `P%instance(args)`: a term mentioned wherever the instance is produced, consumed or
    /// its permission read, so that a quantifier whose trigger names the instance (`{P(x)}`)
    /// matches it.
    /// The same for a magic wand (`{A --* B}` as a trigger), whose arguments are its holes.
    pub fn instance_mark(&mut self, resource: &Resource, args: Vec<Term>, span: Span) -> R<Term> {
        let kind = match resource {
            Resource::Predicate(_) => "pinst",
            Resource::Wand(_) => "winst",
            Resource::Field(_) => "finst",
        };
        let sorts = args.iter().map(|a| a.sort().clone()).collect();
        let name = format!("sx.{kind}.{}", resource.name());
        let decl = FunDecl::new(Symbol::user(&name), sorts, Sort::Bool);
        self.ensure_declared(&decl, span)?;
        Ok(Term::app(&decl, args))
    }

    /// Whether instances of `resource` have marks: predicate instances, wands where some
    /// trigger of the program names a wand, and fields read at the top of a trigger
    /// (elsewhere the marks only cost solver time).
    pub fn marks_instances(&self, resource: &Resource) -> bool {
        match resource {
            Resource::Predicate(_) => true,
            Resource::Wand(_) => self.env.wand_triggers,
            Resource::Field(f) => self.env.trigger_fields.contains(f),
        }
    }

    /// Assumes that every instance mark of `resource` holds (they only name instances for
    /// triggers), so a goal may mention one without changing what it says.
    pub fn marks_hold(&mut self, resource: &Resource, span: Span) -> R<()> {
        let sorts = self.location_sorts(resource, span)?;
        let vars: Vec<(Symbol, Sort)> = sorts
            .into_iter()
            .enumerate()
            .map(|(i, sort)| (Symbol::user(&format!("sx.m{i}")), sort))
            .collect();
        let args: Vec<Term> = vars
            .iter()
            .map(|(v, sort)| Term::var(v.clone(), sort.clone()))
            .collect();
        let mark = self.instance_mark(resource, args, span)?;
        let fact = Term::forall(vars, mark.clone(), vec![vec![mark]]);
        self.assume(fact, span)
    }

    /// Mentions the instance mark of `resource(args)` if it is a predicate instance or a
    /// wand (when it is produced, consumed or its permission read).
    pub fn mention_instance(&mut self, resource: &Resource, args: &[Term], span: Span) -> R<()> {
        if !self.marks_instances(resource) || self.modes.in_axiom {
            return Ok(());
        }
        let mark = self.instance_mark(resource, args.to_vec(), span)?;
        self.assume(mark, span)
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
            Some(x) if self.modes.positive_only && matches!(x.kind, ExprKind::NoPerm) => {
                Some(Permission::none())
            }
            _ if self.modes.positive_only => None,
            None => Some(self.scaled(Permission::write())),
            Some(x) if crate::rules::read_permissions::is_wildcard(x) => None,
            Some(x) => {
                let p = Permission::of(self.eval(st, heap, x, ctx)?);
                Some(self.scaled(p))
            }
        };
        Ok((args, amount))
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

    /// Consumes `amount` (`None`: some positive amount) of the instance `pa` names, whose
    /// arguments evaluated to `args`; returns its snapshot. A negative amount is reported at
    /// the instance.
    pub fn consume_instance(
        &mut self,
        st: &mut State,
        pa: &PredicateAccess<'_>,
        args: &[Term],
        amount: Option<Permission>,
        ctx: &ErrorContext,
    ) -> R<Term> {
        if let (Some(p), false) = (&amount, self.modes.assuming) {
            self.check_not_negative(p, ctx, pa.call)?;
        }
        let resource = Resource::Predicate(pa.name.clone());
        self.consume_resource(st, &resource, args, amount, pa.call, ctx)
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
        let depth = self.member.bound.len();
        self.member
            .bound
            .extend(params.into_iter().zip(args.iter().cloned()));
        let r = self.with_modes(|m| m.perm_scale = Some(amount.clone()), |v| f(v, body));
        self.member.bound.truncate(depth);
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
            // Some positive amount, less than what is held (see `consume_resource`).
            None => self.some_amount(access.span)?,
        };
        if requested.is_some() {
            if let Some(x) = pa.amount {
                self.require_positive(&amount, x, access, ctx)?;
            }
        }
        let snap = self.consume_instance(st, &pa, &args, requested, ctx)?;
        if self.modes.in_axiom && self.member.axiom_trigger_unfoldings.contains(&access.id) {
            self.member
                .axiom_unfoldings
                .push((pa.name.clone(), snap.clone(), args.clone()));
        }
        let trigger = self.predicate_trigger(&pa.name, snap.clone(), args.clone(), access.span)?;
        self.assume_guarded(trigger, access.span)?;
        // The body was checked to be well-formed with the predicate: nothing to check here
        // (an `unfolding` inside it may need more than the amount unfolded leaves).
        self.member.body_unfold_depth += 1;
        let enclosing = self
            .instance(&pa.name, &args)
            .map(|inst| (inst, snap.clone()));
        self.nesting.enclosing.push(enclosing);
        let r = self.with_modes(
            |m| {
                m.body_amounts_checked = m.checking && !m.in_axiom && !m.assuming;
                m.checking = false;
                // An unfold produces the inhale parts of `[a, b]`, whose layout the snapshot
                // has (also while a contract is read with its exhale parts).
                m.exhale_parts = false;
            },
            |v| {
                let r = v.in_predicate_body(&pa.name, &args, &amount, access.span, |v, body| {
                    v.produce_from(st, body, Some(snap), ctx)
                });
                v.nesting.enclosing.pop();
                // Instances folded in the body are below this one (for termination measures).
                r.and_then(|()| v.assume_nested_instances(st, &pa.name, &args, access.span))
            },
        );
        self.member.body_unfold_depth -= 1;
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
        if self.modes.checking && !self.modes.assuming {
            self.bound_read_amounts(amount, &Permission::none(), x.span)?;
        }
        if !self.modes.checking
            || self.modes.assuming
            || self.positive_read_amount(amount)
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
            None => self.some_amount(access.span)?,
        };
        // A wildcard fold takes some positive amount of everything in the body.
        let positive_only = self.modes.positive_only || requested.is_none();
        if let Some(x) = pa.amount {
            if !crate::rules::read_permissions::is_wildcard(x) {
                self.require_positive(&amount, x, access, ctx)?;
            }
        }
        // The snapshot is read through the body's inhale parts (the layout an unfold
        // produces from); the exhale parts are consumed.
        let snap = self.in_predicate_body(&pa.name, &args, &amount, access.span, |v, body| {
            let snap = v.fold_snapshot(st, &heap, body)?;
            v.with_modes(
                |m| m.positive_only = positive_only,
                |v| v.consume(st, &heap, body, ctx),
            )?;
            Ok(snap)
        })?;
        let (snap, nested) = snap;
        let snap = match snap {
            Some(s) => s,
            None => self.env.snap.unit(),
        };
        // A name for the new snapshot: it is built from the old ones, which a later fold
        // would otherwise copy again (terms growing exponentially with the folds).
        let snap = self.name_term(snap, &format!("snap.{}", pa.name), access.span)?;
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
        let amount = amount.when(&self.guard());
        let resource = Resource::Predicate(pa.name.clone());
        self.produce_resource(st, &resource, args, amount, Some(snap), access.span)
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
        if self.member.body_unfold_depth >= 2 {
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
            label_loops: Vec::new(),
        };
        // An expression: its amounts are not scaled by an enclosing fold or unfold; inside
        // a function only some positive amount is needed.
        let positive_only = self.modes.current_function.is_some()
            || self.modes.in_axiom
            || self.modes.positive_only;
        let assumed_before = self.decider.innermost_assumptions().len();
        let value = self.with_perm_heap(None, |v| {
            v.with_modes(
                |m| {
                    m.perm_scale = None;
                    m.positive_only = positive_only;
                },
                |v| v.unfold(&mut scratch, heap, access, ctx),
            )?;
            let heap = scratch.heap.clone();
            // `perm(..)` in the body sees the unfolded heap (the instance's body is held
            // there).
            v.eval(&scratch, &heap, body, ctx)
        })?;
        if self.member.quantifier_depth > 0 {
            // What the instance's body says holds of every instance the quantifier unfolds:
            // the enclosing quantifier assumes it for all values of its variables.
            let facts = self.decider.innermost_assumptions();
            let made = facts.get(assumed_before..).unwrap_or(&[]).to_vec();
            self.member.deferred.extend(made);
        }
        Ok(value)
    }
}
