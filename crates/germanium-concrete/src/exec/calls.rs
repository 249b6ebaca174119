//! Method calls and loops, by their specifications: a call exhales the callee's
//! precondition and inhales its postcondition; a loop havocs what its body assigns.

use germanium_semantics::{Semantics, VarId};
use germanium_syntax::ast::{Block, Expr, StmtKind};
use germanium_syntax::Span;
use num_rational::BigRational;
use num_traits::{One, Zero};

use super::{out, Check, Choices, End, Machine, Outcome, Pending, Run, X};
use crate::heap::Heap;
use crate::value::Value;

impl Machine<'_> {
    /// A method call: the callee's precondition exhaled, its results and the locations it
    /// gives back chosen, its postcondition inhaled.
    pub(super) fn call(
        &self,
        run: &mut Run,
        span: Span,
        name: &str,
        args: &[Expr],
        targets: &[Expr],
        choices: &mut dyn Choices,
    ) -> X<()> {
        let (Some(callee), Some(info)) = (
            self.ev.methods.get(name).copied(),
            self.sem.methods.get(name),
        ) else {
            return out(Outcome::Unknown(format!("no method `{name}`")));
        };
        let values = args
            .iter()
            .map(|a| self.value(run, a))
            .collect::<X<Vec<Value>>>()?;
        let caller_store = std::mem::take(&mut run.store);
        let caller_old = std::mem::take(&mut run.old);
        run.store = info.params.iter().copied().zip(values).collect();
        run.old = run.heap.clone();
        let outcome = (|| {
            self.exhale_all(
                run,
                &callee.contract.requires,
                Check::CallPrecondition,
                true,
            )?;
            for r in &info.returns {
                run.pending.push(Pending::Var(*r));
            }
            for post in &callee.contract.ensures {
                self.inhale_times(run, post, &BigRational::one(), choices, false)?;
            }
            self.resolve_pending(run, choices)?;
            Ok(info
                .returns
                .iter()
                .map(|r| run.store[r].clone())
                .collect::<Vec<Value>>())
        })();
        let callee_store = std::mem::replace(&mut run.store, caller_store);
        run.old = caller_old;
        let results = match outcome {
            Ok(results) => results,
            Err(End::Out(Outcome::Failed(mut f))) => {
                // The failure is the call's, in the caller's state.
                f.span = span;
                f.store = run.store.clone();
                drop(callee_store);
                return out(Outcome::Failed(f));
            }
            Err(other) => return Err(other),
        };
        for (target, v) in targets.iter().zip(results) {
            self.assign(run, target, v)?;
        }
        Ok(())
    }

    pub(super) fn while_loop(
        &self,
        run: &mut Run,
        cond: &Expr,
        invariants: &[Expr],
        body: &Block,
        choices: &mut dyn Choices,
    ) -> X<()> {
        self.exhale_all(run, invariants, Check::InvariantOnEntry, true)?;
        let mut assigned = Vec::new();
        assigned_vars(self.sem, body, &mut assigned);
        for var in assigned {
            if run.store.remove(&var).is_some() && !run.pending.contains(&Pending::Var(var)) {
                run.pending.push(Pending::Var(var));
            }
        }
        let frame = run.heap.clone();
        for inv in invariants {
            self.inhale_times(run, inv, &BigRational::one(), choices, false)?;
        }
        self.resolve_pending(run, choices)?;
        // The havocked values decide whether this run enters the body or leaves the loop.
        if self.boolean(run, cond)? {
            // The body holds only what the invariant gives (the frame waits after the loop).
            let mut inside = run.heap.taken_by(&frame);
            inside.wands = run.heap.wands[frame.wands.len().min(run.heap.wands.len())..].to_vec();
            run.heap = inside;
            match self.block(run, body, choices) {
                // A jump out of the loop takes the frame along.
                Err(End::Goto(label)) => {
                    if !rejoin(&mut run.heap, &frame) {
                        return out(Outcome::Infeasible);
                    }
                    return Err(End::Goto(label));
                }
                r => r?,
            }
            self.exhale_all(run, invariants, Check::InvariantPreserved, true)?;
            return Err(End::PathDone);
        }
        Ok(())
    }
}

/// Adds the frame a loop left aside to `heap`; false where a location both hold has two
/// values (Viper's state then has them equal: no such execution).
fn rejoin(heap: &mut Heap, frame: &Heap) -> bool {
    for ((o, f), p) in &frame.perms {
        if let (Some(mine), Some(theirs)) = (heap.value(*o, f), frame.value(*o, f)) {
            if heap.perm(*o, f) > BigRational::zero() && mine != theirs {
                return false;
            }
        }
        let total = heap.perm(*o, f) + p;
        if let Some(v) = frame.value(*o, f) {
            heap.set(*o, f, v.clone(), total);
        } else {
            heap.set_perm(*o, f, total);
        }
    }
    for ((name, args), p) in &frame.predicates {
        let total = heap.instance(name, args) + p;
        heap.set_instance(name, args.clone(), total);
    }
    heap.wands.extend(frame.wands.iter().cloned());
    true
}

/// The variables declared outside `block` that it assigns (a loop havocs them).
fn assigned_vars(sem: &Semantics, block: &Block, into: &mut Vec<VarId>) {
    for s in &block.stmts {
        match &s.kind {
            StmtKind::Assign(targets, _) => {
                for t in targets {
                    if let Some(v) = sem.var_id(t.id) {
                        into.push(v);
                    }
                }
            }
            StmtKind::New(t, _) => {
                if let Some(v) = sem.var_id(t.id) {
                    into.push(v);
                }
            }
            StmtKind::If {
                then, otherwise, ..
            } => {
                assigned_vars(sem, then, into);
                if let Some(b) = otherwise {
                    assigned_vars(sem, b, into);
                }
            }
            StmtKind::While { body, .. } | StmtKind::Block(body) => assigned_vars(sem, body, into),
            _ => {}
        }
    }
}
