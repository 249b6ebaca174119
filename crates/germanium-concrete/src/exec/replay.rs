//! Applying a wand packaged in the run whose footprint is known but whose right-hand side's
//! values a proof script computes (or that holds predicate instances or wands): the package
//! runs again, on what the apply gave up of the left-hand side together with the footprint,
//! and what the right-hand side takes there is given back to the state.
//!
//! Viper's package records the right-hand side's snapshot as a function of the left-hand
//! side's (seed 004: the script runs on a left-hand side of its own, the footprint's values
//! fixed); running the script again on the values the apply gives computes that function
//! there. Where the two cannot be held together (a location more than whole, two values) or
//! the package does not hold on these values, what the wand gives is not known and the state
//! stays a lower bound, as for a wand whose footprint is not known.

use std::collections::BTreeSet;

use num_rational::BigRational;
use num_traits::{One, Zero};

use super::wands::in_package;
use super::{out, Check, Choices, End, Instance, Machine, Outcome, Run, X};
use crate::eval::LHS_LABEL;
use crate::heap::{Heap, Replay, WandInstance};
use germanium_syntax::ast::{BinaryOp, ExprKind};

/// What the package's second run left: the state before its right-hand side was taken,
/// after, and the instances whose contents it had not seen.
struct Rerun {
    before_rhs: Heap,
    after: Heap,
    fresh: BTreeSet<Instance>,
}

impl Machine<'_> {
    /// Gives what applying the wand `replay` describes gives, `taken` being what the apply
    /// took of the left-hand side from the state.
    pub(super) fn replay_package(
        &self,
        run: &mut Run,
        taken: &Heap,
        replay: &Replay,
        choices: &mut dyn Choices,
    ) -> X<()> {
        let ExprKind::Binary(BinaryOp::Wand, _, rhs) = &replay.wand.kind else {
            return out(Outcome::Unknown("a replay of no magic wand".into()));
        };
        let Some(joint) = joint_state(run, taken, &replay.footprint) else {
            run.lower_bound("an applied wand whose footprint and left-hand side disagree");
            return Ok(());
        };
        let (result, after) = in_package(run, joint, |run| {
            run.store = replay.store.iter().map(|(v, x)| (*v, x.clone())).collect();
            run.labels.insert(LHS_LABEL.to_string(), run.heap.clone());
            let pending = std::mem::take(&mut run.pending);
            let result = (|| {
                if let Some(b) = &replay.script {
                    self.block(run, b, choices)?;
                }
                self.resolve_pending(run, choices)?;
                let before_rhs = run.heap.clone();
                self.exhale(run, rhs, Check::Package, true)?;
                self.resolve_pending(run, choices)?;
                Ok(before_rhs)
            })();
            run.pending = pending;
            result.map(|before_rhs| (before_rhs, run.fresh.clone()))
        });
        let rerun = match result {
            Ok((before_rhs, fresh)) => Rerun {
                before_rhs,
                after,
                fresh,
            },
            // The package does not hold on these values (Viper's would have failed): what
            // the wand gives here says nothing of a real run.
            Err(End::Out(Outcome::Failed(_) | Outcome::Infeasible)) => {
                run.lower_bound(
                    "an applied wand whose package does not hold on its left-hand side",
                );
                return Ok(());
            }
            Err(other) => return Err(other),
        };
        // Given whole or not at all: a part given with values that clash says nothing.
        let (mut heap, mut fresh) = (run.heap.clone(), run.fresh.clone());
        match give(&mut heap, &mut fresh, &rerun) {
            Some(()) => {
                run.heap = heap;
                run.fresh = fresh;
            }
            None => run.lower_bound(
                "an applied wand that gives a location more than whole or another value",
            ),
        }
        Ok(())
    }
}

/// The package's state where the apply happens: the left-hand side the apply took, with the
/// state's values, and the footprint with its own; `None` where they cannot be held together.
fn joint_state(run: &Run, taken: &Heap, footprint: &Heap) -> Option<Heap> {
    let mut joint = run.heap.values_only();
    joint.perms = taken.perms.clone();
    joint.predicates = taken.predicates.clone();
    for ((o, f), p) in &footprint.perms {
        let value = footprint.value(*o, f)?;
        let differs = run.heap.value(*o, f) != Some(value);
        // Another value where the state or the left-hand side holds the location: which one
        // the package's state has is not known.
        if differs
            && (run.heap.perm(*o, f) > BigRational::zero()
                || taken.perm(*o, f) > BigRational::zero())
        {
            return None;
        }
        let total = joint.perm(*o, f) + p;
        if total > BigRational::one() {
            return None;
        }
        joint.set(*o, f, value.clone(), total);
    }
    for ((name, args), p) in &footprint.predicates {
        let total = joint.instance(name, args) + p;
        joint.set_instance(name, args.clone(), total);
    }
    joint.wands = footprint.wands.clone();
    Some(joint)
}

/// Adds to the state what the right-hand side took in the package's second run, with the
/// values found there; `None` where that would hold a location more than whole or with
/// two values.
fn give(heap: &mut Heap, fresh: &mut BTreeSet<Instance>, rerun: &Rerun) -> Option<()> {
    let mut given = rerun.before_rhs.taken_by(&rerun.after);
    given.fields = rerun.after.fields.clone();
    // Values the second run found (contents it opened, values it chose) are the state's
    // too, where the state does not hold the location with another.
    for ((o, f), v) in &rerun.after.fields {
        match heap.value(*o, f) {
            Some(w) if w == v => {}
            _ if heap.perm(*o, f) > BigRational::zero() => return None,
            _ => {
                heap.fields.insert((*o, f.clone()), v.clone());
            }
        }
    }
    heap.add_fields(&given)?;
    for ((name, args), p) in &given.predicates {
        let total = heap.instance(name, args) + p;
        heap.set_instance(name, args.clone(), total);
    }
    // Contents seen in the second run are seen; instances given with unseen contents keep
    // them unseen.
    fresh.retain(|i| rerun.fresh.contains(i));
    for i in given.predicates.keys() {
        if rerun.fresh.contains(i) {
            fresh.insert(i.clone());
        }
    }
    // The wands the right-hand side took.
    let mut left: Vec<&WandInstance> = rerun.after.wands.iter().collect();
    for w in &rerun.before_rhs.wands {
        match left.iter().position(|l| *l == w) {
            Some(i) => {
                left.remove(i);
            }
            None => heap.wands.push(w.clone()),
        }
    }
    Some(())
}
