//! The per-member result cache, used by the driver when `Options::cache` is set
//! (`germanium-driver`'s `cached` module decides what is looked up and stored).
//!
//! A member's result is stored under a [`Key`] made of what its result can depend on
//! ([`KeyPlan`]): its own text, the declarations it names, transitively (a callee's
//! contract, a function's, predicate's, field's or macro's whole text), what the verifier
//! assumes in every member (every domain and ADT, every function's contract and, but for
//! functions, which functions failed), the options that change verification, and the
//! versions of Germanium and Z3. Editing a method body changes that method's key only; a
//! contract, the keys of its callers too; a predicate, function body or field, the keys of
//! the members that name it. Errors are stored with offsets relative to the member's start,
//! so a member that moved keeps its result; a result with an error outside the member is
//! not stored.
//!
//! Its second table keeps answers to solver queries ([`StoredAnswers`]), so that a member
//! verified again asks Z3 only the queries its edit changed.
//!
//! Architecture invariant: a lookup that fails (no database, a database another process
//! holds, a damaged entry) is a miss, never an error or a stale hit.

mod answers;
mod keys;
mod slice;
mod store;

pub use answers::{StoredAnswers, MAX_ANSWERS};
pub use keys::{Key, KeyPlan, MemberKey};
pub use slice::Slice;
pub use store::{CachedError, ResultCache};

/// What identifies this build of Germanium: its version and its executable's size and
/// modification time (every build writes a new executable), so results of another build
/// are never taken; `None` when the executable cannot be looked at. Cheap: reading the
/// whole executable to hash it cost more than verifying a small file.
pub fn build_id() -> Option<String> {
    let meta = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!(
        "{} {} bytes {}.{:09}",
        env!("CARGO_PKG_VERSION"),
        meta.len(),
        modified.as_secs(),
        modified.subsec_nanos()
    ))
}
