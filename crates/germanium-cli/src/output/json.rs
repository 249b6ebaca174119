//! `--format json`: one JSON object per file on its own line, as fixed by `spec/cli.md`.
//! Fields may be added but never renamed or dropped.

use germanium_driver::{EventError, FileReport};
use germanium_syntax::diagnostic::Confirmation;
use germanium_syntax::Counterexample;
use serde::Serialize;

use super::stats::{file_stats, JsonFileStats, MemberRow};

#[derive(Serialize)]
struct JsonReport<'a> {
    /// `file` in `--format json-stream` (an addition to the spec); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    event: Option<&'static str>,
    file: String,
    result: &'a str,
    errors: Vec<JsonError<'a>>,
    time_ms: u128,
    /// The back end that verified the file, `symbex`, `vcg`, or `symbex+vcg` with
    /// `--cross-check` (an addition to the spec; absent when verification did not run).
    #[serde(skip_serializing_if = "Option::is_none")]
    backend: Option<&'static str>,
    /// With `--stats`: each verified member's statistics and their sum (an addition).
    #[serde(skip_serializing_if = "Option::is_none")]
    stats: Option<JsonFileStats<'a>>,
}

/// One error as the JSON outputs write it (a file's line and a member's line alike).
#[derive(Serialize)]
pub(crate) struct JsonError<'a> {
    id: &'a str,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    message: &'a str,
    /// `error` or `warning` (an addition to the spec; warnings do not make a file fail).
    severity: &'a str,
    /// The file the error is in: the input file or one it imports (an addition to the spec).
    file: &'a str,
    /// A failing state, with `--counterexample` (an addition to the spec; see
    /// `docs/counterexamples.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    counterexample: Option<JsonCounterexample<'a>>,
}

#[derive(Serialize)]
struct JsonCounterexample<'a> {
    /// Why none was found (then the lists are empty); absent when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_found: Option<&'a str>,
    /// The solver answered `unknown`: the values may not make the check fail.
    candidate: bool,
    /// What running the method says: `confirmed` (a run from `pre_state` fails the check;
    /// the values are that run's), `none-within-bound` (no run within `runs` fails it: maybe
    /// incompleteness), `undecided` (`reason`), `unchecked`.
    confirmation: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pre_state: Vec<JsonVariable<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    runs: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    variables: Vec<JsonVariable<'a>>,
    heap: Vec<JsonField<'a>>,
    /// The pre-state's field values, where the check refers to `old`.
    old_heap: Vec<JsonField<'a>>,
    /// Field values at the labels the check reads (`old[l](..)`).
    labelled_heap: Vec<JsonLabelledField<'a>>,
    /// Predicate instances held.
    predicates: Vec<JsonPredicate<'a>>,
    /// Applications of heap-dependent functions in the failing check.
    functions: Vec<JsonApplication<'a>>,
}

#[derive(Serialize)]
struct JsonApplication<'a> {
    function: &'a str,
    arguments: &'a [String],
    result: &'a str,
}

#[derive(Serialize)]
struct JsonLabelledField<'a> {
    label: &'a str,
    object: &'a str,
    field: &'a str,
    value: &'a str,
}

#[derive(Serialize)]
struct JsonPredicate<'a> {
    predicate: &'a str,
    arguments: &'a [String],
    amount: &'a str,
}

#[derive(Serialize)]
struct JsonVariable<'a> {
    name: &'a str,
    value: &'a str,
}

#[derive(Serialize)]
struct JsonField<'a> {
    object: &'a str,
    field: &'a str,
    value: &'a str,
}

fn fields(heap: &[(String, String, String)]) -> Vec<JsonField<'_>> {
    heap.iter()
        .map(|(object, field, value)| JsonField {
            object,
            field,
            value,
        })
        .collect()
}

/// The JSON line for one report (without the trailing newline); `stats`: the members'
/// statistics with `--stats`.
pub fn render(report: &FileReport, stats: Option<&[MemberRow]>) -> String {
    render_event(report, None, stats)
}

/// The same, marked `"event": "file"` for `--format json-stream`.
pub fn render_file_event(report: &FileReport, stats: Option<&[MemberRow]>) -> String {
    render_event(report, Some("file"), stats)
}

impl<'a> JsonError<'a> {
    /// The error `e` (its place resolved), with no counterexample.
    pub(crate) fn placed(e: &'a EventError) -> JsonError<'a> {
        JsonError {
            id: &e.id,
            line: e.line,
            column: e.column,
            end_line: e.end_line,
            end_column: e.end_column,
            message: &e.message,
            severity: if e.warning { "warning" } else { "error" },
            file: &e.file,
            counterexample: None,
        }
    }
}

fn counterexample(c: &Counterexample) -> JsonCounterexample<'_> {
    JsonCounterexample {
        not_found: c.not_found.as_deref(),
        candidate: c.candidate,
        confirmation: match &c.confirmation {
            Confirmation::Confirmed { .. } => "confirmed",
            Confirmation::NoneWithinBound { .. } => "none-within-bound",
            Confirmation::Undecided(_) => "undecided",
            Confirmation::Unchecked => "unchecked",
        },
        pre_state: match &c.confirmation {
            Confirmation::Confirmed { pre_state } => pre_state
                .iter()
                .map(|(name, value)| JsonVariable { name, value })
                .collect(),
            _ => Vec::new(),
        },
        runs: match &c.confirmation {
            Confirmation::NoneWithinBound { runs, .. } => Some(*runs),
            _ => None,
        },
        reason: match &c.confirmation {
            Confirmation::Undecided(why) => Some(why.as_str()),
            _ => None,
        },
        variables: c
            .variables
            .iter()
            .map(|(name, value)| JsonVariable { name, value })
            .collect(),
        heap: fields(&c.heap),
        old_heap: fields(&c.old_heap),
        labelled_heap: c
            .labelled_heap
            .iter()
            .map(|(label, object, field, value)| JsonLabelledField {
                label,
                object,
                field,
                value,
            })
            .collect(),
        predicates: c
            .predicates
            .iter()
            .map(|(predicate, arguments, amount)| JsonPredicate {
                predicate,
                arguments,
                amount,
            })
            .collect(),
        functions: c
            .functions
            .iter()
            .map(|(function, arguments, result)| JsonApplication {
                function,
                arguments,
                result,
            })
            .collect(),
    }
}

fn render_event(
    report: &FileReport,
    event: Option<&'static str>,
    stats: Option<&[MemberRow]>,
) -> String {
    let placed: Vec<EventError> = report
        .diagnostics
        .iter()
        .map(|d| EventError::of(&report.sources, d))
        .collect();
    let errors = report
        .diagnostics
        .iter()
        .zip(&placed)
        .map(|(d, e)| {
            let mut error = JsonError::placed(e);
            error.counterexample = d.counterexample.as_deref().map(counterexample);
            error
        })
        .collect();
    let json = JsonReport {
        event,
        file: report.path.display().to_string(),
        result: report.result_word(),
        errors,
        time_ms: report.time.as_millis(),
        backend: if report.cross_checked {
            Some("symbex+vcg")
        } else {
            report.backend.map(|b| b.name())
        },
        stats: stats.map(file_stats),
    };
    serde_json::to_string(&json).expect("serialising plain data cannot fail")
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_driver::{Outcome, Stage};
    use germanium_syntax::{Diagnostic, SourceMap, Span};

    #[test]
    fn has_the_documented_shape() {
        let mut sources = SourceMap::new();
        let file = sources.add("t.vpr".into(), "method m()\n{ assert x.f == 2 }\n".into());
        let report = FileReport {
            path: "t.vpr".into(),
            result: Outcome::Failed,
            diagnostics: vec![Diagnostic::new(
                "assert.failed:assertion.false",
                Span::new(file, 20, 28),
                "Assert might fail.",
            )],
            sources,
            program: None,
            stage: Stage::Verify,
            backend: None,
            cross_checked: false,
            time: std::time::Duration::from_millis(41),
        };
        let value: serde_json::Value = serde_json::from_str(&render(&report, None)).unwrap();
        assert_eq!(
            value,
            serde_json::json!({
                "file": "t.vpr", "result": "failed", "time_ms": 41,
                "errors": [{"id": "assert.failed:assertion.false", "line": 2, "column": 10,
                            "end_line": 2, "end_column": 18, "message": "Assert might fail.",
                            "severity": "error", "file": "t.vpr"}]
            })
        );
    }
}
