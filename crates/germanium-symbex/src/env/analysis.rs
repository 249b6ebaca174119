//! Facts read off the program's syntax once: whether an assertion holds permissions, which
//! members call which (for recursion clusters and function heights).

use std::collections::HashSet;

use germanium_semantics::{CallTarget, Semantics};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind, Function, ItemKind, Program};

/// Whether the assertion has an inhale-exhale part `[a, b]` (outside pure expressions).
pub fn has_inhale_exhale(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::InhaleExhale(..) => true,
        ExprKind::Binary(BinaryOp::And | BinaryOp::Implies, l, r) => {
            has_inhale_exhale(l) || has_inhale_exhale(r)
        }
        ExprKind::Cond(_, a, b) => has_inhale_exhale(a) || has_inhale_exhale(b),
        ExprKind::Let(_, _, body) | ExprKind::Annotated(_, body) => has_inhale_exhale(body),
        _ => false,
    }
}

/// Whether the assertion `e` holds a predicate instance or a wand (not only fields): a
/// function with such a precondition reads instances' snapshots, whose bodies' facts its
/// verification used.
pub fn holds_instances(sem: &Semantics, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Acc(inner, _) => holds_instances(sem, inner),
        ExprKind::Binary(BinaryOp::Wand, ..) => true,
        ExprKind::Call(..) => matches!(sem.call(e.id), Some(CallTarget::Predicate(_))),
        ExprKind::Binary(BinaryOp::And | BinaryOp::Implies, l, r) => {
            holds_instances(sem, l) || holds_instances(sem, r)
        }
        ExprKind::Cond(_, a, b) => holds_instances(sem, a) || holds_instances(sem, b),
        ExprKind::Let(_, _, body) | ExprKind::Annotated(_, body) => holds_instances(sem, body),
        ExprKind::Quantifier { body, .. } => holds_instances(sem, body),
        ExprKind::InhaleExhale(a, b) => holds_instances(sem, a) || holds_instances(sem, b),
        _ => false,
    }
}

/// Whether `e` holds a permission (accessibility predicate, predicate instance, wand).
pub fn is_impure(sem: &Semantics, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Acc(..) | ExprKind::InhaleExhale(..) => true,
        ExprKind::Binary(BinaryOp::Wand, ..) => true,
        ExprKind::Call(..) => matches!(sem.call(e.id), Some(CallTarget::Predicate(_))),
        ExprKind::Binary(BinaryOp::And | BinaryOp::Implies, l, r) => {
            is_impure(sem, l) || is_impure(sem, r)
        }
        ExprKind::Cond(_, a, b) => is_impure(sem, a) || is_impure(sem, b),
        ExprKind::Let(_, _, body) | ExprKind::Annotated(_, body) => is_impure(sem, body),
        ExprKind::Quantifier { body, .. } => is_impure(sem, body),
        ExprKind::Unfolding(_, body)
        | ExprKind::Applying(_, body)
        | ExprKind::Asserting(_, body) => is_impure(sem, body),
        _ => false,
    }
}

/// Whether `f`'s value depends on the heap: its preconditions hold some permission (a
/// function without any reads no location, whatever its arguments).
pub fn reads_heap(sem: &Semantics, f: &Function) -> bool {
    f.contract.requires.iter().any(|p| is_impure(sem, p))
}

/// Whether `e` is a magic wand `A --* B`.
pub fn is_wand(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Binary(BinaryOp::Wand, ..))
}

/// The predicates whose instances hold a magic wand: a wand in the body, or an instance of
/// such a predicate (only with `--combinable-wands`, which allows wands there).
pub fn wand_predicates(program: &Program, sem: &Semantics) -> HashSet<String> {
    use germanium_semantics::visit::walk_expr;
    let bodies: Vec<(&str, &Expr)> = program
        .items
        .iter()
        .filter_map(|item| match &item.kind {
            ItemKind::Predicate(p) => p.body.as_ref().map(|b| (p.name.name.as_str(), b)),
            _ => None,
        })
        .collect();
    let mut found: HashSet<String> = HashSet::new();
    loop {
        let before = found.len();
        for (name, body) in &bodies {
            let mut holds = false;
            walk_expr(body, &mut |x: &Expr| {
                holds |= is_wand(x)
                    || matches!(sem.call(x.id), Some(CallTarget::Predicate(p)) if found.contains(p));
            });
            if holds {
                found.insert(name.to_string());
            }
        }
        if found.len() == before {
            return found;
        }
    }
}

/// Calls `see` on every trigger expression of every quantifier of the program.
fn for_each_trigger(program: &Program, mut see: impl FnMut(&Expr)) {
    use germanium_semantics::visit::{for_each_member_expr, walk_expr};
    for_each_member_expr(program, &mut |e| {
        walk_expr(e, &mut |x: &Expr| {
            if let ExprKind::Quantifier { triggers, .. } = &x.kind {
                triggers.iter().flat_map(|t| &t.exprs).for_each(&mut see);
            }
        })
    });
}

/// Whether some expression of the program is an abstract read permission.
pub fn uses_read_permissions(program: &Program) -> bool {
    use germanium_semantics::visit::{for_each_member_expr, walk_expr};
    let mut found = false;
    for_each_member_expr(program, &mut |e| {
        walk_expr(e, &mut |x: &Expr| {
            found |= matches!(x.kind, ExprKind::ReadPerm(_))
        })
    });
    found
}

/// Whether some quantifier of the program has a magic wand among its triggers (only then
/// are wand instances mentioned for triggers: the marks cost solver time).
pub fn has_wand_triggers(program: &Program) -> bool {
    let mut found = false;
    for_each_trigger(program, |x| found |= is_wand(x));
    found
}

/// The fields read at the top of some trigger (`{a.f}`): their reads are mentioned, so
/// such a trigger matches where a location is read outside quantified chunks too.
pub fn fields_in_triggers(program: &Program, sem: &Semantics) -> HashSet<String> {
    let mut fields = HashSet::new();
    for_each_trigger(program, |x| {
        if let ExprKind::FieldAccess(..) = &x.kind {
            if let Some(germanium_semantics::FieldTarget::Field(f)) = sem.field_access(x.id) {
                fields.insert(f.clone());
            }
        }
    });
    fields
}
