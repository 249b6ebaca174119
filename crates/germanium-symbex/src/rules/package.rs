//! `package A --* B`, following the sound package logic of seed 004.
//!
//! **The witness set.** Every state satisfying `A` is represented at once, symbolically: a
//! solver scope in which `A` is produced into an empty heap from a fresh snapshot `s`
//! (values are parts of `s` or fresh constants, conditional parts become chunks with
//! conditional amounts: production never branches). The constants made in this scope are
//! the witnesses' values; a query in the scope that holds, holds for every witness.
//!
//! **Extract.** The proof script and `B` run against the witness state. Before each step
//! (and before `B`), a dry run of it on a copy finds what the witness state lacks
//! ([`Verifier::extract_missing`], called where a consumption takes from a heap): the
//! amount taken from the state around the package is one term free of the witnesses'
//! values (the missing amount when that is free of them, else the whole amount asked, else
//! all the outer state holds there), decided by validity and feasibility queries over all
//! witnesses, never by branching on them; where the location itself depends on the
//! witness (`x.f.g` with `x.f` from `A`), every outer chunk that may be it for some
//! witness gives its part. What is taken joins the witness state, where merging assumes
//! the values agree and the amounts fit: witnesses incompatible with the footprint are
//! dropped, inside the scope only. So the footprint is one and the same for every state
//! satisfying `A`, and a left-hand side inconsistent with it gives a trivial wand (an
//! infeasible scope extracts nothing).
//!
//! **No leak.** The scope is popped: no fact about the left-hand side or the footprint's
//! agreement with it survives. The outer state keeps what was not extracted (amounts free
//! of witness values), and gains one wand chunk whose snapshot `w` is fresh, with one
//! definition `forall s :: apply(w, s) == R(s)`: `R` is the snapshot `B` was consumed with,
//! its constants defined in the scope replaced by their definitions and the others made
//! functions of `s`. The definition only constrains the fresh `w`, so it is sound whatever
//! `R` is.

use std::collections::{HashMap, HashSet};

use germanium_smt::{substitute, Op, Term};
use germanium_syntax::ast::{Block, Expr, ExprKind, Stmt, StmtKind};
use germanium_syntax::Span;

use crate::errors::ErrorContext;
use crate::resources;
use crate::rules::context::{Abort, Verifier, R};
use crate::rules::triggers;
use crate::rules::wands::LHS_STATE;
use crate::state::{Heap, Permission, Resource, State};

/// Whether `s` runs in a proof script after a dry run that extracts what it lacks: ghost
/// operations, assertions, calls and assignments to locals (`inhale` and `assume` change
/// only the witness state, and locals declared there live only there).
fn extracting_step(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Fold(_)
        | StmtKind::Unfold(_)
        | StmtKind::Apply(_)
        | StmtKind::Assert(_)
        | StmtKind::Refute(_)
        | StmtKind::Inhale(_)
        | StmtKind::Exhale(_)
        | StmtKind::Assume(_)
        | StmtKind::Call(..)
        | StmtKind::VarDecl(..) => true,
        StmtKind::Assign(targets, _) => {
            targets.iter().all(|t| matches!(t.kind, ExprKind::Ident(_)))
        }
        _ => false,
    }
}

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

/// A wand being packaged: the state around it and what its dry runs took from that state.
pub struct PackageFrame {
    /// The heap around the package, which the footprint is taken from.
    pub outer: Heap,
    /// [`crate::decider::Decider::fresh_mark`] when the package started: constants made
    /// since are the witnesses' values.
    mark: usize,
    /// During a dry run: the witness state with what was extracted so far (merged, so a
    /// witness incompatible with it is dropped before the next decision).
    whole: Heap,
    /// Names of amounts taken from `outer` (terms free of the witnesses' values) and their
    /// definitions, assumed again once the package's scope is popped.
    outer_names: HashSet<Term>,
    outer_facts: Vec<Term>,
    /// The left-hand side's state as produced, and what was taken from `outer` so far
    /// (location and amount): with combinable wands, the footprint the witnesses see is
    /// cut down to fit the left-hand side (see [`Verifier::visible_to_witnesses`]).
    lhs: Heap,
    extracted: Vec<(Resource, Vec<Term>, Permission)>,
    /// The resources taken from `outer` through quantified chunks.
    extracted_quantified: HashSet<Resource>,
}

impl PackageFrame {
    /// The constants made since the package started that stand for the witnesses' values
    /// (not the names of amounts taken from the state around).
    fn witness_values(&self, decider: &crate::decider::Decider) -> HashSet<Term> {
        decider
            .fresh_since(self.mark)
            .iter()
            .filter(|c| !self.outer_names.contains(c))
            .cloned()
            .collect()
    }
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// `package wand [proof]` at statement `s`.
    pub fn package(
        &mut self,
        st: &mut State,
        s: &Stmt,
        wand: &Expr,
        proof: Option<&Block>,
    ) -> R<()> {
        let ctx = ErrorContext::at("package.failed", s.span, "Packaging wand might fail.");
        let (lhs, rhs) = self.wand_sides(wand)?;
        let wellformed = self.check_wand_wellformed(st, wand)?;
        let (resource, args) = self.wand_location(st, &st.heap, wand, &ctx)?;
        self.member
            .wands_checked
            .insert(resource.name().to_string());
        if !wellformed {
            // Reported; the path goes on holding the wand (nothing else is checked of it).
            return self.produce_resource(
                st,
                &resource,
                args,
                Permission::write(),
                None,
                wand.span,
            );
        }
        let mark = self.decider.fresh_mark();
        let depth = self.decider.depth();
        self.push(s.span)?;
        self.member.packages.push(PackageFrame {
            outer: std::mem::take(&mut st.heap),
            mark,
            whole: Heap::default(),
            outer_names: HashSet::new(),
            outer_facts: Vec::new(),
            lhs: Heap::default(),
            extracted: Vec::new(),
            extracted_quantified: HashSet::new(),
        });
        let witness = State {
            store: st.store.clone(),
            heap: Heap::default(),
            old_heaps: st.old_heaps.clone(),
        };
        let result = self.package_in_scope(witness, lhs, rhs, proof, &ctx);
        let mut outer_facts = Vec::new();
        let mut made = HashSet::new();
        if let Some(frame) = self.member.packages.pop() {
            made = frame.witness_values(&self.decider);
            st.heap = frame.outer;
            outer_facts = frame.outer_facts;
        }
        let facts = self.decider.assumptions_above(depth);
        self.pop(s.span)?;
        for fact in outer_facts {
            self.assume(fact, s.span)?;
        }
        let (s_lhs, rhs_snap) = result?;
        let w = self.fresh("wand", self.env.snap.sort.clone(), s.span)?;
        if let Some(r) = rhs_snap {
            let definition = self.define_wand_snapshot(&w, &s_lhs, r, &facts, &made, s.span)?;
            // Inside another package's scope: the definition (of a fresh symbol, sound
            // anywhere) outlives that scope too, and `w` is no witness value there.
            if let Some(enclosing) = self.member.packages.last_mut() {
                enclosing.outer_names.insert(w.clone());
                enclosing.outer_facts.push(definition);
            }
        }
        self.produce_resource(st, &resource, args, Permission::write(), Some(w), wand.span)
    }

    /// Inside the package's scope: the witness state from `lhs`, the proof script, then
    /// `rhs` consumed. Returns the left-hand side's snapshot and `rhs`'s.
    fn package_in_scope(
        &mut self,
        mut witness: State,
        lhs: &Expr,
        rhs: &Expr,
        proof: Option<&Block>,
        ctx: &ErrorContext,
    ) -> R<(Term, Option<Term>)> {
        let s_lhs = self.fresh("lhs", self.env.snap.sort.clone(), lhs.span)?;
        self.produce_from(&mut witness, lhs, Some(s_lhs.clone()), ctx)?;
        if let Some(frame) = self.member.packages.last_mut() {
            frame.lhs = witness.heap.clone();
        }
        witness
            .old_heaps
            .insert(LHS_STATE.to_string(), witness.heap.clone());
        if let Some(block) = proof {
            self.run_proof_script(&mut witness, &block.stmts)?;
        }
        self.dry_run(&mut witness, |v, dry| {
            let heap = dry.heap.clone();
            v.consume(dry, &heap, rhs, ctx)
        })?;
        let heap = witness.heap.clone();
        let r = self.assertion_snapshot(&witness, &heap, rhs)?;
        self.consume(&mut witness, &heap, rhs, ctx)?;
        Ok((s_lhs, r))
    }

    /// The statements of a proof script, against the witness state: each step after a dry
    /// run that extracts what it lacks; both sides of an `if` under their conditions
    /// (the package logic's implication rule: no branching on the witnesses).
    fn run_proof_script(&mut self, witness: &mut State, stmts: &[Stmt]) -> R<()> {
        for s in stmts {
            match &s.kind {
                StmtKind::Block(b) => self.run_proof_script(witness, &b.stmts)?,
                StmtKind::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let heap = witness.heap.clone();
                    let if_ctx = ErrorContext::at(
                        "if.failed",
                        cond.span,
                        "Conditional statement might fail.",
                    );
                    let c = self.eval(witness, &heap, cond, &if_ctx)?;
                    let before = witness.store.clone();
                    self.under(c.clone(), |v| v.run_proof_script(witness, &then.stmts))?;
                    let after_then = std::mem::replace(&mut witness.store, before);
                    if let Some(o) = otherwise {
                        self.under(Term::not(c.clone()), |v| {
                            v.run_proof_script(witness, &o.stmts)
                        })?;
                    }
                    // A local assigned on one side has that side's value where its
                    // condition holds (both sides ran on one witness state).
                    for (var, value) in after_then {
                        let joined = match witness.store.get(&var) {
                            Some(other) if *other != value => {
                                Term::ite(c.clone(), value, other.clone())
                            }
                            Some(_) => continue,
                            None => value,
                        };
                        witness.store.insert(var, joined);
                    }
                }
                StmtKind::Package(..) | StmtKind::Label(..) => self.step(witness, s)?,
                _ if extracting_step(s) => {
                    self.dry_run(witness, |v, dry| v.step(dry, s))?;
                    self.step(witness, s)?;
                }
                _ => {
                    return Err(
                        self.unsupported(s.span, "this statement in a package's proof script")
                    )
                }
            }
        }
        Ok(())
    }

    /// Runs `f` on a copy of the witness state as a dry run: nothing checked, what a
    /// consumption lacks extracted (see [`Verifier::extract_missing`]) into the witness
    /// state. A dry run reports nothing and its failure ends nothing: the real step that
    /// follows does both.
    fn dry_run(
        &mut self,
        witness: &mut State,
        f: impl FnOnce(&mut Self, &mut State) -> R<()>,
    ) -> R<()> {
        let mut dry = witness.clone();
        if let Some(frame) = self.member.packages.last_mut() {
            frame.whole = witness.heap.clone();
        }
        let reported = self.errors.len();
        let r = self.with_modes(
            |m| {
                m.extracting = true;
                m.checking = false;
            },
            |v| f(v, &mut dry),
        );
        if matches!(r, Ok(()) | Err(Abort::Failed)) {
            // An unsupported construct stays reported: the member is abandoned there.
            self.errors.truncate(reported);
        }
        if let Some(frame) = self.member.packages.last_mut() {
            witness.heap = std::mem::take(&mut frame.whole);
        }
        match r {
            Err(Abort::Failed) | Ok(()) => Ok(()),
            Err(other) => Err(other),
        }
    }

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
        let r = f(self, &mut frames);
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
            let held = resources::perm_of(heap, resource, args);
            if amount.is_none() || self.prove(held.covers(amount), span)? {
                return Ok(());
            }
        }
        // What the state around this package lacks comes from the one around it, and is
        // then taken as above (after what was nearer: a witness it made inconsistent needs
        // nothing from further out).
        if around.is_empty() {
            return Ok(());
        }
        let held = resources::perm_of(heap, resource, args);
        if self.prove(held.covers(amount), span)? {
            return Ok(());
        }
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
        let capped_field = self.env.combinable_wands && resource.max_amount().is_some();
        if capped_field && frame.extracted_quantified.contains(resource) {
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
        let (true, Some(max)) = (self.env.combinable_wands, resource.max_amount()) else {
            return Ok(taken);
        };
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
            both.push(Term::eq(
                resources::snapshot_at(heap, i).clone(),
                resources::snapshot_at(other, j).clone(),
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
        let held = resources::perm_of(heap, resource, args);
        let enough = held.covers(amount);
        if self.prove(enough.clone(), span)? {
            return Ok(false);
        }
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
    /// (the missing amount where `heap` holds the resource only in chunks of one location,
    /// else the whole amount asked; never more than is there), and added to `heap` as a
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
        // the scope only (inverses): then the whole amount asked.
        let wanted = if !resources::holds_quantified(heap, Some(resource)) && free(&missing.0) {
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

    /// Defines the new wand's snapshot `w`: `forall s :: apply(w, s) == R(s)` where `R(s)`
    /// is `r` (read with the left-hand side's snapshot `s_lhs`) with the scope's constants
    /// (`made`) replaced by their definitions among `facts`, the rest functions of `s`.
    fn define_wand_snapshot(
        &mut self,
        w: &Term,
        s_lhs: &Term,
        r: Term,
        facts: &[Term],
        made: &HashSet<Term>,
        span: Span,
    ) -> R<Term> {
        let mut definitions: HashMap<Term, Term> = HashMap::new();
        for fact in facts {
            let Some((Op::Eq, [a, b])) = fact.as_op() else {
                continue;
            };
            for (c, t) in [(a, b), (b, a)] {
                if made.contains(c)
                    && c != s_lhs
                    && !definitions.contains_key(c)
                    && !triggers::mentions(t, c)
                {
                    definitions.insert(c.clone(), t.clone());
                    break;
                }
            }
        }
        let mut r = r;
        for _ in 0..16 {
            let next = substitute(&r, &definitions);
            if next == r {
                break;
            }
            r = next;
        }
        let sort = self.env.snap.sort.clone();
        let name = self.decider.fresh_symbol("s");
        let s = Term::var(name.clone(), sort.clone());
        let mut map: HashMap<Term, Term> = HashMap::new();
        map.insert(s_lhs.clone(), s.clone());
        let undefined: Vec<Term> = r
            .terms_among(made)
            .into_iter()
            .filter(|c| c != s_lhs)
            .collect();
        self.skolemize(undefined, &[(name.clone(), sort.clone())], &mut map, span)?;
        let applied = self.wand_apply(w.clone(), s.clone(), span)?;
        let body = Term::eq(applied.clone(), substitute(&r, &map));
        let definition = Term::forall(vec![(name, sort)], body, vec![vec![applied]]);
        self.assume(definition.clone(), span)?;
        Ok(definition)
    }
}
