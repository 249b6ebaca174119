//! Functions without a body: each application's value is one the run chooses (see
//! `exec::abstract_functions`), kept for the rest of the run so that equal applications
//! are equal. An application is its function, its arguments and the values of the field
//! locations its precondition reads (a heap-dependent function is a function of those).

use std::collections::BTreeMap;

use germanium_syntax::ast::{Expr, ExprKind};
use num_rational::BigRational;

use super::{unknown, Evaluator, Scope, State, R};
use crate::heap::{Heap, ObjectId};
use crate::value::Value;

/// An application of a function without a body: name, arguments, the values its
/// precondition's field locations have, and the predicate instances it holds (not their
/// contents: see [`Evaluator::application`]).
pub type Application = (
    String,
    Vec<Value>,
    Vec<((ObjectId, String), Value)>,
    Vec<(String, Vec<Value>)>,
);

/// Demands for values (see [`Evaluator::interpreted`]) one run answers at most.
const MAX_DEMANDS: usize = 32;

/// The values chosen for applications so far in a run.
pub(crate) type Interpretations = BTreeMap<Application, Value>;

impl Evaluator<'_> {
    /// Forgets every chosen value (a run begins).
    pub fn clear_interpretations(&self) {
        self.interpretations.borrow_mut().clear();
        self.abstract_defaults.borrow_mut().clear();
        self.forget_demand();
        self.demands_answered.set(0);
        *self.model.borrow_mut() = Default::default();
    }

    /// Keeps `value` as the value of `application` for the rest of the run.
    pub fn interpret(&self, application: Application, value: Value) {
        self.interpretations.borrow_mut().insert(application, value);
    }

    /// The application `name(args)` in `heap`, whose precondition took `taken`. Where the
    /// precondition holds predicate instances, the application is told apart by which
    /// instances, not by their contents: only for a function without postconditions, whose
    /// any values make a model (one that gives the same value for all contents of an
    /// instance is one).
    pub(crate) fn application(&self, name: &str, args: &[Value], taken: &Heap) -> R<Application> {
        if !taken.predicates.is_empty() && !self.unconstrained(name) {
            return unknown(format!(
                "`{name}` has no body and its precondition holds predicate instances"
            ));
        }
        let instances = taken.predicates.keys().cloned().collect();
        let mut reads = Vec::new();
        for (o, f) in taken.perms.keys() {
            match taken.value(*o, f) {
                Some(v) => reads.push(((*o, f.clone()), v.clone())),
                None => return unknown(format!("{o}.{f} has no value")),
            }
        }
        Ok((name.to_string(), args.to_vec(), reads, instances))
    }

    /// The chosen value of an application of a function without a body; for a function
    /// without postconditions an application not chosen takes (and keeps) the function's
    /// default, where one is chosen: any values make a model of such a function. Any other
    /// is unknown, and kept as the evaluation's demand (with `taken`, the heap its
    /// precondition took), which the run may answer with a value and evaluate again.
    pub(crate) fn interpreted(&self, application: Application, taken: Heap) -> R<Value> {
        if let Some(v) = self.interpretations.borrow().get(&application) {
            return Ok(v.clone());
        }
        let default = self.abstract_defaults.borrow().get(&application.0).cloned();
        match default {
            Some(v) => {
                self.interpret(application, v.clone());
                Ok(v)
            }
            None => {
                let why = format!("`{}` has no body", application.0);
                *self.demand.borrow_mut() = Some((application, taken));
                unknown(why)
            }
        }
    }

    /// A value the semantics leaves unspecified (`name` says which, such as a destructor of
    /// another constructor) for `of`: chosen as a function's application is, and kept.
    pub(crate) fn unspecified(
        &self,
        name: String,
        of: Value,
        ty: germanium_semantics::Type,
    ) -> R<Value> {
        self.unspecified.borrow_mut().insert(name.clone(), ty);
        self.interpreted((name, vec![of], Vec::new(), Vec::new()), Heap::default())
    }

    /// The type of the unspecified values named `name`, if they are such.
    pub(crate) fn unspecified_type(&self, name: &str) -> Option<germanium_semantics::Type> {
        self.unspecified.borrow().get(name).cloned()
    }

    /// Forgets the demand an earlier evaluation left.
    pub(crate) fn forget_demand(&self) {
        self.demand.borrow_mut().take();
    }

    /// The application an evaluation needed a value for since the demand was last taken or
    /// forgotten, where the run may still answer it (it has no value yet, and the run has
    /// answered fewer than `MAX_DEMANDS`); it counts as answered.
    pub(crate) fn answerable_demand(&self) -> Option<(Application, Heap)> {
        let (app, taken) = self.demand.borrow_mut().take()?;
        let answered = self.demands_answered.get();
        if self.is_interpreted(&app) || answered >= MAX_DEMANDS {
            return None;
        }
        self.demands_answered.set(answered + 1);
        Some((app, taken))
    }

    /// Whether `application` has a value chosen for it (or read through the default).
    pub(crate) fn is_interpreted(&self, application: &Application) -> bool {
        self.interpretations.borrow().contains_key(application)
    }

    /// Whether `name` is a function without a body and without postconditions.
    pub(crate) fn unconstrained(&self, name: &str) -> bool {
        self.functions
            .get(name)
            .is_some_and(|f| f.body.is_none() && f.contract.ensures.is_empty())
    }

    /// Whether the function `name` has a default value in this run.
    pub(crate) fn has_default(&self, name: &str) -> bool {
        self.abstract_defaults.borrow().contains_key(name)
    }

    /// Keeps `value` as the value of every application of `name` not chosen otherwise.
    pub(crate) fn set_default(&self, name: &str, value: Value) {
        self.abstract_defaults
            .borrow_mut()
            .insert(name.to_string(), value);
    }

    /// The application `e` (of a function without a body) names in `state`, if its
    /// arguments have values and its precondition holds there.
    pub fn abstract_application(&self, state: &State, e: &Expr) -> R<Option<Application>> {
        let ExprKind::Call(name, args) = &e.kind else {
            return Ok(None);
        };
        let Some(function) = self.functions.get(name.name.as_str()).copied() else {
            return Ok(None);
        };
        if function.body.is_some() {
            return Ok(None);
        }
        let mut scope = self.scope(state);
        let values = args
            .iter()
            .map(|a| self.value(&mut scope, state.heap, a))
            .collect::<R<Vec<Value>>>()?;
        let Some(left) = self.precondition_left(state.heap, &name.name, &values)? else {
            return Ok(None);
        };
        Ok(Some(self.application(
            &name.name,
            &values,
            &state.heap.taken_by(&left),
        )?))
    }

    /// What is left of `heap` once the precondition of `name(args)` is taken; `None` where
    /// it does not hold. As in Viper (Silicon's default, and both back ends), an application
    /// needs *some* permission to each location its precondition names, not the amount
    /// written: the amounts are taken scaled by a tiny factor.
    pub(crate) fn precondition_left(
        &self,
        heap: &Heap,
        name: &str,
        args: &[Value],
    ) -> R<Option<Heap>> {
        let Some(function) = self.functions.get(name).copied() else {
            return unknown(format!("no function `{name}`"));
        };
        let mut inner = self.function_scope(name, args);
        let mut left = heap.clone();
        let some = BigRational::new(1.into(), (1u128 << 100).into());
        for pre in &function.contract.requires {
            if !self.consume(&mut inner, heap, &mut left, pre, &some)? {
                return Ok(None);
            }
        }
        Ok(Some(left))
    }

    /// Whether the inhaled parts `a` of the inhale-exhale clauses `[a, b]` of `name(args)`
    /// hold (true where it has none): of its precondition, or, given its value `result`,
    /// of its postcondition. An application checks a precondition's `b` only, while the
    /// body defines the value only where `a` holds; callers assume a postcondition's `a`,
    /// which the function's own verification never checked.
    pub(crate) fn inhaled_parts_hold(
        &self,
        heap: &Heap,
        name: &str,
        args: &[Value],
        result: Option<&Value>,
    ) -> R<bool> {
        let Some(function) = self.functions.get(name).copied() else {
            return unknown(format!("no function `{name}`"));
        };
        let mut inner = self.function_scope(name, args);
        inner.result = result.cloned();
        let clauses = match result {
            Some(_) => &function.contract.ensures,
            None => &function.contract.requires,
        };
        for clause in clauses {
            if !self.inhaled_part_holds(&mut inner, heap, clause)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn inhaled_part_holds(&self, scope: &mut Scope, heap: &Heap, e: &Expr) -> R<bool> {
        let mut nested = false;
        germanium_semantics::visit::walk_expr(e, &mut |x| {
            nested |= matches!(x.kind, ExprKind::InhaleExhale(..));
        });
        if !nested {
            return Ok(true);
        }
        match &e.kind {
            ExprKind::Binary(germanium_syntax::ast::BinaryOp::And, a, b) => Ok(self
                .inhaled_part_holds(scope, heap, a)?
                && self.inhaled_part_holds(scope, heap, b)?),
            ExprKind::InhaleExhale(inhaled, _)
                if !matches!(
                    self.sem.type_of(inhaled.id),
                    Some(germanium_semantics::Type::Impure)
                ) =>
            {
                self.boolean(scope, heap, inhaled)
            }
            _ => unknown("an inhale-exhale precondition the concrete runs cannot read"),
        }
    }

    /// Whether `value` as the result of `name(args)` in `heap` meets the function's
    /// postconditions.
    pub fn meets_postconditions(
        &self,
        heap: &Heap,
        name: &str,
        args: &[Value],
        value: &Value,
    ) -> R<bool> {
        let Some(function) = self.functions.get(name).copied() else {
            return unknown(format!("no function `{name}`"));
        };
        let mut inner = self.function_scope(name, args);
        inner.result = Some(value.clone());
        for post in &function.contract.ensures {
            if !self.boolean(&mut inner, heap, post)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// A scope of `name`'s parameters bound to `args`.
    pub(crate) fn function_scope(&self, name: &str, args: &[Value]) -> Scope<'static> {
        static NO_LABELS: std::sync::OnceLock<std::collections::HashMap<String, &'static Heap>> =
            std::sync::OnceLock::new();
        let params = self
            .sem
            .functions
            .get(name)
            .map(|f| f.params.clone())
            .unwrap_or_default();
        Scope {
            store: params.into_iter().zip(args.iter().cloned()).collect(),
            old: None,
            labels: NO_LABELS.get_or_init(Default::default),
            result: None,
            held: None,
            amounts_unknown: false,
            scale: None,
        }
    }
}
