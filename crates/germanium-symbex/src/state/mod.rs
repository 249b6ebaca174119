//! The symbolic state: store, heap, labelled old heaps; and the path-condition stack kept in
//! lock-step with the solver's scopes.

pub mod heap;
pub mod path_conditions;
pub mod permission;
pub mod snapshot;

use std::collections::HashMap;

use germanium_semantics::VarId;
use germanium_smt::Term;

pub use heap::{Chunk, Heap};
pub use path_conditions::PathConditions;
pub use permission::Permission;

/// The label of the method's pre-state (`old(e)`).
pub const PRE_STATE: &str = "old";

#[derive(Clone, Debug, Default)]
pub struct State {
    pub store: HashMap<VarId, Term>,
    pub heap: Heap,
    /// Heaps at `label`s, and at [`PRE_STATE`].
    pub old_heaps: HashMap<String, Heap>,
}
