//! The back ends behind one call: the driver, the cache and the output see only the
//! verifier-neutral layer's options and results (`germanium-verifier`).

use germanium_semantics::Semantics;
use germanium_syntax::ast::Program;
use germanium_syntax::{Diagnostic, SourceMap};
use germanium_verifier::{Backend, ProgramResult, VerifyOptions};

/// What chooses and equips the back end of a run, besides the neutral options.
#[derive(Clone, Debug, Default)]
pub(crate) struct Engine {
    pub backend: Backend,
    /// Both back ends on every member (`--cross-check`; `backend` is then ignored).
    pub cross_check: bool,
    /// The symbolic engine's execution log (`None`: no log; the other back end has none).
    pub trace: Option<germanium_symbex::TraceSinks>,
}

/// Verifies the members `options` selects with the engine's back end.
pub(crate) fn verify_members(
    program: &Program,
    semantics: &Semantics,
    sources: &SourceMap,
    options: &VerifyOptions,
    engine: &Engine,
) -> ProgramResult {
    if engine.cross_check {
        return cross_check(program, semantics, sources, options, engine);
    }
    run(engine.backend, program, semantics, sources, options, engine)
}

/// The functions with a body that `options.members` leaves out and that fail, found by
/// verifying them quietly (their errors are not the selection's to report). Their
/// postconditions are then no axioms for the members selected, whose verdicts are those of
/// a run of the whole program: a function whose postcondition fails could otherwise give a
/// caller `false` (the postcondition beside the definition it contradicts).
pub(crate) fn failing_functions_left_out(
    program: &Program,
    semantics: &Semantics,
    sources: &SourceMap,
    options: &VerifyOptions,
    engine: &Engine,
) -> std::collections::HashSet<String> {
    let Some(selected) = &options.members else {
        return Default::default();
    };
    let left_out: std::collections::HashSet<String> = program
        .items
        .iter()
        .filter_map(|item| match &item.kind {
            germanium_syntax::ast::ItemKind::Function(f)
                if f.body.is_some()
                    && !(selected.0)(&f.name.name)
                    && !options.failed_functions.contains(&f.name.name) =>
            {
                Some(f.name.name.clone())
            }
            _ => None,
        })
        .collect();
    if left_out.is_empty() {
        return left_out;
    }
    let names = left_out.clone();
    let quiet = VerifyOptions {
        members: Some(germanium_verifier::MemberFilter(std::sync::Arc::new(
            move |name: &str| names.contains(name),
        ))),
        events: None,
        counterexamples: false,
        smt_log: None,
        stats: false,
        ..options.clone()
    };
    let engine = Engine {
        trace: None,
        ..engine.clone()
    };
    let result = verify_members(program, semantics, sources, &quiet, &engine);
    let mut failed = result.failed_functions;
    for m in &result.members {
        if m.kind == "function" && m.errors.iter().any(|d| d.is_error()) {
            failed.insert(m.name.clone());
        }
    }
    // A function that could not be verified at all (no solver, a general error) is not
    // known to verify.
    if result.general.iter().any(|d| d.is_error()) {
        failed.extend(left_out);
    }
    failed.retain(|name| !options.failed_functions.contains(name));
    failed
}

/// One back end's run.
fn run(
    backend: Backend,
    program: &Program,
    semantics: &Semantics,
    sources: &SourceMap,
    options: &VerifyOptions,
    engine: &Engine,
) -> ProgramResult {
    match backend {
        Backend::Symbex => germanium_symbex::verify_members(
            program,
            semantics,
            sources,
            options,
            engine.trace.as_ref(),
        ),
        Backend::Vcg => germanium_vcg::verify_members(program, semantics, sources, options),
    }
}

/// Both back ends on every member: the union of their errors, and a disagreement (a
/// warning at the member, `cross-check.disagreement`) wherever both gave a verdict and the
/// verdicts or the failed checks differ. Member events come from the symbolic engine's run.
fn cross_check(
    program: &Program,
    semantics: &Semantics,
    sources: &SourceMap,
    options: &VerifyOptions,
    engine: &Engine,
) -> ProgramResult {
    let symbex = run(
        Backend::Symbex,
        program,
        semantics,
        sources,
        options,
        engine,
    );
    let quiet = VerifyOptions {
        events: None,
        ..options.clone()
    };
    let vcg = run(Backend::Vcg, program, semantics, sources, &quiet, engine);
    let mut out = ProgramResult {
        general: symbex.general.clone(),
        failed_functions: symbex.failed_functions.clone(),
        ..ProgramResult::default()
    };
    for d in vcg.general {
        if !out.general.contains(&d) {
            out.general.push(d);
        }
    }
    for mut member in symbex.members {
        let other = vcg
            .members
            .iter()
            .find(|m| m.name == member.name && m.kind == member.kind);
        if let Some(other) = other {
            let checks = |errors: &[Diagnostic]| -> Vec<(String, u32)> {
                let mut v: Vec<(String, u32)> = errors
                    .iter()
                    .filter(|d| d.is_error())
                    .map(|d| (d.id.clone(), sources.start(d.span).line))
                    .collect();
                v.sort();
                v.dedup();
                v
            };
            let (mine, theirs) = (checks(&member.errors), checks(&other.errors));
            let verdicts =
                |v: &[(String, u32)]| !v.iter().any(|(id, _)| id.starts_with("internal"));
            if verdicts(&mine) && verdicts(&theirs) && mine != theirs {
                let span = member_span(program, &member.name).unwrap_or_default();
                member.errors.push(Diagnostic::warning(
                    "cross-check.disagreement",
                    span,
                    format!(
                        "the back ends disagree on {}: symbolic execution {}, verification conditions {}",
                        member.name,
                        describe(&mine),
                        describe(&theirs)
                    ),
                ));
            }
            for d in &other.errors {
                let same = |e: &Diagnostic| e.id == d.id && e.span == d.span;
                if !member.errors.iter().any(same) {
                    member.errors.push(d.clone());
                }
            }
        }
        out.members.push(member);
    }
    out
}

/// A back end's answer on a member, in words.
fn describe(checks: &[(String, u32)]) -> String {
    if checks.is_empty() {
        return "verifies it".to_string();
    }
    let list: Vec<String> = checks
        .iter()
        .map(|(id, line)| format!("{id} at line {line}"))
        .collect();
    format!("reports {}", list.join(", "))
}

fn member_span(program: &Program, name: &str) -> Option<germanium_syntax::Span> {
    germanium_verifier::members(program)
        .into_iter()
        .find(|m| m.name_and_kind().0 == name)
        .map(|m| m.span())
}
