//! Germanium's symbolic-execution verifier, in the shape of Silicon's rules: a symbolic
//! state (store, heap of permission chunks, path conditions) and four operations —
//! evaluate (expression → term), produce (assertion → added to the state), consume
//! (assertion → checked and removed), execute (statement → successor states).
//!
//! Layers, each depending only on those before it (a test in `tests/layers.rs` keeps it so):
//! [`errors`] (Viper's error ids and wording) and [`state`] (plain data: store, heap,
//! permission amounts, snapshots); [`env`] (program-wide tables, computed once); [`decider`]
//! (the solver session and its deterministic budget); [`trace`] (the execution log's
//! interface, a no-op by default); [`resources`] (the only code that looks inside a chunk:
//! one chunk shape, one path to find, count, add, take and write); `rules` (the four operations and everything beneath
//! them); [`run`] (sessions, worker threads, the preamble, the entry point). The theories
//! (sorts and axioms of Viper's built-in and user types) are the crate `germanium_theories`.
//!
//! Architecture invariant: never reports a member as verified unless every check on every
//! path was proved by the solver (`unsat` of the negation); `unknown`, timeouts, solver
//! crashes and unsupported constructs become errors on the construct being checked.

pub mod decider;
pub mod env;
pub mod errors;
pub mod resources;
mod rules;
pub mod run;
pub mod state;
pub mod trace;

pub use errors::VerificationError;
pub use run::{verify_members, verify_program, TraceSinks};
