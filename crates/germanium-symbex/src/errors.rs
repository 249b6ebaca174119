//! Viper's error ids and wording: the verifier-neutral crate's, shared with every back end.

pub use germanium_verifier::errors::*;
