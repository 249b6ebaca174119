//! Assertions over a concrete state: whether the permissions they ask are held (taken as an
//! exhale takes them), `perm`, `forperm`, and the heap inside `unfolding`.

use germanium_semantics::{CallTarget, FieldTarget};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind, QuantifierKind};
use num_rational::BigRational;
use num_traits::{One, Zero};

use super::{undefined, unknown, Evaluator, Scope, State, Stop, MAX_DEPTH, R};
use crate::heap::Heap;
use crate::value::Value;

/// A location an `acc` names.
pub(crate) enum Location {
    Field(Value, String),
    Instance(String, Vec<Value>),
}

/// Why `perm` is unknown in a run whose amounts are not Viper's.
const AMOUNTS_UNKNOWN: &str =
    "a permission amount read after a loop of labels (the run holds the loop's frame too)";

impl Evaluator<'_> {
    /// The location `loc` names (`e.f` or `P(args)`), its parts evaluated in `heap`.
    pub(crate) fn location(&self, scope: &mut Scope, heap: &Heap, loc: &Expr) -> R<Location> {
        match &loc.kind {
            ExprKind::FieldAccess(receiver, field) => {
                match self.sem.field_access(loc.id).cloned() {
                    Some(FieldTarget::Field(f)) => {
                        Ok(Location::Field(self.value(scope, heap, receiver)?, f))
                    }
                    _ => unknown(format!("`.{}` is no field", field.name)),
                }
            }
            ExprKind::Call(name, args) => match self.sem.call(loc.id) {
                Some(CallTarget::Predicate(p)) => {
                    let p = p.clone();
                    let values = args
                        .iter()
                        .map(|a| self.value(scope, heap, a))
                        .collect::<R<Vec<Value>>>()?;
                    Ok(Location::Instance(p, values))
                }
                _ => unknown(format!("`{}` is no predicate", name.name)),
            },
            _ => unknown("magic wands are not evaluated concretely yet"),
        }
    }

    /// An `acc`'s amount times `factor` (`write` when none is given).
    pub(crate) fn amount(
        &self,
        scope: &mut Scope,
        heap: &Heap,
        amount: Option<&Expr>,
        factor: &BigRational,
    ) -> R<BigRational> {
        let Some(amount) = amount else {
            return Ok(factor.clone());
        };
        match self.value(scope, heap, amount)? {
            Value::Perm(p) => Ok(p * factor),
            Value::Int(i) => Ok(BigRational::from_integer(i) * factor),
            other => unknown(format!("a permission amount of type {}", other.kind())),
        }
    }

    /// Whether `e` holds, taking the permissions it asks (times `factor`) from `left`; its
    /// parts are read in `heap`, the state before.
    pub(crate) fn consume(
        &self,
        scope: &mut Scope,
        heap: &Heap,
        left: &mut Heap,
        e: &Expr,
        factor: &BigRational,
    ) -> R<bool> {
        self.step()?;
        match &e.kind {
            ExprKind::Acc(loc, amount) => {
                let location = self.location(scope, heap, loc)?;
                if is_wildcard(amount.as_deref()) {
                    // Some positive amount below what is held: half of it.
                    let held = match &location {
                        Location::Field(Value::Ref(Some(o)), f) => left.perm(*o, f),
                        Location::Field(..) => BigRational::zero(),
                        Location::Instance(p, args) => left.instance(p, args),
                    };
                    if held <= BigRational::zero() {
                        return Ok(false);
                    }
                    return take(
                        e,
                        left,
                        location,
                        held / BigRational::from_integer(2.into()),
                    );
                }
                let amount = self.amount(scope, heap, amount.as_deref(), factor)?;
                take(e, left, location, amount)
            }
            ExprKind::Call(..) if matches!(self.sem.call(e.id), Some(CallTarget::Predicate(_))) => {
                let location = self.location(scope, heap, e)?;
                take(e, left, location, factor.clone())
            }
            ExprKind::Binary(BinaryOp::And, a, b) => Ok(self
                .consume(scope, heap, left, a, factor)?
                && self.consume(scope, heap, left, b, factor)?),
            ExprKind::Binary(BinaryOp::Implies, a, b) => {
                if self.pure_part(scope, heap, left, a)? {
                    self.consume(scope, heap, left, b, factor)
                } else {
                    Ok(true)
                }
            }
            ExprKind::Cond(c, a, b) => {
                let branch = if self.pure_part(scope, heap, left, c)? {
                    a
                } else {
                    b
                };
                self.consume(scope, heap, left, branch, factor)
            }
            ExprKind::Let(_, bound, body) => {
                let v = self.value(scope, heap, bound)?;
                self.with_bound(scope, e, &[v], |ev, scope| {
                    ev.consume(scope, heap, left, body, factor)
                })
            }
            ExprKind::Quantifier {
                kind: QuantifierKind::Forall,
                body,
                ..
            } if matches!(
                self.sem.type_of(e.id),
                Some(germanium_semantics::Type::Impure)
            ) =>
            {
                for values in self.domain(scope, heap, e)? {
                    let held = self.with_bound(scope, e, &values, |ev, scope| {
                        ev.consume(scope, heap, left, body, factor)
                    })?;
                    if !held {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            ExprKind::Binary(BinaryOp::Wand, ..) => {
                if !factor.is_one() {
                    return unknown("a magic wand under a fraction");
                }
                let key = self.wand_key(scope, heap, e)?;
                Ok(left.take_wand(&key).is_some())
            }
            // A check exhales: the right-hand side.
            ExprKind::InhaleExhale(_, exhaled) => self.consume(scope, heap, left, exhaled, factor),
            ExprKind::Annotated(_, inner) => self.consume(scope, heap, left, inner, factor),
            _ => self.pure_part(scope, heap, left, e),
        }
    }

    /// A pure part of an assertion being taken: values read in `heap`, permission amounts
    /// in what is `left` of it.
    fn pure_part(&self, scope: &mut Scope, heap: &Heap, left: &Heap, e: &Expr) -> R<bool> {
        if !super::reads_permissions(e) {
            return self.boolean(scope, heap, e);
        }
        self.with_held(scope, Some(left.clone()), |ev, scope| {
            ev.boolean(scope, heap, e)
        })
    }

    /// The locations and amounts the access predicate, predicate instance or quantified
    /// permission `e` asks, in `state`; `None` for another shape (a quantifier's body must
    /// be an access predicate under pure conditions).
    pub(crate) fn asks_in(
        &self,
        state: &State,
        e: &Expr,
    ) -> R<Option<Vec<(Location, BigRational)>>> {
        let mut scope = self.scope(state);
        let mut into = Vec::new();
        Ok(self
            .asks(&mut scope, state.heap, e, &mut into)?
            .then_some(into))
    }

    fn asks(
        &self,
        scope: &mut Scope,
        heap: &Heap,
        e: &Expr,
        into: &mut Vec<(Location, BigRational)>,
    ) -> R<bool> {
        match &e.kind {
            ExprKind::Acc(loc, amount) if !is_wildcard(amount.as_deref()) => {
                let location = self.location(scope, heap, loc)?;
                let amount = self.amount(scope, heap, amount.as_deref(), &BigRational::one())?;
                into.push((location, amount));
                Ok(true)
            }
            ExprKind::Call(..) if matches!(self.sem.call(e.id), Some(CallTarget::Predicate(_))) => {
                into.push((self.location(scope, heap, e)?, BigRational::one()));
                Ok(true)
            }
            ExprKind::Binary(BinaryOp::Implies, c, b) => {
                if self.boolean(scope, heap, c)? {
                    self.asks(scope, heap, b, into)
                } else {
                    Ok(true)
                }
            }
            ExprKind::Quantifier {
                kind: QuantifierKind::Forall,
                body,
                ..
            } => {
                for values in self.domain(scope, heap, e)? {
                    let asked = self.with_bound(scope, e, &values, |ev, scope| {
                        ev.asks(scope, heap, body, into)
                    })?;
                    if !asked {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            ExprKind::Annotated(_, inner) => self.asks(scope, heap, inner, into),
            _ => Ok(false),
        }
    }

    /// `perm(loc)`.
    pub(crate) fn perm_of(&self, scope: &mut Scope, heap: &Heap, loc: &Expr) -> R<BigRational> {
        if scope.amounts_unknown {
            return unknown(AMOUNTS_UNKNOWN);
        }
        let location = self.location(scope, heap, loc)?;
        let held = scope.held.as_ref().unwrap_or(heap);
        Ok(match location {
            Location::Field(Value::Ref(Some(o)), f) => held.perm(o, &f),
            Location::Field(_, _) => BigRational::zero(),
            Location::Instance(p, args) => held.instance(&p, &args),
        })
    }

    /// `forperm x: Ref [x.f] :: body`: the body for every object whose `f` is held.
    pub(crate) fn forperm(
        &self,
        scope: &mut Scope,
        heap: &Heap,
        e: &Expr,
        resources: &[Expr],
        body: &Expr,
    ) -> R<Value> {
        let [resource] = resources else {
            return unknown("`forperm` over several resources");
        };
        let field = match (&resource.kind, self.sem.field_access(resource.id)) {
            (ExprKind::FieldAccess(..), Some(FieldTarget::Field(f))) => f.clone(),
            (ExprKind::Call(_, args), _) => {
                return self.forperm_instances(scope, heap, e, resource, args, body)
            }
            _ => return unknown("`forperm` over wands"),
        };
        if scope.amounts_unknown {
            return unknown(AMOUNTS_UNKNOWN);
        }
        let exhaled = scope.held.clone();
        let held = exhaled.as_ref().unwrap_or(heap);
        for o in heap.all_objects() {
            if held.perm(o, &field) > BigRational::zero() {
                let holds = self.with_bound(scope, e, &[Value::Ref(Some(o))], |ev, scope| {
                    ev.boolean(scope, heap, body)
                })?;
                if !holds {
                    return Ok(Value::Bool(false));
                }
            }
        }
        Ok(Value::Bool(true))
    }

    /// `forperm xs [P(xs)] :: body`: the body for the arguments of every instance of `P`
    /// held (each argument one of the variables, in order).
    fn forperm_instances(
        &self,
        scope: &mut Scope,
        heap: &Heap,
        e: &Expr,
        resource: &Expr,
        args: &[Expr],
        body: &Expr,
    ) -> R<Value> {
        let Some(CallTarget::Predicate(p)) = self.sem.call(resource.id) else {
            return unknown("`forperm` over no predicate");
        };
        let vars: Vec<Option<germanium_semantics::VarId>> = (0..args.len())
            .map(|i| self.sem.binders.get(&(e.id, i)).copied())
            .collect();
        let in_order = args.iter().zip(&vars).all(|(a, v)| {
            matches!(a.kind, ExprKind::Ident(_)) && v.is_some() && self.sem.var_id(a.id) == *v
        });
        if !in_order || self.sem.binders.contains_key(&(e.id, args.len())) {
            return unknown("`forperm` over instances whose arguments are not its variables");
        }
        if scope.amounts_unknown {
            return unknown(AMOUNTS_UNKNOWN);
        }
        let exhaled = scope.held.clone();
        let held = exhaled.as_ref().unwrap_or(heap);
        for ((q, values), amount) in &held.predicates {
            if q != p || *amount <= BigRational::zero() {
                continue;
            }
            let holds =
                self.with_bound(scope, e, values, |ev, scope| ev.boolean(scope, heap, body))?;
            if !holds {
                return Ok(Value::Bool(false));
            }
        }
        Ok(Value::Bool(true))
    }

    /// The heap inside `unfolding P(args) in ..`: the instance given up, what its body holds
    /// (times the instance's amount) added.
    pub(crate) fn unfold(&self, scope: &mut Scope, heap: &Heap, instance: &Expr) -> R<Heap> {
        let (loc, amount) = match &instance.kind {
            ExprKind::Acc(loc, amount) => (loc.as_ref(), amount.as_deref()),
            _ => (instance, None),
        };
        let Location::Instance(name, args) = self.location(scope, heap, loc)? else {
            return unknown("`unfolding` of a field");
        };
        let held = heap.instance(&name, &args);
        // A wildcard unfolds some positive amount held: half of it.
        let amount = if is_wildcard(amount) {
            &held / BigRational::from_integer(2.into())
        } else {
            let scale = scope.scale.clone().unwrap_or_else(BigRational::one);
            self.amount(scope, heap, amount, &scale)?
        };
        if held < amount || amount <= BigRational::zero() {
            return undefined(
                instance.span,
                format!("no permission to the instance {name}({})", show(&args)),
            );
        }
        let Some(predicate) = self.predicates.get(name.as_str()).copied() else {
            return unknown(format!("no predicate `{name}`"));
        };
        let Some(body) = &predicate.body else {
            return unknown(format!("`{name}` is abstract"));
        };
        let params = self
            .sem
            .predicates
            .get(&name)
            .map(|p| p.params.clone())
            .unwrap_or_default();
        let mut inside = heap.clone();
        inside.set_instance(&name, args.clone(), held - &amount);
        let labels = Default::default();
        let mut body_scope = Scope {
            store: params.into_iter().zip(args).collect(),
            old: None,
            labels: &labels,
            result: None,
            held: None,
            amounts_unknown: scope.amounts_unknown,
            scale: None,
        };
        self.produce(&mut body_scope, &mut inside, body, &amount)?;
        Ok(inside)
    }

    /// Adds what `e` holds (times `factor`) to `heap`, its conditions read as it grows.
    fn produce(&self, scope: &mut Scope, heap: &mut Heap, e: &Expr, factor: &BigRational) -> R<()> {
        self.step()?;
        match &e.kind {
            ExprKind::Acc(loc, amount) => {
                let now = heap.clone();
                let location = self.location(scope, &now, loc)?;
                // A wildcard in a body held some positive amount: half of the instance's.
                let amount = if is_wildcard(amount.as_deref()) {
                    factor / BigRational::from_integer(2.into())
                } else {
                    self.amount(scope, &now, amount.as_deref(), factor)?
                };
                give(heap, location, amount)
            }
            ExprKind::Call(..) if matches!(self.sem.call(e.id), Some(CallTarget::Predicate(_))) => {
                let now = heap.clone();
                let location = self.location(scope, &now, e)?;
                give(heap, location, factor.clone())
            }
            ExprKind::Binary(BinaryOp::And, a, b) => {
                self.produce(scope, heap, a, factor)?;
                self.produce(scope, heap, b, factor)
            }
            ExprKind::Binary(BinaryOp::Implies, a, b) => {
                let now = heap.clone();
                if self.boolean(scope, &now, a)? {
                    self.produce(scope, heap, b, factor)?;
                }
                Ok(())
            }
            ExprKind::Cond(c, a, b) => {
                let now = heap.clone();
                let branch = if self.boolean(scope, &now, c)? { a } else { b };
                self.produce(scope, heap, branch, factor)
            }
            ExprKind::Let(_, bound, body) => {
                let now = heap.clone();
                let v = self.value(scope, &now, bound)?;
                self.with_bound(scope, e, &[v], |ev, scope| {
                    ev.produce(scope, heap, body, factor)
                })
            }
            ExprKind::Quantifier {
                kind: QuantifierKind::Forall,
                body,
                ..
            } => {
                let now = heap.clone();
                for values in self.domain(scope, &now, e)? {
                    self.with_bound(scope, e, &values, |ev, scope| {
                        ev.produce(scope, heap, body, factor)
                    })?;
                }
                Ok(())
            }
            ExprKind::Annotated(_, inner) | ExprKind::InhaleExhale(inner, _) => {
                self.produce(scope, heap, inner, factor)
            }
            // Pure parts hold where the instance was folded; an instance a run was given (a
            // precondition's) may not meet them, and then the run is none of the program's.
            _ => {
                let now = heap.clone();
                // Reading a pure part may unfold nested instances, each read again here:
                // nested as deep as function applications may be.
                let depth = self.depth.get();
                if depth >= MAX_DEPTH {
                    return unknown(format!("instances nested deeper than {MAX_DEPTH}"));
                }
                self.depth.set(depth + 1);
                let holds = self.boolean(scope, &now, e);
                self.depth.set(depth);
                match holds {
                    Ok(true) => Ok(()),
                    Ok(false) | Err(Stop::Undefined { .. }) => {
                        unknown("an instance whose body does not hold")
                    }
                    Err(stop) => Err(stop),
                }
            }
        }
    }
}

/// Whether an `acc`'s amount is `wildcard`.
pub(crate) fn is_wildcard(amount: Option<&Expr>) -> bool {
    matches!(amount.map(|a| &a.kind), Some(ExprKind::Wildcard))
}

fn show(args: &[Value]) -> String {
    args.iter()
        .map(|a| a.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Takes `amount` of `location` from `left`: whether it was there.
fn take(e: &Expr, left: &mut Heap, location: Location, amount: BigRational) -> R<bool> {
    if amount < BigRational::zero() {
        return undefined(e.span, "the permission amount is negative");
    }
    match location {
        Location::Field(Value::Ref(Some(o)), f) => {
            let held = left.perm(o, &f);
            if held < amount {
                return Ok(false);
            }
            left.set_perm(o, &f, held - amount);
            Ok(true)
        }
        // No permission to a field of null is ever held.
        Location::Field(_, _) => Ok(amount.is_zero()),
        Location::Instance(p, args) => {
            let held = left.instance(&p, &args);
            if held < amount {
                return Ok(false);
            }
            left.set_instance(&p, args, held - amount);
            Ok(true)
        }
    }
}

/// Adds `amount` of `location` to `heap`.
fn give(heap: &mut Heap, location: Location, amount: BigRational) -> R<()> {
    match location {
        Location::Field(Value::Ref(Some(o)), f) => {
            let held = heap.perm(o, &f);
            heap.set_perm(o, &f, held + amount);
            Ok(())
        }
        Location::Field(_, _) => unknown("a predicate body holding a field of null"),
        Location::Instance(p, args) => {
            let held = heap.instance(&p, &args);
            heap.set_instance(&p, args, held + amount);
            Ok(())
        }
    }
}
