//! Small annotated Viper programs run through the driver: every `//:: ExpectedOutput(id)`
//! must be reported on the next code line, as often as it is written there, and nothing
//! else may be reported.

use std::path::{Path, PathBuf};

use germanium_driver::{run_file, Mode, Options};

fn expected(text: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut pending = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("//:: ExpectedOutput(") {
            pending.push(rest.trim_end_matches(')').to_string());
        } else if !trimmed.is_empty() && !trimmed.starts_with("//") {
            for id in pending.drain(..) {
                out.push((i as u32 + 1, id));
            }
        }
    }
    out.sort();
    out
}

/// The options a program asks for on a line `// options: --combinable-wands`.
fn options_of(text: &str) -> Options {
    let mut options = Options::new(Mode::Verify);
    for line in text.lines() {
        if let Some(rest) = line.trim().strip_prefix("// options:") {
            for option in rest.split_whitespace() {
                match option {
                    "--combinable-wands" => options.combinable_wands = true,
                    other => panic!("unknown option {other} in a test program"),
                }
            }
        }
    }
    options
}

fn check(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).unwrap();
    let report = run_file(path, &options_of(&text));
    let mut reported: Vec<(u32, String)> = report
        .diagnostics
        .iter()
        .map(|d| (report.sources.start(d.span).line, d.id.clone()))
        .collect();
    reported.sort();
    let wanted = expected(&text);
    if reported == wanted {
        Ok(())
    } else {
        let messages: Vec<String> = report
            .diagnostics
            .iter()
            .map(|d| format!("{} {}", d.id, d.message))
            .collect();
        Err(format!(
            "{}: expected {wanted:?}, reported {reported:?}\n{}",
            path.display(),
            messages.join("\n")
        ))
    }
}

#[test]
fn annotated_programs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "vpr"));
    files.sort();
    assert!(!files.is_empty());
    let failures: Vec<String> = files.iter().filter_map(|f| check(f).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs the file named by `GERMANIUM_SYMBEX_FILE` and prints its diagnostics (debugging aid).
#[test]
fn one_file_from_the_environment() {
    let Ok(path) = std::env::var("GERMANIUM_SYMBEX_FILE") else {
        return;
    };
    let report = run_file(Path::new(&path), &Options::new(Mode::Verify));
    for d in &report.diagnostics {
        println!(
            "{}:{} {} {}",
            path,
            report.sources.start(d.span).line,
            d.id,
            d.message
        );
    }
}

/// A program of `n` small methods, every third with a failing assertion.
fn many_methods(n: usize) -> String {
    let mut text = String::from("field f: Int\n");
    for i in 0..n {
        let claim = if i % 3 == 0 {
            "x.f > 0"
        } else {
            "x.f == old(x.f)"
        };
        text.push_str(&format!(
            "method m{i}(x: Ref)\n  requires acc(x.f)\n{{\n  assert {claim}\n}}\n"
        ));
    }
    text
}

/// Two workers give the same answers as one (members are split into sessions that do not
/// depend on the number of workers), and each writes its own replayable log.
#[test]
fn parallel_workers_agree_and_log_separately() {
    let dir = std::env::temp_dir().join(format!("germanium-symbex-logs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("many.vpr");
    std::fs::write(&file, many_methods(24)).unwrap();
    let single = run_file(&file, &Options::new(Mode::Verify));
    let mut options = Options::new(Mode::Verify);
    options.jobs = 2;
    options.smt_log = Some(dir.join("run.smt2"));
    let parallel = run_file(&file, &options);
    let ids = |r: &germanium_driver::FileReport| {
        let mut v: Vec<(u32, String)> = r
            .diagnostics
            .iter()
            .map(|d| (r.sources.start(d.span).line, d.id.clone()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(ids(&single).len(), 8);
    assert_eq!(ids(&single), ids(&parallel));
    let mut queries = 0;
    for worker in 0..2 {
        let log = dir.join(format!("run.w{worker}.smt2"));
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        // Each worker's solver got the preamble; which worker verified what may vary.
        assert!(
            text.contains("declare-sort"),
            "{} has no preamble",
            log.display()
        );
        queries += text.matches("(check-sat)").count();
    }
    assert!(queries > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Recursive functions and predicates are unrolled only as far as the program unfolds them:
/// assertions that would need deeper unrolling fail with an ordinary error, never because
/// the solver ran out of time (which would show as a matching loop).
#[test]
fn recursive_definitions_fail_without_exhausting_the_solver() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/solver_limits/recursion.vpr");
    let mut options = Options::new(Mode::Verify);
    options.timeout = Some(std::time::Duration::from_secs(20));
    let report = run_file(&path, &options);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut reported: Vec<(u32, String)> = report
        .diagnostics
        .iter()
        .map(|d| (report.sources.start(d.span).line, d.id.clone()))
        .collect();
    reported.sort();
    assert_eq!(reported, expected(&text), "{:#?}", report.diagnostics);
    for d in &report.diagnostics {
        assert!(
            !d.message.contains("solver gave up"),
            "a query ran out of time: {}",
            d.message
        );
    }
}

/// A member whose `if`s would make more paths than the branch budget is reported as not
/// verified, at the `if` where the budget ran out, instead of running for hours (sides that
/// cannot be joined, here because one allocates: `n` consecutive ones make `2^n` paths).
#[test]
fn branch_budget_stops_path_explosion_with_an_error() {
    let dir = std::env::temp_dir().join(format!("germanium-branches-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("branches.vpr");
    let mut text = String::from(
        "field f: Int\nmethod m(x: Ref, b: Seq[Bool])\n  requires acc(x.f) && |b| == 30\n{\n  var r: Ref\n  x.f := 0\n",
    );
    for i in 0..30 {
        text.push_str(&format!(
            "  if (b[{i}]) {{ x.f := x.f + 1; r := new(f) }}\n"
        ));
    }
    text.push_str("  assert x.f <= 30\n}\n");
    std::fs::write(&path, text).unwrap();
    let mut options = Options::new(Mode::Verify);
    options.max_branches = Some(200);
    let report = run_file(&path, &options);
    let _ = std::fs::remove_dir_all(&dir);
    let budget: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| d.id == "internal:feature.unsupported" && d.message.contains("200 paths"))
        .collect();
    assert_eq!(budget.len(), 1, "{:#?}", report.diagnostics);
    // Reported at one of the `if`s (lines 7 to 36), which paths reach depth-first.
    let line = report.sources.start(budget[0].span).line;
    assert!((7..=36).contains(&line), "budget reported on line {line}");
}
