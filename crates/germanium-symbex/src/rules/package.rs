//! `package A --* B`, following the sound package logic of seed 004.
//!
//! **The witness set.** Every state satisfying `A` is represented at once, symbolically: a
//! solver scope in which `A` is produced into an empty heap from a fresh snapshot `s`
//! (values are parts of `s` or fresh constants, conditional parts become chunks with
//! conditional amounts: production never branches). The constants made in this scope are
//! the witnesses' values; a query in the scope that holds, holds for every witness.
//!
//! **Extract** (`rules::extract`). The proof script and `B` run against the witness
//! state. Before each step (and before `B`), a dry run of it on a copy finds what the
//! witness state lacks ([`Verifier::extract_missing`], called where a consumption takes
//! from a heap): the
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

use germanium_smt::{substitute, Op, QuantifierKind, Term, TermKind};
use germanium_syntax::ast::{Block, Expr, ExprKind, Stmt, StmtKind};
use germanium_syntax::Span;

use crate::errors::ErrorContext;
use crate::rules::context::{Abort, Verifier, R};
use crate::rules::quantified::Access;
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

/// A wand being packaged: the state around it and what its dry runs took from that state.
pub struct PackageFrame {
    /// The heap around the package, which the footprint is taken from.
    pub outer: Heap,
    /// [`crate::decider::Decider::fresh_mark`] when the package started: constants made
    /// since are the witnesses' values.
    pub(super) mark: usize,
    /// [`crate::decider::Decider::declared_mark`] when the package started: functions
    /// declared since are defined in its scope only (inverses, named maps).
    pub(super) declared_mark: usize,
    /// During a dry run: the witness state with what was extracted so far (merged, so a
    /// witness incompatible with it is dropped before the next decision).
    pub(super) whole: Heap,
    /// Names of amounts taken from `outer` (terms free of the witnesses' values) and their
    /// definitions, assumed again once the package's scope is popped.
    pub(super) outer_names: HashSet<Term>,
    pub(super) outer_facts: Vec<Term>,
    /// The left-hand side's state as produced, and what was taken from `outer` so far
    /// (location and amount): with combinable wands, the footprint the witnesses see is
    /// cut down to fit the left-hand side (see [`Verifier::visible_to_witnesses`]).
    pub(super) lhs: Heap,
    pub(super) extracted: Vec<(Resource, Vec<Term>, Permission)>,
    /// The resources taken from `outer` through quantified chunks.
    pub(super) extracted_quantified: HashSet<Resource>,
    /// Inverse functions made in the scope for quantified consumptions: amounts taken from
    /// `outer` may speak through them, so their facts are assumed again after the scope
    /// where the injectivity they rest on is proved there.
    pub(super) inverses: Vec<ScopedInverse>,
    /// What extracting assumed during the dry run under way (assumed again after it).
    pub(super) extraction_facts: Vec<Term>,
}

/// The fact `forward` about a quantified consumption's inverse functions, which is
/// consistent where `injective` holds; `own` are the constants made for the two (the
/// quantifier's variables read at fresh constants), which stand for arbitrary values.
pub(crate) struct ScopedInverse {
    pub injective: Term,
    pub forward: Term,
    pub own: HashSet<Term>,
}

impl PackageFrame {
    /// The constants made since the package started that stand for the witnesses' values
    /// (not the names of amounts taken from the state around).
    pub(super) fn witness_values(&self, decider: &crate::decider::Decider) -> HashSet<Term> {
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
            declared_mark: self.decider.declared_mark(),
            whole: Heap::default(),
            outer_names: HashSet::new(),
            outer_facts: Vec::new(),
            lhs: Heap::default(),
            extracted: Vec::new(),
            extracted_quantified: HashSet::new(),
            inverses: Vec::new(),
            extraction_facts: Vec::new(),
        });
        let witness = State {
            store: st.store.clone(),
            heap: Heap::default(),
            old_heaps: st.old_heaps.clone(),
            label_loops: Vec::new(),
        };
        let result = self.package_in_scope(witness, lhs, rhs, proof, &ctx);
        let mut outer_facts = Vec::new();
        let mut outer_names = HashSet::new();
        let mut inverses = Vec::new();
        let mut made = HashSet::new();
        if let Some(frame) = self.member.packages.pop() {
            made = frame.witness_values(&self.decider);
            st.heap = frame.outer;
            outer_facts = frame.outer_facts;
            outer_names = frame.outer_names;
            inverses = frame.inverses;
        }
        let facts = self.decider.assumptions_above(depth);
        self.pop(s.span)?;
        for fact in &outer_facts {
            self.assume(fact.clone(), s.span)?;
        }
        self.promote_outer_names(&outer_names, &outer_facts);
        for inverse in inverses {
            self.reestablish_inverse(inverse, &made, s.span)?;
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

    /// After a package inside another's proof script: the amounts it took (`names`, defined
    /// among `facts`) whose definitions are free of the enclosing package's witnesses' values
    /// are terms of the state around that package too, so they are no witness values there
    /// and their definitions outlive its scope (an amount the enclosing package takes next
    /// may then speak of them and stay one term for all its witnesses).
    fn promote_outer_names(&mut self, names: &HashSet<Term>, facts: &[Term]) {
        let Some(enclosing) = self.member.packages.last() else {
            return;
        };
        let mut witness = enclosing.witness_values(&self.decider);
        let mut promoted = Vec::new();
        for fact in facts {
            let Some((Op::Eq, [a, b])) = fact.as_op() else {
                continue;
            };
            let (name, definition) = if names.contains(a) { (a, b) } else { (b, a) };
            if !names.contains(name) || definition.mentions_any(&witness) {
                continue;
            }
            witness.remove(name);
            promoted.push((name.clone(), fact.clone()));
        }
        if let Some(enclosing) = self.member.packages.last_mut() {
            for (name, fact) in promoted {
                enclosing.outer_names.insert(name);
                enclosing.outer_facts.push(fact);
            }
        }
    }

    /// Records, inside a package, the inverse functions of a quantified consumption (whose
    /// fact `forward` was just assumed) for [`Verifier::reestablish_inverse`].
    pub(crate) fn keep_inverse_past_package(
        &mut self,
        access: &Access,
        forward: Term,
        e: &Expr,
    ) -> R<()> {
        if self.member.packages.is_empty() {
            return Ok(());
        }
        let mark = self.decider.fresh_mark();
        let injective = self.injectivity(access, e)?;
        let mut own: HashSet<Term> = self.decider.fresh_since(mark).iter().cloned().collect();
        own.extend(access.at.iter().cloned());
        if let Some(frame) = self.member.packages.last_mut() {
            frame.inverses.push(ScopedInverse {
                injective,
                forward,
                own,
            });
        }
        Ok(())
    }

    /// After a package's scope: assumes an inverse's fact again where it and its
    /// injectivity are free of the witnesses' values (`made`) and the injectivity is proved
    /// in the state around (then the fact is consistent there; the inverse functions are
    /// fresh, and the other facts about them only define fresh maps).
    fn reestablish_inverse(
        &mut self,
        inverse: ScopedInverse,
        made: &HashSet<Term>,
        span: Span,
    ) -> R<()> {
        let foreign: HashSet<Term> = made.difference(&inverse.own).cloned().collect();
        if inverse.injective.mentions_any(&foreign) || inverse.forward.mentions_any(&foreign) {
            return Ok(());
        }
        if !self.prove(inverse.injective.clone(), span)? {
            return Ok(());
        }
        self.assume_read(inverse.forward.clone(), span)?;
        if let Some(enclosing) = self.member.packages.last_mut() {
            enclosing.inverses.push(inverse);
        }
        Ok(())
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
        self.in_wand_rhs(|v| {
            v.dry_run(&mut witness, |v, dry| {
                let heap = dry.heap.clone();
                v.consume(dry, &heap, rhs, ctx)
            })?;
            let heap = witness.heap.clone();
            let r = v.assertion_snapshot(&witness, &heap, rhs)?;
            v.consume(&mut witness, &heap, rhs, ctx)?;
            Ok((s_lhs, r))
        })
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
    /// follows does both. It runs in a solver scope of its own: where what it assumed
    /// without checking contradicts the path (an `apply` or `unfold` of what is not held
    /// produced the right-hand side or the body, `false`), it is forgotten, and only what
    /// extracting assumed about the footprint is assumed again: the real step must not
    /// run on a path the dry run made infeasible.
    fn dry_run(
        &mut self,
        witness: &mut State,
        f: impl FnOnce(&mut Self, &mut State) -> R<()>,
    ) -> R<()> {
        let mut dry = witness.clone();
        if let Some(frame) = self.member.packages.last_mut() {
            frame.whole = witness.heap.clone();
            frame.extraction_facts.clear();
        }
        let reported = self.errors.len();
        self.push(Span::default())?;
        let r = self.with_modes(
            |m| {
                m.extracting = true;
                m.checking = false;
            },
            |v| f(v, &mut dry),
        );
        // Where what the dry run assumed contradicts the path, only extracting's facts are
        // kept; otherwise all (the real step assumes the same where its checks hold, and
        // reports where they do not).
        // Nothing assumed: nothing to ask the solver.
        let assumed = self.decider.facts_since(0);
        let contradicted = !assumed.is_empty() && !self.feasible(Term::tt(), Span::default())?;
        self.pop(Span::default())?;
        let extracted = self
            .member
            .packages
            .last_mut()
            .map(|frame| std::mem::take(&mut frame.extraction_facts))
            .unwrap_or_default();
        for fact in if contradicted { extracted } else { assumed } {
            self.assume(fact, Span::default())?;
        }
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
        let mut parts = vec![Term::forall(
            vec![(name.clone(), sort.clone())],
            body,
            vec![vec![applied]],
        )];
        // What the scope said of the parts made functions of `s` (the look-up and domain
        // of a quantified part's snapshot), where it says it in terms of `s` and the state
        // around only: one fact per part for every `s` (of fresh functions: sound).
        let skolems: HashSet<Term> = map.keys().filter(|c| *c != s_lhs).cloned().collect();
        for fact in facts {
            let TermKind::Quantifier(q) = fact.kind() else {
                continue;
            };
            if !fact.mentions_any(&skolems) {
                continue;
            }
            let rewrite = |t: &Term| substitute(&substitute(t, &definitions), &map);
            let inner = rewrite(&q.body);
            if !inner.terms_among(made).is_empty() {
                continue;
            }
            let patterns: Vec<Vec<Term>> = q
                .triggers
                .iter()
                .map(|p| p.iter().map(rewrite).collect::<Vec<_>>())
                .filter(|p| p.iter().any(|t| triggers::mentions(t, &s)))
                .collect();
            if patterns.is_empty() || q.kind != QuantifierKind::Forall {
                continue;
            }
            let mut vars = vec![(name.clone(), sort.clone())];
            vars.extend(q.vars.iter().cloned());
            parts.push(Term::forall(vars, inner, patterns));
        }
        let definition = Term::and(parts);
        self.assume(definition.clone(), span)?;
        Ok(definition)
    }
}
