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
use crate::state::{Chunk, Heap, Permission, Resource, State};

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
            Resource::Predicate(_) => Ok(self.env.snap.sort.clone()),
        }
    }

    /// An unconstrained value of `resource`.
    pub fn fresh_value(&mut self, resource: &Resource, span: Span) -> R<Term> {
        let sort = self.resource_sort(resource, span)?;
        let base = match resource {
            Resource::Field(f) => f.clone(),
            Resource::Predicate(p) => format!("snap.{p}"),
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
        let otherwise = self.fresh_value(resource, span)?;
        Ok(resources::value_of(heap, resource, args, otherwise))
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
        if amount.is_literally_none() {
            return Ok(());
        }
        let sort = self.resource_sort(resource, span)?;
        let guard = self.guard();
        resources::add(
            &mut self.decider,
            self.env,
            &mut st.heap,
            resource,
            args,
            amount,
            snap,
            &sort,
            &guard,
        )
        .map_err(|e| self.solver_failed(e, span))
    }

    /// Removes `amount` (`None`: some positive amount, for `wildcard`) of `resource(args)`
    /// and returns its snapshot: from one chunk that holds enough, else spread over the
    /// chunks that may be the location. Missing permission is reported with `ctx` at `at`.
    pub fn consume_resource(
        &mut self,
        st: &mut State,
        resource: &Resource,
        args: &[Term],
        amount: Option<Permission>,
        at: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let span = at.span;
        if self.modes.assuming {
            return self.assume_held(st, resource, args, amount, span);
        }
        let guard = self.guard();
        let found = self.find(&st.heap.clone(), resource, args, span)?;
        let enough = match (found, &amount) {
            (Some(i), Some(p)) => {
                !self.modes.checking || self.prove(st.heap.chunks[i].perm.at_least(p), span)?
            }
            (Some(i), None) => {
                !self.modes.checking || self.prove(st.heap.chunks[i].perm.is_positive(), span)?
            }
            (None, _) => false,
        };
        if let (Some(i), true) = (found, enough) {
            let chunk = st.heap.chunks[i].clone();
            let taken = match amount {
                Some(p) => p,
                None => self.some_of(&chunk.perm, &guard, span)?,
            };
            st.heap.chunks[i].perm = chunk.perm.sub(&taken.when(&guard));
            st.heap.drop_empty();
            return Ok(chunk.snap);
        }
        // Spread over chunks whose arguments may be equal.
        let total = resources::perm_of(&st.heap, resource, args);
        let spread = match &amount {
            Some(p) => self.prove(total.at_least(p), span)?,
            None => self.prove(total.is_positive(), span)?,
        };
        if spread {
            let otherwise = self.fresh_value(resource, span)?;
            let snap = match amount {
                Some(p) => {
                    let mut remaining = p.when(&guard);
                    resources::take_from_all(
                        &mut st.heap,
                        resource,
                        args,
                        &Term::tt(),
                        Some(otherwise),
                        |same, perm| -> R<Permission> {
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
                    )?
                }
                // Some positive amount (wildcard, or inside a function) of a location held
                // in chunks whose arguments may be equal: some of each chunk that is it.
                None => resources::take_from_all(
                    &mut st.heap,
                    resource,
                    args,
                    &guard.clone(),
                    Some(otherwise),
                    |same, perm| {
                        let this_one = Term::and([guard.clone(), same, perm.is_positive()]);
                        let w = self.some_of(perm, &this_one, span)?;
                        Ok(Permission(Term::ite(this_one, w.0, Permission::none().0)))
                    },
                )?,
            };
            return Ok(snap.unwrap_or_else(Term::tt));
        }
        if !self.modes.checking || self.dead_path(span)? {
            return self.fresh_value(resource, span);
        }
        self.report(ctx, Reason::InsufficientPermission, at);
        Err(Abort::Failed)
    }

    /// `assume acc(resource(args), amount)` (`None`: wildcard, some positive amount):
    /// assumes the location is held to that amount (where the guards hold) and takes the
    /// amount from the chunks that may be it. Returns an unconstrained snapshot (an
    /// assumption does not look at the contents). See `impure_assume`.
    pub fn assume_held(
        &mut self,
        st: &mut State,
        resource: &Resource,
        args: &[Term],
        amount: Option<Permission>,
        span: Span,
    ) -> R<Term> {
        let guard = self.guard();
        let total = resources::perm_of(&st.heap, resource, args);
        let needed = match &amount {
            Some(p) => total.at_least(p),
            None => total.is_positive(),
        };
        self.assume(Term::implies(guard.clone(), needed), span)?;
        // A wildcard takes nothing: later amounts are then assumed less strictly, which
        // only assumes less.
        if let Some(p) = amount {
            resources::take_greedily(&mut st.heap, resource, args, &p.when(&guard));
        }
        self.fresh_value(resource, span)
    }

    /// Adds a chunk taken out of the state earlier (a loop's frame) back to it, outside any
    /// guard (the amount already says when it is held).
    pub fn readd_chunk(&mut self, st: &mut State, c: &Chunk, span: Span) -> R<()> {
        let guards = std::mem::take(&mut self.guards);
        let r = self.produce_resource(
            st,
            &c.resource,
            c.args.clone(),
            c.perm.clone(),
            Some(c.snap.clone()),
            span,
        );
        self.guards = guards;
        r
    }

    /// Whether the current path is infeasible (then every check holds vacuously).
    pub fn dead_path(&mut self, span: Span) -> R<bool> {
        self.prove(Term::ff(), span)
    }
}
