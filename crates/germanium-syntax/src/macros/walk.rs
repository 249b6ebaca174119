//! Child iteration over the syntax tree, shared by the macro expander and the parser.

use crate::ast::{
    Block, Decreases, DecreasesKind, Expr, ExprKind, NodeIdGen, ReadPermKind, Stmt, StmtKind,
};

/// Calls `f` on each direct sub-expression of `e`, in source order.
pub fn expr_children_mut(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    use ExprKind::*;
    match &mut e.kind {
        IntLit(_) | BoolLit(_) | Null | Result | Ident(_) | Write | NoPerm | Wildcard | Epsilon => {
        }
        Unary(_, a)
        | FieldAccess(a, _)
        | Ascribed(a, _)
        | Old(_, a)
        | Lhs(a)
        | Perm(a)
        | Length(a)
        | MapDomain(a)
        | MapRange(a)
        | Annotated(_, a) => f(a),
        Binary(_, a, b)
        | Let(_, a, b)
        | Unfolding(a, b)
        | Applying(a, b)
        | Asserting(a, b)
        | Range(a, b)
        | Index(a, b)
        | InhaleExhale(a, b) => {
            f(a);
            f(b)
        }
        Cond(a, b, c) | Update(a, b, c) => {
            f(a);
            f(b);
            f(c)
        }
        Call(_, args) | Collection(_, _, args) => args.iter_mut().for_each(f),
        Quantifier { triggers, body, .. } => {
            for t in triggers {
                t.exprs.iter_mut().for_each(&mut *f);
            }
            f(body)
        }
        Forperm {
            resources, body, ..
        } => {
            resources.iter_mut().for_each(&mut *f);
            f(body)
        }
        Acc(a, p) => {
            f(a);
            if let Some(p) = p {
                f(p)
            }
        }
        ReadPerm(k) => match k {
            ReadPermKind::Rdc(a) | ReadPermKind::RdToken(a) | ReadPermKind::RdTokenFresh(a) => f(a),
            ReadPermKind::Rd | ReadPermKind::Rdw | ReadPermKind::GlobalRd => {}
        },
        MapLit(_, pairs) => {
            for (k, v) in pairs {
                f(k);
                f(v)
            }
        }
        Slice(a, b, c) => {
            f(a);
            if let Some(b) = b {
                f(b)
            }
            if let Some(c) = c {
                f(c)
            }
        }
    }
}

/// Read-only version of [`expr_children_mut`].
pub fn expr_children(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    // Cloning would be wasteful; reuse the mutable walker through a raw re-borrow is not
    // possible safely, so the shapes are listed again.
    use ExprKind::*;
    match &e.kind {
        IntLit(_) | BoolLit(_) | Null | Result | Ident(_) | Write | NoPerm | Wildcard | Epsilon => {
        }
        Unary(_, a)
        | FieldAccess(a, _)
        | Ascribed(a, _)
        | Old(_, a)
        | Lhs(a)
        | Perm(a)
        | Length(a)
        | MapDomain(a)
        | MapRange(a)
        | Annotated(_, a) => f(a),
        Binary(_, a, b)
        | Let(_, a, b)
        | Unfolding(a, b)
        | Applying(a, b)
        | Asserting(a, b)
        | Range(a, b)
        | Index(a, b)
        | InhaleExhale(a, b) => {
            f(a);
            f(b)
        }
        Cond(a, b, c) | Update(a, b, c) => {
            f(a);
            f(b);
            f(c)
        }
        Call(_, args) | Collection(_, _, args) => args.iter().for_each(f),
        Quantifier { triggers, body, .. } => {
            for t in triggers {
                t.exprs.iter().for_each(&mut *f);
            }
            f(body)
        }
        Forperm {
            resources, body, ..
        } => {
            resources.iter().for_each(&mut *f);
            f(body)
        }
        Acc(a, p) => {
            f(a);
            if let Some(p) = p {
                f(p)
            }
        }
        ReadPerm(k) => match k {
            ReadPermKind::Rdc(a) | ReadPermKind::RdToken(a) | ReadPermKind::RdTokenFresh(a) => f(a),
            ReadPermKind::Rd | ReadPermKind::Rdw | ReadPermKind::GlobalRd => {}
        },
        MapLit(_, pairs) => {
            for (k, v) in pairs {
                f(k);
                f(v)
            }
        }
        Slice(a, b, c) => {
            f(a);
            if let Some(b) = b {
                f(b)
            }
            if let Some(c) = c {
                f(c)
            }
        }
    }
}

fn decreases_exprs_mut(d: &mut Decreases, f: &mut dyn FnMut(&mut Expr)) {
    if let DecreasesKind::Tuple(es) = &mut d.kind {
        es.iter_mut().for_each(&mut *f);
    }
    if let Some(c) = &mut d.condition {
        f(c)
    }
}

pub fn decreases_exprs(d: &Decreases, f: &mut dyn FnMut(&Expr)) {
    if let DecreasesKind::Tuple(es) = &d.kind {
        es.iter().for_each(&mut *f);
    }
    if let Some(c) = &d.condition {
        f(c)
    }
}

/// A direct child of a statement: an expression or a nested block.
pub enum ChildMut<'x> {
    Expr(&'x mut Expr),
    Block(&'x mut Block),
}

/// Read-only [`ChildMut`].
pub enum Child<'x> {
    Expr(&'x Expr),
    Block(&'x Block),
}

/// Calls `f` on each expression directly in `s` and each nested block, in source order.
pub fn stmt_children_mut(s: &mut Stmt, f: &mut dyn FnMut(ChildMut<'_>)) {
    use StmtKind::*;
    match &mut s.kind {
        VarDecl(_, init) => {
            if let Some(e) = init {
                f(ChildMut::Expr(e))
            }
        }
        Assign(targets, rhs) => {
            targets.iter_mut().for_each(|t| f(ChildMut::Expr(t)));
            f(ChildMut::Expr(rhs))
        }
        Call(_, args) => args.iter_mut().for_each(|a| f(ChildMut::Expr(a))),
        New(t, _) => f(ChildMut::Expr(t)),
        If {
            cond,
            then,
            otherwise,
        } => {
            f(ChildMut::Expr(cond));
            f(ChildMut::Block(then));
            if let Some(b) = otherwise {
                f(ChildMut::Block(b))
            }
        }
        While {
            cond,
            invariants,
            decreases,
            body,
        } => {
            f(ChildMut::Expr(cond));
            invariants.iter_mut().for_each(|a| f(ChildMut::Expr(a)));
            for d in decreases {
                decreases_exprs_mut(d, &mut |e| f(ChildMut::Expr(e)));
            }
            f(ChildMut::Block(body))
        }
        Label(_, invs) => invs.iter_mut().for_each(|a| f(ChildMut::Expr(a))),
        Goto(_) | MacroRef(_) | Define(_) => {}
        Fold(e) | Unfold(e) | Apply(e) | Inhale(e) | Exhale(e) | Assert(e) | Assume(e)
        | Refute(e) => f(ChildMut::Expr(e)),
        Package(e, proof) => {
            f(ChildMut::Expr(e));
            if let Some(b) = proof {
                f(ChildMut::Block(b))
            }
        }
        Quasihavoc(c, r) | Quasihavocall(_, c, r) => {
            if let Some(c) = c {
                f(ChildMut::Expr(c))
            }
            f(ChildMut::Expr(r))
        }
        Block(b) => f(ChildMut::Block(b)),
    }
}

/// Read-only version of [`stmt_children_mut`].
pub fn stmt_children(s: &Stmt, f: &mut dyn FnMut(Child<'_>)) {
    use StmtKind::*;
    match &s.kind {
        VarDecl(_, init) => {
            if let Some(e) = init {
                f(Child::Expr(e))
            }
        }
        Assign(targets, rhs) => {
            targets.iter().for_each(|t| f(Child::Expr(t)));
            f(Child::Expr(rhs))
        }
        Call(_, args) => args.iter().for_each(|a| f(Child::Expr(a))),
        New(t, _) => f(Child::Expr(t)),
        If {
            cond,
            then,
            otherwise,
        } => {
            f(Child::Expr(cond));
            f(Child::Block(then));
            if let Some(b) = otherwise {
                f(Child::Block(b))
            }
        }
        While {
            cond,
            invariants,
            decreases,
            body,
        } => {
            f(Child::Expr(cond));
            invariants.iter().for_each(|a| f(Child::Expr(a)));
            for d in decreases {
                decreases_exprs(d, &mut |e| f(Child::Expr(e)));
            }
            f(Child::Block(body))
        }
        Label(_, invs) => invs.iter().for_each(|a| f(Child::Expr(a))),
        Goto(_) | MacroRef(_) | Define(_) => {}
        Fold(e) | Unfold(e) | Apply(e) | Inhale(e) | Exhale(e) | Assert(e) | Assume(e)
        | Refute(e) => f(Child::Expr(e)),
        Package(e, proof) => {
            f(Child::Expr(e));
            if let Some(b) = proof {
                f(Child::Block(b))
            }
        }
        Quasihavoc(c, r) | Quasihavocall(_, c, r) => {
            if let Some(c) = c {
                f(Child::Expr(c))
            }
            f(Child::Expr(r))
        }
        Block(b) => f(Child::Block(b)),
    }
}

/// Gives every expression node in `e` a fresh id.
pub fn refresh_expr_ids(e: &mut Expr, ids: &mut NodeIdGen) {
    e.id = ids.fresh();
    expr_children_mut(e, &mut |c| refresh_expr_ids(c, ids));
}
