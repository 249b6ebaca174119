//! Comparing what Germanium reported for a corpus file with what its annotations expect.
//!
//! Expectations are gathered from every file of the loaded program that has annotations (the
//! test file and the files it imports from disk): an annotation describes its own file,
//! whichever file was the entry point. Pairs are compared as sets of (file, line, id), with
//! ids matched by [`id_matches`].

use std::path::{Path, PathBuf};

use germanium_driver::FileReport;
use germanium_syntax::diagnostic::ids;
use germanium_syntax::macros::PARSER_WARNING;

use crate::annotations::{self, error_part, id_matches, AnnotationKind};

/// Which errors take part in the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareMode {
    /// Only errors found before verification (`parser.error`, `typechecker.error`,
    /// `consistency.error`); reported `internal` errors always count, as failures.
    FrontEnd,
    /// All errors (for when the verifier exists).
    Verify,
}

impl CompareMode {
    pub fn name(self) -> &'static str {
        match self {
            CompareMode::FrontEnd => "frontend",
            CompareMode::Verify => "verify",
        }
    }

    /// Whether errors with this id take part in the comparison.
    pub fn considers(self, id: &str) -> bool {
        match self {
            CompareMode::Verify => true,
            CompareMode::FrontEnd => {
                is_front_end(id) || id == PARSER_WARNING || error_part(id) == ids::INTERNAL
            }
        }
    }
}

/// `parser.error`, `typechecker.error` or `consistency.error` (with or without a reason).
pub fn is_front_end(id: &str) -> bool {
    matches!(
        error_part(id),
        ids::PARSER | ids::TYPECHECKER | ids::CONSISTENCY
    )
}

/// One (file, line, id) triple, expected or reported. `file` is canonical where possible.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Located {
    pub file: PathBuf,
    pub line: u32,
    pub id: String,
}

/// The annotations of the files of one run that matter for comparison.
#[derive(Clone, Debug, Default)]
pub struct Expectations {
    pub expected: Vec<Located>,
    /// Lines under `IgnoreOthers`.
    pub ignore_others: Vec<(PathBuf, u32)>,
    /// `//::` lines that could not be read, as (file, line): reported so they are not lost.
    pub malformed: Vec<(PathBuf, u32)>,
}

impl Expectations {
    /// The annotations of every file on disk loaded for `report` (the library has none).
    pub fn of_report(report: &FileReport) -> Expectations {
        let mut expectations = Expectations::default();
        for (_, source) in report.sources.files() {
            if source
                .path
                .starts_with(germanium_syntax::loader::stdlib::STD_PREFIX)
            {
                continue;
            }
            expectations.add_file(&canonical(&source.path), &source.text);
        }
        expectations
    }

    pub fn add_file(&mut self, file: &Path, text: &str) {
        let (found, malformed) = annotations::parse(text);
        for annotation in found {
            let Some(line) = annotation.applies_to else {
                self.malformed
                    .push((file.to_path_buf(), annotation.written_on));
                continue;
            };
            match annotation.kind {
                AnnotationKind::Expected(id) => self.expected.push(Located {
                    file: file.to_path_buf(),
                    line,
                    id,
                }),
                AnnotationKind::IgnoreOthers => self.ignore_others.push((file.to_path_buf(), line)),
                // Germanium should not report what a back end wrongly reports, and must report
                // what a back end misses: both are already said by the `ExpectedOutput`s.
                AnnotationKind::Unexpected { .. }
                | AnnotationKind::Missing { .. }
                | AnnotationKind::IgnoreFile(_) => {}
            }
        }
        self.malformed
            .extend(malformed.into_iter().map(|m| (file.to_path_buf(), m.line)));
    }
}

/// The outcome of comparing one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Expected but not reported (unsoundness, the worse kind).
    pub missing: Vec<Located>,
    /// Reported but not expected (incompleteness).
    pub unexpected: Vec<Located>,
    /// Whether any front-end error was expected (for the statistics).
    pub expects_front_end_error: bool,
}

impl Comparison {
    pub fn passes(&self) -> bool {
        self.missing.is_empty() && self.unexpected.is_empty()
    }
}

/// The (file, line, id) triples of a report's diagnostics, duplicates removed.
///
/// Warnings count only in files that also have parse errors: Viper's front end hands its
/// warnings to the test suite together with a parse failure, and not otherwise (compare
/// `all/issues/silver/0114.vpr`, which expects one, with `0172.vpr`, which does not).
pub fn reported_of(report: &FileReport) -> Vec<Located> {
    let parse_failed = report
        .diagnostics
        .iter()
        .any(|d| d.is_error() && d.id == ids::PARSER);
    let mut reported: Vec<Located> = report
        .diagnostics
        .iter()
        .filter(|d| d.is_error() || parse_failed)
        .map(|d| Located {
            file: canonical(&report.sources.get(d.span.file).path),
            line: report.sources.start(d.span).line,
            id: d.id.clone(),
        })
        .collect();
    reported.sort();
    reported.dedup();
    reported
}

pub fn compare(mode: CompareMode, expectations: &Expectations, reported: &[Located]) -> Comparison {
    let expected: Vec<&Located> = expectations
        .expected
        .iter()
        .filter(|e| mode.considers(&e.id))
        .collect();
    let reported: Vec<&Located> = reported.iter().filter(|r| mode.considers(&r.id)).collect();
    let same_place = |a: &Located, b: &Located| a.file == b.file && a.line == b.line;
    let mut missing: Vec<Located> = expected
        .iter()
        .filter(|e| {
            !reported
                .iter()
                .any(|r| same_place(e, r) && id_matches(&e.id, &r.id))
        })
        .map(|e| (*e).clone())
        .collect();
    let mut unexpected: Vec<Located> = reported
        .iter()
        .filter(|r| {
            let explained = expected
                .iter()
                .any(|e| same_place(e, r) && id_matches(&e.id, &r.id));
            let ignored = expectations
                .ignore_others
                .iter()
                .any(|(file, line)| *file == r.file && *line == r.line);
            !explained && !ignored
        })
        .map(|r| (*r).clone())
        .collect();
    missing.sort();
    missing.dedup();
    unexpected.sort();
    Comparison {
        missing,
        unexpected,
        expects_front_end_error: expectations.expected.iter().any(|e| is_front_end(&e.id)),
    }
}

/// The canonical form of a path, or the path itself if it cannot be resolved.
pub fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32, id: &str) -> Located {
        Located {
            file: "t.vpr".into(),
            line,
            id: id.into(),
        }
    }

    fn expectations(text: &str) -> Expectations {
        let mut expectations = Expectations::default();
        expectations.add_file(Path::new("t.vpr"), text);
        expectations
    }

    #[test]
    fn front_end_mode_compares_only_front_end_and_internal_errors() {
        let e = expectations(
            "//:: ExpectedOutput(typechecker.error)\nx\n//:: ExpectedOutput(assert.failed)\ny\n",
        );
        let ok = compare(CompareMode::FrontEnd, &e, &[at(2, "typechecker.error")]);
        assert!(ok.passes() && ok.expects_front_end_error);
        let wrong_line = compare(CompareMode::FrontEnd, &e, &[at(3, "typechecker.error")]);
        assert_eq!(wrong_line.missing, [at(2, "typechecker.error")]);
        assert_eq!(wrong_line.unexpected, [at(3, "typechecker.error")]);
        let crash = compare(
            CompareMode::FrontEnd,
            &e,
            &[at(2, "typechecker.error"), at(1, "internal")],
        );
        assert_eq!(crash.unexpected, [at(1, "internal")]);
        // The verification error is not compared in front-end mode, but is in verify mode.
        let verify = compare(CompareMode::Verify, &e, &[at(2, "typechecker.error")]);
        assert_eq!(verify.missing, [at(4, "assert.failed")]);
    }

    #[test]
    fn reasons_and_ignore_others() {
        let e = expectations(
            "//:: ExpectedOutput(assert.failed)\n//:: IgnoreOthers\nx\n\
             //:: ExpectedOutput(exhale.failed:insufficient.permission)\ny\n",
        );
        let reported = [
            at(3, "assert.failed:assertion.false"),
            at(3, "exhale.failed:receiver.null"),
            at(5, "exhale.failed:insufficient.permission"),
        ];
        assert!(compare(CompareMode::Verify, &e, &reported).passes());
        let wrong_reason = compare(
            CompareMode::Verify,
            &e,
            &[at(3, "assert.failed"), at(5, "exhale.failed:x.y")],
        );
        assert_eq!(
            wrong_reason.missing,
            [at(5, "exhale.failed:insufficient.permission")]
        );
        assert_eq!(wrong_reason.unexpected, [at(5, "exhale.failed:x.y")]);
    }

    #[test]
    fn a_clean_file_passes_only_without_reports() {
        let e = expectations("method m() {}\n");
        assert!(compare(CompareMode::FrontEnd, &e, &[]).passes());
        assert!(!compare(CompareMode::FrontEnd, &e, &[at(1, "parser.error")]).passes());
        assert!(!compare(CompareMode::FrontEnd, &e, &[]).expects_front_end_error);
    }

    #[test]
    fn front_end_mode_considers_front_end_and_internal_ids() {
        assert!(CompareMode::FrontEnd.considers("consistency.error"));
        assert!(CompareMode::FrontEnd.considers("internal"));
        assert!(!CompareMode::FrontEnd.considers("assert.failed:assertion.false"));
    }
}
