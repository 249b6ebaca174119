//! Symbolic values stay small across long straight-line code: each step may add a bounded
//! amount of solver input, so a method twice as long sends about twice as much. (Measured
//! on the SMT log, which is deterministic, rather than on time.)

use std::path::{Path, PathBuf};

use germanium_driver::{run_file, Mode, Options};

/// A method that unfolds, updates and folds a predicate `steps` times, checking a function
/// of the instance after each step.
fn program(steps: usize) -> String {
    let mut text = String::from(
        "field f: Int\n\
         predicate P(x: Ref) { acc(x.f) }\n\
         function get(x: Ref): Int requires P(x) { unfolding P(x) in x.f }\n\
         method m(x: Ref) requires P(x) ensures P(x) {\n\
         unfold P(x)\n x.f := 0\n fold P(x)\n",
    );
    for i in 1..=steps {
        text.push_str(&format!(
            "unfold P(x)\n x.f := x.f + 1\n fold P(x)\n assert get(x) == {i}\n"
        ));
    }
    text.push_str("}\n");
    text
}

/// Verifies `program(steps)` on one worker and returns the size of its SMT log.
fn log_size(dir: &Path, steps: usize) -> u64 {
    let source = dir.join(format!("steps{steps}.vpr"));
    std::fs::write(&source, program(steps)).unwrap();
    let log: PathBuf = dir.join(format!("steps{steps}.smt2"));
    let mut options = Options::new(Mode::Verify);
    options.smt_log = Some(log.clone());
    options.jobs = 1;
    let report = run_file(&source, &options);
    assert!(report.diagnostics.is_empty(), "{:#?}", report.diagnostics);
    std::fs::metadata(&log).unwrap().len()
}

#[test]
fn solver_input_grows_linearly_with_folds_and_field_updates() {
    let dir = std::env::temp_dir().join(format!("germanium-growth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let short = log_size(&dir, 150);
    let long = log_size(&dir, 300);
    let _ = std::fs::remove_dir_all(&dir);
    // Linear growth gives a ratio near 2; terms that grow with every step give near 4.
    let ratio = long as f64 / short as f64;
    assert!(
        ratio < 2.6,
        "SMT input grew {ratio:.2}x for twice the steps ({short} -> {long} bytes)"
    );
}
