//! Inhale-exhale assertions `[a, b]`: `a` is read when the assertion is produced (inhale,
//! unfold, a callee's postcondition after the call), `b` when it is consumed (exhale, fold,
//! a callee's precondition at the call). Snapshots of predicate bodies and function
//! preconditions always follow the inhale part's layout (see `snapshots`), since that is
//! the part an unfold produces and the part a function's definition is translated from.
//! Under pure operators (`[a, b] || c`) the whole expression is read with one part.

use std::borrow::Cow;

use germanium_syntax::ast::{Expr, ExprKind};
use germanium_syntax::macros::walk::{expr_children, expr_children_mut};

/// Which part of `[a, b]` an assertion is read with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// `a`: the assertion is produced.
    Inhale,
    /// `b`: the assertion is consumed.
    Exhale,
}

/// Whether an inhale-exhale assertion occurs anywhere in `e`.
pub fn contains_inhale_exhale(e: &Expr) -> bool {
    if matches!(e.kind, ExprKind::InhaleExhale(..)) {
        return true;
    }
    let mut found = false;
    expr_children(e, &mut |c: &Expr| {
        found = found || contains_inhale_exhale(c)
    });
    found
}

/// `e` with every inhale-exhale assertion in it (also under pure operators, as in
/// `[a, b] || c`) replaced by its `part`. The other nodes keep their ids, so what the
/// semantic analysis recorded for them still applies.
pub fn reading(e: &Expr, part: Part) -> Cow<'_, Expr> {
    if !contains_inhale_exhale(e) {
        return Cow::Borrowed(e);
    }
    let mut out = e.clone();
    replace_parts(&mut out, part);
    Cow::Owned(out)
}

fn replace_parts(e: &mut Expr, part: Part) {
    if let ExprKind::InhaleExhale(a, b) = &mut e.kind {
        let chosen = match part {
            Part::Inhale => std::mem::replace(&mut **a, placeholder()),
            Part::Exhale => std::mem::replace(&mut **b, placeholder()),
        };
        *e = chosen;
        replace_parts(e, part);
        return;
    }
    expr_children_mut(e, &mut |c: &mut Expr| replace_parts(c, part));
}

fn placeholder() -> Expr {
    Expr {
        id: germanium_syntax::ast::NodeId(0),
        kind: ExprKind::BoolLit(true),
        span: Default::default(),
    }
}

/// The inhale reading of `e` (see [`reading`]).
pub fn inhale_reading(e: &Expr) -> Cow<'_, Expr> {
    reading(e, Part::Inhale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_syntax::ast::{BinaryOp, NodeId};
    use germanium_syntax::Span;

    fn node(id: u32, kind: ExprKind) -> Expr {
        Expr {
            id: NodeId(id),
            kind,
            span: Span::default(),
        }
    }

    fn boxed(e: Expr) -> Box<Expr> {
        Box::new(e)
    }

    #[test]
    fn takes_the_inhale_part_under_conjunctions_and_conditionals() {
        let a = node(1, ExprKind::BoolLit(true));
        let b = node(2, ExprKind::BoolLit(false));
        let ie = node(
            3,
            ExprKind::InhaleExhale(boxed(a.clone()), boxed(b.clone())),
        );
        let and = node(
            4,
            ExprKind::Binary(BinaryOp::And, boxed(b.clone()), boxed(ie.clone())),
        );
        let cond = node(5, ExprKind::Cond(boxed(b.clone()), boxed(and), boxed(ie)));
        let read = inhale_reading(&cond).into_owned();
        let expected_and = node(
            4,
            ExprKind::Binary(BinaryOp::And, boxed(b.clone()), boxed(a.clone())),
        );
        assert_eq!(
            read,
            node(5, ExprKind::Cond(boxed(b), boxed(expected_and), boxed(a)))
        );
    }

    #[test]
    fn leaves_assertions_without_inhale_exhale_parts_alone() {
        let a = node(1, ExprKind::BoolLit(true));
        let and = node(
            2,
            ExprKind::Binary(BinaryOp::And, boxed(a.clone()), boxed(a)),
        );
        assert!(matches!(inhale_reading(&and), Cow::Borrowed(_)));
    }

    #[test]
    fn parts_under_pure_operators_are_read_too() {
        let a = node(1, ExprKind::BoolLit(true));
        let b = node(2, ExprKind::BoolLit(false));
        let ie = node(
            3,
            ExprKind::InhaleExhale(boxed(a.clone()), boxed(b.clone())),
        );
        let or = node(
            4,
            ExprKind::Binary(BinaryOp::Or, boxed(ie.clone()), boxed(ie)),
        );
        assert_eq!(
            reading(&or, Part::Exhale).into_owned(),
            node(
                4,
                ExprKind::Binary(BinaryOp::Or, boxed(b.clone()), boxed(b))
            )
        );
        assert_eq!(
            reading(&or, Part::Inhale).into_owned(),
            node(
                4,
                ExprKind::Binary(BinaryOp::Or, boxed(a.clone()), boxed(a))
            )
        );
    }

    #[test]
    fn nested_parts_are_read_inhale_first() {
        let a = node(1, ExprKind::BoolLit(true));
        let b = node(2, ExprKind::BoolLit(false));
        let inner = node(
            3,
            ExprKind::InhaleExhale(boxed(a.clone()), boxed(b.clone())),
        );
        let outer = node(4, ExprKind::InhaleExhale(boxed(inner), boxed(b)));
        assert_eq!(inhale_reading(&outer).into_owned(), a);
    }
}
