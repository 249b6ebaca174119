//! The entry point: the program's theories once per solver, then each member in a scope of
//! its own, in program order (the same order every run, so the same answers).

use germanium_semantics::Semantics;
use germanium_smt::{
    verifier_options, Command, FunDecl, NameGenerator, SatResult, Solver, SolverConfig, Sort,
    Symbol, Term, Value,
};
use germanium_syntax::ast::Program;
use germanium_syntax::diagnostic::ids;
use germanium_syntax::{Diagnostic, SourceMap, Span};
use germanium_theories::Theories;
use germanium_verifier::budget::{Budget, MEMORY_LIMIT_MB};
use germanium_verifier::{
    members, Member, MemberEvent, MemberResult, MemberStats, ProgramResult, VerifyOptions,
    DEFAULT_QUERY_TIMEOUT,
};

use crate::functions::Axioms;
use crate::lower::{Lower, Tables};
use crate::vc::Vc;

/// Verifies the members `options.members` selects.
pub fn verify_members(
    program: &Program,
    sem: &Semantics,
    sources: &SourceMap,
    options: &VerifyOptions,
) -> ProgramResult {
    let mut out = ProgramResult {
        failed_functions: options.failed_functions.clone(),
        ..ProgramResult::default()
    };
    let todo: Vec<Member> = members(program)
        .into_iter()
        .filter(|m| {
            let (name, _) = m.name_and_kind();
            options.members.as_ref().is_none_or(|keep| (keep.0)(name))
        })
        .collect();
    if todo.is_empty() {
        return out;
    }
    let calls =
        |name: &str, args: Vec<Term>| crate::functions::in_domain_axiom(program, sem, name, args);
    let theories = match Theories::with_functions(program, sem, &calls) {
        Ok(t) => t,
        Err(u) => {
            let message = format!("the program's types cannot be expressed: {}", u.0);
            out.general
                .push(Diagnostic::new(ids::UNSUPPORTED, Span::default(), message));
            return out;
        }
    };
    let tables = match tables(program, sem, sources, &theories, options.combinable_wands) {
        Ok(mut t) => {
            t.failed_functions = options.failed_functions.clone();
            t
        }
        Err(message) => {
            out.general
                .push(Diagnostic::new(ids::UNSUPPORTED, Span::default(), message));
            return out;
        }
    };
    let budget = Budget::from_timeout(options.timeout.unwrap_or(DEFAULT_QUERY_TIMEOUT));
    let mut solver = match start(&tables, options) {
        Ok(s) => s,
        Err(message) => {
            out.general
                .push(Diagnostic::new(ids::INTERNAL, Span::default(), message));
            return out;
        }
    };
    let mut names = NameGenerator::new();
    // Functions first: only a verified function's axioms are assumed by the other members.
    let (functions, others): (Vec<Member>, Vec<Member>) = todo
        .into_iter()
        .partition(|m| matches!(m, Member::Function(_)));
    // Every function's definition from the start (a body defines its function, verified or
    // not: its well-formedness is its own check); postconditions once verified.
    let mut axioms: Vec<Term> = function_axioms(&tables, None, &mut names);
    for axiom in &axioms {
        if let Err(e) = solver.assert(axiom) {
            let message = format!("the SMT solver rejected a function axiom: {e}");
            out.general
                .push(Diagnostic::new(ids::INTERNAL, Span::default(), message));
            return out;
        }
    }
    let mut axioms_sent = false;
    for member in functions.into_iter().chain(others) {
        if !axioms_sent && !matches!(member, Member::Function(_)) {
            axioms_sent = true;
            let posts = function_axioms(&tables, Some(&out), &mut names);
            for axiom in &posts {
                if let Err(e) = solver.assert(axiom) {
                    let message = format!("the SMT solver rejected a function axiom: {e}");
                    out.general
                        .push(Diagnostic::new(ids::INTERNAL, Span::default(), message));
                    return out;
                }
            }
            axioms.extend(posts);
        }
        if options
            .cancel
            .as_ref()
            .is_some_and(germanium_verifier::Cancel::is_cancelled)
        {
            let message = "verification was cancelled before it finished";
            out.general
                .push(Diagnostic::new(ids::INTERNAL, Span::default(), message));
            break;
        }
        let (name, kind) = member.name_and_kind();
        if let Some(events) = &options.events {
            (events.0)(MemberEvent::Started {
                member: name.to_string(),
                kind,
            });
        }
        let started = std::time::Instant::now();
        let before = solver.stats().clone();
        let (errors, broken) = verify_member(&tables, &mut solver, &member, budget, &mut names);
        let stats = MemberStats::between(&before, solver.stats(), started.elapsed());
        if broken {
            names = NameGenerator::new();
            // A solver that failed may hold half a member: the next one starts afresh.
            match start(&tables, options) {
                Ok(mut s) => {
                    for axiom in &axioms {
                        let _ = s.assert(axiom);
                    }
                    solver = s
                }
                Err(message) => {
                    out.general
                        .push(Diagnostic::new(ids::INTERNAL, Span::default(), message));
                    out.members.push(MemberResult {
                        name: name.to_string(),
                        kind,
                        errors,
                    });
                    break;
                }
            }
        }
        if let Some(events) = &options.events {
            (events.0)(MemberEvent::Finished {
                member: name.to_string(),
                kind,
                errors: errors
                    .iter()
                    .map(|d| germanium_verifier::EventError::of(sources, d))
                    .collect(),
                time: stats.time,
                source: germanium_verifier::ResultSource::Local,
                stats: Some(stats),
            });
        }
        out.members.push(MemberResult {
            name: name.to_string(),
            kind,
            errors,
        });
    }
    out
}

fn tables<'a>(
    program: &'a Program,
    sem: &'a Semantics,
    sources: &'a SourceMap,
    theories: &'a Theories,
    combinable_wands: bool,
) -> Result<Tables<'a>, String> {
    let mut fields = Vec::new();
    for name in &sem.field_order {
        let Some(info) = sem.fields.get(name) else {
            continue;
        };
        let sort = theories
            .sort(&info.ty)
            .map_err(|u| format!("the field {name} has no sort: {}", u.0))?;
        fields.push((name.clone(), sort));
    }
    let frames = crate::frames::Frames::new(&fields);
    let mut tables = Tables {
        program,
        sem,
        sources,
        theories,
        fields,
        reference: Sort::named("Ref"),
        functions: Default::default(),
        frames,
        predicates: Default::default(),
        body_footprints: Default::default(),
        wands: Default::default(),
        combinable_wands,
        call_graph: germanium_semantics::calls::call_graph(program, sem),
        function_call_graph: germanium_semantics::calls::function_call_graph(program, sem),
        failed_functions: Default::default(),
    };
    tables.predicates = crate::frames::shapes(&tables, &tables.frames);
    tables.body_footprints = crate::body_footprints::shapes(&tables);
    tables.wands = crate::wands::shapes(&tables);
    tables.functions = crate::functions::shapes(&tables);
    Ok(tables)
}

/// A solver with the options every back end uses and the program's theories.
fn start(tables: &Tables<'_>, options: &VerifyOptions) -> Result<Solver, String> {
    let config = SolverConfig {
        z3: options.z3.clone(),
        memory_limit_mb: Some(MEMORY_LIMIT_MB),
        pipeline: true,
        cancel: options.cancel.clone(),
        log: options.smt_log.clone(),
        measure_resources: options.stats,
        ..SolverConfig::default()
    };
    let mut solver =
        Solver::new(config).map_err(|e| format!("could not start the SMT solver: {e}"))?;
    let setup = (|| -> Result<(), germanium_smt::SolverError> {
        for option in verifier_options(0) {
            solver.set_option(option)?;
        }
        // The theories' declarations, `null` (their axioms may name it), their axioms.
        let declarations = tables.theories.declarations();
        send(&mut solver, declarations)?;
        let null = FunDecl::constant(Symbol::user("null"), tables.reference.clone());
        let declared = declarations
            .iter()
            .any(|c| matches!(c, Command::DeclareFun(d) if d.name() == null.name()));
        if !declared {
            solver.declare_fun(&null)?;
        }
        send(&mut solver, &crate::frames::commands(tables))?;
        send(&mut solver, &crate::wands::commands(tables))?;
        send(
            &mut solver,
            &crate::read_permissions::commands(&tables.reference),
        )?;
        solver.declare_fun(&crate::lower::product_decl())?;
        let mut footprints: Vec<_> = tables.body_footprints.iter().collect();
        footprints.sort_by_key(|(id, _)| id.0);
        for (_, b) in footprints {
            for decl in b.decls() {
                solver.declare_fun(decl)?;
            }
        }
        // Functions before the theories' axioms, which may apply them.
        let mut names: Vec<&String> = tables.functions.keys().collect();
        names.sort();
        for name in names {
            let shape = &tables.functions[name];
            solver.declare_fun(&shape.full)?;
            solver.declare_fun(&shape.limited)?;
            if let Some(frame) = &shape.framed {
                solver.declare_fun(frame)?;
            }
            if let Some(trusted) = &shape.trusted {
                solver.declare_fun(trusted)?;
            }
            if let Some(held) = &shape.held {
                solver.declare_fun(held)?;
            }
        }
        send(&mut solver, tables.theories.axioms())?;
        Ok(())
    })();
    setup.map_err(|e| format!("the SMT solver rejected the preamble: {e}"))?;
    Ok(solver)
}

/// With `done`, the postcondition axioms of the functions that verified (none for one with
/// an error or whose reads leave its footprint); without, every function's definition.
fn function_axioms(
    tables: &Tables<'_>,
    done: Option<&ProgramResult>,
    names: &mut NameGenerator,
) -> Vec<Term> {
    let mut chosen: Vec<&str> = tables
        .functions
        .keys()
        .filter(|name| {
            let Some(done) = done else { return true };
            let result = done
                .members
                .iter()
                .find(|m| m.kind == "function" && m.name == **name);
            match result {
                Some(m) => m.errors.is_empty(),
                // Not verified now (left out by `members`): trusted unless known to fail
                // (`failed_functions` names every such function that fails), as by the
                // symbolic engine.
                None => !done.failed_functions.contains(*name),
            }
        })
        .map(|s| s.as_str())
        .collect();
    chosen.sort();
    let which = if done.is_some() {
        Axioms::Postcondition
    } else {
        Axioms::Definition
    };
    let mut lower = Lower::new(tables, names.clone());
    let mut out = Vec::new();
    if done.is_none() {
        out.extend(lower.body_footprint_axioms());
    }
    for name in chosen {
        if let Some(axioms) = lower.function_axioms(name, which) {
            out.extend(axioms);
        }
    }
    *names = lower.vc.names();
    out
}

/// A quantified resource found not injective is reported once per place: as the contract's
/// well-formedness where that failed, not again where the contract is exhaled (as by the
/// symbolic engine; the check still ends the path).
fn once_per_place(errors: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let reason = ":qp.not.injective";
    let keep = |d: &Diagnostic| {
        !d.id.ends_with(reason)
            || d.id.starts_with("not.wellformed")
            || !errors.iter().any(|o| {
                o.span == d.span && o.id.ends_with(reason) && o.id.starts_with("not.wellformed")
            })
    };
    let kept: Vec<bool> = errors.iter().map(keep).collect();
    errors
        .into_iter()
        .zip(kept)
        .filter_map(|(d, k)| k.then_some(d))
        .collect()
}

fn send(solver: &mut Solver, commands: &[Command]) -> Result<(), germanium_smt::SolverError> {
    for command in commands {
        match command {
            Command::DeclareSort(name) => solver.declare_sort(name)?,
            Command::DeclareFun(decl) => solver.declare_fun(decl)?,
            Command::Assert { term, .. } => solver.assert(term)?,
            Command::Raw(text) => solver.raw(text)?,
            Command::DefineFun {
                name,
                params,
                result,
                body,
            } => solver.define_fun(name, params.clone(), result.clone(), body.clone())?,
            _ => {}
        }
    }
    Ok(())
}

fn verify_member(
    tables: &Tables<'_>,
    solver: &mut Solver,
    member: &Member<'_>,
    budget: Budget,
    names: &mut NameGenerator,
) -> (Vec<Diagnostic>, bool) {
    let mut lower = Lower::new(tables, names.clone());
    let lowered = match member {
        Member::Method(m) => lower.method(m),
        Member::Function(f) => lower.function(f),
        Member::Predicate(p) => lower.predicate(p),
    };
    if let Err(u) = lowered {
        let errors = vec![
            Diagnostic::new(
                ids::UNSUPPORTED,
                u.span,
                format!(
                    "the verification-condition back end does not support {} yet",
                    u.what
                ),
            ),
            Diagnostic::new(
                ids::UNSUPPORTED,
                member.span(),
                "this member was not verified: it needs a construct the verification-condition back end does not support yet",
            ),
        ];
        return (errors, false);
    }
    *names = lower.vc.names();
    // The recursive definitions this member may assume (see `FunctionShape::trusted`).
    let verifying = match member {
        Member::Function(f) => Some(f.name.name.as_str()),
        _ => None,
    };
    let mut names_sorted: Vec<&String> = tables.functions.keys().collect();
    names_sorted.sort();
    for name in names_sorted {
        let shape = &tables.functions[name];
        if let Some(trusted) = &shape.trusted {
            if shape.trusted_in(tables, verifying) {
                lower.vc.fact(Term::constant(trusted));
            }
        }
    }
    match solve(solver, lower.vc, budget) {
        Ok(errors) => (errors, false),
        Err(message) => (
            vec![Diagnostic::new(ids::INTERNAL, member.span(), message)],
            true,
        ),
    }
}

/// Asks which checks fail, as often as a model shows new ones (see `vc`).
fn solve(solver: &mut Solver, vc: Vc, budget: Budget) -> Result<Vec<Diagnostic>, String> {
    let failed = |e: germanium_smt::SolverError| format!("the SMT solver failed: {e}");
    solver.push().map_err(failed)?;
    let result = (|| -> Result<Vec<Diagnostic>, String> {
        for decl in &vc.decls {
            solver.declare_fun(decl).map_err(failed)?;
        }
        for fact in &vc.facts {
            solver.assert(fact).map_err(failed)?;
        }
        let mut labels = Vec::new();
        for check in &vc.checks {
            solver.declare_fun(&check.label).map_err(failed)?;
            let ok = Term::constant(&check.label);
            let holds = check.holds();
            solver
                .assert(&Term::eq(ok.clone(), holds))
                .map_err(failed)?;
            labels.push(ok);
        }
        let mut open: Vec<usize> = (0..labels.len()).collect();
        // Failing checks with their errors, in the order found.
        let mut failures = Vec::new();
        while !open.is_empty() {
            let some_fails = Term::not(Term::and(open.iter().map(|&i| labels[i].clone())));
            solver.push().map_err(failed)?;
            solver.assert(&some_fails).map_err(failed)?;
            let answer = solver.check_sat(budget.limits()).map_err(failed)?;
            let values = if answer.is_unsat() {
                None
            } else {
                let terms: Vec<Term> = open.iter().map(|&i| labels[i].clone()).collect();
                solver.get_value(&terms).ok()
            };
            solver.pop(1).map_err(failed)?;
            if answer.is_unsat() {
                break;
            }
            if answer.is_clock_limit() {
                return Err(format!(
                    "the solver was stopped by the wall clock ({:?}), not by its budget",
                    budget.wall_clock
                ));
            }
            let shown: Vec<usize> = match values {
                Some(values) => open
                    .iter()
                    .zip(values)
                    .filter(|(_, v)| *v == Value::Bool(false))
                    .map(|(&i, _)| i)
                    .collect(),
                None => Vec::new(),
            };
            // No model to name the failing checks: ask about each on its own (those proved
            // so are closed, not asked again).
            let failing = if shown.is_empty() {
                // Each with a quarter of the budget: the solver already gave up on them
                // together, and a member failing on its budget should fail fast.
                let quarter = Budget {
                    resources: (budget.resources / 4).max(1),
                    ..budget
                };
                let (failing, proved) = one_by_one(solver, &labels, &open, quarter)?;
                open.retain(|i| !proved.contains(i));
                failing
            } else {
                shown
            };
            for &i in &failing {
                let mut error = vc.checks[i].error.clone();
                if !answer.is_sat() && matches!(answer, SatResult::Unknown(_)) {
                    if let SatResult::Unknown(reason) = &answer {
                        if let Some(what) = budget.exhausted(reason) {
                            error.message.push_str(&format!(
                                " (The solver gave up: {what}. The property may still hold: try a larger --timeout.)"
                            ));
                        }
                    }
                }
                failures.push((i, error));
            }
            open.retain(|i| !failing.contains(i));
            if failing.is_empty() {
                break;
            }
        }
        // On a path that a failure ended, nothing after it is reported (whichever round of
        // questions found them).
        failures.sort_by_key(|(i, _)| *i);
        let mut errors = Vec::new();
        let mut cut: Vec<usize> = Vec::new();
        for (i, error) in failures {
            let after_an_end = cut
                .iter()
                .any(|&c| vc.passes(&vc.checks[i].reach, &vc.checks[c].reach));
            if vc.checks[i].cutting {
                cut.push(i);
            }
            if !after_an_end && !errors.contains(&error) {
                errors.push(error);
            }
        }
        // A refuted assertion must not be provable where it is reached: only a proof of it
        // (`unsat` of its negation) is an error, as a verifier that cannot prove it has
        // refuted it as far as it can tell.
        for (reach, fact, error) in &vc.refutations {
            solver.push().map_err(failed)?;
            solver.assert(reach).map_err(failed)?;
            solver.assert(&Term::not(fact.clone())).map_err(failed)?;
            let answer = solver.check_sat(budget.limits()).map_err(failed)?;
            solver.pop(1).map_err(failed)?;
            if answer.is_unsat() && !errors.contains(error) {
                errors.push(error.clone());
            }
        }
        errors.sort_by_key(|d| (d.span.file, d.span.start, d.span.end));
        Ok(once_per_place(errors))
    })();
    solver.pop(1).map_err(failed)?;
    result
}

/// The open checks that a query of their own does not prove.
/// The checks among `open` that may fail, each asked on its own, and those proved.
fn one_by_one(
    solver: &mut Solver,
    labels: &[Term],
    open: &[usize],
    budget: Budget,
) -> Result<(Vec<usize>, Vec<usize>), String> {
    let failed = |e: germanium_smt::SolverError| format!("the SMT solver failed: {e}");
    let mut out = Vec::new();
    let mut proved = Vec::new();
    for &i in open {
        solver.push().map_err(failed)?;
        solver
            .assert(&Term::not(labels[i].clone()))
            .map_err(failed)?;
        let answer = solver.check_sat(budget.limits()).map_err(failed)?;
        solver.pop(1).map_err(failed)?;
        if answer.is_clock_limit() {
            return Err("the solver was stopped by the wall clock, not by its budget".into());
        }
        if answer.is_unsat() {
            proved.push(i);
        } else {
            out.push(i);
        }
    }
    Ok((out, proved))
}
