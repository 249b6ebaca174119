//! Runs Viper's annotated test corpus (and Germanium's seed tests) through the driver and
//! compares the reported errors with the `//::` annotations.
//!
//! - [`annotations`] reads the annotations;
//! - [`compare`] turns them into expectations and compares reports with them, in front-end
//!   mode (only `parser.error`, `typechecker.error`, `consistency.error`) or verify mode;
//! - [`classify`] sorts programs by the verification features they use;
//! - [`corpus`] finds the test files and runs them in parallel;
//! - [`summary`] prints the tables and keeps the committed list of passing files;
//! - [`probes`] inserts `assert false` at program points of verified methods (see
//!   `tests/probes.rs`).
//!
//! The test `tests/corpus.rs` puts these together; see the README for how to run it.

pub mod annotations;
pub mod classify;
pub mod compare;
pub mod corpus;
pub mod cross_check;
pub mod probes;
pub mod soundness;
pub mod summary;
