use super::parse_file;
use crate::ast::*;
use crate::{FileId, SourceFile};

fn parse(text: &str) -> (Vec<Item>, Vec<crate::Diagnostic>) {
    let mut ids = NodeIdGen::default();
    parse_file(FileId(0), text, &mut ids)
}

fn parse_ok(text: &str) -> Vec<Item> {
    let (items, diags) = parse(text);
    assert!(diags.is_empty(), "{text}: {diags:?}");
    items
}

/// Error lines (1-based) of `text`.
fn error_lines(text: &str) -> Vec<u32> {
    let (_, diags) = parse(text);
    let f = SourceFile::new("t.vpr".into(), text.to_string());
    diags
        .iter()
        .map(|d| f.line_col(d.span.start).line)
        .collect()
}

/// A compact prefix rendering of an expression, for precedence tests.
fn show(e: &Expr) -> String {
    match &e.kind {
        ExprKind::IntLit(s) => s.clone(),
        ExprKind::BoolLit(b) => b.to_string(),
        ExprKind::Ident(i) => i.name.clone(),
        ExprKind::Unary(op, a) => format!(
            "({} {})",
            if *op == UnaryOp::Neg { "-" } else { "!" },
            show(a)
        ),
        ExprKind::Binary(op, a, b) => format!("({op:?} {} {})", show(a), show(b)),
        ExprKind::Cond(a, b, c) => format!("(? {} {} {})", show(a), show(b), show(c)),
        ExprKind::FieldAccess(a, f) => format!("{}.{}", show(a), f.name),
        ExprKind::Call(f, args) => format!(
            "{}({})",
            f.name,
            args.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        ExprKind::Index(a, i) => format!("{}[{}]", show(a), show(i)),
        ExprKind::Ascribed(a, _) => format!("({}: T)", show(a)),
        other => format!("{other:?}"),
    }
}

/// The expression of `assert e` in a method body, with the method's text.
fn asserted(e: &str) -> (Expr, String) {
    let text = format!("method m() {{ assert {e} }}");
    let items = parse_ok(&text);
    let ItemKind::Method(m) = &items[0].kind else {
        panic!()
    };
    let StmtKind::Assert(e) = &m.body.as_ref().unwrap().stmts[0].kind else {
        panic!()
    };
    (e.clone(), text)
}

/// The expression of `assert e`, rendered by [`show`].
fn exp(e: &str) -> String {
    show(&asserted(e).0)
}

fn stmts(body: &str) -> Vec<Stmt> {
    let items = parse_ok(&format!("method m() {{\n{body}\n}}"));
    let ItemKind::Method(m) = &items[0].kind else {
        panic!()
    };
    m.body.clone().unwrap().stmts
}

/// The source text of the expression of `assert e` (what error messages quote).
fn exp_text(e: &str) -> String {
    let (e, text) = asserted(e);
    text[e.span.start as usize..e.span.end as usize].to_string()
}

#[test]
fn operators_span_their_parenthesised_operands() {
    assert_eq!(exp_text("!(a > 0)"), "!(a > 0)");
    assert_eq!(exp_text("(a) && (b)"), "(a) && (b)");
    assert_eq!(exp_text("-(a) + (b)"), "-(a) + (b)");
    assert_eq!(exp_text("(a)"), "a");
    assert_eq!(exp_text("(a) --* (b)"), "(a) --* (b)");
}

#[test]
fn precedence_and_associativity() {
    assert_eq!(exp("a ==> b ==> c"), "(Implies a (Implies b c))");
    assert_eq!(exp("a || b && c"), "(Or a (And b c))");
    assert_eq!(exp("a && b || c"), "(Or (And a b) c)");
    assert_eq!(exp("a == b == c"), "(Eq a (Eq b c))");
    assert_eq!(exp("a - b - c"), "(Sub (Sub a b) c)");
    assert_eq!(exp("a + b * c"), "(Add a (Mul b c))");
    assert_eq!(exp("-a * b"), "(Mul (- a) b)");
    assert_eq!(exp("-x.f"), "(- x.f)");
    assert_eq!(exp("!a ==> b"), "(Implies (! a) b)");
    assert_eq!(exp("a <==> b ==> c"), "(Iff a (Implies b c))");
    assert_eq!(exp("a ? b : c ? d : e"), "(? a b (? c d e))");
    assert_eq!(exp("a ==> b ? c : d"), "(? (Implies a b) c d)");
    assert_eq!(exp("a && b --* c ==> d"), "(Wand (And a b) (Implies c d))");
    assert_eq!(exp("a ==> b --* c"), "(Implies a (Wand b c))");
    assert_eq!(exp("x in s ++ t"), "(In x (Concat s t))");
    assert_eq!(exp("s union t subset u"), "(Subset (Union s t) u)");
    assert_eq!(exp("a \\ b % c"), "(Mod (IntDiv a b) c)");
    assert_eq!(exp("(f(x): Int) == 1"), "(Eq (f(x): T) 1)");
}

#[test]
fn comparison_chains_become_conjunctions() {
    assert_eq!(exp("0 <= i < n"), "(And (Le 0 i) (Lt i n))");
    assert_eq!(
        exp("a < b < c < d"),
        "(And (And (Lt a b) (Lt b c)) (Lt c d))"
    );
    assert_eq!(exp("(a < b) < c"), "(Lt (Lt a b) c)");
    // The copied middle operand has its own id.
    let items = parse_ok("method m() { assert 0 <= i < n }");
    let ItemKind::Method(m) = &items[0].kind else {
        panic!()
    };
    let StmtKind::Assert(e) = &m.body.as_ref().unwrap().stmts[0].kind else {
        panic!()
    };
    let ExprKind::Binary(BinaryOp::And, l, r) = &e.kind else {
        panic!()
    };
    let (ExprKind::Binary(_, _, m1), ExprKind::Binary(_, m2, _)) = (&l.kind, &r.kind) else {
        panic!()
    };
    assert_ne!(m1.id, m2.id);
    assert_eq!(m1.kind, m2.kind);
}

#[test]
fn atoms_and_suffixes() {
    for e in [
        "old[l](x.f)",
        "old[lhs](x.f)",
        "acc(x.f, 1/2)",
        "acc(P(x), wildcard)",
        "perm(x.f) > none",
        "perm(a --* b) == write",
        "let y == (x + 1) in y > 0",
        "unfolding acc(P(x)) in x.f",
        "unfolding P(x) in true",
        "applying (a --* b) in true",
        "asserting (x > 0) in true",
        "forall i: Int, j: Int :: {f(i), g(j)} {h(i)} f(i) == g(j)",
        "exists b: Bool :: b",
        "forperm r: Ref [r.f] :: r.f > 0",
        "Seq(1, 2)[0..1] == Seq[Int]()",
        "s[..2] == s[1..]",
        "s[1 := 2] == Set(1) union Multiset[Int]()",
        "Map(1 := true)[1]",
        "Map[Int, Bool]() == m",
        "|s| == |[0..3)|",
        "domain(m) == range(m)",
        "[true, false]",
        "epsilon == result",
        "null != x.next.next",
        "@reveal() f(x) == 1",
        "x$1 == $y",
        "-(-(1)) == 1",
    ] {
        exp(e);
    }
}

#[test]
fn statement_forms() {
    let s = stmts(
        "var x: Int := 1; var y: Int, z: Ref\n x, y := m(x)\n x.f := 2\n z := new(f, g)\n z := new(*)\n z := new()\n\
         m(x)\n A\n if (a) { } elseif (b) { } else { }\n while (c) invariant i decreases x { }\n label l invariant true\n\
         goto l\n fold P(x)\n unfold acc(P(x), 1/2)\n package a --* b { fold P(x) }\n apply a --* b\n inhale a; exhale b\n\
         assert c; assume d; refute e\n quasihavoc c ==> x.f\n quasihavoc (a ==> b)\n quasihavocall y: Ref :: y.f\n { }\n\
         define M(a) { assert a }\n var n: Ref := new(f)\n @a(\"s\") assert true",
    );
    let kinds: Vec<&str> = s
        .iter()
        .map(|s| match &s.kind {
            StmtKind::VarDecl(..) => "var",
            StmtKind::Assign(..) => "assign",
            StmtKind::Call(..) => "call",
            StmtKind::New(..) => "new",
            StmtKind::If { .. } => "if",
            StmtKind::While { .. } => "while",
            StmtKind::Label(..) => "label",
            StmtKind::Goto(..) => "goto",
            StmtKind::Fold(..) => "fold",
            StmtKind::Unfold(..) => "unfold",
            StmtKind::Package(..) => "package",
            StmtKind::Apply(..) => "apply",
            StmtKind::Inhale(..) => "inhale",
            StmtKind::Exhale(..) => "exhale",
            StmtKind::Assert(..) => "assert",
            StmtKind::Assume(..) => "assume",
            StmtKind::Refute(..) => "refute",
            StmtKind::Quasihavoc(..) => "quasihavoc",
            StmtKind::Quasihavocall(..) => "quasihavocall",
            StmtKind::Block(..) => "block",
            StmtKind::MacroRef(..) => "macroref",
            StmtKind::Define(..) => "define",
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "var",
            "var",
            "assign",
            "assign",
            "new",
            "new",
            "new",
            "call",
            "macroref",
            "if",
            "while",
            "label",
            "goto",
            "fold",
            "unfold",
            "package",
            "apply",
            "inhale",
            "exhale",
            "assert",
            "assume",
            "refute",
            "quasihavoc",
            "quasihavoc",
            "quasihavocall",
            "block",
            "define",
            "var",
            "new",
            "assert"
        ]
    );
    assert!(matches!(&s[22].kind, StmtKind::Quasihavoc(Some(_), _)));
    assert!(matches!(&s[23].kind, StmtKind::Quasihavoc(None, _)));
    assert_eq!(s[29].annotations.len(), 1);
    // `elseif` nests as an `if` alone in the else block.
    let StmtKind::If {
        otherwise: Some(b), ..
    } = &s[9].kind
    else {
        panic!()
    };
    assert!(matches!(
        &b.stmts[..],
        [Stmt {
            kind: StmtKind::If {
                otherwise: Some(_),
                ..
            },
            ..
        }]
    ));
}

#[test]
fn declarations() {
    let items = parse_ok(
        "import \"a.vpr\"\nimport <decreases/int.vpr>\nfield a: Int, b: Seq[Ref]\n\
         method m(x: Int) returns (r: Int) ensures r > 0 requires x > 0 decreases x\n\
         function f(x: Int): Int decreases _ if x > 0 requires x > 0 { x }\nfunction g(): Bool\n\
         predicate P(x: Ref)\npredicate Q(x: Ref) { acc(x.f) }\n\
         domain D[T] interpretation (SMTLIB: \"Int\", Boogie: \"int\") { unique function c(): D[T]\n function h(Int, y: Bool): T interpretation \"h\"\n axiom { true } axiom named { c() == c() } }\n\
         adt List[T] { Nil() Cons(v: T, tail: List[T]) } derives { contains without v, tail }\n\
         @opaque() function o(): Int { 1 }\ndefine A true\ndefine B(x) { assert x }\ndefine C() (1)\n",
    );
    assert_eq!(items.len(), 14);
    let ItemKind::Import(i) = &items[1].kind else {
        panic!()
    };
    assert_eq!(i.target, ImportTarget::Standard("decreases/int.vpr".into()));
    let ItemKind::Field(fs) = &items[2].kind else {
        panic!()
    };
    assert_eq!(fs.len(), 2);
    let ItemKind::Method(m) = &items[3].kind else {
        panic!()
    };
    assert_eq!(
        (
            m.contract.requires.len(),
            m.contract.ensures.len(),
            m.contract.decreases.len()
        ),
        (1, 1, 1)
    );
    let ItemKind::Domain(d) = &items[8].kind else {
        panic!()
    };
    assert!(d.functions[0].unique);
    assert!(d.functions[1].params[0].name.is_none());
    assert_eq!(d.functions[1].interpretation.as_deref(), Some("h"));
    assert_eq!(d.axioms.len(), 2);
    let ItemKind::Adt(a) = &items[9].kind else {
        panic!()
    };
    assert_eq!(a.constructors.len(), 2);
    assert_eq!(a.derives[0].without.len(), 2);
    assert_eq!(items[10].annotations[0].name.name, "opaque");
    // As in Viper, `()` after a macro's name is an empty parameter list.
    let ItemKind::Macro(c) = &items[13].kind else {
        panic!()
    };
    assert_eq!(c.params, Some(vec![]));
}

#[test]
fn empty_and_comment_only_input_is_an_empty_program() {
    assert!(parse_ok("").is_empty());
    assert!(parse_ok("// nothing\n/* at all */").is_empty());
}

#[test]
fn errors_point_at_the_offending_line() {
    assert_eq!(error_lines("method m() {\n  var x: Int := 1 0\n}"), vec![2]);
    assert_eq!(error_lines("field a : Intmethod b () { }"), vec![1]);
    assert_eq!(
        error_lines("method m() {\n  if (true) {\n    .\n  }\n}"),
        vec![3]
    );
    assert_eq!(error_lines("method m() {\n  label lhs\n}"), vec![2]);
    assert_eq!(error_lines("method m(method: Int) {}"), vec![1]);
    assert_eq!(error_lines("method m() {\n assert 1 +\n}"), vec![3]);
    assert_eq!(
        error_lines("domain D {\n  axiom a {\n    (forall :: true)\n  }\n}"),
        vec![3]
    );
    // One message per broken declaration; parsing resumes at the next one.
    assert_eq!(
        error_lines("method a() {\n  assert (\n}\nmethod b() {\n  x :=\n}\nmethod c() {}"),
        vec![3, 6]
    );
}

#[test]
fn bad_input_never_panics() {
    let sample =
        "domain D { function f(x: Int): Int axiom { forall x: Int :: {f(x)} f(x) > 0 } }\n\
        method m(x: Ref) returns (r: Int) requires acc(x.f, 1/2) ensures r == old(x.f) {\n\
          var s: Seq[Int] := Seq(1, 2); r := |s[0..1]| + (x.f > 0 ? 1 : 2)\n\
          while (r < 10) invariant 0 <= r <= 10 { r := r + 1 } /* c */ \"s\" @ € \n}";
    let mut ids = NodeIdGen::default();
    for end in 0..=sample.len() {
        if sample.is_char_boundary(end) {
            let _ = parse_file(FileId(0), &sample[..end], &mut ids);
        }
    }
    for text in [
        "((((",
        "}}}}",
        "method m() { assert [ }",
        "/*",
        "\"",
        "import <",
        "@",
        "define",
        "method m() {",
    ] {
        let (_, diags) = parse(text);
        assert!(!diags.is_empty(), "{text}");
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let n = 10_000;
    let parens = format!(
        "method m() {{ assert {}true{} }}",
        "(".repeat(n),
        ")".repeat(n)
    );
    let unary = format!("method m() {{ assert {}true }}", "!".repeat(n));
    let blocks = format!("method m() {}{}", "{".repeat(n), "}".repeat(n));
    let types = format!("field f: {}Int{}", "Seq[".repeat(n), "]".repeat(n));
    for text in [parens, unary, blocks, types] {
        let (_, diags) = parse(&text);
        assert!(
            diags.iter().any(|d| d.message.contains("too deep")),
            "{diags:?}"
        );
    }
    // Long operator chains are fine up to the limit.
    let chain = format!("method m() {{ assert {}true }}", "true && ".repeat(1500));
    parse_ok(&chain);
    let (_, diags) = parse(&format!(
        "method m() {{ assert {}true }}",
        "true && ".repeat(10_000)
    ));
    assert!(
        diags.iter().any(|d| d.message.contains("too long")),
        "{diags:?}"
    );
    // Nesting just below the limit parses.
    let n = (super::MAX_DEPTH / 2) as usize;
    parse_ok(&format!(
        "method m() {{ assert {}true{} }}",
        "(".repeat(n),
        ")".repeat(n)
    ));
}

#[test]
fn nesting_at_the_limit_fits_in_a_default_stack() {
    // Parsing and expanding the deepest accepted program fits in a 2 MiB thread stack.
    let (blocks, parens) = (100, super::MAX_DEPTH as usize - 100 - 4);
    let text = format!(
        "define M(x) x\nmethod m() {}\n assert M({}true{})\n{}",
        "{".repeat(blocks),
        "(".repeat(parens),
        ")".repeat(parens),
        "}".repeat(blocks)
    );
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let mut ids = NodeIdGen::default();
            let (items, diags) = parse_file(FileId(0), &text, &mut ids);
            assert!(diags.is_empty(), "{diags:?}");
            let mut program = Program {
                items,
                macros_expanded: false,
                expanded_macros: Vec::new(),
            };
            let diags = crate::expand_macros(&mut program, &mut ids);
            assert!(diags.is_empty(), "{diags:?}");
        })
        .unwrap();
    handle.join().unwrap();
}
