//! The `germanium` binary as users and tools see it: exit statuses and output shapes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::json_lines;

/// Runs `germanium ARGS` in the workspace with a result cache of its own (a run never sees
/// results an earlier run, of this test or of another, stored).
fn germanium(args: &[&str]) -> Output {
    let cache = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_germanium"))
        .args(args)
        .current_dir(workspace())
        .env("GERMANIUM_CACHE_DIR", cache.path())
        .output()
        .expect("the germanium binary runs")
}

/// The Z3 the tests run with (`$Z3_EXE`, as scripts/test sets it).
fn z3() -> String {
    std::env::var("Z3_EXE").unwrap_or_else(|_| "z3".into())
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("germanium-cli-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_program_of_declarations_verifies_with_status_0() {
    for (command, result) in [("check", "checked"), ("verify", "verified")] {
        let output = germanium(&[command, "--format", "json", "examples/declarations.vpr"]);
        assert_eq!(output.status.code(), Some(0), "{command}: {output:?}");
        let lines = json_lines(&output);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0]["file"], "examples/declarations.vpr");
        assert_eq!(lines[0]["result"], result);
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
        ["checked", "failed", "checked", "failed", "checked"]
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
    assert!(String::from_utf8(missing.stdout)
        .unwrap()
        .contains("cannot read `examples/does-not-exist.vpr`"));
}

#[test]
fn verification_options_are_accepted() {
    let output = germanium(&[
        "verify",
        "--z3",
        &z3(),
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

// The rough edges of the command line, one test each.

#[test]
fn check_says_checked_not_verified() {
    let human = germanium(&["check", "examples/hello.vpr"]);
    let text = String::from_utf8(human.stdout).unwrap();
    assert!(
        text.contains("examples/hello.vpr: checked (not verified)"),
        "{text}"
    );
    assert!(!text.contains("verified in"), "{text}");
    let json = json_lines(&germanium(&[
        "check",
        "--format",
        "json",
        "examples/hello.vpr",
    ]));
    assert_eq!(json[0]["result"], "checked");
}

#[test]
fn verify_help_says_what_verify_does() {
    let help = String::from_utf8(germanium(&["verify", "--help"]).stdout).unwrap();
    assert!(help.contains("verify each FILE"), "{help}");
    assert!(!help.contains("not implemented"), "{help}");
}

#[test]
fn timeouts_take_fractions_and_refuse_zero() {
    let ok = germanium(&["verify", "--timeout", "1.5", "examples/hello.vpr"]);
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");
    let zero = germanium(&["verify", "--timeout", "0", "examples/hello.vpr"]);
    assert_eq!(zero.status.code(), Some(2));
    let said = String::from_utf8(zero.stderr).unwrap();
    assert!(said.contains("more than 0"), "{said}");
}

#[test]
fn several_files_write_separate_smt_logs() {
    let dir = std::env::temp_dir().join(format!("germanium-cli-logs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("q.smt2");
    let output = germanium(&[
        "verify",
        "--smt-log",
        log.to_str().unwrap(),
        "examples/hello.vpr",
        "examples/failing.vpr",
    ]);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let first = std::fs::read_to_string(dir.join("q.1-hello.smt2")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(names, ["q.1-hello.smt2", "q.2-failing.smt2"]);
    assert!(
        first.contains("check-sat"),
        "hello's log holds its own queries"
    );
    let help = String::from_utf8(germanium(&["verify", "--help"]).stdout).unwrap();
    assert!(help.contains(".functions.w<N>.smt2"), "{help}");
}

#[test]
fn directories_standard_input_and_dev_stdin_are_read() {
    let dir = germanium(&["check", "--format", "json", "examples"]);
    let files: Vec<String> = json_lines(&dir)
        .iter()
        .map(|l| l["file"].as_str().unwrap().to_string())
        .collect();
    assert!(
        files.contains(&"examples/hello.vpr".to_string()),
        "{files:?}"
    );
    assert!(
        files.windows(2).all(|w| w[0] <= w[1]),
        "in path order: {files:?}"
    );
    let text = std::fs::read(workspace().join("examples/hello.vpr")).unwrap();
    for name in ["-", "/dev/stdin"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_germanium"))
            .args(["verify", "--no-cache", "--format", "json", name])
            .current_dir(workspace())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&text).unwrap();
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{name}: {output:?}");
        assert_eq!(json_lines(&output)[0]["result"], "verified", "{name}");
    }
}

#[test]
fn a_missing_file_does_not_stop_the_others_and_is_a_json_line() {
    let output = germanium(&[
        "verify",
        "--format",
        "json",
        "examples/missing.vpr",
        "examples/hello.vpr",
    ]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let lines = json_lines(&output);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["file"], "examples/missing.vpr");
    assert_eq!(lines[0]["result"], "error");
    assert_eq!(lines[0]["errors"][0]["id"], "internal");
    assert_eq!(lines[1]["result"], "verified");
    let human = germanium(&["verify", "examples/missing.vpr", "examples/hello.vpr"]);
    let text = String::from_utf8(human.stdout).unwrap();
    assert!(text.contains("examples/hello.vpr: verified"), "{text}");
    assert!(
        !text.contains('^'),
        "no caret for a file that was never read: {text}"
    );
}

#[test]
fn a_program_that_is_not_z3_is_one_clear_error_per_file() {
    // Found once (not once per worker); each file reports it as its `internal` error, with
    // no caret under the program, as the JSON contract says for a missing solver.
    let output = germanium(&[
        "verify",
        "-j",
        "2",
        "--z3",
        "/bin/cat",
        "--format",
        "json",
        "examples/hello.vpr",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let lines = json_lines(&output);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["result"], "error");
    let errors = lines[0]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["id"], "internal");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.contains("`/bin/cat` is not a Z3 executable"),
        "{message}"
    );
    let human = germanium(&[
        "verify",
        "-j",
        "2",
        "--z3",
        "/bin/cat",
        "examples/hello.vpr",
    ]);
    let text = String::from_utf8(human.stdout).unwrap();
    assert_eq!(text.matches("error[internal]").count(), 1, "{text}");
    assert!(!text.contains('^'), "{text}");
    // Syntax and type errors are still reported.
    let broken = germanium(&[
        "verify",
        "--z3",
        "/bin/cat",
        "--format",
        "json",
        "examples/broken.vpr",
    ]);
    assert_eq!(
        json_lines(&broken)[0]["errors"][0]["id"],
        "typechecker.error"
    );
}

#[test]
fn an_old_z3_is_used_with_a_warning() {
    let fake = std::env::temp_dir().join(format!("germanium-old-z3-{}", std::process::id()));
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = -version ]; then echo 'Z3 version 4.8.12 - 64 bit'; exit 0; fi\nexec {} \"$@\"\n",
        z3()
    );
    std::fs::write(&fake, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = germanium(&[
        "verify",
        "--z3",
        fake.to_str().unwrap(),
        "examples/hello.vpr",
    ]);
    let _ = std::fs::remove_file(&fake);
    let said = String::from_utf8(output.stderr.clone()).unwrap();
    assert!(said.contains("warning: Z3 4.8.12"), "{said}");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}

#[test]
fn unsupported_constructs_are_said_in_plain_words_and_counted_apart() {
    let program = scratch_file(
        "epsilon.vpr",
        b"method m()\n{\n  assert epsilon == none\n}\n",
    );
    let output = germanium(&["verify", program.to_str().unwrap()]);
    let _ = std::fs::remove_file(&program);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains("Germanium's verifier does not support `epsilon` yet"),
        "{text}"
    );
    assert!(
        text.contains("not fully checked (1 unsupported construct, 1 member not verified)"),
        "{text}"
    );
    assert!(!text.contains("errors)"), "{text}");
}

#[test]
fn json_stream_prints_each_member_as_it_finishes_then_the_file() {
    let program = scratch_file(
        "stream.vpr",
        b"field f: Int\n\
          method a(x: Ref)\n  requires acc(x.f)\n{\n  x.f := 1\n}\n\
          method b(x: Ref)\n  requires acc(x.f)\n{\n  assert x.f == 2\n}\n\
          function g(n: Int): Int\n  ensures result > n\n{ n + 1 }\n",
    );
    let output = germanium(&[
        "verify",
        "--format",
        "json-stream",
        program.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&program);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let lines = json_lines(&output);
    assert_eq!(lines.len(), 4, "{lines:?}");
    let mut members: Vec<(String, String, String)> = lines[..3]
        .iter()
        .map(|l| {
            assert_eq!(l["event"], "member");
            assert_eq!(l["cached"], false);
            assert!(l["time_ms"].is_u64());
            let text = |k: &str| l[k].as_str().unwrap().to_string();
            (text("member"), text("kind"), text("result"))
        })
        .collect();
    members.sort();
    assert_eq!(
        members,
        [
            ("a".into(), "method".into(), "verified".into()),
            ("b".into(), "method".into(), "failed".into()),
            ("g".into(), "function".into(), "verified".into()),
        ]
    );
    let b = lines.iter().find(|l| l["member"] == "b").unwrap();
    assert_eq!(b["errors"][0]["id"], "assert.failed:assertion.false");
    assert_eq!(b["errors"][0]["line"], 10);
    assert_eq!(lines[3]["event"], "file");
    assert_eq!(lines[3]["result"], "failed");
}

#[test]
fn stats_say_where_each_members_time_went() {
    let program = scratch_file(
        "stats.vpr",
        b"field f: Int\n\
          method a(x: Ref)\n  requires acc(x.f)\n{\n  x.f := 1\n  assert x.f == 1\n}\n\
          method b(x: Ref)\n  requires acc(x.f)\n{\n  assert x.f == 2\n}\n",
    );
    let path = program.to_str().unwrap();
    let json = germanium(&["verify", "--no-cache", "--stats", "--format", "json", path]);
    let human = germanium(&["verify", "--no-cache", "--stats", path]);
    let stream = germanium(&[
        "verify",
        "--no-cache",
        "--stats",
        "--format",
        "json-stream",
        path,
    ]);
    let plain = germanium(&["verify", "--no-cache", "--format", "json", path]);
    let _ = std::fs::remove_file(&program);
    assert_eq!(json.status.code(), Some(1), "{json:?}");
    let lines = json_lines(&json);
    let stats = &lines[0]["stats"];
    let members = stats["members"].as_array().unwrap();
    let mut names: Vec<&str> = members
        .iter()
        .map(|m| m["member"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["a", "b"], "{stats}");
    // `b`'s failing assertion is asked of Z3 and charged resource units.
    let b = members.iter().find(|m| m["member"] == "b").unwrap();
    assert!(b["queries"].as_u64().unwrap() >= 1, "{b}");
    assert!(b["resource_units"].as_u64().unwrap() > 0, "{b}");
    for m in members {
        assert!(m["smt_bytes"].as_u64().unwrap() > 0, "{m}");
        let (time, z3) = (
            m["time_ms"].as_f64().unwrap(),
            m["solver_ms"].as_f64().unwrap(),
        );
        assert!(z3 <= time, "{m}");
        let share = m["solver_share"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&share), "{m}");
    }
    let total = |k: &str| stats["total"][k].as_u64().unwrap();
    let sum = |k: &str| members.iter().map(|m| m[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(total("queries"), sum("queries"));
    assert_eq!(total("smt_bytes"), sum("smt_bytes"));
    // Without `--stats` no field is added.
    assert!(json_lines(&plain)[0].get("stats").is_none());

    let text = String::from_utf8(human.stdout).unwrap();
    assert!(
        text.contains("resource units") && text.contains("(all members)"),
        "{text}"
    );

    let lines = json_lines(&stream);
    let member_lines: Vec<_> = lines.iter().filter(|l| l["event"] == "member").collect();
    assert_eq!(member_lines.len(), 2, "{lines:?}");
    assert!(member_lines
        .iter()
        .all(|l| l["stats"]["smt_bytes"].as_u64().unwrap() > 0));
}

#[test]
fn a_terminal_sees_progress_while_members_run() {
    // `script` runs germanium on a pseudo-terminal, as a person would.
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no `script` command");
        return;
    }
    let command = format!(
        "{} verify --no-cache -j1 examples/hello.vpr",
        env!("CARGO_BIN_EXE_germanium")
    );
    // Redrawn at every event, so what is seen does not depend on how fast the run is.
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("GERMANIUM_PROGRESS_MS", "0")
        .current_dir(workspace())
        .output()
        .unwrap();
    let seen = String::from_utf8_lossy(&output.stdout);
    assert!(seen.contains("[0/1 files, "), "{seen}");
    assert!(seen.contains(" members done, "), "{seen}");
    assert!(seen.contains("verified in"), "{seen}");
    // Without a terminal there is no progress line.
    let plain = germanium(&["verify", "examples/hello.vpr"]);
    assert!(plain.stderr.is_empty(), "{plain:?}");
}

#[test]
fn member_patterns_choose_what_is_verified() {
    let program = scratch_file(
        "members.vpr",
        b"field f: Int\n\
          function get(x: Ref): Int\n  requires acc(x.f)\n  ensures result > 0\n{ x.f }\n\
          method bad_one(x: Ref)\n  requires acc(x.f)\n{\n  assert x.f == 2\n}\n\
          method good_one(x: Ref)\n  requires acc(x.f) && x.f == 2\n{\n  assert get(x) > 0\n}\n",
    );
    let path = program.to_str().unwrap();
    let stream = |patterns: &[&str]| {
        let mut args = vec!["verify", "--format", "json-stream"];
        for p in patterns {
            args.extend(["--member", p]);
        }
        args.push(path);
        let output = germanium(&args);
        let lines = json_lines(&output);
        let mut members: Vec<String> = lines
            .iter()
            .filter(|l| l["event"] == "member")
            .map(|l| l["member"].as_str().unwrap().to_string())
            .collect();
        members.sort();
        (
            output.status.code(),
            members,
            lines.last().unwrap()["result"].clone(),
        )
    };
    // `get`'s body does not prove its postcondition, and `bad_one` fails.
    assert_eq!(
        stream(&[]),
        (
            Some(1),
            vec!["bad_one".into(), "get".into(), "good_one".into()],
            "failed".into()
        )
    );
    // Only `good_one`: `get`'s postcondition fails, so it is no axiom, but its definition
    // proves the assertion.
    assert_eq!(
        stream(&["good_*"]),
        (Some(0), vec!["good_one".into()], "verified".into())
    );
    assert_eq!(
        stream(&["*_one"]),
        (
            Some(1),
            vec!["bad_one".into(), "good_one".into()],
            "failed".into()
        )
    );
    assert_eq!(stream(&["nothing"]), (Some(0), vec![], "verified".into()));
    let human = germanium(&["verify", "--member", "good_one", path]);
    let text = String::from_utf8(human.stdout).unwrap();
    assert!(
        text.contains("only the members matching --member were verified"),
        "{text}"
    );
    let _ = std::fs::remove_file(&program);
}

#[test]
fn the_result_cache_answers_a_second_run_until_cleared_or_refused() {
    let dir = std::env::temp_dir().join(format!("germanium-cli-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_germanium"))
            .args(args)
            .env("GERMANIUM_CACHE_DIR", &dir)
            .current_dir(workspace())
            .output()
            .unwrap();
        let lines = json_lines(&output);
        let cached: Vec<bool> = lines
            .iter()
            .filter(|l| l["event"] == "member")
            .map(|l| l["cached"].as_bool().unwrap())
            .collect();
        (cached, lines.last().cloned())
    };
    let stream = ["verify", "--format", "json-stream", "examples/hello.vpr"];
    let (first, report) = run(&stream);
    assert_eq!(first, [false, false]);
    let (second, again) = run(&stream);
    assert_eq!(second, [true, true]);
    assert_eq!(report.unwrap()["errors"], again.unwrap()["errors"]);
    let mut refused = stream.to_vec();
    refused.insert(1, "--no-cache");
    assert_eq!(run(&refused).0, [false, false]);
    let cleared = Command::new(env!("CARGO_BIN_EXE_germanium"))
        .args(["cache", "clear"])
        .env("GERMANIUM_CACHE_DIR", &dir)
        .output()
        .unwrap();
    assert_eq!(cleared.status.code(), Some(0));
    assert_eq!(run(&stream).0, [false, false]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unreachable_cluster_is_a_clear_error_or_with_fallback_a_local_run() {
    // Nothing listens on port 1 of the loopback interface.
    let unreachable = germanium(&[
        "verify",
        "--format",
        "json",
        "--remote-executor",
        "grpc://127.0.0.1:1",
        "examples/hello.vpr",
    ]);
    assert_eq!(unreachable.status.code(), Some(2), "{unreachable:?}");
    let line = &json_lines(&unreachable)[0];
    assert_eq!(line["result"], "error");
    let message = line["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("cannot be reached") && message.contains("grpc://127.0.0.1:1"),
        "{message}"
    );
    let fallback = germanium(&[
        "verify",
        "--format",
        "json",
        "--remote-executor",
        "grpc://127.0.0.1:1",
        "--remote-fallback",
        "local",
        "examples/hello.vpr",
    ]);
    assert_eq!(fallback.status.code(), Some(0), "{fallback:?}");
    let line = &json_lines(&fallback)[0];
    assert_eq!(line["result"], "verified");
    assert_eq!(line["errors"][0]["id"], "remote.fallback");
    assert_eq!(line["errors"][0]["severity"], "warning");
    // An address without a scheme is a usage error.
    let bad = germanium(&[
        "verify",
        "--remote-executor",
        "127.0.0.1:1",
        "examples/hello.vpr",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("grpc://HOST:PORT"));
}

/// With an unreachable cluster and `--remote-fallback local`, the members are verified here as
/// a remote batch is (the whole program as one text, its errors placed back through it): the
/// verdicts and places of a plain run, on a sample of the corpus, for both back ends. (That
/// a member alone in its slice verifies as in its program is `germanium-driver`'s
/// `tests/slices.rs`.)
#[test]
fn a_local_fallback_gives_the_verdicts_of_a_local_run() {
    use common::{file_verdicts, member_verdicts};
    let list =
        std::fs::read_to_string(workspace().join("tests/corpus/verify-passing.txt")).unwrap();
    let files: Vec<String> = list
        .lines()
        .filter(|l| !l.trim().is_empty())
        .skip(2)
        .step_by(25)
        .map(|l| format!("../shared/{}", l.trim()))
        .collect();
    assert!(files.len() >= 40);
    for backend in ["symbex", "vcg"] {
        let mut whole: Vec<&str> = vec![
            "verify",
            "--no-cache",
            "--format",
            "json-stream",
            "--backend",
            backend,
        ];
        whole.extend(files.iter().map(|f| f.as_str()));
        let mut sliced = whole.clone();
        sliced.extend([
            "--remote-executor",
            "grpc://127.0.0.1:1",
            "--remote-fallback",
            "local",
        ]);
        let (whole, sliced) = (germanium(&whole), germanium(&sliced));
        let expected = file_verdicts(&whole);
        assert_eq!(expected.len(), files.len());
        assert_eq!(expected, file_verdicts(&sliced), "{backend}");
        // And member by member: each member's own errors.
        assert_eq!(
            member_verdicts(&whole),
            member_verdicts(&sliced),
            "{backend}"
        );
        assert!(expected.iter().any(|(_, r, _)| r == "failed"));
    }
}

#[test]
fn counterexamples_say_whether_a_run_of_the_method_confirms_them() {
    // A real bug: `x.f` is `k + 1` after the call, and `k` may be 3.
    let bug = scratch_file(
        "confirmed.vpr",
        b"field f: Int\n\
          method inc(x: Ref) requires acc(x.f) ensures acc(x.f) && x.f == old(x.f) + 1\n\
          method client(x: Ref, k: Int) requires acc(x.f) && k > 1 { x.f := k; inc(x); assert x.f == 3 }\n",
    );
    let output = germanium(&[
        "verify",
        "--counterexample",
        "--format",
        "json",
        bug.to_str().unwrap(),
    ]);
    let ce = &json_lines(&output)[0]["errors"][0]["counterexample"];
    assert_eq!(ce["confirmation"], "confirmed", "{ce}");
    assert_eq!(ce["candidate"], false);
    let pre: Vec<(String, String)> = ce["pre_state"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().into(),
                v["value"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(pre.contains(&("k".to_string(), "3".to_string())), "{pre:?}");
    let human = germanium(&["verify", "--counterexample", bug.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("confirmed counterexample") && text.contains("before: k = 3"),
        "{text}"
    );
    // A valid assertion that fails only on a tiny budget is never confirmed.
    let valid = scratch_file(
        "valid.vpr",
        b"method m(x: Int, y: Int) requires x > 0 && y > 0 { assert x * y + x * x * y > 0 }\n",
    );
    let output = germanium(&[
        "verify",
        "--counterexample",
        "--timeout",
        "0.00001",
        "--format",
        "json",
        valid.to_str().unwrap(),
    ]);
    for error in json_lines(&output)[0]["errors"].as_array().unwrap() {
        let ce = &error["counterexample"];
        assert_ne!(ce["confirmation"], "confirmed", "{error}");
        if ce["confirmation"] == "none-within-bound" {
            assert!(ce["runs"].as_u64().unwrap() > 0);
        }
    }
}
