//! The debugger's API over a real run: what the page asks for, one record at a time.

use std::path::Path;

use germanium_debugger::Session;
use germanium_driver::{Mode, Options};
use serde_json::Value;

fn session() -> Session {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/linked.vpr");
    Session::start(&example, Options::new(Mode::Verify)).expect("a session")
}

fn json(session: &Session, url: &str) -> Value {
    let answer = session.answer(url);
    assert_eq!(answer.status, 200, "{url}");
    assert!(answer.content_type.starts_with("application/json"));
    serde_json::from_slice(&answer.body).unwrap()
}

#[test]
fn the_api_serves_the_run_record_by_record() {
    let s = session();
    let overview = json(&s, "/api/overview");
    assert_eq!(s.result(), "failed", "{}", overview["diagnostics"]);
    let page = s.answer("/");
    assert_eq!(
        (page.status, page.content_type),
        (200, "text/html; charset=utf-8")
    );

    let overview = json(&s, "/api/overview");
    assert_eq!(overview["result"], "failed");
    let member = &overview["members"][0];
    assert_eq!(member["name"], "prepend");
    assert_eq!(member["failures"], 1);
    let diagnostic = &overview["diagnostics"][0];
    assert_eq!(diagnostic["id"], "assert.failed:assertion.false");
    assert_eq!(diagnostic["place"]["line"], 12);
    // The counterexample: n.val is 0 and n.next is head's object.
    let ce = &diagnostic["counterexample"];
    // Confirmed by running the method: the values are that run's.
    assert_eq!(ce["confirmation"], "confirmed");
    let vars: Vec<(String, String)> = serde_json::from_value(ce["variables"].clone()).unwrap();
    assert_eq!(
        vars,
        [("head".into(), "o1".into()), ("n".into(), "o2".into())]
    );
    let heap: Vec<(String, String, String)> = serde_json::from_value(ce["heap"].clone()).unwrap();
    assert!(
        heap.contains(&("o2".into(), "next".into(), "o1".into())),
        "{heap:?}"
    );
    assert!(
        heap.contains(&("o2".into(), "val".into(), "0".into())),
        "{heap:?}"
    );

    // The failed record: its failure with the unproved query, its state, its counterexample.
    let failed = overview["failed"][0].as_u64().unwrap();
    let record = json(&s, &format!("/api/record/{failed}"));
    assert_eq!(record["record"]["step"], "consume");
    assert_eq!(record["record"]["place"]["line"], 12);
    assert_eq!(
        record["failures"][0]["error"],
        "assert.failed:assertion.false"
    );
    assert!(record["failures"][0]["query"]
        .as_str()
        .unwrap()
        .starts_with("(not"));
    assert_eq!(record["counterexamples"][0]["variables"][1][1], "o2");
    let store: Vec<String> = record["state"]["store"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[0].as_str().unwrap().to_string())
        .collect();
    assert_eq!(store, ["head", "n"]);
    assert_eq!(record["state"]["heap"].as_array().unwrap().len(), 4);
    assert!(!record["state"]["path"].as_array().unwrap().is_empty());
    // Its ancestors lead back to the member's root; the root has children.
    assert_eq!(record["ancestors"][0]["id"], member["root"]);
    let root = json(&s, &format!("/api/record/{}", member["root"]));
    assert_eq!(root["record"]["step"], "member");
    assert!(root["record"]["failed"].as_bool().unwrap());
    assert!(!root["children"].as_array().unwrap().is_empty());
    assert_eq!(root["parent"], Value::Null);
}

#[test]
fn only_the_programs_own_files_are_served() {
    let s = session();
    let overview = json(&s, "/api/overview");
    let file = overview["files"][0].as_str().unwrap().to_string();
    let query: String = form_encode(&file);
    let source = s.answer(&format!("/api/source?file={query}"));
    assert_eq!(source.status, 200);
    assert!(String::from_utf8_lossy(&source.body).contains("method prepend"));
    for url in [
        "/api/source?file=%2Fetc%2Fpasswd",
        "/api/source",
        "/api/record/999999",
        "/api/record/x",
        "/../../etc/passwd",
    ] {
        assert_eq!(s.answer(url).status, 404, "{url}");
    }
}

fn form_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
