//! Germanium's symbolic-execution verifier, in the shape of Silicon's rules: a symbolic
//! state (store, heap of permission chunks, path conditions) and four operations —
//! evaluate (expression → term), produce (assertion → added to the state), consume
//! (assertion → checked and removed), execute (statement → successor states).
//!
//! Architecture invariant: never reports a member as verified unless every check on every
//! path was proved by the solver (`unsat` of the negation); `unknown`, timeouts, solver
//! crashes and unsupported constructs become errors on the construct being checked.

pub mod theories;
