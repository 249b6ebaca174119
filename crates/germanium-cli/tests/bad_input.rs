//! Hostile and broken inputs through the real `germanium` binary: every one must end, within
//! a time bound, with an ordinary exit status (never a signal, a panic's 101 or a panic turned
//! into an `internal` report) and, for file contents, with positioned `parser.error`s.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Longest any single run may take; a hang is killed and reported as a failure.
const TIME_LIMIT: Duration = Duration::from_secs(20);

/// A fresh directory for one test's files, unique per process and test, removed when dropped.
fn scratch_dir(test: &str) -> Scratch {
    let dir =
        std::env::temp_dir().join(format!("germanium-bad-input-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

struct Run {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

/// Runs `germanium ARGS` with output going to files (so a flood of output cannot block it),
/// killing it and failing the test if it exceeds [`TIME_LIMIT`].
fn germanium(dir: &Path, args: &[&str]) -> Run {
    let stdout_path = dir.join("stdout.txt");
    let stderr_path = dir.join("stderr.txt");
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_germanium"))
        .args(args)
        .current_dir(dir)
        .env("GERMANIUM_CACHE_DIR", dir.join("cache"))
        .stdout(Stdio::from(File::create(&stdout_path).unwrap()))
        .stderr(Stdio::from(File::create(&stderr_path).unwrap()))
        .spawn()
        .expect("the germanium binary starts");
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("germanium {args:?} did not finish within {TIME_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |path: &Path| String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    Run {
        status,
        stdout: read(&stdout_path),
        stderr: read(&stderr_path),
        elapsed: started.elapsed(),
    }
}

/// The single JSON report of a `check --format json FILE` run.
fn report(run: &Run) -> Value {
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "one JSON line expected, got: {}",
        run.stdout
    );
    serde_json::from_str(lines[0]).expect("stdout is a JSON object")
}

/// Checks `bytes` as file `name` and asserts the outcome bad input must have: exit status 1
/// (status 2 would mean Germanium could not finish, i.e. an internal fault), result `failed`,
/// and errors that each carry a front-end id and a 1-based position. The human output must
/// come out as well, with the same status. Returns the errors.
fn rejected(test: &str, name: &str, bytes: impl AsRef<[u8]>) -> Vec<Value> {
    let dir = scratch_dir(test);
    write(&dir, name, bytes);
    let run = germanium(&dir, &["check", "--format", "json", name]);
    assert_eq!(
        run.status.code(),
        Some(1),
        "{test}: status {:?}, stdout {}, stderr {}",
        run.status,
        run.stdout,
        run.stderr
    );
    let report = report(&run);
    assert_eq!(report["result"], "failed", "{test}: {report}");
    let errors = report["errors"]
        .as_array()
        .expect("an errors array")
        .clone();
    assert!(!errors.is_empty(), "{test}: no errors reported");
    for error in &errors {
        let id = error["id"].as_str().expect("an id");
        assert!(
            ["parser.error", "typechecker.error", "consistency.error"].contains(&id),
            "{test}: unexpected id in {error}"
        );
        assert!(
            error["line"].as_u64().is_some_and(|l| l >= 1),
            "{test}: {error}"
        );
        assert!(
            error["column"].as_u64().is_some_and(|c| c >= 1),
            "{test}: {error}"
        );
        assert!(
            !error["message"].as_str().unwrap_or("").is_empty(),
            "{test}: {error}"
        );
    }

    let human = germanium(&dir, &["check", name]);
    assert_eq!(
        human.status.code(),
        Some(1),
        "{test} (human output): {}",
        human.stderr
    );
    assert!(
        human.stdout.contains("failed with"),
        "{test}: {}",
        human.stdout
    );
    errors
}

/// The first error's (line, column).
fn first_position(errors: &[Value]) -> (u64, u64) {
    let error = &errors[0];
    (
        error["line"].as_u64().unwrap(),
        error["column"].as_u64().unwrap(),
    )
}

fn has_error(errors: &[Value], line: u64, message_part: &str) -> bool {
    errors.iter().any(|e| {
        e["line"].as_u64() == Some(line)
            && e["message"]
                .as_str()
                .is_some_and(|m| m.contains(message_part))
    })
}

#[test]
fn unterminated_block_comment() {
    let errors = rejected(
        "comment",
        "comment.vpr",
        "method m() {\n  assert true /* never\n closed",
    );
    assert!(has_error(&errors, 2, "comment"), "{errors:?}");
}

#[test]
fn unterminated_string() {
    let errors = rejected("string", "string.vpr", "field f: Int\nimport \"lib.vpr\n");
    assert_eq!(first_position(&errors).0, 2, "{errors:?}");
    let errors = rejected(
        "string-in-body",
        "body.vpr",
        "method m() {\n  var s: Int := \"abc\n}\n",
    );
    assert_eq!(first_position(&errors), (2, 17), "{errors:?}");
}

#[test]
fn unknown_characters() {
    for (name, character) in [
        ("hash", "#"),
        ("section", "§"),
        ("nul", "\u{0}"),
        ("bom", "\u{feff}"),
    ] {
        let errors = rejected(
            &format!("char-{name}"),
            "chars.vpr",
            format!("method m() {{\n  assert {character} true\n}}\n"),
        );
        assert_eq!(first_position(&errors), (2, 10), "{name}: {errors:?}");
    }
    let errors = rejected("char-top", "top.vpr", "field f: Int\n§\n");
    assert_eq!(first_position(&errors), (2, 1), "{errors:?}");
}

#[test]
fn unbalanced_brackets() {
    let cases: &[(&str, &str, u64)] = &[
        ("open-paren", "method m() {\n  assert (1 == (2)\n}\n", 3),
        ("close-paren", "method m() {\n  assert 1 == 2)\n}\n", 2),
        (
            "open-brace",
            "method m() {\n  if (true) {\n    assert true\n}\n",
            5,
        ),
        ("close-brace", "method m() {\n  assert true\n}\n}\n", 4),
        (
            "open-bracket",
            "method m(s: Seq[Int]) {\n  assert s[0 == 1\n}\n",
            3,
        ),
        (
            "close-bracket",
            "method m(s: Seq[Int]) {\n  assert s0] == 1\n}\n",
            2,
        ),
        ("mixed", "method m() {\n  assert (true}\n)\n", 2),
    ];
    for (name, text, line) in cases {
        let errors = rejected(&format!("brackets-{name}"), "b.vpr", text);
        assert_eq!(first_position(&errors).0, *line, "{name}: {errors:?}");
    }
}

#[test]
fn ten_thousand_levels_of_nesting() {
    const DEPTH: usize = 10_000;
    let cases = [
        (
            "parens",
            format!(
                "method m() {{\n assert {}true{}\n}}\n",
                "(".repeat(DEPTH),
                ")".repeat(DEPTH)
            ),
        ),
        (
            "not",
            format!("method m() {{\n assert {}true\n}}\n", "!".repeat(DEPTH)),
        ),
        (
            "minus",
            format!("method m() {{\n assert {}1 == 1\n}}\n", "-".repeat(DEPTH)),
        ),
        (
            "blocks",
            format!(
                "method m() {{\n{}{}\n}}\n",
                "{".repeat(DEPTH),
                "}".repeat(DEPTH)
            ),
        ),
        (
            "ifs",
            format!(
                "method m() {{\n{}{}\n}}\n",
                "if (true) {".repeat(DEPTH),
                "}".repeat(DEPTH)
            ),
        ),
        (
            "types",
            format!(
                "method m() {{\n var s: {}Int{}\n}}\n",
                "Seq[".repeat(DEPTH),
                "]".repeat(DEPTH)
            ),
        ),
        (
            "quantifiers",
            format!(
                "function f(): Bool\n {{ {}true }}\n",
                "forall i: Int :: ".repeat(DEPTH)
            ),
        ),
        (
            "calls",
            format!(
                "function g(i: Int): Int\nfunction f(): Int\n {{ {}0{} }}\n",
                "g(".repeat(DEPTH),
                ")".repeat(DEPTH)
            ),
        ),
        (
            "unclosed",
            format!("method m() {{\n assert {}\n", "(".repeat(DEPTH)),
        ),
    ];
    for (name, text) in cases {
        let errors = rejected(&format!("deep-{name}"), "deep.vpr", text);
        assert!(
            errors
                .iter()
                .any(|e| e["message"].as_str().unwrap().contains("nesting too deep")),
            "{name}: {errors:?}"
        );
    }
}

#[test]
fn a_hundred_thousand_conjuncts() {
    let conjuncts = vec!["true"; 100_000].join(" && ");
    let errors = rejected(
        "conjuncts",
        "and.vpr",
        format!("method m() {{\n  assert {conjuncts}\n}}\n"),
    );
    assert_eq!(first_position(&errors).0, 2, "{errors:?}");
}

#[test]
fn a_hundred_thousand_errors() {
    // One lexical and one syntax error per line; merging the two lists was once quadratic.
    const LINES: usize = 100_000;
    let started = Instant::now();
    let errors = rejected(
        "many-errors",
        "many.vpr",
        "method m() { # }\n".repeat(LINES),
    );
    assert_eq!(errors.len(), LINES);
    assert_eq!(errors[LINES - 1]["line"].as_u64(), Some(LINES as u64));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn non_utf8_bytes() {
    let errors = rejected(
        "utf8",
        "bytes.vpr",
        b"field f: Int\nmethod m() { \xff\xfe }\n",
    );
    assert_eq!(first_position(&errors), (2, 14), "{errors:?}");
    assert!(errors[0]["message"].as_str().unwrap().contains("UTF-8"));
    // A multi-byte sequence cut off at the end of the file.
    let errors = rejected("utf8-truncated", "cut.vpr", b"field f: Int\n// \xc3");
    assert_eq!(first_position(&errors), (2, 4), "{errors:?}");
    // Latin-1 text inside a comment is still not UTF-8.
    let errors = rejected("latin1", "latin1.vpr", b"// caf\xe9\nfield f: Int\n");
    assert_eq!(first_position(&errors), (1, 7), "{errors:?}");
}

#[test]
fn missing_imports() {
    let errors = rejected(
        "import-relative",
        "main.vpr",
        "field f: Int\nimport \"missing.vpr\"\n",
    );
    assert_eq!(first_position(&errors), (2, 1), "{errors:?}");
    assert!(errors[0]["message"]
        .as_str()
        .unwrap()
        .contains("missing.vpr"));

    let errors = rejected(
        "import-library",
        "main.vpr",
        "field f: Int\nimport <no/such/file.vpr>\n",
    );
    assert_eq!(first_position(&errors), (2, 1), "{errors:?}");
    assert!(errors[0]["message"]
        .as_str()
        .unwrap()
        .contains("no/such/file.vpr"));

    let errors = rejected(
        "import-escape",
        "main.vpr",
        "import <../../../etc/passwd>\n",
    );
    assert_eq!(first_position(&errors), (1, 1), "{errors:?}");
}

#[test]
fn imports_of_directories_and_bad_files() {
    let dir = scratch_dir("import-bad-files");
    std::fs::create_dir_all(dir.join("folder.vpr")).unwrap();
    write(&dir, "latin1.vpr", b"field g: Int // caf\xe9\n");
    write(&dir, "broken.vpr", "method m() {\n");
    let cases = [
        ("folder", "import \"folder.vpr\"\n", "main.vpr", 1),
        ("latin1", "\n\nimport \"latin1.vpr\"\n", "latin1.vpr", 1),
        ("broken", "import \"broken.vpr\"\n", "broken.vpr", 2),
    ];
    for (name, text, error_file, line) in cases {
        let main = write(&dir, "main.vpr", text);
        let run = germanium(&dir, &["check", "--format", "json", main.to_str().unwrap()]);
        assert_eq!(run.status.code(), Some(1), "{name}: {}", run.stdout);
        let report = report(&run);
        let error = &report["errors"][0];
        assert_eq!(error["id"], "parser.error", "{name}: {report}");
        assert!(
            error["file"].as_str().unwrap().ends_with(error_file),
            "{name}: {report}"
        );
        assert_eq!(error["line"].as_u64(), Some(line), "{name}: {report}");
    }
}

#[test]
fn import_cycles_terminate() {
    let dir = scratch_dir("import-cycle");
    write(
        &dir,
        "a.vpr",
        "import \"b.vpr\"\nimport \"a.vpr\"\nfield f: Int\n",
    );
    let dir_name = dir.file_name().unwrap().to_str().unwrap();
    write(
        &dir,
        "b.vpr",
        format!("import \"./a.vpr\"\nimport \"../{dir_name}/b.vpr\"\nfield g: Int\n"),
    );
    let run = germanium(&dir, &["check", "--format", "json", "a.vpr"]);
    assert_eq!(run.status.code(), Some(0), "{}", run.stdout);
}

#[test]
fn an_empty_file_is_a_valid_program() {
    // Viper accepts a program with no declarations, so this is not an error.
    for (name, text) in [
        ("empty", ""),
        ("blank", "\n \t\r\n"),
        ("comments", "// a\n/* b */\n"),
    ] {
        let dir = scratch_dir(&format!("empty-{name}"));
        write(&dir, "e.vpr", text);
        let run = germanium(&dir, &["check", "--format", "json", "e.vpr"]);
        assert_eq!(run.status.code(), Some(0), "{name}: {}", run.stdout);
        assert_eq!(report(&run)["errors"], serde_json::json!([]), "{name}");
    }
}

#[test]
fn a_directory_without_programs_or_a_missing_file_gets_an_error_report() {
    // Not a file whose contents could be positioned: status 2 and a report (a JSON line)
    // naming the path, with no panic.
    let dir = scratch_dir("not-files");
    std::fs::create_dir_all(dir.join("folder.vpr")).unwrap();
    for name in ["folder.vpr", "does-not-exist.vpr"] {
        let run = germanium(&dir, &["check", "--format", "json", name]);
        assert_eq!(run.status.code(), Some(2), "{name}: {:?}", run.status);
        assert!(!run.stderr.contains("panicked"), "{name}: {}", run.stderr);
        let line = report(&run);
        assert_eq!(line["result"], "error", "{name}");
        assert_eq!(line["errors"][0]["id"], "internal", "{name}");
        let message = line["errors"][0]["message"].as_str().unwrap();
        assert!(message.contains(name), "{name}: {message}");
    }
}

#[test]
fn exponential_macro_expansion_is_cut_off() {
    // Each macro uses the previous one twice: expanded in full, `M40(0)` would have 2^40 nodes.
    let mut text = String::from("define M0(x) (x + 1)\n");
    for i in 1..=40 {
        text.push_str(&format!("define M{i}(x) M{}(M{}(x))\n", i - 1, i - 1));
    }
    text.push_str("method m() {\n  assert M40(0) > 0\n}\n");
    let errors = rejected("macro-blowup", "macros.vpr", text);
    assert_eq!(first_position(&errors).0, 43, "{errors:?}");
}

#[test]
fn mutually_recursive_macros_are_an_error() {
    let errors = rejected(
        "macro-recursion",
        "macros.vpr",
        "define A(x) B(x)\ndefine B(x) A(x)\nmethod m() {\n  assert A(0) > 0\n}\n",
    );
    assert!(
        errors.iter().all(|e| e["id"] == "parser.error"),
        "{errors:?}"
    );
}

#[test]
fn deep_nesting_built_by_macros_finishes() {
    // Each macro body is 200 levels deep and uses the previous macro: after expansion the
    // assertion is 200 * 100 levels deep, past the parser's limit. Either outcome is fine as
    // long as it is an ordinary one.
    let inner = format!("{}x{}", "(".repeat(200), "+1)".repeat(200));
    let mut text = format!("define A0(x) {inner}\n");
    for i in 1..100 {
        text.push_str(&format!("define A{i}(x) A{}(A0(x))\n", i - 1));
    }
    text.push_str("method m() {\n  assert A99(0) > 0\n}\n");
    let dir = scratch_dir("macro-depth");
    write(&dir, "deep.vpr", text);
    let run = germanium(&dir, &["check", "--format", "json", "deep.vpr"]);
    assert!(
        matches!(run.status.code(), Some(0 | 1)),
        "{:?}: {}",
        run.status,
        run.stdout
    );
    assert_ne!(report(&run)["result"], "error", "{}", run.stdout);
}

/// Checks a generated valid program of `methods` methods, each using one of `macros` macros
/// (none if 0), and asserts it verifies within `limit`.
fn check_huge_program(test: &str, methods: usize, macros: usize, limit: Duration) {
    let mut text = String::from("field f: Int\n");
    for i in 0..macros {
        text.push_str(&format!("define Bound{i}(a) (a + {i})\n"));
    }
    for i in 0..methods {
        let bound = if macros == 0 {
            i.to_string()
        } else {
            format!("Bound{}(0)", i % macros)
        };
        text.push_str(&format!(
            "method m{i}(x: Ref, n: Int) returns (r: Int)\n  requires acc(x.f) && n > {bound}\n  ensures r == n + 1\n{{\n  r := n + 1\n  x.f := r\n}}\n"
        ));
    }
    let dir = scratch_dir(test);
    write(&dir, "huge.vpr", &text);
    let run = germanium(&dir, &["check", "--format", "json", "huge.vpr"]);
    assert_eq!(run.status.code(), Some(0), "{}", run.stderr);
    assert_eq!(report(&run)["result"], "checked");
    assert!(
        run.elapsed < limit,
        "checking {methods} methods and {macros} macros ({} KB) took {:?}",
        text.len() / 1024,
        run.elapsed
    );
}

// The limits leave room for a debug build on a busy machine; a quadratic pass exceeds them
// (before macro expansion was made linear, the first took over 20 s).

#[test]
fn a_huge_valid_file_checks_in_reasonable_time() {
    check_huge_program("huge", 20_000, 0, Duration::from_secs(10));
}

#[test]
fn a_huge_file_with_many_macros_checks_in_reasonable_time() {
    check_huge_program("huge-macros", 20_000, 10_000, Duration::from_secs(10));
}

#[test]
fn wide_programs_check_in_reasonable_time() {
    const N: usize = 20_000;
    let repeat = |f: &dyn Fn(usize) -> String| (0..N).map(f).collect::<String>();
    let cases = [
        ("fields", repeat(&|i| format!("field f{i}: Int\n"))),
        (
            "sibling-blocks",
            format!(
                "method m() {{\n{}}}\n",
                repeat(&|i| format!("  if (true) {{ var x: Int := {i} }}\n"))
            ),
        ),
        (
            "labels",
            format!(
                "field f: Int\nmethod m(r: Ref) requires acc(r.f) {{\n{}}}\n",
                repeat(&|i| format!("  label l{i}\n  assert old[l{i}](r.f) == r.f\n"))
            ),
        ),
        (
            "axioms",
            format!(
                "domain D {{\n{}}}\n",
                repeat(&|i| format!(
                    "  function d{i}(x: Int): Int\n  axiom {{ forall x: Int :: d{i}(x) > {i} }}\n"
                ))
            ),
        ),
        (
            "constructors",
            format!(
                "adt A {{\n{}}}\n",
                repeat(&|i| format!("  C{i}(v{i}: Int)\n"))
            ),
        ),
        (
            "parameters",
            format!(
                "method m({}) {{}}\n",
                repeat(&|i| format!("a{i}: Int, ")) + "z: Int"
            ),
        ),
    ];
    for (name, text) in cases {
        let dir = scratch_dir(&format!("wide-{name}"));
        write(&dir, "wide.vpr", text);
        let run = germanium(&dir, &["check", "--format", "json", "wide.vpr"]);
        assert_eq!(
            run.status.code(),
            Some(0),
            "{name}: {}",
            run.stdout.chars().take(500).collect::<String>()
        );
        assert!(
            run.elapsed < Duration::from_secs(10),
            "{name}: took {:?}",
            run.elapsed
        );
    }
}
