//! The execution log's interface: a record per step of symbolic execution, handed to a
//! sink. The default sink ignores everything, so the rules call it unconditionally and an
//! execution log (`--trace`, a debugger) can later be switched on without touching them.
//!
//! Architecture invariant: a sink observes; it never changes what the rules do, so turning
//! a log on never changes a result.

use germanium_syntax::Span;

/// Which of the four operations (or a branch between paths) a record is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Evaluate,
    Produce,
    Consume,
    Execute,
    /// A path splits (`if`, a conditional assertion); the record's `detail` says which way.
    Branch,
}

/// One step of symbolic execution.
#[derive(Clone, Debug)]
pub struct Record<'r> {
    pub step: Step,
    /// The construct being worked on.
    pub span: Span,
    /// What happened, in words (the branch taken, the chunk consumed, ...).
    pub detail: &'r str,
    /// Open solver scopes at this step (the depth of the path).
    pub depth: usize,
}

/// Where records go.
pub trait Sink: Send {
    /// Whether records are wanted at all (callers skip building details when not).
    fn enabled(&self) -> bool;
    fn record(&mut self, record: &Record<'_>);
}

/// The default: no log.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTrace;

impl Sink for NoTrace {
    fn enabled(&self) -> bool {
        false
    }

    fn record(&mut self, _record: &Record<'_>) {}
}
