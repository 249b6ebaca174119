//! The `germanium` binary as users and tools see it: exit statuses and output shapes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn germanium(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_germanium"))
        .args(args)
        .current_dir(workspace())
        .output()
        .expect("the germanium binary runs")
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn json_lines(output: &Output) -> Vec<serde_json::Value> {
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("each stdout line is a JSON object"))
        .collect()
}

fn scratch_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("germanium-cli-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_program_of_declarations_verifies_with_status_0() {
    for command in ["check", "verify"] {
        let output = germanium(&[command, "--format", "json", "examples/declarations.vpr"]);
        assert_eq!(output.status.code(), Some(0), "{command}: {output:?}");
        let lines = json_lines(&output);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0]["file"], "examples/declarations.vpr");
        assert_eq!(lines[0]["result"], "verified");
        assert_eq!(lines[0]["errors"], serde_json::json!([]));
        assert!(lines[0]["time_ms"].is_u64());
    }
}

#[test]
fn errors_give_status_1_with_positions() {
    let bad = scratch_file("bad.vpr", b"field f: Int\n\xfe\n");
    let output = germanium(&["check", "--format", "json", bad.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let error = &json_lines(&output)[0]["errors"][0];
    assert_eq!(error["id"], "parser.error");
    assert_eq!(
        (error["line"].as_u64(), error["column"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        (error["end_line"].as_u64(), error["end_column"].as_u64()),
        (Some(2), Some(2))
    );
    assert!(error["message"].as_str().unwrap().contains("UTF-8"));
}

#[test]
fn reports_come_in_input_order_and_the_worst_result_decides_the_status() {
    let bad = scratch_file("order.vpr", b"\xff");
    let bad = bad.to_str().unwrap();
    let good = "examples/declarations.vpr";
    let output = germanium(&[
        "check", "--format", "json", "-j", "2", good, bad, good, bad, good,
    ]);
    assert_eq!(output.status.code(), Some(1));
    let results: Vec<String> = json_lines(&output)
        .iter()
        .map(|l| l["result"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        results,
        ["verified", "failed", "verified", "failed", "verified"]
    );
}

#[test]
fn human_output_shows_the_source_line_and_a_summary() {
    let bad = scratch_file("human.vpr", b"field f: Int\nfield \xfe\n");
    let output = germanium(&["check", bad.to_str().unwrap()]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("error[parser.error]"), "{text}");
    assert!(text.contains(":2:7"), "{text}");
    assert!(text.contains('^'), "{text}");
    assert!(
        text.contains("human.vpr: failed with 1 error in "),
        "{text}"
    );
}

#[test]
fn usage_errors_give_status_2() {
    assert_eq!(germanium(&[]).status.code(), Some(2));
    assert_eq!(germanium(&["check"]).status.code(), Some(2));
    assert_eq!(
        germanium(&["check", "--format", "xml", "examples/hello.vpr"])
            .status
            .code(),
        Some(2)
    );
    let missing = germanium(&["check", "examples/does-not-exist.vpr"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8(missing.stderr)
        .unwrap()
        .contains("does-not-exist.vpr"));
}

#[test]
fn verification_options_are_accepted() {
    let output = germanium(&[
        "verify",
        "--z3",
        "z3",
        "--timeout",
        "10",
        "--smt-log",
        "/dev/null",
        "--jobs",
        "1",
        "--import-path",
        ".",
        "examples/declarations.vpr",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}

#[test]
fn a_type_error_is_reported_where_it_is() {
    let output = germanium(&["check", "--format", "json", "examples/broken.vpr"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let lines = json_lines(&output);
    let errors = lines[0]["errors"].as_array().unwrap();
    assert!(!errors.is_empty());
    assert!(
        errors
            .iter()
            .all(|e| e["id"] == "typechecker.error" && e["line"] == 9),
        "{errors:?}"
    );
}

#[test]
fn verify_accepts_a_correct_program() {
    let output = germanium(&["verify", "--format", "json", "examples/hello.vpr"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let line = &json_lines(&output)[0];
    assert_eq!(line["result"], "verified");
    assert_eq!(line["errors"].as_array().unwrap().len(), 0);
}

#[test]
fn verify_reports_a_postcondition_that_does_not_hold() {
    let output = germanium(&["verify", "--format", "json", "examples/failing.vpr"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let line = &json_lines(&output)[0];
    assert_eq!(line["result"], "failed");
    let errors = line["errors"].as_array().unwrap();
    let at: Vec<(u64, &str)> = errors
        .iter()
        .map(|e| (e["line"].as_u64().unwrap(), e["id"].as_str().unwrap()))
        .collect();
    assert_eq!(at, [(7, "postcondition.violated:assertion.false")]);
}
