//! Every member's dependency slice (what a remote action verifies, `germanium_cache::Slice`)
//! is a well-formed program of its own, for every file of the corpus's pass list.

use std::path::{Path, PathBuf};

use germanium_cache::KeyPlan;
use germanium_driver::{run_file, run_text, Mode, Options};

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

#[test]
fn every_slice_of_the_pass_list_type_checks() {
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/verify-passing.txt");
    let list = std::fs::read_to_string(list).expect("the pass list");
    let options = Options::new(Mode::Check);
    let (mut files, mut slices) = (0, 0);
    let mut failures = Vec::new();
    for relative in list.lines().filter(|l| !l.trim().is_empty()) {
        let path = shared().join(relative);
        let report = run_file(&path, &options);
        let Some(program) = report.program.as_ref() else {
            continue;
        };
        if report.diagnostics.iter().any(|d| d.is_error()) {
            // Files whose expected errors are the front end's own.
            continue;
        }
        files += 1;
        let plan = KeyPlan::new(program, &report.sources, "");
        for order in 0..plan.member_count() {
            let slice = plan.slice(order, &report.sources).expect("a slice");
            slices += 1;
            let checked = run_text(&path, slice.text.clone(), &options);
            let errors: Vec<String> = checked
                .diagnostics
                .iter()
                .filter(|d| d.is_error())
                .map(|d| format!("{}: {}", d.id, d.message))
                .collect();
            if !errors.is_empty() {
                failures.push(format!("{relative} member {}: {errors:?}", slice.member));
            }
        }
    }
    assert!(
        files > 1000 && slices > 3000,
        "{files} files, {slices} slices"
    );
    assert!(
        failures.is_empty(),
        "{} of {slices} slices do not type-check:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A remote action verifies a member alone in its slice, with the functions its slice leaves
/// without a body untrusted when the member is a function, and those that failed in the
/// program when it is not (`run_jobs`, as `germanium action` does). On every 25th file of the
/// pass list, with both back ends, each member's errors there, placed back in the program,
/// are its errors in the whole program's run.
#[test]
fn every_member_verifies_in_its_slice_as_in_its_program() {
    use germanium_driver::{run_jobs, slice_job, Backend};
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/verify-passing.txt");
    let list = std::fs::read_to_string(list).expect("the pass list");
    let files: Vec<&str> = list
        .lines()
        .filter(|l| !l.trim().is_empty())
        .skip(2)
        .step_by(25)
        .collect();
    let (mut members, mut with_errors) = (0, 0);
    let mut differences = Vec::new();
    for backend in [Backend::Symbex, Backend::Vcg] {
        let mut options = Options::new(Mode::Verify);
        options.backend = backend;
        options.jobs = 2;
        for relative in &files {
            let path = shared().join(relative);
            let report = run_file(&path, &options);
            let Some(program) = report.program.as_ref() else {
                continue;
            };
            if report.stage < germanium_driver::Stage::Verify {
                continue;
            }
            let plan = KeyPlan::new(program, &report.sources, "");
            let errors_in = |span: germanium_syntax::Span| -> Vec<(String, u32, u32)> {
                let mut v: Vec<(String, u32, u32)> = report
                    .diagnostics
                    .iter()
                    .filter(|d| d.is_error() && d.span.file == span.file)
                    .filter(|d| d.span.start >= span.start && d.span.end <= span.end)
                    .map(|d| (d.id.clone(), d.span.start, d.span.end))
                    .collect();
                v.sort();
                v
            };
            let verifiable: Vec<(String, &str)> = germanium_verifier::members(program)
                .iter()
                .map(|m| (m.name_and_kind().0.to_string(), m.name_and_kind().1))
                .collect();
            let keys: Vec<_> = plan
                .function_keys()
                .into_iter()
                .chain(plan.other_keys(&Default::default()))
                .filter(|k| verifiable.contains(&(k.name.clone(), k.kind)))
                .collect();
            let failed: Vec<String> = keys
                .iter()
                .filter(|k| k.kind == "function" && !errors_in(k.span).is_empty())
                .map(|k| k.name.clone())
                .collect();
            for k in &keys {
                let slice = plan.slice(k.order, &report.sources).expect("a slice");
                let job = slice_job(k, &slice, &failed);
                let result = run_jobs(&[job], &options).pop().expect("a result");
                let mut got: Vec<(String, u32, u32)> = result
                    .diagnostics
                    .iter()
                    .filter(|d| !d.warning)
                    .map(|d| {
                        let span = d
                            .span
                            .and_then(|(s, e)| slice.original(s, e))
                            .unwrap_or(k.span);
                        (d.id.clone(), span.start, span.end)
                    })
                    .collect();
                got.sort();
                let expected = errors_in(k.span);
                members += 1;
                with_errors += usize::from(!expected.is_empty());
                if got != expected {
                    differences.push(format!(
                        "{backend:?} {relative} {}: program {expected:?}, slice {got:?}",
                        k.name
                    ));
                }
            }
        }
    }
    assert!(
        members > 200 && with_errors > 20,
        "{members} members, {with_errors} with errors"
    );
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
