//! The language server over an in-memory connection, as a client sees it: diagnostics on
//! open, after edits and on save, progress, hover with counterexamples, code lenses,
//! symbols and definitions, and stale runs cancelled.

use std::time::Duration;

use germanium_driver::{Mode, Options};
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{json, Value};

struct Client {
    connection: Connection,
    server: Option<std::thread::JoinHandle<Result<(), String>>>,
    next_id: i32,
    /// Notifications and requests from the server not yet looked at.
    seen: Vec<Message>,
    dir: tempfile::TempDir,
}

const WAIT: Duration = Duration::from_secs(120);

impl Client {
    fn start(debounce: Duration) -> Client {
        let (server_side, client_side) = Connection::memory();
        let mut options = Options::new(Mode::Verify);
        options.counterexamples = true;
        options.jobs = 1;
        let settings = germanium_lsp::Settings { options, debounce };
        let server = std::thread::spawn(move || germanium_lsp::serve(&server_side, settings));
        let mut client = Client {
            connection: client_side,
            server: Some(server),
            next_id: 0,
            seen: Vec::new(),
            dir: tempfile::tempdir().unwrap(),
        };
        let capabilities = json!({
            "window": { "workDoneProgress": true },
            "workspace": { "codeLens": { "refreshSupport": true } }
        });
        let answer = client.request(
            "initialize",
            json!({ "processId": null, "rootUri": null, "capabilities": capabilities }),
        );
        assert_eq!(answer["serverInfo"]["name"], "germanium");
        assert_eq!(answer["capabilities"]["hoverProvider"], true);
        client.notify("initialized", json!({}));
        client
    }

    fn uri(&self, name: &str) -> String {
        lsp_types::Url::from_file_path(self.dir.path().join(name))
            .unwrap()
            .to_string()
    }

    fn notify(&self, method: &str, params: Value) {
        let message = Notification::new(method.into(), params);
        self.connection.sender.send(message.into()).unwrap();
    }

    /// Sends a request and waits for its answer (keeping what else arrives meanwhile).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        let message = Request::new(id.clone(), method.into(), params);
        self.connection.sender.send(message.into()).unwrap();
        loop {
            match self
                .connection
                .receiver
                .recv_timeout(WAIT)
                .expect("an answer")
            {
                Message::Response(r) if r.id == id => {
                    return r.response_result.unwrap_or_else(|e| panic!("error: {e:?}"))
                }
                other => self.seen.push(other),
            }
        }
    }

    /// Waits for the next notification `method` about `uri` (for diagnostics) and returns
    /// its parameters.
    fn next_notification(&mut self, method: &str, uri: &str) -> Value {
        let matches = |m: &Message| match m {
            Message::Notification(n) => {
                n.method == method && (uri.is_empty() || n.params["uri"] == uri)
            }
            _ => false,
        };
        if let Some(i) = self.seen.iter().position(matches) {
            let Message::Notification(n) = self.seen.remove(i) else {
                unreachable!()
            };
            return n.params;
        }
        loop {
            let message = self
                .connection
                .receiver
                .recv_timeout(WAIT)
                .expect("a message");
            if matches(&message) {
                let Message::Notification(n) = message else {
                    unreachable!()
                };
                return n.params;
            }
            self.seen.push(message);
        }
    }

    /// A request whose only parameter is the document (`codeLens`, `documentSymbol`).
    fn about_document(&mut self, method: &str, uri: &str) -> Value {
        self.request(method, json!({ "textDocument": { "uri": uri } }))
    }

    fn open(&self, name: &str, text: &str) -> String {
        let uri = self.uri(name);
        let item = json!({ "uri": uri, "languageId": "viper", "version": 1, "text": text });
        self.notify("textDocument/didOpen", json!({ "textDocument": item }));
        uri
    }

    fn change(&self, uri: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": uri, "version": version },
                "contentChanges": [{ "text": text }]
            }),
        );
    }

    fn shutdown(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let server = self.server.take().unwrap();
        assert_eq!(server.join().unwrap(), Ok(()));
    }
}

fn at(line: u32, character: u32, uri: &str) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } })
}

const PROGRAM: &str = "field val: Int\n\
    method inc(x: Ref) requires acc(x.val) ensures acc(x.val) {\n\
    \x20 x.val := x.val + 1\n\
    \x20 assert x.val > 1\n\
    }\n\
    function get(x: Ref): Int requires acc(x.val) { x.val }\n";

#[test]
fn diagnostics_follow_the_text_and_requests_answer_from_it() {
    let mut client = Client::start(Duration::from_millis(50));
    let uri = client.open("p.vpr", PROGRAM);
    let published = client.next_notification("textDocument/publishDiagnostics", &uri);
    let diagnostics = published["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{published}");
    assert_eq!(diagnostics[0]["code"], "assert.failed:assertion.false");
    assert_eq!(
        diagnostics[0]["range"]["start"],
        json!({ "line": 3, "character": 9 })
    );
    assert_eq!(published["version"], 1);

    // Progress: created, begun, a report per member, ended.
    let begin = client.next_notification("$/progress", "");
    assert_eq!(begin["value"]["kind"], "begin");
    assert_eq!(begin["value"]["title"], "Verifying p.vpr");

    let hover = client.request("textDocument/hover", at(3, 12, &uri));
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("assert.failed:assertion.false"), "{text}");
    assert!(text.contains("counterexample"), "{text}");
    assert!(text.contains("x = o1"), "{text}");
    assert!(text.contains("o1.val = "), "{text}");

    let lenses = client.about_document("textDocument/codeLens", &uri);
    let titles: Vec<&str> = lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles.len(), 2, "{lenses}");
    assert!(titles[0].starts_with("✗ 1 error in "), "{titles:?}");
    assert!(titles[1].starts_with("✓ verified in "), "{titles:?}");

    let symbols = client.about_document("textDocument/documentSymbol", &uri);
    let names: Vec<&str> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["val", "inc", "get"]);

    // `x.val` in the body leads to the field's declaration.
    let definition = client.request("textDocument/definition", at(2, 5, &uri));
    assert_eq!(definition["uri"], uri);
    assert_eq!(
        definition["range"]["start"],
        json!({ "line": 0, "character": 6 })
    );

    // An edit that mends the assertion: the diagnostics follow.
    let mended = PROGRAM.replace("x.val > 1", "x.val == old(x.val) + 1");
    client.change(&uri, 2, &mended);
    let published = client.next_notification("textDocument/publishDiagnostics", &uri);
    assert_eq!(published["diagnostics"], json!([]), "{published}");
    assert_eq!(published["version"], 2);
    client.shutdown();
}

/// A program whose one assertion Z3 works on for minutes.
const PIGEONHOLE: &str = include_str!("../../../tests/programs/pigeonhole.vpr");

#[test]
fn an_edit_cancels_the_stale_run_and_only_the_new_text_is_published() {
    let mut client = Client::start(Duration::from_millis(50));
    let uri = client.open("slow.vpr", PIGEONHOLE);
    let begin = client.next_notification("$/progress", "");
    assert_eq!(begin["value"]["kind"], "begin");
    client.change(&uri, 2, "method m() { assert 1 == 2 }\n");
    let end = client.next_notification("$/progress", "");
    assert_eq!(end["value"]["kind"], "end");
    assert_eq!(end["value"]["message"], "cancelled: the text changed");
    let published = client.next_notification("textDocument/publishDiagnostics", &uri);
    assert_eq!(published["version"], 2, "{published}");
    let diagnostics = published["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{published}");
    assert_eq!(diagnostics[0]["code"], "assert.failed:assertion.false");
    client.shutdown();
}

#[test]
fn syntax_errors_are_diagnostics_and_closing_clears_them() {
    let mut client = Client::start(Duration::from_millis(50));
    let uri = client.open("bad.vpr", "method m( { }\n");
    let published = client.next_notification("textDocument/publishDiagnostics", &uri);
    assert_eq!(
        published["diagnostics"][0]["code"], "parser.error",
        "{published}"
    );
    // Symbols of what parsed, definitions of nothing: answers, not errors.
    let symbols = client.about_document("textDocument/documentSymbol", &uri);
    assert!(symbols.is_array());
    assert_eq!(
        client.request("textDocument/definition", at(0, 1, &uri)),
        Value::Null
    );
    client.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": uri } }),
    );
    let cleared = client.next_notification("textDocument/publishDiagnostics", &uri);
    assert_eq!(cleared["diagnostics"], json!([]));
    client.shutdown();
}

#[test]
fn deeply_nested_text_is_a_diagnostic_not_a_crash() {
    let mut client = Client::start(Duration::from_millis(50));
    let depth = 50_000;
    let text = format!(
        "method m() {{ assert {}true{} }}\n",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let uri = client.open("deep.vpr", &text);
    let symbols = client.about_document("textDocument/documentSymbol", &uri);
    assert!(symbols.is_array());
    let published = client.next_notification("textDocument/publishDiagnostics", &uri);
    assert_eq!(
        published["diagnostics"][0]["code"], "parser.error",
        "{published}"
    );
    client.shutdown();
}
