//! The program-wide environment shared by all workers ([`Env`]) and one worker's verifier
//! ([`Verifier`]): its solver, path conditions, fresh names, guards and collected errors.

use std::collections::{HashMap, HashSet};

use germanium_semantics::{Semantics, Type};
use germanium_smt::{FunDecl, SatResult, Solver, SolverError, Sort, Symbol, Term};
use germanium_syntax::ast::{Expr, Function, ItemKind, Method, Program};
use germanium_syntax::diagnostic::ids;
use germanium_syntax::{Diagnostic, SourceMap, Span};

use crate::budget::Budget;
use crate::errors::{make_error, ErrorContext, Reason, VerificationError};
use crate::state::snapshot::SnapDecls;
use crate::state::{PathConditions, Permission};
use germanium_theories::Theories;

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

/// Read-only facts about the program, shared by the workers.
pub struct Env<'a> {
    pub sem: &'a Semantics,
    pub sources: &'a SourceMap,
    /// `None` while the theory layer cannot handle this program: then only Int, Bool, Perm
    /// and Ref are supported.
    pub theories: Option<Theories>,
    pub snap: SnapDecls,
    pub ref_sort: Sort,
    /// `null`, and its declaration when the theory layer does not declare it.
    pub null: Term,
    pub null_decl: Option<FunDecl>,
    pub methods: HashMap<String, &'a Method>,
    pub functions: HashMap<String, &'a Function>,
    pub predicates: HashMap<String, &'a germanium_syntax::ast::Predicate>,
    /// Functions annotated `@opaque()`: their bodies are not revealed to callers.
    pub opaque: HashSet<String>,
    /// The limits of each solver query.
    pub budget: Budget,
    /// `if` branches one member may explore (see [`MAX_BRANCHES_PER_MEMBER`]).
    pub max_branches: usize,
    /// Which methods each method calls.
    pub call_graph: HashMap<String, HashSet<String>>,
    /// Which functions each function mentions.
    pub function_call_graph: HashMap<String, HashSet<String>>,
    /// Viper functions that domain axioms mention (declared before the axioms).
    pub axiom_functions: Vec<FunDecl>,
}

impl<'a> Env<'a> {
    pub fn new(
        program: &'a Program,
        sem: &'a Semantics,
        sources: &'a SourceMap,
        budget: Budget,
    ) -> Env<'a> {
        // Heap-independent Viper functions called in domain axioms: `sx.fn.f(unit, args)`,
        // as in method bodies (their snapshot is the unit).
        let snap = SnapDecls::new();
        let axiom_functions: std::cell::RefCell<Vec<FunDecl>> = Default::default();
        let calls = |name: &str, args: Vec<Term>| -> Option<Term> {
            let function = program.items.iter().find_map(|item| match &item.kind {
                ItemKind::Function(f) if f.name.name == name => Some(f),
                _ => None,
            })?;
            if function
                .contract
                .requires
                .iter()
                .any(|pre| crate::produce::is_impure(sem, pre))
            {
                return None;
            }
            let result = match &sem.functions.get(name)?.result {
                Type::Int => Sort::Int,
                Type::Bool => Sort::Bool,
                Type::Perm => Sort::Real,
                _ => return None,
            };
            let mut sorts = vec![snap.sort.clone()];
            sorts.extend(args.iter().map(|a| a.sort().clone()));
            let decl = FunDecl::new(Symbol::user(&format!("sx.fn.{name}")), sorts, result);
            axiom_functions.borrow_mut().push(decl.clone());
            let mut full = vec![snap.unit()];
            full.extend(args);
            Some(Term::app(&decl, full))
        };
        let theories = Theories::with_functions(program, sem, &calls).ok();
        let axiom_functions = axiom_functions.into_inner();
        let ref_sort = match &theories {
            Some(t) => t.sort(&Type::Ref).unwrap_or_else(|_| Sort::named("Ref")),
            None => Sort::Uninterpreted(Symbol::user("sx.Ref")),
        };
        let (null, null_decl) = match &theories {
            Some(t) => (t.null(), None),
            None => {
                let decl = FunDecl::constant(Symbol::user("sx.null"), ref_sort.clone());
                (Term::constant(&decl), Some(decl))
            }
        };
        let mut methods = HashMap::new();
        let mut functions = HashMap::new();
        let mut predicates = HashMap::new();
        let mut opaque = HashSet::new();
        for item in &program.items {
            match &item.kind {
                ItemKind::Method(m) => {
                    methods.insert(m.name.name.clone(), m);
                }
                ItemKind::Function(f) => {
                    functions.insert(f.name.name.clone(), f);
                    if item.annotations.iter().any(|a| a.name.name == "opaque") {
                        opaque.insert(f.name.name.clone());
                    }
                }
                ItemKind::Predicate(p) => {
                    predicates.insert(p.name.name.clone(), p);
                }
                _ => {}
            }
        }
        Env {
            sem,
            sources,
            theories,
            snap,
            ref_sort,
            null,
            null_decl,
            methods,
            functions,
            predicates,
            opaque,
            budget,
            max_branches: MAX_BRANCHES_PER_MEMBER,
            call_graph: crate::termination::call_graph(program, sem),
            function_call_graph: crate::function_bodies::function_call_graph(program, sem),
            axiom_functions,
        }
    }

    /// The SMT sort of a Viper type.
    pub fn sort_of(&self, ty: &Type) -> Result<Sort, String> {
        match ty {
            Type::Int => Ok(Sort::Int),
            Type::Bool => Ok(Sort::Bool),
            Type::Perm => Ok(Sort::Real),
            Type::Ref => Ok(self.ref_sort.clone()),
            _ => match &self.theories {
                Some(t) => t.sort(ty).map_err(|u| u.0),
                None => Err(format!("values of type {ty} are not supported yet")),
            },
        }
    }

    pub fn null(&self) -> Term {
        self.null.clone()
    }
}

/// One worker: a solver session and the state of the member being verified.
pub struct Verifier<'e, 'a> {
    pub env: &'e Env<'a>,
    pub solver: Solver,
    pub pcs: PathConditions,
    pub names: germanium_smt::NameGenerator,
    pub errors: Vec<Diagnostic>,
    /// Why the solver gave up on the last `prove` (`None`: it answered), so an error
    /// reported from that query can say it may be spurious.
    pub gave_up: Option<String>,
    /// Conditions under which the expression being evaluated is reached (`a ==> b`, `c ? a : b`).
    pub guards: Vec<Term>,
    /// Functions declared in this solver so far (declarations are global and survive `pop`).
    pub declared: HashSet<Symbol>,
    pub wraps: HashMap<Sort, FunDecl>,
    /// The inverses of `wraps`.
    pub unwraps: HashMap<Sort, FunDecl>,
    /// Amounts of permission in the assertion being produced or consumed are multiplied by
    /// this (the amount of a predicate instance being folded or unfolded).
    pub perm_scale: Option<Permission>,
    /// Set while a function's definition is translated into an axiom: applications use
    /// the limited versions and nothing is checked.
    pub in_axiom: bool,
    /// The function whose body is being verified.
    pub current_function: Option<String>,
    /// The instances unfolded while a function definition is translated (`in_axiom`):
    /// predicate name, snapshot, arguments.
    pub axiom_unfoldings: Vec<(String, Term, Vec<Term>)>,
    /// The unfoldings (by their access's id) recorded there (see `unrolling_triggers`).
    pub axiom_trigger_unfoldings: HashSet<germanium_syntax::ast::NodeId>,
    /// Consumption needs only some positive amount of each permission (Viper's semantics of
    /// function preconditions and of unfoldings inside functions).
    pub positive_only: bool,
    /// The function application under `@reveal()` being evaluated.
    pub revealing: Option<germanium_syntax::ast::NodeId>,
    /// Unfolds whose predicate bodies are being produced (nested through `unfolding`s).
    pub body_unfold_depth: usize,
    /// Functions whose definitional axiom this worker's solver has.
    pub defined: HashSet<String>,
    /// Nesting of quantifier bodies being evaluated (function postconditions are only assumed
    /// outside them).
    pub quantifier_depth: usize,
    /// Set while a function's postcondition is being assumed (a postcondition mentioning
    /// the function itself must not be unfolded again).
    pub in_function_post: bool,
    /// Field reads without permission yield unconstrained values instead of errors (when
    /// well-definedness is checked separately, as for loop invariants).
    pub lenient_reads: bool,
    /// Consumption assumes instead of checking (impure `assume`).
    pub assuming: bool,
    /// Production takes the exhale part `b` of `[a, b]` (to check contracts' well-formedness
    /// in both readings).
    pub exhale_parts: bool,
    /// Evaluation without checks of expressions known to be well-defined (a callee's
    /// verified postcondition): function postconditions are still assumed.
    pub trusted: bool,
    /// Function postconditions assumed inside quantifier bodies, to be quantified over the
    /// bound variables when the quantifier is done.
    pub deferred: Vec<Term>,
    /// The method being verified (for `goto`, which resumes at a label).
    pub method: Option<&'a germanium_syntax::ast::Method>,
    /// The heaps framed around the loops whose bodies are being verified, innermost last
    /// (a `goto` out of a loop takes its frame back).
    pub loop_frames: Vec<crate::state::Heap>,
    /// `goto`s followed on the current path.
    pub gotos_on_path: usize,
    /// Branches of `if` statements entered in the current member (see
    /// [`MAX_BRANCHES_PER_MEMBER`]).
    pub branches_entered: usize,
    /// The `decreases` clauses of the function whose body is being checked.
    pub function_measures: Vec<crate::termination::Measure>,
    /// The method's `decreases` clauses evaluated at its entry.
    pub method_measures: Vec<crate::termination::Measure>,
    /// During consumption: the heap `perm(..)` is evaluated in.
    pub perm_heap: Option<crate::state::Heap>,
    /// Labels that are loop heads (targets of jumps back), with the index of the last
    /// statement of their loop in the label's statement list.
    pub loop_heads: HashMap<String, germanium_syntax::ast::NodeId>,
    /// The loops made of labels whose bodies are being executed, innermost last.
    pub label_loops: Vec<crate::label_loops::LabelLoop<'a>>,
    /// `refute` statements whose assertion was not provable on some path (the others are
    /// reported when the member is done, reached or not, as in Viper).
    pub refuted: HashSet<germanium_syntax::ast::NodeId>,
    /// When false, evaluation checks nothing (for axioms built from verified contracts).
    pub checking: bool,
    /// While an unfold in a checked context produces the body: its amounts must still not
    /// be negative (a predicate need not be well-formed).
    pub body_amounts_checked: bool,
    /// Bound, `let` and callee-parameter variables, innermost last; they shadow the store.
    pub bound: Vec<(germanium_semantics::VarId, Term)>,
    /// The value of `result` in a function's postcondition.
    pub result: Option<Term>,
    /// Instances being folded and unfolded, for the nesting facts (see `nesting`).
    pub nesting: crate::nesting::Nesting,
    /// The solver-side state every member starts from (see [`Verifier::mark_member_start`]).
    pub member_start: Option<SolverCaches>,
}

/// What this worker knows about its solver's declarations, kept with the solver checkpoint
/// every member starts from.
#[derive(Clone)]
pub struct SolverCaches {
    names: germanium_smt::NameGenerator,
    declared: HashSet<Symbol>,
    wraps: HashMap<Sort, FunDecl>,
    unwraps: HashMap<Sort, FunDecl>,
    defined: HashSet<String>,
}

impl<'e, 'a> Verifier<'e, 'a> {
    pub fn new(env: &'e Env<'a>, solver: Solver) -> Verifier<'e, 'a> {
        Verifier {
            env,
            solver,
            pcs: PathConditions::default(),
            names: germanium_smt::NameGenerator::new(),
            errors: Vec::new(),
            gave_up: None,
            guards: Vec::new(),
            declared: HashSet::new(),
            wraps: HashMap::new(),
            unwraps: HashMap::new(),
            perm_scale: None,
            in_axiom: false,
            current_function: None,
            axiom_unfoldings: Vec::new(),
            axiom_trigger_unfoldings: HashSet::new(),
            defined: HashSet::new(),
            body_unfold_depth: 0,
            positive_only: false,
            revealing: None,
            quantifier_depth: 0,
            in_function_post: false,
            lenient_reads: false,
            assuming: false,
            exhale_parts: false,
            trusted: false,
            deferred: Vec::new(),
            method: None,
            loop_frames: Vec::new(),
            gotos_on_path: 0,
            branches_entered: 0,
            method_measures: Vec::new(),
            function_measures: Vec::new(),
            body_amounts_checked: false,
            perm_heap: None,
            loop_heads: HashMap::new(),
            label_loops: Vec::new(),
            refuted: HashSet::new(),
            checking: true,
            bound: Vec::new(),
            result: None,
            nesting: Default::default(),
            member_start: None,
        }
    }

    /// Marks the solver state after the preamble as the one every member starts from.
    pub fn mark_member_start(&mut self) -> Result<(), SolverError> {
        self.solver.checkpoint()?;
        self.member_start = Some(SolverCaches {
            names: self.names.clone(),
            declared: self.declared.clone(),
            wraps: self.wraps.clone(),
            unwraps: self.unwraps.clone(),
            defined: self.defined.clone(),
        });
        Ok(())
    }

    /// Returns the solver to the state marked by [`Verifier::mark_member_start`], so a
    /// member's queries do not depend on which members this worker verified before.
    pub fn rewind_to_member_start(&mut self) -> Result<(), SolverError> {
        let Some(start) = self.member_start.clone() else {
            return Ok(());
        };
        self.solver.rewind()?;
        self.names = start.names;
        self.declared = start.declared;
        self.wraps = start.wraps;
        self.unwraps = start.unwraps;
        self.defined = start.defined;
        self.pcs = PathConditions::default();
        Ok(())
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
            format!("{what} is not supported by Germanium's verifier yet"),
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
            .gave_up
            .as_deref()
            .and_then(|reason| self.env.budget.exhausted(reason));
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
            self.errors.push(diagnostic);
        }
    }

    /// A fresh constant equal to `t` (unless `t` is already atomic): keeps terms small along
    /// a path (values built from earlier values would otherwise grow with every step) and
    /// shows the value to the solver, so quantifiers triggered by it get instantiated.
    pub fn name_term(&mut self, t: Term, base: &str, span: Span) -> R<Term> {
        let atomic = match t.kind() {
            germanium_smt::TermKind::App(_, args) => args.is_empty(),
            germanium_smt::TermKind::Op(..) | germanium_smt::TermKind::Builtin(..) => false,
            germanium_smt::TermKind::Quantifier(_) | germanium_smt::TermKind::Let(..) => false,
            _ => true,
        };
        if atomic {
            return Ok(t);
        }
        let c = self.fresh(base, t.sort().clone(), span)?;
        self.assume(Term::eq(c.clone(), t), span)?;
        Ok(c)
    }

    pub fn fresh(&mut self, base: &str, sort: Sort, span: Span) -> R<Term> {
        let decl = FunDecl::constant(self.names.fresh(&format!("sx.{base}")), sort);
        self.solver
            .declare_fun(&decl)
            .map_err(|e| self.solver_failed(e, span))?;
        Ok(Term::constant(&decl))
    }

    pub fn push(&mut self, span: Span) -> R<()> {
        self.pcs
            .push(&mut self.solver)
            .map_err(|e| self.solver_failed(e, span))
    }

    pub fn pop(&mut self, span: Span) -> R<()> {
        self.pcs
            .pop(&mut self.solver)
            .map_err(|e| self.solver_failed(e, span))
    }

    pub fn assume(&mut self, fact: Term, span: Span) -> R<()> {
        self.pcs
            .assume(&mut self.solver, fact)
            .map_err(|e| self.solver_failed(e, span))
    }

    /// The current guard as one term.
    pub fn guard(&self) -> Term {
        Term::and(self.guards.iter().cloned())
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
        self.solver
            .push()
            .map_err(|e| self.solver_failed(e, span))?;
        let result = self
            .solver
            .assert(&negation)
            .and_then(|_| self.solver.check_sat(self.env.budget.limits()));
        let popped = self.solver.pop(1);
        let result = result.map_err(|e| self.solver_failed(e, span))?;
        popped.map_err(|e| self.solver_failed(e, span))?;
        self.gave_up = match &result {
            SatResult::Unknown(reason) => Some(reason.clone()),
            _ => None,
        };
        Ok(result == SatResult::Unsat)
    }

    /// Whether the current path may be feasible (`sat` or `unknown`).
    pub fn feasible(&mut self, extra: Term, span: Span) -> R<bool> {
        if extra.is_false() {
            return Ok(false);
        }
        self.solver
            .push()
            .map_err(|e| self.solver_failed(e, span))?;
        let result = self
            .solver
            .assert(&extra)
            .and_then(|_| self.solver.check_sat(self.env.budget.limits()));
        let popped = self.solver.pop(1);
        let result = result.map_err(|e| self.solver_failed(e, span))?;
        popped.map_err(|e| self.solver_failed(e, span))?;
        Ok(result != SatResult::Unsat)
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
        if !self.checking {
            return Ok(true);
        }
        if self.prove(fact.clone(), offending.span)? {
            return Ok(true);
        }
        self.report(context, reason, offending);
        self.assume_guarded(fact, offending.span)?;
        Ok(false)
    }

    /// Declares `decl` in this solver once.
    pub fn ensure_declared(&mut self, decl: &FunDecl, span: Span) -> R<()> {
        if self.declared.insert(decl.name().clone()) {
            self.solver
                .declare_fun(decl)
                .map_err(|e| self.solver_failed(e, span))?;
        }
        Ok(())
    }

    /// `value` as a snapshot.
    pub fn wrap(&mut self, value: Term, span: Span) -> R<Term> {
        let sort = value.sort().clone();
        let (wrap, _) = self
            .wrap_decls(&sort)
            .map_err(|e| self.solver_failed(e, span))?;
        Ok(Term::app(&wrap, vec![value]))
    }

    /// The value of sort `sort` that snapshot `s` wraps.
    pub fn unwrap(&mut self, s: Term, sort: &Sort, span: Span) -> R<Term> {
        let (_, unwrap) = self
            .wrap_decls(sort)
            .map_err(|e| self.solver_failed(e, span))?;
        Ok(Term::app(&unwrap, vec![s]))
    }

    /// The wrapping function of `sort` and its inverse, declared (with the axiom
    /// `unwrap(wrap(v)) = v`) on first use. Called at the outermost solver level for the
    /// sorts of fields (see the preamble), so the axiom outlives every member's scope.
    pub fn wrap_decls(&mut self, sort: &Sort) -> Result<(FunDecl, FunDecl), SolverError> {
        if let (Some(w), Some(u)) = (self.wraps.get(sort), self.unwraps.get(sort)) {
            return Ok((w.clone(), u.clone()));
        }
        let n = self.wraps.len();
        let wrap = FunDecl::new(
            Symbol::user(&format!("sx.wrap{n}")),
            vec![sort.clone()],
            self.env.snap.sort.clone(),
        );
        let unwrap = FunDecl::new(
            Symbol::user(&format!("sx.unwrap{n}")),
            vec![self.env.snap.sort.clone()],
            sort.clone(),
        );
        for d in [&wrap, &unwrap] {
            if self.declared.insert(d.name().clone()) {
                self.solver.declare_fun(d)?;
            }
        }
        let v = Symbol::user("sx.v");
        let var = Term::var(v.clone(), sort.clone());
        let wrapped = Term::app(&wrap, vec![var.clone()]);
        let axiom = Term::forall(
            vec![(v, sort.clone())],
            Term::eq(Term::app(&unwrap, vec![wrapped.clone()]), var),
            vec![vec![wrapped]],
        );
        self.solver.assert(&axiom)?;
        self.wraps.insert(sort.clone(), wrap.clone());
        self.unwraps.insert(sort.clone(), unwrap.clone());
        Ok((wrap, unwrap))
    }

    /// `amount` times the current scale (see `perm_scale`).
    pub fn scaled(&self, amount: Permission) -> Permission {
        match &self.perm_scale {
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

/// How many `if` branches one member may explore. Paths are not merged after an `if` (as in
/// Silicon's default), so `n` consecutive `if`s make `2^n` paths; past this budget the
/// member is reported as not verified instead of running for hours. No corpus member comes
/// near it.
pub const MAX_BRANCHES_PER_MEMBER: usize = 50_000;
