//! Errors reported to the user, identified as in Viper (`error.id` or `error.id:reason.id`).

use crate::span::Span;

/// Identifiers of the errors found before verification.
pub mod ids {
    pub const PARSER: &str = "parser.error";
    pub const TYPECHECKER: &str = "typechecker.error";
    pub const CONSISTENCY: &str = "consistency.error";
    /// A construct the verifier does not support yet (never silently verified).
    pub const UNSUPPORTED: &str = "internal:feature.unsupported";
    pub const INTERNAL: &str = "internal";
    /// The message of the `UNSUPPORTED` note at the name of a member left unverified
    /// (besides the error at the construct): output counts such members apart.
    pub const MEMBER_NOT_VERIFIED: &str = "this member was not verified: it needs a construct Germanium's verifier does not support yet";
}

/// Errors make a file fail and stop the pipeline after their stage; warnings do neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Severity {
    #[default]
    Error,
    Warning,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// `error.id` or `error.id:reason.id`, e.g. `assert.failed:assertion.false`.
    pub id: String,
    /// The offending node.
    pub span: Span,
    /// Human-readable text following Viper's wording.
    pub message: String,
    pub severity: Severity,
    /// A failing state for a failed check, where asked for (`--counterexample`).
    pub counterexample: Option<Box<Counterexample>>,
}

/// Concrete values of a state in which a check fails, as Viper writes them: the method's
/// variables, and the field values of the objects the state holds permission to. Objects
/// have stable names (`o1`, `o2`, ... in order of first appearance), so aliasing shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counterexample {
    /// Why no counterexample was found (then every list is empty).
    pub not_found: Option<String>,
    /// The solver answered `unknown`: its model may not satisfy the failing query.
    pub candidate: bool,
    /// Variable name and value, in declaration order.
    pub variables: Vec<(String, String)>,
    /// Object, field and value, by object then field.
    pub heap: Vec<(String, String, String)>,
    /// The same in the method's pre-state (`old`), where the check refers to it.
    pub old_heap: Vec<(String, String, String)>,
    /// Label, object, field and value at the labels the check reads (`old[l](o1.f)`).
    pub labelled_heap: Vec<(String, String, String, String)>,
    /// Predicate instances held: name, argument values, amount held.
    pub predicates: Vec<(String, Vec<String>, String)>,
    /// Applications of heap-dependent functions in the failing check: name, argument
    /// values, result.
    pub functions: Vec<(String, Vec<String>, String)>,
}

impl Diagnostic {
    pub fn new(id: impl Into<String>, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            id: id.into(),
            span,
            message: message.into(),
            severity: Severity::Error,
            counterexample: None,
        }
    }

    /// A warning (e.g. `parser.warning`): reported, but the program is still processed.
    pub fn warning(id: impl Into<String>, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Self::new(id, span, message)
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    pub fn parser(span: Span, message: impl Into<String>) -> Self {
        Self::new(ids::PARSER, span, message)
    }

    pub fn typechecker(span: Span, message: impl Into<String>) -> Self {
        Self::new(ids::TYPECHECKER, span, message)
    }

    pub fn consistency(span: Span, message: impl Into<String>) -> Self {
        Self::new(ids::CONSISTENCY, span, message)
    }
}
