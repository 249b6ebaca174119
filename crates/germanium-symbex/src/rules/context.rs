//! The program-wide environment shared by all workers ([`Env`]) and one worker's verifier
//! ([`Verifier`]): its solver, path conditions, fresh names, guards and collected errors.

use std::collections::{HashMap, HashSet};

use germanium_semantics::Type;
use germanium_smt::{FunDecl, Solver, SolverError, Sort, Term};
use germanium_syntax::ast::Expr;
use germanium_syntax::diagnostic::ids;
use germanium_syntax::{Diagnostic, Span};

use crate::decider::{Budget, Decider};
use crate::env::Env;
use crate::errors::{make_error, ErrorContext, Reason, VerificationError};
use crate::state::{Modes, Permission};
use crate::trace::{NoTrace, Sink};

/// Why the exploration of a path stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Abort {
    /// A failure that ends this path (already reported).
    Failed,
    /// A construct Germanium cannot verify (already reported): the member is abandoned.
    Unsupported,
    /// The solver failed; the member is abandoned with an internal error (already reported).
    Solver,
}

pub type R<T> = Result<T, Abort>;

/// What the rules keep while one member is verified: guards, bound variables, loops and
/// measures, counters. A value: a new member starts from `MemberState::default()`.
#[derive(Default)]
pub struct MemberState<'a> {
    /// Conditions under which the expression being evaluated is reached (`a ==> b`, `c ? a : b`).
    pub guards: Vec<Term>,
    /// The instances unfolded while a function definition is translated (`in_axiom`):
    /// predicate name, snapshot, arguments.
    pub axiom_unfoldings: Vec<(String, Term, Vec<Term>)>,
    /// The `held` facts of the applications made there, each under its guard (see
    /// `Verifier::held_decl`).
    pub axiom_held: Vec<Term>,
    /// The unfoldings (by their access's id) recorded there (see `unrolling_triggers`).
    pub axiom_trigger_unfoldings: HashSet<germanium_syntax::ast::NodeId>,
    /// The function application under `@reveal()` being evaluated.
    pub revealing: Option<germanium_syntax::ast::NodeId>,
    /// Unfolds whose predicate bodies are being produced (nested through `unfolding`s).
    pub body_unfold_depth: usize,
    /// Nesting of quantifier bodies being evaluated (function postconditions are only assumed
    /// outside them).
    pub quantifier_depth: usize,
    /// While a trigger's terms are made: the most quantified chunks a read in it could name
    /// (`Modes::trigger_choice`), so the trigger is read again only where a choice was made.
    pub trigger_choices: usize,
    /// Function postconditions and unfolded bodies assumed inside quantifier bodies, to be
    /// quantified over the bound variables when the quantifier is done.
    pub deferred: Vec<Term>,
    /// The method being verified (for `goto`, which resumes at a label).
    pub method: Option<&'a germanium_syntax::ast::Method>,
    /// The heaps framed around the loops whose bodies are being verified, innermost last
    /// (a `goto` out of a loop takes its frame back).
    pub loop_frames: Vec<crate::rules::jumps::WhileFrame>,
    /// `if` statements on which the current member's paths split, both sides feasible (see
    /// [`crate::env::MAX_BRANCHES_PER_MEMBER`]).
    pub paths_split: usize,
    /// The `decreases` clauses of the function whose body is being checked.
    pub function_measures: Vec<crate::rules::termination::Measure>,
    /// The method's `decreases` clauses evaluated at its entry.
    pub method_measures: Vec<crate::rules::termination::Measure>,
    /// During consumption: the heap `perm(..)` is evaluated in.
    pub perm_heap: Option<crate::state::Heap>,
    /// The loops made of labels of the method's control-flow graph.
    pub loops: crate::rules::jumps::MethodLoops,
    /// `refute` statements whose assertion was not provable on some path (the others are
    /// reported when the member is done, reached or not, as in Viper).
    pub refuted: HashSet<germanium_syntax::ast::NodeId>,
    /// Bound, `let` and callee-parameter variables, innermost last; they shadow the store.
    pub bound: Vec<(germanium_semantics::VarId, Term)>,
    /// The wands being packaged, innermost last: what each takes from the state around it.
    pub packages: Vec<crate::rules::package::PackageFrame>,
    /// Shapes of the wands a `package` checked for well-formedness (an `apply` of the same
    /// wand is not checked again, as in Viper).
    pub wands_checked: HashSet<String>,
    /// The sorts of the holes of each wand shape seen (see `rules::wands`).
    pub wand_holes: HashMap<String, Vec<Sort>>,
    /// The abstract read amounts made so far, with their levels.
    pub reads: crate::state::read_levels::ReadAmounts,
    /// The state checks are made in, for counterexamples (see `rules::counterexample`).
    pub model_state: Option<crate::rules::counterexample::ModelState>,
    /// What the execution log was given in this member (see `rules::trace_scope`).
    pub trace: crate::rules::trace_scope::TraceMemo,
}

/// One worker: a solver session and the state of the member being verified.
pub struct Verifier<'e, 'a> {
    pub env: &'e Env<'a>,
    /// The solver session.
    pub decider: Decider,
    pub errors: Vec<Diagnostic>,
    /// How the rules behave in the current scope (see [`Verifier::with_modes`]).
    pub modes: Modes,
    /// The state of the member being verified, new for each member.
    pub member: MemberState<'a>,
    /// Where the execution log goes (nowhere by default).
    pub trace: Box<dyn Sink>,
    /// Instances being folded and unfolded, for the nesting facts (see `nesting`).
    pub nesting: crate::rules::nesting::Nesting,
    /// Functions whose postconditions an application does not assume: they are known to
    /// fail, and a failed postcondition beside the definition it contradicts would let a
    /// caller prove `false`.
    pub untrusted_posts: HashSet<String>,
}

impl<'e, 'a> Verifier<'e, 'a> {
    pub fn new(env: &'e Env<'a>, solver: Solver, budget: Budget) -> Verifier<'e, 'a> {
        Verifier {
            env,
            decider: {
                let mut d = Decider::new(solver, budget, env.snap.sort.clone());
                d.set_literal_refutes(env.read_permissions);
                d
            },
            errors: Vec::new(),
            modes: Modes::default(),
            member: MemberState::default(),
            trace: Box::new(NoTrace),
            nesting: Default::default(),
            untrusted_posts: HashSet::new(),
        }
    }

    /// Runs `f` with the modes `set` makes; the modes before come back when `f` returns,
    /// whatever it returns (an error included).
    pub fn with_modes<T>(
        &mut self,
        set: impl FnOnce(&mut Modes),
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let saved = self.modes.clone();
        set(&mut self.modes);
        let r = f(self);
        self.modes = saved;
        r
    }

    /// Runs `f` with `heap` as the heap `perm(..)` reads (`None`: the heap being
    /// evaluated), restored afterwards.
    pub fn with_perm_heap<T>(
        &mut self,
        heap: Option<crate::state::Heap>,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let saved = std::mem::replace(&mut self.member.perm_heap, heap);
        let r = f(self);
        self.member.perm_heap = saved;
        r
    }

    /// Turns a solver failure into an internal error on `span`.
    pub fn solver_failed(&mut self, err: SolverError, span: Span) -> Abort {
        self.errors.push(Diagnostic::new(
            ids::INTERNAL,
            span,
            format!("the SMT solver failed: {err}"),
        ));
        Abort::Solver
    }

    pub fn unsupported(&mut self, span: Span, what: impl Into<String>) -> Abort {
        let what = what.into();
        self.errors.push(Diagnostic::new(
            ids::UNSUPPORTED,
            span,
            format!("Germanium's verifier does not support {what} yet"),
        ));
        Abort::Unsupported
    }

    pub fn report(&mut self, context: &ErrorContext, reason: Reason, offending: &Expr) {
        let error: VerificationError = make_error(self.env.sources, context, &reason, offending);
        self.add_error(error.into_diagnostic());
    }

    /// Records a verification error found by the last `prove` (once). When the solver ran
    /// out of its budget on that query, the message says which: the error may be spurious,
    /// and a larger `--timeout` may prove the property.
    pub fn add_error(&mut self, mut diagnostic: Diagnostic) {
        let exhausted = self
            .decider
            .gave_up()
            .and_then(|reason| self.decider.budget().exhausted(reason));
        if let Some(what) = exhausted {
            let hint = if what.contains("memory") {
                ""
            } else {
                ": try a larger --timeout"
            };
            diagnostic.message.push_str(&format!(
                " (The solver gave up: {what}. The property may still hold{hint}.)"
            ));
        }
        if !self.errors.contains(&diagnostic) {
            self.trace_failure(&diagnostic.id, &diagnostic.message, diagnostic.span);
            self.errors.push(diagnostic);
        }
    }

    /// A fresh constant equal to `t` (unless `t` is already atomic): keeps terms small along
    /// a path (values built from earlier values would otherwise grow with every step) and
    /// shows the value to the solver, so quantifiers triggered by it get instantiated.
    ///
    /// Not inside a quantifier's body (whose facts do not outlive it) nor in a function's
    /// definitional axiom (which may mention no constant of this path): there `t` is kept.
    pub fn name_term(&mut self, t: Term, base: &str, span: Span) -> R<Term> {
        if self.modes.in_axiom || self.member.quantifier_depth > 0 {
            return Ok(t);
        }
        let atomic = match t.kind() {
            germanium_smt::TermKind::App(_, args) => args.is_empty(),
            germanium_smt::TermKind::Op(..) | germanium_smt::TermKind::Builtin(..) => false,
            germanium_smt::TermKind::Quantifier(_) | germanium_smt::TermKind::Let(..) => false,
            _ => true,
        };
        let literal = self
            .env
            .theories
            .as_ref()
            .is_some_and(|th| th.is_sequence_literal(&t));
        if atomic || literal {
            return Ok(t);
        }
        let c = self.fresh(base, t.sort().clone(), span)?;
        self.assume(Term::eq(c.clone(), t), span)?;
        Ok(c)
    }

    pub fn fresh(&mut self, base: &str, sort: Sort, span: Span) -> R<Term> {
        self.decider
            .fresh(base, sort)
            .map_err(|e| self.solver_failed(e, span))
    }

    pub fn push(&mut self, span: Span) -> R<()> {
        self.decider.push().map_err(|e| self.solver_failed(e, span))
    }

    pub fn pop(&mut self, span: Span) -> R<()> {
        self.decider.pop().map_err(|e| self.solver_failed(e, span))
    }

    pub fn assume(&mut self, fact: Term, span: Span) -> R<()> {
        self.decider
            .assume(fact)
            .map_err(|e| self.solver_failed(e, span))
    }

    /// The current guard as one term.
    pub fn guard(&self) -> Term {
        Term::and(self.member.guards.iter().cloned())
    }

    /// Assumes `fact` under the current guards.
    pub fn assume_guarded(&mut self, fact: Term, span: Span) -> R<()> {
        let fact = Term::implies(self.guard(), fact);
        self.assume(fact, span)
    }

    /// Whether `fact` holds on the current path (under the current guards). `unknown` and
    /// timeouts count as "not proved".
    pub fn prove(&mut self, fact: Term, span: Span) -> R<bool> {
        let goal = Term::implies(self.guard(), fact.clone());
        if goal.is_true() {
            return Ok(true);
        }
        // A quantified goal over function applications is negated by hand (see `relevance`).
        let negation = match self.skolemized_goal(&fact, span)? {
            Some(facts) => Term::and(std::iter::once(self.guard()).chain(facts)),
            None => Term::not(goal),
        };
        self.decider
            .refutes(&negation)
            .map_err(|e| self.solver_failed(e, span))
    }

    /// [`Verifier::prove`] for a question whose "not proved" only makes the state's terms
    /// longer, never a check fail (see [`crate::decider::Decider::refutes_cheaply`]).
    pub fn prove_cheaply(&mut self, fact: Term, span: Span) -> R<bool> {
        let guard = self.guard();
        crate::resources::proves_cheaply(&mut self.decider, &guard, fact)
            .map_err(|e| self.solver_failed(e, span))
    }

    /// Whether the current path may be feasible (`sat` or `unknown`).
    pub fn feasible(&mut self, extra: Term, span: Span) -> R<bool> {
        self.decider
            .feasible(&extra)
            .map_err(|e| self.solver_failed(e, span))
    }

    /// Checks `fact`; on failure reports `reason` and assumes the fact (as Silicon does) so
    /// one mistake yields one error. Returns whether it was proved.
    pub fn check(
        &mut self,
        fact: Term,
        context: &ErrorContext,
        reason: Reason,
        offending: &Expr,
    ) -> R<bool> {
        if !self.modes.checking {
            return Ok(true);
        }
        if self.prove(fact.clone(), offending.span)? {
            return Ok(true);
        }
        // The query left unproved, for the execution log's failure record (taken when the
        // error is added, so it is never one of an earlier probe) and the counterexample.
        let tracing = self.trace.enabled();
        let negation = (tracing || self.env.counterexamples)
            .then(|| Term::not(Term::implies(self.guard(), fact.clone())));
        if tracing {
            self.member.trace.unproved = negation.clone();
        }
        self.report(context, reason, offending);
        self.member.trace.unproved = None;
        if let (true, Some(negation)) = (self.env.counterexamples, &negation) {
            let found = self.counterexample(negation, offending);
            if let Some(error) = self.errors.last_mut() {
                error.counterexample = Some(Box::new(found));
            }
        }
        self.assume_guarded(fact, offending.span)?;
        Ok(false)
    }

    /// Declares `decl` in this solver once.
    pub fn ensure_declared(&mut self, decl: &FunDecl, span: Span) -> R<()> {
        self.decider
            .declare(decl)
            .map_err(|e| self.solver_failed(e, span))
    }

    /// `value` as a snapshot.
    pub fn wrap(&mut self, value: Term, span: Span) -> R<Term> {
        self.decider
            .wrap(value)
            .map_err(|e| self.solver_failed(e, span))
    }

    /// The value of sort `sort` that snapshot `s` wraps.
    pub fn unwrap(&mut self, s: Term, sort: &Sort, span: Span) -> R<Term> {
        self.decider
            .unwrap(s, sort)
            .map_err(|e| self.solver_failed(e, span))
    }

    /// `amount` times the current scale (see `perm_scale`).
    pub fn scaled(&self, amount: Permission) -> Permission {
        match &self.modes.perm_scale {
            Some(scale) if *scale != Permission::write() => {
                Permission(Term::mul(vec![scale.0.clone(), amount.0]))
            }
            _ => amount,
        }
    }

    pub fn sort_of(&mut self, ty: &Type, span: Span) -> R<Sort> {
        match self.env.sort_of(ty) {
            Ok(s) => Ok(s),
            Err(why) => Err(self.unsupported(span, why)),
        }
    }

    pub fn type_of(&mut self, e: &Expr) -> R<Type> {
        match self.env.sem.type_of(e.id) {
            Some(t) => Ok(t.clone()),
            None => Err(self.unsupported(e.span, "an expression without a type")),
        }
    }
}
