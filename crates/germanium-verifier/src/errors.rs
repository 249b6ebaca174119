//! Verification errors with Viper's identifiers and wording.

use germanium_syntax::ast::Expr;
use germanium_syntax::{Diagnostic, SourceMap, Span};

/// One failed check: `error_id:reason_id` at `span`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerificationError {
    pub error_id: &'static str,
    pub reason_id: &'static str,
    pub span: Span,
    pub message: String,
}

impl VerificationError {
    pub fn into_diagnostic(self) -> Diagnostic {
        Diagnostic::new(
            format!("{}:{}", self.error_id, self.reason_id),
            self.span,
            self.message,
        )
    }
}

/// What is being checked: the error kind and the node it is reported at. When `node` is
/// `None` the error is reported at the offending conjunct (postconditions, invariants,
/// contract well-formedness).
#[derive(Clone, Debug)]
pub struct ErrorContext {
    pub error_id: &'static str,
    pub node: Option<Span>,
    /// The first sentence of the message, e.g. `Assert might fail.`
    pub headline: String,
}

impl ErrorContext {
    pub fn at(error_id: &'static str, node: Span, headline: impl Into<String>) -> ErrorContext {
        ErrorContext {
            error_id,
            node: Some(node),
            headline: headline.into(),
        }
    }

    pub fn at_conjunct(error_id: &'static str, headline: impl Into<String>) -> ErrorContext {
        ErrorContext {
            error_id,
            node: None,
            headline: headline.into(),
        }
    }

    /// Errors are reported at the whole clause (`requires`, `ensures`, `invariant`) being
    /// checked, not at the failing conjunct (which the message names).
    pub fn for_clause(&self, clause: &Expr) -> ErrorContext {
        let mut ctx = self.clone();
        if ctx.node.is_none() {
            ctx.node = Some(clause.span);
        }
        ctx
    }
}

/// Why a check failed.
#[derive(Clone, Debug)]
pub enum Reason {
    AssertionFalse,
    InsufficientPermission,
    DivisionByZero,
    NegativePermission,
    /// A fold or unfold of no permission.
    NotPositive,
    SeqIndexNegative(String),
    SeqIndexLength(String),
    MapKeyContains(String),
    RefutationTrue,
    LabelledStateNotReached(String),
    NotInjective,
    WandNotFound,
}

impl Reason {
    pub fn id(&self) -> &'static str {
        match self {
            Reason::AssertionFalse => "assertion.false",
            Reason::InsufficientPermission => "insufficient.permission",
            Reason::DivisionByZero => "division.by.zero",
            Reason::NegativePermission => "negative.permission",
            Reason::NotPositive => "permission.not.positive",
            Reason::SeqIndexNegative(_) => "seq.index.negative",
            Reason::SeqIndexLength(_) => "seq.index.length",
            Reason::MapKeyContains(_) => "map.key.contains",
            Reason::RefutationTrue => "refutation.true",
            Reason::LabelledStateNotReached(_) => "labelled.state.not.reached",
            Reason::NotInjective => "qp.not.injective",
            Reason::WandNotFound => "wand.not.found",
        }
    }

    /// Viper's sentence for the reason, about the expression text `e`.
    pub fn sentence(&self, e: &str) -> String {
        match self {
            Reason::AssertionFalse => format!("Assertion {e} might not hold."),
            Reason::InsufficientPermission => {
                format!("There might be insufficient permission to access {e}.")
            }
            Reason::DivisionByZero => format!("Divisor {e} might be zero."),
            Reason::NegativePermission => format!("Fraction {e} might be negative."),
            Reason::NotPositive => format!("Fraction {e} might not be positive."),
            Reason::SeqIndexNegative(s) => format!("Index {e} into {s} might be negative."),
            Reason::SeqIndexLength(s) => {
                format!("Index {e} into {s} might exceed sequence length.")
            }
            Reason::MapKeyContains(m) => format!("Map {m} might not contain an entry at key {e}."),
            Reason::RefutationTrue => format!("Assertion {e} definitely holds."),
            Reason::LabelledStateNotReached(l) => {
                format!("Did not reach labelled state {l} required to evaluate {e}.")
            }
            Reason::NotInjective => format!("Quantified resource {e} might not be injective."),
            Reason::WandNotFound => "Magic wand instance not found.".to_string(),
        }
    }
}

/// The source text of a node, on one line, for messages.
pub fn text_of(sources: &SourceMap, span: Span) -> String {
    let file = sources
        .files()
        .find(|(id, _)| *id == span.file)
        .map(|(_, f)| f);
    let Some(file) = file else {
        return String::from("<expression>");
    };
    let text = file
        .text
        .get(span.start as usize..span.end as usize)
        .unwrap_or("<expression>");
    without_comments(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` with its `//` and `/* */` comments left out (Viper's messages show the
/// expression, not the annotations around it).
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('/') {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        if after.starts_with("//") {
            out.push(' ');
            rest = after.find('\n').map_or("", |end| &after[end..]);
        } else if let Some(comment) = after.strip_prefix("/*") {
            out.push(' ');
            rest = comment.find("*/").map_or("", |end| &comment[end + 2..]);
        } else {
            out.push('/');
            rest = &after[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Builds the error for `reason` about `offending` within `context`.
pub fn make_error(
    sources: &SourceMap,
    context: &ErrorContext,
    reason: &Reason,
    offending: &Expr,
) -> VerificationError {
    let span = context.node.unwrap_or(offending.span);
    let message = format!(
        "{} {}",
        context.headline,
        reason.sentence(&text_of(sources, offending.span))
    );
    VerificationError {
        error_id: context.error_id,
        reason_id: reason.id(),
        span,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::without_comments;

    #[test]
    fn comments_are_left_out_of_quoted_expressions() {
        assert_eq!(
            without_comments("a /* b */ ==> // c\n d / 2"),
            "a   ==>  \n d / 2"
        );
        assert_eq!(without_comments("x // no newline"), "x  ");
        assert_eq!(without_comments("x /* unterminated"), "x  ");
        assert_eq!(without_comments("1/2"), "1/2");
    }
}
