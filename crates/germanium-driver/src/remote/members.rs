//! The members of one phase verified through the cluster: looked up in its action cache,
//! the misses executed (large members alone and first, small ones in whole-program batches),
//! or verified here where the cluster cannot.

use std::cell::OnceCell;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use germanium_cache::{KeyPlan, MemberKey, Slice};
use germanium_remote::protocol::{JobDiagnostic, JobResult, Results};
use germanium_remote::{JobInput, PreparedAction, Remote, RemoteError, Tools};
use germanium_syntax::diagnostic::ids;
use germanium_syntax::{Diagnostic, SourceMap, Span};
use germanium_verifier::{
    EventError, MemberEvent, MemberResult, ProgramResult, ResultSource, VerifyOptions,
};

use super::jobs::{run_jobs, slice_job};
use super::RemoteOptions;
use crate::Options;

/// A member whose own text is shorter than this is batched with others.
const SMALL_MEMBER: u32 = 2_000;
/// The most members in one batch.
const BATCH: usize = 16;

/// One member to verify remotely: its slice, and its own action (the one its result is
/// looked up and stored under).
struct Planned<'k> {
    key: &'k MemberKey,
    slice: Slice,
    action: Option<PreparedAction>,
}

/// Members verified on the cluster: what the driver's phases (`cached.rs`) call instead of
/// a local run.
pub(crate) struct RemoteMembers<'a> {
    pub options: &'a RemoteOptions,
    pub plan: &'a KeyPlan,
    pub sources: &'a SourceMap,
    pub z3: PathBuf,
    /// `germanium action`'s options for every action.
    pub args: Vec<String>,
    /// Local runs (`--remote-fallback local`, a cache without executor) use these.
    pub local: &'a Options,
    /// The whole program as one text, for batches (made on first use).
    pub whole: OnceCell<Slice>,
}

/// A member's outcome before it is placed: its results, and the text they are placed in.
type Outcome<'s> = Result<(JobResult, &'s Slice), RemoteError>;

impl RemoteMembers<'_> {
    fn whole(&self) -> &Slice {
        self.whole
            .get_or_init(|| self.plan.whole_program(self.sources))
    }

    /// Verifies the members `keys` (of one phase) and says what each found, as a local run
    /// would.
    pub fn verify(&self, keys: &[&MemberKey], options: &VerifyOptions) -> ProgramResult {
        let mut out = ProgramResult::default();
        if keys.is_empty() {
            return out;
        }
        let connection = match self.options.connection(&self.z3) {
            Ok(c) => Some(c),
            Err(e) if self.options.fallback_local && e.is_unreachable() => {
                out.general.push(fallback_warning(&e));
                None
            }
            Err(e) => {
                let error = Diagnostic::new(ids::INTERNAL, Span::default(), e.to_string());
                out.general.push(error);
                return out;
            }
        };
        let failed: Vec<String> = options.failed_functions.iter().cloned().collect();
        let tools = connection.as_ref().map(|c| &c.tools);
        let planned: Vec<Planned> = keys
            .iter()
            .filter_map(|k| {
                let slice = self.plan.slice(k.order, self.sources)?;
                let job = slice_job(k, &slice, &failed);
                let action = tools.map(|t| self.prepare(t, std::slice::from_ref(&job)));
                Some(Planned {
                    key: k,
                    slice,
                    action,
                })
            })
            .collect();
        let all: Vec<&Planned> = planned.iter().collect();
        let Some(connection) = connection else {
            self.run_here(&mut out, &all, &failed, options);
            return out;
        };
        let remote = &connection.remote;
        let digests: Vec<_> = planned
            .iter()
            .filter_map(|p| p.action.as_ref().map(|a| a.digest.clone()))
            .collect();
        let found = match remote.lookup_all(&digests) {
            Ok(found) => found,
            Err(e) if self.options.fallback_local && e.is_unreachable() => {
                out.general.push(fallback_warning(&e));
                self.run_here(&mut out, &all, &failed, options);
                return out;
            }
            Err(e) => {
                let error = Diagnostic::new(ids::INTERNAL, Span::default(), e.to_string());
                out.general.push(error);
                return out;
            }
        };
        let mut misses: Vec<&Planned> = Vec::new();
        for (p, stored) in planned.iter().zip(found) {
            // A stored result with an `internal` error may not happen again: run it anew.
            match stored.map(|bytes| one_result(&bytes)) {
                Some(Ok(r)) if !transient(&r) => self.finish(
                    &mut out,
                    p,
                    Ok((r, &p.slice)),
                    ResultSource::RemoteCache,
                    options,
                ),
                _ => misses.push(p),
            }
        }
        if misses.is_empty() {
            return out;
        }
        if !remote.executes() {
            // A cache only: verify here and share the results.
            let results = self.run_here(&mut out, &misses, &failed, options);
            self.store(remote, &misses, &results);
            return out;
        }
        self.execute(
            &mut out,
            remote,
            &connection.tools,
            misses,
            &failed,
            options,
        );
        out
    }

    fn prepare(&self, tools: &Tools, jobs: &[JobInput]) -> PreparedAction {
        germanium_remote::prepare(
            tools,
            &self.args,
            jobs,
            self.options.settings.action_timeout,
        )
    }

    /// The job verifying `members` together in the whole program (`failed`: the phase's
    /// untrusted functions; the function phase trusts only what the program does).
    fn batch(&self, members: &[&Planned], failed: &[String]) -> JobInput {
        let functions = members.iter().all(|p| p.key.kind == "function");
        JobInput {
            members: members.iter().map(|p| p.key.name.clone()).collect(),
            text: self.whole().text.clone(),
            failed_functions: if functions {
                Vec::new()
            } else {
                failed.to_vec()
            },
        }
    }

    /// Executes `misses` on the cluster: large members alone and first, small ones in
    /// whole-program batches, whose results are stored back under each member's action.
    fn execute(
        &self,
        out: &mut ProgramResult,
        remote: &Remote,
        tools: &Tools,
        mut misses: Vec<&Planned>,
        failed: &[String],
        options: &VerifyOptions,
    ) {
        // The critical path is the slowest member: the longest texts go first.
        misses.sort_by_key(|p| std::cmp::Reverse(p.key.span.end - p.key.span.start));
        let (large, small): (Vec<&Planned>, Vec<&Planned>) = misses
            .into_iter()
            .partition(|p| p.key.span.end - p.key.span.start >= SMALL_MEMBER);
        let mut groups: Vec<Vec<&Planned>> = large.into_iter().map(|p| vec![p]).collect();
        groups.extend(small.chunks(BATCH).map(|c| c.to_vec()));
        let actions: Vec<PreparedAction> = groups
            .iter()
            .map(|g| match g.as_slice() {
                [one] => one
                    .action
                    .clone()
                    .expect("an action per member when connected"),
                many => self.prepare(tools, &[self.batch(many, failed)]),
            })
            .collect();
        let cancel = options.cancel.clone();
        let cancelled: germanium_remote::CancelFlag =
            Arc::new(move || cancel.as_ref().is_some_and(|c| c.is_cancelled()));
        let executed = remote.execute_all(&actions, cancelled);
        let mut batched: Vec<(&Planned, JobResult)> = Vec::new();
        let mut unreachable: Vec<&Planned> = Vec::new();
        for (group, result) in groups.iter().zip(executed) {
            let parsed = result.and_then(|e| {
                let results = Results::parse(&e.output).map_err(RemoteError::Action)?;
                let names: Vec<&str> = results.results.iter().map(|r| r.member.as_str()).collect();
                let expected: Vec<&str> = group.iter().map(|p| p.key.name.as_str()).collect();
                if names != expected {
                    return Err(RemoteError::Action(format!(
                        "results for {names:?}, not for {expected:?}"
                    )));
                }
                Ok((results.results, e.cached))
            });
            let mapping = if group.len() == 1 {
                &group[0].slice
            } else {
                self.whole()
            };
            match parsed {
                Ok((results, cached)) => {
                    let source = if cached {
                        ResultSource::RemoteCache
                    } else {
                        ResultSource::Remote
                    };
                    for (p, r) in group.iter().zip(results) {
                        if group.len() > 1 {
                            batched.push((p, r.clone()));
                        }
                        self.finish(out, p, Ok((r, mapping)), source, options);
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
        if !batched.is_empty() {
            // Best effort: a cluster may refuse results from clients.
            let (members, results): (Vec<&Planned>, Vec<JobResult>) = batched.into_iter().unzip();
            self.store(remote, &members, &results);
        }
        if !unreachable.is_empty() {
            out.general.push(Diagnostic::warning(
                "remote.fallback",
                Span::default(),
                "the remote cluster could not be reached; the rest is verified locally \
                 (--remote-fallback local)",
            ));
            self.run_here(out, &unreachable, failed, options);
        }
    }

    /// Verifies `members` here, in one run of the whole program, and gives their results.
    fn run_here(
        &self,
        out: &mut ProgramResult,
        members: &[&Planned],
        failed: &[String],
        options: &VerifyOptions,
    ) -> Vec<JobResult> {
        let job = self.batch(members, failed);
        let results = run_jobs(&[job], self.local);
        for (p, r) in members.iter().zip(&results) {
            self.finish(
                out,
                p,
                Ok((r.clone(), self.whole())),
                ResultSource::Local,
                options,
            );
        }
        results
    }

    /// Stores whole-program results under each member's own action, placed in its slice as
    /// the action would place them; only those that are a verdict on the member alone (as
    /// the local cache: no error outside its text, no `internal` error).
    fn store(&self, remote: &Remote, members: &[&Planned], results: &[JobResult]) {
        let whole = self.whole();
        let mut entries: Vec<(&PreparedAction, Vec<u8>)> = Vec::new();
        for (p, r) in members.iter().zip(results) {
            let Some(action) = &p.action else { continue };
            let in_slice: Option<Vec<JobDiagnostic>> = r
                .diagnostics
                .iter()
                .map(|d| {
                    let span = d.span.and_then(|(s, e)| whole.original(s, e))?;
                    let inside = span.file == p.key.span.file
                        && span.start >= p.key.span.start
                        && span.end <= p.key.span.end;
                    let offsets = p.slice.offsets_of(span).filter(|_| inside)?;
                    Some(JobDiagnostic {
                        span: Some(offsets),
                        ..d.clone()
                    })
                })
                .collect();
            if let (Some(diagnostics), false) = (in_slice, transient(r)) {
                let result = JobResult {
                    diagnostics,
                    ..r.clone()
                };
                entries.push((action, single(&result)));
            }
        }
        let _ = remote.store_all(&entries);
    }

    /// Places a member's result in the program, tells the events and adds it to `out`.
    fn finish(
        &self,
        out: &mut ProgramResult,
        p: &Planned,
        outcome: Outcome,
        source: ResultSource,
        options: &VerifyOptions,
    ) {
        let (errors, time) = match outcome {
            Ok((r, mapping)) => (
                r.diagnostics
                    .iter()
                    .map(|d| place(p.key.span, mapping, d))
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

fn fallback_warning(e: &RemoteError) -> Diagnostic {
    Diagnostic::warning(
        "remote.fallback",
        Span::default(),
        format!("{e}; verifying locally (--remote-fallback local)"),
    )
}

/// Whether a result holds an error that may not happen again (a solver's failure, a wall
/// clock): it is never taken from or kept in a cache.
fn transient(r: &JobResult) -> bool {
    r.diagnostics.iter().any(|d| d.id.starts_with("internal"))
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

/// A diagnostic of a job in the program: where the job's text printed its place whole, at
/// that place; else at the member.
fn place(member: Span, mapping: &Slice, d: &JobDiagnostic) -> Diagnostic {
    let span = d
        .span
        .and_then(|(start, end)| mapping.original(start, end))
        .unwrap_or(member);
    let mut out = if d.warning {
        Diagnostic::warning(d.id.clone(), span, d.message.clone())
    } else {
        Diagnostic::new(d.id.clone(), span, d.message.clone())
    };
    out.counterexample = None;
    out
}
