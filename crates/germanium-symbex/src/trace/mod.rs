//! The execution log's interface: a tree of records, one per step of symbolic execution,
//! handed to a sink. The default sink ignores everything, so the rules call it
//! unconditionally and an execution log (`--trace`, the debugger) is switched on without
//! touching them.
//!
//! A record is *opened* when its step starts and *closed* when it ends; the records opened
//! in between are its children (so, as in any symbolic executor written with
//! continuations, the statements after an `if` are children of each of its sides). Each
//! record says the state it applies to; the state is only given when it differs from the
//! one given last (the sink remembers), and path conditions come as numbered facts whose
//! text is given the first time.
//!
//! Architecture invariant: a sink observes; it never changes what the rules do, so turning
//! a log on never changes a result.

use germanium_syntax::Span;

/// What a record is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// One member, from its start to its end: the root of the member's records.
    Member,
    Evaluate,
    Produce,
    Consume,
    Execute,
    /// One side of a split (an `if`'s branch, a guard an assertion is evaluated under);
    /// the record's `detail` says which.
    Branch,
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::Member => "member",
            Step::Evaluate => "evaluate",
            Step::Produce => "produce",
            Step::Consume => "consume",
            Step::Execute => "execute",
            Step::Branch => "branch",
        }
    }
}

/// A source position in the words a person reads: file, line and column (1-based) of the
/// start and end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Place {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

/// One path condition: a number unique within a worker's log, and its text the first time
/// the worker gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact {
    pub number: u64,
    pub text: Option<String>,
}

/// A symbolic state as text: the store (variable and value), the heap's chunks (each
/// `resource(args)`, amount, snapshot) and the path conditions in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StateView {
    pub store: Vec<(String, String)>,
    pub heap: Vec<ChunkView>,
    pub path: Vec<Fact>,
}

/// One heap chunk as text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChunkView {
    /// `field`, `predicate` or `wand`; quantified chunks say `quantified field`, ...
    pub kind: String,
    /// The field, predicate or wand shape's name.
    pub name: String,
    /// The receiver or arguments (for a quantified chunk, its variables).
    pub args: Vec<String>,
    pub amount: String,
    pub snapshot: String,
}

/// One step of symbolic execution.
#[derive(Clone, Debug)]
pub struct Record<'r> {
    pub step: Step,
    /// The construct being worked on (empty for an internal step).
    pub span: Span,
    pub place: Option<Place>,
    /// What happened, in words (the member's name, the branch taken, ...).
    pub detail: &'r str,
    /// Open solver scopes at this step (the depth of the path).
    pub depth: usize,
    /// The state, when it differs from the state given last (`None`: that one).
    pub state: Option<&'r StateView>,
}

/// A check that failed inside the open record.
#[derive(Clone, Debug)]
pub struct Failure<'r> {
    /// Viper's error identifier and message.
    pub id: &'r str,
    pub message: &'r str,
    pub place: Option<Place>,
    /// The query the solver could not refute (the negated goal under the path), as SMT-LIB.
    pub query: Option<String>,
}

/// Where records go.
pub trait Sink: Send {
    /// Whether records are wanted at all (callers skip building them when not).
    fn enabled(&self) -> bool;
    /// Opens a record; the records opened until the matching [`Sink::close`] are its
    /// children.
    fn open(&mut self, record: &Record<'_>);
    /// Closes the record opened last.
    fn close(&mut self);
    /// A failed check, inside the record opened last.
    fn failure(&mut self, failure: &Failure<'_>);
}

/// The default: no log.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTrace;

impl Sink for NoTrace {
    fn enabled(&self) -> bool {
        false
    }

    fn open(&mut self, _record: &Record<'_>) {}

    fn close(&mut self) {}

    fn failure(&mut self, _failure: &Failure<'_>) {}
}
