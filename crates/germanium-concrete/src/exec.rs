//! Running a method on concrete values with Viper's modular semantics: a call exhales the
//! callee's precondition and inhales its postcondition, a loop exhales its invariant, keeps
//! the rest of the state, inhales the invariant and either runs the body once (and exhales
//! the invariant again) or leaves the loop. What the semantics leaves open (parameters,
//! locals, the values of locations whose permission is inhaled, a call's results, whether a
//! loop is entered) is asked of [`Choices`], so a search can try its options. An inhaled
//! fact that is false ends the run as [`Outcome::Infeasible`]; a check that fails ends it
//! as [`Outcome::Failed`], with the state where it failed.

use std::collections::{BTreeSet, HashMap};

use germanium_semantics::{CallTarget, FieldTarget, Semantics, Type, VarId};
use germanium_syntax::ast::{
    BinaryOp, Block, Expr, ExprKind, Method, NewFields, QuantifierKind, Stmt, StmtKind,
};
use germanium_syntax::Span;
use num_rational::BigRational;
use num_traits::{One, Zero};

use crate::eval::{is_wildcard, Evaluator, Location, State, Stop};
use crate::heap::Heap;
use crate::value::Value;

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
}

type X<T> = Result<T, End>;

fn out<T>(o: Outcome) -> X<T> {
    Err(End::Out(o))
}

/// A value to try: one given, or made of new objects (`None`: one reference; `Some((set,
/// n))`: a set or a sequence of `n` of them).
enum Candidate {
    Value(Value),
    New(Option<(bool, usize)>),
}

/// Small integers, tried in this order.
const INTS: [i64; 6] = [0, 1, -1, 2, -2, 3];
/// Runs stop after this many statements and inhaled parts.
const MAX_STEPS: u64 = 100_000;

/// The mutable state of a run.
struct Run {
    store: HashMap<VarId, Value>,
    heap: Heap,
    old: Heap,
    labels: HashMap<String, Heap>,
    /// Predicate instances held whose contents have not been seen (inhaled, not folded
    /// here): unfolding one gives its locations values of their own.
    fresh: BTreeSet<(String, Vec<Value>)>,
    pre_store: HashMap<VarId, Value>,
    pre_heap: Heap,
    steps: u64,
    /// Locations newly held and variables havocked whose values are not chosen yet: an
    /// inhaled equality may give one its value (`x.f == old(x.f) + 1`), the others are
    /// chosen when first read or at the end of the inhale.
    pending: Vec<Pending>,
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
}

impl Run {
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
        Machine { ev, sem: ev.sem }
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
        let mut run = Run {
            store: HashMap::new(),
            heap: Heap::default(),
            old: Heap::default(),
            labels: HashMap::new(),
            fresh: BTreeSet::new(),
            pre_store: HashMap::new(),
            pre_heap: Heap::default(),
            steps: 0,
            pending: Vec::new(),
        };
        match self.method(&mut run, method, choices) {
            Ok(()) | Err(End::PathDone) => Outcome::Completed,
            Err(End::Out(o)) => o,
        }
    }

    fn method(&self, run: &mut Run, method: &Method, choices: &mut dyn Choices) -> X<()> {
        let info = &self.sem.methods[&method.name.name];
        for p in &info.params {
            let v = self.choose(run, &self.sem.var(*p).ty.clone(), choices)?;
            run.store.insert(*p, v);
        }
        for pre in &method.contract.requires {
            self.inhale_times(run, pre, &BigRational::one(), choices, false)?;
        }
        self.resolve_pending(run, choices)?;
        run.old = run.heap.clone();
        run.pre_store = run.store.clone();
        run.pre_heap = run.heap.clone();
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
        for post in &method.contract.ensures {
            self.exhale(run, post, Check::Postcondition, true)?;
        }
        Ok(())
    }

    fn state<'a>(&self, run: &'a Run) -> State<'a> {
        State {
            store: run.store.clone(),
            heap: &run.heap,
            old: Some(&run.old),
            labels: run.labels.iter().map(|(k, v)| (k.clone(), v)).collect(),
            result: None,
        }
    }

    fn fail<T>(&self, run: &Run, check: Check, span: Span, reason: impl Into<String>) -> X<T> {
        out(Outcome::Failed(Box::new(Failure {
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
        })))
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

    /// A value of type `ty` the choices pick (a new object among the references).
    fn choose(&self, run: &mut Run, ty: &Type, choices: &mut dyn Choices) -> X<Value> {
        let value = |v: Value| Candidate::Value(v);
        let ints = |items: &[i64]| items.iter().map(|i| Value::int(*i)).collect::<Vec<_>>();
        let mut options: Vec<Candidate> = match ty {
            Type::Int => INTS.iter().map(|i| value(Value::int(*i))).collect(),
            Type::Bool => vec![value(Value::Bool(false)), value(Value::Bool(true))],
            Type::Perm => vec![
                value(Value::none()),
                value(Value::perm(1, 2)),
                value(Value::write()),
            ],
            Type::Ref => std::iter::once(value(Value::null()))
                .chain(run.heap.all_objects().map(|o| value(Value::Ref(Some(o)))))
                .chain(std::iter::once(Candidate::New(None)))
                .collect(),
            Type::Seq(t) if **t == Type::Int => vec![
                value(Value::seq([])),
                value(Value::seq(ints(&[0]))),
                value(Value::seq(ints(&[1, 0]))),
            ],
            Type::Set(t) if **t == Type::Int => vec![
                value(Value::set([])),
                value(Value::set(ints(&[0]))),
                value(Value::set(ints(&[0, 1]))),
            ],
            Type::Multiset(t) if **t == Type::Int => vec![
                value(Value::multiset([])),
                value(Value::multiset(ints(&[0]))),
                value(Value::multiset(ints(&[0, 0]))),
                value(Value::multiset(ints(&[0, 1]))),
            ],
            // Collections of references: empty, new objects, or one object already there.
            Type::Seq(t) | Type::Set(t) if **t == Type::Ref => {
                let set = matches!(ty, Type::Set(_));
                let collect = move |items: Vec<Value>| {
                    if set {
                        Value::set(items)
                    } else {
                        Value::seq(items)
                    }
                };
                let mut v = vec![
                    value(collect(Vec::new())),
                    Candidate::New(Some((set, 1))),
                    Candidate::New(Some((set, 2))),
                ];
                v.extend(
                    run.heap
                        .all_objects()
                        .map(|o| value(collect(vec![Value::Ref(Some(o))]))),
                );
                v
            }
            other => {
                return out(Outcome::Unknown(format!(
                    "no values of {other:?} are tried yet"
                )))
            }
        };
        let Some(i) = choices.pick(options.len()) else {
            return out(Outcome::Exhausted);
        };
        Ok(match options.swap_remove(i) {
            Candidate::Value(v) => v,
            Candidate::New(None) => Value::Ref(Some(run.heap.allocate())),
            Candidate::New(Some((set, n))) => {
                let objects: Vec<Value> = (0..n)
                    .map(|_| Value::Ref(Some(run.heap.allocate())))
                    .collect();
                if set {
                    Value::set(objects)
                } else {
                    Value::seq(objects)
                }
            }
        })
    }

    fn block(&self, run: &mut Run, block: &Block, choices: &mut dyn Choices) -> X<()> {
        for s in &block.stmts {
            self.stmt(run, s, choices)?;
        }
        Ok(())
    }

    fn stmt(&self, run: &mut Run, s: &Stmt, choices: &mut dyn Choices) -> X<()> {
        self.step(run)?;
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
                    let ty = self
                        .sem
                        .fields
                        .get(&f)
                        .map(|i| i.ty.clone())
                        .unwrap_or(Type::Int);
                    let v = self.choose(run, &ty, choices)?;
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
            StmtKind::Label(name, _) => {
                run.labels.insert(name.name.clone(), run.heap.clone());
                Ok(())
            }
            StmtKind::Fold(e) => self.fold(run, e),
            StmtKind::Unfold(e) => self.unfold(run, e, choices),
            StmtKind::Inhale(e) | StmtKind::Assume(e) => self.inhale(run, e, choices, false),
            StmtKind::Exhale(e) => self.exhale(run, e, Check::Exhale, true),
            StmtKind::Assert(e) => self.exhale(run, e, Check::Assert, false),
            StmtKind::Block(b) => self.block(run, b, choices),
            // A refutation changes no state (its own check is not run here).
            StmtKind::Refute(_) => Ok(()),
            StmtKind::Quasihavoc(cond, resource) => {
                self.quasihavoc(run, cond.as_ref(), resource)?;
                self.resolve_pending(run, choices)
            }
            StmtKind::Goto(_)
            | StmtKind::Package(..)
            | StmtKind::Apply(_)
            | StmtKind::Quasihavocall(..)
            | StmtKind::MacroRef(_)
            | StmtKind::Define(_) => out(Outcome::Unknown(
                "a statement not replayed concretely yet (goto, wands, quasihavocall)".into(),
            )),
        }
    }

    /// `quasihavoc [c ==>] e.f`: where `c` holds, a held field location gets a value of its
    /// own (chosen when read); a predicate instance's contents become new.
    fn quasihavoc(&self, run: &mut Run, cond: Option<&Expr>, resource: &Expr) -> X<()> {
        if let Some(c) = cond {
            if !self.boolean(run, c)? {
                return Ok(());
            }
        }
        let location = self.ev.location_in(&self.state(run), resource);
        match self.evaluated(run, location, true)? {
            Location::Field(Value::Ref(Some(o)), f) => {
                if run.heap.perm(o, &f) > BigRational::zero() {
                    run.forget(o, f);
                }
                Ok(())
            }
            Location::Field(..) => Ok(()),
            Location::Instance(p, args) => {
                if run.heap.instance(&p, &args) > BigRational::zero() {
                    run.fresh.insert((p, args));
                }
                Ok(())
            }
        }
    }

    /// `x := v` or `e.f := v` (the whole permission needed).
    fn assign(&self, run: &mut Run, target: &Expr, v: Value) -> X<()> {
        match &target.kind {
            ExprKind::Ident(_) => {
                match self.sem.idents.get(target.id.0 as usize).copied().flatten() {
                    Some(var) => {
                        run.store.insert(var, v);
                        Ok(())
                    }
                    None => out(Outcome::Unknown("an unresolved variable".into())),
                }
            }
            ExprKind::FieldAccess(receiver, _) => {
                let Some(Some(FieldTarget::Field(f))) =
                    self.sem.field_accesses.get(target.id.0 as usize).cloned()
                else {
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
        let mut parts = Vec::new();
        conjuncts(e, &mut parts);
        // Reads are made in the state before the exhale, as Viper's well-definedness.
        let before = run.heap.clone();
        let mut left = before.clone();
        for part in parts {
            let r = self
                .ev
                .take(&self.state(run), &left, part, &BigRational::one());
            match self.evaluated(run, r, true)? {
                Some(rest) => left = rest,
                None => {
                    let mut applications = Vec::new();
                    self.applications(run, part, &mut applications);
                    return match self.fail::<()>(
                        run,
                        check,
                        part.span,
                        "the assertion does not hold",
                    ) {
                        Err(End::Out(Outcome::Failed(mut f))) => {
                            f.applications = applications;
                            out(Outcome::Failed(f))
                        }
                        other => other,
                    };
                }
            }
        }
        if take {
            run.heap = left;
        }
        Ok(())
    }

    /// Inhales `e`: the permissions it gives, each location newly held getting a value the
    /// choices pick (`keep_values`: the value it has, when it has one: an unfolded
    /// instance's contents), and its facts assumed.
    fn inhale(
        &self,
        run: &mut Run,
        e: &Expr,
        choices: &mut dyn Choices,
        keep_values: bool,
    ) -> X<()> {
        self.inhale_times(run, e, &BigRational::one(), choices, keep_values)?;
        self.resolve_pending(run, choices)
    }

    /// Chooses the values still pending.
    fn resolve_pending(&self, run: &mut Run, choices: &mut dyn Choices) -> X<()> {
        for p in std::mem::take(&mut run.pending) {
            match p {
                Pending::Field(o, f) => {
                    let ty = self
                        .sem
                        .fields
                        .get(&f)
                        .map(|i| i.ty.clone())
                        .unwrap_or(Type::Int);
                    let v = self.choose(run, &ty, choices)?;
                    run.heap.fields.insert((o, f), v);
                }
                Pending::Var(var) => {
                    let v = self.choose(run, &self.sem.var(var).ty.clone(), choices)?;
                    run.store.insert(var, v);
                }
            }
        }
        Ok(())
    }

    /// Evaluates with `f`; where a pending value is missing, chooses the pending values and
    /// evaluates again.
    fn with_pending<T>(
        &self,
        run: &mut Run,
        choices: &mut dyn Choices,
        f: impl Fn(&Self, &Run) -> Result<T, Stop>,
    ) -> X<T> {
        let r = f(self, run);
        if missing_value(&r) && !run.pending.is_empty() {
            self.resolve_pending(run, choices)?;
            let r = f(self, run);
            return self.evaluated(run, r, false);
        }
        self.evaluated(run, r, false)
    }

    /// An inhaled `a == b` whose one side is a pending variable or location and whose other
    /// side has a value: the pending one takes it (one of the values the semantics allows).
    fn solve_equality(&self, run: &mut Run, e: &Expr) -> bool {
        let ExprKind::Binary(BinaryOp::Eq, a, b) = &e.kind else {
            return false;
        };
        for (target, other) in [(a, b), (b, a)] {
            let pending = match &target.kind {
                ExprKind::Ident(_) => self
                    .sem
                    .idents
                    .get(target.id.0 as usize)
                    .copied()
                    .flatten()
                    .map(Pending::Var),
                ExprKind::FieldAccess(receiver, _) => {
                    match (
                        self.sem
                            .field_accesses
                            .get(target.id.0 as usize)
                            .cloned()
                            .flatten(),
                        self.ev.eval(&self.state(run), receiver),
                    ) {
                        (Some(FieldTarget::Field(f)), Ok(Value::Ref(Some(o)))) => {
                            Some(Pending::Field(o, f))
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            let Some(pending) = pending.filter(|p| run.pending.contains(p)) else {
                continue;
            };
            let Ok(v) = self.ev.eval(&self.state(run), other) else {
                continue;
            };
            run.pending.retain(|p| *p != pending);
            match pending {
                Pending::Var(var) => {
                    run.store.insert(var, v);
                }
                Pending::Field(o, f) => {
                    run.heap.fields.insert((o, f), v);
                }
            }
            return true;
        }
        false
    }

    fn inhale_times(
        &self,
        run: &mut Run,
        e: &Expr,
        factor: &BigRational,
        choices: &mut dyn Choices,
        keep_values: bool,
    ) -> X<()> {
        self.step(run)?;
        match &e.kind {
            ExprKind::Acc(loc, amount) => {
                let location =
                    self.with_pending(run, choices, |m, run| m.ev.location_in(&m.state(run), loc))?;
                let amount = if is_wildcard(amount.as_deref()) {
                    // Some positive amount that fits: half of what is not held.
                    let half = BigRational::new(1.into(), 2.into());
                    match &location {
                        Location::Field(..) => {
                            let held = run.heap_perm(&location);
                            if held >= BigRational::one() {
                                return out(Outcome::Infeasible);
                            }
                            (BigRational::one() - held) * half
                        }
                        Location::Instance(..) => half,
                    }
                } else {
                    self.with_pending(run, choices, |m, run| {
                        m.ev.amount_in(&m.state(run), amount.as_deref(), factor)
                    })?
                };
                self.give(run, location, amount, keep_values)
            }
            ExprKind::Call(..) if matches!(self.sem.call(e.id), Some(CallTarget::Predicate(_))) => {
                let location =
                    self.with_pending(run, choices, |m, run| m.ev.location_in(&m.state(run), e))?;
                self.give(run, location, factor.clone(), keep_values)
            }
            ExprKind::Binary(BinaryOp::And, a, b) => {
                self.inhale_times(run, a, factor, choices, keep_values)?;
                self.inhale_times(run, b, factor, choices, keep_values)
            }
            ExprKind::Binary(BinaryOp::Implies, a, b) => {
                let holds =
                    self.with_pending(run, choices, |m, run| m.ev.eval(&m.state(run), a))?;
                if holds == Value::Bool(true) {
                    self.inhale_times(run, b, factor, choices, keep_values)?;
                }
                Ok(())
            }
            ExprKind::Cond(c, a, b) => {
                let holds =
                    self.with_pending(run, choices, |m, run| m.ev.eval(&m.state(run), c))?;
                let branch = if holds == Value::Bool(true) { a } else { b };
                self.inhale_times(run, branch, factor, choices, keep_values)
            }
            ExprKind::Quantifier {
                kind: QuantifierKind::Forall,
                body,
                ..
            } if self.sem.type_of(e.id) == Some(&Type::Impure) => {
                let domain =
                    self.with_pending(run, choices, |m, run| m.ev.domain_in(&m.state(run), e))?;
                for values in domain {
                    let vars: Vec<VarId> = (0..values.len())
                        .filter_map(|i| self.sem.binders.get(&(e.id, i)).copied())
                        .collect();
                    for (var, v) in vars.iter().zip(&values) {
                        run.store.insert(*var, v.clone());
                    }
                    let r = self.inhale_times(run, body, factor, choices, keep_values);
                    for var in &vars {
                        run.store.remove(var);
                    }
                    r?;
                }
                Ok(())
            }
            ExprKind::InhaleExhale(inhaled, _) | ExprKind::Annotated(_, inhaled) => {
                self.inhale_times(run, inhaled, factor, choices, keep_values)
            }
            _ => {
                if self.solve_equality(run, e) {
                    return Ok(());
                }
                match self.with_pending(run, choices, |m, run| m.ev.eval(&m.state(run), e))? {
                    Value::Bool(true) => Ok(()),
                    Value::Bool(false) => out(Outcome::Infeasible),
                    other => out(Outcome::Unknown(format!("an inhaled {}", other.kind()))),
                }
            }
        }
    }

    fn give(
        &self,
        run: &mut Run,
        location: Location,
        amount: BigRational,
        keep_values: bool,
    ) -> X<()> {
        if amount < BigRational::zero() {
            return out(Outcome::Unknown("a negative permission inhaled".into()));
        }
        if amount.is_zero() {
            return Ok(());
        }
        match location {
            Location::Field(Value::Ref(Some(o)), f) => {
                let held = run.heap.perm(o, &f);
                let total = &held + &amount;
                if total > BigRational::one() {
                    // More than the whole of a location: no such state.
                    return out(Outcome::Infeasible);
                }
                let known = run.heap.value(o, &f).cloned();
                match known {
                    Some(v) if !held.is_zero() || keep_values => run.heap.set(o, &f, v, total),
                    _ => {
                        // A value of its own, chosen later (an equality may give it).
                        run.heap.set_perm(o, &f, total);
                        run.forget(o, f);
                    }
                }
                Ok(())
            }
            Location::Field(_, _) => out(Outcome::Infeasible),
            Location::Instance(p, args) => {
                let held = run.heap.instance(&p, &args);
                if held.is_zero() && !keep_values {
                    run.fresh.insert((p.clone(), args.clone()));
                }
                run.heap.set_instance(&p, args, held + amount);
                Ok(())
            }
        }
    }

    /// `acc(P(args), p)`: the predicate, its arguments and the amount.
    fn instance(
        &self,
        run: &Run,
        e: &Expr,
    ) -> X<(
        String,
        Vec<Value>,
        BigRational,
        &'p germanium_syntax::ast::Expr,
    )> {
        let (loc, amount) = match &e.kind {
            ExprKind::Acc(loc, amount) => (loc.as_ref(), amount.as_deref()),
            _ => (e, None),
        };
        let location = self.ev.location_in(&self.state(run), loc);
        let Location::Instance(name, args) = self.evaluated(run, location, true)? else {
            return out(Outcome::Unknown("fold or unfold of no predicate".into()));
        };
        let amount = self
            .ev
            .amount_in(&self.state(run), amount, &BigRational::one());
        let amount = self.evaluated(run, amount, true)?;
        let Some(body) = self
            .ev
            .predicates
            .get(name.as_str())
            .and_then(|p| p.body.as_ref())
        else {
            return out(Outcome::Unknown(format!("`{name}` is abstract")));
        };
        Ok((name, args, amount, body))
    }

    /// Binds a predicate's parameters to `args` for its body, and gives the old bindings.
    fn bind(&self, run: &mut Run, name: &str, args: &[Value]) -> Vec<(VarId, Option<Value>)> {
        let params = self
            .sem
            .predicates
            .get(name)
            .map(|p| p.params.clone())
            .unwrap_or_default();
        params
            .into_iter()
            .zip(args)
            .map(|(p, v)| (p, run.store.insert(p, v.clone())))
            .collect()
    }

    fn unbind(&self, run: &mut Run, saved: Vec<(VarId, Option<Value>)>) {
        for (p, v) in saved {
            match v {
                Some(v) => run.store.insert(p, v),
                None => run.store.remove(&p),
            };
        }
    }

    fn fold(&self, run: &mut Run, e: &Expr) -> X<()> {
        let (name, args, amount, body) = self.instance(run, e)?;
        let saved = self.bind(run, &name, &args);
        let state = self.state(run);
        let r = self.ev.take(&state, &run.heap, body, &amount);
        let taken = self.evaluated(run, r, true);
        self.unbind(run, saved);
        match taken? {
            Some(left) => {
                run.heap = left;
                let held = run.heap.instance(&name, &args);
                run.fresh.remove(&(name.clone(), args.clone()));
                run.heap.set_instance(&name, args, held + amount);
                Ok(())
            }
            None => self.fail(
                run,
                Check::Fold,
                e.span,
                "the predicate's body does not hold",
            ),
        }
    }

    fn unfold(&self, run: &mut Run, e: &Expr, choices: &mut dyn Choices) -> X<()> {
        let (name, args, amount, body) = self.instance(run, e)?;
        let held = run.heap.instance(&name, &args);
        if held < amount || amount <= BigRational::zero() {
            return self.fail(run, Check::Unfold, e.span, "the instance is not held");
        }
        run.heap.set_instance(&name, args.clone(), held - &amount);
        let fresh = run.fresh.contains(&(name.clone(), args.clone()));
        let saved = self.bind(run, &name, &args);
        let r = self.inhale_times(run, body, &amount, choices, !fresh);
        self.unbind(run, saved);
        r?;
        self.resolve_pending(run, choices)
    }

    /// A method call: the callee's precondition exhaled, its results and the locations it
    /// gives back chosen, its postcondition inhaled.
    fn call(
        &self,
        run: &mut Run,
        span: Span,
        name: &str,
        args: &[Expr],
        targets: &[Expr],
        choices: &mut dyn Choices,
    ) -> X<()> {
        let (Some(callee), Some(info)) = (
            self.ev.methods.get(name).copied(),
            self.sem.methods.get(name),
        ) else {
            return out(Outcome::Unknown(format!("no method `{name}`")));
        };
        let values = args
            .iter()
            .map(|a| self.value(run, a))
            .collect::<X<Vec<Value>>>()?;
        let caller_store = std::mem::take(&mut run.store);
        let caller_old = std::mem::take(&mut run.old);
        run.store = info.params.iter().copied().zip(values).collect();
        run.old = run.heap.clone();
        let outcome = (|| {
            for pre in &callee.contract.requires {
                self.exhale(run, pre, Check::CallPrecondition, true)?;
            }
            for r in &info.returns {
                run.pending.push(Pending::Var(*r));
            }
            for post in &callee.contract.ensures {
                self.inhale_times(run, post, &BigRational::one(), choices, false)?;
            }
            self.resolve_pending(run, choices)?;
            Ok(info
                .returns
                .iter()
                .map(|r| run.store[r].clone())
                .collect::<Vec<Value>>())
        })();
        let callee_store = std::mem::replace(&mut run.store, caller_store);
        run.old = caller_old;
        let results = match outcome {
            Ok(results) => results,
            Err(End::Out(Outcome::Failed(mut f))) => {
                // The failure is the call's, in the caller's state.
                f.span = span;
                f.store = run.store.clone();
                drop(callee_store);
                return out(Outcome::Failed(f));
            }
            Err(other) => return Err(other),
        };
        for (target, v) in targets.iter().zip(results) {
            self.assign(run, target, v)?;
        }
        Ok(())
    }

    fn while_loop(
        &self,
        run: &mut Run,
        cond: &Expr,
        invariants: &[Expr],
        body: &Block,
        choices: &mut dyn Choices,
    ) -> X<()> {
        for inv in invariants {
            self.exhale(run, inv, Check::InvariantOnEntry, true)?;
        }
        let mut assigned = Vec::new();
        assigned_vars(self.sem, body, &mut assigned);
        for var in assigned {
            if run.store.remove(&var).is_some() && !run.pending.contains(&Pending::Var(var)) {
                run.pending.push(Pending::Var(var));
            }
        }
        for inv in invariants {
            self.inhale_times(run, inv, &BigRational::one(), choices, false)?;
        }
        self.resolve_pending(run, choices)?;
        // The havocked values decide whether this run enters the body or leaves the loop.
        if self.boolean(run, cond)? {
            self.block(run, body, choices)?;
            for inv in invariants {
                self.exhale(run, inv, Check::InvariantPreserved, true)?;
            }
            return Err(End::PathDone);
        }
        Ok(())
    }
}

fn conjuncts<'e>(e: &'e Expr, into: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary(BinaryOp::And, a, b) => {
            conjuncts(a, into);
            conjuncts(b, into);
        }
        _ => into.push(e),
    }
}

/// The variables declared outside `block` that it assigns (a loop havocs them).
fn assigned_vars(sem: &Semantics, block: &Block, into: &mut Vec<VarId>) {
    for s in &block.stmts {
        match &s.kind {
            StmtKind::Assign(targets, _) => {
                for t in targets {
                    if let Some(v) = sem.idents.get(t.id.0 as usize).copied().flatten() {
                        into.push(v);
                    }
                }
            }
            StmtKind::New(t, _) => {
                if let Some(v) = sem.idents.get(t.id.0 as usize).copied().flatten() {
                    into.push(v);
                }
            }
            StmtKind::If {
                then, otherwise, ..
            } => {
                assigned_vars(sem, then, into);
                if let Some(b) = otherwise {
                    assigned_vars(sem, b, into);
                }
            }
            StmtKind::While { body, .. } | StmtKind::Block(body) => assigned_vars(sem, body, into),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
