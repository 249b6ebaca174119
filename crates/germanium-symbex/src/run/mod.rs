//! Verification of a whole program: one solver per worker thread, the preamble sent once per
//! solver, then one scope per member. Members are independent and verified in parallel.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use germanium_semantics::Semantics;
use germanium_smt::{Cancel, Solver, SolverConfig};
use germanium_syntax::ast::{Function, ItemKind, Method, Program};
use germanium_syntax::diagnostic::ids;
use germanium_syntax::{Diagnostic, SourceMap, Span};

use crate::decider::budget::{Budget, MEMORY_LIMIT_MB};
use crate::env::Env;
use crate::rules::context::{Abort, MemberState, Verifier, R};
use crate::state::Modes;
use crate::trace::Step;

/// Settings of one verification run.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    pub z3: Option<PathBuf>,
    /// Per-query timeout (default [`DEFAULT_QUERY_TIMEOUT`]).
    pub timeout: Option<Duration>,
    /// Base name of the SMT logs; worker `i` writes `<stem>.w<i>.smt2` (one worker: the
    /// file itself).
    pub smt_log: Option<PathBuf>,
    /// Worker threads (each with its own solver).
    pub jobs: usize,
    /// `if` branches one member may explore (default
    /// [`crate::env::MAX_BRANCHES_PER_MEMBER`]).
    pub max_branches: Option<usize>,
    /// Combinable wands instead of standard ones (`--combinable-wands`).
    pub combinable_wands: bool,
    /// A counterexample for each failed check (`--counterexample`).
    pub counterexamples: bool,
    /// Makes each worker's execution-log sink (`None`: no log).
    pub trace: Option<TraceSinks>,
    /// Told when each member starts and ends (`None`: nobody).
    pub events: Option<MemberEvents>,
    /// Which members to verify, by name (`None`: all). The others are not verified and
    /// are assumed correct: a function left out has its postcondition as an axiom, unless
    /// it is among `failed_functions`.
    pub members: Option<MemberFilter>,
    /// Functions known not to verify (from the result cache): their postconditions are
    /// never axioms.
    pub failed_functions: HashSet<String>,
    /// Stops the run when set: no member starts afterwards and a solver waiting for an
    /// answer gives up; the result then has an `internal` error saying so.
    pub cancel: Option<Cancel>,
    /// Answers to solver queries kept between runs (the result cache's; see
    /// `germanium_smt::answers`): a query found there is not asked again.
    pub answers: Option<std::sync::Arc<dyn germanium_smt::AnswerStore>>,
}

/// Says, by name, whether a member is to be verified (`--member`).
#[derive(Clone)]
pub struct MemberFilter(pub std::sync::Arc<dyn Fn(&str) -> bool + Send + Sync>);

impl std::fmt::Debug for MemberFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MemberFilter(..)")
    }
}

/// A member's verification as it starts and ends, for streaming output and progress.
#[derive(Clone, Debug, PartialEq)]
pub enum MemberEvent {
    Started {
        member: String,
        kind: &'static str,
    },
    Finished {
        member: String,
        kind: &'static str,
        errors: Vec<EventError>,
        time: Duration,
        /// The result came from the result cache (the driver's), not from verification.
        cached: bool,
    },
}

/// An error of a finished member, with its place resolved (the file's report comes later).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventError {
    pub id: String,
    pub message: String,
    pub warning: bool,
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

/// Where member events go (called from the worker threads).
#[derive(Clone)]
pub struct MemberEvents(pub std::sync::Arc<dyn Fn(MemberEvent) + Send + Sync>);

impl std::fmt::Debug for MemberEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MemberEvents(..)")
    }
}

/// Makes one execution-log sink per worker thread.
#[derive(Clone)]
pub struct TraceSinks(pub std::sync::Arc<dyn Fn() -> Box<dyn crate::trace::Sink> + Send + Sync>);

impl std::fmt::Debug for TraceSinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceSinks(..)")
    }
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            z3: None,
            timeout: None,
            smt_log: None,
            jobs: 1,
            max_branches: None,
            combinable_wands: false,
            counterexamples: false,
            trace: None,
            events: None,
            members: None,
            failed_functions: HashSet::new(),
            cancel: None,
            answers: None,
        }
    }
}

/// What a member is.
enum Member<'a> {
    Method(&'a Method),
    Function(&'a Function),
    Predicate(&'a germanium_syntax::ast::Predicate),
}

impl Member<'_> {
    fn name_and_kind(&self) -> (&str, &'static str) {
        match self {
            Member::Method(m) => (&m.name.name, "method"),
            Member::Function(f) => (&f.name.name, "function"),
            Member::Predicate(p) => (&p.name.name, "predicate"),
        }
    }
}

/// `d` with its place resolved.
fn event_error(env: &Env<'_>, d: &Diagnostic) -> EventError {
    EventError::of(env.sources, d)
}

impl EventError {
    /// `d` with its place in `sources` resolved.
    pub fn of(sources: &SourceMap, d: &Diagnostic) -> EventError {
        let (start, end) = (sources.start(d.span), sources.end(d.span));
        EventError {
            id: d.id.clone(),
            message: d.message.clone(),
            warning: !d.is_error(),
            file: sources.get(d.span.file).path.display().to_string(),
            line: start.line,
            column: start.column,
            end_line: end.line,
            end_column: end.column,
        }
    }
}

fn members(program: &Program) -> Vec<Member<'_>> {
    let mut out = Vec::new();
    for item in &program.items {
        match &item.kind {
            ItemKind::Method(m) => {
                out.push(Member::Method(m));
            }
            ItemKind::Function(f) => {
                let has_obligations = f.body.is_some()
                    || !f.contract.requires.is_empty()
                    || !f.contract.ensures.is_empty()
                    || !f.contract.decreases.is_empty();
                if has_obligations {
                    out.push(Member::Function(f));
                }
            }
            ItemKind::Predicate(p) if p.body.is_some() => {
                out.push(Member::Predicate(p));
            }
            _ => {}
        }
    }
    out
}

fn log_path(base: &std::path::Path, worker: usize, workers: usize, phase: Option<&str>) -> PathBuf {
    let stem = base
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "smt".into());
    match (phase, workers) {
        (None, 0 | 1) => base.to_path_buf(),
        (None, _) => base.with_file_name(format!("{stem}.w{worker}.smt2")),
        (Some(p), _) => base.with_file_name(format!("{stem}.{p}.w{worker}.smt2")),
    }
}

/// The `--timeout` when the user sets none: a budget of about five seconds of solver work
/// per query (see [`Budget`]). The largest query of Viper's test suite that Z3 answers needs
/// about two.
pub const DEFAULT_QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// Verifies every member of a well-typed program; returns the errors (empty: verified).
pub fn verify_program(
    program: &Program,
    sem: &Semantics,
    sources: &SourceMap,
    options: &VerifyOptions,
) -> Vec<Diagnostic> {
    verify_members(program, sem, sources, options).diagnostics()
}

/// One verified member's errors (those its verification found, wherever they point).
#[derive(Clone, Debug, PartialEq)]
pub struct MemberResult {
    pub name: String,
    pub kind: &'static str,
    pub errors: Vec<Diagnostic>,
}

/// What [`verify_members`] found: each verified member's errors, in program order, and the
/// errors of no member (a solver that could not start, a cancelled run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProgramResult {
    pub members: Vec<MemberResult>,
    pub general: Vec<Diagnostic>,
    /// The functions whose postconditions were no axioms for the other members: those of
    /// `VerifyOptions::failed_functions`, those verified now with errors, and every function
    /// when a worker verifying functions could not start.
    pub failed_functions: HashSet<String>,
}

impl ProgramResult {
    /// Every error once, members' first (in program order).
    pub fn diagnostics(self) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = Vec::new();
        let all = self.members.into_iter().flat_map(|m| m.errors);
        for d in all.chain(self.general) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
        out
    }
}

/// Verifies the members of a well-typed program that `options.members` selects, and says
/// which errors each member's verification found.
pub fn verify_members(
    program: &Program,
    sem: &Semantics,
    sources: &SourceMap,
    options: &VerifyOptions,
) -> ProgramResult {
    let mut env = Env::new(program, sem, sources);
    if let Some(limit) = options.max_branches {
        env.max_branches = limit;
    }
    env.combinable_wands = options.combinable_wands;
    env.counterexamples = options.counterexamples;
    let todo = members(program);
    if todo.is_empty() {
        return ProgramResult {
            failed_functions: options.failed_functions.clone(),
            ..ProgramResult::default()
        };
    }
    // Functions first: a function with a body has its postcondition as an axiom afterwards
    // only if the body was verified against it (an unverified one could be false).
    let selected = (0..todo.len()).filter(|i| {
        let (name, _) = todo[*i].name_and_kind();
        options.members.as_ref().is_none_or(|keep| (keep.0)(name))
    });
    let (functions, others): (Vec<usize>, Vec<usize>) =
        selected.partition(|i| matches!(todo[*i], Member::Function(_)));
    let mut results = Vec::new();
    let mut failed = options.failed_functions.clone();
    if !functions.is_empty() {
        let phase = if others.is_empty() {
            None
        } else {
            Some("functions")
        };
        let trusted: HashSet<String> = env
            .functions
            .iter()
            .filter(|(_, f)| f.body.is_none())
            .map(|(name, _)| name.clone())
            .collect();
        let found = run_members(&env, &todo, &functions, options, &trusted, phase);
        for (i, ds) in &found {
            if let (false, Some(Member::Function(f))) = (ds.is_empty(), todo.get(*i)) {
                failed.insert(f.name.name.clone());
            }
            if *i == usize::MAX {
                failed.extend(env.functions.keys().cloned());
            }
        }
        results.extend(found);
    }
    if !others.is_empty() {
        // An abstract function's postcondition is trusted (as in Viper); one with a body
        // only once the body was verified against it.
        let verified: HashSet<String> = env
            .functions
            .keys()
            .filter(|name| !failed.contains(*name))
            .cloned()
            .collect();
        results.extend(run_members(&env, &todo, &others, options, &verified, None));
    }
    if options.cancel.as_ref().is_some_and(Cancel::is_cancelled) {
        let message = "verification was cancelled before it finished";
        results.push((
            usize::MAX,
            vec![Diagnostic::new(ids::INTERNAL, Span::default(), message)],
        ));
    }
    results.sort_by_key(|(i, _)| *i);
    let mut out = ProgramResult {
        failed_functions: failed,
        ..ProgramResult::default()
    };
    for (i, errors) in results {
        match todo.get(i) {
            Some(member) => {
                let (name, kind) = member.name_and_kind();
                out.members.push(MemberResult {
                    name: name.to_string(),
                    kind,
                    errors,
                });
            }
            None => out.general.extend(errors),
        }
    }
    out
}

/// Members per solver session, at least (see [`sessions`]).
pub const MIN_SESSION_MEMBERS: usize = 4;

/// Splits `which` into solver sessions: runs of consecutive members, at least
/// [`MIN_SESSION_MEMBERS`] long (but for the last). Each session starts from the solver state
/// right after the preamble and verifies its members in order, so what the solver has seen
/// before a member depends only on the program: the verdicts do not depend on `--jobs`, on
/// which worker takes which session, or on timing. (Z3's answers depend on its history
/// even across `pop`; starting every member afresh would cost a reset per member.)
pub fn sessions(which: &[usize]) -> Vec<&[usize]> {
    let count = (which.len() / MIN_SESSION_MEMBERS).max(1);
    let size = which.len().div_ceil(count).max(1);
    which.chunks(size).collect()
}

/// Verifies the members `which` of `todo` on worker threads, session by session (see
/// [`sessions`]); `posts`: the functions whose postconditions are axioms. Returns (member
/// index, errors); index `usize::MAX` for a worker that could not start.
fn run_members<'a>(
    env: &Env<'a>,
    todo: &[Member<'a>],
    which: &[usize],
    options: &VerifyOptions,
    posts: &HashSet<String>,
    phase: Option<&str>,
) -> Vec<(usize, Vec<Diagnostic>)> {
    let sessions = sessions(which);
    let workers = options.jobs.max(1).min(sessions.len());
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Vec<Diagnostic>)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for w in 0..workers {
            let (todo, next, results, sessions) = (&todo, &next, &results, &sessions);
            let builder = std::thread::Builder::new()
                .name(format!("germanium-verify-{w}"))
                .stack_size(256 * 1024 * 1024);
            let spawned = builder.spawn_scoped(scope, move || {
                let mut config = SolverConfig {
                    z3: options.z3.clone(),
                    memory_limit_mb: Some(MEMORY_LIMIT_MB),
                    pipeline: true,
                    cancel: options.cancel.clone(),
                    answers: options.answers.clone(),
                    ..SolverConfig::default()
                };
                config.log = options
                    .smt_log
                    .as_ref()
                    .map(|b| log_path(b, w, workers, phase));
                let mut worker = Worker {
                    env,
                    trace: options.trace.clone(),
                    events: options.events.clone(),
                    config,
                    budget: Budget::from_timeout(options.timeout.unwrap_or(DEFAULT_QUERY_TIMEOUT)),
                    posts,
                    verifier: None,
                    cannot_start: false,
                };
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    let Some(session) = sessions.get(k) else {
                        break;
                    };
                    let found = worker.run_session(todo, session);
                    results.lock().unwrap().extend(found);
                }
            });
            if let Err(err) = spawned {
                results.lock().unwrap().push((
                    usize::MAX,
                    vec![Diagnostic::new(
                        ids::INTERNAL,
                        Span::default(),
                        format!("could not start a verification thread: {err}"),
                    )],
                ));
            }
        }
    });
    results.into_inner().unwrap_or_default()
}

/// One worker thread: its solver (started on first use, again after a panic) and what it
/// needs to start one.
struct Worker<'e, 'a> {
    env: &'e Env<'a>,
    config: SolverConfig,
    budget: Budget,
    trace: Option<TraceSinks>,
    events: Option<MemberEvents>,
    posts: &'e HashSet<String>,
    verifier: Option<Verifier<'e, 'a>>,
    /// The solver could not be started: said once, and not tried again.
    cannot_start: bool,
}

impl<'e, 'a> Worker<'e, 'a> {
    /// Verifies one session's members in order, from the solver state after the preamble.
    fn run_session(
        &mut self,
        todo: &[Member<'a>],
        session: &[usize],
    ) -> Vec<(usize, Vec<Diagnostic>)> {
        let mut found = Vec::new();
        let mut fresh = false;
        for &i in session {
            let span = match &todo[i] {
                Member::Method(m) => m.name.span,
                Member::Function(f) => f.name.span,
                Member::Predicate(p) => p.name.span,
            };
            let cancelled = self
                .config
                .cancel
                .as_ref()
                .is_some_and(Cancel::is_cancelled);
            if self.cannot_start || cancelled {
                break;
            }
            if self.verifier.is_none() {
                match start_worker(self.env, self.config.clone(), self.budget, self.posts) {
                    Ok(mut v) => {
                        if let Some(sinks) = &self.trace {
                            v.trace = (sinks.0)();
                        }
                        self.verifier = Some(v)
                    }
                    Err(message) => {
                        // Once for the file (index `usize::MAX`), not once per member.
                        let error = Diagnostic::new(ids::INTERNAL, Span::default(), message);
                        found.push((usize::MAX, vec![error]));
                        self.cannot_start = true;
                        break;
                    }
                }
                fresh = true;
            }
            let Some(verifier) = self.verifier.as_mut() else {
                continue;
            };
            if !fresh {
                fresh = true;
                if let Err(e) = verifier.decider.rewind_to_member_start() {
                    let message = format!("the SMT solver failed: {e}");
                    found.push((i, vec![Diagnostic::new(ids::INTERNAL, span, message)]));
                    self.verifier = None;
                    continue;
                }
            }
            let (member, kind) = todo[i].name_and_kind();
            let started = std::time::Instant::now();
            if let Some(events) = &self.events {
                (events.0)(MemberEvent::Started {
                    member: member.to_string(),
                    kind,
                });
            }
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match &todo[i] {
                Member::Method(m) => verifier.run_member(span, |v| v.verify_method(m)),
                Member::Function(f) => verifier.run_member(span, |v| v.verify_function(f)),
                Member::Predicate(p) => verifier.run_member(span, |v| v.verify_predicate(p)),
            }));
            let errors = run.unwrap_or_else(|_| {
                // A bug: this member gets an internal error, and the solver (in an unknown
                // state) is not used again.
                self.verifier = None;
                vec![Diagnostic::new(
                    ids::INTERNAL,
                    span,
                    "internal error in the verifier (please report it)",
                )]
            });
            if let Some(events) = &self.events {
                (events.0)(MemberEvent::Finished {
                    member: member.to_string(),
                    kind,
                    errors: errors.iter().map(|d| event_error(self.env, d)).collect(),
                    time: started.elapsed(),
                    cached: false,
                });
            }
            found.push((i, errors));
        }
        found
    }
}

pub(crate) fn start_worker<'e, 'a>(
    env: &'e Env<'a>,
    config: SolverConfig,
    budget: Budget,
    posts: &HashSet<String>,
) -> Result<Verifier<'e, 'a>, String> {
    let solver = Solver::new(config).map_err(|e| format!("could not start the SMT solver: {e}"))?;
    let mut v = Verifier::new(env, solver, budget);
    v.preamble()
        .map_err(|e| format!("the SMT solver rejected the preamble: {e}"))?;
    if v.quantified_snapshot_preamble().is_err() {
        let why = v
            .errors
            .first()
            .map_or(String::from("unknown reason"), |d| d.message.clone());
        return Err(format!(
            "could not declare the snapshots of quantified permissions: {why}"
        ));
    }
    if v.function_axioms(posts).is_err() {
        let errors = std::mem::take(&mut v.errors);
        let why = errors
            .first()
            .map_or(String::from("unknown reason"), |d| d.message.clone());
        return Err(format!(
            "could not axiomatise the program's functions: {why}"
        ));
    }
    v.decider
        .mark_member_start()
        .map_err(|e| format!("the SMT solver failed after the preamble: {e}"))?;
    Ok(v)
}

impl<'e, 'a> Verifier<'e, 'a> {
    fn preamble(&mut self) -> Result<(), germanium_smt::SolverError> {
        // Theory declarations, then the engine's (snapshots, `null`, functions that domain
        // axioms mention), then the axioms.
        let d = &mut self.decider;
        if let Some(t) = &self.env.theories {
            d.send(t.declarations())?;
        } else if let germanium_smt::Sort::Uninterpreted(name) = &self.env.ref_sort {
            d.declare_sort(name)?;
        }
        if let germanium_smt::Sort::Uninterpreted(name) = &self.env.snap.sort {
            d.declare_sort(name)?;
        }
        if let Some(null) = &self.env.null_decl {
            d.declare(null)?;
        }
        for decl in [
            &self.env.snap.unit,
            &self.env.snap.pair,
            &self.env.snap.first,
            &self.env.snap.second,
        ] {
            d.declare(decl)?;
        }
        for axiom in self.env.snap.axioms() {
            d.assume(axiom)?;
        }
        for decl in &self.env.axiom_functions {
            d.declare(decl)?;
        }
        if let Some(t) = &self.env.theories {
            d.send(t.axioms())?;
        }
        self.nesting_preamble()?;
        self.allocation_preamble()?;
        let wildcard = crate::rules::axiom_wildcard();
        self.decider.declare(&wildcard)?;
        let w = germanium_smt::Term::constant(&wildcard);
        // Small, so that what a precondition's wildcards add up to stays at most `write`.
        let bounds = germanium_smt::Term::and([
            crate::state::Permission(w.clone()).is_positive(),
            germanium_smt::Term::le(w, germanium_smt::Term::real(1, 1000)),
        ]);
        self.decider.assume(bounds)?;
        // Field values in snapshots, with their axioms at this outermost level.
        let mut field_types: Vec<_> = self.env.sem.fields.values().map(|f| f.ty.clone()).collect();
        field_types.push(germanium_semantics::Type::Ref);
        for ty in field_types {
            if let Ok(sort) = self.env.sort_of(&ty) {
                self.decider.wrap_decls(&sort)?;
            }
        }
        Ok(())
    }

    /// Runs one member in its own scope and returns its errors.
    fn run_member(&mut self, name: Span, f: impl FnOnce(&mut Self) -> R<()>) -> Vec<Diagnostic> {
        self.errors.clear();
        self.modes = Modes::default();
        self.member = MemberState::default();
        let outcome = match self.decider.begin_member() {
            Ok(depth) => (
                self.traced(Step::Member, name, None, String::new, |v| {
                    v.start_read_permissions(name).and_then(|_| f(v))
                }),
                depth,
            ),
            Err(e) => (
                Err(self.solver_failed(e, Span::default())),
                self.decider.depth(),
            ),
        };
        let (outcome, depth) = outcome;
        if outcome == Err(Abort::Solver) {
            let _ = self.decider.restart();
        }
        if outcome == Err(Abort::Unsupported) {
            // The construct may sit in another member's contract: say at this member's
            // name that it was not verified.
            self.errors.push(Diagnostic::new(
                ids::UNSUPPORTED,
                name,
                ids::MEMBER_NOT_VERIFIED,
            ));
        }
        self.decider.end_member(depth);
        std::mem::take(&mut self.errors)
    }
}

#[cfg(test)]
mod tests;
