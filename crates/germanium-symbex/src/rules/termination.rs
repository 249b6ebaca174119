//! Termination checks for methods and loops with `decreases` clauses (Viper's termination
//! plugin): a call to a method of the same recursion cluster must decrease the caller's
//! measure (well-founded orders `decreasing`/`bounded` from the `decreases/*.vpr` library,
//! compared lexicographically) under the callee's condition; a call out of the cluster
//! needs the callee's termination condition; a loop body must decrease the loop's measure.

use germanium_semantics::calls::reaches;

use germanium_semantics::Type;
use germanium_smt::Term;
use germanium_syntax::ast::{Decreases, DecreasesKind, Expr, Stmt};
use germanium_syntax::{Diagnostic, Span};

use crate::errors::ErrorContext;
use crate::rules::context::{Verifier, R};
use crate::state::{Heap, State};

/// One `decreases` clause evaluated in a state: it applies under `guard` (its condition,
/// and not that of an earlier clause); `tuple` is `None` for `decreases _`.
#[derive(Clone, Debug)]
pub struct Measure {
    pub guard: Term,
    pub tuple: Option<Vec<(Term, Type)>>,
    pub span: Span,
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// Evaluates `clauses` (binding nothing new: the caller binds parameters). `*` clauses
    /// are left out.
    pub fn measures(&mut self, st: &State, heap: &Heap, clauses: &[Decreases]) -> R<Vec<Measure>> {
        let ctx = ErrorContext::at("termination.failed", Span::default(), "");
        self.with_modes(
            |m| m.checking = false,
            |v| -> R<Vec<Measure>> {
                let mut out = Vec::new();
                let mut earlier = Vec::new();
                for d in clauses {
                    if matches!(d.kind, DecreasesKind::Star) {
                        continue;
                    }
                    let cond = match &d.condition {
                        Some(c) => v.eval(st, heap, c, &ctx)?,
                        None => Term::tt(),
                    };
                    let guard = Term::and(
                        earlier
                            .iter()
                            .map(|c: &Term| Term::not(c.clone()))
                            .chain([cond.clone()]),
                    );
                    earlier.push(cond);
                    let tuple = match &d.kind {
                        DecreasesKind::Tuple(exprs) => {
                            let mut values = Vec::new();
                            for e in exprs {
                                if let Some(instance) =
                                    v.predicate_instance_measure(st, heap, e, &ctx)?
                                {
                                    values.push(instance);
                                    continue;
                                }
                                let ty = v.type_of(e)?;
                                values.push((v.eval(st, heap, e, &ctx)?, ty));
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
            },
        )
    }

    /// `smaller <_lex larger` (see `germanium_theories::measures`).
    pub fn lex_less(
        &mut self,
        smaller: &[(Term, Type)],
        larger: &[(Term, Type)],
        span: Span,
    ) -> R<Term> {
        let result = match &self.env.theories {
            Some(t) => germanium_theories::measures::lex_less(t, self.env.sem, smaller, larger)
                .map_err(|u| u.0),
            None => Err("termination measures need the theory layer".to_string()),
        };
        result.map_err(|why| self.unsupported(span, why))
    }

    fn termination_error(&mut self, reason: &str, span: Span, what: &str) {
        let d = Diagnostic::new(
            format!("termination.failed:{reason}"),
            span,
            format!("Termination of {what} might fail."),
        );
        self.add_error(d);
    }

    /// Reports `reason` at `span` unless `fact` holds (under the current guards).
    pub fn termination_check(&mut self, fact: Term, reason: &str, span: Span, what: &str) -> R<()> {
        if !self.prove(fact.clone(), span)? {
            self.termination_error(reason, span, what);
            self.assume_guarded(fact, span)?;
        }
        Ok(())
    }

    /// The checks at a call of `callee` (parameters already bound to the arguments).
    pub fn check_call_terminates(
        &mut self,
        st: &State,
        heap: &Heap,
        callee: &'a germanium_syntax::ast::Method,
        call: &Stmt,
    ) -> R<()> {
        let caller_measures = self.member.method_measures.clone();
        if caller_measures.iter().all(|m| m.tuple.is_none()) {
            return Ok(()); // no measure, or `decreases _`: nothing to prove
        }
        let caller = self
            .member
            .method
            .map(|m| m.name.name.clone())
            .unwrap_or_default();
        let name = callee.name.name.clone();
        let recursive = reaches(&self.env.call_graph, &name, &caller);
        let callee_measures = self.measures(st, heap, &callee.contract.decreases)?;
        let what = format!("the call of {name}");
        self.compare_measures(
            &caller_measures,
            &callee_measures,
            recursive,
            true,
            call.span,
            &what,
        )
    }

    /// The termination obligations of one call or application: under each caller measure, a
    /// recursive callee's measure must apply and be lexicographically smaller; a non-recursive
    /// callee's termination condition must hold (unless `check_nonrecursive` is false, for a
    /// callee without `decreases`, which Viper does not check).
    pub fn compare_measures(
        &mut self,
        caller_measures: &[Measure],
        callee_measures: &[Measure],
        recursive: bool,
        check_nonrecursive: bool,
        span: Span,
        what: &str,
    ) -> R<()> {
        for m in caller_measures.iter().filter(|m| m.tuple.is_some()) {
            let caller_tuple = m.tuple.clone().unwrap_or_default();
            self.under(m.guard.clone(), |v| {
                let applies = Term::or(
                    callee_measures
                        .iter()
                        .filter(|c| !recursive || c.tuple.is_some())
                        .map(|c| c.guard.clone()),
                );
                if !recursive {
                    if !check_nonrecursive {
                        return Ok(());
                    }
                    return v.termination_check(applies, "termination.condition.false", span, what);
                }
                v.termination_check(applies, "tuple.condition.false", span, what)?;
                for c in callee_measures.iter().filter(|c| c.tuple.is_some()) {
                    let tuple = c.tuple.clone().unwrap_or_default();
                    let less = v.lex_less(&tuple, &caller_tuple, span)?;
                    v.under(c.guard.clone(), |w| {
                        w.termination_check(less, "tuple.false", span, what)
                    })?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    /// At the start of a loop iteration: the loop's measure applies (some clause's condition).
    pub fn loop_measures_at_start(
        &mut self,
        st: &State,
        clauses: &[Decreases],
        while_span: Span,
    ) -> R<Vec<Measure>> {
        let heap = st.heap.clone();
        let measures = self.measures(st, &heap, clauses)?;
        // Only a method that must terminate needs its loops to (their measures still must
        // decrease).
        if !measures.is_empty() && !self.member.method_measures.is_empty() {
            let applies = Term::or(measures.iter().map(|m| m.guard.clone()));
            self.termination_check(
                applies,
                "termination.condition.false",
                while_span,
                "the loop",
            )?;
        }
        Ok(measures)
    }

    /// At the end of an iteration: if the loop goes on, a clause applies again and the
    /// measure decreased.
    pub fn loop_measures_at_end(
        &mut self,
        st: &State,
        clauses: &[Decreases],
        cond: &Expr,
        start: &[Measure],
    ) -> R<()> {
        let heap = st.heap.clone();
        let ctx = ErrorContext::at("termination.failed", cond.span, "");
        let again = self.with_modes(|m| m.checking = false, |v| v.eval(st, &heap, cond, &ctx))?;
        let end = self.measures(st, &heap, clauses)?;
        for (m_start, m_end) in start.iter().zip(&end) {
            let (Some(before), Some(after)) = (&m_start.tuple, &m_end.tuple) else {
                continue;
            };
            let (before, after) = (before.clone(), after.clone());
            let span = m_start.span;
            // Only an iteration after which the loop goes on must decrease the measure.
            self.under(Term::and([m_start.guard.clone(), again.clone()]), |v| {
                v.termination_check(
                    m_end.guard.clone(),
                    "tuple.condition.false",
                    span,
                    "the loop",
                )?;
                let less = v.lex_less(&after, &before, span)?;
                v.termination_check(less, "tuple.false", span, "the loop")
            })?;
        }
        Ok(())
    }
}
