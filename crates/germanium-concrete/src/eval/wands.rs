//! A magic wand's identity in a concrete state, as Viper's verifiers identify wands: its
//! *shape* (the wand with each largest part that reads no heap replaced by a hole, variables
//! bound inside it named by their distance to their binder) and the values of the holes.
//! Two wands with equal shapes and equal hole values are the same resource.

use germanium_semantics::{CallTarget, FieldTarget, Type, VarId};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind};

use super::{unknown, Evaluator, Scope, R};
use crate::heap::Heap;

/// The label under which `old[lhs](e)` finds the left-hand side's state.
pub(crate) const LHS_LABEL: &str = "old[lhs]";

impl Evaluator<'_> {
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
        if pure && !is_wand(e) && self.reads_no_heap(e, bound) {
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
                let var = self.sem.idents.get(e.id.0 as usize).copied().flatten();
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

    /// Whether `e` can be evaluated without the wand's states: it reads no heap (except
    /// through `old`, whose states are fixed) and no variable bound inside the wand.
    pub(crate) fn reads_no_heap(&self, e: &Expr, bound: &[VarId]) -> bool {
        let mut independent = true;
        germanium_semantics::visit::walk_expr(e, &mut |sub| match &sub.kind {
            ExprKind::Ident(_) => {
                let var = self.sem.idents.get(sub.id.0 as usize).copied().flatten();
                if var.is_some_and(|v| bound.contains(&v)) {
                    independent = false;
                }
            }
            ExprKind::FieldAccess(..) => {
                if matches!(
                    self.sem.field_accesses.get(sub.id.0 as usize),
                    Some(Some(FieldTarget::Field(_)))
                ) {
                    independent = false;
                }
            }
            ExprKind::Call(..) => {
                if matches!(
                    self.sem.call(sub.id),
                    Some(CallTarget::Function(_) | CallTarget::Predicate(_))
                ) {
                    independent = false;
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
            | ExprKind::ReadPerm(_) => independent = false,
            _ => {}
        });
        // `old(e)` reads a fixed state: it is a hole however it reads it.
        independent || matches!(e.kind, ExprKind::Old(..)) && self.binds_none(e, bound)
    }

    fn binds_none(&self, e: &Expr, bound: &[VarId]) -> bool {
        let mut none = true;
        germanium_semantics::visit::walk_expr(e, &mut |sub| {
            if let ExprKind::Ident(_) = sub.kind {
                let var = self.sem.idents.get(sub.id.0 as usize).copied().flatten();
                if var.is_some_and(|v| bound.contains(&v)) {
                    none = false;
                }
            }
        });
        none
    }
}

/// Whether `e` is a magic wand `A --* B`.
pub(crate) fn is_wand(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Binary(BinaryOp::Wand, ..))
}
