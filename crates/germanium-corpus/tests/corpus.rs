//! Runs the whole corpus through the driver and compares with the annotations.
//!
//! - `GERMANIUM_CORPUS_MODE=frontend` (default) compares only front-end errors;
//!   `verify` compares all errors (for when the verifier exists).
//! - Fails if a file listed in `tests/corpus/<mode>-passing.txt` no longer passes; never fails
//!   merely because more files pass. `GERMANIUM_UPDATE_PASSING=1` rewrites the list.
//!
//! Run with `cargo test --release -p germanium-corpus --test corpus -- --nocapture` to see the
//! tables.

use std::path::{Path, PathBuf};

use germanium_corpus::compare::CompareMode;
use germanium_corpus::corpus::{self, SharedPaths};
use germanium_corpus::summary;

#[test]
fn corpus() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = SharedPaths::from_crate_dir(crate_dir);
    assert!(
        shared.root.join("viper-tests").is_dir(),
        "the shared corpus is missing at {}",
        shared.root.display()
    );
    let mode = CompareMode::from_env().unwrap();
    let discovered = corpus::discover(&shared);
    let files = discovered.tests;
    assert!(
        files.len() > 1000,
        "only {} corpus files found",
        files.len()
    );
    let libraries: Vec<&str> = discovered
        .libraries
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    println!(
        "\nnot run on their own (only imported by other tests): {}",
        libraries.join(", ")
    );

    let started = std::time::Instant::now();
    let results = corpus::run(&files, mode, &[shared.import_path()]);
    println!(
        "\ncorpus ({} mode): {} files in {:.1?}\n",
        mode.name(),
        files.len(),
        started.elapsed()
    );
    println!("{}", summary::group_table(&results));
    println!("{}", summary::class_table(&results));
    print!("{}", summary::failure_lines(&results));

    let list_path: PathBuf =
        crate_dir.join(format!("../../tests/corpus/{}-passing.txt", mode.name()));
    let listed = summary::read_pass_list(&list_path);
    let passing = summary::passing_names(&results);
    let regressions: Vec<&String> = listed.difference(&passing).collect();
    let newly_passing: Vec<&String> = passing.difference(&listed).collect();
    for name in &newly_passing {
        println!("NEW  {name} passes (not yet in {})", list_path.display());
    }
    for name in &regressions {
        println!("REGRESSION {name} is listed as passing but does not pass");
    }
    if std::env::var("GERMANIUM_UPDATE_PASSING").as_deref() == Ok("1") {
        summary::write_pass_list(&list_path, &passing).unwrap();
        println!("wrote {} names to {}", passing.len(), list_path.display());
        return;
    }
    assert!(
        regressions.is_empty(),
        "{} listed files no longer pass (see REGRESSION lines above); fix them, or accept with \
         GERMANIUM_UPDATE_PASSING=1",
        regressions.len()
    );
}
