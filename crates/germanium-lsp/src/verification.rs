//! Verification runs for documents: each on a thread of its own through the driver, on the
//! buffer's text, telling the server loop as members finish and when the file is done; a
//! run is stopped through its [`Cancel`] when its text is stale. A finished run becomes a
//! [`Verified`]: diagnostics per file, what hovering over each says, and member results.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::Sender;
use germanium_driver::{Cancel, FileReport, MemberEvent, MemberEvents, Options};
use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Range, Url};

use crate::line_index::LineIndex;

/// What a run tells the server loop.
pub enum RunMessage {
    Member {
        uri: Url,
        generation: u64,
        event: MemberEvent,
    },
    Done {
        uri: Url,
        generation: u64,
        report: Box<FileReport>,
    },
}

/// Starts verifying `text` as the contents of `path`; messages carry `uri` and
/// `generation` so the loop can tell a stale run's from the current one's. `None`: no
/// thread could be started (the document keeps its last results).
pub fn start(
    uri: Url,
    path: PathBuf,
    text: String,
    generation: u64,
    base: &Options,
    to_loop: Sender<RunMessage>,
) -> Option<Cancel> {
    let cancel = Cancel::new();
    let mut options = base.clone();
    options.cancel = Some(cancel.clone());
    let (events_uri, events_to) = (uri.clone(), to_loop.clone());
    options.events = Some(MemberEvents(Arc::new(move |event| {
        let _ = events_to.send(RunMessage::Member {
            uri: events_uri.clone(),
            generation,
            event,
        });
    })));
    std::thread::Builder::new()
        .name("germanium-lsp-run".into())
        .spawn(move || {
            let report = germanium_driver::run_text(&path, text, &options);
            let _ = to_loop.send(RunMessage::Done {
                uri,
                generation,
                report: Box::new(report),
            });
        })
        .ok()?;
    Some(cancel)
}

/// A member's last result.
#[derive(Clone, Debug, PartialEq)]
pub struct MemberResult {
    pub errors: usize,
    pub time: Duration,
    pub cached: bool,
}

impl MemberResult {
    pub fn of(event: &MemberEvent) -> Option<(String, MemberResult)> {
        match event {
            MemberEvent::Finished {
                member,
                errors,
                time,
                source,
                ..
            } => Some((
                member.clone(),
                MemberResult {
                    errors: errors.iter().filter(|e| !e.warning).count(),
                    time: *time,
                    cached: source.is_cached(),
                },
            )),
            MemberEvent::Started { .. } => None,
        }
    }

    /// `verified in 0.12 s`, `2 errors in 0.30 s`, `verified (cached)`.
    pub fn title(&self) -> String {
        let verdict = match self.errors {
            0 => "✓ verified".to_string(),
            1 => "✗ 1 error".to_string(),
            n => format!("✗ {n} errors"),
        };
        if self.cached {
            format!("{verdict} (cached)")
        } else {
            format!("{verdict} in {:.2} s", self.time.as_secs_f64())
        }
    }
}

/// A finished run, as the editor sees it.
pub struct Verified {
    /// The document version verified.
    pub version: i32,
    /// `verified`, `failed` or `error`.
    pub outcome: &'static str,
    pub time: Duration,
    /// Diagnostics by file: the document's own and those of files it imports.
    pub diagnostics: HashMap<Url, Vec<Diagnostic>>,
    /// For each of the document's diagnostics, what hovering over it shows (Markdown).
    pub hovers: Vec<(Range, String)>,
    pub members: HashMap<String, MemberResult>,
}

impl Verified {
    pub fn of(
        report: &FileReport,
        document: &Url,
        version: i32,
        members: HashMap<String, MemberResult>,
    ) -> Verified {
        let mut diagnostics: HashMap<Url, Vec<Diagnostic>> = HashMap::new();
        diagnostics.insert(document.clone(), Vec::new());
        let mut hovers = Vec::new();
        let main = report.sources.find(&report.path);
        let files: Vec<_> = report.sources.files().map(|(_, f)| f).collect();
        // One line index per file, made when a diagnostic first needs it.
        let mut indexes: HashMap<usize, LineIndex> = HashMap::new();
        for d in &report.diagnostics {
            // Errors of no place (a solver that cannot start) are put at the document's start.
            let file = d.span.file.0 as usize;
            let (uri, range) = match files.get(file) {
                Some(source) => {
                    let index = indexes
                        .entry(file)
                        .or_insert_with(|| LineIndex::new(&source.text));
                    let range = index.range(d.span.start as usize, d.span.end as usize);
                    let uri = if Some(d.span.file) == main {
                        Some(document.clone())
                    } else {
                        Url::from_file_path(&source.path).ok()
                    };
                    (uri.unwrap_or_else(|| document.clone()), range)
                }
                None => (document.clone(), Range::default()),
            };
            let severity = if d.is_error() {
                DiagnosticSeverity::ERROR
            } else {
                DiagnosticSeverity::WARNING
            };
            if &uri == document {
                hovers.push((range, hover_text(d)));
            }
            diagnostics.entry(uri).or_default().push(Diagnostic {
                range,
                severity: Some(severity),
                code: Some(NumberOrString::String(d.id.clone())),
                source: Some("germanium".into()),
                message: d.message.clone(),
                ..Diagnostic::default()
            });
        }
        Verified {
            version,
            outcome: report.result_word(),
            time: report.time,
            diagnostics,
            hovers,
            members,
        }
    }
}

/// The error's id and message, and its counterexample where one was found.
fn hover_text(d: &germanium_syntax::Diagnostic) -> String {
    let word = if d.is_error() { "error" } else { "warning" };
    let mut text = format!("**{word}** `{}`\n\n{}", d.id, d.message);
    if let Some(c) = &d.counterexample {
        text.push_str(&format!("\n\n```\n{}\n```", c.to_text()));
    }
    text
}
