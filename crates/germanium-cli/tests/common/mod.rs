//! What the tests that compare runs read from `germanium`'s JSON output.

#![allow(dead_code)] // each test crate uses part of it

use std::process::Output;

/// A file (or `file::member`), its result, and its errors (id, line, column).
pub type Verdict = (String, String, Vec<(String, u64, u64)>);

pub fn json_lines(output: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("each stdout line is a JSON object"))
        .collect()
}

/// A line's errors (id, line, column), sorted; warnings only if `warnings`.
fn errors(line: &serde_json::Value, warnings: bool) -> Vec<(String, u64, u64)> {
    let mut errors: Vec<(String, u64, u64)> = line["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter(|e| warnings || e["severity"] == "error")
        .map(|e| {
            let n = |k: &str| e[k].as_u64().expect("a position");
            (
                e["id"].as_str().expect("an id").to_string(),
                n("line"),
                n("column"),
            )
        })
        .collect();
    errors.sort();
    errors
}

fn field(line: &serde_json::Value, key: &str) -> String {
    line[key].as_str().expect("a string field").to_string()
}

/// Each file's result and errors (warnings left out), from `json` or `json-stream` output.
pub fn file_verdicts(output: &Output) -> Vec<Verdict> {
    json_lines(output)
        .iter()
        .filter(|l| l.get("event").is_none_or(|e| e == "file"))
        .map(|l| (field(l, "file"), field(l, "result"), errors(l, false)))
        .collect()
}

/// Each member's result and errors (`file::member`, sorted), from `json-stream` output.
pub fn member_verdicts(output: &Output) -> Vec<Verdict> {
    let mut v: Vec<Verdict> = json_lines(output)
        .iter()
        .filter(|l| l["event"] == "member")
        .map(|l| {
            let name = format!("{}::{}", field(l, "file"), field(l, "member"));
            (name, field(l, "result"), errors(l, true))
        })
        .collect();
    v.sort();
    v
}
