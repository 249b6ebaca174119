//! One debugging session: the program verified once with the log on, the log's index, and
//! what the page shows besides records (the diagnostics with counterexamples, the sources).

use std::path::{Path, PathBuf};

use germanium_driver::{run_file, Mode, Options};
use germanium_trace_log::{Index, PlaceLine, Writer};
use serde::Serialize;

#[derive(Debug)]
pub enum SessionError {
    /// The log could not be written or read back.
    Log(std::io::Error),
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::Log(e) => write!(f, "the execution log failed: {e}"),
        }
    }
}

impl std::error::Error for SessionError {}

/// A diagnostic as the page shows it.
#[derive(Clone, Debug, Serialize)]
pub struct DiagnosticView {
    pub id: String,
    pub message: String,
    pub place: PlaceLine,
    /// The counterexample's fields as in `germanium_syntax::Counterexample`.
    pub counterexample: Option<serde_json::Value>,
}

/// A counterexample as JSON, field by field.
fn counterexample_value(c: &germanium_syntax::Counterexample) -> serde_json::Value {
    serde_json::json!({
        "not_found": c.not_found,
        "candidate": c.candidate,
        "confirmation": match &c.confirmation {
            germanium_syntax::diagnostic::Confirmation::Confirmed { .. } => "confirmed",
            germanium_syntax::diagnostic::Confirmation::NoneWithinBound { .. } => "none-within-bound",
            germanium_syntax::diagnostic::Confirmation::Undecided(_) => "undecided",
            germanium_syntax::diagnostic::Confirmation::Unchecked => "unchecked",
        },
        "pre_state": match &c.confirmation {
            germanium_syntax::diagnostic::Confirmation::Confirmed { pre_state } => pre_state.clone(),
            _ => Vec::new(),
        },
        "text": c.to_text(),
        "variables": c.variables,
        "heap": c.heap,
        "old_heap": c.old_heap,
        "labelled_heap": c.labelled_heap,
        "predicates": c.predicates,
        "functions": c.functions,
    })
}

/// A verified program and its log, ready to be served.
pub struct Session {
    pub(crate) file: PathBuf,
    pub(crate) result: &'static str,
    pub(crate) diagnostics: Vec<DiagnosticView>,
    /// The program's files (the input and what it imports): path and text.
    pub(crate) sources: Vec<(String, String)>,
    pub(crate) index: Index,
    /// Holds the log; removed with the session.
    _log_dir: tempfile::TempDir,
}

impl Session {
    /// Verifies `file` with `options` (counterexamples and the log switched on, one worker
    /// so the log is in the order of the program) and indexes the log.
    pub fn start(file: &Path, mut options: Options) -> Result<Session, SessionError> {
        let log_dir = tempfile::Builder::new()
            .prefix("germanium-debug-")
            .tempdir()
            .map_err(SessionError::Log)?;
        let log = log_dir.path().join("log.jsonl");
        let writer = Writer::create(&log).map_err(SessionError::Log)?;
        options.mode = Mode::Verify;
        options.counterexamples = true;
        options.jobs = 1;
        options.trace = Some(writer.sinks());
        let report = run_file(file, &options);
        writer.finish().map_err(SessionError::Log)?;
        let index = Index::open(&log).map_err(SessionError::Log)?;
        let diagnostics = report
            .diagnostics
            .iter()
            .map(|d| DiagnosticView {
                id: d.id.clone(),
                message: d.message.clone(),
                place: PlaceLine::from(&germanium_driver::EventError::of(&report.sources, d)),
                counterexample: d.counterexample.as_deref().map(counterexample_value),
            })
            .collect();
        let sources = report
            .sources
            .files()
            .map(|(_, f)| (f.path.display().to_string(), f.text.clone()))
            .collect();
        Ok(Session {
            file: file.to_path_buf(),
            result: report.result.as_str(),
            diagnostics,
            sources,
            index,
            _log_dir: log_dir,
        })
    }

    pub fn file_name(&self) -> String {
        self.file.display().to_string()
    }

    /// The result of verification: `verified`, `failed` or `error`.
    pub fn result(&self) -> &str {
        self.result
    }
}
