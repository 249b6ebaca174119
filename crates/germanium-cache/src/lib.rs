//! The per-member result cache, used by the driver when `Options::cache` is set
//! (`germanium-driver`'s `cached` module decides what is looked up and stored).
//!
//! A member's result is stored under a [`Key`] made of its own text and everything its
//! result can depend on (`keys`): the program's text with every method body left out (so
//! contracts, functions with their bodies, predicates, domains and their axioms, fields,
//! macros and imports all count), the member's own body, the options that change
//! verification, and the versions of Germanium and Z3. Editing one method body changes that
//! method's key only; any other edit changes every key. Errors are stored with offsets
//! relative to the member's start, so a member that moved keeps its result; a result with an
//! error outside the member is not stored.
//!
//! Architecture invariant: a lookup that fails (no database, a database another process
//! holds, a damaged entry) is a miss, never an error or a stale hit.

mod keys;
mod store;

pub use keys::{member_keys, Key, MemberKey};
pub use store::{CachedError, ResultCache};

/// What identifies this build of Germanium: a SHA-256 of its own executable (so results
/// of another build are never taken), or `None` when it cannot be read.
pub fn build_id() -> Option<String> {
    use sha2::{Digest, Sha256};
    static ID: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let bytes = std::fs::read(std::env::current_exe().ok()?).ok()?;
        let digest = Sha256::digest(&bytes);
        Some(digest.iter().map(|b| format!("{b:02x}")).collect())
    })
    .clone()
}
