//! The evaluator: an expression's value, or whether an assertion holds, in a concrete state.

mod abstract_functions;
mod assertions;
mod definitions;
mod domains;
mod operators;
mod ranges;
mod wands;

pub(crate) use abstract_functions::Application;
pub(crate) use assertions::{is_wildcard, Location};
pub(crate) use domains::instance_name;
pub use domains::{DomainModel, Table};
pub(crate) use ranges::{conjuncts, extend_combinations};
pub(crate) use wands::LHS_LABEL;

use std::cell::Cell;
use std::collections::HashMap;

use germanium_semantics::{CallTarget, FieldTarget, Semantics, VarId};
use germanium_syntax::ast::{
    Domain, Expr, ExprKind, Function, ItemKind, Method, Predicate, Program,
};
use germanium_syntax::Span;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

use crate::heap::Heap;
use crate::value::Value;

/// The reason of the well-definedness failure of an `asserting` whose assertion is false.
pub const ASSERTING_FAILED: &str = "the asserted assertion does not hold";

/// Why no value came out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Viper's well-definedness fails here: a missing permission, an index out of bounds, a
    /// division by zero, a function's precondition.
    Undefined { span: Span, reason: String },
    /// The value cannot be computed concretely (an unbounded quantifier, a domain function,
    /// an abstract function, recursion past the fuel, a construct not supported yet).
    Unknown(String),
}

pub(crate) type R<T> = Result<T, Stop>;

pub(crate) fn unknown<T>(why: impl Into<String>) -> R<T> {
    Err(Stop::Unknown(why.into()))
}

pub(crate) fn undefined<T>(span: Span, why: impl Into<String>) -> R<T> {
    Err(Stop::Undefined {
        span,
        reason: why.into(),
    })
}

/// A state to evaluate in: the variables' values, the heap, the heap `old` names and those
/// of the labels, and `result` (in a postcondition).
#[derive(Clone, Debug)]
pub struct State<'h> {
    pub store: HashMap<VarId, Value>,
    pub heap: &'h Heap,
    pub old: Option<&'h Heap>,
    pub labels: HashMap<String, &'h Heap>,
    pub result: Option<Value>,
    /// Whether the permission amounts held are not the ones Viper's semantics has (after a
    /// loop of labels, whose body a run enters with the loop's frame): `perm` and `forperm`
    /// are then unknown.
    pub amounts_unknown: bool,
    /// While the pure parts of an assertion inhaled times a fraction are evaluated (a
    /// predicate's body unfolded at a fraction): the fraction, by which an `unfolding` there
    /// scales the amount it needs, as Viper's permission scaling does. `None`: one.
    pub scale: Option<BigRational>,
}

impl<'h> State<'h> {
    pub fn new(heap: &'h Heap) -> State<'h> {
        State {
            store: HashMap::new(),
            heap,
            old: None,
            labels: HashMap::new(),
            result: None,
            amounts_unknown: false,
            scale: None,
        }
    }
}

/// Function applications evaluated at most this deep.
const MAX_DEPTH: u32 = 200;
/// Evaluation steps of one top-level call at most (recursive functions, big quantifiers).
const MAX_STEPS: u64 = 2_000_000;

/// Evaluates expressions and assertions of one well-typed program.
pub struct Evaluator<'p> {
    pub(crate) sem: &'p Semantics,
    pub(crate) functions: HashMap<&'p str, &'p Function>,
    pub(crate) predicates: HashMap<&'p str, &'p Predicate>,
    pub(crate) methods: HashMap<&'p str, &'p Method>,
    pub(crate) domains: HashMap<&'p str, &'p Domain>,
    /// Domain functions an axiom defines.
    definitions: HashMap<String, definitions::Definition<'p>>,
    depth: Cell<u32>,
    steps: Cell<u64>,
    /// Every step since the evaluator was made (a search's budget).
    total: Cell<u64>,
    /// The values a run chose for applications of functions without a body.
    interpretations: std::cell::RefCell<abstract_functions::Interpretations>,
    /// The value of every other application of a function without a body or postconditions.
    abstract_defaults: std::cell::RefCell<std::collections::BTreeMap<String, Value>>,
    /// The last application of a function without a body an evaluation needed a value
    /// for, and the heap its precondition took (see `exec::abstract_functions`).
    demand: std::cell::RefCell<Option<(abstract_functions::Application, Heap)>>,
    /// The types of the values the semantics leaves unspecified, by their applications'
    /// names (a destructor of another constructor).
    unspecified: std::cell::RefCell<HashMap<String, germanium_semantics::Type>>,
    demands_answered: Cell<usize>,
    /// The values a run chose for the program's domains.
    model: std::cell::RefCell<DomainModel>,
    /// While an axiom is checked: its instance and the integers the model mentions.
    axiom: std::cell::RefCell<Option<domains::AxiomContext>>,
    sample_ints: std::cell::OnceCell<Vec<i64>>,
}

/// The variables, `old` and labels in scope while evaluating (the heap is passed along, as
/// `old` and `unfolding` change it).
pub(crate) struct Scope<'s> {
    pub store: HashMap<VarId, Value>,
    pub old: Option<&'s Heap>,
    pub labels: &'s HashMap<String, &'s Heap>,
    pub result: Option<Value>,
    /// While an exhale's pure part is evaluated: what the exhale has left, where `perm` and
    /// `forperm` read (Viper evaluates them after the parts before are taken).
    pub held: Option<Heap>,
    /// See [`State::amounts_unknown`].
    pub amounts_unknown: bool,
    /// See [`State::scale`].
    pub scale: Option<BigRational>,
}

impl<'p> Evaluator<'p> {
    pub fn new(program: &'p Program, sem: &'p Semantics) -> Evaluator<'p> {
        let mut functions = HashMap::new();
        let mut predicates = HashMap::new();
        let mut methods = HashMap::new();
        for item in &program.items {
            match &item.kind {
                ItemKind::Method(m) => {
                    methods.insert(m.name.name.as_str(), m);
                }
                ItemKind::Function(f) => {
                    functions.insert(f.name.name.as_str(), f);
                }
                ItemKind::Predicate(p) => {
                    predicates.insert(p.name.name.as_str(), p);
                }
                _ => {}
            }
        }
        let domains = program.domains_by_name();
        let definitions = definitions::definitions(sem, &domains, &functions);
        Evaluator {
            sem,
            functions,
            predicates,
            methods,
            domains,
            definitions,
            depth: Cell::new(0),
            steps: Cell::new(0),
            total: Cell::new(0),
            interpretations: Default::default(),
            abstract_defaults: Default::default(),
            demand: Default::default(),
            unspecified: Default::default(),
            demands_answered: Cell::new(0),
            model: Default::default(),
            axiom: Default::default(),
            sample_ints: Default::default(),
        }
    }

    fn scope<'s>(&self, state: &'s State<'s>) -> Scope<'s> {
        self.steps.set(0);
        Scope {
            store: state.store.clone(),
            old: state.old,
            labels: &state.labels,
            result: state.result.clone(),
            held: None,
            amounts_unknown: state.amounts_unknown,
            scale: state.scale.clone(),
        }
    }

    /// The body of the predicate `name`, unless it is abstract.
    pub(crate) fn predicate_body(&self, name: &str) -> Option<&'p Expr> {
        self.predicates.get(name).and_then(|p| p.body.as_ref())
    }

    /// The value of the pure expression `e` in `state`.
    pub fn eval(&self, state: &State, e: &Expr) -> R<Value> {
        let mut scope = self.scope(state);
        self.value(&mut scope, state.heap, e)
    }

    /// Whether the assertion `e` holds in `state`: its pure parts are true and the state
    /// holds the permissions it asks, each taken as an exhale takes them (two halves of a
    /// location need the whole).
    pub fn holds(&self, state: &State, e: &Expr) -> R<bool> {
        let mut scope = self.scope(state);
        let mut left = state.heap.clone();
        self.consume(&mut scope, state.heap, &mut left, e, &BigRational::one())
    }

    /// What is left of `from` after the assertion `e` takes its permissions (times
    /// `factor`), if it holds; its parts are read in `state`.
    pub(crate) fn take(
        &self,
        state: &State,
        from: &Heap,
        e: &Expr,
        factor: &BigRational,
    ) -> R<Option<Heap>> {
        let mut scope = self.scope(state);
        let mut left = from.clone();
        let held = self.consume(&mut scope, state.heap, &mut left, e, factor)?;
        Ok(held.then_some(left))
    }

    /// The location `loc` names, in `state`.
    pub(crate) fn location_in(&self, state: &State, loc: &Expr) -> R<Location> {
        let mut scope = self.scope(state);
        self.location(&mut scope, state.heap, loc)
    }

    /// The identity of the magic wand `wand`, in `state`.
    pub(crate) fn wand_key_in(&self, state: &State, wand: &Expr) -> R<String> {
        let mut scope = self.scope(state);
        self.wand_key(&mut scope, state.heap, wand)
    }

    /// An `acc`'s amount times `factor`, in `state`.
    pub(crate) fn amount_in(
        &self,
        state: &State,
        amount: Option<&Expr>,
        factor: &BigRational,
    ) -> R<BigRational> {
        let mut scope = self.scope(state);
        self.amount(&mut scope, state.heap, amount, factor)
    }

    /// The values the variables of the quantifier `e` range over, in `state`.
    pub(crate) fn domain_in(&self, state: &State, e: &Expr) -> R<Vec<Vec<Value>>> {
        let mut scope = self.scope(state);
        self.domain(&mut scope, state.heap, e)
    }

    /// Evaluation steps since the evaluator was made.
    pub fn total_steps(&self) -> u64 {
        self.total.get()
    }

    pub(crate) fn step(&self) -> R<()> {
        self.total.set(self.total.get() + 1);
        let n = self.steps.get() + 1;
        self.steps.set(n);
        if n > MAX_STEPS {
            return unknown(format!("evaluation took more than {MAX_STEPS} steps"));
        }
        Ok(())
    }

    pub(crate) fn boolean(&self, scope: &mut Scope, heap: &Heap, e: &Expr) -> R<bool> {
        match self.value(scope, heap, e)? {
            Value::Bool(b) => Ok(b),
            other => unknown(format!("expected a Bool, got {}", other.kind())),
        }
    }

    /// The value of `e`.
    pub(crate) fn value(&self, scope: &mut Scope, heap: &Heap, e: &Expr) -> R<Value> {
        self.step()?;
        match &e.kind {
            ExprKind::IntLit(digits) => match digits.parse::<BigInt>() {
                Ok(i) => Ok(Value::Int(i)),
                Err(_) => unknown(format!("`{digits}` is no integer")),
            },
            ExprKind::BoolLit(b) => Ok(Value::Bool(*b)),
            ExprKind::Null => Ok(Value::null()),
            ExprKind::Result => match &scope.result {
                Some(v) => Ok(v.clone()),
                None => unknown("no value for `result`"),
            },
            ExprKind::Ident(name) => {
                let var = self.sem.var_id(e.id);
                match var.and_then(|v| scope.store.get(&v)) {
                    Some(v) => Ok(v.clone()),
                    None => unknown(format!("no value for `{}`", name.name)),
                }
            }
            ExprKind::Unary(op, inner) => {
                let v = self.value(scope, heap, inner)?;
                operators::unary(*op, v)
            }
            ExprKind::Binary(op, a, b) => self.binary(scope, heap, e, *op, a, b),
            ExprKind::Cond(c, a, b) => {
                if self.boolean(scope, heap, c)? {
                    self.value(scope, heap, a)
                } else {
                    self.value(scope, heap, b)
                }
            }
            ExprKind::FieldAccess(receiver, field) => {
                let target = self.sem.field_access(e.id).cloned();
                let v = self.value(scope, heap, receiver)?;
                match target {
                    Some(FieldTarget::Field(f)) => read_field(heap, e.span, &v, &f),
                    Some(FieldTarget::AdtDestructor {
                        constructor,
                        destructor,
                        ..
                    }) => self.destruct(&v, &constructor, &destructor, self.sem.type_of(e.id)),
                    Some(FieldTarget::AdtDiscriminator { constructor, .. }) => match v {
                        Value::Adt { constructor: c, .. } => Ok(Value::Bool(c == constructor)),
                        other => unknown(format!("`.is{constructor}` of a {}", other.kind())),
                    },
                    None => unknown(format!("unresolved `.{}`", field.name)),
                }
            }
            ExprKind::Call(name, args) => self.call(scope, heap, e, &name.name, args),
            ExprKind::Ascribed(inner, _) | ExprKind::Annotated(_, inner) => {
                self.value(scope, heap, inner)
            }
            ExprKind::Old(label, inner) => {
                let earlier = match label {
                    None => scope.old,
                    // `old[lhs]`: the state of the wand's left-hand side.
                    Some(l) if l.name == "lhs" => scope.labels.get(wands::LHS_LABEL).copied(),
                    Some(l) => scope.labels.get(l.name.as_str()).copied(),
                };
                match earlier {
                    // The earlier heap's permissions, not the exhale's.
                    Some(h) => self.with_held(scope, None, |ev, scope| ev.value(scope, h, inner)),
                    None => unknown("no heap for this `old`"),
                }
            }
            ExprKind::Let(_, bound, body) => {
                let v = self.value(scope, heap, bound)?;
                self.with_bound(scope, e, &[v], |ev, scope| ev.value(scope, heap, body))
            }
            ExprKind::Unfolding(..) if scope.held.is_some() && reads_permissions(e) => {
                unknown("`perm` inside an `unfolding` in an exhale")
            }
            ExprKind::Unfolding(instance, body) => {
                let unfolded = self.unfold(scope, heap, instance)?;
                self.value(scope, &unfolded, body)
            }
            ExprKind::Asserting(assertion, body) => {
                let mut left = heap.clone();
                if !self.consume(scope, heap, &mut left, assertion, &BigRational::one())? {
                    return undefined(assertion.span, ASSERTING_FAILED);
                }
                self.value(scope, heap, body)
            }
            ExprKind::Quantifier { kind, body, .. } => self.quantifier(scope, heap, e, *kind, body),
            ExprKind::Forperm {
                resources, body, ..
            } => self.forperm(scope, heap, e, resources, body),
            ExprKind::Perm(location) => self.perm_of(scope, heap, location).map(Value::Perm),
            ExprKind::Write => Ok(Value::write()),
            ExprKind::NoPerm => Ok(Value::none()),
            ExprKind::Collection(kind, _, items) => {
                let values = items
                    .iter()
                    .map(|i| self.value(scope, heap, i))
                    .collect::<R<Vec<Value>>>()?;
                Ok(operators::collection(*kind, values))
            }
            ExprKind::MapLit(_, pairs) => {
                let mut map = std::collections::BTreeMap::new();
                for (k, v) in pairs {
                    let k = self.value(scope, heap, k)?;
                    let v = self.value(scope, heap, v)?;
                    map.insert(k, v);
                }
                Ok(Value::Map(map))
            }
            ExprKind::Range(a, b) => {
                let a = self.value(scope, heap, a)?;
                let b = self.value(scope, heap, b)?;
                operators::range(a, b)
            }
            ExprKind::Index(s, i) => {
                let s = self.value(scope, heap, s)?;
                let i = self.value(scope, heap, i)?;
                operators::index(e.span, s, i)
            }
            ExprKind::Slice(s, from, to) => {
                let s = self.value(scope, heap, s)?;
                let from = match from {
                    Some(f) => Some(self.value(scope, heap, f)?),
                    None => None,
                };
                let to = match to {
                    Some(t) => Some(self.value(scope, heap, t)?),
                    None => None,
                };
                operators::slice(s, from, to)
            }
            ExprKind::Update(s, i, v) => {
                let s = self.value(scope, heap, s)?;
                let i = self.value(scope, heap, i)?;
                let v = self.value(scope, heap, v)?;
                operators::update(e.span, s, i, v)
            }
            ExprKind::Length(s) => operators::length(self.value(scope, heap, s)?),
            ExprKind::MapDomain(m) => operators::map_domain(self.value(scope, heap, m)?),
            ExprKind::MapRange(m) => operators::map_range(self.value(scope, heap, m)?),
            ExprKind::Acc(..) | ExprKind::InhaleExhale(..) => {
                // An assertion where a value is asked: whether it holds.
                let mut left = heap.clone();
                self.consume(scope, heap, &mut left, e, &BigRational::one())
                    .map(Value::Bool)
            }
            ExprKind::Wildcard | ExprKind::Epsilon | ExprKind::ReadPerm(_) => {
                unknown("a permission amount without a concrete value (wildcard, epsilon, rd)")
            }
            ExprKind::Lhs(inner) => match scope.labels.get(wands::LHS_LABEL).copied() {
                Some(h) => self.with_held(scope, None, |ev, scope| ev.value(scope, h, inner)),
                None => unknown("no left-hand-side state for this `old[lhs]`"),
            },
            ExprKind::Applying(wand, body) => self.applying(scope, heap, wand, body),
        }
    }

    /// `a op b`, with `&&`, `||`, `==>` and `--*` short-circuiting as Viper's
    /// well-definedness does.
    fn binary(
        &self,
        scope: &mut Scope,
        heap: &Heap,
        e: &Expr,
        op: germanium_syntax::ast::BinaryOp,
        a: &Expr,
        b: &Expr,
    ) -> R<Value> {
        use germanium_syntax::ast::BinaryOp as B;
        match op {
            B::And => Ok(Value::Bool(
                self.boolean(scope, heap, a)? && self.boolean(scope, heap, b)?,
            )),
            B::Or => Ok(Value::Bool(
                self.boolean(scope, heap, a)? || self.boolean(scope, heap, b)?,
            )),
            B::Implies => Ok(Value::Bool(
                !self.boolean(scope, heap, a)? || self.boolean(scope, heap, b)?,
            )),
            B::Wand => {
                let key = self.wand_key(scope, heap, e)?;
                Ok(Value::Bool(heap.holds_wand(&key)))
            }
            _ => {
                let perm_result = matches!(
                    self.sem.type_of(e.id),
                    Some(germanium_semantics::Type::Perm)
                );
                let x = self.value(scope, heap, a)?;
                let y = self.value(scope, heap, b)?;
                operators::binary(e.span, op, x, y, perm_result)
            }
        }
    }

    fn destruct(
        &self,
        v: &Value,
        constructor: &str,
        destructor: &str,
        ty: Option<&germanium_semantics::Type>,
    ) -> R<Value> {
        match v {
            Value::Adt {
                constructor: c,
                args,
            } if c == constructor => {
                let fields = &self
                    .sem
                    .constructors
                    .get(constructor)
                    .map(|c| c.fields.clone())
                    .unwrap_or_default();
                match fields.iter().position(|(name, _)| name == destructor) {
                    Some(i) if i < args.len() => Ok(args[i].clone()),
                    _ => unknown(format!("no destructor `{destructor}` of `{constructor}`")),
                }
            }
            // Viper leaves a destructor of another constructor unspecified: some value of
            // its type, the same for the same ADT value.
            Value::Adt { constructor: c, .. } => match ty {
                Some(ty) if ty.is_ground() => {
                    self.unspecified(format!("`{destructor}` of `{c}`"), v.clone(), ty.clone())
                }
                _ => unknown(format!("`{destructor}` of a `{c}` value is unspecified")),
            },
            other => unknown(format!("`{destructor}` of a {}", other.kind())),
        }
    }

    /// `name(args)`: a function run on its body, an ADT constructor; a predicate instance as
    /// an assertion (whether it is held).
    fn call(
        &self,
        scope: &mut Scope,
        heap: &Heap,
        e: &Expr,
        name: &str,
        args: &[Expr],
    ) -> R<Value> {
        let target = self.sem.call(e.id).cloned();
        let values = args
            .iter()
            .map(|a| self.value(scope, heap, a))
            .collect::<R<Vec<Value>>>()?;
        match target {
            Some(CallTarget::Function(f)) => self.apply_as(heap, e.span, &f, values, true),
            Some(CallTarget::AdtConstructor { constructor, .. }) => Ok(Value::Adt {
                constructor,
                args: values,
            }),
            // `P(args)` as an assertion is `acc(P(args))`: the whole instance.
            Some(CallTarget::Predicate(p)) => Ok(Value::Bool(
                heap.instance(&p, &values) >= BigRational::one(),
            )),
            Some(CallTarget::DomainFunction {
                function,
                type_args,
                ..
            }) => self.domain_application(heap, &function, &type_args, values),
            Some(CallTarget::Method(_)) | None => unknown(format!("`{name}` is no function")),
        }
    }

    /// A heap-dependent function applied: its precondition must hold, then its body is run
    /// (the tests' entry; applications inside expressions are a caller's, `apply_as`).
    #[cfg(test)]
    pub(crate) fn apply(&self, heap: &Heap, span: Span, name: &str, args: Vec<Value>) -> R<Value> {
        self.apply_as(heap, span, name, args, false)
    }

    /// [`Evaluator::apply`]; `in_caller`: as a caller sees it, which checks only the
    /// precondition (a body not well-defined there is the function's own failure, and the
    /// value is not known to the caller) and assumes the postcondition's inhaled parts.
    fn apply_as(
        &self,
        heap: &Heap,
        span: Span,
        name: &str,
        args: Vec<Value>,
        in_caller: bool,
    ) -> R<Value> {
        let Some(function) = self.functions.get(name).copied() else {
            return unknown(format!("no function `{name}`"));
        };
        let depth = self.depth.get();
        if depth >= MAX_DEPTH {
            return unknown(format!(
                "function applications nested deeper than {MAX_DEPTH}"
            ));
        }
        self.depth.set(depth + 1);
        let outcome = (|| {
            let Some(left) = self.precondition_left(heap, name, &args)? else {
                return undefined(span, format!("the precondition of `{name}` does not hold"));
            };
            match &function.body {
                Some(_) if !self.inhaled_parts_hold(heap, name, &args, None)? => unknown(format!(
                    "`{name}` applied where the inhaled part of its precondition does not hold"
                )),
                Some(body) => {
                    let value = match self.value(&mut self.function_scope(name, &args), heap, body)
                    {
                        // The body is not well-defined here: the function's own verification
                        // fails; a caller checks only the precondition, so the value is not
                        // known to it.
                        Err(Stop::Undefined { .. }) if in_caller => {
                            return unknown(format!(
                                "the body of `{name}` is not well-defined here"
                            ))
                        }
                        other => other?,
                    };
                    // A postcondition `[a, b]`: callers assume `a`, which the function's own
                    // verification never checked; a value that breaks it is no run of theirs.
                    if in_caller && !self.inhaled_parts_hold(heap, name, &args, Some(&value))? {
                        return unknown(format!(
                            "`{name}` gives a value the inhaled part of its postcondition rules out"
                        ));
                    }
                    Ok(value)
                }
                None => {
                    let taken = heap.taken_by(&left);
                    let app = self.application(name, &args, &taken)?;
                    self.interpreted(app, taken)
                }
            }
        })();
        self.depth.set(depth);
        outcome
    }

    /// Runs `then` with `held` as where `perm` reads (see [`Scope::held`]), the outer one
    /// back after.
    pub(crate) fn with_held<T>(
        &self,
        scope: &mut Scope,
        held: Option<Heap>,
        then: impl FnOnce(&Self, &mut Scope) -> R<T>,
    ) -> R<T> {
        let outer = std::mem::replace(&mut scope.held, held);
        let out = then(self, scope);
        scope.held = outer;
        out
    }

    /// The declared types of the variables the quantifier `e` binds (none for another
    /// expression).
    pub(crate) fn quantified_types(&self, e: &Expr) -> Vec<germanium_semantics::Type> {
        let ExprKind::Quantifier { vars, .. } = &e.kind else {
            return Vec::new();
        };
        (0..vars.len())
            .filter_map(|i| self.sem.binders.get(&(e.id, i)))
            .map(|v| self.sem.var(*v).ty.clone())
            .collect()
    }

    /// Runs `then` with the variables `e` binds (a `let`'s, a quantifier's) set to `values`.
    pub(crate) fn with_bound<T>(
        &self,
        scope: &mut Scope,
        e: &Expr,
        values: &[Value],
        then: impl FnOnce(&Self, &mut Scope) -> R<T>,
    ) -> R<T> {
        let vars: Vec<VarId> = (0..values.len())
            .map(|i| self.sem.binders.get(&(e.id, i)).copied())
            .collect::<Option<Vec<VarId>>>()
            .ok_or_else(|| Stop::Unknown("a bound variable without its declaration".into()))?;
        for (var, v) in vars.iter().zip(values) {
            scope.store.insert(*var, v.clone());
        }
        let out = then(self, scope);
        for var in &vars {
            scope.store.remove(var);
        }
        out
    }
}

/// Whether `e` reads permission amounts (`perm`, `forperm`).
pub(crate) fn reads_permissions(e: &Expr) -> bool {
    let mut reads = false;
    germanium_semantics::visit::walk_expr(e, &mut |sub| {
        reads |= matches!(sub.kind, ExprKind::Perm(_) | ExprKind::Forperm { .. });
    });
    reads
}

/// `o.f` in `heap`: the value, where some permission is held.
pub(crate) fn read_field(heap: &Heap, span: Span, receiver: &Value, field: &str) -> R<Value> {
    match receiver {
        Value::Ref(Some(o)) => {
            if heap.perm(*o, field) <= BigRational::zero() {
                return undefined(span, format!("no permission to {o}.{field}"));
            }
            match heap.value(*o, field) {
                Some(v) => Ok(v.clone()),
                None => unknown(format!("{o}.{field} has no value")),
            }
        }
        Value::Ref(None) => undefined(span, format!("null.{field}: the receiver is null")),
        other => unknown(format!("a field of a {}", other.kind())),
    }
}

#[cfg(test)]
mod tests;
