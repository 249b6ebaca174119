//! The verification-condition back end, Carbon's way without Boogie: each member is lowered
//! to guarded commands over an explicit state (per field and per predicate a heap map and a permission map),
//! and its weakest precondition goes to the solver as SMT-LIB, one labelled assertion per
//! check, so that a model names every check that fails.
//!
//! Shares with the symbolic engine only the front end, the theories (`germanium-theories`)
//! and the verifier-neutral layer (`germanium-verifier`): none of its heap, permission,
//! predicate or function encodings, so that each back end checks the other.

mod assertions;
mod binders;
mod body_footprints;
mod collections;
mod expr;
mod frames;
mod function_held;
mod functions;
mod lower;
mod package;
mod permissions;
mod predicates;
mod quantified;
mod quantified_frames;
mod read_permissions;
mod run;
mod snapshots;
mod state;
mod stmt;
mod termination;
mod vc;
mod wands;

pub use run::verify_members;
