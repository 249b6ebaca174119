use crate::ast::*;
use crate::{expand_macros, parse_file, Diagnostic, FileId, SourceFile};

fn expand(text: &str) -> (Program, Vec<Diagnostic>) {
    let mut ids = NodeIdGen::default();
    let (items, diags) = parse_file(FileId(0), text, &mut ids);
    assert!(diags.is_empty(), "{text}: {diags:?}");
    let mut program = Program {
        items,
        macros_expanded: false,
        expanded_macros: Vec::new(),
    };
    let diags = expand_macros(&mut program, &mut ids);
    (program, diags)
}

fn errors(text: &str) -> Vec<(String, u32)> {
    let (_, diags) = expand(text);
    let f = SourceFile::new("t.vpr".into(), text.to_string());
    diags
        .iter()
        .map(|d| (d.id.clone(), f.line_col(d.span.start).line))
        .collect()
}

fn method_body<'p>(p: &'p Program, name: &str) -> &'p Block {
    p.items
        .iter()
        .find_map(|i| match &i.kind {
            ItemKind::Method(m) if m.name.name == name => m.body.as_ref(),
            _ => None,
        })
        .unwrap()
}

#[test]
fn expression_statement_and_nested_macros_expand() {
    let (p, diags) = expand(
        "define A true\ndefine B(x) A && x\ndefine S(y) { var t: Int := y; assert B(t > 0) }\n\
         method m() {\n define L 5\n S(L)\n assert B(false)\n}",
    );
    assert!(diags.is_empty(), "{diags:?}");
    assert!(p
        .items
        .iter()
        .all(|i| !matches!(i.kind, ItemKind::Macro(_))));
    let b = method_body(&p, "m");
    // The statement macro is spliced in; the local `define` is gone.
    assert_eq!(b.stmts.len(), 3);
    let StmtKind::VarDecl(_, Some(init)) = &b.stmts[0].kind else {
        panic!("{:?}", b.stmts[0])
    };
    assert_eq!(init.kind, ExprKind::IntLit("5".into()));
    let StmtKind::Assert(e) = &b.stmts[2].kind else {
        panic!()
    };
    assert!(
        matches!(&e.kind, ExprKind::Binary(BinaryOp::And, l, _) if l.kind == ExprKind::BoolLit(true))
    );
    // Expanded nodes sit at the use, `B(false)`.
    let text =
        "define A true\ndefine B(x) A && x\ndefine S(y) { var t: Int := y; assert B(t > 0) }\n\
         method m() {\n define L 5\n S(L)\n assert B(false)\n}";
    let at = text.rfind("B(false)").unwrap() as u32;
    assert_eq!((e.span.start, e.span.end), (at, at + 8));
}

#[test]
fn copies_get_fresh_ids() {
    let (p, _) = expand("define X(a) a + a\nmethod m(y: Int) { assert X(y) == X(y) }");
    let mut seen = std::collections::HashSet::new();
    fn collect(e: &Expr, seen: &mut std::collections::HashSet<NodeId>) {
        assert!(seen.insert(e.id), "duplicate id {:?}", e.id);
        super::walk::expr_children(e, &mut |c| collect(c, seen));
    }
    let StmtKind::Assert(e) = &method_body(&p, "m").stmts[0].kind else {
        panic!()
    };
    collect(e, &mut seen);
    assert_eq!(seen.len(), 7);
}

#[test]
fn declared_names_are_renamed_when_visible_at_the_use() {
    let (p, diags) = expand(
        "define D { var t: Int; t := 1 }\ndefine Q(e) forall i: Int :: i == e\n\
         method m(t: Int) { D\n D\n assert Q(let i == (1) in i) }",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let b = method_body(&p, "m");
    let names: Vec<&str> = b
        .stmts
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::VarDecl(v, _) => Some(v[0].name.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(names, vec!["t$0", "t$1"]);
    let StmtKind::Assign(targets, _) = &b.stmts[1].kind else {
        panic!()
    };
    assert!(matches!(&targets[0].kind, ExprKind::Ident(i) if i.name == "t$0"));
    let StmtKind::Assert(q) = &b.stmts[4].kind else {
        panic!()
    };
    let ExprKind::Quantifier { vars, .. } = &q.kind else {
        panic!()
    };
    assert_eq!(vars[0].name.name, "i$0");
}

#[test]
fn bound_variables_shadow_parameters() {
    let (p, _) =
        expand("define M(i) i == i && forall i: Int :: i == i\nmethod m(j: Int) { assert M(j) }");
    let StmtKind::Assert(e) = &method_body(&p, "m").stmts[0].kind else {
        panic!()
    };
    let ExprKind::Binary(BinaryOp::And, l, r) = &e.kind else {
        panic!()
    };
    assert!(
        matches!(&l.kind, ExprKind::Binary(_, a, _) if matches!(&a.kind, ExprKind::Ident(x) if x.name == "j"))
    );
    let ExprKind::Quantifier { body, .. } = &r.kind else {
        panic!()
    };
    assert!(
        matches!(&body.kind, ExprKind::Binary(_, a, _) if matches!(&a.kind, ExprKind::Ident(x) if x.name == "i"))
    );
}

#[test]
fn misuses_are_parser_errors_at_the_use() {
    let p = |l: u32| vec![("parser.error".to_string(), l)];
    assert_eq!(
        errors("define foo(x) x\nmethod m() {\n assert foo(1, 2)\n}"),
        p(3)
    );
    assert_eq!(errors("define P(x) x\nmethod m() {\n assert P\n}"), p(3));
    assert_eq!(errors("define b 2\nmethod m() {\n b()\n}"), p(3));
    assert_eq!(
        errors("define Q() true\nmethod m() {\n inhale acc(Q())\n}"),
        p(3)
    );
    assert_eq!(
        errors("define Q() true\nmethod m() {\n assert perm(Q()) == none\n}"),
        p(3)
    );
    assert_eq!(errors("method m1() {}\nmethod m2() {\n m1() := 1\n}"), p(3));
    assert_eq!(errors("define n() 3\nmethod m() {\n n() := 4\n}"), p(3));
    assert_eq!(
        errors("define S { assert true }\nmethod m() {\n assert S\n}"),
        p(3)
    );
    assert_eq!(
        errors("method m() {\n m2(3)\n}\ndefine m2(l) { label l }"),
        p(2)
    );
}

#[test]
fn definition_problems_are_reported_at_the_definition() {
    let p = |l: u32| vec![("parser.error".to_string(), l)];
    assert_eq!(errors("define P() 1\ndefine P() 2"), p(2));
    assert_eq!(errors("method x() {}\ndefine x() 1"), p(2));
    assert_eq!(
        errors("define Q(x) P(x)\ndefine P(x) Q(x)\nmethod m(y: Bool) { assert P(y) }"),
        p(2)
    );
    assert_eq!(
        errors("define Q P\ndefine P Q\nmethod m() { assert P }"),
        p(2)
    );
    assert_eq!(
        errors("method m() {\n package true --* true {\n  define P() false\n }\n}"),
        p(3)
    );
    assert_eq!(
        errors("define B(x, res) true\nmethod m(x: Ref) ensures B(x)"),
        vec![
            ("parser.warning".to_string(), 1),
            ("parser.error".to_string(), 2)
        ]
    );
}

#[test]
fn read_permissions_unless_the_name_is_declared() {
    let (p, _) =
        expand("field f: Int\nmethod m(x: Ref) requires acc(x.f, rd) && acc(x.f, rdc(2)) {}");
    let ItemKind::Method(m) = &p.items[1].kind else {
        panic!()
    };
    let ExprKind::Binary(_, l, r) = &m.contract.requires[0].kind else {
        panic!()
    };
    assert!(
        matches!(&l.kind, ExprKind::Acc(_, Some(a)) if a.kind == ExprKind::ReadPerm(ReadPermKind::Rd))
    );
    assert!(
        matches!(&r.kind, ExprKind::Acc(_, Some(a)) if matches!(a.kind, ExprKind::ReadPerm(ReadPermKind::Rdc(_))))
    );
    let (p, _) = expand("field f: Int\nmethod m(x: Ref, rd: Perm) requires acc(x.f, rd) {}");
    let ItemKind::Method(m) = &p.items[1].kind else {
        panic!()
    };
    assert!(
        matches!(&m.contract.requires[0].kind, ExprKind::Acc(_, Some(a)) if matches!(&a.kind, ExprKind::Ident(_)))
    );
}

#[test]
fn nested_macro_uses_follow_the_renames_of_their_instance() {
    // The second `m2` renames its `v` to `v$0`; the `v` that `m1`, used inside `m2`, refers to
    // freely must become `v$0` too, as must a renamed bound variable seen by `Q` in `E`.
    let (p, diags) = expand(
        "define m1(res) { res := v }\ndefine m2(res) { var v: Int\n { m1(res) }\n res := v }\n\
         define Q i > 0\ndefine E forall i: Int :: Q\n\
         method m(i: Int) { var r: Int\n { m2(r) }\n { m2(r) }\n assert E }",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let b = method_body(&p, "m");
    let assigned = |s: &Stmt| -> String {
        let StmtKind::Assign(_, rhs) = &s.kind else {
            panic!("{s:?}")
        };
        let ExprKind::Ident(x) = &rhs.kind else {
            panic!("{rhs:?}")
        };
        x.name.clone()
    };
    let inner = |s: &Stmt| -> Vec<String> {
        let StmtKind::Block(blk) = &s.kind else {
            panic!("{s:?}")
        };
        let StmtKind::Block(nested) = &blk.stmts[1].kind else {
            panic!("{:?}", blk.stmts[1])
        };
        vec![assigned(&nested.stmts[0]), assigned(&blk.stmts[2])]
    };
    assert_eq!(inner(&b.stmts[1]), vec!["v", "v"]);
    assert_eq!(inner(&b.stmts[2]), vec!["v$0", "v$0"]);
    let StmtKind::Assert(q) = &b.stmts[3].kind else {
        panic!()
    };
    let ExprKind::Quantifier { vars, body, .. } = &q.kind else {
        panic!("{q:?}")
    };
    assert_eq!(vars[0].name.name, "i$0");
    assert!(
        matches!(&body.kind, ExprKind::Binary(_, a, _) if matches!(&a.kind, ExprKind::Ident(x) if x.name == "i$0"))
    );
}
