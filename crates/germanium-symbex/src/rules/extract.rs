//! Extract, the package logic's one way into a footprint (seed 004): before each step of
//! a package's proof script (and before its right-hand side), a dry run of the step finds
//! what the witness state lacks ([`Verifier::extract_missing`], called where a consumption
//! takes from a heap) and takes it from the state around the package, as one term free of
//! the witnesses' values decided by validity and feasibility queries over all witnesses
//! (see `rules::package` for the witness set and the frames).

use std::collections::{HashMap, HashSet};

use germanium_smt::{substitute, Op, Symbol, Term};
use germanium_syntax::Span;

use crate::resources;
use crate::rules::context::{Verifier, R};
use crate::rules::package::PackageFrame;
use crate::rules::triggers;
use crate::state::{Heap, Permission, Resource};

const COMBINABLE_QUANTIFIED: &str = "with --combinable-wands, a field both held by a package's left-hand side or taken location by location, and taken through a quantifier";

/// Never a negative amount (a dry run does not check amounts), never more than `available`.
fn at_most_available(wanted: Permission, available: &Permission) -> Permission {
    let wanted = Permission(Term::ite(
        wanted.is_positive(),
        wanted.0,
        Permission::none().0,
    ));
    Permission(Term::ite(
        available.at_least(&wanted),
        wanted.0,
        available.0.clone(),
    ))
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// The heap reads see during a dry run: `heap` first, then the state around the
    /// innermost package.
    pub(crate) fn extraction_view(&self, heap: &Heap) -> Option<Heap> {
        if !self.modes.extracting {
            return None;
        }
        let frame = self.member.packages.last()?;
        let witness = resources::stacked(heap, &frame.whole);
        Some(resources::stacked(&witness, &frame.outer))
    }

    /// During a dry run, before `amount` (`None`: some positive amount) of
    /// `resource(args)` is taken from `heap` (the witness state's): what `heap` may lack for
    /// some witness is taken from the state around the package and added to `heap` (see
    /// the module documentation).
    pub(crate) fn extract_missing(
        &mut self,
        heap: &mut Heap,
        resource: &Resource,
        args: &[Term],
        amount: Option<&Permission>,
        span: Span,
    ) -> R<()> {
        self.in_dry_run_frames(|v, frames| {
            v.extract_into(frames, heap, resource, args, amount, true, span)
        })
    }

    /// During a dry run inside a package, `f` with the frames of the packages being made
    /// (taken out of the member state meanwhile); nothing otherwise.
    fn in_dry_run_frames(
        &mut self,
        f: impl FnOnce(&mut Self, &mut [PackageFrame]) -> R<()>,
    ) -> R<()> {
        if !self.modes.extracting || self.member.packages.is_empty() {
            return Ok(());
        }
        let mut frames = std::mem::take(&mut self.member.packages);
        let mark = self.decider.facts_mark();
        let r = f(self, &mut frames);
        // What extracting assumed outlives the dry run's scope (see `Verifier::dry_run`).
        let assumed = self.decider.facts_since(mark);
        if let Some(innermost) = frames.last_mut() {
            innermost.extraction_facts.extend(assumed);
        }
        self.member.packages = frames;
        r
    }

    /// Extracts into `heap` from the state around the innermost of `frames`; what that
    /// state lacks, from the one around it (a package inside a proof script takes from the
    /// enclosing package's witness state, then from the state around that package). `dry`:
    /// `heap` is a dry run's copy, the frame's whole witness state gets the same.
    #[allow(clippy::too_many_arguments)]
    fn extract_into(
        &mut self,
        frames: &mut [PackageFrame],
        heap: &mut Heap,
        resource: &Resource,
        args: &[Term],
        amount: Option<&Permission>,
        dry: bool,
        span: Span,
    ) -> R<()> {
        let Some((frame, around)) = frames.split_last_mut() else {
            return Ok(());
        };
        if self.holds_enough(heap, resource, args, amount, span)? {
            return Ok(());
        }
        if let Some(p) = amount {
            // Read amounts in it are taken small against what the two states hold.
            let both = resources::perm_of(heap, resource, args).add(&resources::perm_of(
                &frame.outer,
                resource,
                args,
            ));
            self.bound_read_amounts(&both, p, span)?;
        }
        if !around.is_empty() {
            self.extract_around_first(frame, around, heap, resource, args, amount, span)?;
        }
        // A chunk that is the location gives alone what it holds; where that was not
        // enough, another chunk may be the same location (an alias): a round more.
        let rounds = resources::held(&frame.outer, Some(resource)).len();
        for _ in 0..=rounds {
            if !self.extract_round(frame, heap, resource, args, amount, dry, span)? {
                break;
            }
            if amount.is_none() || self.holds_enough(heap, resource, args, amount, span)? {
                return Ok(());
            }
        }
        // What the state around this package lacks comes from the one around it, and is
        // then taken as above (after what was nearer: a witness it made inconsistent needs
        // nothing from further out).
        if around.is_empty() || self.holds_enough(heap, resource, args, amount, span)? {
            return Ok(());
        }
        let held = resources::perm_of(heap, resource, args);
        let needed = amount.map(|p| p.sub(&held));
        self.extract_into(
            around,
            &mut frame.outer,
            resource,
            args,
            needed.as_ref(),
            false,
            span,
        )?;
        self.extract_into(
            std::slice::from_mut(frame),
            heap,
            resource,
            args,
            amount,
            dry,
            span,
        )
    }

    /// Whether `heap` holds `amount` (`None`: some) of `resource(args)`, proved.
    fn holds_enough(
        &mut self,
        heap: &Heap,
        resource: &Resource,
        args: &[Term],
        amount: Option<&Permission>,
        span: Span,
    ) -> R<bool> {
        let held = resources::perm_of(heap, resource, args);
        self.prove(held.covers(amount), span)
    }

    /// Inside a package inside a proof script, where the enclosing package's witness
    /// state (`frame.outer`) lacks what `heap` needs at a location free of this package's
    /// witnesses: that state first takes the rest from the state around it, so the two
    /// parts of the location meet there (a witness of the enclosing package whose value
    /// differs from the one around is dropped, as the package logic's extract says). What
    /// that assumes is about the enclosing package's witnesses and the state around, so it
    /// holds after this package's scope too.
    #[allow(clippy::too_many_arguments)]
    fn extract_around_first(
        &mut self,
        frame: &mut PackageFrame,
        around: &mut [PackageFrame],
        heap: &mut Heap,
        resource: &Resource,
        args: &[Term],
        amount: Option<&Permission>,
        span: Span,
    ) -> R<()> {
        let Some(amount) = amount else {
            return Ok(());
        };
        let witness = frame.witness_values(&self.decider);
        if args.iter().any(|a| a.mentions_any(&witness)) {
            return Ok(());
        }
        let held = resources::perm_of(heap, resource, args);
        let needed = amount.sub(&held);
        let in_outer = resources::perm_of(&frame.outer, resource, args);
        if self.prove(in_outer.covers(Some(&needed)), span)? {
            return Ok(());
        }
        // Where what the enclosing witness state holds there cannot join this package's
        // witness state, this witness is dropped anyway: nothing is taken from further out.
        if !self.joins(heap, &frame.outer, resource, args, span)? {
            return Ok(());
        }
        let depth = self.decider.depth();
        let before = self.decider.innermost_assumptions().len();
        self.extract_into(
            around,
            &mut frame.outer,
            resource,
            args,
            Some(&needed),
            false,
            span,
        )?;
        if self.decider.depth() == depth {
            let facts = self.decider.innermost_assumptions()[before..].to_vec();
            frame.outer_facts.extend(facts);
        }
        Ok(())
    }

    /// Of `taken` (just taken from the state around `frame`'s package at `resource(args)`),
    /// what the witness states get. Standard wands: all of it (a witness that cannot hold
    /// it too is dropped). Combinable wands (seed 004): where the left-hand side holds less
    /// than the most a state may, the footprint is cut down to what fits beside it, so a
    /// witness is dropped only where no fraction of the footprint fits (the left-hand side
    /// holds all there, or values differ) and otherwise must be served by the cut-down part.
    fn visible_to_witnesses(
        &mut self,
        frame: &mut PackageFrame,
        resource: &Resource,
        args: &[Term],
        taken: Permission,
        span: Span,
    ) -> R<Permission> {
        let (true, Some(max)) = (self.env.combinable_wands, resource.max_amount()) else {
            return Ok(taken);
        };
        if frame.extracted_quantified.contains(resource) {
            return Err(self.unsupported(span, COMBINABLE_QUANTIFIED));
        }
        let before = frame
            .extracted
            .iter()
            .fold(Permission::none(), |sum, (r, a, p)| {
                if r != resource {
                    return sum;
                }
                let same = resources::equal_args(self.env, resource, args, a);
                sum.add(&Permission(Term::ite(
                    same,
                    p.0.clone(),
                    Permission::none().0,
                )))
            });
        frame
            .extracted
            .push((resource.clone(), args.to_vec(), taken.clone()));
        let room = max.sub(&resources::perm_of(&frame.lhs, resource, args));
        let capped = |p: Permission| Permission(Term::ite(room.at_least(&p), p.0, room.0.clone()));
        let after = capped(before.add(&taken));
        let visible = after.sub(&capped(before));
        Ok(Permission(Term::ite(
            room.is_positive(),
            visible.0,
            taken.0,
        )))
    }

    /// Whether the chunks `heap` and `other` hold of the location `resource(args)` may be
    /// of one state (the same value, together at most the most a state may hold).
    fn joins(
        &mut self,
        heap: &Heap,
        other: &Heap,
        resource: &Resource,
        args: &[Term],
        span: Span,
    ) -> R<bool> {
        let (Some(i), Some(j)) = (
            self.find(heap, resource, args, span)?,
            self.find(other, resource, args, span)?,
        ) else {
            return Ok(true);
        };
        let mut both = Vec::new();
        if resource.values_agree() {
            // A chunk's snapshot is the location's value only where it holds some.
            let held = Term::and([
                resources::amount_at(heap, i).is_positive(),
                resources::amount_at(other, j).is_positive(),
            ]);
            both.push(Term::implies(
                held,
                Term::eq(
                    resources::snapshot_at(heap, i).clone(),
                    resources::snapshot_at(other, j).clone(),
                ),
            ));
        }
        if let Some(max) = resource.max_amount() {
            let sum = resources::amount_at(heap, i).add(resources::amount_at(other, j));
            both.push(max.at_least(&sum));
        }
        self.feasible(Term::and(both), span)
    }

    /// One round of [`Self::extract_into`] from the state around `frame`'s package;
    /// returns whether some chunk alone gave what it could (another may be the same
    /// location).
    #[allow(clippy::too_many_arguments)]
    fn extract_round(
        &mut self,
        frame: &mut PackageFrame,
        heap: &mut Heap,
        resource: &Resource,
        args: &[Term],
        amount: Option<&Permission>,
        dry: bool,
        span: Span,
    ) -> R<bool> {
        // The caller proved that `heap` does not hold enough for every witness.
        let held = resources::perm_of(heap, resource, args);
        let enough = held.covers(amount);
        let witness = frame.witness_values(&self.decider);
        let guard = self.guard();
        let free = |t: &Term| !t.mentions_any(&witness);
        let guard_free = free(&guard);
        let locations: Vec<Vec<Term>> = if args.iter().all(free) {
            vec![args.to_vec()]
        } else {
            // The location depends on the witness: each outer location it may be.
            let mut out: Vec<Vec<Term>> = Vec::new();
            for h in resources::held(&frame.outer, Some(resource)) {
                if out.contains(&h.args) || !h.args.iter().all(free) {
                    continue;
                }
                let same = resources::equal_args(self.env, resource, args, &h.args);
                let possible = Term::and([guard.clone(), same, Term::not(enough.clone())]);
                if self.feasible(possible, span)? {
                    out.push(h.args);
                }
            }
            out
        };
        let single = locations.len() == 1 && locations[0] == args;
        // The amounts missing (only where the location is free of the witnesses' values)
        // or else asked, in a form free of the witnesses' values, where their conditions
        // are decided the same way for every witness.
        let missing = match amount {
            Some(p) if single => self
                .free_form(&p.sub(&held).0, &witness, 0, span)?
                .map(Permission),
            _ => None,
        };
        let asked = match amount {
            Some(p) if missing.is_none() => {
                self.free_form(&p.0, &witness, 0, span)?.map(Permission)
            }
            _ => None,
        };
        // The amount to take where the outer state holds `available`: one term for every
        // witness (the least that serves them all where that is free of their values).
        let wanted = |available: &Permission| -> Permission {
            let e = match (amount, &missing, &asked) {
                (Some(_), Some(missing), _) => missing.clone(),
                (Some(_), None, Some(p)) => p.clone(),
                (Some(_), None, None) => available.clone(),
                (None, _, _) => Permission(Term::mul(vec![available.0.clone(), Term::real(1, 2)])),
            };
            let e = if guard_free { e.when(&guard) } else { e };
            at_most_available(e, available)
        };
        let mut from_one_chunk = false;
        for location in locations {
            // A chunk that is the location gives alone what it holds (terms stay small).
            let found = self.find(&frame.outer, resource, &location, span)?;
            let available = match found {
                Some(i) => resources::amount_at(&frame.outer, i).clone(),
                None => resources::perm_of(&frame.outer, resource, &location),
            };
            let e = wanted(&available);
            if e.is_literally_none() || !self.feasible(e.is_positive(), span)? {
                continue;
            }
            let e = self.name_outside(frame, e, span)?;
            let value = match found {
                Some(i) => {
                    let value = resources::snapshot_at(&frame.outer, i).clone();
                    resources::take_at(&mut frame.outer, i, &e);
                    from_one_chunk = true;
                    value
                }
                None => {
                    let otherwise = self.fresh_value(resource, span)?;
                    let value = resources::take_greedily_with_snapshot(
                        &mut frame.outer,
                        resource,
                        &location,
                        &e,
                        Some(otherwise),
                    );
                    let Some(value) = value else { continue };
                    value
                }
            };
            let e = self.visible_to_witnesses(frame, resource, &location, e, span)?;
            let guards = std::mem::take(&mut self.member.guards);
            let mut r = self.produce_resource_in(
                heap,
                resource,
                location.clone(),
                e.clone(),
                Some(value.clone()),
                span,
            );
            if dry && r.is_ok() {
                r = self.produce_resource_in(
                    &mut frame.whole,
                    resource,
                    location,
                    e,
                    Some(value),
                    span,
                );
            }
            self.member.guards = guards;
            r?;
        }
        Ok(from_one_chunk)
    }

    /// During a dry run, before a quantified consumption takes `needed` (a map over `rs`)
    /// of `resource` from `heap` (the witness state's): what `heap` may lack is taken from
    /// the state around the innermost package, as one map free of the witnesses' values
    /// (the missing amount where that is also free of the functions declared in the
    /// package's scope, else the whole amount asked; never more than is there), and added
    /// to `heap` as a
    /// quantified chunk with the outer values. The maps made while taking are defined from
    /// terms of the state around, so their definitions are assumed again after the scope.
    /// A map that depends on the witnesses extracts nothing (the consumption then fails).
    /// `to_somewhere` maps `rs` to an arbitrary location (fresh constants).
    pub(crate) fn extract_quantified(
        &mut self,
        heap: &mut Heap,
        resource: &Resource,
        rs: &[(germanium_smt::Symbol, germanium_smt::Sort)],
        needed: &Permission,
        to_somewhere: &HashMap<Term, Term>,
        span: Span,
    ) -> R<()> {
        self.in_dry_run_frames(|v, frames| match frames.last_mut() {
            Some(frame) => {
                v.extract_quantified_into(frame, heap, resource, rs, needed, to_somewhere, span)
            }
            None => Ok(()),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn extract_quantified_into(
        &mut self,
        frame: &mut PackageFrame,
        heap: &mut Heap,
        resource: &Resource,
        rs: &[(germanium_smt::Symbol, germanium_smt::Sort)],
        needed: &Permission,
        to_somewhere: &HashMap<Term, Term>,
        span: Span,
    ) -> R<()> {
        let r_terms = crate::rules::quantified::var_terms(rs);
        // Combinable wands cut the footprint down per location only for locations taken
        // one by one (see `visible_to_witnesses`).
        if self.env.combinable_wands
            && resource.max_amount().is_some()
            && (frame.extracted.iter().any(|(r, _, _)| r == resource)
                || !resources::held(&frame.lhs, Some(resource)).is_empty()
                || resources::holds_quantified(&frame.lhs, Some(resource)))
        {
            return Err(self.unsupported(span, COMBINABLE_QUANTIFIED));
        }
        frame.extracted_quantified.insert(resource.clone());
        let held = resources::perm_of(heap, resource, &r_terms);
        let missing = needed.sub(&held);
        let missing_here = Permission(substitute(&missing.0, to_somewhere));
        if self.prove(Term::not(missing_here.is_positive()), span)? {
            return Ok(());
        }
        let witness = frame.witness_values(&self.decider);
        let free = |t: &Term| !t.mentions_any(&witness);
        // Chunks of the witness state holding many locations may use functions defined in
        // the scope only (inverses, named maps): then the whole amount asked, whose take
        // stays known after the scope.
        let scope_made: HashSet<Symbol> = self
            .decider
            .declared_since(frame.declared_mark)
            .iter()
            .cloned()
            .collect();
        let wanted = if free(&missing.0) && !missing.0.applies_any(&scope_made) {
            missing
        } else if free(&needed.0) {
            needed.clone()
        } else {
            return Ok(());
        };
        let guard = self.guard();
        let wanted = if free(&guard) {
            wanted.when(&guard)
        } else {
            wanted
        };
        let available = resources::perm_of(&frame.outer, resource, &r_terms);
        let taken = at_most_available(wanted, &available);
        let taken_here = Permission(substitute(&taken.0, to_somewhere));
        if !self.feasible(taken_here.is_positive(), span)? {
            return Ok(());
        }
        let sorts: Vec<germanium_smt::Sort> = rs.iter().map(|(_, s)| s.clone()).collect();
        let value_sort = self.resource_sort(resource, span)?;
        let unknown = germanium_smt::FunDecl::new(
            self.decider.fresh_symbol("sx.extracted"),
            sorts,
            value_sort,
        );
        self.ensure_declared(&unknown, span)?;
        let value = resources::value_of(
            &frame.outer,
            resource,
            &r_terms,
            Term::app(&unknown, r_terms.clone()),
        );
        // The maps the take defines are terms of the state around: valid after the scope.
        let before = self.decider.innermost_assumptions().len();
        resources::take_quantified(&mut self.decider, &mut frame.outer, resource, rs, &taken)
            .map_err(|err| self.solver_failed(err, span))?;
        let definitions = self.decider.innermost_assumptions()[before..].to_vec();
        frame.outer_facts.extend(definitions);
        // Where the witness state already holds a location, its value is the one taken
        // (witnesses that disagree are dropped, inside the scope only).
        let extracted = taken.is_positive();
        let mut agreements = Vec::new();
        for i in heap.of(resource).collect::<Vec<_>>() {
            let there = resources::value_at_location(heap, i, &r_terms);
            let held_there = resources::amount_at_location(heap, i, &r_terms);
            let agree = Term::implies(
                Term::and([extracted.clone(), held_there.is_positive()]),
                Term::eq(there.clone(), value.clone()),
            );
            let patterns: Vec<Vec<Term>> = [there, value.clone()]
                .into_iter()
                .filter(|t| triggers::pattern_safe(t) && !t.children().is_empty())
                .map(|t| vec![t])
                .collect();
            if !patterns.is_empty() {
                agreements.push(Term::forall(rs.to_vec(), agree, patterns));
            }
        }
        for fact in agreements {
            self.assume(fact, span)?;
        }
        for into in [&mut *heap, &mut frame.whole] {
            resources::add_quantified(into, resource, rs.to_vec(), value.clone(), taken.clone());
        }
        Ok(())
    }

    /// `t` in a form free of the constants `witness` (the witnesses' values), if there is one
    /// this path can tell: `t` itself when free of them, a conditional whose condition is
    /// proved (or refuted) for every witness by the branch it takes, an operation on such
    /// forms.
    fn free_form(
        &mut self,
        t: &Term,
        witness: &HashSet<Term>,
        depth: usize,
        span: Span,
    ) -> R<Option<Term>> {
        if !t.mentions_any(witness) {
            return Ok(Some(t.clone()));
        }
        if depth > 8 {
            return Ok(None);
        }
        let Some((op, args)) = t.as_op() else {
            return Ok(None);
        };
        if let (Op::Ite, [c, a, b]) = (op, args) {
            if self.prove(c.clone(), span)? {
                return self.free_form(a, witness, depth + 1, span);
            }
            if self.prove(Term::not(c.clone()), span)? {
                return self.free_form(b, witness, depth + 1, span);
            }
            return Ok(None);
        }
        let mut parts = Vec::new();
        for a in args {
            match self.free_form(a, witness, depth + 1, span)? {
                Some(x) => parts.push(x),
                None => return Ok(None),
            }
        }
        Ok(Some(germanium_smt::rebuild_op(op, parts)))
    }

    /// A constant equal to the amount `e` taken from the state around the package (free of
    /// the witnesses' values), whose definition outlives the package's scope.
    fn name_outside(
        &mut self,
        frame: &mut PackageFrame,
        e: Permission,
        span: Span,
    ) -> R<Permission> {
        if e.0.children().is_empty() {
            return Ok(e);
        }
        let name = self.fresh("footprint", e.0.sort().clone(), span)?;
        let definition = Term::eq(name.clone(), e.0);
        self.assume(definition.clone(), span)?;
        frame.outer_names.insert(name.clone());
        frame.outer_facts.push(definition);
        Ok(Permission(name))
    }
}
