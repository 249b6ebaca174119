//! Verification on a Remote Execution API cluster (`germanium-remote`): each member to verify
//! becomes an action over its dependency slice (`germanium_cache::Slice`), looked up in the
//! cluster's action cache by a digest of everything it depends on, and executed there when
//! missing. Small members are batched into one action and their results stored back under
//! each member's own action, so that per-member sharing survives batching.
//!
//! The slice is verified as the member would be in the program: a function's slice leaves the
//! other functions without bodies, and those are passed as untrusted (no postcondition is
//! trusted while functions are verified); another member's job passes the functions that
//! failed in the program. `run_jobs` is what `germanium action` runs on the worker, and what
//! runs here when the cluster has no executor (a cache only, whose results are then stored
//! there) or cannot be reached with `--remote-fallback local`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use germanium_cache::{KeyPlan, MemberKey, Slice};
use germanium_remote::protocol::{JobDiagnostic, JobResult, Manifest, Results};
use germanium_remote::{JobInput, PreparedAction, Remote, RemoteError, RemoteSettings, Tools};
use germanium_syntax::diagnostic::ids;
use germanium_syntax::{Diagnostic, Severity, SourceMap, Span};
use germanium_verifier::{
    EventError, MemberEvent, MemberFilter, MemberResult, ProgramResult, ResultSource, VerifyOptions,
};

use crate::Options;

/// A member whose own text is shorter than this goes into a batch with others.
const SMALL_MEMBER: u32 = 2_000;
/// The most members in one batched action.
const BATCH: usize = 8;

/// `--remote-executor` and friends, with the connection made once per process.
#[derive(Clone)]
pub struct RemoteOptions {
    pub settings: RemoteSettings,
    /// The Germanium executable the actions run (this one, normally).
    pub germanium: PathBuf,
    /// Verify here what the cluster cannot (`--remote-fallback local`).
    pub fallback_local: bool,
    connection: Arc<OnceLock<Result<Arc<Connection>, RemoteError>>>,
}

impl std::fmt::Debug for RemoteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteOptions")
            .field("settings", &self.settings)
            .field("germanium", &self.germanium)
            .field("fallback_local", &self.fallback_local)
            .finish()
    }
}

struct Connection {
    remote: Remote,
    tools: Tools,
}

impl RemoteOptions {
    pub fn new(settings: RemoteSettings, germanium: PathBuf, fallback_local: bool) -> Self {
        RemoteOptions {
            settings,
            germanium,
            fallback_local,
            connection: Arc::new(OnceLock::new()),
        }
    }

    /// The connection and the tools, made on first use; the same error for every file after
    /// a failure (the cluster is not asked again within one run).
    fn connection(&self, z3: &Path) -> Result<Arc<Connection>, RemoteError> {
        self.connection
            .get_or_init(|| {
                let tools = Tools::load(&self.germanium, z3)
                    .map_err(|e| RemoteError::Settings(format!("reading the tools: {e}")))?;
                let remote = Remote::connect(&self.settings)?;
                Ok(Arc::new(Connection { remote, tools }))
            })
            .clone()
    }
}

/// The command-line options of `germanium action` that carry `options` (those that change
/// results; the rest, such as `--jobs`, stay on the client).
pub(crate) fn action_args(
    options: &VerifyOptions,
    engine: &crate::backends::Engine,
) -> Vec<String> {
    let mut args = vec!["--backend".to_string(), engine.backend.name().to_string()];
    if engine.cross_check {
        args.push("--cross-check".into());
    }
    if options.combinable_wands {
        args.push("--combinable-wands".into());
    }
    if let Some(t) = options.timeout {
        args.extend(["--timeout".into(), format!("{}", t.as_secs_f64())]);
    }
    if let Some(n) = options.max_branches {
        args.extend(["--max-branches".into(), n.to_string()]);
    }
    args
}

/// One member to verify remotely, with its slice and its member action.
struct Planned<'k> {
    key: &'k MemberKey,
    slice: Slice,
    job: JobInput,
    action: PreparedAction,
}

/// Members verified on the cluster: what [`crate::cached`]'s phases call instead of a local
/// run.
pub(crate) struct RemoteMembers<'a> {
    pub options: &'a RemoteOptions,
    pub plan: &'a KeyPlan,
    pub sources: &'a SourceMap,
    pub z3: PathBuf,
    /// `germanium action`'s options for every action.
    pub args: Vec<String>,
    /// Local runs (`--remote-fallback local`, a cache without executor) use these.
    pub local: &'a Options,
}

impl RemoteMembers<'_> {
    /// Verifies the members `keys` and says what each found, as a local run would.
    pub fn verify(&self, keys: &[&MemberKey], options: &VerifyOptions) -> ProgramResult {
        let mut out = ProgramResult::default();
        if keys.is_empty() {
            return out;
        }
        let connection = match self.options.connection(&self.z3) {
            Ok(c) => Some(c),
            Err(e)
                if self.options.fallback_local
                    && (e.is_unreachable() || matches!(e, RemoteError::Settings(_))) =>
            {
                out.general.push(Diagnostic::warning(
                    "remote.fallback",
                    Span::default(),
                    format!("{e}; verifying locally (--remote-fallback local)"),
                ));
                None
            }
            Err(e) => {
                out.general.push(Diagnostic::new(
                    ids::INTERNAL,
                    Span::default(),
                    e.to_string(),
                ));
                return out;
            }
        };
        let failed: Vec<String> = options.failed_functions.iter().cloned().collect();
        let tools = connection.as_ref().map(|c| c.tools.clone());
        let timeout = self.options.settings.action_timeout;
        let planned: Vec<Planned> = keys
            .iter()
            .filter_map(|k| {
                let slice = self.plan.slice(k.order, self.sources)?;
                let failed = if k.kind == "function" {
                    slice.bodiless_functions.iter().cloned().collect()
                } else {
                    failed.clone()
                };
                let job = JobInput {
                    member: k.name.clone(),
                    text: slice.text.clone(),
                    failed_functions: failed,
                };
                let action = match &tools {
                    Some(t) => germanium_remote::prepare(
                        t,
                        &self.args,
                        std::slice::from_ref(&job),
                        timeout,
                    ),
                    None => placeholder_action(),
                };
                Some(Planned {
                    key: k,
                    slice,
                    job,
                    action,
                })
            })
            .collect();
        let Some(connection) = connection else {
            let results = self.run_here(&planned.iter().collect::<Vec<_>>());
            for (p, r) in planned.iter().zip(results) {
                self.finish(&mut out, p, Ok(r), ResultSource::Local, options);
            }
            return out;
        };
        let remote = &connection.remote;
        let digests: Vec<_> = planned.iter().map(|p| p.action.digest.clone()).collect();
        let found = match remote.lookup_all(&digests) {
            Ok(found) => found,
            Err(e) => {
                if self.options.fallback_local && e.is_unreachable() {
                    out.general.push(Diagnostic::warning(
                        "remote.fallback",
                        Span::default(),
                        format!("{e}; verifying locally (--remote-fallback local)"),
                    ));
                    let results = self.run_here(&planned.iter().collect::<Vec<_>>());
                    for (p, r) in planned.iter().zip(results) {
                        self.finish(&mut out, p, Ok(r), ResultSource::Local, options);
                    }
                } else {
                    out.general.push(Diagnostic::new(
                        ids::INTERNAL,
                        Span::default(),
                        e.to_string(),
                    ));
                }
                return out;
            }
        };
        let mut misses: Vec<&Planned> = Vec::new();
        for (p, stored) in planned.iter().zip(found) {
            match stored.map(|bytes| one_result(&bytes)) {
                Some(Ok(r)) => self.finish(&mut out, p, Ok(r), ResultSource::RemoteCache, options),
                _ => misses.push(p),
            }
        }
        if misses.is_empty() {
            return out;
        }
        if !remote.executes() {
            // A cache only: verify here and share the results.
            let results = self.run_here(&misses);
            let entries: Vec<(&PreparedAction, Vec<u8>)> = misses
                .iter()
                .zip(&results)
                .map(|(p, r)| (&p.action, single(r)))
                .collect();
            if let Err(e) = remote.store_all(&entries) {
                out.general.push(Diagnostic::warning(
                    "remote.store",
                    Span::default(),
                    format!("results could not be stored in the remote cache: {e}"),
                ));
            }
            for (p, r) in misses.into_iter().zip(results) {
                self.finish(&mut out, p, Ok(r), ResultSource::Local, options);
            }
            return out;
        }
        self.execute(&mut out, remote, connection.tools.clone(), misses, options);
        out
    }

    /// Executes `misses` on the cluster: large members alone and first, small ones in
    /// batches whose results are stored back under each member's action.
    fn execute(
        &self,
        out: &mut ProgramResult,
        remote: &Remote,
        tools: Tools,
        mut misses: Vec<&Planned>,
        options: &VerifyOptions,
    ) {
        // The critical path is the slowest member: the longest texts go first.
        misses.sort_by_key(|p| std::cmp::Reverse(p.key.span.end - p.key.span.start));
        let mut groups: Vec<Vec<&Planned>> = Vec::new();
        let mut small: Vec<&Planned> = Vec::new();
        for p in misses {
            if p.key.span.end - p.key.span.start < SMALL_MEMBER {
                small.push(p);
            } else {
                groups.push(vec![p]);
            }
        }
        groups.extend(small.chunks(BATCH).map(|c| c.to_vec()));
        let actions: Vec<PreparedAction> = groups
            .iter()
            .map(|g| match g.as_slice() {
                [one] => one.action.clone(),
                many => {
                    let jobs: Vec<JobInput> = many.iter().map(|p| p.job.clone()).collect();
                    germanium_remote::prepare(
                        &tools,
                        &self.args,
                        &jobs,
                        // Small members: the whole batch within one member's limit.
                        self.options.settings.action_timeout,
                    )
                }
            })
            .collect();
        let cancel = options.cancel.clone();
        let cancelled: germanium_remote::CancelFlag =
            Arc::new(move || cancel.as_ref().is_some_and(|c| c.is_cancelled()));
        let executed = remote.execute_all(&actions, cancelled);
        let mut to_store: Vec<(&PreparedAction, Vec<u8>)> = Vec::new();
        let mut unreachable: Vec<&Planned> = Vec::new();
        for (group, result) in groups.iter().zip(executed) {
            let parsed = result.and_then(|e| {
                let results = Results::parse(&e.output).map_err(RemoteError::Action)?;
                if results.results.len() != group.len() {
                    return Err(RemoteError::Action(format!(
                        "{} results for {} members",
                        results.results.len(),
                        group.len()
                    )));
                }
                Ok((results, e.cached))
            });
            match parsed {
                Ok((results, cached)) => {
                    let source = if cached {
                        ResultSource::RemoteCache
                    } else {
                        ResultSource::Remote
                    };
                    for (p, r) in group.iter().zip(results.results) {
                        if group.len() > 1 {
                            to_store.push((&p.action, single(&r)));
                        }
                        self.finish(out, p, Ok(r), source, options);
                    }
                }
                Err(e) if e.is_unreachable() && self.options.fallback_local => {
                    unreachable.extend(group.iter().copied());
                }
                Err(e) => {
                    for p in group {
                        self.finish(out, p, Err(e.clone()), ResultSource::Remote, options);
                    }
                }
            }
        }
        if !to_store.is_empty() {
            // Best effort: a cluster may refuse results from clients.
            let _ = remote.store_all(&to_store);
        }
        if !unreachable.is_empty() {
            out.general.push(Diagnostic::warning(
                "remote.fallback",
                Span::default(),
                "the remote cluster could not be reached; the rest is verified locally (--remote-fallback local)",
            ));
            let results = self.run_here(&unreachable);
            for (p, r) in unreachable.into_iter().zip(results) {
                self.finish(out, p, Ok(r), ResultSource::Local, options);
            }
        }
    }

    /// The jobs of `planned` run in this process, as the worker would run them.
    fn run_here(&self, planned: &[&Planned]) -> Vec<JobResult> {
        let jobs: Vec<(String, String, Vec<String>)> = planned
            .iter()
            .map(|p| {
                (
                    p.job.member.clone(),
                    p.job.text.clone(),
                    p.job.failed_functions.clone(),
                )
            })
            .collect();
        run_jobs(&jobs, self.local)
    }

    /// Places a member's result in the program, tells the events and adds it to `out`.
    fn finish(
        &self,
        out: &mut ProgramResult,
        p: &Planned,
        result: Result<JobResult, RemoteError>,
        source: ResultSource,
        options: &VerifyOptions,
    ) {
        let (errors, time) = match result {
            Ok(r) => (
                r.diagnostics
                    .iter()
                    .map(|d| place(p.key.span, &p.slice, d))
                    .collect::<Vec<_>>(),
                Duration::from_millis(r.time_ms),
            ),
            Err(e) => (
                vec![Diagnostic::new(ids::INTERNAL, p.key.span, e.to_string())],
                Duration::ZERO,
            ),
        };
        if p.key.kind == "function" && errors.iter().any(Diagnostic::is_error) {
            out.failed_functions.insert(p.key.name.clone());
        }
        if let Some(events) = &options.events {
            (events.0)(MemberEvent::Finished {
                member: p.key.name.clone(),
                kind: p.key.kind,
                errors: errors
                    .iter()
                    .map(|d| EventError::of(self.sources, d))
                    .collect(),
                time: if source.is_cached() {
                    Duration::ZERO
                } else {
                    time
                },
                source,
                stats: None,
            });
        }
        out.members.push(MemberResult {
            name: p.key.name.clone(),
            kind: p.key.kind,
            errors,
        });
    }
}

/// An action that is never sent (no connection: everything runs here).
fn placeholder_action() -> PreparedAction {
    PreparedAction {
        digest: Default::default(),
        action: Default::default(),
        blobs: Vec::new(),
    }
}

/// The `results.json` of a member's own action.
fn single(r: &JobResult) -> Vec<u8> {
    Results {
        results: vec![r.clone()],
    }
    .to_bytes()
}

/// The one result of a member's own action.
fn one_result(bytes: &[u8]) -> Result<JobResult, String> {
    let mut results = Results::parse(bytes)?.results;
    match (results.pop(), results.is_empty()) {
        (Some(r), true) => Ok(r),
        _ => Err("not one result".into()),
    }
}

/// A job's diagnostic in the program: where the slice printed it whole, at its place there;
/// else at the member.
fn place(member: Span, slice: &Slice, d: &JobDiagnostic) -> Diagnostic {
    let span = d
        .span
        .and_then(|(start, end)| slice.original(start, end))
        .unwrap_or(member);
    let mut out = if d.warning {
        Diagnostic::warning(d.id.clone(), span, d.message.clone())
    } else {
        Diagnostic::new(d.id.clone(), span, d.message.clone())
    };
    out.counterexample = None;
    out
}

/// Verifies each job (member, slice text, untrusted functions) alone, as `germanium action`
/// does on a worker: the member in its slice, nothing stored; `options.jobs` jobs at a time.
pub fn run_jobs(jobs: &[(String, String, Vec<String>)], options: &Options) -> Vec<JobResult> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<OnceLock<JobResult>> = jobs.iter().map(|_| OnceLock::new()).collect();
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.clamp(1, jobs.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((member, text, failed)) = jobs.get(i) else {
                    break;
                };
                let _ = results[i].set(run_job(i, member, text, failed, options));
            });
        }
    });
    results
        .into_iter()
        .map(|r| r.into_inner().expect("every job ran"))
        .collect()
}

/// One job: the member alone in its slice, with one worker thread.
fn run_job(i: usize, member: &str, text: &str, failed: &[String], options: &Options) -> JobResult {
    let started = Instant::now();
    let mut opts = options.clone();
    let keep = member.to_string();
    opts.members = Some(MemberFilter(Arc::new(move |name: &str| name == keep)));
    opts.failed_functions = failed.iter().cloned().collect::<BTreeSet<String>>();
    opts.cache = None;
    opts.remote = None;
    opts.events = None;
    opts.counterexamples = false;
    opts.trace = None;
    opts.jobs = 1;
    let path = PathBuf::from(format!("slice-{i}.vpr"));
    let report = crate::run_text(&path, text.to_string(), &opts);
    let main = report.sources.find(&path);
    let diagnostics = report
        .diagnostics
        .iter()
        .map(|d| JobDiagnostic {
            id: d.id.clone(),
            message: d.message.clone(),
            warning: d.severity == Severity::Warning,
            // `Span::default()` is no place (a solver's error, say).
            span: (Some(d.span.file) == main && d.span.end > 0)
                .then_some((d.span.start, d.span.end)),
        })
        .collect();
    JobResult {
        member: member.to_string(),
        diagnostics,
        time_ms: started.elapsed().as_millis() as u64,
    }
}

/// `germanium action`: the jobs of the manifest in `dir`, their slices read from there.
pub fn run_action(dir: &Path, manifest: &Manifest, options: &Options) -> Result<Results, String> {
    let mut jobs = Vec::new();
    for job in &manifest.jobs {
        let path = dir.join(&job.file);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        jobs.push((job.member.clone(), text, job.failed_functions.clone()));
    }
    Ok(Results {
        results: run_jobs(&jobs, options),
    })
}
