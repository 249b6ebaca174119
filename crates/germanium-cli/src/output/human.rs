//! Default output: rustc-style diagnostics (source line, caret under the span, the error id as
//! the code) followed by a one-line summary per file.

use std::io;

use codespan_reporting::diagnostic::{Diagnostic as Rendered, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor::WriteColor};
use germanium_driver::{FileReport, Outcome};
use germanium_syntax::Severity;

/// Whether `d` has no place in the program: an empty span in an empty file, or an
/// `internal` error at the very start (the solver's problems).
fn is_nowhere(d: &germanium_syntax::Diagnostic, text_len: usize) -> bool {
    let internal = d.id == germanium_syntax::diagnostic::ids::INTERNAL;
    d.span.is_empty() && (text_len == 0 || (internal && d.span.start == 0))
}

/// Writes all diagnostics of `report`, then its summary line.
pub fn write_report(out: &mut dyn WriteColor, report: &FileReport) -> io::Result<()> {
    let mut files = SimpleFiles::new();
    for (_, file) in report.sources.files() {
        files.add(file.path.display().to_string(), file.text.as_str());
    }
    let config = term::Config::default();
    for diagnostic in &report.diagnostics {
        let text_len = report.sources.get(diagnostic.span.file).text.len();
        let start = (diagnostic.span.start as usize).min(text_len);
        let end = (diagnostic.span.end as usize).clamp(start, text_len);
        let rendered = match diagnostic.severity {
            Severity::Error => Rendered::error(),
            Severity::Warning => Rendered::warning(),
        }
        .with_code(diagnostic.id.clone())
        .with_message(&diagnostic.message)
        // A problem with no place in the program (an unreadable file, an unusable solver)
        // gets no code frame.
        .with_labels(if is_nowhere(diagnostic, text_len) {
            Vec::new()
        } else {
            vec![Label::primary(diagnostic.span.file.0 as usize, start..end)]
        })
        .with_notes(
            diagnostic
                .counterexample
                .iter()
                .map(|c| c.to_text())
                .collect(),
        );
        term::emit(out, &config, &files, &rendered)
            .map_err(|err| io::Error::other(err.to_string()))?;
    }
    writeln!(out, "{}", summary(report))
}

/// `path: verified in 3 ms`, `path: checked (not verified) in 3 ms`, `path: failed with 2
/// errors in 3 ms`, `path: not fully checked (1 unsupported construct, 1 member not
/// verified, 1 error) in 3 ms`
/// (Germanium could not finish).
pub fn summary(report: &FileReport) -> String {
    let errors: Vec<_> = report.diagnostics.iter().filter(|d| d.is_error()).collect();
    let unsupported: Vec<_> = errors
        .iter()
        .filter(|d| d.id == germanium_syntax::diagnostic::ids::UNSUPPORTED)
        .collect();
    // A member left unverified is said at its name besides the construct itself.
    let members = unsupported
        .iter()
        .filter(|d| d.message == germanium_syntax::diagnostic::ids::MEMBER_NOT_VERIFIED)
        .count();
    let constructs = unsupported.len() - members;
    let plural = |n: usize, one: &str, many: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    };
    let all = plural(errors.len(), "error", "errors");
    let verdict = match report.result {
        Outcome::Verified if report.result_word() == "checked" => {
            "checked (not verified)".to_string()
        }
        Outcome::Verified => "verified".to_string(),
        Outcome::Failed => format!("failed with {all}"),
        Outcome::Error if !unsupported.is_empty() => {
            let mut parts = Vec::new();
            if constructs > 0 {
                parts.push(plural(
                    constructs,
                    "unsupported construct",
                    "unsupported constructs",
                ));
            }
            if members > 0 {
                parts.push(plural(
                    members,
                    "member not verified",
                    "members not verified",
                ));
            }
            if errors.len() > unsupported.len() {
                parts.push(plural(errors.len() - unsupported.len(), "error", "errors"));
            }
            format!("not fully checked ({})", parts.join(", "))
        }
        Outcome::Error => format!("not fully checked ({all})"),
    };
    format!(
        "{}: {verdict} in {} ms",
        report.path.display(),
        report.time.as_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use codespan_reporting::term::termcolor::NoColor;
    use germanium_driver::Stage;
    use germanium_syntax::{Diagnostic, SourceMap, Span};

    #[test]
    fn shows_code_line_caret_and_summary() {
        let mut sources = SourceMap::new();
        let file = sources.add("t.vpr".into(), "method m()\n{ var x: Bool := 1 }\n".into());
        let report = FileReport {
            path: "t.vpr".into(),
            result: Outcome::Failed,
            diagnostics: vec![Diagnostic::typechecker(
                Span::new(file, 28, 29),
                "expected Bool",
            )],
            sources,
            program: None,
            stage: Stage::Check,
            backend: None,
            cross_checked: false,
            time: std::time::Duration::from_millis(7),
        };
        let mut out = NoColor::new(Vec::new());
        write_report(&mut out, &report).unwrap();
        let text = String::from_utf8(out.into_inner()).unwrap();
        assert!(
            text.contains("error[typechecker.error]: expected Bool"),
            "{text}"
        );
        assert!(text.contains("┌─ t.vpr:2:18"), "{text}");
        assert!(text.contains("{ var x: Bool := 1 }"), "{text}");
        assert!(text.contains("^"), "{text}");
        assert!(
            text.ends_with("t.vpr: failed with 1 error in 7 ms\n"),
            "{text}"
        );
    }

    #[test]
    fn renders_empty_spans_in_empty_files() {
        let mut sources = SourceMap::new();
        let file = sources.add("gone.vpr".into(), String::new());
        let report = FileReport {
            path: "gone.vpr".into(),
            result: Outcome::Error,
            diagnostics: vec![Diagnostic::new(
                "internal",
                Span::new(file, 0, 5),
                "crashed",
            )],
            sources,
            program: None,
            stage: Stage::Load,
            backend: None,
            cross_checked: false,
            time: Default::default(),
        };
        let mut out = NoColor::new(Vec::new());
        write_report(&mut out, &report).unwrap();
        let text = String::from_utf8(out.into_inner()).unwrap();
        assert!(text.contains("error[internal]: crashed"), "{text}");
        assert!(
            text.contains("gone.vpr: not fully checked (1 error) in 0 ms"),
            "{text}"
        );
    }
}
