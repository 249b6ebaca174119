//! A magic wand's identity in a concrete state, as Viper's verifiers identify wands: its
//! *shape* (the wand with each largest part that reads no heap replaced by a hole, variables
//! bound inside it named by their distance to their binder) and the values of the holes.
//! Two wands with equal shapes and equal hole values are the same resource.

use germanium_semantics::{CallTarget, FieldTarget, Type, VarId};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind};
use num_rational::BigRational;
use num_traits::One;

use super::{undefined, unknown, Evaluator, Scope, State, R};
use crate::heap::{Heap, WandOrigin};

/// The label under which `old[lhs](e)` finds the left-hand side's state.
pub(crate) const LHS_LABEL: &str = "old[lhs]";

impl Evaluator<'_> {
    /// What applying a wand packaged from `footprint` gives back, in `state` (where `old[lhs]`
    /// names `before`, the state the left-hand side was taken from): what `B` takes of the
    /// left-hand side's part (`taken`) and the footprint, with their values.
    pub(crate) fn given_back(
        &self,
        state: &State,
        before: &Heap,
        taken: &Heap,
        footprint: &Heap,
        rhs: &Expr,
    ) -> R<Heap> {
        let mut joint = taken.values_only();
        joint.perms = taken.perms.clone();
        if joint.add_fields(footprint).is_none() {
            return unknown("a wand's footprint disagrees with its left-hand side");
        }
        let mut labels = state.labels.clone();
        labels.insert(LHS_LABEL.to_string(), before);
        let inner = State {
            store: state.store.clone(),
            heap: &joint,
            old: state.old,
            labels,
            result: None,
            amounts_unknown: state.amounts_unknown,
            scale: None,
        };
        let Some(left) = self.take(&inner, &joint, rhs, &BigRational::one())? else {
            return unknown("a packaged wand's right-hand side does not hold where it is applied");
        };
        Ok(joint.taken_by(&left))
    }

    /// `applying (A --* B) in e`: `e` in the state after applying the wand, where what that
    /// gives is known (a wand packaged in the run).
    pub(crate) fn applying(
        &self,
        scope: &mut Scope,
        heap: &Heap,
        wand: &Expr,
        body: &Expr,
    ) -> R<super::Value> {
        let ExprKind::Binary(BinaryOp::Wand, lhs, rhs) = &wand.kind else {
            return unknown("`applying` of no magic wand");
        };
        let key = self.wand_key(scope, heap, wand)?;
        let mut after = heap.clone();
        let Some(instance) = after.take_wand(&key) else {
            return undefined(wand.span, "the magic wand is not held");
        };
        if after
            .wands
            .iter()
            .any(|w| w.key == key && w.origin != instance.origin)
        {
            return unknown("instances of one wand from different places");
        }
        let before = after.clone();
        if !self.consume(scope, heap, &mut after, lhs, &BigRational::one())? {
            return undefined(lhs.span, "the wand's left-hand side is not held");
        }
        let WandOrigin::Packaged(footprint) = &instance.origin else {
            // What it gives is not known, but a body that reads no heap does not ask.
            if self.reads_no_heap(body, &[]) {
                return self.value(scope, heap, body);
            }
            return match instance.origin {
                WandOrigin::Replayed(_) => {
                    unknown("`applying` a wand whose package must run again to give its result")
                }
                _ => unknown("what applying a wand not packaged here gives is not known"),
            };
        };
        let taken = before.taken_by(&after);
        let given = {
            let state = State {
                store: scope.store.clone(),
                heap,
                old: scope.old,
                labels: scope.labels.clone(),
                result: scope.result.clone(),
                amounts_unknown: scope.amounts_unknown,
                scale: None,
            };
            self.given_back(&state, heap, &taken, footprint, rhs)?
        };
        if after.add_fields(&given).is_none() {
            return unknown("an applied wand gives a location more than whole or another value");
        }
        self.value(scope, &after, body)
    }

    /// The identity of the wand `wand` in the state given: its shape and hole values, as one
    /// string.
    pub(crate) fn wand_key(&self, scope: &mut Scope, heap: &Heap, wand: &Expr) -> R<String> {
        let mut key = String::new();
        let mut bound = Vec::new();
        self.shape(scope, heap, wand, &mut bound, &mut key)?;
        Ok(key)
    }

    fn shape(
        &self,
        scope: &mut Scope,
        heap: &Heap,
        e: &Expr,
        bound: &mut Vec<VarId>,
        key: &mut String,
    ) -> R<()> {
        self.step()?;
        let pure = !matches!(self.sem.type_of(e.id), Some(Type::Impure));
        if pure && !is_wand(e) && self.is_hole(e, bound) {
            let v = self.value(scope, heap, e)?;
            key.push_str(&format!("<{v}>"));
            return Ok(());
        }
        key.push_str(&self.head(e, bound));
        key.push('(');
        let before = bound.len();
        let binders = match &e.kind {
            ExprKind::Let(..) => 1,
            ExprKind::Quantifier { vars, .. } | ExprKind::Forperm { vars, .. } => vars.len(),
            _ => 0,
        };
        for i in 0..binders {
            match self.sem.binders.get(&(e.id, i)) {
                Some(v) => bound.push(*v),
                None => return unknown("a bound variable without its declaration"),
            }
        }
        let mut result = Ok(());
        for c in germanium_semantics::visit::children(e) {
            result = self.shape(scope, heap, c, bound, key);
            if result.is_err() {
                break;
            }
            key.push(',');
        }
        bound.truncate(before);
        key.push(')');
        result
    }

    /// What the shape says of `e` itself (its children follow).
    fn head(&self, e: &Expr, bound: &[VarId]) -> String {
        match &e.kind {
            ExprKind::Ident(name) => {
                let var = self.sem.var_id(e.id);
                match var.and_then(|v| bound.iter().rposition(|b| *b == v)) {
                    Some(i) => format!("#{}", bound.len() - 1 - i),
                    None => name.name.clone(),
                }
            }
            ExprKind::Binary(op, ..) => format!("{op:?}"),
            ExprKind::Unary(op, _) => format!("{op:?}"),
            ExprKind::FieldAccess(_, field) => format!(".{}", field.name),
            ExprKind::Call(name, _) => format!("call {}", name.name),
            ExprKind::Old(Some(label), _) => format!("old[{}]", label.name),
            ExprKind::Quantifier { kind, vars, .. } => {
                let types: Vec<String> = (0..vars.len())
                    .map(|i| match self.sem.binders.get(&(e.id, i)) {
                        Some(v) => format!("{:?}", self.sem.var(*v).ty),
                        None => "?".into(),
                    })
                    .collect();
                format!("{kind:?} {}", types.join(" "))
            }
            other => format!("{:?}", std::mem::discriminant(other)),
        }
    }

    /// Whether the pure `e` is a hole of a wand's shape, as Viper (and both back ends) take
    /// them: it reads no location and no variable bound inside the wand; `old(..)` reads a
    /// fixed state (not `old[lhs]`), and a function whose precondition holds no permission
    /// reads no heap. So `old(x.f) + old(y.f) == 4` and `old(x.f + y.f) == 4` are one hole
    /// each, and wands that differ only there are one wand where the holes' values agree.
    fn is_hole(&self, e: &Expr, bound: &[VarId]) -> bool {
        let mentions_bound = |x: &Expr| {
            let mut found = false;
            germanium_semantics::visit::walk_expr(x, &mut |sub| {
                found |= matches!(sub.kind, ExprKind::Ident(_))
                    && self.sem.var_id(sub.id).is_some_and(|v| bound.contains(&v));
            });
            found
        };
        match &e.kind {
            ExprKind::Ident(_) => !mentions_bound(e),
            ExprKind::FieldAccess(..)
                if matches!(
                    self.sem.field_access(e.id),
                    Some(FieldTarget::Field(_)) | None
                ) =>
            {
                false
            }
            ExprKind::Call(..) if !self.call_reads_no_heap(e) => false,
            ExprKind::Old(Some(label), _) if label.name == "lhs" => false,
            ExprKind::Old(_, body) => !mentions_bound(body),
            ExprKind::Perm(_)
            | ExprKind::Forperm { .. }
            | ExprKind::Unfolding(..)
            | ExprKind::Applying(..)
            | ExprKind::Asserting(..)
            | ExprKind::Acc(..)
            | ExprKind::Lhs(_)
            | ExprKind::InhaleExhale(..)
            | ExprKind::Wildcard
            | ExprKind::Epsilon
            | ExprKind::ReadPerm(_)
            | ExprKind::Binary(BinaryOp::Wand, ..) => false,
            _ => germanium_semantics::visit::children(e)
                .into_iter()
                .all(|c| self.is_hole(c, bound)),
        }
    }

    /// Whether the call `e` is one whose value does not depend on the heap.
    fn call_reads_no_heap(&self, e: &Expr) -> bool {
        match self.sem.call(e.id) {
            Some(CallTarget::DomainFunction { .. } | CallTarget::AdtConstructor { .. }) => true,
            Some(CallTarget::Function(name)) => {
                self.functions.get(name.as_str()).is_some_and(|f| {
                    f.contract
                        .requires
                        .iter()
                        .all(|p| !matches!(self.sem.type_of(p.id), Some(Type::Impure)))
                })
            }
            _ => false,
        }
    }

    /// Whether `e` can be evaluated without the wand's states: it reads no heap (except
    /// through `old`, whose states are fixed) and no variable bound inside the wand.
    pub(crate) fn reads_no_heap(&self, e: &Expr, bound: &[VarId]) -> bool {
        let (mut heap_free, mut bound_free) = (true, true);
        germanium_semantics::visit::walk_expr(e, &mut |sub| match &sub.kind {
            ExprKind::Ident(_) if self.sem.var_id(sub.id).is_some_and(|v| bound.contains(&v)) => {
                bound_free = false
            }
            ExprKind::FieldAccess(..) => {
                if matches!(self.sem.field_access(sub.id), Some(FieldTarget::Field(_))) {
                    heap_free = false;
                }
            }
            ExprKind::Call(..) => {
                if matches!(
                    self.sem.call(sub.id),
                    Some(CallTarget::Function(_) | CallTarget::Predicate(_))
                ) {
                    heap_free = false;
                }
            }
            ExprKind::Acc(..)
            | ExprKind::Perm(_)
            | ExprKind::Forperm { .. }
            | ExprKind::Unfolding(..)
            | ExprKind::Applying(..)
            | ExprKind::Asserting(..)
            | ExprKind::Lhs(_)
            | ExprKind::InhaleExhale(..)
            | ExprKind::Wildcard
            | ExprKind::Epsilon
            | ExprKind::ReadPerm(_) => heap_free = false,
            _ => {}
        });
        // `old(e)` reads a fixed state: it is a hole however it reads it (not `old[lhs]`,
        // which reads the wand's left-hand side).
        let fixed_old = matches!(&e.kind, ExprKind::Old(label, _) if label.as_ref().is_none_or(|l| l.name != "lhs"));
        bound_free && (heap_free || fixed_old)
    }
}

/// Whether `e` is a magic wand `A --* B`.
pub(crate) fn is_wand(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Binary(BinaryOp::Wand, ..))
}
