//! Writes the log: one sink per worker, all appending to one file.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use germanium_symbex::trace::{Failure, Place, Record, Sink, StateView};
use germanium_symbex::TraceSinks;

use crate::lines::{ChunkLine, FactLine, FailureLine, Line, PlaceLine, RecordLine, StateLine};

/// A sink writes its lines to the file once it has this many bytes (and when a member ends).
const FLUSH_BYTES: usize = 64 * 1024;

/// The log file being written, shared by the workers' sinks.
#[derive(Clone)]
pub struct Writer {
    shared: Arc<Shared>,
}

struct Shared {
    /// `None` after a write failed: the log stops there, verification goes on.
    out: Mutex<Option<BufWriter<File>>>,
    next_record: AtomicU64,
    next_state: AtomicU64,
    next_fact: AtomicU64,
}

impl Writer {
    /// Creates (or truncates) the log at `path` and writes its first line.
    pub fn create(path: &Path) -> io::Result<Writer> {
        let mut out = BufWriter::new(File::create(path)?);
        let first = serde_json::to_string(&Line::Log { version: 1 }).map_err(io::Error::other)?;
        writeln!(out, "{first}")?;
        Ok(Writer {
            shared: Arc::new(Shared {
                out: Mutex::new(Some(out)),
                next_record: AtomicU64::new(0),
                next_state: AtomicU64::new(0),
                next_fact: AtomicU64::new(0),
            }),
        })
    }

    /// Makes each worker's sink (for `VerifyOptions::trace`).
    pub fn sinks(&self) -> TraceSinks {
        let shared = Arc::clone(&self.shared);
        TraceSinks(Arc::new(move || {
            Box::new(JsonSink::new(Arc::clone(&shared))) as Box<dyn Sink>
        }))
    }

    /// Flushes the file; says whether every line was written.
    pub fn finish(&self) -> io::Result<()> {
        let mut out = self.shared.out.lock().unwrap_or_else(|p| p.into_inner());
        match out.as_mut() {
            Some(w) => w.flush(),
            None => Err(io::Error::other("a write to the execution log failed")),
        }
    }
}

/// One worker's sink.
struct JsonSink {
    shared: Arc<Shared>,
    /// Ids of the open records, innermost last.
    open: Vec<u64>,
    member: String,
    /// The state given last (records without a state of their own apply to it).
    state: Option<u64>,
    /// The file's fact id for each of the member's fact numbers.
    facts: Vec<u64>,
    buffer: Vec<u8>,
}

impl JsonSink {
    fn new(shared: Arc<Shared>) -> JsonSink {
        JsonSink {
            shared,
            open: Vec::new(),
            member: String::new(),
            state: None,
            facts: Vec::new(),
            buffer: Vec::new(),
        }
    }

    fn line(&mut self, line: &Line) {
        // Serialising plain strings and numbers cannot fail.
        if serde_json::to_writer(&mut self.buffer, line).is_ok() {
            self.buffer.push(b'\n');
        }
    }

    fn flush(&mut self) {
        if self.buffer.is_empty() {
            return;
        }
        let mut out = self.shared.out.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(w) = out.as_mut() {
            if w.write_all(&self.buffer).and_then(|_| w.flush()).is_err() {
                *out = None;
            }
        }
        self.buffer.clear();
    }

    fn state(&mut self, view: &StateView) -> u64 {
        let mut path = Vec::with_capacity(view.path.len());
        for fact in &view.path {
            let number = fact.number as usize;
            if number >= self.facts.len() {
                let id = self.shared.next_fact.fetch_add(1, Ordering::Relaxed);
                self.facts.resize(number + 1, u64::MAX);
                self.facts[number] = id;
                let text = fact.text.clone().unwrap_or_default();
                self.line(&Line::Fact(FactLine { id, text }));
            }
            path.push(self.facts[number]);
        }
        let id = self.shared.next_state.fetch_add(1, Ordering::Relaxed);
        let heap = view
            .heap
            .iter()
            .map(|c| ChunkLine {
                kind: c.kind.clone(),
                name: c.name.clone(),
                args: c.args.clone(),
                amount: c.amount.clone(),
                snapshot: c.snapshot.clone(),
            })
            .collect();
        self.line(&Line::State(StateLine {
            id,
            store: view.store.clone(),
            heap,
            path,
        }));
        id
    }
}

fn place_line(place: &Option<Place>) -> Option<PlaceLine> {
    place.as_ref().map(PlaceLine::from)
}

impl Sink for JsonSink {
    fn enabled(&self) -> bool {
        true
    }

    fn open(&mut self, record: &Record<'_>) {
        if record.step == germanium_symbex::trace::Step::Member {
            // Fact numbers and states start again with each member.
            self.member = record.detail.to_string();
            self.facts.clear();
            self.state = None;
        }
        if let Some(view) = record.state {
            self.state = Some(self.state(view));
        }
        let id = self.shared.next_record.fetch_add(1, Ordering::Relaxed);
        let line = Line::Record(RecordLine {
            id,
            parent: self.open.last().copied(),
            member: self.member.clone(),
            step: record.step.name().to_string(),
            detail: record.detail.to_string(),
            depth: record.depth,
            place: place_line(&record.place),
            state: self.state,
        });
        self.line(&line);
        self.open.push(id);
    }

    fn close(&mut self) {
        self.open.pop();
        if self.open.is_empty() || self.buffer.len() >= FLUSH_BYTES {
            self.flush();
        }
    }

    fn failure(&mut self, failure: &Failure<'_>) {
        let Some(&record) = self.open.last() else {
            return;
        };
        let line = Line::Failure(FailureLine {
            record,
            member: self.member.clone(),
            error: failure.id.to_string(),
            message: failure.message.to_string(),
            place: place_line(&failure.place),
            query: failure.query.clone(),
        });
        self.line(&line);
    }
}

impl Drop for JsonSink {
    fn drop(&mut self) {
        self.flush();
    }
}
