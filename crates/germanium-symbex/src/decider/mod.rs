//! The decider: one worker's solver session as the rules see it. Fresh names and
//! declarations, assumptions in lock-step with the solver's scopes (path conditions),
//! validity and satisfiability queries under the run's deterministic [`Budget`], snapshot
//! wrapping of values, and the checkpoint every member session starts from.
//!
//! Architecture invariant: knows terms and the solver, nothing of Viper's syntax, the heap
//! or the rules; a solver failure is returned as [`SolverError`] for the caller to report.

mod bounds;
pub mod budget;
mod path_conditions;

use std::collections::{HashMap, HashSet};

use germanium_smt::{
    FunDecl, NameGenerator, Op, SatResult, Solver, SolverError, Sort, Symbol, Term, TermKind,
};

pub use budget::Budget;
pub use path_conditions::PathConditions;

/// The outcome of [`Decider::refutes_or_explains`].
#[derive(Clone, Debug, PartialEq)]
pub enum Refutation {
    /// The negation is unsatisfiable: what it negates holds on this path.
    Proved,
    /// Not proved: `sat` (a real counterexample) or `unknown`, with the values of the
    /// wanted terms in the solver's model where it had one.
    NotProved {
        answer: SatResult,
        values: Option<Vec<germanium_smt::Value>>,
    },
}

/// From the values of a first round, more terms to read and facts keeping what chose them
/// (see [`Decider::explain_in_fork`]).
pub type SecondRound<'a> = dyn Fn(&[germanium_smt::Value]) -> SecondAsk + 'a;

/// What a second round of a counterexample asks (see [`Decider::explain_in_fork`]).
#[derive(Debug, Default)]
pub struct SecondAsk {
    /// Fresh constants to declare first.
    pub declare: Vec<FunDecl>,
    /// Facts about them and about the first round's values.
    pub facts: Vec<Term>,
    /// The terms whose values are wanted.
    pub more: Vec<Term>,
}

/// A solver session and what this worker knows about it.
pub struct Decider {
    solver: Solver,
    budget: Budget,
    pcs: PathConditions,
    caches: SolverCaches,
    /// The caches at the checkpoint every member session starts from.
    member_start: Option<SolverCaches>,
    /// Why the solver gave up on the last query (`None`: it answered).
    gave_up: Option<String>,
    /// The sort snapshots are wrapped into.
    snap_sort: Sort,
    /// The constants [`Decider::fresh`] made, in order (see [`Decider::fresh_since`]).
    fresh_made: Vec<Term>,
    /// The functions [`Decider::declare`] declared in this member, in order (see
    /// [`Decider::declared_since`]).
    declared_made: Vec<Symbol>,
    /// Whether [`Decider::refutes`] answers without a query where the path assumes the
    /// fact literally (see [`Decider::set_literal_refutes`]).
    literal_refutes: bool,
}

/// What this worker knows about its solver's declarations, restored with the checkpoint.
#[derive(Clone, Default)]
struct SolverCaches {
    names: NameGenerator,
    /// Functions declared so far (declarations are global and survive `pop`).
    declared: HashSet<Symbol>,
    wraps: HashMap<Sort, FunDecl>,
    /// The inverses of `wraps`.
    unwraps: HashMap<Sort, FunDecl>,
    /// Named groups of axioms this solver has (e.g. a function's definition).
    defined: HashSet<String>,
}

impl Decider {
    pub fn new(solver: Solver, budget: Budget, snap_sort: Sort) -> Decider {
        Decider {
            solver,
            budget,
            pcs: PathConditions::default(),
            caches: SolverCaches::default(),
            member_start: None,
            gave_up: None,
            snap_sort,
            fresh_made: Vec::new(),
            declared_made: Vec::new(),
            literal_refutes: false,
        }
    }

    /// Turns on answering validity queries about literally assumed facts without the
    /// solver (for programs with abstract read permissions, whose bounds are assumed in the
    /// shape the checks after them ask).
    pub fn set_literal_refutes(&mut self, on: bool) {
        self.literal_refutes = on;
    }

    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// The solver's counters (queries, time, resource units, bytes sent) so far.
    pub fn solver_stats(&self) -> &germanium_smt::SolverStats {
        self.solver.stats()
    }

    /// Why the solver gave up on the last query, if it did.
    pub fn gave_up(&self) -> Option<&str> {
        self.gave_up.as_deref()
    }

    /// A fresh symbol (not declared) derived from `base`.
    pub fn fresh_symbol(&mut self, base: &str) -> Symbol {
        self.caches.names.fresh(base)
    }

    /// A fresh constant of `sort`, declared.
    pub fn fresh(&mut self, base: &str, sort: Sort) -> Result<Term, SolverError> {
        let decl = FunDecl::constant(self.caches.names.fresh(&format!("sx.{base}")), sort);
        self.solver.declare_fun(&decl)?;
        let constant = Term::constant(&decl);
        self.fresh_made.push(constant.clone());
        Ok(constant)
    }

    /// A mark for [`Decider::fresh_since`].
    pub fn fresh_mark(&self) -> usize {
        self.fresh_made.len()
    }

    /// The constants made fresh since `mark`.
    pub fn fresh_since(&self, mark: usize) -> &[Term] {
        self.fresh_made.get(mark..).unwrap_or(&[])
    }

    /// Declares `decl` in this solver once.
    pub fn declare(&mut self, decl: &FunDecl) -> Result<(), SolverError> {
        if self.caches.declared.insert(decl.name().clone()) {
            self.declared_made.push(decl.name().clone());
            self.solver.declare_fun(decl)?;
        }
        Ok(())
    }

    pub fn declare_sort(&mut self, name: &Symbol) -> Result<(), SolverError> {
        self.solver.declare_sort(name)
    }

    /// A mark for [`Decider::declared_since`].
    pub fn declared_mark(&self) -> usize {
        self.declared_made.len()
    }

    /// The functions declared since `mark` (in this member).
    pub fn declared_since(&self, mark: usize) -> &[Symbol] {
        self.declared_made.get(mark..).unwrap_or(&[])
    }

    /// How many functions have been declared (for unique names of declarations made
    /// outside the name generator).
    pub fn declared_count(&self) -> usize {
        self.caches.declared.len()
    }

    /// Whether the axioms named `name` were added (see [`Decider::set_defined`]).
    pub fn is_defined(&self, name: &str) -> bool {
        self.caches.defined.contains(name)
    }

    pub fn set_defined(&mut self, name: &str) {
        self.caches.defined.insert(name.to_string());
    }

    /// Sends commands made elsewhere (a theory's declarations and axioms).
    pub fn send(&mut self, commands: &[germanium_smt::Command]) -> Result<(), SolverError> {
        use germanium_smt::Command;
        for command in commands {
            match command {
                Command::DeclareSort(name) => self.solver.declare_sort(name)?,
                Command::DeclareFun(decl) => self.solver.declare_fun(decl)?,
                Command::Assert { term, .. } => self.solver.assert(term)?,
                Command::Raw(text) => self.solver.raw(text)?,
                Command::DefineFun {
                    name,
                    params,
                    result,
                    body,
                } => self
                    .solver
                    .define_fun(name, params.clone(), result.clone(), body.clone())?,
                _ => {}
            }
        }
        Ok(())
    }

    pub fn push(&mut self) -> Result<(), SolverError> {
        self.pcs.push(&mut self.solver)
    }

    pub fn pop(&mut self) -> Result<(), SolverError> {
        self.pcs.pop(&mut self.solver)
    }

    /// A mark for [`Decider::facts_since`] (facts of the innermost scope).
    pub fn facts_mark(&self) -> usize {
        self.pcs.facts_mark()
    }

    /// The facts assumed in the innermost scope since `mark`.
    pub fn facts_since(&self, mark: usize) -> Vec<Term> {
        self.pcs.facts_since(mark)
    }

    /// The number of open scopes.
    pub fn depth(&self) -> usize {
        self.pcs.depth()
    }

    pub fn assume(&mut self, fact: Term) -> Result<(), SolverError> {
        self.pcs.assume(&mut self.solver, fact)
    }

    /// Whether `fact` is literally assumed on the current path (no solver call).
    pub fn assumes_literally(&self, fact: &Term) -> bool {
        self.pcs.assumes_literally(fact)
    }

    /// Whether the literal path conditions decide `fact` without the solver (see
    /// [`bounds`]): `Some(true)` implied, `Some(false)` contradicted, `None` unknown.
    pub fn decides(&self, fact: &Term) -> Option<bool> {
        self.pcs.decides(fact)
    }

    /// Whether `fact` holds on this path without a query: literally true, assumed as it
    /// is, or implied by the literal integer bounds.
    pub fn knows(&self, fact: &Term) -> bool {
        fact.as_bool() == Some(true)
            || self.assumes_literally(fact)
            || self.decides(fact) == Some(true)
    }

    /// Records that a joined `if` tested the integer bound `fact` on this path.
    pub fn note_tested(&mut self, fact: &Term) {
        self.pcs.note_tested(fact)
    }

    /// Whether `fact` bounds an integer term the path already bounds or tested.
    pub fn tests_again(&self, fact: &Term) -> bool {
        self.pcs.tests_again(fact)
    }

    /// The facts assumed in the scopes opened above `depth` (see [`Decider::depth`]).
    pub fn assumptions_above(&self, depth: usize) -> Vec<Term> {
        self.pcs.above(depth)
    }

    /// Every fact on the current path, outermost first (for the execution log).
    pub fn path_facts(&self) -> impl Iterator<Item = &Term> {
        self.pcs.all()
    }

    /// The facts assumed in the innermost scope.
    pub fn innermost_assumptions(&self) -> &[Term] {
        self.pcs.innermost()
    }

    /// Whether `negation` is unsatisfiable on the current path, i.e. what it negates is
    /// valid. `unknown` (recorded in [`Decider::gave_up`]) counts as not proved.
    pub fn refutes(&mut self, negation: &Term) -> Result<bool, SolverError> {
        // The negation of a fact the path assumes as it is needs no query (where turned
        // on: a query fewer changes what the solver has learnt for later ones).
        if let (true, TermKind::Op(Op::Not, args)) = (self.literal_refutes, negation.kind()) {
            if args.len() == 1 && self.pcs.assumes_literally(&args[0]) {
                return Ok(true);
            }
        }
        let outcome = self.refutes_or_explains(negation, &[])?;
        Ok(outcome == Refutation::Proved)
    }

    /// Like [`Decider::refutes`], for a question whose "not proved" costs only the
    /// precision of how the state is written, never a check (may an old chunk's value be
    /// kept, may an exhausted chunk be dropped): it gets a feasibility check's share of the
    /// budget, so a question Z3 cannot settle does not cost a whole query's.
    pub fn refutes_cheaply(&mut self, negation: &Term) -> Result<bool, SolverError> {
        Ok(self.check_with(negation)? == SatResult::Unsat)
    }

    /// Like [`Decider::refutes`], but when `negation` is not refuted, reads the values of
    /// `wanted` in the solver's model *inside* the query's scope (after the scope is popped
    /// the model is gone): what a counterexample is made of. `None` where the solver has no
    /// model to give (it gave up without one).
    pub fn refutes_or_explains(
        &mut self,
        negation: &Term,
        wanted: &[Term],
    ) -> Result<Refutation, SolverError> {
        self.solver.push()?;
        let result = self
            .solver
            .assert(negation)
            .and_then(|_| self.solver.check_sat(self.budget.proof_limits()));
        let explained = match &result {
            Ok(SatResult::Unsat) | Err(_) => None,
            // A model of an `unknown` answer may not satisfy the query: still worth showing,
            // marked as such by the answer the caller sees.
            Ok(_) => self.solver.get_value(wanted).ok(),
        };
        let popped = self.solver.pop(1);
        let result = self.within_budget(result?)?;
        popped?;
        self.gave_up = match &result {
            SatResult::Unknown(reason) => Some(reason.clone()),
            _ => None,
        };
        Ok(match result {
            SatResult::Unsat => Refutation::Proved,
            answer => Refutation::NotProved {
                answer,
                values: explained,
            },
        })
    }

    /// Like [`Decider::refutes_or_explains`], asked of a second solver process in this
    /// one's state (so this one, and every later answer of it, stays as it is), with a
    /// second round of values: `then` asks, from the first round's values, for more terms
    /// (a sequence's elements once its length is known; fresh constants it declares, such
    /// as a set's elements, with facts that make them so) and facts that keep what chose
    /// them (the length); the new terms are made terms of the query (each named by a
    /// constant) so the solver's axioms about them apply. All values come from one model,
    /// the first round's followed by the second's; when the second round cannot be
    /// answered, the first round's values alone.
    pub fn explain_in_fork(
        &self,
        negation: &Term,
        wanted: &[Term],
        then: &SecondRound<'_>,
    ) -> Result<Refutation, SolverError> {
        let mut fork = self.solver.fork()?;
        fork.push()?;
        fork.assert(negation)?;
        // As `refutes_or_explains` asks it: a counterexample never changes a verdict.
        let answer = fork.check_sat(self.budget.proof_limits())?;
        if answer == SatResult::Unsat {
            return Ok(Refutation::Proved);
        }
        let mut values = fork.get_value(wanted).ok();
        if let Some(first) = &values {
            let ask = then(first);
            if !ask.more.is_empty() {
                for decl in &ask.declare {
                    fork.declare_fun(decl)?;
                }
                let mut facts = ask.facts;
                for (i, t) in ask.more.iter().enumerate() {
                    let name =
                        FunDecl::constant(Symbol::user(&format!("sx.ce.{i}")), t.sort().clone());
                    fork.declare_fun(&name)?;
                    facts.push(Term::eq(Term::constant(&name), t.clone()));
                }
                fork.assert(&Term::and(facts))?;
                let again = fork.check_sat(self.budget.limits())?;
                let all: Vec<Term> = wanted.iter().chain(&ask.more).cloned().collect();
                let both = (again != SatResult::Unsat)
                    .then(|| fork.get_value(&all).ok())
                    .flatten();
                if both.is_some() {
                    values = both;
                }
            }
        }
        Ok(Refutation::NotProved { answer, values })
    }

    /// Whether the current path with `extra` may be feasible (`sat` or `unknown`).
    pub fn feasible(&mut self, extra: &Term) -> Result<bool, SolverError> {
        if extra.is_false() {
            return Ok(false);
        }
        Ok(self.check_with(extra)? != SatResult::Unsat)
    }

    /// Satisfiability of the path conditions and `extra`, in a scope of its own.
    fn check_with(&mut self, extra: &Term) -> Result<SatResult, SolverError> {
        self.solver.push()?;
        let result = self
            .solver
            .assert(extra)
            .and_then(|_| self.solver.check_sat(self.budget.check_limits()));
        let popped = self.solver.pop(1);
        let result = self.within_budget(result?)?;
        popped?;
        Ok(result)
    }

    /// `answer`, unless a clock stopped the query: then no answer at all. A verdict may
    /// rest only on the deterministic budget (Z3's resource units): a query the clock
    /// stopped would be answered on a quieter machine, so it becomes an error of the
    /// machine's limit (an `internal` error of the member), never a failed check.
    fn within_budget(&self, answer: SatResult) -> Result<SatResult, SolverError> {
        match &answer {
            SatResult::Unknown(reason) if answer.is_clock_limit() => {
                let what = self.budget.exhausted(reason);
                Err(SolverError::MachineLimit(
                    what.unwrap_or_else(|| reason.clone()),
                ))
            }
            _ => Ok(answer),
        }
    }

    /// `value` as a snapshot.
    pub fn wrap(&mut self, value: Term) -> Result<Term, SolverError> {
        let sort = value.sort().clone();
        let (wrap, _) = self.wrap_decls(&sort)?;
        Ok(Term::app(&wrap, vec![value]))
    }

    /// The value of sort `sort` that snapshot `s` wraps.
    pub fn unwrap(&mut self, s: Term, sort: &Sort) -> Result<Term, SolverError> {
        let (_, unwrap) = self.wrap_decls(sort)?;
        Ok(Term::app(&unwrap, vec![s]))
    }

    /// The wrapping function of `sort` and its inverse, declared (with the axiom
    /// `unwrap(wrap(v)) = v`) on first use. Called at the outermost solver level for the
    /// sorts of fields (see the preamble), so the axiom outlives every member's scope.
    pub fn wrap_decls(&mut self, sort: &Sort) -> Result<(FunDecl, FunDecl), SolverError> {
        if let (Some(w), Some(u)) = (self.caches.wraps.get(sort), self.caches.unwraps.get(sort)) {
            return Ok((w.clone(), u.clone()));
        }
        let n = self.caches.wraps.len();
        let wrap = FunDecl::new(
            Symbol::user(&format!("sx.wrap{n}")),
            vec![sort.clone()],
            self.snap_sort.clone(),
        );
        let unwrap = FunDecl::new(
            Symbol::user(&format!("sx.unwrap{n}")),
            vec![self.snap_sort.clone()],
            sort.clone(),
        );
        self.declare(&wrap)?;
        self.declare(&unwrap)?;
        let v = Symbol::user("sx.v");
        let var = Term::var(v.clone(), sort.clone());
        let wrapped = Term::app(&wrap, vec![var.clone()]);
        let axiom = Term::forall(
            vec![(v, sort.clone())],
            Term::eq(Term::app(&unwrap, vec![wrapped.clone()]), var),
            vec![vec![wrapped]],
        );
        self.solver.assert(&axiom)?;
        self.caches.wraps.insert(sort.clone(), wrap.clone());
        self.caches.unwraps.insert(sort.clone(), unwrap.clone());
        Ok((wrap, unwrap))
    }

    /// Marks the current state (after the preamble) as the one every member session
    /// starts from.
    pub fn mark_member_start(&mut self) -> Result<(), SolverError> {
        self.solver.checkpoint()?;
        self.member_start = Some(self.caches.clone());
        Ok(())
    }

    /// Returns the solver to the state marked by [`Decider::mark_member_start`], so a
    /// session's queries do not depend on what this worker verified before.
    pub fn rewind_to_member_start(&mut self) -> Result<(), SolverError> {
        let Some(start) = self.member_start.clone() else {
            return Ok(());
        };
        self.solver.rewind()?;
        self.caches = start;
        self.pcs = PathConditions::default();
        Ok(())
    }

    /// Opens the scope of one member (closed by [`Decider::end_member`]).
    pub fn begin_member(&mut self) -> Result<usize, SolverError> {
        self.fresh_made.clear();
        self.declared_made.clear();
        let depth = self.pcs.depth();
        self.pcs.push(&mut self.solver)?;
        Ok(depth)
    }

    /// Closes every scope above `depth`; restarts the solver when it cannot.
    pub fn end_member(&mut self, depth: usize) {
        while self.pcs.depth() > depth {
            if self.pcs.pop(&mut self.solver).is_err() {
                let _ = self.solver.restart();
            }
        }
    }

    /// Starts a fresh solver process in the state the failed one should have had.
    pub fn restart(&mut self) -> Result<(), SolverError> {
        self.solver.restart()
    }
}

#[cfg(test)]
mod tests;
