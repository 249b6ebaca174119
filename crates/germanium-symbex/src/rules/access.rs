//! The rules' one way onto resources: find a location's chunk, read its value, produce and
//! consume amounts of it, for every kind of resource alike (see [`crate::resources`]).
//! Solver failures become internal errors here, missing permission becomes Viper's
//! `insufficient.permission`, and amounts of "some positive permission" (`wildcard`) are
//! made in one place, [`Verifier::some_of`].

use germanium_smt::{Sort, Term};
use germanium_syntax::ast::Expr;
use germanium_syntax::Span;

use crate::errors::{ErrorContext, Reason};
use crate::resources;
use crate::rules::context::{Abort, Verifier, R};
use crate::state::{Heap, Permission, Resource, State};

impl<'e, 'a> Verifier<'e, 'a> {
    /// The chunk of `resource(args)` in `heap` (see [`resources::find`]).
    pub fn find(
        &mut self,
        heap: &Heap,
        resource: &Resource,
        args: &[Term],
        span: Span,
    ) -> R<Option<usize>> {
        let guard = self.guard();
        resources::find(&mut self.decider, self.env, heap, resource, args, &guard)
            .map_err(|e| self.solver_failed(e, span))
    }

    /// A quantified chunk made for the constants of `hint` (one of the two likeliest, see
    /// `resources::likely_sources`) that alone holds `enough` (of its amount) of the
    /// location `args`, proved: a small query before one over every chunk.
    pub fn likely_holder(
        &mut self,
        heap: &Heap,
        resource: &Resource,
        hint: &Term,
        args: &[Term],
        enough: impl Fn(&Permission) -> Term,
        span: Span,
    ) -> R<Option<usize>> {
        for i in resources::likely_sources(heap, resource, hint)
            .into_iter()
            .take(2)
        {
            let held = resources::amount_at_location(heap, i, args);
            if self.prove(enough(&held), span)? {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// The sort of a resource's snapshot: a field's value, a predicate's snapshot.
    pub fn resource_sort(&mut self, resource: &Resource, span: Span) -> R<Sort> {
        match resource {
            Resource::Field(field) => {
                let ty = self.env.sem.fields.get(field).map(|f| f.ty.clone());
                let Some(ty) = ty else {
                    return Err(self.unsupported(span, "an unknown field"));
                };
                self.sort_of(&ty, span)
            }
            Resource::Predicate(_) | Resource::Wand(_) => Ok(self.env.snap.sort.clone()),
        }
    }

    /// An unconstrained value of `resource`.
    pub fn fresh_value(&mut self, resource: &Resource, span: Span) -> R<Term> {
        let sort = self.resource_sort(resource, span)?;
        let base = match resource {
            Resource::Field(f) => f.clone(),
            Resource::Predicate(p) => format!("snap.{p}"),
            Resource::Wand(_) => "wand".to_string(),
        };
        self.fresh(&base, sort, span)
    }

    /// The value of `resource(args)` from whichever chunk holds it; unconstrained if none.
    pub fn read_value(
        &mut self,
        heap: &Heap,
        resource: &Resource,
        args: &[Term],
        span: Span,
    ) -> R<Term> {
        // One quantified chunk is all there is: its value map at the location, asked of no
        // one (where it holds nothing the read is not allowed, and any value will do), and
        // a program's trigger on the read, or on a function of it, can match it.
        if let Some(i) = resources::sole_quantified(heap, resource) {
            return Ok(resources::value_at_location(heap, i, args));
        }
        if let Some(choice) = self.modes.trigger_choice {
            // Where that chunk holds the location, the solver equates a read of it with
            // this term, so the pattern matches there.
            let maps: Vec<Term> = resources::quantified_value_maps(heap, resource, args)
                .into_iter()
                .filter(crate::rules::triggers::pattern_safe)
                .collect();
            self.member.trigger_choices = self.member.trigger_choices.max(maps.len());
            if let Some(v) = maps.get(choice).or(maps.last()) {
                return Ok(v.clone());
            }
        }
        if let (false, [hint]) = (self.modes.in_axiom, args) {
            // A quantified chunk made for this location's constants and holding some of
            // it: its value is the location's (a chunk's value where it holds some is the
            // heap's), and the read names one chunk instead of all.
            let positive = Permission::is_positive;
            if let Some(i) = self.likely_holder(heap, resource, hint, args, positive, span)? {
                return Ok(resources::value_at_location(heap, i, args));
            }
        }
        let otherwise = match resources::quantified_value(heap, resource, args) {
            // A definition may mention nothing of a path (see `quantified_value`).
            Some(v) if self.modes.in_axiom => v,
            _ => self.fresh_value(resource, span)?,
        };
        Ok(resources::value_of(heap, resource, args, otherwise))
    }

    /// The value of `resource(args)` read through the chunk at `index` that [`Self::find`]
    /// gave. A chunk's snapshot is the location's value only where the chunk holds some of
    /// it: a chunk may stay in the heap with an amount that is none in fact (what a
    /// quantified take or a conditional amount left, never proved empty) while another
    /// chunk holds the location with another value. So the snapshot is read alone where
    /// its amount is known or proved positive, or where no other chunk may hold the
    /// location (then any value of an unheld location will do); elsewhere the read is
    /// guarded by that amount and falls back on whatever holds the location
    /// ([`Self::read_value`]). In a definitional axiom, whose heap is made from one
    /// snapshot and whose facts may mention nothing of a path, the snapshot as before.
    pub fn value_through(
        &mut self,
        heap: &Heap,
        index: usize,
        resource: &Resource,
        args: &[Term],
        span: Span,
    ) -> R<Term> {
        let snapshot = resources::snapshot_at(heap, index).clone();
        let amount = resources::amount_at(heap, index).clone();
        if self.modes.in_axiom
            || self.known_positive(&amount)
            || resources::alone_of_its_resource(heap, index)
            || self.prove_cheaply(amount.is_positive(), span)?
        {
            return Ok(snapshot);
        }
        let otherwise = self.read_value(heap, resource, args, span)?;
        Ok(Term::ite(amount.is_positive(), snapshot, otherwise))
    }

    /// Whether `amount` is positive on this path without a query: a positive read amount,
    /// or what the path conditions say literally (`Decider::knows`).
    pub(crate) fn known_positive(&self, amount: &Permission) -> bool {
        self.positive_read_amount(amount) || self.decider.knows(&amount.is_positive())
    }

    /// Some positive amount, less than `below`, where `when` holds: what a `wildcard` takes
    /// from a chunk holding `below`. (Every such amount is made here.)
    pub fn some_of(&mut self, below: &Permission, when: &Term, span: Span) -> R<Permission> {
        let w = self.fresh_amount(span)?;
        let bounds = Term::and([w.is_positive(), Term::lt(w.0.clone(), below.0.clone())]);
        self.assume(Term::implies(when.clone(), bounds), span)?;
        Ok(w)
    }

    /// Some positive amount (a wildcard fold or unfold takes this much).
    pub fn some_amount(&mut self, span: Span) -> R<Permission> {
        let w = self.fresh_amount(span)?;
        self.assume(w.is_positive(), span)?;
        Ok(w)
    }

    /// Some positive amount where `p` is positive, none elsewhere (Viper's function
    /// semantics: a function holds some of what its precondition names).
    pub fn some_where_positive(&mut self, p: &Permission, span: Span) -> R<Permission> {
        let w = self.fresh_amount(span)?;
        self.assume(Term::implies(p.is_positive(), w.is_positive()), span)?;
        Ok(Permission(Term::ite(
            p.is_positive(),
            w.0,
            Permission::none().0,
        )))
    }

    /// A fresh, unconstrained amount (bounded by the functions above).
    fn fresh_amount(&mut self, span: Span) -> R<Permission> {
        Ok(Permission(self.fresh("wildcard", Sort::Real, span)?))
    }

    /// Adds `amount` of `resource(args)` with snapshot `snap` (unknown if `None`), merging
    /// with a chunk of the same location (see [`resources::add`]).
    pub fn produce_resource(
        &mut self,
        st: &mut State,
        resource: &Resource,
        args: Vec<Term>,
        amount: Permission,
        snap: Option<Term>,
        span: Span,
    ) -> R<()> {
        self.produce_resource_in(&mut st.heap, resource, args, amount, snap, span)
    }

    /// [`Verifier::produce_resource`] into `heap`.
    pub fn produce_resource_in(
        &mut self,
        heap: &mut Heap,
        resource: &Resource,
        args: Vec<Term>,
        amount: Permission,
        snap: Option<Term>,
        span: Span,
    ) -> R<()> {
        if amount.is_literally_none() {
            return Ok(());
        }
        let sort = self.resource_sort(resource, span)?;
        self.mention_instance(resource, &args, span)?;
        let guard = self.guard();
        // A definitional axiom's premises may not mention labels of this path.
        let distinctness = if self.modes.in_axiom {
            resources::Distinctness::Pairs
        } else {
            resources::Distinctness::Labels
        };
        let addition = resources::Addition {
            resource,
            args,
            amount,
            snap,
            sort: &sort,
        };
        resources::add(
            &mut self.decider,
            self.env,
            heap,
            addition,
            &guard,
            distinctness,
        )
        .map_err(|e| self.solver_failed(e, span))
    }

    /// Removes `amount` (`None`: some positive amount, for `wildcard`) of `resource(args)`
    /// from the state's heap and returns its snapshot (see [`Verifier::consume_from`]).
    pub fn consume_resource(
        &mut self,
        st: &mut State,
        resource: &Resource,
        args: &[Term],
        amount: Option<Permission>,
        at: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        self.consume_from(&mut [&mut st.heap], resource, args, amount, at, ctx)
    }

    /// Removes `amount` (`None`: some positive amount) of `resource(args)` from a stack of
    /// heaps, in order: as much as the first holds, the rest from the next, and so on (a
    /// wand's package takes from what its left-hand side provides before the current
    /// state). Returns the location's snapshot. Missing permission is reported with `ctx` at
    /// `at`.
    pub fn consume_from(
        &mut self,
        heaps: &mut [&mut Heap],
        resource: &Resource,
        args: &[Term],
        amount: Option<Permission>,
        at: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let span = at.span;
        self.mention_instance(resource, args, span)?;
        if self.modes.assuming {
            return self.assume_held(heaps, resource, args, amount, span);
        }
        match heaps {
            [heap] => self.take_from_heap(heap, resource, args, amount, at, ctx),
            _ => self.take_from_stack(heaps, resource, args, amount, at, ctx),
        }
    }

    /// [`Verifier::consume_from`] with one heap: from one chunk that holds enough, else
    /// spread over the chunks that may be the location.
    fn take_from_heap(
        &mut self,
        heap: &mut Heap,
        resource: &Resource,
        args: &[Term],
        amount: Option<Permission>,
        at: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let span = at.span;
        self.extract_missing(heap, resource, args, amount.as_ref(), span)?;
        let guard = self.guard();
        let found = self.find(heap, resource, args, span)?;
        // Where nothing is checked, the chunk found is taken from alone only if it is the
        // only chunk of its resource or holds the amount: its snapshot is the location's
        // value only where it holds some (see `value_through`); else the amount is spread.
        let enough = match found {
            Some(i) => {
                // Read amounts may be chosen small against this chunk first (see
                // `bound_read_amounts`), and against all that may be the location below.
                let held = resources::amount_at(heap, i).clone();
                if let Some(p) = &amount {
                    self.bound_read_amounts(&held, p, span)?;
                }
                let covers = held.covers(amount.as_ref());
                let alone = resources::alone_of_its_resource(heap, i);
                (!self.modes.checking && (alone || self.decider.knows(&covers)))
                    || self.prove(covers, span)?
            }
            None => false,
        };
        if let (Some(i), true) = (found, enough) {
            let taken = match amount {
                Some(p) => p,
                None => {
                    let held = resources::amount_at(heap, i).clone();
                    self.some_of(&held, &guard, span)?
                }
            };
            return Ok(resources::take_at(heap, i, &taken.when(&guard)));
        }
        // Spread over chunks whose arguments may be equal.
        let total = resources::perm_of(&*heap, resource, args);
        if let Some(p) = &amount {
            self.bound_read_amounts(&total, p, span)?;
        }
        if !self.modes.checking || self.prove(total.covers(amount.as_ref()), span)? {
            let otherwise = self.fresh_value(resource, span)?;
            let snap = match amount {
                Some(p) => resources::take_greedily_with_snapshot(
                    heap,
                    resource,
                    args,
                    &p.when(&guard),
                    Some(otherwise),
                ),
                // Some positive amount (wildcard, or inside a function) of a location held
                // in chunks whose arguments may be equal: some of each chunk that is it.
                None => {
                    self.take_some_of_each(heap, resource, args, &guard, Some(otherwise), span)?
                }
            };
            return Ok(snap.unwrap_or_else(Term::tt));
        }
        if !self.modes.checking || self.dead_path(span)? {
            return self.fresh_value(resource, span);
        }
        self.report(ctx, missing_reason(resource), at);
        Err(Abort::Failed)
    }

    /// [`Verifier::consume_from`] with several heaps: the stack must hold the amount in
    /// total; each heap gives what it holds up to what is still needed (the last one the
    /// rest), and a wildcard takes some of the first heap that holds any. The snapshot is
    /// that of the first heap holding the location (heaps agree where both hold it).
    fn take_from_stack(
        &mut self,
        heaps: &mut [&mut Heap],
        resource: &Resource,
        args: &[Term],
        amount: Option<Permission>,
        at: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let span = at.span;
        let guard = self.guard();
        let (held, total) = held_in(heaps, resource, args);
        if let Some(p) = &amount {
            self.bound_read_amounts(&total, p, span)?;
        }
        let enough = total.covers(amount.as_ref());
        if self.modes.checking && !self.prove(enough, span)? {
            if self.dead_path(span)? {
                return self.fresh_value(resource, span);
            }
            self.report(ctx, missing_reason(resource), at);
            return Err(Abort::Failed);
        }
        let mut snap = self.fresh_value(resource, span)?;
        for (heap, h) in heaps.iter().zip(&held).rev() {
            let value = resources::value_of(heap, resource, args, snap.clone());
            snap = Term::ite(h.is_positive(), value, snap);
        }
        match amount {
            Some(p) => take_in_order(heaps, &held, resource, args, p, &guard),
            None => {
                let mut none_before = guard.clone();
                for (i, heap) in heaps.iter_mut().enumerate() {
                    let here = Term::and([none_before.clone(), held[i].is_positive()]);
                    self.take_some_of_each(heap, resource, args, &here, None, span)?;
                    none_before = Term::and([none_before, Term::not(held[i].is_positive())]);
                }
            }
        }
        Ok(snap)
    }

    /// Takes some positive amount of each chunk that is `resource(args)` and holds some of
    /// it, where `when` holds; returns the location's snapshot when `otherwise` is given.
    fn take_some_of_each(
        &mut self,
        heap: &mut Heap,
        resource: &Resource,
        args: &[Term],
        when: &Term,
        otherwise: Option<Term>,
        span: Span,
    ) -> R<Option<Term>> {
        resources::take_from_all(heap, resource, args, when, otherwise, |same, perm| {
            let this_one = Term::and([when.clone(), same, perm.is_positive()]);
            let w = self.some_of(perm, &this_one, span)?;
            Ok(Permission(Term::ite(this_one, w.0, Permission::none().0)))
        })
    }

    /// `assume acc(resource(args), amount)` (`None`: wildcard, some positive amount):
    /// assumes the stack of heaps holds the location to that amount (where the guards
    /// hold) and takes the amount from the chunks that may be it, in order. Returns an
    /// unconstrained snapshot (an assumption does not look at the contents). See
    /// `impure_assume`.
    pub fn assume_held(
        &mut self,
        heaps: &mut [&mut Heap],
        resource: &Resource,
        args: &[Term],
        amount: Option<Permission>,
        span: Span,
    ) -> R<Term> {
        let guard = self.guard();
        let (held, total) = held_in(heaps, resource, args);
        let needed = total.covers(amount.as_ref());
        self.assume(Term::implies(guard.clone(), needed), span)?;
        // A wildcard takes nothing: later amounts are then assumed less strictly, which
        // only assumes less.
        if let Some(p) = amount {
            take_in_order(heaps, &held, resource, args, p, &guard);
        }
        self.fresh_value(resource, span)
    }

    /// Adds what `frame` holds (taken out of the state earlier: a loop's frame) back to the
    /// state, outside any guard (the amounts already say when they are held).
    pub fn readd_frame(&mut self, st: &mut State, frame: &Heap, span: Span) -> R<()> {
        let guards = std::mem::take(&mut self.member.guards);
        let r = (|| -> R<()> {
            for h in resources::held(frame, None) {
                self.produce_resource(st, &h.resource, h.args, h.perm, Some(h.snap), span)?;
            }
            resources::copy_quantified(frame, &mut st.heap);
            Ok(())
        })();
        self.member.guards = guards;
        r
    }

    /// Whether the current path is infeasible (then every check holds vacuously).
    pub fn dead_path(&mut self, span: Span) -> R<bool> {
        self.prove(Term::ff(), span)
    }
}

/// Takes `amount` of `resource(args)` from a stack of heaps holding `held` each: from each
/// heap what it holds up to what is still needed, the rest from the last (the caller has
/// proved or assumed that the stack holds enough).
fn take_in_order(
    heaps: &mut [&mut Heap],
    held: &[Permission],
    resource: &Resource,
    args: &[Term],
    amount: Permission,
    guard: &Term,
) {
    let mut remaining = amount;
    let last = heaps.len() - 1;
    for (i, heap) in heaps.iter_mut().enumerate() {
        let taken = if i == last {
            remaining.clone()
        } else {
            Permission(Term::ite(
                held[i].at_least(&remaining),
                remaining.0.clone(),
                held[i].0.clone(),
            ))
        };
        resources::take_greedily(heap, resource, args, &taken.when(guard));
        remaining = remaining.sub(&taken);
    }
}

/// How much of `resource(args)` each heap of a stack holds, and all of them together.
fn held_in(
    heaps: &[&mut Heap],
    resource: &Resource,
    args: &[Term],
) -> (Vec<Permission>, Permission) {
    let held: Vec<Permission> = heaps
        .iter()
        .map(|h| resources::perm_of(h, resource, args))
        .collect();
    let total = held.iter().fold(Permission::none(), |sum, h| sum.add(h));
    (held, total)
}

/// Why a consumption of `resource` failed: a wand is not found, anything else is not held
/// with enough permission.
pub(crate) fn missing_reason(resource: &Resource) -> Reason {
    match resource {
        Resource::Wand(_) => Reason::WandNotFound,
        Resource::Field(_) | Resource::Predicate(_) => Reason::InsufficientPermission,
    }
}
