//! Generic pre-order walks over expressions and statements.

use germanium_syntax::ast::*;

/// Calls `f` on `e` and every sub-expression, parents first.
pub fn walk_expr<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    f(e);
    for c in children(e) {
        walk_expr(c, f);
    }
}

/// The direct sub-expressions of `e` (triggers of quantifiers included).
pub fn children(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::IntLit(_)
        | ExprKind::BoolLit(_)
        | ExprKind::Null
        | ExprKind::Result
        | ExprKind::Ident(_)
        | ExprKind::Write
        | ExprKind::NoPerm
        | ExprKind::Wildcard
        | ExprKind::Epsilon => vec![],
        ExprKind::Unary(_, a)
        | ExprKind::FieldAccess(a, _)
        | ExprKind::Ascribed(a, _)
        | ExprKind::Old(_, a)
        | ExprKind::Lhs(a)
        | ExprKind::Perm(a)
        | ExprKind::Length(a)
        | ExprKind::MapDomain(a)
        | ExprKind::MapRange(a)
        | ExprKind::Annotated(_, a) => vec![a],
        ExprKind::Binary(_, a, b)
        | ExprKind::Let(_, a, b)
        | ExprKind::Unfolding(a, b)
        | ExprKind::Applying(a, b)
        | ExprKind::Asserting(a, b)
        | ExprKind::Range(a, b)
        | ExprKind::Index(a, b)
        | ExprKind::InhaleExhale(a, b) => vec![a, b],
        ExprKind::Cond(a, b, c) | ExprKind::Update(a, b, c) => vec![a, b, c],
        ExprKind::Call(_, args) | ExprKind::Collection(_, _, args) => args.iter().collect(),
        ExprKind::Quantifier { triggers, body, .. } => {
            let mut v: Vec<&Expr> = triggers.iter().flat_map(|t| t.exprs.iter()).collect();
            v.push(body);
            v
        }
        ExprKind::Forperm {
            resources, body, ..
        } => {
            let mut v: Vec<&Expr> = resources.iter().collect();
            v.push(body);
            v
        }
        ExprKind::Acc(a, p) => {
            let mut v = vec![&**a];
            if let Some(p) = p {
                v.push(p);
            }
            v
        }
        ExprKind::ReadPerm(k) => match k {
            ReadPermKind::Rdc(a) | ReadPermKind::RdToken(a) | ReadPermKind::RdTokenFresh(a) => {
                vec![a]
            }
            _ => vec![],
        },
        ExprKind::MapLit(_, pairs) => pairs.iter().flat_map(|(a, b)| [a, b]).collect(),
        ExprKind::Slice(s, a, b) => {
            let mut v = vec![&**s];
            v.extend(a.iter().map(|x| &**x));
            v.extend(b.iter().map(|x| &**x));
            v
        }
    }
}

/// Calls `f` on every statement in `block`, nested ones included, parents first.
pub fn walk_stmts<'a>(block: &'a Block, f: &mut dyn FnMut(&'a Stmt)) {
    for s in &block.stmts {
        walk_stmt(s, f);
    }
}

pub fn walk_stmt<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Stmt)) {
    f(s);
    match &s.kind {
        StmtKind::If {
            then, otherwise, ..
        } => {
            walk_stmts(then, f);
            if let Some(o) = otherwise {
                walk_stmts(o, f);
            }
        }
        StmtKind::While { body, .. } => walk_stmts(body, f),
        StmtKind::Package(_, Some(b)) | StmtKind::Block(b) => walk_stmts(b, f),
        _ => {}
    }
}

/// The expressions directly contained in a statement (not in nested statements).
pub fn stmt_exprs(s: &Stmt) -> Vec<&Expr> {
    match &s.kind {
        StmtKind::VarDecl(_, init) => init.iter().collect(),
        StmtKind::Assign(t, r) => t.iter().chain(std::iter::once(r)).collect(),
        StmtKind::Call(_, args) => args.iter().collect(),
        StmtKind::New(t, _) => vec![t],
        StmtKind::If { cond, .. } => vec![cond],
        StmtKind::While {
            cond,
            invariants,
            decreases,
            ..
        } => {
            let mut v = vec![cond];
            v.extend(invariants.iter());
            v.extend(decreases_exprs(decreases));
            v
        }
        StmtKind::Label(_, invs) => invs.iter().collect(),
        StmtKind::Fold(e)
        | StmtKind::Unfold(e)
        | StmtKind::Package(e, _)
        | StmtKind::Apply(e)
        | StmtKind::Inhale(e)
        | StmtKind::Exhale(e)
        | StmtKind::Assert(e)
        | StmtKind::Assume(e)
        | StmtKind::Refute(e) => vec![e],
        StmtKind::Quasihavoc(c, e) | StmtKind::Quasihavocall(_, c, e) => {
            c.iter().chain(std::iter::once(e)).collect()
        }
        StmtKind::Goto(_) | StmtKind::Block(_) | StmtKind::MacroRef(_) | StmtKind::Define(_) => {
            vec![]
        }
    }
}

pub fn decreases_exprs(ds: &[Decreases]) -> Vec<&Expr> {
    let mut v = Vec::new();
    for d in ds {
        if let DecreasesKind::Tuple(es) = &d.kind {
            v.extend(es.iter());
        }
        v.extend(d.condition.iter());
    }
    v
}

/// Calls `f` on every outermost expression of the program's methods (contracts and
/// bodies), functions, predicates and domain axioms; walk each with [`walk_expr`].
pub fn for_each_member_expr<'a>(program: &'a Program, f: &mut dyn FnMut(&'a Expr)) {
    for item in &program.items {
        match &item.kind {
            ItemKind::Method(m) => {
                m.contract.requires.iter().for_each(&mut *f);
                m.contract.ensures.iter().for_each(&mut *f);
                if let Some(b) = &m.body {
                    walk_stmts(b, &mut |s: &'a Stmt| {
                        stmt_exprs(s).into_iter().for_each(&mut *f)
                    });
                }
            }
            ItemKind::Function(fun) => {
                fun.contract.requires.iter().for_each(&mut *f);
                fun.contract.ensures.iter().for_each(&mut *f);
                fun.body.iter().for_each(&mut *f);
            }
            ItemKind::Predicate(p) => p.body.iter().for_each(&mut *f),
            ItemKind::Domain(d) => d.axioms.iter().for_each(|a| f(&a.body)),
            _ => {}
        }
    }
}
