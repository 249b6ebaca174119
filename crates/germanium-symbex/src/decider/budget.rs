//! The budget of one solver query: the verifier-neutral crate's, the same for every back end.

pub use germanium_verifier::budget::*;
