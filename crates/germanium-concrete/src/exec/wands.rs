//! Magic wands in a run: `package` and `apply`.
//!
//! A wand `A --* B` holds in a state (its footprint) when every left-hand-side state that
//! satisfies `A` and is compatible with the footprint makes `B` hold together with it
//! (seed 004). Right-hand sides without `perm` and `forperm` hold in more of a state once
//! they hold in part of it, so a package *fails* exactly when some left-hand-side state
//! compatible with the whole current state makes the proof script or `B` fail on the two
//! together: that is what a run checks, on the left-hand side its choices make.
//!
//! A package that holds takes, of each location, the least the left-hand side does not give
//! (Viper's footprint). That is known exactly when where `A` and `B` hold permissions, and
//! how much, reads no heap value (nor does the proof script's structure); otherwise, and
//! where no left-hand side is compatible with the state at all, the state after the package
//! is not known exactly and the run says so ([`Run::approximate`]).
//!
//! Applying a wand packaged in the run gives back what `B` takes from the left-hand side's
//! state and the footprint, with their values (where a proof script computes them, or `B`
//! holds instances or wands, by running the package again: `replay`); applying one
//! inhaled gives `B` with the
//! values the left-hand side had where it held them and values of their own elsewhere (the
//! footprint is any that makes the wand hold).

use germanium_semantics::Type;
use germanium_syntax::ast::{BinaryOp, Block, Expr, ExprKind, QuantifierKind, StmtKind};
use germanium_syntax::Span;
use num_rational::BigRational;
use num_traits::{One, Zero};
use std::sync::Arc;

use super::supply::{adjust, Supplied};
use super::{out, Check, Choices, End, Machine, Outcome, Run, X};
use crate::eval::{Location, LHS_LABEL};
use crate::heap::{Heap, Replay, WandInstance, WandOrigin};
use crate::value::Value;

/// Choices passed on, counted (a left-hand side made without any is the only one).
struct Counting<'c> {
    inner: &'c mut dyn Choices,
    picks: usize,
}

impl Choices for Counting<'_> {
    fn pick(&mut self, options: usize) -> Option<usize> {
        self.picks += 1;
        self.inner.pick(options)
    }
}

fn sides(wand: &Expr) -> Option<(&Expr, &Expr)> {
    match &wand.kind {
        ExprKind::Binary(BinaryOp::Wand, lhs, rhs) => Some((lhs, rhs)),
        _ => None,
    }
}

impl Machine<'_> {
    fn wand_key(&self, run: &Run, wand: &Expr) -> X<String> {
        let r = self.ev.wand_key_in(&self.state(run), wand);
        self.evaluated(run, r, true)
    }

    /// `package A --* B { script }`.
    pub(super) fn package(
        &self,
        run: &mut Run,
        wand: &Expr,
        script: Option<&Block>,
        choices: &mut dyn Choices,
    ) -> X<()> {
        let Some((lhs, rhs)) = sides(wand) else {
            return out(Outcome::Unknown("a package of no magic wand".into()));
        };
        if self.reads_amounts(rhs) {
            return out(Outcome::Unknown(
                "a package whose right-hand side reads permission amounts".into(),
            ));
        }
        // A proof script reading permission amounts reads the package's own state, which
        // holds the left-hand side and what Viper's package moved in so far: only a package
        // run Viper's way has that state.
        let amounts = script.is_some_and(|b| self.script_reads_amounts(b));
        let followed = self.structure_fixed(lhs)
            && self.structure_fixed(rhs)
            && script.is_none_or(|b| self.script_fixed(b));
        if amounts && !followed {
            return out(Outcome::Unknown(
                "a package whose proof script reads permission amounts".into(),
            ));
        }
        let key = self.wand_key(run, wand)?;
        if amounts || self.supplied(run) {
            let origin = match self.supplied_origin(run, wand, script, choices)? {
                Some(origin) => origin,
                // Inside a package run Viper's way, this one too runs so.
                None if self.supplied(run) => {
                    return out(Outcome::Unknown(
                        "a package inside a package whose footprint is not known".into(),
                    ))
                }
                None => {
                    self.give_up_bound(
                        run,
                        rhs,
                        script,
                        "a package whose proof script reads permission amounts (its footprint is not unique)",
                    );
                    WandOrigin::Opaque
                }
            };
            run.heap.wands.push(WandInstance { key, origin });
            return Ok(());
        }
        let mut counting = Counting {
            inner: choices,
            picks: 0,
        };
        let (result, left) = in_package(run, run.heap.clone(), |run| {
            self.package_on_witness(run, lhs, rhs, script, &mut counting)
        });
        let vacuous = match result {
            Ok(()) => false,
            // No left-hand side compatible with the state: the wand holds of any footprint.
            Err(End::Out(Outcome::Infeasible)) if counting.picks == 0 => true,
            Err(End::Out(Outcome::Failed(mut f))) => {
                f.check = Check::Package;
                return out(Outcome::Failed(f));
            }
            Err(other) => return Err(other),
        };
        // A left-hand side that gives no permission leaves `B` to read the state's values
        // only: its footprint is then unique however `B` reads the heap.
        let fixed = !self.impure(lhs) || self.structure_fixed(lhs) && self.structure_fixed(rhs);
        let plain = self.plain(lhs) && self.plain(rhs);
        // Nothing is taken where `B` asks no permission (and no script runs), or where no
        // state at all satisfies `A` (Viper's package then runs in an inconsistent state).
        let takes_nothing =
            (script.is_none() && !self.impure(rhs)) || (vacuous && self.unsatisfiable(run, lhs)?);
        let origin = if takes_nothing {
            if vacuous {
                let nothing = run.heap.values_only();
                self.holds_on_footprint(run, &nothing, lhs, rhs, &mut counting)?;
            }
            if plain {
                WandOrigin::Packaged(Box::new(run.heap.values_only()))
            } else {
                WandOrigin::Opaque
            }
        } else if vacuous && fixed && script.is_none() {
            match self.separate_footprint(run, lhs, rhs, &mut counting)? {
                Some(footprint) => {
                    self.holds_on_footprint(run, &footprint, lhs, rhs, &mut counting)?;
                    run.heap.give_up(&footprint);
                    if plain {
                        WandOrigin::Packaged(Box::new(footprint))
                    } else {
                        self.replayed(run, wand, None, footprint)
                    }
                }
                None => {
                    self.give_up_bound(
                        run,
                        rhs,
                        script,
                        "a package no left-hand side is compatible with (its footprint is not known)",
                    );
                    WandOrigin::Opaque
                }
            }
        } else if vacuous && fixed && script.is_some_and(|b| self.script_fixed(b)) {
            // Where the script moves what it lacks is followed step by step.
            match self.supplied_origin(run, wand, script, &mut counting)? {
                Some(origin) => origin,
                None => {
                    self.give_up_bound(
                        run,
                        rhs,
                        script,
                        "a package no left-hand side is compatible with (its footprint is not unique)",
                    );
                    WandOrigin::Opaque
                }
            }
        } else if vacuous || !fixed || !script.is_none_or(|b| self.script_fixed(b)) {
            let why = if vacuous {
                "a package no left-hand side is compatible with (its footprint is not unique)"
            } else {
                "a package whose footprint depends on its left-hand side's values"
            };
            self.give_up_bound(run, rhs, script, why);
            WandOrigin::Opaque
        } else {
            let footprint = run.heap.extract(&left);
            if plain && script.is_none_or(only_asserts) {
                WandOrigin::Packaged(Box::new(footprint))
            } else {
                self.replayed(run, wand, script, footprint)
            }
        };
        run.heap.wands.push(WandInstance { key, origin });
        Ok(())
    }

    /// The package `wand` run Viper's way (see `supply`): where the wand held comes from,
    /// `None` where its footprint is not known.
    fn supplied_origin(
        &self,
        run: &mut Run,
        wand: &Expr,
        script: Option<&Block>,
        choices: &mut dyn Choices,
    ) -> X<Option<WandOrigin>> {
        let Some((lhs, rhs)) = sides(wand) else {
            return out(Outcome::Unknown("a package of no magic wand".into()));
        };
        Ok(
            match self.package_supplied(run, lhs, rhs, script, choices)? {
                Some(Supplied::Consistent(footprint)) => {
                    Some(self.replayed(run, wand, script, footprint))
                }
                Some(Supplied::Vacuous) => Some(WandOrigin::Opaque),
                None => None,
            },
        )
    }

    /// A wand packaged from `footprint` whose application runs the package again.
    fn replayed(
        &self,
        run: &Run,
        wand: &Expr,
        script: Option<&Block>,
        footprint: Heap,
    ) -> WandOrigin {
        WandOrigin::Replayed(Arc::new(Replay {
            footprint,
            wand: wand.clone(),
            script: script.cloned(),
            store: run.store.iter().map(|(v, x)| (*v, x.clone())).collect(),
        }))
    }

    /// Whether no state satisfies `e`: inhaling it into an empty heap is infeasible before
    /// any value is chosen (`false`, more than the whole of a location).
    fn unsatisfiable(&self, run: &mut Run, e: &Expr) -> X<bool> {
        struct NoChoices;
        impl Choices for NoChoices {
            fn pick(&mut self, _: usize) -> Option<usize> {
                None
            }
        }
        let empty = Heap {
            objects: run.heap.objects,
            ..Heap::default()
        };
        let outer = std::mem::replace(&mut run.heap, empty);
        let (fresh, pending) = (run.fresh.clone(), std::mem::take(&mut run.pending));
        let r = self.inhale_times(run, e, &BigRational::one(), &mut NoChoices, false);
        run.heap = outer;
        run.fresh = fresh;
        run.pending = pending;
        Ok(matches!(r, Err(End::Out(Outcome::Infeasible))))
    }

    /// Viper's footprint where no left-hand side is compatible with the whole state: with
    /// the left-hand side's state apart, `B` takes its permissions from it first and the
    /// rest from the state, conjunct by conjunct, until what it took from the state cannot
    /// be had together with the left-hand side (that part is still taken; from then on no
    /// left-hand side is left to satisfy, and nothing more is). `None` where that cannot be
    /// followed concretely.
    fn separate_footprint(
        &self,
        run: &mut Run,
        lhs: &Expr,
        rhs: &Expr,
        choices: &mut dyn Choices,
    ) -> X<Option<Heap>> {
        let outer = run.heap.clone();
        let outer_fresh = run.fresh.clone();
        // The left-hand side alone, its values the state's where the state has them.
        run.heap = outer.values_only();
        let r = self
            .inhale_times(run, lhs, &BigRational::one(), choices, true)
            .and_then(|()| self.resolve_pending(run, choices));
        let witness = std::mem::replace(&mut run.heap, outer);
        run.fresh = outer_fresh;
        match r {
            Ok(()) => {}
            Err(End::Out(Outcome::Infeasible)) => return Ok(None),
            Err(e) => return Err(e),
        }
        let mut parts = Vec::new();
        if !self.permission_parts(run, rhs, &mut parts)? {
            return Ok(None);
        }
        let mut left_of_witness = witness.clone();
        let mut footprint = run.heap.values_only();
        for part in parts {
            let Ok(Some(asked)) = self.ev.asks_in(&self.state(run), part) else {
                return Ok(None);
            };
            // A conjunct is taken whole (a quantified one with all its locations) before
            // what it took is compared with the left-hand side.
            let mut incompatible = false;
            for (location, amount) in asked {
                let (in_witness, in_state, taken) = match &location {
                    Location::Field(Value::Ref(Some(o)), f) => (
                        left_of_witness.perm(*o, f),
                        run.heap.perm(*o, f) - footprint.perm(*o, f),
                        witness.perm(*o, f) + footprint.perm(*o, f),
                    ),
                    Location::Instance(p, args) => (
                        left_of_witness.instance(p, args),
                        run.heap.instance(p, args) - footprint.instance(p, args),
                        witness.instance(p, args) + footprint.instance(p, args),
                    ),
                    Location::Field(..) => return Ok(None),
                };
                let from_witness = amount.clone().min(in_witness.clone());
                let rest = &amount - &from_witness;
                adjust(&mut left_of_witness, &location, -from_witness, None);
                if rest <= BigRational::zero() {
                    continue;
                }
                if in_state < rest {
                    return Ok(None);
                }
                incompatible |=
                    matches!(location, Location::Field(..)) && taken + &rest > BigRational::one();
                adjust(&mut footprint, &location, rest, None);
            }
            if incompatible {
                // No left-hand side is compatible with what is taken: the wand holds.
                break;
            }
        }
        Ok(Some(footprint))
    }

    /// The access predicates and instances `e` asks, its conditions read in the state
    /// (they read no heap); false where `e` has other impure parts.
    fn permission_parts<'e>(&self, run: &Run, e: &'e Expr, into: &mut Vec<&'e Expr>) -> X<bool> {
        match &e.kind {
            _ if !self.impure(e) => Ok(true),
            ExprKind::Binary(BinaryOp::And, a, b) => {
                Ok(self.permission_parts(run, a, into)? && self.permission_parts(run, b, into)?)
            }
            ExprKind::Binary(BinaryOp::Implies, c, b) => {
                if self.boolean(run, c)? {
                    self.permission_parts(run, b, into)
                } else {
                    Ok(true)
                }
            }
            ExprKind::Cond(c, a, b) => {
                let branch = if self.boolean(run, c)? { a } else { b };
                self.permission_parts(run, branch, into)
            }
            ExprKind::Annotated(_, inner) => self.permission_parts(run, inner, into),
            ExprKind::Acc(..)
            | ExprKind::Call(..)
            | ExprKind::Quantifier {
                kind: QuantifierKind::Forall,
                ..
            } => {
                into.push(e);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Viper's package with the footprint it chose (where no left-hand side is compatible
    /// with the whole state): `B` must hold on every left-hand side compatible with the
    /// footprint alone, whose locations outside it have values of their own. A left-hand
    /// side the choices make on which `B` fails fails the package.
    fn holds_on_footprint(
        &self,
        run: &mut Run,
        footprint: &Heap,
        lhs: &Expr,
        rhs: &Expr,
        choices: &mut dyn Choices,
    ) -> X<()> {
        let (result, _) = in_package(run, footprint.clone(), |run| {
            self.package_on_witness(run, lhs, rhs, None, choices)
        });
        match result {
            // No left-hand side compatible with the footprint either: the wand holds.
            Ok(()) | Err(End::Out(Outcome::Infeasible)) => Ok(()),
            Err(End::Out(Outcome::Failed(mut f))) => {
                f.check = Check::Package;
                out(Outcome::Failed(f))
            }
            Err(other) => Err(other),
        }
    }

    /// On one left-hand-side state compatible with the current one (held locations keep
    /// their values, the others get their own): the proof script, then `B` taken.
    fn package_on_witness(
        &self,
        run: &mut Run,
        lhs: &Expr,
        rhs: &Expr,
        script: Option<&Block>,
        choices: &mut dyn Choices,
    ) -> X<()> {
        self.inhale_times(run, lhs, &BigRational::one(), choices, false)?;
        self.resolve_pending(run, choices)?;
        run.labels.insert(LHS_LABEL.to_string(), run.heap.clone());
        if let Some(b) = script {
            self.block(run, b, choices)?;
        }
        self.exhale(run, rhs, Check::Package, true)
    }

    /// `apply A --* B`.
    pub(super) fn apply(
        &self,
        run: &mut Run,
        span: Span,
        wand: &Expr,
        choices: &mut dyn Choices,
    ) -> X<()> {
        let Some((lhs, rhs)) = sides(wand) else {
            return out(Outcome::Unknown("an apply of no magic wand".into()));
        };
        let key = self.wand_key(run, wand)?;
        if self.supplied(run) {
            self.supply_wand(run, &key);
        }
        let Some(instance) = run.heap.take_wand(&key) else {
            return self.fail(run, Check::Apply, span, "the magic wand is not held");
        };
        // Instances of one wand from different places: which one Viper gives up is open.
        let ambiguous = run
            .heap
            .wands
            .iter()
            .any(|w| w.key == key && w.origin != instance.origin);
        let before = run.heap.clone();
        self.exhale(run, lhs, Check::Apply, true)?;
        let taken = before.taken_by(&run.heap);
        let outer_lhs = run.labels.insert(LHS_LABEL.to_string(), before.clone());
        let result = match &instance.origin {
            WandOrigin::Packaged(footprint) if !ambiguous => {
                self.give_back(run, rhs, &before, &taken, footprint)
            }
            WandOrigin::Replayed(replay) if !ambiguous => {
                self.replay_package(run, &taken, replay, choices)
            }
            origin if *origin != WandOrigin::Inhaled || ambiguous => {
                // What `B` gives is not known: nothing is given, the state a lower bound.
                run.lower_bound("an applied wand whose result is not replayed exactly");
                Ok(())
            }
            _ => self.give_inhaled(run, rhs, &taken, choices),
        };
        run.labels.remove(LHS_LABEL);
        if let Some(h) = outer_lhs {
            run.labels.insert(LHS_LABEL.to_string(), h);
        }
        result
    }

    /// Applying a packaged wand: `B` taken from what the left-hand side gave and the
    /// footprint, with their values, is added to the state.
    fn give_back(
        &self,
        run: &mut Run,
        rhs: &Expr,
        before: &Heap,
        taken: &Heap,
        footprint: &Heap,
    ) -> X<()> {
        let r = self
            .ev
            .given_back(&self.state(run), before, taken, footprint, rhs);
        let given = self.evaluated(run, r, false)?;
        match run.heap.add_fields(&given) {
            Some(()) => Ok(()),
            None => out(Outcome::Unknown(
                "an applied wand gives a location more than whole or another value".into(),
            )),
        }
    }

    /// Applying an inhaled wand: `B` inhaled, the locations the left-hand side gave keeping
    /// their values, the others getting their own.
    fn give_inhaled(
        &self,
        run: &mut Run,
        rhs: &Expr,
        taken: &Heap,
        choices: &mut dyn Choices,
    ) -> X<()> {
        run.carried = taken.perms.keys().cloned().collect();
        run.carried_instances = taken.predicates.keys().cloned().collect();
        let r = self.inhale(run, rhs, choices, false);
        run.carried.clear();
        run.carried_instances.clear();
        r
    }

    pub(super) fn impure(&self, e: &Expr) -> bool {
        matches!(self.sem.type_of(e.id), Some(Type::Impure))
    }

    fn reads_heap(&self, e: &Expr) -> bool {
        !self.ev.reads_no_heap(e, &[])
    }

    /// Whether where `e` holds permissions, and how much, reads no heap value.
    fn structure_fixed(&self, e: &Expr) -> bool {
        match &e.kind {
            _ if !self.impure(e) => true,
            ExprKind::Binary(BinaryOp::And, a, b) => {
                self.structure_fixed(a) && self.structure_fixed(b)
            }
            ExprKind::Binary(BinaryOp::Implies, c, b) => {
                !self.reads_heap(c) && self.structure_fixed(b)
            }
            ExprKind::Cond(c, a, b) => {
                !self.reads_heap(c) && self.structure_fixed(a) && self.structure_fixed(b)
            }
            ExprKind::Acc(loc, amount) => {
                let parts: Vec<&Expr> = match &loc.kind {
                    ExprKind::FieldAccess(receiver, _) => vec![receiver],
                    ExprKind::Call(_, args) => args.iter().collect(),
                    _ => return false,
                };
                parts.iter().all(|p| !self.reads_heap(p))
                    && amount.as_deref().is_none_or(|a| !self.reads_heap(a))
            }
            ExprKind::Call(_, args) => args.iter().all(|a| !self.reads_heap(a)),
            ExprKind::Annotated(_, inner) => self.structure_fixed(inner),
            // Quantified permissions: where and how much read the bound variables only.
            ExprKind::Quantifier {
                kind: QuantifierKind::Forall,
                body,
                ..
            } => self.structure_fixed(body),
            _ => false,
        }
    }

    fn script_fixed(&self, b: &Block) -> bool {
        b.stmts.iter().all(|s| match &s.kind {
            StmtKind::Fold(e) | StmtKind::Unfold(e) => self.structure_fixed(e),
            StmtKind::Assert(_) => true,
            StmtKind::Apply(w) => self.structure_fixed(w),
            StmtKind::Package(w, inner) => {
                self.structure_fixed(w) && inner.as_ref().is_none_or(|b| self.script_fixed(b))
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                !self.reads_heap(cond)
                    && self.script_fixed(then)
                    && otherwise.as_ref().is_none_or(|o| self.script_fixed(o))
            }
            StmtKind::Block(inner) => self.script_fixed(inner),
            _ => false,
        })
    }

    /// Whether `e` holds field permissions only (no predicate instance, no wand).
    fn plain(&self, e: &Expr) -> bool {
        let mut plain = true;
        germanium_semantics::visit::walk_expr(e, &mut |sub| match &sub.kind {
            ExprKind::Binary(BinaryOp::Wand, ..) => plain = false,
            ExprKind::Call(..) if self.impure(sub) => plain = false,
            ExprKind::Acc(loc, _) if !matches!(loc.kind, ExprKind::FieldAccess(..)) => {
                plain = false
            }
            _ => {}
        });
        plain
    }

    fn script_reads_amounts(&self, b: &Block) -> bool {
        let mut reads = false;
        germanium_semantics::visit::walk_stmts(b, &mut |s| {
            for e in germanium_semantics::visit::stmt_exprs(s) {
                reads |= self.reads_amounts(e);
            }
        });
        reads
    }
}

/// Runs `f` with `heap` as the run's heap, the run's unseen instances, store and
/// left-hand-side state kept aside and put back after (a package's own state ends with it):
/// `f`'s result and the heap it left.
pub(super) fn in_package<T>(run: &mut Run, heap: Heap, f: impl FnOnce(&mut Run) -> T) -> (T, Heap) {
    let outer = std::mem::replace(&mut run.heap, heap);
    let (fresh, store) = (run.fresh.clone(), run.store.clone());
    let outer_lhs = run.labels.remove(LHS_LABEL);
    let result = f(run);
    let inner = std::mem::replace(&mut run.heap, outer);
    run.fresh = fresh;
    run.store = store;
    run.labels.remove(LHS_LABEL);
    if let Some(h) = outer_lhs {
        run.labels.insert(LHS_LABEL.to_string(), h);
    }
    (result, inner)
}

fn only_asserts(b: &Block) -> bool {
    b.stmts
        .iter()
        .all(|s| matches!(s.kind, StmtKind::Assert(_)))
}
