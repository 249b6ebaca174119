//! Verification of a whole program: one solver per worker thread, the preamble sent once per
//! solver, then one scope per member. Members are independent and verified in parallel.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use germanium_semantics::Semantics;
use germanium_smt::{Cancel, Solver, SolverConfig};
use germanium_syntax::ast::Program;
use germanium_syntax::diagnostic::ids;
use germanium_syntax::{Diagnostic, SourceMap, Span};
use germanium_verifier::members::log_path;
use germanium_verifier::{
    members, sessions, EventError, Member, MemberEvent, MemberEvents, MemberResult, MemberStats,
    ProgramResult, SessionSizes, VerifyOptions, DEFAULT_QUERY_TIMEOUT,
};

use crate::decider::budget::{Budget, MEMORY_LIMIT_MB};
use crate::env::Env;
use crate::rules::context::{Abort, MemberState, Verifier, R};
use crate::state::Modes;
use crate::trace::Step;

/// Makes one execution-log sink per worker thread.
#[derive(Clone)]
pub struct TraceSinks(pub std::sync::Arc<dyn Fn() -> Box<dyn crate::trace::Sink> + Send + Sync>);

impl std::fmt::Debug for TraceSinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceSinks(..)")
    }
}

/// Verifies every member of a well-typed program; returns the errors (empty: verified).
pub fn verify_program(
    program: &Program,
    sem: &Semantics,
    sources: &SourceMap,
    options: &VerifyOptions,
    trace: Option<&TraceSinks>,
) -> Vec<Diagnostic> {
    verify_members(program, sem, sources, options, trace).diagnostics()
}

/// Verifies the members of a well-typed program that `options.members` selects, and says
/// which errors each member's verification found; `trace` makes each worker's
/// execution-log sink (`None`: no log).
pub fn verify_members(
    program: &Program,
    sem: &Semantics,
    sources: &SourceMap,
    options: &VerifyOptions,
    trace: Option<&TraceSinks>,
) -> ProgramResult {
    let mut env = Env::new(program, sem, sources);
    if let Some(limit) = options.max_branches {
        env.max_branches = limit;
    }
    env.combinable_wands = options.combinable_wands;
    env.counterexamples = options.counterexamples;
    let todo = members(program);
    let sizes = SessionSizes::of(program);
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
        // Abstract functions, unless the caller knows them to stand for functions whose
        // bodies failed or are not yet verified (a remote action's slice drops bodies).
        let trusted: HashSet<String> = env
            .functions
            .iter()
            .filter(|(name, f)| f.body.is_none() && !options.failed_functions.contains(*name))
            .map(|(name, _)| name.clone())
            .collect();
        let trust = FunctionTrust {
            axioms: trusted,
            // Applications inside functions assume their callees' postconditions (Viper's
            // modular reading), except those of functions known to fail.
            untrusted: options.failed_functions.clone(),
        };
        let found = run_members(
            &env, &todo, &sizes, &functions, options, trace, &trust, phase,
        );
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
        let trust = FunctionTrust {
            axioms: verified,
            untrusted: failed.clone(),
        };
        results.extend(run_members(
            &env, &todo, &sizes, &others, options, trace, &trust, None,
        ));
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

/// Which functions' postconditions a phase may assume.
pub(crate) struct FunctionTrust {
    /// The functions whose postconditions are axioms.
    pub axioms: HashSet<String>,
    /// The functions whose postconditions an application must not assume either: those
    /// known to fail (`VerifyOptions::failed_functions` names every one that is not
    /// verified in this run, and the first phase adds those it finds).
    pub untrusted: HashSet<String>,
}

/// Verifies the members `which` of `todo` on worker threads, session by session (see
/// [`sessions`]), trusting the functions' postconditions as `trust` says. Returns (member
/// index, errors); index `usize::MAX` for a worker that could not start.
#[allow(clippy::too_many_arguments)]
fn run_members<'a>(
    env: &Env<'a>,
    todo: &[Member<'a>],
    sizes: &SessionSizes,
    which: &[usize],
    options: &VerifyOptions,
    trace: Option<&TraceSinks>,
    trust: &FunctionTrust,
    phase: Option<&str>,
) -> Vec<(usize, Vec<Diagnostic>)> {
    let sessions = sessions(which, sizes);
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
                    measure_resources: options.stats,
                    ..SolverConfig::default()
                };
                config.log = options
                    .smt_log
                    .as_ref()
                    .map(|b| log_path(b, w, workers, phase));
                let mut worker = Worker {
                    env,
                    trace: trace.cloned(),
                    events: options.events.clone(),
                    config,
                    budget: Budget::from_timeout(options.timeout.unwrap_or(DEFAULT_QUERY_TIMEOUT)),
                    trust,
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
    trust: &'e FunctionTrust,
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
            let span = todo[i].span();
            let cancelled = self
                .config
                .cancel
                .as_ref()
                .is_some_and(Cancel::is_cancelled);
            if self.cannot_start || cancelled {
                break;
            }
            if self.verifier.is_none() {
                match start_worker(self.env, self.config.clone(), self.budget, self.trust) {
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
            let before = verifier.decider.solver_stats().clone();
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
            let stats = match &run {
                Ok(_) => MemberStats::between(
                    &before,
                    verifier.decider.solver_stats(),
                    started.elapsed(),
                ),
                Err(_) => MemberStats {
                    time: started.elapsed(),
                    ..MemberStats::default()
                },
            };
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
                    errors: errors
                        .iter()
                        .map(|d| EventError::of(self.env.sources, d))
                        .collect(),
                    time: stats.time,
                    source: germanium_verifier::ResultSource::Local,
                    stats: Some(stats),
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
    trust: &FunctionTrust,
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
    v.untrusted_posts = trust.untrusted.clone();
    if v.function_axioms(&trust.axioms).is_err() {
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
        // In declaration order: the wrappers are numbered as they are declared, and the same
        // program must give the same queries on every run.
        let mut field_types: Vec<_> = self
            .env
            .sem
            .field_order
            .iter()
            .filter_map(|name| self.env.sem.fields.get(name))
            .map(|f| f.ty.clone())
            .collect();
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
