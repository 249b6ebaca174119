//! The page and its API, one answer per request:
//!
//! - `GET /`: the page;
//! - `GET /api/overview`: the file, its result, diagnostics (with counterexamples), members
//!   (name, root record, failures), the records checks failed in, and the source files;
//! - `GET /api/record/ID`: one record with its parent, previous and next (pre-order), the
//!   headings of its ancestors and of its children (at most [`MAX_CHILDREN`]), its
//!   failures, and its state with the path conditions' texts;
//! - `GET /api/source?file=PATH`: the text of one of the program's files.

use germanium_trace_log::{RecordLine, StateLine};
use serde::Serialize;
use serde_json::{json, Value};

use crate::session::Session;

/// At most this many children's headings come with a record.
const MAX_CHILDREN: usize = 2000;

const PAGE: &str = include_str!("../page/index.html");

/// An answer to a request, before it is put on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

fn with_type(body: Vec<u8>, content_type: &'static str, status: u16) -> Answer {
    Answer {
        status,
        content_type,
        body,
    }
}

fn json_answer(value: &impl Serialize) -> Answer {
    let body = serde_json::to_vec(value).unwrap_or_default();
    with_type(body, "application/json; charset=utf-8", 200)
}

pub(crate) fn not_found(what: &str) -> Answer {
    let body = serde_json::to_vec(&json!({ "error": what })).unwrap_or_default();
    with_type(body, "application/json; charset=utf-8", 404)
}

/// The answer to `GET url`.
pub fn answer(session: &Session, url: &str) -> Answer {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    match path {
        "/" | "/index.html" => with_type(PAGE.as_bytes().to_vec(), "text/html; charset=utf-8", 200),
        "/api/overview" => json_answer(&overview(session)),
        "/api/source" => match parameter(query, "file").and_then(|f| source(session, &f)) {
            Some(text) => with_type(text.as_bytes().to_vec(), "text/plain; charset=utf-8", 200),
            None => not_found("no such source file"),
        },
        _ => match path
            .strip_prefix("/api/record/")
            .and_then(|id| id.parse().ok())
        {
            Some(id) => match record(session, id) {
                Ok(Some(value)) => json_answer(&value),
                Ok(None) => not_found("no such record"),
                Err(e) => not_found(&format!("the log could not be read: {e}")),
            },
            None => not_found("no such page"),
        },
    }
}

fn overview(session: &Session) -> Value {
    let members: Vec<Value> = session
        .index
        .members()
        .iter()
        .map(|m| json!({ "name": m.name, "root": m.root, "failures": m.failures }))
        .collect();
    let files: Vec<&str> = session.sources.iter().map(|(p, _)| p.as_str()).collect();
    json!({
        "file": session.file_name(),
        "result": session.result,
        "diagnostics": session.diagnostics,
        "members": members,
        "failed": session.index.failed_records(),
        "files": files,
    })
}

fn source<'s>(session: &'s Session, file: &str) -> Option<&'s str> {
    session
        .sources
        .iter()
        .find(|(p, _)| p == file)
        .map(|(_, t)| t.as_str())
}

/// The heading of a record in a list: enough to show and to decide whether to open it.
fn heading(session: &Session, r: &RecordLine) -> Value {
    let entry = session.index.entry(r.id);
    json!({
        "id": r.id,
        "step": r.step,
        "detail": r.detail,
        "place": r.place,
        "children": entry.map_or(0, |e| e.children.len()),
        "failed": entry.is_some_and(|e| e.failed_below),
    })
}

fn record(session: &Session, id: u64) -> std::io::Result<Option<Value>> {
    let index = &session.index;
    let Some(r) = index.record(id)? else {
        return Ok(None);
    };
    let entry = index.entry(id).cloned().unwrap_or_default();
    let mut children = Vec::new();
    for &child in entry.children.iter().take(MAX_CHILDREN) {
        if let Some(c) = index.record(child)? {
            children.push(heading(session, &c));
        }
    }
    let failures = index.failures(id)?;
    let counterexamples: Vec<Value> = failures
        .iter()
        .map(|f| {
            let found = session.diagnostics.iter().find(|d| {
                d.id == f.error
                    && f.place
                        .as_ref()
                        .is_some_and(|p| p.line == d.place.line && p.column == d.place.column)
            });
            json!(found.and_then(|d| d.counterexample.clone()))
        })
        .collect();
    let state = match r.state {
        Some(s) => index
            .state(s)?
            .map(|s| state_value(session, s))
            .transpose()?,
        None => None,
    };
    // The path from the member's root down, as headings: the page shows it without asking
    // for each record.
    let ancestors = {
        let mut out = Vec::new();
        let mut at = entry.parent;
        while let Some(p) = at {
            if let Some(a) = index.record(p)? {
                out.push(heading(session, &a));
            }
            at = index.entry(p).and_then(|e| e.parent);
        }
        out.reverse();
        out
    };
    Ok(Some(json!({
        "record": heading(session, &r),
        "member": r.member,
        "depth": r.depth,
        "parent": entry.parent,
        "ancestors": ancestors,
        "previous": index.previous(id),
        "next": index.next(id),
        "children": children,
        "more_children": entry.children.len().saturating_sub(MAX_CHILDREN),
        "failures": failures,
        "counterexamples": counterexamples,
        "state": state,
    })))
}

fn state_value(session: &Session, s: StateLine) -> std::io::Result<Value> {
    let mut path = Vec::with_capacity(s.path.len());
    for f in &s.path {
        path.push(session.index.fact(*f)?.unwrap_or_default());
    }
    Ok(json!({ "id": s.id, "store": s.store, "heap": s.heap, "path": path }))
}

/// The value of `name` in a query string, decoded.
fn parameter(query: &str, name: &str) -> Option<String> {
    form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}
