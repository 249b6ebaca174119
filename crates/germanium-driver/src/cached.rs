//! Verification through the per-member result cache (`germanium-cache`): members whose key
//! is stored are not verified again; their stored errors are placed back at the member's
//! current position, and the others are verified and stored.
//!
//! Soundness: a key covers everything a member's result depends on (see
//! `germanium_cache::KeyPlan`). Functions go first; which of them have errors (stored or
//! found now) is part of the other members' keys and stays out of their axioms
//! (`VerifyOptions::failed_functions`). Results are stored only when they are a program's
//! verdict: never with `--member` (members left out are then assumed correct), never for a
//! cancelled run, never for a member with an error outside its own text or an `internal`
//! error (a solver failure or an unsupported construct may not happen again). The solver's
//! answers (`germanium_cache::StoredAnswers`) are taken and kept in every run through here,
//! `--member` included: an answer's key holds everything the solver was told.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use germanium_cache::{CachedError, KeyPlan, MemberKey, ResultCache};
use germanium_semantics::Semantics;
use germanium_verifier::{
    EventError, MemberEvent, MemberFilter, MemberResult, ProgramResult, VerifyOptions,
};

use crate::backends::Engine;
use germanium_syntax::ast::Program;
use germanium_syntax::{Diagnostic, Severity, SourceMap, Span};

/// Where the cache is and what, besides the program's text, results depend on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheSettings {
    pub path: PathBuf,
    /// The versions of Germanium and Z3 and the options that change verification.
    pub salt: String,
}

impl CacheSettings {
    /// The cache in the user's cache directory, its keys salted with this build, the Z3
    /// version and those of `options` that change results (`None`: no cache directory is
    /// known, or the build cannot be identified).
    pub fn for_run((a, b, c): (u32, u32, u32), options: &crate::Options) -> Option<CacheSettings> {
        let salt = format!(
            "germanium {}; z3 {a}.{b}.{c}; timeout {:?}; combinable wands {}; backend {}{}",
            germanium_cache::build_id()?,
            options.timeout,
            options.combinable_wands,
            options.backend.name(),
            if options.cross_check {
                "; cross-check"
            } else {
                ""
            },
        );
        Some(CacheSettings {
            path: ResultCache::default_path()?,
            salt,
        })
    }
}

/// Verifies `program` as `verify_program` does, through the local cache at `settings` and/or
/// on the cluster `remote` (at least one of them): functions first, then (their results
/// known, since which functions failed is part of the other members' keys) methods and
/// predicates. Members the local cache has are not verified again; the others go to the
/// cluster when there is one, else are verified here.
pub(crate) fn verify_through_cache(
    program: &Program,
    semantics: &Semantics,
    sources: &SourceMap,
    options: &VerifyOptions,
    engine: &Engine,
    settings: Option<&CacheSettings>,
    remote: Option<&crate::Options>,
) -> Vec<Diagnostic> {
    let cache = settings.and_then(|s| ResultCache::open(&s.path).map(|c| (c, s)));
    if cache.is_none() && remote.is_none() {
        return crate::backends::verify_members(program, semantics, sources, options, engine)
            .diagnostics();
    }
    let answers = cache.as_ref().map(|(c, s)| c.answers(&s.salt));
    let mut options = options.clone();
    if let Some(answers) = &answers {
        options.answers = Some(answers.clone());
    }
    let options = &options;
    if options.members.is_some() && remote.is_none() {
        // Members left out are assumed correct: no member result is a verdict here. Answers
        // hold whatever is verified (what is assumed is in their keys, with the preamble).
        let found = crate::backends::verify_members(program, semantics, sources, options, engine)
            .diagnostics();
        if let Some(a) = &answers {
            a.flush();
        }
        return found;
    }
    let salt = cache.as_ref().map_or("", |(_, s)| s.salt.as_str());
    let plan = KeyPlan::new(program, sources, salt);
    let remote = remote.and_then(|local| {
        let options_remote = local.remote.as_ref()?;
        Some(crate::remote::RemoteMembers {
            options: options_remote,
            plan: &plan,
            sources,
            z3: options
                .z3
                .clone()
                .or_else(|| germanium_smt::locate_z3(None).ok())
                .unwrap_or_else(|| PathBuf::from("z3")),
            args: crate::remote::action_args(options, engine),
            local,
            whole: std::cell::OnceCell::new(),
        })
    });
    let run = Run {
        program,
        semantics,
        sources,
        engine,
        // With `--member`, nothing is a verdict: nothing is taken from or stored in the cache.
        cache: cache
            .as_ref()
            .map(|(c, _)| c)
            .filter(|_| options.members.is_none()),
        remote: remote.as_ref(),
    };
    let functions = run.phase(&plan.function_keys(), options);
    // The second phase may ask what the first asked (a function's body in a method).
    if let Some(a) = &answers {
        a.flush();
    }
    let mut options = options.clone();
    options.failed_functions.extend(functions.failed);
    let failed: BTreeSet<String> = options.failed_functions.iter().cloned().collect();
    let others = run.phase(&plan.other_keys(&failed), &options);
    // Even from a cancelled run: each is what Z3 answered (a cancelled query has none).
    if let Some(a) = &answers {
        a.flush();
    }
    // Members' errors in the program's order, as without the cache.
    let mut members = functions.members;
    members.extend(others.members);
    members.sort_by_key(|(order, _)| *order);
    ProgramResult {
        members: members.into_iter().map(|(_, m)| m).collect(),
        general: [functions.general, others.general].concat(),
        failed_functions: HashSet::new(),
    }
    .diagnostics()
}

/// What one run through the cache works with.
struct Run<'a> {
    program: &'a Program,
    semantics: &'a Semantics,
    sources: &'a SourceMap,
    engine: &'a Engine,
    cache: Option<&'a ResultCache>,
    remote: Option<&'a crate::remote::RemoteMembers<'a>>,
}

/// The outcome of one phase: each member's result (with its place in the program), the
/// errors of no member, and the functions that failed (stored with errors, or as
/// `ProgramResult::failed_functions` says for those verified now).
struct Phase {
    members: Vec<(usize, MemberResult)>,
    general: Vec<Diagnostic>,
    failed: Vec<String>,
}

impl Run<'_> {
    /// The members `keys` (those `--member` selects): stored results where the cache has
    /// them, the others verified (and stored when they are a verdict).
    fn phase(&self, keys: &[MemberKey], options: &VerifyOptions) -> Phase {
        let keys: Vec<&MemberKey> = keys
            .iter()
            .filter(|k| {
                options
                    .members
                    .as_ref()
                    .is_none_or(|keep| (keep.0)(&k.name))
            })
            .collect();
        // Stored errors have no counterexamples: where they are asked for, a member stored
        // with errors is verified again.
        let hits: HashMap<&str, Vec<CachedError>> = match self.cache {
            Some(cache) => keys
                .iter()
                .filter_map(|k| cache.get(&k.key).map(|errors| (k.name.as_str(), errors)))
                .filter(|(_, errors)| !options.counterexamples || errors.is_empty())
                .collect(),
            None => HashMap::new(),
        };
        let to_verify: Vec<&MemberKey> = keys
            .iter()
            .copied()
            .filter(|k| !hits.contains_key(k.name.as_str()))
            .collect();
        let fresh = if to_verify.is_empty() {
            ProgramResult::default()
        } else if let Some(remote) = self.remote {
            // Members with nothing to verify (abstract predicates, functions without a
            // contract) get no action, as a local run gives them no result.
            let verifiable: HashSet<(String, &str)> = germanium_verifier::members(self.program)
                .iter()
                .map(|m| {
                    let (name, kind) = m.name_and_kind();
                    (name.to_string(), kind)
                })
                .collect();
            let to_verify: Vec<&MemberKey> = to_verify
                .into_iter()
                .filter(|k| verifiable.contains(&(k.name.clone(), k.kind)))
                .collect();
            remote.verify(&to_verify, options)
        } else {
            let names: HashSet<String> = to_verify.iter().map(|k| k.name.clone()).collect();
            let mut options = options.clone();
            options.members = Some(MemberFilter(std::sync::Arc::new(move |name: &str| {
                names.contains(name)
            })));
            crate::backends::verify_members(
                self.program,
                self.semantics,
                self.sources,
                &options,
                self.engine,
            )
        };
        // A cancelled run skipped members: nothing of it is stored.
        let cancelled = options.cancel.as_ref().is_some_and(|c| c.is_cancelled());
        let mut phase = Phase {
            members: Vec::new(),
            general: fresh.general,
            failed: fresh.failed_functions.into_iter().collect(),
        };
        let mut to_store = Vec::new();
        for k in keys {
            let errors = match hits.get(k.name.as_str()) {
                Some(errors) => {
                    let placed: Vec<Diagnostic> = errors.iter().map(|e| place(k, e)).collect();
                    if let Some(events) = &options.events {
                        (events.0)(MemberEvent::Finished {
                            member: k.name.clone(),
                            kind: k.kind,
                            errors: placed
                                .iter()
                                .map(|d| EventError::of(self.sources, d))
                                .collect(),
                            time: std::time::Duration::ZERO,
                            source: germanium_verifier::ResultSource::LocalCache,
                            stats: None,
                        });
                    }
                    if !placed.is_empty() {
                        phase.failed.push(k.name.clone());
                    }
                    placed
                }
                None => {
                    // Not verified: no obligations, or the run stopped early.
                    let Some(found) = fresh.members.iter().find(|m| m.name == k.name) else {
                        continue;
                    };
                    let transient = found.errors.iter().any(|d| d.id.starts_with("internal"));
                    let stored: Option<Vec<CachedError>> =
                        found.errors.iter().map(|d| relative(k, d)).collect();
                    if let (false, false, Some(stored)) = (cancelled, transient, stored) {
                        to_store.push((k.key, stored));
                    }
                    found.errors.clone()
                }
            };
            let member = MemberResult {
                name: k.name.clone(),
                kind: k.kind,
                errors,
            };
            phase.members.push((k.order, member));
        }
        if let Some(cache) = self.cache {
            cache.put_all(&to_store);
        }
        phase
    }
}

/// `d` relative to the member's start; `None` when it lies outside the member (it could not
/// be put back after an edit elsewhere).
fn relative(k: &MemberKey, d: &Diagnostic) -> Option<CachedError> {
    let inside =
        d.span.file == k.span.file && d.span.start >= k.span.start && d.span.end <= k.span.end;
    inside.then(|| CachedError {
        id: d.id.clone(),
        message: d.message.clone(),
        warning: d.severity == Severity::Warning,
        start: d.span.start - k.span.start,
        end: d.span.end - k.span.start,
    })
}

fn place(k: &MemberKey, e: &CachedError) -> Diagnostic {
    let span = Span::new(k.span.file, k.span.start + e.start, k.span.start + e.end);
    let mut d = if e.warning {
        Diagnostic::warning(e.id.clone(), span, e.message.clone())
    } else {
        Diagnostic::new(e.id.clone(), span, e.message.clone())
    };
    d.counterexample = None;
    d
}
