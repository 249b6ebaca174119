//! Runs the whole corpus through the driver and compares with the annotations, twice:
//!
//! - `frontend`: `germanium check`, comparing only front-end errors (`parser.error`,
//!   `typechecker.error`, `consistency.error`);
//! - `verify`: `germanium verify` (needs Z3: `Z3_EXE` or `z3` on the PATH), comparing all errors,
//!   and failing on any expected error missed inside a member Germanium claims to have
//!   verified, unless it is a documented deviation in `tests/corpus/verify-missed-accepted.txt`.
//!
//! - `vcg`: `germanium verify --backend vcg`, as `verify`, with its own lists
//!   (`vcg-passing.txt`, `vcg-missed-accepted.txt`).
//! - `cross_check`: the two back ends' results against each other (each run once per test
//!   process, whichever test asks first): every error one reports where the other does not,
//!   in a member both gave a verdict on, must be in `cross-check-disagreements.txt` with its
//!   cause (`GERMANIUM_UPDATE_CROSS_CHECK=1` adds the new ones, cause to be written).
//!
//! - `vcg_slow` (ignored): `vcg` and `cross_check` over the files of `tests/corpus/vcg-slow.txt`,
//!   whose VCG runs take most of that back end's time; the two tests above leave them out,
//!   so the suite stays well under half an hour on two cores.
//!
//! Each fails if a file listed in `tests/corpus/<mode>-passing.txt` (and run) no longer
//! passes; never merely because more files pass. `GERMANIUM_UPDATE_PASSING=1` rewrites the
//! lists (keeping the entries of files not run).
//!
//! `cargo test --release -p germanium-corpus --test corpus -- --nocapture` shows the tables;
//! add `verify` or `frontend` after `--test corpus` to run one mode.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use std::sync::OnceLock;

use germanium_corpus::compare::CompareMode;
use germanium_corpus::corpus::{self, FileResult, SharedPaths};
use germanium_corpus::{cross_check, soundness, summary};
use germanium_driver::Backend;

/// Each back end's results on the corpus, made once per process.
static SYMBEX_RESULTS: OnceLock<Vec<FileResult>> = OnceLock::new();
static VCG_RESULTS: OnceLock<Vec<FileResult>> = OnceLock::new();

fn verified_by(backend: Backend) -> &'static [FileResult] {
    let (cell, files) = match backend {
        Backend::Vcg => (&VCG_RESULTS, Files::NotSlow),
        _ => (&SYMBEX_RESULTS, Files::All),
    };
    cell.get_or_init(|| run_mode(CompareMode::Verify, backend, files).0)
}

/// Which corpus files a test runs (see `tests/corpus/vcg-slow.txt`).
#[derive(Clone, Copy, PartialEq)]
enum Files {
    All,
    NotSlow,
    Slow,
}

/// The files the VCG takes longest on, as `vcg-slow.txt` lists them.
fn slow_vcg_files() -> BTreeSet<String> {
    let text = std::fs::read_to_string(lists_dir().join("vcg-slow.txt")).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split('#').next())
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

fn lists_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

#[test]
fn frontend() {
    let (results, lists) = run_mode(CompareMode::FrontEnd, Backend::Symbex, Files::All);
    check_pass_list(&results, &lists.join("frontend-passing.txt"));
}

#[test]
fn verify() {
    let (results, lists) = (verified_by(Backend::Symbex), lists_dir());
    let unsound = unexplained_misses(results, &lists.join("verify-missed-accepted.txt"));
    check_pass_list(results, &lists.join("verify-passing.txt"));
    // For benchmarks: the passing files of the predicate-and-function scope.
    if let Ok(path) = std::env::var("GERMANIUM_SCOPE_PASSING_OUT") {
        let names: std::collections::BTreeSet<String> = results
            .iter()
            .filter(|r| summary::in_heap_abstraction_scope(r) && r.comparison.passes())
            .map(|r| r.file.name.clone())
            .collect();
        summary::write_pass_list(Path::new(&path), &names).unwrap();
    }
    // For benchmarks: the passing files of one feature class, `CLASS=FILE` (the class as
    // the tables name it, such as `quantified permissions`).
    if let Ok(spec) = std::env::var("GERMANIUM_CLASS_PASSING_OUT") {
        let (class, path) = spec
            .split_once('=')
            .expect("GERMANIUM_CLASS_PASSING_OUT is CLASS=FILE");
        let names: std::collections::BTreeSet<String> = results
            .iter()
            .filter(|r| r.classes.iter().any(|c| c.name() == class) && r.comparison.passes())
            .map(|r| r.file.name.clone())
            .collect();
        summary::write_pass_list(Path::new(path), &names).unwrap();
    }
    assert!(
        unsound.is_empty(),
        "expected errors missed in members Germanium claims to have verified:\n{unsound}"
    );
}

/// The verification-condition back end on the whole corpus, with its own pass list and the
/// same guard: no expected error missed in a member it reports verified.
#[test]
fn vcg() {
    let (results, lists) = (verified_by(Backend::Vcg), lists_dir());
    let unsound = unexplained_misses(results, &lists.join("vcg-missed-accepted.txt"));
    check_pass_list(results, &lists.join("vcg-passing.txt"));
    assert!(
        unsound.is_empty(),
        "expected errors missed in members the VCG back end claims to have verified:\n{unsound}"
    );
}

/// The back ends against each other: no disagreement outside the committed list.
#[test]
fn cross_check() {
    let path = lists_dir().join("cross-check-disagreements.txt");
    let found = cross_check::disagreements(verified_by(Backend::Symbex), verified_by(Backend::Vcg));
    cross_check::against_list(&found, &path, &names(verified_by(Backend::Vcg)))
        .assert_none_new(&path);
}

/// `vcg` and `cross_check` over the files the VCG takes longest on.
#[test]
#[ignore = "the VCG's slowest files: about nine minutes on two cores"]
fn vcg_slow() {
    let lists = lists_dir();
    let (vcg, _) = run_mode(CompareMode::Verify, Backend::Vcg, Files::Slow);
    let unsound = unexplained_misses(&vcg, &lists.join("vcg-missed-accepted.txt"));
    check_pass_list(&vcg, &lists.join("vcg-passing.txt"));
    let (symbex, _) = run_mode(CompareMode::Verify, Backend::Symbex, Files::Slow);
    let path = lists.join("cross-check-disagreements.txt");
    let found = cross_check::disagreements(&symbex, &vcg);
    let outcome = cross_check::against_list(&found, &path, &names(&vcg));
    assert!(
        unsound.is_empty(),
        "expected errors missed in members the VCG back end claims to have verified:\n{unsound}"
    );
    outcome.assert_none_new(&path);
}

fn names(results: &[FileResult]) -> BTreeSet<String> {
    results.iter().map(|r| r.file.name.clone()).collect()
}

/// Runs every corpus file in `mode` with `backend` and prints the tables; returns the
/// results and the directory of the committed lists.
fn run_mode(mode: CompareMode, backend: Backend, which: Files) -> (Vec<FileResult>, PathBuf) {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = SharedPaths::from_crate_dir(crate_dir);
    assert!(
        shared.root.join("viper-tests").is_dir(),
        "the shared corpus is missing at {}",
        shared.root.display()
    );
    let discovered = corpus::discover(&shared);
    let mut files = discovered.tests;
    assert!(
        files.len() > 1000,
        "only {} corpus files found",
        files.len()
    );
    if which != Files::All {
        let slow = slow_vcg_files();
        files.retain(|f| slow.contains(&f.name) == (which == Files::Slow));
    }
    let libraries: Vec<&str> = discovered
        .libraries
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    let started = std::time::Instant::now();
    let results = corpus::run_with(&files, mode, &[shared.import_path()], backend);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nnot run on their own (only imported by other tests): {}",
        libraries.join(", ")
    );
    let _ = writeln!(
        out,
        "\ncorpus ({} mode, {} back end): {} files in {:.1?}\n",
        mode.name(),
        backend.name(),
        files.len(),
        started.elapsed()
    );
    let _ = writeln!(out, "{}", summary::group_table(&results));
    let _ = writeln!(out, "{}", summary::class_table(&results));
    out.push_str(&summary::failure_lines(&results));
    print!("{out}");
    (results, crate_dir.join("../../tests/corpus"))
}

fn check_pass_list(results: &[FileResult], list_path: &Path) {
    let all_listed = summary::read_pass_list(list_path);
    let ran = names(results);
    let listed: BTreeSet<String> = all_listed.intersection(&ran).cloned().collect();
    let passing = summary::passing_names(results);
    let regressions: Vec<&String> = listed.difference(&passing).collect();
    for name in passing.difference(&listed) {
        println!("NEW  {name} passes (not yet in {})", list_path.display());
    }
    for name in &regressions {
        println!("REGRESSION {name} is listed as passing but does not pass");
    }
    if std::env::var("GERMANIUM_UPDATE_PASSING").as_deref() == Ok("1") {
        let not_run = all_listed.difference(&ran).cloned();
        let kept: BTreeSet<String> = passing.iter().cloned().chain(not_run).collect();
        summary::write_pass_list(list_path, &kept).unwrap();
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

/// Misses in verified members that the accepted-deviation list does not explain, one per line.
fn unexplained_misses(results: &[FileResult], accepted_path: &Path) -> String {
    let accepted = soundness::read_accepted(accepted_path);
    let mut out = String::new();
    for result in results {
        let main = germanium_corpus::compare::canonical(&result.file.path);
        for miss in &result.missed_in_verified {
            let place = if miss.file == main {
                (result.file.name.clone(), miss.line)
            } else {
                (miss.file.display().to_string(), miss.line)
            };
            let explained = accepted
                .get(&place)
                .is_some_and(|ids| ids.contains(&miss.id));
            let mark = if explained { "ACCEPTED" } else { "UNSOUND" };
            println!(
                "{mark} {}:{} {} missed in a verified member",
                place.0, place.1, miss.id
            );
            if !explained {
                let _ = writeln!(out, "{}:{} {}", place.0, place.1, miss.id);
            }
        }
    }
    out
}
