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
