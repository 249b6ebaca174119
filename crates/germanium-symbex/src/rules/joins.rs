//! Joining paths after an `if`: both sides run to their ends, and when each side ends in
//! one state and the two hold the same chunks, the rest of the method runs once, from one
//! state whose differing values are fresh constants defined per side and whose path
//! conditions are each side's facts under its condition. `n` independent `if`s then cost
//! about `n` rather than `2^n` paths. Otherwise each end state continues on its own,
//! with the facts of its path assumed again, as if the paths had never met.

use std::collections::HashMap;

use germanium_smt::{Term, TermKind};
use germanium_syntax::ast::Stmt;

use crate::resources;
use crate::rules::context::{Verifier, R};
use crate::rules::execute::{path_end, Cont};
use crate::state::State;
use crate::trace::Step;

/// A state at the end of one side of an `if`, with the facts its path assumed there.
struct PathEnd {
    state: State,
    facts: Vec<Term>,
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// Runs the feasible `sides` of the `if` `s` (each a condition and its statements) from
    /// `st`, then `k` on the joined state or on each end state.
    pub(crate) fn exec_sides(
        &mut self,
        st: State,
        s: &Stmt,
        cond: &Term,
        sides: Vec<(Term, &[Stmt])>,
        k: &mut Cont<'_, 'e, 'a>,
    ) -> R<()> {
        // An `if` that tests again the bounds of a term this path bounded or tested is not
        // joined: its sides mostly decide later tests of that term without the solver (`n`
        // tests `x > i` make `n + 1` short paths), where a join would leave the solver a
        // disjunction per test to split on in every later query.
        let joinable = !self.decider.tests_again(cond);
        let mut ends: Vec<(Term, Vec<PathEnd>)> = Vec::new();
        for (guard, stmts) in sides {
            let detail = || format!("branch: {guard}");
            let reached = self.traced(Step::Branch, s.span, None, detail, |v| {
                let base = v.decider.depth();
                v.push(s.span)?;
                let mut reached = Vec::new();
                let r = v.assume(guard.clone(), s.span).and_then(|_| {
                    v.exec_seq(st.clone(), stmts, &mut |v: &mut Verifier<'e, 'a>, end| {
                        let facts = v.decider.assumptions_above(base);
                        reached.push(PathEnd { state: end, facts });
                        Ok(())
                    })
                });
                v.pop(s.span)?;
                path_end(r)?;
                Ok(reached)
            })?;
            ends.push((guard, reached));
        }
        if let ([(then_guard, then), (_, otherwise)], true) = (ends.as_slice(), joinable) {
            if let ([a], [b]) = (then.as_slice(), otherwise.as_slice()) {
                if let Some(joined) = self.join_ends(then_guard, a, b, s)? {
                    self.decider.note_tested(cond);
                    let view = self.view_of(&joined, &joined.heap);
                    let detail = || "paths joined".to_string();
                    return self.traced(Step::Branch, s.span, view, detail, |v| k(v, joined));
                }
            }
        }
        let count: usize = ends.iter().map(|(_, e)| e.len()).sum();
        self.member.paths_split += count.saturating_sub(1);
        if count > 1 && self.member.paths_split > self.env.max_branches {
            let limit = self.env.max_branches;
            return Err(self.unsupported(
                s.span,
                format!(
                    "exploring more than {limit} paths in one member (paths that cannot be joined)"
                ),
            ));
        }
        for end in ends.into_iter().flat_map(|(_, e)| e) {
            self.push(s.span)?;
            let r = self
                .assume_all(end.facts, s)
                .and_then(|_| k(self, end.state));
            self.pop(s.span)?;
            path_end(r)?;
        }
        Ok(())
    }

    fn assume_all(&mut self, facts: Vec<Term>, s: &Stmt) -> R<()> {
        for fact in facts {
            self.assume(fact, s.span)?;
        }
        Ok(())
    }

    /// The state that is `a` where `cond` holds and `b` elsewhere, with each side's facts
    /// assumed under its condition; `None` where the two cannot be one state (different
    /// chunks or labelled heaps, or a reference that differs).
    fn join_ends(&mut self, cond: &Term, a: &PathEnd, b: &PathEnd, s: &Stmt) -> R<Option<State>> {
        let reference = self.env.null().sort().clone();
        if a.state.old_heaps != b.state.old_heaps
            || a.state.store.len() != b.state.store.len()
            || a.state.label_loops != b.state.label_loops
        {
            return Ok(None);
        }
        let mut vars: Vec<_> = a.state.store.keys().copied().collect();
        vars.sort();
        let mut differing = Vec::new();
        for var in vars {
            let (Some(x), Some(y)) = (a.state.store.get(&var), b.state.store.get(&var)) else {
                return Ok(None);
            };
            if x != y {
                if *x.sort() == reference {
                    return Ok(None);
                }
                differing.push((var, x.clone(), y.clone()));
            }
        }
        let (then_defs, else_defs) = (definitions(&a.facts), definitions(&b.facts));
        let definitions = (&then_defs, &else_defs);
        let heap = resources::join(
            &mut self.decider,
            cond,
            (&a.state.heap, &b.state.heap),
            &reference,
            definitions,
        )
        .map_err(|e| self.solver_failed(e, s.span))?;
        let Some(heap) = heap else {
            return Ok(None);
        };
        let not_cond = Term::not(cond.clone());
        self.assume(
            Term::implies(cond.clone(), Term::and(a.facts.clone())),
            s.span,
        )?;
        self.assume(Term::implies(not_cond, Term::and(b.facts.clone())), s.span)?;
        let mut joined = State {
            store: a.state.store.clone(),
            heap,
            old_heaps: a.state.old_heaps.clone(),
            label_loops: a.state.label_loops.clone(),
        };
        for (var, x, y) in differing {
            let name = self.env.sem.var(var).name.clone();
            let v = resources::join_value(&mut self.decider, cond, (&x, &y), &name, definitions)
                .map_err(|e| self.solver_failed(e, s.span))?;
            joined.store.insert(var, v);
        }
        Ok(Some(joined))
    }
}

/// The named values among `facts`: `c = t` with `c` a constant, first definition kept.
fn definitions(facts: &[Term]) -> HashMap<Term, Term> {
    let mut out = HashMap::new();
    for fact in facts {
        if let Some((germanium_smt::Op::Eq, [name, value])) = fact.as_op() {
            if matches!(name.kind(), TermKind::App(_, args) if args.is_empty()) {
                out.entry(name.clone()).or_insert_with(|| value.clone());
            }
        }
    }
    out
}
