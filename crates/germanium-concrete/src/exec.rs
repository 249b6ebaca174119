//! Running a method on concrete values with Viper's modular semantics: a call exhales the
//! callee's precondition and inhales its postcondition (`calls`), a loop exhales its
//! invariant, keeps the rest of the state, inhales the invariant and either runs the body
//! once (and exhales the invariant again) or leaves the loop; a `goto` jumps to its label,
//! a loop made of labels is run for real, its invariants checked at each arrival; packages
//! and applies of magic wands follow their footprints (`wands`); a function's own checks
//! run on its body (`functions`). What the semantics leaves open (parameters, locals, the
//! values of locations whose permission is inhaled, a call's results, whether a loop is
//! entered) is asked of [`Choices`] (`choose`), so a search can try its options. An inhaled
//! fact that is false ends the run as [`Outcome::Infeasible`]; a check that fails ends it as
//! [`Outcome::Failed`], with the state where it failed.

use std::collections::{BTreeSet, HashMap};

use germanium_semantics::{CallTarget, FieldTarget, Semantics, Type, VarId};
use germanium_syntax::ast::{
    BinaryOp, Block, Expr, ExprKind, Method, NewFields, NodeId, Stmt, StmtKind,
};
use germanium_syntax::Span;
use num_rational::BigRational;
use num_traits::{One, Zero};

use crate::eval::{conjuncts, Evaluator, Location, State, Stop};
use crate::heap::Heap;
use crate::value::Value;
use inexact::Reads;

/// What the semantics leaves open, decided one step at a time.
pub trait Choices {
    /// One of `options` alternatives (at least one); `None` when no more may be made.
    fn pick(&mut self, options: usize) -> Option<usize>;
}

/// Which check failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    Assert,
    Exhale,
    CallPrecondition,
    Postcondition,
    InvariantOnEntry,
    InvariantPreserved,
    Fold,
    Unfold,
    /// A field written without the whole permission.
    Assignment,
    /// An expression that is not well-defined where it is evaluated.
    WellDefinedness,
    /// A package: no footprint makes its wand hold.
    Package,
    /// An apply: the wand or its left-hand side is not held.
    Apply,
}

/// A failed check and the state it failed in.
#[derive(Clone, Debug)]
pub struct Failure {
    pub check: Check,
    /// The statement's or the assertion's place (for an exhaled conjunction: the conjunct).
    pub span: Span,
    pub reason: String,
    pub store: HashMap<VarId, Value>,
    pub heap: Heap,
    /// The method's pre-state: its parameters and heap.
    pub pre_store: HashMap<VarId, Value>,
    pub pre_heap: Heap,
    /// The heap `old` names where the check fails, and those of the labels.
    pub old_heap: Heap,
    pub labels: Vec<(String, Heap)>,
    /// Applications of heap-dependent functions in the failing assertion, with their values
    /// there: name, arguments, result.
    pub applications: Vec<(String, Vec<Value>, Value)>,
    /// A function's result, where its postcondition fails.
    pub result: Option<Value>,
    /// The model of the program's domains the run chose (none without domains).
    pub domains: crate::eval::DomainModel,
}

/// How a run ended.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// The end of the method (or of a loop body) with every check held.
    Completed,
    Failed(Box<Failure>),
    /// The choices made an inhaled or assumed fact false: no such execution exists.
    Infeasible,
    /// Something could not be computed concretely.
    Unknown(String),
    /// The choices ran out before the run ended.
    Exhausted,
}

/// Why a run stops before its end (a completed loop body counts as an end).
enum End {
    Out(Outcome),
    /// The path ended normally (after a loop body).
    PathDone,
    /// A `goto` to this label, looking for the block that has it.
    Goto(String),
}

type X<T> = Result<T, End>;

fn out<T>(o: Outcome) -> X<T> {
    Err(End::Out(o))
}

/// Rounds of choosing values of applications before a statement (an application's
/// argument may be another's value; a completed domain model may need more tables).
const ROUNDS: usize = 3;

/// A domain function instance: its name and type arguments.
type FunctionInstance = (String, Vec<Type>);

/// A predicate instance: the predicate and its arguments.
type Instance = (String, Vec<Value>);

/// The values of a heap's field locations.
type FieldValues = std::collections::BTreeMap<(crate::heap::ObjectId, String), Value>;

/// Runs stop after this many statements and inhaled parts.
const MAX_STEPS: u64 = 100_000;

/// The mutable state of a run.
#[derive(Clone, Default)]
struct Run {
    store: HashMap<VarId, Value>,
    heap: Heap,
    old: Heap,
    labels: HashMap<String, Heap>,
    /// Predicate instances held whose contents have not been seen (inhaled, not folded
    /// here): unfolding one gives its locations values of their own.
    fresh: BTreeSet<(String, Vec<Value>)>,
    /// Instances held folded since the pre-state: values found for their contents are the
    /// pre-state's (and `old`'s) too.
    unchanged_since_pre: BTreeSet<Instance>,
    pre_store: HashMap<VarId, Value>,
    pre_heap: Heap,
    steps: u64,
    /// Locations newly held and variables havocked whose values are not chosen yet: an
    /// inhaled equality may give one its value (`x.f == old(x.f) + 1`), the others are
    /// chosen when first read or at the end of the inhale.
    pending: Vec<Pending>,
    /// A function's result, while its postconditions are checked.
    result: Option<Value>,
    /// Statements run so far.
    statements: u64,
    /// Set when the state stops being known exactly (see `inexact`).
    approximate: Option<inexact::Inexact>,
    /// While an applied wand's right-hand side is inhaled: the locations and instances its
    /// left-hand side gave, which keep their values.
    carried: BTreeSet<(crate::heap::ObjectId, String)>,
    carried_instances: BTreeSet<(String, Vec<Value>)>,
    /// Whether the label reached now was reached by a jump back.
    jumped_back: bool,
    /// Whether a label with invariants that heads a loop was reached: from then on the run
    /// holds what Viper's loop of labels keeps as its frame too, so permission amounts are
    /// not read.
    label_loop: bool,
    /// While an `inhale` statement runs: its assertion not being well-defined fails it.
    inhale_checked: bool,
    /// How deep the ADT value being chosen is.
    adt_depth: usize,
    /// While an inhaled equality is evaluated: the values its sides have, which a value
    /// chosen for it tries first (only the order of the choices changes).
    hints: Vec<Value>,
    /// While a package runs Viper's way: the states it takes what it lacks from, the
    /// nearest last (see `supply`).
    supply: Vec<supply::Supplier>,
    /// See [`State::scale`].
    scale: Option<BigRational>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Pending {
    Field(crate::heap::ObjectId, String),
    Var(VarId),
}

/// Whether an evaluator's answer is only missing a value not chosen yet.
fn missing_value<T>(r: &Result<T, Stop>) -> bool {
    matches!(r, Err(Stop::Unknown(m)) if m.contains("has no value") || m.starts_with("no value for"))
}

/// Runs methods of one program.
pub struct Machine<'p> {
    ev: &'p Evaluator<'p>,
    sem: &'p Semantics,
    /// Whether the program has functions without a body (see `abstract_functions`).
    abstract_functions: bool,
    /// The domain function instances statements' expressions apply through the functions
    /// and predicates they use, by the expressions' ids (see `domains`): walked once.
    reachable_domain_calls: std::cell::RefCell<HashMap<Vec<NodeId>, Vec<FunctionInstance>>>,
    /// Whether each statement run may demand a value (see `reach`): found once.
    may_demand: std::cell::RefCell<HashMap<NodeId, bool>>,
}

impl Run {
    /// The pre-state is complete: `old` and the failure's pre-state name it from here on.
    fn begin(&mut self) {
        self.old = self.heap.clone();
        self.pre_store = self.store.clone();
        self.pre_heap = self.heap.clone();
        self.unchanged_since_pre = self.fresh.clone();
    }

    /// The field values before the contents of `instance` are seen, where they are needed:
    /// the instance is the pre-state's (see `contents_seen`).
    fn before_contents(&self, instance: &Instance) -> Option<FieldValues> {
        self.unchanged_since_pre
            .contains(instance)
            .then(|| self.heap.fields.clone())
    }

    /// The contents of an instance of the pre-state got the values the heap has and
    /// `before` (see `before_contents`) had not: so did the pre-state's.
    fn contents_seen(&mut self, before: Option<FieldValues>) {
        let Some(before) = before else {
            return;
        };
        for (location, v) in &self.heap.fields {
            if !before.contains_key(location) {
                for heap in [&mut self.old, &mut self.pre_heap] {
                    heap.fields
                        .entry(location.clone())
                        .or_insert_with(|| v.clone());
                }
            }
        }
    }

    /// Forgets the value of `o.f`: it gets one of its own, chosen later (pending).
    fn forget(&mut self, o: crate::heap::ObjectId, f: String) {
        self.heap.fields.remove(&(o, f.clone()));
        let p = Pending::Field(o, f);
        if !self.pending.contains(&p) {
            self.pending.push(p);
        }
    }

    /// The permission held to a field location (none to a field of null).
    fn heap_perm(&self, location: &Location) -> BigRational {
        match location {
            Location::Field(Value::Ref(Some(o)), f) => self.heap.perm(*o, f),
            _ => BigRational::zero(),
        }
    }
}

impl<'p> Machine<'p> {
    pub fn new(ev: &'p Evaluator<'p>) -> Machine<'p> {
        Machine {
            ev,
            sem: ev.sem,
            abstract_functions: ev.functions.values().any(|f| f.body.is_none()),
            reachable_domain_calls: Default::default(),
            may_demand: Default::default(),
        }
    }

    /// The type of the field `f`.
    fn field_type(&self, f: &str) -> Type {
        self.sem
            .fields
            .get(f)
            .map(|i| i.ty.clone())
            .unwrap_or(Type::Int)
    }

    /// Evaluation steps made so far (deterministic, unlike time).
    pub fn steps(&self) -> u64 {
        self.ev.total_steps()
    }

    /// Runs the method `name` from a pre-state the choices make.
    pub fn run(&self, name: &str, choices: &mut dyn Choices) -> Outcome {
        let Some(method) = self.ev.methods.get(name).copied() else {
            return Outcome::Unknown(format!("no method `{name}`"));
        };
        self.fresh_run(choices, |run, choices| self.method(run, method, choices))
    }

    /// Chooses values for the applications of functions without a body and of domain
    /// functions `exprs` make (before a statement, or a precondition is inhaled); where
    /// one of the `assumed` conjuncts equates an application with a known value, it takes
    /// that value (every other is no execution).
    fn interpret(
        &self,
        run: &mut Run,
        exprs: &[&Expr],
        assumed: &[&Expr],
        choices: &mut dyn Choices,
    ) -> X<()> {
        if self.models_domains() {
            self.interpret_domains(run, exprs, assumed, choices)?;
        }
        if self.abstract_functions {
            self.interpret_abstract(run, exprs, assumed, choices)?;
        }
        Ok(())
    }

    /// The value `call` must have where `assumed` holds: that of `e` in a conjunct
    /// `call == e` or `e == call`, where `e` has one before the statement.
    fn equated(&self, run: &Run, call: &Expr, assumed: &[&Expr]) -> Option<Value> {
        let side = equation_side(call, assumed)?;
        self.ev.eval(&self.state(run), side).ok()
    }

    /// A run from nothing (no values, no interpretations chosen) and how it ended; a
    /// failure counts only where the domain model it chose meets the axioms.
    fn fresh_run(
        &self,
        choices: &mut dyn Choices,
        body: impl FnOnce(&mut Run, &mut dyn Choices) -> X<()>,
    ) -> Outcome {
        let mut run = Run::default();
        self.ev.clear_interpretations();
        match body(&mut run, choices) {
            Ok(()) | Err(End::PathDone) => Outcome::Completed,
            Err(End::Out(Outcome::Failed(mut failure))) if self.models_domains() => {
                match self.check_model(&mut run, choices) {
                    Ok(()) => {
                        failure.domains = self.ev.domain_model();
                        Outcome::Failed(failure)
                    }
                    Err(End::Out(o)) => o,
                    Err(_) => Outcome::Unknown("the domain model's check ended early".into()),
                }
            }
            // Past a state not known exactly, a fact found false says nothing of the real
            // runs.
            Err(End::Out(Outcome::Infeasible)) if run.approximate.is_some() => {
                Outcome::Unknown(run.approximate.take().map(|i| i.why).unwrap_or_default())
            }
            Err(End::Out(o)) => o,
            Err(End::Goto(label)) => {
                Outcome::Unknown(format!("a jump to `{label}` in no block around it"))
            }
        }
    }

    fn method(&self, run: &mut Run, method: &Method, choices: &mut dyn Choices) -> X<()> {
        let info = &self.sem.methods[&method.name.name];
        // The parameters' values are chosen where the precondition first reads them (in
        // order), or given by its equalities (`xs[0] == x`), or chosen after it.
        for p in &info.params {
            run.pending.push(Pending::Var(*p));
        }
        let exprs: Vec<&Expr> = method.contract.requires.iter().collect();
        let assumed: Vec<&Expr> = exprs.iter().flat_map(|e| conjuncts(e)).collect();
        self.answering_demands(run, choices, |run, choices| {
            self.interpret(run, &exprs, &assumed, choices)?;
            for pre in &method.contract.requires {
                self.open_contents_for(run, &[pre], choices)?;
                self.well_defined(run, |run| {
                    self.inhale_times(run, pre, &BigRational::one(), choices, false)
                })?;
            }
            self.resolve_pending(run, choices)
        })?;
        run.begin();
        for r in &info.returns {
            let v = self.choose(run, &self.sem.var(*r).ty.clone(), choices)?;
            run.store.insert(*r, v);
        }
        let Some(body) = &method.body else {
            return out(Outcome::Unknown(format!(
                "`{}` has no body",
                method.name.name
            )));
        };
        self.block(run, body, choices)?;
        self.exhale_all(run, &method.contract.ensures, Check::Postcondition, true)?;
        Ok(())
    }

    fn state<'a>(&self, run: &'a Run) -> State<'a> {
        State {
            store: run.store.clone(),
            heap: &run.heap,
            old: Some(&run.old),
            labels: run.labels.iter().map(|(k, v)| (k.clone(), v)).collect(),
            result: run.result.clone(),
            amounts_unknown: run.label_loop,
            scale: run.scale.clone(),
        }
    }

    fn fail<T>(&self, run: &Run, check: Check, span: Span, reason: impl Into<String>) -> X<T> {
        self.report(run, self.failure(run, check, span, reason), Reads::ANYTHING)
    }

    /// A failure's outcome: the run's, unless the state is no longer known exactly and the
    /// failure, by what it `reads`, may not be one of a real run (see `inexact`).
    fn report<T>(&self, run: &Run, failure: Failure, reads: Reads) -> X<T> {
        match &run.approximate {
            Some(inexact) if !run.failure_is_real(reads) => {
                out(Outcome::Unknown(inexact.why.clone()))
            }
            _ => out(Outcome::Failed(Box::new(failure))),
        }
    }

    /// The failure of `check` at `span`, in the run's state.
    fn failure(&self, run: &Run, check: Check, span: Span, reason: impl Into<String>) -> Failure {
        Failure {
            check,
            span,
            reason: reason.into(),
            store: run.store.clone(),
            heap: run.heap.clone(),
            pre_store: run.pre_store.clone(),
            pre_heap: run.pre_heap.clone(),
            old_heap: run.old.clone(),
            labels: {
                let mut l: Vec<(String, Heap)> = run
                    .labels
                    .iter()
                    .map(|(k, h)| (k.clone(), h.clone()))
                    .collect();
                l.sort_by(|a, b| a.0.cmp(&b.0));
                l
            },
            applications: Vec::new(),
            result: run.result.clone(),
            domains: Default::default(),
        }
    }

    /// The function applications in `e` that have values in the run's state (those under a
    /// quantifier or `let` have none: their variables are not in the store).
    fn applications(&self, run: &Run, e: &Expr, into: &mut Vec<(String, Vec<Value>, Value)>) {
        let state = self.state(run);
        germanium_semantics::visit::walk_expr(e, &mut |sub| {
            let (ExprKind::Call(_, args), Some(CallTarget::Function(f))) =
                (&sub.kind, self.sem.call(sub.id))
            else {
                return;
            };
            let values: Option<Vec<Value>> =
                args.iter().map(|a| self.ev.eval(&state, a).ok()).collect();
            if let (Some(values), Ok(result)) = (values, self.ev.eval(&state, sub)) {
                let entry = (f.clone(), values, result);
                if !into.contains(&entry) {
                    into.push(entry);
                }
            }
        });
    }

    /// An evaluator's answer: a well-definedness failure where checks are made, else unknown.
    fn evaluated<T>(&self, run: &Run, r: Result<T, Stop>, checking: bool) -> X<T> {
        match r {
            Ok(v) => Ok(v),
            Err(Stop::Undefined { span, reason }) if checking => {
                self.fail(run, Check::WellDefinedness, span, reason)
            }
            Err(Stop::Undefined { reason, .. }) => out(Outcome::Unknown(reason)),
            Err(Stop::Unknown(why)) => out(Outcome::Unknown(why)),
        }
    }

    fn value(&self, run: &Run, e: &Expr) -> X<Value> {
        let r = self.ev.eval(&self.state(run), e);
        self.evaluated(run, r, true)
    }

    fn boolean(&self, run: &Run, e: &Expr) -> X<bool> {
        match self.value(run, e)? {
            Value::Bool(b) => Ok(b),
            other => out(Outcome::Unknown(format!(
                "a {} where a Bool is expected",
                other.kind()
            ))),
        }
    }

    fn step(&self, run: &mut Run) -> X<()> {
        run.steps += 1;
        if run.steps > MAX_STEPS {
            return out(Outcome::Unknown(format!("more than {MAX_STEPS} steps")));
        }
        Ok(())
    }

    /// Runs a block's statements; a `goto` to one of its labels goes on from there (a jump
    /// back runs a loop made of labels for real, its invariants checked at each arrival).
    fn block(&self, run: &mut Run, block: &Block, choices: &mut dyn Choices) -> X<()> {
        let mut i = 0;
        while let Some(s) = block.stmts.get(i) {
            if !run.label_loop
                && matches!(&s.kind, StmtKind::Label(_, invariants) if !invariants.is_empty())
            {
                run.label_loop = loop_head(block, i);
            }
            match self.stmt(run, s, choices) {
                Err(End::Goto(label)) => {
                    let target = block.stmts.iter().position(
                        |t| matches!(&t.kind, StmtKind::Label(name, _) if name.name == label),
                    );
                    let Some(j) = target else {
                        return Err(End::Goto(label));
                    };
                    run.jumped_back = j <= i;
                    i = j;
                    continue;
                }
                r => r?,
            }
            i += 1;
        }
        Ok(())
    }

    fn stmt(&self, run: &mut Run, s: &Stmt, choices: &mut dyn Choices) -> X<()> {
        // A wand's package or apply decides what its choices make (the one left-hand side
        // made without any), so it is run once; so is a statement that reaches nothing that
        // could demand a value (no snapshot of the run is needed).
        if matches!(s.kind, StmtKind::Package(..) | StmtKind::Apply(_)) || !self.may_demand(s) {
            return self.stmt_once(run, s, choices);
        }
        self.answering_demands(run, choices, |run, choices| self.stmt_once(run, s, choices))
    }

    fn stmt_once(&self, run: &mut Run, s: &Stmt, choices: &mut dyn Choices) -> X<()> {
        self.step(run)?;
        run.statements += 1;
        self.keep_lower_bound(run, s);
        self.open_contents(run, s, choices)?;
        let assumed = match &s.kind {
            StmtKind::Inhale(e) | StmtKind::Assume(e) => conjuncts(e),
            _ => Vec::new(),
        };
        self.interpret(run, &self.statement_reads(s), &assumed, choices)?;
        match &s.kind {
            StmtKind::VarDecl(decls, init) => {
                for i in 0..decls.len() {
                    let Some(var) = self.sem.binders.get(&(s.id, i)).copied() else {
                        return out(Outcome::Unknown("an undeclared local".into()));
                    };
                    let v = match init {
                        Some(e) => self.value(run, e)?,
                        None => self.choose(run, &self.sem.var(var).ty.clone(), choices)?,
                    };
                    run.store.insert(var, v);
                }
                Ok(())
            }
            StmtKind::Assign(targets, rhs) => {
                if let ExprKind::Call(_, args) = &rhs.kind {
                    if let Some(CallTarget::Method(m)) = self.sem.call(rhs.id) {
                        return self.call(run, s.span, m, args, targets, choices);
                    }
                }
                let v = self.value(run, rhs)?;
                match targets.as_slice() {
                    [target] => self.assign(run, target, v),
                    _ => out(Outcome::Unknown("several targets without a call".into())),
                }
            }
            StmtKind::Call(_, args) => match self.sem.call(s.id) {
                Some(CallTarget::Method(m)) => self.call(run, s.span, m, args, &[], choices),
                _ => out(Outcome::Unknown("a call of no method".into())),
            },
            StmtKind::New(target, fields) => {
                let o = run.heap.allocate();
                let names: Vec<String> = match fields {
                    NewFields::All => self.sem.field_order.clone(),
                    NewFields::Fields(f) => f.iter().map(|i| i.name.clone()).collect(),
                };
                for f in names {
                    let v = self.choose(run, &self.field_type(&f), choices)?;
                    run.heap.set(o, &f, v, BigRational::one());
                }
                self.assign(run, target, Value::Ref(Some(o)))
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                if self.boolean(run, cond)? {
                    self.block(run, then, choices)
                } else if let Some(b) = otherwise {
                    self.block(run, b, choices)
                } else {
                    Ok(())
                }
            }
            StmtKind::While {
                cond,
                invariants,
                body,
                ..
            } => self.while_loop(run, cond, invariants, body, choices),
            StmtKind::Label(name, invariants) => {
                let check = if std::mem::take(&mut run.jumped_back) {
                    Check::InvariantPreserved
                } else {
                    Check::InvariantOnEntry
                };
                self.exhale_all(run, invariants, check, false)?;
                run.labels.insert(name.name.clone(), run.heap.clone());
                Ok(())
            }
            StmtKind::Goto(label) => Err(End::Goto(label.name.clone())),
            StmtKind::Fold(e) => self.fold(run, e),
            StmtKind::Unfold(e) => self.unfold(run, e, choices),
            StmtKind::Inhale(e) => self.inhale_well_defined(run, e, choices),
            StmtKind::Assume(e) => self.assume(run, e, choices),
            StmtKind::Exhale(e) => self.exhale(run, e, Check::Exhale, true),
            StmtKind::Assert(e) => self.exhale(run, e, Check::Assert, false),
            StmtKind::Block(b) => self.block(run, b, choices),
            // A refutation changes no state (its own check is not run here).
            StmtKind::Refute(_) => Ok(()),
            StmtKind::Quasihavoc(cond, resource) => {
                self.quasihavoc(run, cond.as_ref(), resource)?;
                self.resolve_pending(run, choices)
            }
            StmtKind::Package(wand, script) => self.package(run, wand, script.as_ref(), choices),
            StmtKind::Apply(wand) => self.apply(run, s.span, wand, choices),
            StmtKind::Quasihavocall(_, cond, resource) => {
                self.quasihavocall(run, s, cond.as_ref(), resource)?;
                self.resolve_pending(run, choices)
            }
            StmtKind::MacroRef(_) | StmtKind::Define(_) => out(Outcome::Unknown(
                "a statement not replayed concretely yet (a macro)".into(),
            )),
        }
    }

    /// `x := v` or `e.f := v` (the whole permission needed).
    fn assign(&self, run: &mut Run, target: &Expr, v: Value) -> X<()> {
        match &target.kind {
            ExprKind::Ident(_) => match self.sem.var_id(target.id) {
                Some(var) => {
                    run.store.insert(var, v);
                    Ok(())
                }
                None => out(Outcome::Unknown("an unresolved variable".into())),
            },
            ExprKind::FieldAccess(receiver, _) => {
                let Some(FieldTarget::Field(f)) = self.sem.field_access(target.id).cloned() else {
                    return out(Outcome::Unknown("an assignment to no field".into()));
                };
                match self.value(run, receiver)? {
                    Value::Ref(Some(o)) if run.heap.perm(o, &f) >= BigRational::one() => {
                        let p = run.heap.perm(o, &f);
                        run.heap.set(o, &f, v, p);
                        Ok(())
                    }
                    r => self.fail(
                        run,
                        Check::Assignment,
                        target.span,
                        format!("no write permission to {r}.{f}"),
                    ),
                }
            }
            _ => out(Outcome::Unknown(
                "an assignment to no variable or field".into(),
            )),
        }
    }

    /// Exhales `e` conjunct by conjunct (the failing conjunct is the failure's place); an
    /// `assert` (`take` false) gives nothing up.
    fn exhale(&self, run: &mut Run, e: &Expr, check: Check, take: bool) -> X<()> {
        self.exhale_all(run, std::slice::from_ref(e), check, take)
    }

    /// Exhales a list of assertions (a contract's clauses, a loop's invariants) as their
    /// conjunction: every part is read in the state before, the failing conjunct is the
    /// failure's place.
    fn exhale_all(&self, run: &mut Run, es: &[Expr], check: Check, take: bool) -> X<()> {
        let parts: Vec<&Expr> = es.iter().flat_map(conjuncts).collect();
        // Reads are made in the state before the exhale, as Viper's well-definedness.
        let before = run.heap.clone();
        let mut left = before.clone();
        for part in parts {
            if self.supplied(run) {
                self.supply_assertion(run, Some(&mut left), part, &BigRational::one())?;
            }
            let r = self
                .ev
                .take(&self.state(run), &left, part, &BigRational::one());
            match self.evaluated(run, r, true)? {
                Some(rest) => left = rest,
                None => {
                    let mut f = self.failure(run, check, part.span, "the assertion does not hold");
                    self.applications(run, part, &mut f.applications);
                    let reads = Reads {
                        heap: !self.ev.reads_no_heap(part, &[]),
                        amounts: self.impure(part) || self.reads_amounts(part),
                    };
                    return self.report(run, f, reads);
                }
            }
        }
        if take {
            run.heap = left;
        }
        Ok(())
    }
}

/// The other side of the first of `assumed` that equates `call` with something.
fn equation_side<'e>(call: &Expr, assumed: &[&'e Expr]) -> Option<&'e Expr> {
    assumed.iter().find_map(|c| match &c.kind {
        ExprKind::Binary(BinaryOp::Eq, a, b) if a.id == call.id => Some(&**b),
        ExprKind::Binary(BinaryOp::Eq, a, b) if b.id == call.id => Some(&**a),
        _ => None,
    })
}

/// Whether the label `block.stmts[at]` heads a loop: a `goto` to it follows, in code not
/// after an unconditional `goto` with no label between (dead code makes no loop, as in
/// Viper's control-flow graph).
fn loop_head(block: &Block, at: usize) -> bool {
    let StmtKind::Label(name, _) = &block.stmts[at].kind else {
        return false;
    };
    let mut reachable = true;
    for s in &block.stmts[at + 1..] {
        match &s.kind {
            StmtKind::Label(..) => reachable = true,
            StmtKind::Goto(target) if reachable && target.name == name.name => return true,
            StmtKind::Goto(_) => reachable = false,
            _ if reachable => {
                let mut jumps_back = false;
                germanium_semantics::visit::walk_stmt(s, &mut |inner| {
                    jumps_back |= matches!(&inner.kind, StmtKind::Goto(t) if t.name == name.name);
                });
                if jumps_back {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

mod abstract_functions;
mod calls;
mod choose;
mod domains;
mod functions;
mod inexact;
mod inhale;
mod predicates;
mod reach;
mod replay;
mod supply;
mod wands;

#[cfg(test)]
mod tests;
