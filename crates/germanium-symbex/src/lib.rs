//! Germanium's symbolic-execution verifier, in the shape of Silicon's rules: a symbolic
//! state (store, heap of permission chunks, path conditions) and four operations —
//! evaluate (expression → term), produce (assertion → added to the state), consume
//! (assertion → checked and removed), execute (statement → successor states).
//!
//! Map: [`state`] (permissions, heap chunks, snapshots, path conditions), [`errors`]
//! (Viper's error ids and wording), `context` (the shared environment and one worker's
//! verifier), `evaluate`, `produce`, `consume`, `execute` (with `call_targets`: field and
//! call targets; `allocation`: new objects are in no predicate), `predicates` and `snapshots`
//! (fold, unfold, predicate chunks), `functions`, `function_bodies`, `function_axioms`
//! (applications, well-formedness, definitional and postcondition axioms), `unrolling_triggers`
//! (which unfoldings give a definition its extra trigger), `relevance` (quantified goals over
//! applications), `inhale_exhale`
//! (which part of `[a, b]` is read where), `impure_assume`, `termination` and `predicate_measures`,
//! `label_loops`, `lenient` (reads without permission), `nesting` (no predicate instance inside itself), `havoc` (quasihavoc of
//! fields and predicate instances), `forperm`,
//! `triggers` (quantifier triggers), [`verifier`] (members, workers,
//! solvers), `germanium_theories` (sorts and axioms of Viper's built-in and user types, a crate of its own).
//!
//! Architecture invariant: never reports a member as verified unless every check on every
//! path was proved by the solver (`unsat` of the negation); `unknown`, timeouts, solver
//! crashes and unsupported constructs become errors on the construct being checked.

mod allocation;
mod call_targets;
mod chunks;
mod consume;
mod context;
pub mod decider;
pub mod errors;
mod evaluate;
mod execute;
mod forperm;
mod function_axioms;
mod function_bodies;
mod functions;
mod havoc;
mod impure_assume;
mod inhale_exhale;
mod label_loops;
mod lenient;
mod nesting;
mod predicate_measures;
mod predicates;
mod produce;
mod relevance;
mod snapshots;
pub mod state;
mod termination;
mod triggers;
mod unrolling_triggers;
pub mod verifier;

pub use errors::VerificationError;
pub use verifier::{verify_program, VerifyOptions};
