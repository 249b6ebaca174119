//! `--format json-stream`: a JSON line per member as it finishes, then each file's line as
//! `--format json` prints it, marked `"event": "file"` (docs/cli.md).

use std::path::Path;
use std::time::Duration;

use germanium_driver::EventError;
use serde::Serialize;

use super::json::JsonError;
use super::stats::JsonStats;

#[derive(Serialize)]
struct MemberLine<'a> {
    event: &'static str,
    file: String,
    member: &'a str,
    kind: &'a str,
    result: &'static str,
    errors: Vec<JsonError<'a>>,
    time_ms: u128,
    /// Whether the result came from a cache (local or a cluster's).
    cached: bool,
    /// Where it came from: `local`, `local-cache`, `remote-cache` or `remote`.
    source: &'static str,
    /// With `--stats`, where the member's time went.
    #[serde(skip_serializing_if = "Option::is_none")]
    stats: Option<JsonStats<'a>>,
}

/// The result a member's errors make: `verified`, `failed`, or `error` when Germanium could
/// not finish it (an `internal` id).
pub fn member_result(errors: &[EventError]) -> &'static str {
    if errors.iter().any(|e| e.id.starts_with("internal")) {
        "error"
    } else if errors.is_empty() {
        "verified"
    } else {
        "failed"
    }
}

/// The JSON line of a finished member (without the trailing newline); `stats` with
/// `--stats`.
pub fn render_member(
    file: &Path,
    member: &str,
    kind: &str,
    errors: &[EventError],
    time: Duration,
    source: germanium_driver::ResultSource,
    stats: Option<&germanium_driver::MemberStats>,
) -> String {
    let line = MemberLine {
        event: "member",
        file: file.display().to_string(),
        member,
        kind,
        result: member_result(errors),
        errors: errors.iter().map(JsonError::placed).collect(),
        time_ms: time.as_millis(),
        cached: source.is_cached(),
        source: source.name(),
        stats: stats.map(|s| JsonStats::of(None, s)),
    };
    serde_json::to_string(&line).expect("serialising plain data cannot fail")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_line_has_the_documented_shape() {
        let error = EventError {
            id: "assert.failed:assertion.false".into(),
            message: "Assert might fail.".into(),
            warning: false,
            file: "t.vpr".into(),
            line: 3,
            column: 10,
            end_line: 3,
            end_column: 15,
        };
        let text = render_member(
            Path::new("t.vpr"),
            "m",
            "method",
            &[error],
            Duration::from_millis(7),
            germanium_driver::ResultSource::RemoteCache,
            None,
        );
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            value,
            serde_json::json!({
                "event": "member", "file": "t.vpr", "member": "m", "kind": "method",
                "result": "failed", "time_ms": 7, "cached": true, "source": "remote-cache",
                "errors": [{"id": "assert.failed:assertion.false", "line": 3, "column": 10,
                            "end_line": 3, "end_column": 15, "message": "Assert might fail.",
                            "severity": "error", "file": "t.vpr"}]
            })
        );
        assert_eq!(member_result(&[]), "verified");
    }
}
