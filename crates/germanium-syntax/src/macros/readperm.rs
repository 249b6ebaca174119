//! Abstract read permissions (seed 003): `rd`, `rdw`, `globalRd`, `rdc(n)`, `rd_token(e)` and
//! `rd_token_fresh(e)` are not reserved words in Viper, so they only mean a read permission
//! where the program does not declare the name itself (as a variable, function, ...).
//! As in the seed, `rd` in a function's contract or body is a wildcard (a function holds
//! some of what it reads), and in a predicate's body it is `globalRd` (one amount for every
//! instance, wherever it is folded).

use std::collections::HashSet;

use super::walk::{expr_children_mut, stmt_children_mut, ChildMut};
use crate::ast::{Block, Expr, ExprKind, ItemKind, NodeIdGen, Program, ReadPermKind};

const NAMES: &[&str] = &["rd", "rdw", "globalRd", "rdc", "rd_token", "rd_token_fresh"];

pub(super) fn resolve_read_perms(program: &mut Program, _ids: &mut NodeIdGen) {
    let mut declared = super::global_names(&program.items);
    for item in &program.items {
        super::collect_item_decls(item, &mut declared);
    }
    let free: HashSet<&str> = NAMES
        .iter()
        .copied()
        .filter(|n| !declared.contains(*n))
        .collect();
    if free.is_empty() {
        return;
    }
    for item in &mut program.items {
        match &mut item.kind {
            ItemKind::Method(m) => {
                let mut on_expr = |e: &mut Expr| rewrite(e, &free, Rd::Scope);
                m.contract
                    .requires
                    .iter_mut()
                    .chain(m.contract.ensures.iter_mut())
                    .for_each(&mut on_expr);
                if let Some(b) = &mut m.body {
                    rewrite_block(b, &free);
                }
            }
            ItemKind::Function(f) => {
                let mut on_expr = |e: &mut Expr| rewrite(e, &free, Rd::Wildcard);
                f.contract
                    .requires
                    .iter_mut()
                    .chain(f.contract.ensures.iter_mut())
                    .for_each(&mut on_expr);
                if let Some(b) = &mut f.body {
                    on_expr(b);
                }
            }
            ItemKind::Predicate(p) => {
                if let Some(b) = &mut p.body {
                    rewrite(b, &free, Rd::Global);
                }
            }
            ItemKind::Domain(d) => d
                .axioms
                .iter_mut()
                .for_each(|a| rewrite(&mut a.body, &free, Rd::Scope)),
            _ => {}
        }
    }
}

/// What `rd` stands for where it occurs.
#[derive(Clone, Copy)]
enum Rd {
    /// The amount of the method, loop or callee (decided by the verifier).
    Scope,
    /// In functions.
    Wildcard,
    /// In predicate bodies.
    Global,
}

fn rewrite_block(b: &mut Block, free: &HashSet<&str>) {
    for s in &mut b.stmts {
        stmt_children_mut(s, &mut |c| match c {
            ChildMut::Expr(e) => rewrite(e, free, Rd::Scope),
            ChildMut::Block(inner) => rewrite_block(inner, free),
        });
    }
}

fn rewrite(e: &mut Expr, free: &HashSet<&str>, rd: Rd) {
    expr_children_mut(e, &mut |c| rewrite(c, free, rd));
    let kind = match &mut e.kind {
        ExprKind::Ident(id) if free.contains(id.name.as_str()) => match id.name.as_str() {
            "rd" => match rd {
                Rd::Scope => ReadPermKind::Rd,
                Rd::Global => ReadPermKind::GlobalRd,
                Rd::Wildcard => {
                    e.kind = ExprKind::Wildcard;
                    return;
                }
            },
            "rdw" => ReadPermKind::Rdw,
            "globalRd" => ReadPermKind::GlobalRd,
            _ => return,
        },
        ExprKind::Call(id, args) if args.len() == 1 && free.contains(id.name.as_str()) => {
            let arg = Box::new(args.remove(0));
            match id.name.as_str() {
                "rdc" => ReadPermKind::Rdc(arg),
                "rd_token" => ReadPermKind::RdToken(arg),
                "rd_token_fresh" => ReadPermKind::RdTokenFresh(arg),
                _ => {
                    args.push(*arg);
                    return;
                }
            }
        }
        _ => return,
    };
    e.kind = ExprKind::ReadPerm(kind);
}
