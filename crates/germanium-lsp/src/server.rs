//! The server loop: documents, when their runs start and end, progress, and publishing.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver, Sender};
use germanium_driver::Cancel;
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    Notification as _, Progress, PublishDiagnostics,
};
use lsp_types::request::{CodeLensRefresh, WorkDoneProgressCreate};
use lsp_types::{
    ClientCapabilities, NumberOrString, ProgressParams, ProgressParamsValue,
    PublishDiagnosticsParams, ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions, Url, WorkDoneProgress,
    WorkDoneProgressBegin, WorkDoneProgressCreateParams, WorkDoneProgressEnd,
    WorkDoneProgressReport,
};

use crate::outline::Outline;
use crate::verification::{self, MemberResult, RunMessage, Verified};
use crate::Settings;

/// What the server offers.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(lsp_types::HoverProviderCapability::Simple(true)),
        code_lens_provider: Some(lsp_types::CodeLensOptions {
            resolve_provider: Some(false),
        }),
        definition_provider: Some(lsp_types::OneOf::Left(true)),
        document_symbol_provider: Some(lsp_types::OneOf::Left(true)),
        ..ServerCapabilities::default()
    }
}

/// An open document.
pub struct Document {
    pub path: PathBuf,
    /// Where `import <...>` is looked for (`--import-path`), for the outline.
    imports: Vec<PathBuf>,
    pub text: String,
    pub version: i32,
    /// Counts the runs started, so a stale run's messages are recognised.
    generation: u64,
    /// A run is to start at this time (the text changed and must stay still till then).
    due: Option<Instant>,
    pub running: Option<Running>,
    pub verified: Option<Verified>,
    /// Files whose diagnostics this document's runs published (to clear them later).
    published: HashSet<Url>,
    outline: Option<(i32, Outline)>,
}

impl Document {
    /// The outline of the current text (parsed once per version).
    pub fn outline(&mut self) -> &Outline {
        if self
            .outline
            .as_ref()
            .is_none_or(|(v, _)| *v != self.version)
        {
            self.outline = Some((
                self.version,
                Outline::of(&self.path, &self.text, &self.imports),
            ));
        }
        &self.outline.as_ref().expect("just made").1
    }
}

/// A run in progress.
pub struct Running {
    generation: u64,
    version: i32,
    cancel: Cancel,
    progress: Option<NumberOrString>,
    /// Members in the program, for the progress percentage.
    total: usize,
    pub members: HashMap<String, MemberResult>,
}

pub struct Server<'c> {
    connection: &'c Connection,
    settings: Settings,
    documents: HashMap<Url, Document>,
    runs: (Sender<RunMessage>, Receiver<RunMessage>),
    /// The client shows `$/progress` (window.workDoneProgress).
    progress: bool,
    /// The client can be asked to fetch code lenses again.
    lens_refresh: bool,
    next_request: i32,
    /// Progress tokens made so far.
    progress_tokens: u64,
}

impl<'c> Server<'c> {
    pub fn new(
        connection: &'c Connection,
        settings: Settings,
        client: &ClientCapabilities,
    ) -> Server<'c> {
        let progress = client
            .window
            .as_ref()
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false);
        let lens_refresh = client
            .workspace
            .as_ref()
            .and_then(|w| w.code_lens.as_ref())
            .and_then(|c| c.refresh_support)
            .unwrap_or(false);
        Server {
            connection,
            settings,
            documents: HashMap::new(),
            runs: crossbeam_channel::unbounded(),
            progress,
            lens_refresh,
            next_request: 0,
            progress_tokens: 0,
        }
    }

    pub fn run(mut self) -> Result<(), String> {
        loop {
            let wait = self
                .documents
                .values()
                .filter_map(|d| d.due)
                .min()
                .map_or(Duration::from_secs(3600), |due| {
                    due.saturating_duration_since(Instant::now())
                });
            let runs = self.runs.1.clone();
            select! {
                recv(self.connection.receiver) -> message => match message {
                    Ok(Message::Request(request)) => {
                        let shutdown = self
                            .connection
                            .handle_shutdown(&request)
                            .map_err(|e| e.to_string());
                        if shutdown.as_ref().is_ok_and(|done| !done) {
                            self.request(request);
                        } else {
                            self.cancel_all();
                            return shutdown.map(|_| ());
                        }
                    }
                    Ok(Message::Notification(notification)) => self.notification(notification),
                    Ok(Message::Response(_)) => {}
                    Err(_) => {
                        // The client went away without `exit`.
                        self.cancel_all();
                        return Ok(());
                    }
                },
                recv(runs) -> message => {
                    if let Ok(message) = message {
                        self.run_message(message);
                    }
                }
                default(wait) => {}
            }
            self.start_due_runs();
        }
    }

    fn send(&self, message: impl Into<Message>) {
        // A closed connection ends the loop at the next receive.
        let _ = self.connection.sender.send(message.into());
    }

    fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) {
        self.send(Notification::new(N::METHOD.to_string(), params));
    }

    fn ask<R: lsp_types::request::Request>(&mut self, params: R::Params) {
        self.next_request += 1;
        let id = RequestId::from(format!("germanium-{}", self.next_request));
        self.send(Request::new(id, R::METHOD.to_string(), params));
    }

    fn request(&mut self, request: Request) {
        let response = crate::requests::answer(&mut self.documents, request);
        self.send(response);
    }

    fn notification(&mut self, notification: Notification) {
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Some(p) = params::<DidOpenTextDocument>(notification) {
                    self.did_open(p.text_document);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Some(p) = params::<DidChangeTextDocument>(notification) {
                    self.did_change(p);
                }
            }
            DidSaveTextDocument::METHOD => {
                if let Some(p) = params::<DidSaveTextDocument>(notification) {
                    self.did_save(&p.text_document.uri);
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Some(p) = params::<DidCloseTextDocument>(notification) {
                    self.did_close(&p.text_document.uri);
                }
            }
            _ => {}
        }
    }

    fn did_open(&mut self, item: lsp_types::TextDocumentItem) {
        let document = Document {
            path: path_of(&item.uri),
            imports: self.settings.options.import_paths.clone(),
            text: item.text,
            version: item.version,
            generation: 0,
            due: Some(Instant::now()),
            running: None,
            verified: None,
            published: HashSet::new(),
            outline: None,
        };
        self.documents.insert(item.uri, document);
    }

    fn did_change(&mut self, params: lsp_types::DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        // Full synchronisation: the last change is the whole text.
        let Some(change) = params.content_changes.into_iter().last() else {
            return;
        };
        self.cancel_run(&uri, "cancelled: the text changed");
        if let Some(document) = self.documents.get_mut(&uri) {
            document.text = change.text;
            document.version = params.text_document.version;
            document.due = Some(Instant::now() + self.settings.debounce);
        }
    }

    /// Verifies the saved text now, unless this version is verified or being verified.
    fn did_save(&mut self, uri: &Url) {
        let Some(document) = self.documents.get_mut(uri) else {
            return;
        };
        let version = document.version;
        let covered = document
            .verified
            .as_ref()
            .is_some_and(|v| v.version == version)
            || document
                .running
                .as_ref()
                .is_some_and(|r| r.version == version);
        if !covered {
            document.due = Some(Instant::now());
        }
    }

    fn did_close(&mut self, uri: &Url) {
        self.cancel_run(uri, "cancelled: the document was closed");
        if let Some(document) = self.documents.remove(uri) {
            for file in document.published {
                self.publish(file, Vec::new(), None);
            }
        }
    }

    fn start_due_runs(&mut self) {
        let now = Instant::now();
        let due: Vec<Url> = self
            .documents
            .iter()
            .filter(|(_, d)| d.due.is_some_and(|t| t <= now))
            .map(|(uri, _)| uri.clone())
            .collect();
        for uri in due {
            self.start_run(uri);
        }
    }

    fn start_run(&mut self, uri: Url) {
        self.cancel_run(&uri, "cancelled: a newer run started");
        let Some(document) = self.documents.get_mut(&uri) else {
            return;
        };
        document.due = None;
        document.generation += 1;
        let total = document
            .outline()
            .declarations
            .iter()
            .filter(|d| d.kind.is_member())
            .count();
        let Some(cancel) = verification::start(
            uri.clone(),
            document.path.clone(),
            document.text.clone(),
            document.generation,
            &self.settings.options,
            self.runs.0.clone(),
        ) else {
            return;
        };
        let name = document
            .path
            .file_name()
            .map_or_else(|| uri.to_string(), |n| n.to_string_lossy().into_owned());
        let mut running = Running {
            generation: document.generation,
            version: document.version,
            cancel,
            progress: None,
            total,
            members: HashMap::new(),
        };
        if self.progress {
            self.progress_tokens += 1;
            let token = NumberOrString::String(format!("germanium/{}", self.progress_tokens));
            self.ask::<WorkDoneProgressCreate>(WorkDoneProgressCreateParams {
                token: token.clone(),
            });
            self.progress_step(
                token.clone(),
                WorkDoneProgress::Begin(WorkDoneProgressBegin {
                    title: format!("Verifying {name}"),
                    cancellable: Some(false),
                    message: Some(format!("{total} members")),
                    percentage: Some(0),
                }),
            );
            running.progress = Some(token);
        }
        if let Some(document) = self.documents.get_mut(&uri) {
            document.running = Some(running);
        }
    }

    fn progress_step(&self, token: NumberOrString, step: WorkDoneProgress) {
        self.notify::<Progress>(ProgressParams {
            token,
            value: ProgressParamsValue::WorkDone(step),
        });
    }

    /// Stops the document's run, if one is running; its results will not be published.
    fn cancel_run(&mut self, uri: &Url, why: &str) {
        let Some(running) = self.documents.get_mut(uri).and_then(|d| d.running.take()) else {
            return;
        };
        running.cancel.cancel();
        if let Some(token) = running.progress {
            self.progress_step(
                token,
                WorkDoneProgress::End(WorkDoneProgressEnd {
                    message: Some(why.to_string()),
                }),
            );
        }
    }

    fn cancel_all(&mut self) {
        let uris: Vec<Url> = self.documents.keys().cloned().collect();
        for uri in uris {
            self.cancel_run(&uri, "cancelled: the server is stopping");
        }
    }

    fn run_message(&mut self, message: RunMessage) {
        match message {
            RunMessage::Member {
                uri,
                generation,
                event,
            } => {
                let Some(running) = self.current_run(&uri, generation) else {
                    return;
                };
                let Some((member, result)) = MemberResult::of(&event) else {
                    return;
                };
                let message = format!("{member}: {}", result.title());
                running.members.insert(member, result);
                let done = running.members.len();
                let percentage = (done * 100 / running.total.max(1)).min(100) as u32;
                if let Some(token) = running.progress.clone() {
                    self.progress_step(
                        token,
                        WorkDoneProgress::Report(WorkDoneProgressReport {
                            cancellable: Some(false),
                            message: Some(message),
                            percentage: Some(percentage),
                        }),
                    );
                }
            }
            RunMessage::Done {
                uri,
                generation,
                report,
            } => {
                if self.current_run(&uri, generation).is_none() {
                    return;
                }
                let Some(document) = self.documents.get_mut(&uri) else {
                    return;
                };
                let Some(running) = document.running.take() else {
                    return;
                };
                let verified = Verified::of(&report, &uri, running.version, running.members);
                let stale: Vec<Url> = document
                    .published
                    .iter()
                    .filter(|f| !verified.diagnostics.contains_key(*f))
                    .cloned()
                    .collect();
                document.published = verified.diagnostics.keys().cloned().collect();
                let mut to_publish: Vec<(Url, Vec<lsp_types::Diagnostic>)> =
                    verified.diagnostics.clone().into_iter().collect();
                to_publish.extend(stale.into_iter().map(|f| (f, Vec::new())));
                let summary = format!(
                    "{} in {:.2} s",
                    verified.outcome,
                    verified.time.as_secs_f64()
                );
                document.verified = Some(verified);
                for (file, diagnostics) in to_publish {
                    let version = (file == uri).then_some(running.version);
                    self.publish(file, diagnostics, version);
                }
                if let Some(token) = running.progress {
                    self.progress_step(
                        token,
                        WorkDoneProgress::End(WorkDoneProgressEnd {
                            message: Some(summary),
                        }),
                    );
                }
                if self.lens_refresh {
                    self.ask::<CodeLensRefresh>(());
                }
            }
        }
    }

    /// The document's run, if it is the one numbered `generation`.
    fn current_run(&mut self, uri: &Url, generation: u64) -> Option<&mut Running> {
        self.documents
            .get_mut(uri)?
            .running
            .as_mut()
            .filter(|r| r.generation == generation)
    }

    fn publish(&self, uri: Url, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        self.notify::<PublishDiagnostics>(PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        });
    }
}

/// A notification's parameters (`None`: they do not decode; the notification is ignored).
fn params<N: lsp_types::notification::Notification>(n: Notification) -> Option<N::Params> {
    n.extract(N::METHOD).ok()
}

/// The file a document is, or a name for one that is not a file (an unsaved buffer).
fn path_of(uri: &Url) -> PathBuf {
    uri.to_file_path()
        .unwrap_or_else(|_| PathBuf::from(uri.path().rsplit('/').next().unwrap_or("untitled.vpr")))
}
