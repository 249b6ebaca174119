//! Verification through the per-member result cache (`germanium-cache`): members whose key
//! is stored are not verified again; their stored errors are placed back at the member's
//! current position, and the others are verified and stored.
//!
//! Soundness: a key covers everything a member's result depends on (see
//! `germanium_cache::member_keys`); a function whose stored result has errors stays out of
//! the axioms of the members verified now (`VerifyOptions::failed_functions`). Results are
//! stored only when they are a program's verdict: never with `--member` (members left out
//! are then assumed correct), never when an error cannot be put down to one member, never
//! for a member with an `internal` error (a solver failure or an unsupported construct may
//! not happen again).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use germanium_cache::{CachedError, MemberKey, ResultCache};
use germanium_semantics::Semantics;
use germanium_symbex::{EventError, MemberEvent, MemberFilter, VerifyOptions};
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
            "germanium {}; z3 {a}.{b}.{c}; timeout {:?}; combinable wands {}",
            germanium_cache::build_id()?,
            options.timeout,
            options.combinable_wands,
        );
        Some(CacheSettings {
            path: ResultCache::default_path()?,
            salt,
        })
    }
}

/// Verifies `program` as `verify_program` does, through the cache at `settings`.
pub(crate) fn verify_through_cache(
    program: &Program,
    semantics: &Semantics,
    sources: &SourceMap,
    options: &VerifyOptions,
    settings: &CacheSettings,
) -> Vec<Diagnostic> {
    let open = ResultCache::open(&settings.path);
    let (Some(cache), None) = (open, &options.members) else {
        return germanium_symbex::verify_program(program, semantics, sources, options);
    };
    let keys = germanium_cache::member_keys(program, sources, &settings.salt);
    // Stored errors have no counterexamples: where they are asked for, a member stored with
    // errors is verified again.
    let hits: HashMap<String, Vec<CachedError>> = keys
        .iter()
        .filter_map(|k| cache.get(&k.key).map(|errors| (k.name.clone(), errors)))
        .filter(|(_, errors)| !options.counterexamples || errors.is_empty())
        .collect();
    let mut options = options.clone();
    options.failed_functions.extend(
        keys.iter()
            .filter(|k| k.kind == "function" && hits.get(&k.name).is_some_and(|e| !e.is_empty()))
            .map(|k| k.name.clone()),
    );
    let stored: HashSet<String> = hits.keys().cloned().collect();
    options.members = Some(MemberFilter(std::sync::Arc::new(move |name: &str| {
        !stored.contains(name)
    })));
    let fresh = germanium_symbex::verify_program(program, semantics, sources, &options);

    let within = |k: &MemberKey, d: &Diagnostic| {
        d.span.file == k.span.file && d.span.start >= k.span.start && d.span.end <= k.span.end
    };
    // A cancelled run skipped members without errors: nothing of it is stored.
    let cancelled = options.cancel.as_ref().is_some_and(|c| c.is_cancelled());
    let attributable = !cancelled && fresh.iter().all(|d| keys.iter().any(|k| within(k, d)));
    let mut out = Vec::new();
    let mut to_store = Vec::new();
    for k in &keys {
        match hits.get(&k.name) {
            Some(errors) => {
                let placed: Vec<Diagnostic> = errors.iter().map(|e| place(k, e)).collect();
                if let Some(events) = &options.events {
                    (events.0)(MemberEvent::Finished {
                        member: k.name.clone(),
                        kind: k.kind,
                        errors: placed.iter().map(|d| EventError::of(sources, d)).collect(),
                        time: std::time::Duration::ZERO,
                        cached: true,
                    });
                }
                out.extend(placed);
            }
            None => {
                let mine: Vec<&Diagnostic> = fresh.iter().filter(|d| within(k, d)).collect();
                let transient = mine.iter().any(|d| d.id.starts_with("internal"));
                if attributable && !transient {
                    let errors: Vec<CachedError> = mine.iter().map(|d| relative(k, d)).collect();
                    to_store.push((k.key, errors));
                }
                out.extend(mine.into_iter().cloned());
            }
        }
    }
    cache.put_all(&to_store);
    // Errors of no member (a solver that could not start) come last, as they are.
    for d in fresh {
        if !keys.iter().any(|k| within(k, &d)) && !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

fn relative(k: &MemberKey, d: &Diagnostic) -> CachedError {
    CachedError {
        id: d.id.clone(),
        message: d.message.clone(),
        warning: d.severity == Severity::Warning,
        start: d.span.start - k.span.start,
        end: d.span.end - k.span.start,
    }
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
