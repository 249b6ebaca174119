//! The symbolic state, plain data with no solver: store, heap, labelled old heaps,
//! permission amounts and snapshot constructors.

pub mod heap;
pub mod modes;
pub mod permission;
pub mod read_levels;
pub mod snapshot;

use std::collections::HashMap;

use germanium_semantics::VarId;
use germanium_smt::Term;

pub use heap::{Chunk, Heap, Owners, Resource};
pub use modes::Modes;
pub use permission::Permission;

/// The label of the method's pre-state (`old(e)`).
pub const PRE_STATE: &str = "old";

#[derive(Clone, Debug, Default)]
pub struct State {
    pub store: HashMap<VarId, Term>,
    pub heap: Heap,
    /// Heaps at `label`s, and at [`PRE_STATE`].
    pub old_heaps: HashMap<String, Heap>,
    /// The loops made of labels this path is running, innermost last.
    pub label_loops: Vec<LabelLoopFrame>,
}

/// A loop made of labels being run: which one (by its index among the method's) and what
/// its invariant did not hold on entry, given back when the path leaves the loop.
#[derive(Clone, Debug, PartialEq)]
pub struct LabelLoopFrame {
    pub loop_index: usize,
    pub frame: Heap,
}
