//! Quantified permissions, `forall xs :: c(xs) ==> acc(e(xs).f, p(xs))` and
//! `forall xs :: c(xs) ==> acc(P(e1(xs), ...), p(xs))`, produced and consumed as quantified
//! chunks (see `resources::location`).
//!
//! Each is read at fresh constants standing for `xs` (so well-definedness is checked for
//! arbitrary `xs`), then turned into terms over bound variables. The amount held of a
//! location `rs` is `p(inv(rs))` where `c(inv(rs))` and `e(inv(rs)) == rs`, with `inv` one
//! inverse function per bound variable, `c(xs) && p(xs) > 0 ==> inv(e(xs)) == xs`, assumed
//! once the receivers are checked injective where the amount is positive
//! (`qp.not.injective`). Consuming checks the amount at an arbitrary location (fresh
//! constants) against what all chunks hold there, then takes it from them in order. Values
//! at the locations are a fresh function of the location (a value map), or the snapshot's
//! lookup when produced from a snapshot (see `quantified_snapshots`).
//!
//! Inside functions (and for `wildcard`) an access needs only some positive amount where
//! its amount is positive: a precondition is checked there, not taken.

use std::collections::HashMap;

use germanium_smt::{substitute, FunDecl, Sort, Symbol, Term};
use germanium_syntax::ast::{Expr, ExprKind};

use crate::env::analysis::is_wand;
use crate::errors::{ErrorContext, Reason};
use crate::resources;
use crate::rules::access::missing_reason;
use crate::rules::context::{Abort, Verifier, R};
use crate::rules::quantified_access::applications_at;
pub(crate) use crate::rules::quantified_access::{location_vars, var_terms, Access};
use crate::rules::quantified_parts::BodyParts;
use crate::rules::triggers;
use crate::state::{Heap, Permission, Resource, State};

impl<'e, 'a> Verifier<'e, 'a> {
    /// Whether a quantified assertion can be handled here (see the module documentation).
    fn quantified_supported(&mut self, e: &Expr) -> R<()> {
        if self.modes.assuming {
            return Err(self.unsupported(e.span, "quantified permissions in an assumption"));
        }
        Ok(())
    }

    /// Produces `forall ... :: c ==> acc(loc, p)` (the quantifier `e`), from `snap` if given.
    pub(crate) fn produce_quantified(
        &mut self,
        st: &mut State,
        e: &Expr,
        snap: Option<Term>,
        ctx: &ErrorContext,
    ) -> R<()> {
        self.quantified_supported(e)?;
        let body = BodyParts::of_quantifier(self.env.sem, e);
        let n = body.accesses().count();
        let mut snaps: Vec<Option<Term>> = match &snap {
            Some(s) => self.env.snap.split(s, n).into_iter().map(Some).collect(),
            None => vec![None; n],
        };
        snaps.reverse();
        // In order: a part reads the heap with the parts before it produced.
        let mut k = 0;
        for part in &body.parts {
            let heap = st.heap.clone();
            if part.pure {
                let t = self.eval_pure_part(st, &heap, e, part, ctx)?;
                self.assume_guarded(t, e.span)?;
                continue;
            }
            let access = self.quantified_access_at(st, &heap, e, k, ctx)?;
            k += 1;
            self.produce_access(st, access, snaps.pop().flatten(), e, ctx)?;
        }
        Ok(())
    }

    /// Produces one access of the quantifier `e`, from `part` (its part of the snapshot) if
    /// given.
    fn produce_access(
        &mut self,
        st: &mut State,
        mut access: Access,
        part: Option<Term>,
        e: &Expr,
        ctx: &ErrorContext,
    ) -> R<()> {
        if self.modes.in_axiom {
            let Some(part) = part else {
                return Err(self.unsupported(e.span, "quantified permissions here"));
            };
            return self.produce_in_axiom(st, &access, part, e);
        }
        if matches!(&access.resource, Resource::Predicate(p) if self.env.wand_predicates.contains(p))
        {
            return Err(self.unsupported(
                e.span,
                "quantified permissions to a predicate holding a magic wand",
            ));
        }
        self.check_quantified(&access, e, ctx)?;
        if access.some {
            // Some positive amount, the same at every location.
            let w = self.some_amount(e.span)?;
            access.amount = Permission(Term::ite(
                access.amount.is_positive(),
                w.0,
                Permission::none().0,
            ));
        }
        let (rs, held) = self.held_map(&access, e)?;
        let value = match part {
            Some(s) => self.snapshot_maps(&access.resource, s, &rs, e.span)?.0,
            None => self.fresh_value_map(&access.resource, &rs, e.span)?,
        };
        if access.is_field() {
            // Held receivers are not null: `null.f` is not held (a ground fact).
            let at_null = [(var_terms(&rs).remove(0), self.env.null())]
                .into_iter()
                .collect();
            let fact = Term::not(Permission(substitute(&held.0, &at_null)).is_positive());
            self.assume(fact, e.span)?;
        }
        // For a chunk that names its locations, the applications of its condition there
        // (`r in xs`), as patterns. Not inverses: their terms are at every location asked
        // about.
        let conditions = match access.identity() {
            Some(_) => applications_at(&held.0, &var_terms(&rs)),
            None => Vec::new(),
        };
        let maps = NewMaps {
            rs: &rs,
            held: &held,
            value: &value,
            conditions: &conditions,
        };
        self.assume_consistent(&st.heap, &access.resource, &maps, e.span)?;
        self.mention_values_where_held(&maps, e.span)?;
        resources::add_quantified(&mut st.heap, &access.resource, rs, value, held);
        Ok(())
    }

    /// Wherever the condition of a chunk that names its locations directly is mentioned
    /// (`r in xs`), its value there is too: a quantifier triggered by a read of the location
    /// (`{x.f}`) then applies to the locations the program says are held.
    fn mention_values_where_held(&mut self, maps: &NewMaps, span: germanium_syntax::Span) -> R<()> {
        let symbols = maps.symbols();
        let patterns: Vec<Vec<Term>> = maps
            .conditions
            .iter()
            .map(|app| vec![app.clone()])
            .filter(|set| triggers::valid_pattern(&symbols, set))
            .collect();
        if patterns.is_empty() || !triggers::pattern_safe(maps.value) {
            return Ok(());
        }
        let relevant = self.relevance_predicate(maps.value.sort(), span)?;
        let fact = Term::implies(
            maps.held.is_positive(),
            Term::app(&relevant, vec![maps.value.clone()]),
        );
        self.assume(Term::forall(maps.rs.to_vec(), fact, patterns), span)
    }

    /// What a new quantified chunk and the chunks `heap` already holds of its resource say
    /// together: no location held beyond what the resource allows, one value where both
    /// hold some. At the locations of single chunks as ground facts, elsewhere triggered by
    /// the chunks' value maps, and by the new chunk's condition with what an earlier chunk's
    /// amount applies there (`a in xs` and `a in ys` cannot both hold `write` of `a.f`).
    fn assume_consistent(
        &mut self,
        heap: &Heap,
        resource: &Resource,
        maps: &NewMaps,
        span: germanium_syntax::Span,
    ) -> R<()> {
        let NewMaps {
            rs, held, value, ..
        } = *maps;
        let singles = resources::held(heap, Some(resource));
        if singles.is_empty() && !resources::holds_quantified(heap, Some(resource)) {
            return Ok(());
        }
        let r = var_terms(rs);
        let before = resources::perm_of(heap, resource, &r);
        let other_value = resources::value_of(heap, resource, &r, value.clone());
        let both = Term::and([held.is_positive(), before.is_positive()]);
        let mut facts = vec![Term::implies(both, Term::eq(value.clone(), other_value))];
        if let Some(max) = resource.max_amount() {
            facts.push(held.add(&before).at_most(&max));
        }
        let fact = Term::and(facts);
        for single in singles {
            let at: HashMap<Term, Term> = r.iter().cloned().zip(single.args).collect();
            self.assume(substitute(&fact, &at), span)?;
        }
        let symbols = maps.symbols();
        let mut value_maps = resources::quantified_value_maps(heap, resource, &r);
        value_maps.push(value.clone());
        let mut patterns: Vec<Vec<Term>> = value_maps
            .into_iter()
            .map(|m| vec![m])
            .filter(|set| triggers::valid_pattern(&symbols, set))
            .collect();
        if let Some(new) = maps.conditions.first() {
            for earlier in applications_at(&before.0, &r) {
                if !maps.conditions.contains(&earlier) {
                    patterns.push(vec![new.clone(), earlier]);
                }
            }
        }
        if !patterns.is_empty() {
            self.assume(Term::forall(rs.to_vec(), fact, patterns), span)?;
        }
        Ok(())
    }

    /// A function's definition reads values off its snapshot only: the chunk holds the
    /// locations of the snapshot's domain (an amount that mentions nothing of a path).
    fn produce_in_axiom(&mut self, st: &mut State, access: &Access, part: Term, e: &Expr) -> R<()> {
        let sorts: Vec<Sort> = access.args.iter().map(|a| a.sort().clone()).collect();
        let rs = location_vars(self, &sorts);
        let (value, domain) = self.snapshot_maps(&access.resource, part, &rs, e.span)?;
        let w = Term::constant(&crate::rules::produce::axiom_wildcard());
        let held = Permission(Term::ite(domain, w, Permission::none().0));
        resources::add_quantified(&mut st.heap, &access.resource, rs, value, held);
        Ok(())
    }

    /// A fresh function of the locations: their unknown values.
    fn fresh_value_map(
        &mut self,
        resource: &Resource,
        rs: &[(Symbol, Sort)],
        span: germanium_syntax::Span,
    ) -> R<Term> {
        let sort = self.resource_sort(resource, span)?;
        let map = FunDecl::new(
            self.decider
                .fresh_symbol(&format!("qv.{}", resource.name())),
            rs.iter().map(|(_, s)| s.clone()).collect(),
            sort,
        );
        self.ensure_declared(&map, span)?;
        Ok(Term::app(&map, var_terms(rs)))
    }

    /// Consumes `forall ... :: c ==> acc(loc, p)` (the quantifier `e`) from `st`.
    pub(crate) fn consume_quantified(
        &mut self,
        st: &mut State,
        eval_heap: &Heap,
        e: &Expr,
        ctx: &ErrorContext,
    ) -> R<()> {
        let body = BodyParts::of_quantifier(self.env.sem, e);
        let mut accesses = self.quantified_accesses(st, eval_heap, e, ctx)?.into_iter();
        for part in &body.parts {
            if part.pure {
                let reported = self.errors.len();
                let t = self.with_perm_heap(Some(st.heap.clone()), |v| {
                    v.eval_pure_part(st, eval_heap, e, part, ctx)
                })?;
                self.consume_pure(t, e, reported, ctx)?;
                continue;
            }
            let Some(access) = accesses.next() else {
                break;
            };
            if self.modes.assuming {
                self.assume_quantified_held(st, &access, e)?;
                continue;
            }
            if self.modes.positive_only {
                // A function's precondition is checked where it is applied, not taken: some
                // of each location at an arbitrary instance.
                let held = resources::perm_of(&st.heap, &access.resource, &access.args);
                let enough = Term::implies(access.positive(), held.is_positive());
                self.require_held(enough, &access, e, ctx)?;
                continue;
            }
            self.check_quantified(&access, e, ctx)?;
            let (rs, needed) = self.held_map(&access, e)?;
            let resource = access.resource.clone();
            // What is needed at an arbitrary location, against what is held there.
            let mut somewhere = Vec::new();
            for (_, sort) in &rs {
                somewhere.push(self.fresh("r", sort.clone(), e.span)?);
            }
            let to_somewhere: HashMap<Term, Term> = var_terms(&rs)
                .into_iter()
                .zip(somewhere.iter().cloned())
                .collect();
            self.extract_quantified(&mut st.heap, &resource, &rs, &needed, &to_somewhere, e.span)?;
            let total = resources::perm_of(&st.heap, &resource, &somewhere);
            let here = Permission(substitute(&needed.0, &to_somewhere));
            // The same amount at every location: read amounts in it may be chosen small.
            let uniform = match (self.env.read_permissions, access.some) {
                (true, false) => access.uniform_amount().cloned(),
                _ => None,
            };
            if let Some(amount) = &uniform {
                self.under(here.is_positive(), |v| {
                    v.bound_read_amounts_everywhere(&total, amount, e.span)
                })?;
            }
            let enough = if access.some {
                Term::implies(here.is_positive(), total.is_positive())
            } else {
                here.at_most(&total)
            };
            if !access.some
                && self.take_from_likely_source(
                    st,
                    &resource,
                    &rs,
                    &needed,
                    &here,
                    &somewhere,
                    uniform.as_ref(),
                    e,
                )?
            {
                continue;
            }
            self.require_held(enough, &access, e, ctx)?;
            let taken = if access.some {
                self.some_of_each(&st.heap, &access, &rs, &needed, e)?
            } else {
                needed
            };
            resources::take_quantified(&mut self.decider, &mut st.heap, &resource, &rs, &taken)
                .map_err(|err| self.solver_failed(err, e.span))?;
        }
        Ok(())
    }

    /// Takes `needed` (over `rs`; `here` at the fresh location `somewhere`) from one
    /// quantified chunk alone if one likely to hold it all (made for the same constants)
    /// is proved to: the other chunks stay as they are, so later takes stay small.
    #[allow(clippy::too_many_arguments)]
    fn take_from_likely_source(
        &mut self,
        st: &mut State,
        resource: &Resource,
        rs: &[(Symbol, Sort)],
        needed: &Permission,
        here: &Permission,
        somewhere: &[Term],
        uniform: Option<&Permission>,
        e: &Expr,
    ) -> R<bool> {
        if let Some(p) = uniform {
            // Read amounts in what is needed may be chosen small against what each likely
            // chunk holds, both the same everywhere (no bound per location).
            for i in resources::likely_sources(&st.heap, resource, &needed.0)
                .into_iter()
                .take(2)
            {
                if let Some(held) = resources::uniform_amount(&st.heap, i) {
                    self.bound_read_amounts(&held, p, e.span)?;
                }
            }
        }
        let enough = |one: &Permission| here.at_most(one);
        let holder =
            self.likely_holder(&st.heap, resource, &needed.0, somewhere, enough, e.span)?;
        let Some(index) = holder else {
            return Ok(false);
        };
        let one = resources::amount_at_location(&st.heap, index, somewhere);
        if self.prove(one.at_most(here), e.span)? {
            // All of it: the chunk goes (no empty map left for later sums).
            resources::remove_at(&mut st.heap, index);
        } else {
            resources::take_quantified_from(&mut self.decider, &mut st.heap, index, rs, needed)
                .map_err(|err| self.solver_failed(err, e.span))?;
        }
        Ok(true)
    }

    /// `assume forall xs :: c ==> acc(loc, p)` (see `impure_assume`): assumes that `st`
    /// holds `p` at every such location, then takes it from `st` (a scratch state), so a
    /// later access of the same resource must be held on top of it. The locations must be
    /// injective (the inverses would be contradictory otherwise; not checked, as nothing is
    /// in an assumption, but proved).
    fn assume_quantified_held(&mut self, st: &mut State, access: &Access, e: &Expr) -> R<()> {
        if access.identity().is_none() {
            let injective = self.injectivity(access, e)?;
            if !self.prove(injective, e.span)? {
                return Err(self.unsupported(
                    e.span,
                    "quantified permissions to locations that may not be injective in an assumption",
                ));
            }
        }
        let held = resources::perm_of(&st.heap, &access.resource, &access.args);
        let enough = if access.some {
            held.is_positive()
        } else {
            access.amount.at_most(&held)
        };
        let fact = access.to_vars(&Term::implies(access.positive(), enough));
        let patterns = access.patterns();
        self.assume(Term::forall(access.vars.clone(), fact, patterns), e.span)?;
        if access.some {
            // Some positive amount: nothing taken (later amounts are assumed less strictly,
            // which only assumes less).
            return Ok(());
        }
        let (rs, needed) = self.held_map(access, e)?;
        resources::take_quantified(
            &mut self.decider,
            &mut st.heap,
            &access.resource,
            &rs,
            &needed,
        )
        .map_err(|err| self.solver_failed(err, e.span))
    }

    /// The resource, location expression, argument expressions and amount of `acc` (an
    /// accessibility predicate of a field or a predicate instance under a quantifier).
    pub(crate) fn access_parts<'x>(
        &mut self,
        acc: &'x Expr,
    ) -> Option<(Resource, &'x Expr, Vec<&'x Expr>, Option<&'x Expr>)> {
        if is_wand(acc) {
            // One instance of a wand; its holes are the arguments.
            let (resource, holes) = self.wand_resource(acc).ok()?;
            return Some((resource, acc, holes, None));
        }
        if let Some(pa) = self.as_predicate_access(acc) {
            let args = pa.args.iter().collect();
            return Some((Resource::Predicate(pa.name), pa.call, args, pa.amount));
        }
        let ExprKind::Acc(loc, amount) = &acc.kind else {
            return None;
        };
        let ExprKind::FieldAccess(rcv, _) = &loc.kind else {
            return None;
        };
        match self.env.sem.field_access(loc.id) {
            Some(germanium_semantics::FieldTarget::Field(f)) => Some((
                Resource::Field(f.clone()),
                &**loc,
                vec![&**rcv],
                amount.as_deref(),
            )),
            _ => None,
        }
    }

    /// The value maps a trigger `x` matches on when it reads a field at locations held
    /// through quantified chunks, or names a predicate instance (its instance mark and the
    /// value maps of the quantified chunks holding it; `None`: neither).
    pub(crate) fn trigger_value_maps(
        &mut self,
        st: &State,
        heap: &Heap,
        x: &Expr,
        ctx: &ErrorContext,
    ) -> R<Option<Vec<Term>>> {
        let instance = match self.as_predicate_access(x) {
            Some(pa) => Some((Resource::Predicate(pa.name), pa.args.iter().collect())),
            None if is_wand(x) => Some(self.wand_resource(x)?),
            None => None,
        };
        if let Some((resource, arg_exprs)) = instance {
            let mut args = Vec::new();
            for a in arg_exprs {
                match self.eval(st, heap, a, ctx) {
                    Ok(t) => args.push(t),
                    Err(Abort::Failed) => return Ok(Some(Vec::new())),
                    Err(other) => return Err(other),
                }
            }
            let mut maps = vec![self.instance_mark(&resource, args.clone(), x.span)?];
            maps.extend(
                resources::quantified_value_maps(heap, &resource, &args)
                    .into_iter()
                    .filter(triggers::pattern_safe),
            );
            return Ok(Some(maps));
        }
        let ExprKind::FieldAccess(rcv, _) = &x.kind else {
            return Ok(None);
        };
        let Some(germanium_semantics::FieldTarget::Field(field)) = self.env.sem.field_access(x.id)
        else {
            return Ok(None);
        };
        let resource = Resource::Field(field.clone());
        let marked = self.marks_instances(&resource);
        if !marked && !resources::holds_quantified(heap, Some(&resource)) {
            return Ok(None);
        }
        let r = match self.eval(st, heap, rcv, ctx) {
            Ok(r) => r,
            Err(Abort::Failed) => return Ok(None),
            Err(other) => return Err(other),
        };
        let mut maps: Vec<Term> =
            resources::quantified_value_maps(heap, &resource, std::slice::from_ref(&r))
                .into_iter()
                .filter(triggers::pattern_safe)
                .collect();
        // Where a chunk of one location may hold it, the mark too: reads of a marked field
        // are mentioned wherever they happen (not otherwise: an alternative more
        // multiplies the instances).
        if marked && (maps.is_empty() || !resources::held(heap, Some(&resource)).is_empty()) {
            maps.push(self.instance_mark(&resource, vec![r], x.span)?);
        }
        Ok((!maps.is_empty()).then_some(maps))
    }

    /// Checks `enough` (when checking), reporting missing permission at the access.
    fn require_held(
        &mut self,
        enough: Term,
        access: &Access,
        e: &Expr,
        ctx: &ErrorContext,
    ) -> R<()> {
        if self.modes.checking && !self.prove(enough, e.span)? && !self.dead_path(e.span)? {
            self.report(ctx, missing_reason(&access.resource), access.loc);
            return Err(Abort::Failed);
        }
        Ok(())
    }

    /// Some positive amount, less than what is held, of each location where `needed` is
    /// positive (a quantified `wildcard`): a fresh function of the locations.
    fn some_of_each(
        &mut self,
        heap: &Heap,
        access: &Access,
        rs: &[(Symbol, Sort)],
        needed: &Permission,
        e: &Expr,
    ) -> R<Permission> {
        let w = FunDecl::new(
            self.decider.fresh_symbol("wildcard.q"),
            rs.iter().map(|(_, s)| s.clone()).collect(),
            Sort::Real,
        );
        self.ensure_declared(&w, e.span)?;
        let at = Permission(Term::app(&w, var_terms(rs)));
        let total = resources::perm_of(heap, &access.resource, &var_terms(rs));
        let bounds = Term::and([at.is_positive(), Term::lt(at.0.clone(), total.0.clone())]);
        let fact = Term::implies(
            Term::and([needed.is_positive(), total.is_positive()]),
            bounds,
        );
        self.assume(
            Term::forall(rs.to_vec(), fact, vec![vec![at.0.clone()]]),
            e.span,
        )?;
        Ok(Permission(Term::ite(
            needed.is_positive(),
            at.0,
            Permission::none().0,
        )))
    }

    /// The parts `c ==> acc(loc, p)` of the quantifier `e`, read in `heap`.
    pub(crate) fn quantified_accesses<'x>(
        &mut self,
        st: &State,
        heap: &Heap,
        e: &'x Expr,
        ctx: &ErrorContext,
    ) -> R<Vec<Access<'x>>> {
        self.read_quantified(st, heap, e, None, ctx)
    }

    /// The `k`-th access of the quantifier `e`, read in `heap`.
    fn quantified_access_at<'x>(
        &mut self,
        st: &State,
        heap: &Heap,
        e: &'x Expr,
        k: usize,
        ctx: &ErrorContext,
    ) -> R<Access<'x>> {
        let mut one = self.read_quantified(st, heap, e, Some(k), ctx)?;
        one.pop()
            .ok_or_else(|| self.unsupported(e.span, "this quantified assertion"))
    }

    /// The accesses of the quantifier `e` (only the `k`-th if `only` is `Some(k)`).
    fn read_quantified<'x>(
        &mut self,
        st: &State,
        heap: &Heap,
        e: &'x Expr,
        only: Option<usize>,
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
            let (var, symbol, constant) = self.bound_variable(e, i)?;
            vars.push(symbol);
            at.push(constant);
            bound.push(var);
        }
        let parts = BodyParts::of(self.env.sem, body);
        let bindings: Vec<_> = bound.into_iter().zip(at.iter().cloned()).collect();
        let depth = self.member.bound.len();
        self.member.bound.extend(bindings.iter().cloned());
        self.member.quantifier_depth += 1;
        let read = (|| -> R<Vec<Access<'x>>> {
            let mut out = Vec::new();
            for (k, part) in parts.accesses().enumerate() {
                if only.is_some_and(|j| j != k) {
                    continue;
                }
                let (mut vars, mut at) = (vars.clone(), at.clone());
                let cond = self.read_guards(st, heap, &part.guards, &mut vars, &mut at, ctx);
                let access =
                    cond.and_then(|c| self.read_access(st, heap, part.expr, vars, at, c, ctx));
                // The guards' bindings end with the access.
                self.member.bound.truncate(depth + bindings.len());
                out.push(access?);
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
            let mut choices = Vec::new();
            for x in &set.exprs {
                // A predicate instance or a wand matches on its instance mark and the value
                // maps of the chunks holding it.
                if self.as_predicate_access(x).is_some() || is_wand(x) {
                    let maps = self.with_modes(
                        |m| m.checking = false,
                        |v| v.trigger_value_maps(st, heap, x, ctx),
                    )?;
                    choices.push(maps.unwrap_or_default());
                    continue;
                }
                // A read of a location matches on its receiver (the inverse's pattern).
                let x = match &x.kind {
                    ExprKind::FieldAccess(rcv, _) => &**rcv,
                    _ => x,
                };
                if let Ok(t) = self.with_modes(|m| m.checking = false, |v| v.eval(st, heap, x, ctx))
                {
                    choices.push(vec![t]);
                }
            }
            if choices.len() == set.exprs.len() {
                sets.extend(combinations(&choices));
            }
        }
        self.member.bound.truncate(depth);
        for access in &mut accesses {
            let symbols = access.symbols();
            access.triggers = sets
                .iter()
                .map(|set| set.iter().map(|t| access.to_vars(t)).collect::<Vec<_>>())
                .filter(|set| triggers::valid_pattern(&symbols, set))
                .collect();
        }
        Ok(accesses)
    }

    /// One access `acc` under `cond`, read at the constants `at` of the variables `vars`.
    #[allow(clippy::too_many_arguments)]
    fn read_access<'x>(
        &mut self,
        st: &State,
        heap: &Heap,
        acc: &'x Expr,
        vars: Vec<(Symbol, Sort)>,
        at: Vec<Term>,
        cond: Term,
        ctx: &ErrorContext,
    ) -> R<Access<'x>> {
        let Some((resource, loc, arg_exprs, amount_expr)) = self.access_parts(acc) else {
            return Err(self.unsupported(acc.span, "this quantified assertion"));
        };
        let mut args = Vec::new();
        for a in arg_exprs {
            args.push(self.under(cond.clone(), |v| v.eval(st, heap, a, ctx))?);
        }
        let wildcard = amount_expr.is_some_and(crate::rules::read_permissions::is_wildcard);
        let amount = match amount_expr {
            None => Permission::write(),
            Some(_) if wildcard => Permission::write(),
            Some(x) => Permission::of(self.under(cond.clone(), |v| v.eval(st, heap, x, ctx))?),
        };
        let some = wildcard || self.modes.positive_only;
        let amount = if some { amount } else { self.scaled(amount) };
        Ok(Access {
            resource,
            loc,
            amount_expr: amount_expr.filter(|_| !wildcard),
            vars,
            at,
            cond,
            args,
            amount,
            some,
            triggers: Vec::new(),
        })
    }

    /// The checks of a quantified permission: amounts not negative, locations injective
    /// where the amount is positive.
    fn check_quantified(&mut self, access: &Access, e: &Expr, ctx: &ErrorContext) -> R<()> {
        let (c, p) = (&access.cond, &access.amount);
        if let Some(x) = access.amount_expr {
            // The same amount everywhere: read amounts in it may be taken small.
            if let (true, Some(p)) = (self.env.read_permissions, access.uniform_amount()) {
                self.bound_read_amounts(p, &Permission::none(), x.span)?;
            }
            self.check(
                Term::implies(c.clone(), p.is_non_negative()),
                ctx,
                Reason::NegativePermission,
                x,
            )?;
        }
        if access.identity().is_some() {
            return Ok(());
        }
        let fact = self.injectivity(access, e)?;
        // Said once per location: a contract found not well-formed is not reported again
        // where it is consumed (the path ends there instead).
        let reported = self.errors.iter().any(|d| {
            (d.span == access.loc.span || d.span == e.span)
                && d.id.ends_with(Reason::NotInjective.id())
        });
        if reported {
            if !self.prove(fact, e.span)? {
                return Err(Abort::Failed);
            }
            return Ok(());
        }
        // Checked even where nothing else is (a callee's postcondition): the inverse
        // functions assumed next would otherwise be contradictory.
        self.with_modes(
            |m| m.checking = true,
            |v| v.check(fact, ctx, Reason::NotInjective, access.loc),
        )?;
        Ok(())
    }

    /// Injectivity of the access's locations where its amount is positive: two different
    /// instances are different locations.
    pub(crate) fn injectivity(&mut self, access: &Access, e: &Expr) -> R<Term> {
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
            access.positive(),
            access.renamed(&access.positive(), &others),
        ]);
        let args = access.args_as_defined();
        let renamed: Vec<Term> = args.iter().map(|a| access.renamed(a, &others)).collect();
        let distinct = Term::not(resources::same_args(&args, &renamed));
        Ok(Term::implies(both, distinct))
    }

    /// The amount the access holds of each location, over fresh variables `rs` (one per
    /// argument), with the facts about its inverse assumed (and receivers not null where
    /// held).
    pub(crate) fn held_map(
        &mut self,
        access: &Access,
        e: &Expr,
    ) -> R<(Vec<(Symbol, Sort)>, Permission)> {
        let sorts: Vec<Sort> = access.args.iter().map(|a| a.sort().clone()).collect();
        let rs = location_vars(self, &sorts);
        let r_terms = var_terms(&rs);
        let x = |t: &Term| access.to_vars(t);
        let (c, p) = (x(&access.cond), x(&access.amount.0));
        let args: Vec<Term> = access.args.iter().map(x).collect();
        let positive = Term::and([c.clone(), Permission(p.clone()).is_positive()]);
        let not_null = if access.is_field() {
            Term::not(Term::eq(args[0].clone(), self.env.null()))
        } else {
            Term::tt()
        };
        let var_list = var_terms(&access.vars);
        if let Some(positions) = access.identity() {
            // No inverse needed: the location names the instance. (Receivers are not null
            // where held: a produced field map holds nothing of `null`, a ground fact.)
            let ([c_at, p_at], here) = access.projected([&c, &p], &positions, &r_terms);
            let held = Term::ite(Term::and([c_at, here]), p_at, Permission::none().0);
            return Ok((rs, Permission(held)));
        }
        let mut inverses = Vec::new();
        let mut forward = Vec::new();
        for (var, sort) in &access.vars {
            let inverse = FunDecl::new(
                self.decider
                    .fresh_symbol(&format!("inv.{}", access.resource.name())),
                sorts.clone(),
                sort.clone(),
            );
            self.ensure_declared(&inverse, e.span)?;
            forward.push(Term::eq(
                Term::app(&inverse, args.clone()),
                Term::var(var.clone(), sort.clone()),
            ));
            inverses.push(Term::app(&inverse, r_terms.clone()));
        }
        forward.push(not_null);
        // Without a pattern the inverses stay unconstrained: still sound (the true inverse
        // is one of their values, the locations being injective), but less is known.
        let forward = Term::implies(positive, Term::and(forward));
        let (forward, patterns) = access.fact_with_patterns(&forward);
        if !patterns.is_empty() {
            let forward = Term::forall(access.vars.clone(), forward, patterns);
            self.assume_read(forward.clone(), e.span)?;
            // Amounts taken from the state around a package may speak through them.
            self.keep_inverse_past_package(access, forward, e)?;
        }
        let back_map: HashMap<Term, Term> = var_list.into_iter().zip(inverses).collect();
        let back = |t: &Term| substitute(t, &back_map);
        // Held at `rs` only where `rs` are the arguments at `inv(rs)`: the inverse says
        // nothing of locations that are no receiver.
        let args_back: Vec<Term> = args.iter().map(back).collect();
        let image = resources::same_args(&args_back, &r_terms);
        let held = Term::ite(Term::and([back(&c), image]), back(&p), Permission::none().0);
        Ok((rs, Permission(held)))
    }
}

/// The maps of a quantified chunk about to be added: its amount and value maps over `rs`, and the
/// applications of its condition at `rs` when it names its locations (else none).
struct NewMaps<'c> {
    rs: &'c [(Symbol, Sort)],
    held: &'c Permission,
    value: &'c Term,
    conditions: &'c [Term],
}

impl NewMaps<'_> {
    fn symbols(&self) -> Vec<Symbol> {
        self.rs.iter().map(|(v, _)| v.clone()).collect()
    }
}

/// Ways of choosing one term per position, at most 8: the same alternative at every
/// position first (alternatives that go together, such as one chunk's maps for every
/// variable), then mixed ones, earliest choices first.
pub(crate) fn combinations(choices: &[Vec<Term>]) -> Vec<Vec<Term>> {
    const MAX: usize = 8;
    let promise = |p: &Vec<usize>| {
        let distinct = p.iter().collect::<std::collections::HashSet<_>>().len();
        (distinct, p.iter().max().copied(), p.iter().sum::<usize>())
    };
    let mut picks: Vec<Vec<usize>> = vec![Vec::new()];
    for options in choices {
        let mut next = Vec::new();
        for pick in &picks {
            for k in 0..options.len() {
                let mut p = pick.clone();
                p.push(k);
                next.push(p);
            }
        }
        // Keep the most promising ones only: the count grows as a product.
        next.sort_by_key(promise);
        next.truncate(MAX * MAX);
        picks = next;
    }
    picks.sort_by_key(promise);
    picks.truncate(MAX);
    picks
        .into_iter()
        .map(|p| p.iter().zip(choices).map(|(k, o)| o[*k].clone()).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use germanium_smt::{Sort, Symbol, Term};

    use super::combinations;

    fn c(name: &str) -> Term {
        Term::var(Symbol::user(name), Sort::Int)
    }

    #[test]
    fn the_same_alternative_everywhere_comes_first() {
        let choices: Vec<Vec<Term>> = (0..2)
            .map(|p| (0..6).map(|k| c(&format!("t{p}_{k}"))).collect())
            .collect();
        let sets = combinations(&choices);
        assert_eq!(sets.len(), 8);
        // All six "diagonal" sets (the same alternative at both positions) are kept.
        for k in 0..6 {
            let diagonal = vec![c(&format!("t0_{k}")), c(&format!("t1_{k}"))];
            assert!(sets.contains(&diagonal), "missing {k}");
        }
        assert_eq!(sets[0], vec![c("t0_0"), c("t1_0")]);
    }

    #[test]
    fn one_position_keeps_its_order() {
        let sets = combinations(&[vec![c("a"), c("b")]]);
        assert_eq!(sets, vec![vec![c("a")], vec![c("b")]]);
    }
}
