//! Inhale-exhale assertions `[a, b]`: `a` is read when the assertion is produced (inhale,
//! unfold, a callee's postcondition after the call), `b` when it is consumed (exhale, fold,
//! a callee's precondition at the call). Snapshots of predicate bodies and function
//! preconditions always follow the inhale part's layout (see `snapshots`), since that is
//! the part an unfold produces and the part a function's definition is translated from.

use std::borrow::Cow;

use germanium_syntax::ast::{BinaryOp, Expr, ExprKind};

/// `e` with every inhale-exhale assertion in its assertion structure (conjunctions,
/// implications, conditionals, `let`s, annotations) replaced by its inhale part. The
/// rebuilt nodes keep their ids, so what the semantic analysis recorded for them still
/// applies.
pub fn inhale_reading(e: &Expr) -> Cow<'_, Expr> {
    if !crate::produce::has_inhale_exhale(e) {
        return Cow::Borrowed(e);
    }
    let rebuilt = |kind: ExprKind| Cow::Owned(Expr { id: e.id, kind, span: e.span });
    match &e.kind {
        ExprKind::InhaleExhale(a, _) => Cow::Owned(inhale_reading(a).into_owned()),
        ExprKind::Binary(op @ (BinaryOp::And | BinaryOp::Implies), l, r) => {
            rebuilt(ExprKind::Binary(*op, Box::new(inhale_reading(l).into_owned()), Box::new(inhale_reading(r).into_owned())))
        }
        ExprKind::Cond(c, a, b) => rebuilt(ExprKind::Cond(c.clone(), Box::new(inhale_reading(a).into_owned()), Box::new(inhale_reading(b).into_owned()))),
        ExprKind::Let(x, value, body) => rebuilt(ExprKind::Let(x.clone(), value.clone(), Box::new(inhale_reading(body).into_owned()))),
        ExprKind::Annotated(note, body) => rebuilt(ExprKind::Annotated(note.clone(), Box::new(inhale_reading(body).into_owned()))),
        _ => Cow::Borrowed(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_syntax::ast::NodeId;
    use germanium_syntax::Span;

    fn node(id: u32, kind: ExprKind) -> Expr {
        Expr { id: NodeId(id), kind, span: Span::default() }
    }

    fn boxed(e: Expr) -> Box<Expr> {
        Box::new(e)
    }

    #[test]
    fn takes_the_inhale_part_under_conjunctions_and_conditionals() {
        let a = node(1, ExprKind::BoolLit(true));
        let b = node(2, ExprKind::BoolLit(false));
        let ie = node(3, ExprKind::InhaleExhale(boxed(a.clone()), boxed(b.clone())));
        let and = node(4, ExprKind::Binary(BinaryOp::And, boxed(b.clone()), boxed(ie.clone())));
        let cond = node(5, ExprKind::Cond(boxed(b.clone()), boxed(and), boxed(ie)));
        let read = inhale_reading(&cond).into_owned();
        let expected_and = node(4, ExprKind::Binary(BinaryOp::And, boxed(b.clone()), boxed(a.clone())));
        assert_eq!(read, node(5, ExprKind::Cond(boxed(b), boxed(expected_and), boxed(a))));
    }

    #[test]
    fn leaves_assertions_without_inhale_exhale_parts_alone() {
        let a = node(1, ExprKind::BoolLit(true));
        let and = node(2, ExprKind::Binary(BinaryOp::And, boxed(a.clone()), boxed(a)));
        assert!(matches!(inhale_reading(&and), Cow::Borrowed(_)));
    }

    #[test]
    fn nested_parts_are_read_inhale_first() {
        let a = node(1, ExprKind::BoolLit(true));
        let b = node(2, ExprKind::BoolLit(false));
        let inner = node(3, ExprKind::InhaleExhale(boxed(a.clone()), boxed(b.clone())));
        let outer = node(4, ExprKind::InhaleExhale(boxed(inner), boxed(b)));
        assert_eq!(inhale_reading(&outer).into_owned(), a);
    }
}
