//! Counterexamples confirmed by running the program (issue 37): for each failed check of a
//! method that has a counterexample, a bounded search over concrete runs of the method
//! (`germanium-concrete`, independent of both back ends) looks for one that fails the same
//! check at the same place. Found, the counterexample shows that run; not found, it says so
//! (the failure may be incompleteness); undecided, it stays the solver's candidate. Never
//! changes a verdict: only the counterexample's text.

use germanium_concrete::{search, Check, Evaluator, Failure, Found, Machine, Value};
use germanium_semantics::Semantics;
use germanium_syntax::ast::{Function, ItemKind, Method, Program};
use germanium_syntax::diagnostic::Confirmation;
use germanium_syntax::{Diagnostic, Span};

/// Runs tried per failed check at most (deterministic: the same runs every time).
pub const MAX_RUNS: usize = 2_000;

/// The checks a run may fail for a reported error id.
fn checks_for(id: &str) -> &'static [Check] {
    let (error, reason) = id.split_once(':').unwrap_or((id, ""));
    // A false assertion is the check's own failure; one of the assertion's well-definedness
    // (a missing permission, a division by zero) has a reason of its own.
    let own = reason == "assertion.false";
    match error {
        "assert.failed" if own => &[Check::Assert],
        "assert.failed" => &[Check::Assert, Check::WellDefinedness],
        "postcondition.violated" if own => &[Check::Postcondition],
        "postcondition.violated" => &[Check::Postcondition, Check::WellDefinedness],
        "call.precondition" => &[Check::CallPrecondition],
        "exhale.failed" if own => &[Check::Exhale],
        "exhale.failed" => &[Check::Exhale, Check::WellDefinedness],
        "fold.failed" => &[Check::Fold],
        "unfold.failed" => &[Check::Unfold],
        "assignment.failed" if own => &[Check::Assignment],
        "assignment.failed" => &[Check::Assignment, Check::WellDefinedness],
        "invariant.not.established" => &[Check::InvariantOnEntry],
        "invariant.not.preserved" => &[Check::InvariantPreserved],
        "package.failed" => &[Check::Package],
        // A contract not well-defined: a method's precondition is checked as it is inhaled.
        "function.not.wellformed" | "not.wellformed" | "inhale.failed" => &[Check::WellDefinedness],
        "apply.failed" => &[Check::Apply],
        "if.failed" | "while.failed" | "application.precondition" | "call.failed" => {
            &[Check::WellDefinedness]
        }
        _ => &[],
    }
}

fn overlaps(a: Span, b: Span) -> bool {
    a.file == b.file && a.start < b.end.max(b.start + 1) && b.start < a.end.max(a.start + 1)
}

/// A member run concretely: a method from its pre-state, or a function's own checks.
#[derive(Clone, Copy)]
enum Member<'p> {
    Method(&'p Method),
    Function(&'p Function),
}

impl<'p> Member<'p> {
    /// The member whose text `span` is in, and the member's span.
    fn containing(program: &'p Program, span: Span) -> Option<(Member<'p>, Span)> {
        program.items.iter().find_map(|item| match &item.kind {
            ItemKind::Method(m) if overlaps(item.span, span) => {
                Some((Member::Method(m), item.span))
            }
            ItemKind::Function(f) if overlaps(item.span, span) => {
                Some((Member::Function(f), item.span))
            }
            _ => None,
        })
    }

    fn name(self) -> &'p str {
        match self {
            Member::Method(m) => &m.name.name,
            Member::Function(f) => &f.name.name,
        }
    }

    /// Its parameters, then its results (a method's).
    fn variables(self, sem: &Semantics) -> Vec<germanium_semantics::VarId> {
        match self {
            Member::Method(m) => sem
                .methods
                .get(&m.name.name)
                .map(|i| i.params.iter().chain(&i.returns).copied().collect())
                .unwrap_or_default(),
            Member::Function(f) => sem
                .functions
                .get(&f.name.name)
                .map(|i| i.params.clone())
                .unwrap_or_default(),
        }
    }

    fn parameters(self, sem: &Semantics) -> Vec<germanium_semantics::VarId> {
        match self {
            Member::Method(m) => sem
                .methods
                .get(&m.name.name)
                .map(|i| i.params.clone())
                .unwrap_or_default(),
            Member::Function(_) => self.variables(sem),
        }
    }
}

/// Looks at every diagnostic with a counterexample.
pub(crate) fn confirm(program: &Program, sem: &Semantics, diagnostics: &mut [Diagnostic]) {
    let ev = Evaluator::new(program, sem);
    let machine = Machine::new(&ev);
    for d in diagnostics.iter_mut() {
        let Some(c) = d.counterexample.as_mut() else {
            continue;
        };
        let checks = checks_for(&d.id);
        c.confirmation = match Member::containing(program, d.span) {
            None => Confirmation::Undecided("only methods and functions are run concretely".into()),
            Some(_) if checks.is_empty() => {
                Confirmation::Undecided(format!("`{}` is not run concretely", d.id))
            }
            Some((member, member_span)) => {
                // A function that is not well-formed is reported at its declaration: any
                // well-definedness failure in it is that failure.
                let span = if d.id.starts_with("function.not.wellformed") {
                    member_span
                } else {
                    d.span
                };
                // An `asserting` inside the check's expression fails it as its own assertion
                // does (Viper reports the check with `assertion.false`).
                let own = d.id.ends_with(":assertion.false");
                let wanted = |f: &Failure| {
                    let check = checks.contains(&f.check)
                        || own
                            && f.check == Check::WellDefinedness
                            && f.reason == germanium_concrete::ASSERTING_FAILED;
                    check && overlaps(f.span, span)
                };
                let name = member.name();
                let run = |choices: &mut dyn germanium_concrete::Choices| match member {
                    Member::Method(_) => machine.run(name, choices),
                    Member::Function(_) => machine.run_function(name, choices),
                };
                match search(&machine, &run, MAX_RUNS, &wanted) {
                    Found::Failure(f) => {
                        let names = domain_names(sem, &f);
                        show_run(sem, member, &f, &names, c);
                        Confirmation::Confirmed {
                            pre_state: pre_state(sem, member, &f, &names),
                        }
                    }
                    Found::None {
                        runs,
                        exhaustive,
                        unknown: None,
                    } => Confirmation::NoneWithinBound { runs, exhaustive },
                    Found::None {
                        unknown: Some(why), ..
                    } => Confirmation::Undecided(why),
                }
            }
        };
    }
}

/// The run's parameters and the field values of its pre-heap.
fn pre_state(
    sem: &Semantics,
    member: Member,
    f: &Failure,
    names: &germanium_concrete::DomainNames,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in member.parameters(sem) {
        if let Some(v) = f.pre_store.get(&p) {
            out.push((sem.var(p).name.clone(), v.named(names)));
        }
    }
    for ((o, field), v) in &f.pre_heap.fields {
        if f.pre_heap.perm(*o, field) > num_zero() {
            out.push((format!("{o}.{field}"), v.named(names)));
        }
    }
    out
}

/// Names for the run's domain values: the constant (a domain function without
/// parameters, unique ones first) each equals in the run's model.
fn domain_names(sem: &Semantics, f: &Failure) -> germanium_concrete::DomainNames {
    let mut names = germanium_concrete::DomainNames::new();
    for unique in [true, false] {
        for table in f.domains.tables.values() {
            let Some(info) = sem.domain_functions.get(&table.function) else {
                continue;
            };
            if !info.params.is_empty() || info.unique != unique {
                continue;
            }
            let v = table.entries.get(&Vec::new()).unwrap_or(&table.default);
            if let Value::Domain { domain, index } = v {
                names
                    .entry((domain.clone(), *index))
                    .or_insert_with(|| table.function.clone());
            }
        }
    }
    names
}

fn num_zero() -> germanium_concrete::BigRational {
    germanium_concrete::BigRational::new(0.into(), 1.into())
}

/// Replaces the solver's values with the run's where the check fails: the method's
/// variables, the fields held, the predicate instances held.
fn show_run(
    sem: &Semantics,
    member: Member,
    f: &Failure,
    names: &germanium_concrete::DomainNames,
    c: &mut germanium_syntax::diagnostic::Counterexample,
) {
    c.candidate = false;
    c.variables.clear();
    let mut vars = member.variables(sem);
    let mut locals: Vec<_> = f
        .store
        .keys()
        .copied()
        .filter(|v| !vars.contains(v) && sem.var(*v).kind == germanium_semantics::VarKind::Local)
        .collect();
    locals.sort();
    vars.extend(locals);
    for v in vars {
        if let Some(value) = f.store.get(&v) {
            c.variables
                .push((sem.var(v).name.clone(), value.named(names)));
        }
    }
    if let Some(result) = &f.result {
        c.variables.push(("result".into(), result.named(names)));
    }
    c.heap = f
        .heap
        .fields
        .iter()
        .filter(|((o, field), _)| f.heap.perm(*o, field) > num_zero())
        .map(|((o, field), v)| (o.to_string(), field.clone(), v.named(names)))
        .collect();
    let held = |h: &germanium_concrete::Heap| -> Vec<(String, String, String)> {
        h.fields
            .iter()
            .filter(|((o, field), _)| h.perm(*o, field) > num_zero())
            .map(|((o, field), v)| (o.to_string(), field.clone(), v.named(names)))
            .collect()
    };
    // Earlier heaps where the check reads them (as the solver's counterexample says).
    if !c.old_heap.is_empty() {
        c.old_heap = held(&f.old_heap);
    }
    if !c.labelled_heap.is_empty() {
        let read: Vec<String> = c.labelled_heap.iter().map(|(l, ..)| l.clone()).collect();
        c.labelled_heap = f
            .labels
            .iter()
            .filter(|(label, _)| read.contains(label))
            .flat_map(|(label, h)| {
                held(h)
                    .into_iter()
                    .map(move |(o, field, v)| (label.clone(), o, field, v))
            })
            .collect();
    }
    c.functions = f
        .applications
        .iter()
        .map(|(name, args, result)| {
            (
                name.clone(),
                args.iter().map(|a| a.named(names)).collect(),
                result.named(names),
            )
        })
        .collect();
    // The domain model the run chose: the applications it made, then each function's value
    // for every other application (`_`).
    for (name, table) in &f.domains.tables {
        for (args, result) in &table.entries {
            c.functions.push((
                name.clone(),
                args.iter().map(|a| a.named(names)).collect(),
                result.named(names),
            ));
        }
        let nullary = sem
            .domain_functions
            .get(&table.function)
            .is_some_and(|d| d.params.is_empty());
        if !nullary {
            c.functions
                .push((name.clone(), vec!["_".into()], table.default.named(names)));
        }
    }
    c.predicates = f
        .heap
        .predicates
        .iter()
        .map(|((p, args), amount)| {
            let amount = Value::Perm(amount.clone()).to_string();
            (
                p.clone(),
                args.iter().map(|a| a.named(names)).collect(),
                amount,
            )
        })
        .collect();
}
