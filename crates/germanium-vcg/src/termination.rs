//! Termination checks (Viper's termination plugin) as VC checks: a member with a
//! `decreases` tuple proves that each call into its own recursion cluster makes the
//! callee's measure smaller (the well-founded orders `decreasing`/`bounded` of the
//! `decreases/*.vpr` library, compared lexicographically) and that each call out of it
//! meets the callee's termination condition; a loop with a measure decreases it in each
//! iteration after which it goes on. Predicate instances as measures are values of the
//! library's `PredicateInstance` (one function per predicate over its locations).

use germanium_semantics::calls::reaches;
use germanium_semantics::Type;
use germanium_smt::Term;
use germanium_syntax::ast::{Decreases, DecreasesKind, Expr, Function, Method};
use germanium_syntax::{Diagnostic, Span};
use germanium_theories::TheoryOp;
use germanium_verifier::errors::ErrorContext;

use crate::lower::{unsupported, Lower, R};
use crate::state::State;

/// One `decreases` clause in a state: it applies where `guard` holds (its condition and not
/// an earlier clause's); `tuple` is `None` for `decreases _`.
#[derive(Clone, Debug)]
pub struct Measure {
    pub guard: Term,
    pub tuple: Option<Vec<(Term, Type)>>,
    pub span: Span,
}

/// The member whose termination is checked, with its measures where the checked part
/// starts.
#[derive(Clone, Debug)]
pub struct Caller {
    pub name: String,
    pub measures: Vec<Measure>,
    /// A method (its calls of methods are checked) or a function (its applications).
    pub method: bool,
}

/// The type of predicate-instance measures.
fn predicate_instance_type() -> Type {
    Type::Domain("PredicateInstance".into(), vec![])
}

impl Lower<'_, '_> {
    /// `clauses` in `st`, read without definedness checks (`*` clauses are left out).
    pub fn measures(&mut self, st: &State, clauses: &[Decreases]) -> R<Vec<Measure>> {
        let checks = self.vc.checks.len();
        let reach = st.reach.clone();
        let ctx = ErrorContext::at("termination.failed", Span::default(), "");
        let out = self.leniently(|l| {
            let mut out = Vec::new();
            let mut earlier: Vec<Term> = Vec::new();
            for d in clauses {
                if matches!(d.kind, DecreasesKind::Star) {
                    continue;
                }
                let condition = match &d.condition {
                    Some(c) => l.expr(st, &reach, c, &ctx)?,
                    None => Term::tt(),
                };
                let guard = Term::and(
                    earlier
                        .iter()
                        .map(|c| Term::not(c.clone()))
                        .chain([condition.clone()]),
                );
                earlier.push(condition);
                let tuple = match &d.kind {
                    DecreasesKind::Tuple(exprs) => {
                        let mut values = Vec::new();
                        for e in exprs {
                            values.push(l.measure_value(st, &reach, e, &ctx)?);
                        }
                        Some(values)
                    }
                    _ => None,
                };
                out.push(Measure {
                    guard,
                    tuple,
                    span: d.span,
                });
            }
            Ok(out)
        });
        self.vc.checks.truncate(checks);
        out
    }

    /// One element of a tuple: a predicate instance (`P(args)`, `acc(P(args), p)`) or a
    /// value of its own type.
    fn measure_value(
        &mut self,
        st: &State,
        reach: &Term,
        e: &Expr,
        ctx: &ErrorContext,
    ) -> R<(Term, Type)> {
        let Some((name, args)) =
            germanium_semantics::auto_import::predicate_instance_measure(e, self.t.sem)
        else {
            let ty = self.type_of(e)?;
            return Ok((self.expr(st, reach, e, ctx)?, ty));
        };
        let Some(shape) = self.t.predicates.get(name) else {
            return unsupported(e.span, "this predicate");
        };
        let Some(instance) = shape.instance.clone() else {
            return unsupported(
                e.span,
                "predicate instances as measures without the library",
            );
        };
        let mut values = Vec::new();
        for a in args {
            values.push(self.expr(st, reach, a, ctx)?);
        }
        let location = shape.location(values);
        Ok((
            Term::app(&instance, vec![location]),
            predicate_instance_type(),
        ))
    }

    /// `smaller <_lex larger` (see `germanium_theories::measures`).
    fn lex_less(&self, smaller: &[(Term, Type)], larger: &[(Term, Type)], span: Span) -> R<Term> {
        germanium_theories::measures::lex_less(self.t.theories, self.t.sem, smaller, larger)
            .or_else(|u| unsupported(span, u.0))
    }

    /// `fact` must hold where `reach` does, else `termination.failed:reason` about `what`.
    /// The path after it assumes it (see `assume_terminated`).
    fn termination_check(
        &mut self,
        reach: &Term,
        fact: Term,
        reason: &str,
        span: Span,
        what: &str,
    ) {
        let error = Diagnostic::new(
            format!("termination.failed:{reason}"),
            span,
            format!("Termination of {what} might fail."),
        );
        let under = self.assumable();
        self.vc.check_under(reach, under, fact, error, false);
    }

    /// After a statement, or a function's body, whose termination checks are done: the
    /// path assumes them (as after any check that does not end it: a failure is reported
    /// once, and what follows is checked as if it had held).
    /// Only checks still in the VC count (one made where reads are lenient is dropped).
    pub fn assume_terminated(&mut self, st: &mut State) {
        let from = self.terminated_from.min(self.vc.checks.len());
        let facts: Vec<Term> = self.vc.checks[from..]
            .iter()
            .filter(|c| c.error.id.starts_with("termination.failed"))
            .map(|c| c.holds())
            .collect();
        self.terminated_from = self.vc.checks.len();
        st.reach = self.vc.assume(&st.reach, Term::and(facts));
    }

    /// The obligations of one call or application, where `reach` holds: under each caller
    /// measure, a recursive callee's measure must apply and be lexicographically smaller; a
    /// callee out of the cluster must meet its termination condition (unless
    /// `check_nonrecursive` is false: a callee without `decreases`, which Viper does not
    /// check).
    #[allow(clippy::too_many_arguments)]
    fn compare_measures(
        &mut self,
        reach: &Term,
        caller: &[Measure],
        callee: &[Measure],
        recursive: bool,
        check_nonrecursive: bool,
        span: Span,
        what: &str,
    ) -> R<()> {
        for m in caller {
            let Some(caller_tuple) = &m.tuple else {
                continue;
            };
            let under = self.vc.assume(reach, m.guard.clone());
            let applies = Term::or(
                callee
                    .iter()
                    .filter(|c| !recursive || c.tuple.is_some())
                    .map(|c| c.guard.clone()),
            );
            if !recursive {
                if check_nonrecursive {
                    self.termination_check(
                        &under,
                        applies,
                        "termination.condition.false",
                        span,
                        what,
                    );
                }
                continue;
            }
            self.termination_check(&under, applies, "tuple.condition.false", span, what);
            for c in callee {
                let Some(tuple) = &c.tuple else { continue };
                let less = self.lex_less(tuple, caller_tuple, span)?;
                let within = self.vc.assume(&under, c.guard.clone());
                self.termination_check(&within, less, "tuple.false", span, what);
            }
        }
        Ok(())
    }

    /// At a call of `callee` from a method with a measure (`st` binds the callee's
    /// parameters to the arguments).
    pub fn check_call_terminates(&mut self, st: &State, callee: &Method, span: Span) -> R<()> {
        let Some(caller) = self.caller.clone().filter(|c| c.method) else {
            return Ok(());
        };
        if caller.measures.iter().all(|m| m.tuple.is_none()) {
            return Ok(());
        }
        let name = &callee.name.name;
        let recursive = reaches(&self.t.call_graph, name, &caller.name);
        let callee_measures = self.measures(st, &callee.contract.decreases)?;
        let what = format!("the call of {name}");
        self.compare_measures(
            &st.reach.clone(),
            &caller.measures,
            &callee_measures,
            recursive,
            true,
            span,
            &what,
        )
    }

    /// At an application of `callee` in a function with a measure, where `guard` holds
    /// (`st` binds the callee's parameters to the arguments). Not in axioms, or in a
    /// postcondition assumed where its function is applied. (Where reads are lenient the
    /// caller drops these checks: the expression is checked on its own.)
    pub fn check_application_terminates(
        &mut self,
        st: &State,
        guard: &Term,
        callee: &Function,
        span: Span,
    ) -> R<()> {
        if self.snapshot.is_some() || self.modes.assuming_postcondition {
            return Ok(());
        }
        let Some(caller) = self.caller.clone().filter(|c| !c.method) else {
            return Ok(());
        };
        if caller.measures.iter().all(|m| m.tuple.is_none()) {
            return Ok(());
        }
        let name = &callee.name.name;
        let recursive =
            *name == caller.name || reaches(&self.t.function_call_graph, name, &caller.name);
        let decreases = &callee.contract.decreases;
        if recursive && decreases.is_empty() {
            return Ok(()); // Viper checks only functions with measures
        }
        let callee_measures = self.measures(st, decreases)?;
        let what = format!("the application of {name}");
        self.compare_measures(
            guard,
            &caller.measures,
            &callee_measures,
            recursive,
            !decreases.is_empty(),
            span,
            &what,
        )
    }

    /// Runs `f` checking termination against `measures` of the member `name` (none without
    /// a measure to prove).
    pub fn with_caller<T>(
        &mut self,
        caller: Option<Caller>,
        f: impl FnOnce(&mut Self) -> R<T>,
    ) -> R<T> {
        let before = std::mem::replace(&mut self.caller, caller);
        let r = f(self);
        self.caller = before;
        r
    }

    /// The caller `name` with its measures `clauses` in `st`, if they ask for a proof.
    pub fn caller_at(
        &mut self,
        st: &State,
        name: &str,
        clauses: &[Decreases],
        method: bool,
    ) -> R<Option<Caller>> {
        if !germanium_semantics::calls::has_measure(clauses) {
            return Ok(None);
        }
        let measures = self.measures(st, clauses)?;
        Ok(Some(Caller {
            name: name.to_string(),
            measures,
            method,
        }))
    }

    /// At the start of a loop iteration (`st`: the invariant and the condition assumed):
    /// the loop's measures, which apply if the method must terminate.
    pub fn loop_measures_at_start(
        &mut self,
        st: &State,
        clauses: &[Decreases],
        while_span: Span,
    ) -> R<Vec<Measure>> {
        if !germanium_semantics::calls::has_measure(clauses) {
            return Ok(Vec::new());
        }
        let measures = self.measures(st, clauses)?;
        let method_terminates = self.caller.as_ref().is_some_and(|c| c.method);
        if !measures.is_empty() && method_terminates {
            let applies = Term::or(measures.iter().map(|m| m.guard.clone()));
            let reach = st.reach.clone();
            self.termination_check(
                &reach,
                applies,
                "termination.condition.false",
                while_span,
                "the loop",
            );
        }
        Ok(measures)
    }

    /// At the end of an iteration that began with the measures `start`: if the loop goes on
    /// (`again`), a clause applies and the measure decreased.
    pub fn loop_measures_at_end(
        &mut self,
        st: &State,
        clauses: &[Decreases],
        again: Term,
        start: &[Measure],
    ) -> R<()> {
        if start.is_empty() {
            return Ok(());
        }
        let end = self.measures(st, clauses)?;
        for (before, after) in start.iter().zip(&end) {
            let (Some(before_tuple), Some(after_tuple)) = (&before.tuple, &after.tuple) else {
                continue;
            };
            let reach = self
                .vc
                .assume(&st.reach, Term::and([before.guard.clone(), again.clone()]));
            let span = before.span;
            self.termination_check(
                &reach,
                after.guard.clone(),
                "tuple.condition.false",
                span,
                "the loop",
            );
            let less = self.lex_less(after_tuple, before_tuple, span)?;
            self.termination_check(&reach, less, "tuple.false", span, "the loop");
        }
        Ok(())
    }
}

/// The library function relating an instance to the one it is folded in.
const NESTED: &str = "nestedPredicates";

impl Lower<'_, '_> {
    /// After the instance `name(args)` was unfolded into `st`: each instance its body holds
    /// (under the body's conditions) is nested in it. Predicates are least fixed points, so
    /// this is true of every instance; as in Viper, only members with predicate-instance
    /// measures assume it (a predicate that holds itself would otherwise make each of its
    /// unfolds inconsistent), and only with the library's `nestedPredicates`.
    pub fn assume_nested_instances(&mut self, st: &mut State, name: &str, args: &[Term]) -> R<()> {
        if !self.nests_instances || self.snapshot.is_some() {
            return Ok(());
        }
        let Some(domain) = self
            .t
            .sem
            .domain_functions
            .get(NESTED)
            .map(|f| f.domain.clone())
        else {
            return Ok(());
        };
        let Some(shape) = self.t.predicates.get(name) else {
            return Ok(());
        };
        let (Some(body), Some(instance)) = (shape.predicate.body.as_ref(), &shape.instance) else {
            return Ok(());
        };
        let outer = Term::app(instance, vec![shape.location(args.to_vec())]);
        let mut inner = st.clone();
        for (p, a) in shape.params.iter().zip(args) {
            inner.store.insert(*p, a.clone());
        }
        let checks = self.vc.checks.len();
        let mut facts = Vec::new();
        let walked =
            self.leniently(|l| l.nested_in(&inner, body, &Term::tt(), &outer, &domain, &mut facts));
        self.vc.checks.truncate(checks);
        walked?;
        st.reach = self.vc.assume(&st.reach, Term::and(facts));
        Ok(())
    }

    /// Walks an assertion as Viper does: both sides of binary operators, the branches of
    /// implications and conditionals under their conditions, instances of predicates.
    fn nested_in(
        &mut self,
        st: &State,
        e: &Expr,
        condition: &Term,
        outer: &Term,
        domain: &str,
        facts: &mut Vec<Term>,
    ) -> R<()> {
        use germanium_syntax::ast::{BinaryOp, ExprKind};
        let ctx = ErrorContext::at("termination.failed", e.span, "");
        let reach = st.reach.clone();
        if germanium_semantics::auto_import::predicate_instance_measure(e, self.t.sem).is_some() {
            let (value, _) = self.measure_value(st, &reach, e, &ctx)?;
            let op = TheoryOp::DomainFunction {
                domain: domain.to_string(),
                function: NESTED.to_string(),
                type_args: vec![],
            };
            let nested = self
                .t
                .theories
                .apply(&op, vec![value, outer.clone()])
                .or_else(|u| unsupported(e.span, u.0))?;
            facts.push(Term::implies(condition.clone(), nested));
            return Ok(());
        }
        match &e.kind {
            ExprKind::Binary(BinaryOp::Implies, c, r) => {
                let c = self.expr(st, &reach, c, &ctx)?;
                let under = Term::and([condition.clone(), c]);
                self.nested_in(st, r, &under, outer, domain, facts)
            }
            ExprKind::Cond(c, t, f) => {
                let c = self.expr(st, &reach, c, &ctx)?;
                let then = Term::and([condition.clone(), c.clone()]);
                self.nested_in(st, t, &then, outer, domain, facts)?;
                let otherwise = Term::and([condition.clone(), Term::not(c)]);
                self.nested_in(st, f, &otherwise, outer, domain, facts)
            }
            ExprKind::Binary(_, l, r) => {
                self.nested_in(st, l, condition, outer, domain, facts)?;
                self.nested_in(st, r, condition, outer, domain, facts)
            }
            ExprKind::Unary(_, a) => self.nested_in(st, a, condition, outer, domain, facts),
            _ => Ok(()),
        }
    }
}
