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
    /// What running the method on concrete values says of it.
    pub confirmation: Confirmation,
}

/// What a run of the member on concrete values (`germanium-concrete`, a bounded search over
/// its pre-states and the choices Viper's semantics leaves open) says of a failure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Confirmation {
    /// Not run (only the solver's model).
    #[default]
    Unchecked,
    /// A run from this pre-state (name and value, `o1.f` for a field) fails the check; the
    /// counterexample's other values are that run's where it fails.
    Confirmed { pre_state: Vec<(String, String)> },
    /// No run within the bound fails the check: the failure may be the verifier's
    /// incompleteness (`exhaustive`: every run of the bounded values was tried).
    NoneWithinBound { runs: usize, exhaustive: bool },
    /// The runs could not tell (a construct or a type not run concretely yet).
    Undecided(String),
}

impl Counterexample {
    /// A counterexample under its diagnostic: `counterexample:` then one `name = value` line
    /// per variable, one `o1.f = value` line per field value (`old(o1.f)`, `old[l](o1.f)` in
    /// earlier states), one `acc(P(o1, 3), 1/2)` line per predicate instance held, one
    /// `f(o1) = 5` line per function application the check uses.
    pub fn to_text(&self) -> String {
        if let Some(why) = &self.not_found {
            return format!("no counterexample was found: {why}");
        }
        let mut out = match &self.confirmation {
            Confirmation::Confirmed { .. } => String::from(
                "confirmed counterexample (a run from this pre-state fails the check):",
            ),
            Confirmation::NoneWithinBound { runs, .. } => format!(
                "candidate counterexample (no run fails the check within the bound of \
                 {runs} runs: the failure may be the verifier's incompleteness; try a stronger \
                 invariant or precondition, unfolding what the check reads, or a larger --timeout):"
            ),
            _ if self.candidate => {
                String::from("candidate counterexample (the solver did not confirm it):")
            }
            _ => String::from("counterexample:"),
        };
        if let Confirmation::Confirmed { pre_state } = &self.confirmation {
            for (name, value) in pre_state {
                out.push_str(&format!("\n  before: {name} = {value}"));
            }
        }
        for (name, value) in &self.variables {
            out.push_str(&format!("\n  {name} = {value}"));
        }
        for (object, field, value) in &self.heap {
            out.push_str(&format!("\n  {object}.{field} = {value}"));
        }
        for (object, field, value) in &self.old_heap {
            out.push_str(&format!("\n  old({object}.{field}) = {value}"));
        }
        for (label, object, field, value) in &self.labelled_heap {
            out.push_str(&format!("\n  old[{label}]({object}.{field}) = {value}"));
        }
        for (name, args, amount) in &self.predicates {
            let args = args.join(", ");
            out.push_str(&format!("\n  acc({name}({args}), {amount})"));
        }
        for (name, args, result) in &self.functions {
            let args = args.join(", ");
            out.push_str(&format!("\n  {name}({args}) = {result}"));
        }
        out
    }
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

#[cfg(test)]
mod counterexample_tests {
    use super::*;

    #[test]
    fn a_counterexample_is_written_line_by_line_or_says_why_there_is_none() {
        let c = Counterexample {
            variables: vec![("x".into(), "6".into())],
            heap: vec![("o1".into(), "f".into(), "3".into())],
            labelled_heap: vec![("l".into(), "o1".into(), "f".into(), "2".into())],
            predicates: vec![("P".into(), vec!["o1".into()], "1/2".into())],
            functions: vec![("get".into(), vec!["o1".into()], "3".into())],
            ..Default::default()
        };
        assert_eq!(
            c.to_text(),
            "counterexample:\n  x = 6\n  o1.f = 3\n  old[l](o1.f) = 2\n  acc(P(o1), 1/2)\n  get(o1) = 3"
        );
        let none = Counterexample {
            not_found: Some("the solver gave no model".into()),
            ..Default::default()
        };
        assert_eq!(
            none.to_text(),
            "no counterexample was found: the solver gave no model"
        );
    }
}
