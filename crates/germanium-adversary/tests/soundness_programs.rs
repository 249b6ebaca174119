//! The programs of `tests/soundness/`: each holds the small programs that made a back end
//! verify something false (issue 54's causes, and what campaigns find), each beside a
//! failing or a correct twin, annotated with Viper's `//:: ExpectedOutput`.
//!
//! - Each back end, and `--cross-check`, reports exactly the annotated errors, on the whole
//!   file and with `--member` selecting each member on its own (a caller verified without
//!   the function it calls).
//! - The concrete runs, which share nothing with either back end, confirm the annotations:
//!   a member with an expected error other than a refutation has a failing run; a member
//!   without has none among those tried.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use germanium_adversary::oracles::{judge, Concrete, OracleSettings};
use germanium_corpus::compare::{compare, reported_of, CompareMode, Expectations, Located};
use germanium_driver::{run_file, Backend, FileReport, MemberFilter, Mode, Options};

fn soundness_programs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/soundness");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "vpr"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "too few programs in {}", dir.display());
    files
}

fn options(backend: Backend, cross_check: bool, member: Option<String>) -> Options {
    let mut options = Options::new(Mode::Verify);
    options.backend = backend;
    options.cross_check = cross_check;
    options.jobs = 1;
    options.members = member.map(|m| MemberFilter(Arc::new(move |name: &str| name == m)));
    options
}

/// The members of a report's program: name and line range.
fn members(report: &FileReport) -> Vec<(String, u32, u32)> {
    use germanium_syntax::ast::ItemKind;
    let Some(program) = &report.program else {
        return Vec::new();
    };
    program
        .items
        .iter()
        .filter_map(|item| {
            let name = match &item.kind {
                ItemKind::Method(m) => m.name.name.clone(),
                ItemKind::Function(f) => f.name.name.clone(),
                ItemKind::Predicate(p) => p.name.name.clone(),
                _ => return None,
            };
            let (first, last) = (
                report.sources.start(item.span).line,
                report.sources.end(item.span).line,
            );
            Some((name, first, last))
        })
        .collect()
}

/// Expected errors of the lines `first..=last` (annotations sit just above their line).
fn within(expected: &[Located], first: u32, last: u32) -> Vec<Located> {
    expected
        .iter()
        .filter(|l| (first..=last).contains(&l.line))
        .cloned()
        .collect()
}

#[test]
fn each_back_end_reports_exactly_the_annotated_errors() {
    let mut failures = Vec::new();
    for file in soundness_programs() {
        for (backend, cross) in [
            (Backend::Symbex, false),
            (Backend::Vcg, false),
            (Backend::Symbex, true),
        ] {
            let label = if cross { "cross-check" } else { backend.name() };
            let report = run_file(&file, &options(backend, cross, None));
            let expectations = Expectations::of_report(&report);
            let c = compare(CompareMode::Verify, &expectations, &reported_of(&report));
            if !c.passes() {
                failures.push(format!(
                    "{} ({label}): missing {:?}, unexpected {:?}",
                    file.display(),
                    c.missing,
                    c.unexpected
                ));
            }
            if cross {
                continue;
            }
            // Each member on its own.
            for (member, first, last) in members(&report) {
                let alone = run_file(&file, &options(backend, false, Some(member.clone())));
                let mut mine = expectations.clone();
                mine.expected = within(&expectations.expected, first, last);
                let reported: Vec<Located> = reported_of(&alone)
                    .into_iter()
                    .filter(|l| (first..=last).contains(&l.line))
                    .collect();
                let c = compare(CompareMode::Verify, &mine, &reported);
                if !c.passes() {
                    failures.push(format!(
                        "{} ({label}, --member {member}): missing {:?}, unexpected {:?}",
                        file.display(),
                        c.missing,
                        c.unexpected
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_concrete_runs_confirm_the_annotations() {
    let mut failures = Vec::new();
    let mut confirmed = 0;
    for file in soundness_programs() {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let report = run_file(&file, &options(Backend::Symbex, false, None));
        let expected = Expectations::of_report(&report).expected;
        let judgement = judge(&text, &OracleSettings::default());
        assert!(!judgement.ill_formed, "{}", file.display());
        for (member, first, last) in members(&report) {
            let Some(m) = judgement.members.iter().find(|m| m.name == member) else {
                continue;
            };
            let errors: BTreeSet<String> = within(&expected, first, last)
                .into_iter()
                .map(|l| l.id)
                .filter(|id| !id.starts_with("refute.failed"))
                .collect();
            match (&m.concrete, errors.is_empty()) {
                (Concrete::Fails { .. }, false) => confirmed += 1,
                (Concrete::Fails { check, line, .. }, true) => failures.push(format!(
                    "{} member {member}: a run fails `{check}` at line {line}, no error annotated",
                    file.display()
                )),
                (Concrete::NoFailure { runs, .. }, false) => failures.push(format!(
                    "{} member {member}: {errors:?} annotated, no failing run in {runs}",
                    file.display()
                )),
                _ => {}
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        confirmed >= 10,
        "only {confirmed} annotated members confirmed"
    );
}
