//! How the overloaded arithmetic operators are typed (Viper's first-signature rule).

use germanium_syntax::ast::{BinaryOp, ExprKind, ItemKind, NodeIdGen, Program, StmtKind};
use germanium_syntax::{expand_macros, parse_file, FileId, SourceMap};

use crate::check_program;
use crate::visit::walk_expr;

/// For each `assert` of the first method: the types of its `/` nodes in pre-order; or the
/// diagnostics' ids if there are any.
fn division_types(src: &str) -> Vec<String> {
    let mut sources = SourceMap::new();
    let file = sources.add("t.vpr".into(), src.to_string());
    assert_eq!(file, FileId(0));
    let mut ids = NodeIdGen::default();
    let (items, _) = parse_file(file, src, &mut ids);
    let mut program = Program {
        items,
        macros_expanded: false,
        expanded_macros: Vec::new(),
    };
    expand_macros(&mut program, &mut ids);
    let (sem, errs) = check_program(&program, ids.count());
    if !errs.is_empty() {
        return errs.iter().map(|d| d.id.clone()).collect();
    }
    let mut out = Vec::new();
    for item in &program.items {
        let ItemKind::Method(m) = &item.kind else {
            continue;
        };
        for s in &m.body.as_ref().unwrap().stmts {
            let StmtKind::Assert(e) = &s.kind else {
                continue;
            };
            let mut types = Vec::new();
            walk_expr(e, &mut |x| {
                if let ExprKind::Binary(BinaryOp::Div, _, _) = &x.kind {
                    types.push(sem.type_of(x.id).map(|t| t.to_string()).unwrap_or_default());
                }
            });
            out.push(types.join(" "));
        }
        break;
    }
    out
}

fn one(assertion: &str) -> String {
    let src = format!("method m(p: Perm, i: Int) {{\n  assert {assertion}\n}}\n");
    let mut v = division_types(&src);
    assert_eq!(v.len(), 1, "{v:?}");
    v.remove(0)
}

#[test]
fn unconstrained_int_division_is_a_fraction() {
    assert_eq!(one("2/3 == 3/4"), "Perm Perm");
    assert_eq!(one("(1/2) * (2/1) == (0/1)"), "Perm Perm Perm");
}

#[test]
fn int_context_makes_int_division() {
    assert_eq!(one("2/3 == 0"), "Int");
    assert_eq!(one("2/3 == 3/4 + 0"), "Int Int");
    assert_eq!(one("i / 2 < i"), "Int");
}

#[test]
fn operands_prefer_fractions_before_the_operator_decides() {
    assert_eq!(one("1/2 + 1/2 == 1/1"), "Perm Perm Perm");
    assert_eq!(one("0/1 < 1/2"), "Perm Perm");
    assert_eq!(one("1/2 * 3 == p"), "Perm");
    assert_eq!(one("(1/8) / 3 == p"), "Perm Perm");
    assert_eq!(one("1/4000/2 == p"), "Perm Perm");
    assert_eq!(one("p / 2 == 1/4"), "Perm Perm");
    assert_eq!(one("(7/2) / (2/1) == i"), "Int Int Int");
}

#[test]
fn inconsistent_arithmetic_is_a_type_error() {
    assert_eq!(one("p + 1 == p"), "typechecker.error");
    assert_eq!(one("-(i < i) == 0"), "typechecker.error");
}
