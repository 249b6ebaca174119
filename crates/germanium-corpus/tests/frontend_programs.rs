//! The programs real front ends generated (`../shared/frontend-programs/`): both back ends
//! run on each, and every error one reports where the other does not, in a member both gave
//! a verdict on, must be in `tests/corpus/frontend-cross-check-disagreements.txt` with its
//! cause (`GERMANIUM_UPDATE_CROSS_CHECK=1` adds the new ones, cause to be written).

use std::path::Path;

use germanium_corpus::compare::CompareMode;
use germanium_corpus::corpus::{self, SharedPaths};
use germanium_corpus::cross_check;
use germanium_driver::Backend;

#[test]
fn frontend_programs_cross_check() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = SharedPaths::from_crate_dir(crate_dir);
    let files = corpus::discover_frontend_programs(&shared);
    assert!(
        files.len() >= 45,
        "only {} front-end programs found under {}",
        files.len(),
        shared.root.join("frontend-programs").display()
    );
    let started = std::time::Instant::now();
    let symbex = corpus::run_with(&files, CompareMode::Verify, &[], Backend::Symbex);
    let vcg = corpus::run_with(&files, CompareMode::Verify, &[], Backend::Vcg);
    println!(
        "front-end programs: {} files, both back ends, in {:.1?}",
        files.len(),
        started.elapsed()
    );
    let path = crate_dir.join("../../tests/corpus/frontend-cross-check-disagreements.txt");
    let found = cross_check::disagreements(&symbex, &vcg);
    let compared = files.iter().map(|f| f.name.clone()).collect();
    cross_check::against_list(&found, &path, &compared).assert_none_new(&path);
}
