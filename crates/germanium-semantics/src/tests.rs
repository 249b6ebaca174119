//! End-to-end unit tests: parse a small program, check it, look at the errors and facts.

use germanium_syntax::ast::NodeIdGen;
use germanium_syntax::{expand_macros, parse_file, FileId, SourceMap};

use crate::{check_program, CallTarget, Semantics, Type};

/// `(id, line)` of each diagnostic, and the semantics.
fn check(src: &str) -> (Vec<(String, u32)>, Semantics) {
    let mut sources = SourceMap::new();
    let file = sources.add("t.vpr".into(), src.to_string());
    assert_eq!(file, FileId(0));
    let mut ids = NodeIdGen::default();
    let (items, diags) = parse_file(file, src, &mut ids);
    assert!(diags.iter().all(|d| d.id != "parser.error"), "{diags:?}");
    let mut program = germanium_syntax::ast::Program {
        items,
        macros_expanded: false,
        expanded_macros: Vec::new(),
    };
    expand_macros(&mut program, &mut ids);
    let (sem, errs) = check_program(&program, ids.count());
    (
        errs.iter()
            .map(|d| (d.id.clone(), sources.start(d.span).line))
            .collect(),
        sem,
    )
}

fn tc(line: u32) -> (String, u32) {
    ("typechecker.error".to_string(), line)
}

fn cons(line: u32) -> (String, u32) {
    ("consistency.error".to_string(), line)
}

#[test]
fn well_typed_program_is_accepted() {
    let (errs, _) = check(
        "field f: Int\nmethod m(x: Ref) returns (r: Int)\n requires acc(x.f, 1/2)\n{\n  r := x.f + 1\n  var s: Seq[Int] := Seq()\n  assert |s| == 0\n}\n",
    );
    assert!(errs.is_empty(), "{errs:?}");
}

#[test]
fn unknown_identifier_and_type_mismatch() {
    assert_eq!(check("method m() {\n  assert y == 0\n}\n").0, vec![tc(2)]);
    assert_eq!(
        check("method m() {\n  var b: Bool := 1\n}\n").0,
        vec![tc(2)]
    );
}

#[test]
fn name_errors_suppress_type_errors() {
    let (errs, _) = check("method m() {\n  var b: Bool := 1\n  assert z\n}\n");
    assert_eq!(errs, vec![tc(3)]);
}

#[test]
fn duplicates_are_reported_at_the_second_declaration() {
    assert_eq!(check("method a() {}\nmethod a() {}\n").0, vec![tc(2)]);
}

#[test]
fn infers_domain_type_arguments_and_defaults_to_int() {
    let src = "domain D[T] {\n  function e(): T\n}\nmethod m() {\n  var s: Set[Bool] := Set(e())\n  assert e() == e()\n}\n";
    let (errs, sem) = check(src);
    assert!(errs.is_empty(), "{errs:?}");
    let mut args: Vec<Vec<Type>> = sem
        .calls
        .iter()
        .flatten()
        .filter_map(|c| match c {
            CallTarget::DomainFunction { type_args, .. } => Some(type_args.clone()),
            _ => None,
        })
        .collect();
    args.sort_by_key(|a| a[0].to_string());
    assert_eq!(
        args,
        vec![vec![Type::Bool], vec![Type::Int], vec![Type::Int]]
    );
}

#[test]
fn int_division_becomes_a_fraction_where_a_perm_is_expected() {
    let (errs, _) = check("field f: Int\nmethod m(x: Ref) {\n  var p: Perm := 1/2\n  var i: Int := 7/2\n  inhale acc(x.f, p / 2)\n}\n");
    assert!(errs.is_empty(), "{errs:?}");
}

#[test]
fn wildcard_outside_acc_is_a_consistency_error() {
    assert_eq!(
        check("method m() {\n  var k: Perm\n  k := wildcard\n}\n").0,
        vec![cons(3)]
    );
}

#[test]
fn read_permissions_only_as_linear_access_amounts() {
    let src = "field f: Int\n\
        method m(x: Ref, p: Perm)\n\
          requires acc(x.f, 1/2 - rd) && acc(x.f, 4 * rd + rdc(3)) && acc(x.f, p * rd)\n\
          requires acc(x.f, x.f > 0 ? rd : rd / 2)\n\
          requires acc(x.f, rd * rd)\n\
          requires acc(x.f, 1/2 - (x.f > 0 ? rd : none))\n\
        {\n\
          assert perm(x.f) >= rd\n\
        }\n";
    assert_eq!(check(src).0, vec![cons(5), cons(6), cons(8)]);
}

#[test]
fn triggers_must_cover_quantified_variables() {
    let src = "function g(i: Int): Bool\nmethod m() {\n  assert forall i: Int, j: Int :: {g(i)} g(i) || j == j\n}\n";
    assert_eq!(check(src).0, vec![cons(3)]);
}

#[test]
fn result_only_in_function_postconditions() {
    assert_eq!(
        check("function f(): Int\n  requires result > 0\n").0,
        vec![tc(2)]
    );
}

#[test]
fn adt_constructors_and_destructors_resolve() {
    let src = "adt List[T] {\n  Nil()\n  Cons(value: T, tail: List[T])\n}\nmethod m() {\n  var l: List[Int] := Cons(1, Nil())\n  assert l.isCons ==> l.value == 1\n}\n";
    let (errs, _) = check(src);
    assert!(errs.is_empty(), "{errs:?}");
}

#[test]
fn open_type_arguments_in_own_domain_axioms_are_the_domain_parameters() {
    let src = "domain Option[T] {\n  function discr(o: Option[T]): Int\n  function nothing(): Option[T]\n  axiom { discr(nothing()) == 0 }\n}\ndomain Other {\n  axiom { discr(nothing()) == 1 }\n}\n";
    let (errs, sem) = check(src);
    assert!(errs.is_empty(), "{errs:?}");
    let mut args: Vec<String> = sem
        .calls
        .iter()
        .flatten()
        .filter_map(|c| match c {
            CallTarget::DomainFunction { type_args, .. } => Some(format!("{type_args:?}")),
            _ => None,
        })
        .collect();
    args.sort();
    // In Option's own axiom the argument is T; elsewhere Viper's default, Int.
    assert_eq!(args, vec!["[Int]", "[Int]", "[Var(\"T\")]", "[Var(\"T\")]"]);
}

#[test]
fn postconditions_may_not_call_the_body_recursion_cycle_without_decreases() {
    let src = "function f(i: Int): Int\n ensures g(i) > 0\n{ g(i) }\n\
               function g(i: Int): Int\n ensures h(i) > 0\n{ f(i) }\n\
               function h(i: Int): Int\n{ 0 }\n\
               function k(i: Int): Int\n ensures f(i) > 0\n decreases\n{ k(i) }\n";
    assert_eq!(check(src).0, vec![cons(2)]);
}

#[test]
fn inhale_exhale_in_measures_unless_simplified_away() {
    let src = "function f(b: Bool): Bool\n decreases [true, true] ? b : b\n{ b }\n\
               function g(b: Bool): Bool\n decreases false ? [true, true] : [false, true]\n{ b }\n\
               function h(b: Bool): Bool\n decreases true ? b : [b, b]\n{ b }\n";
    assert_eq!(check(src).0, vec![cons(5)]);
}

#[test]
fn a_cycle_of_jumps_entered_at_two_places_is_a_consistency_error() {
    let irreducible =
        "method m(b: Bool) {\n if (b) {\n goto x\n }\n label y\n assert true\n label x\n goto y\n}";
    assert_eq!(check(irreducible).0, vec![cons(3)]);
    // The same cycle entered at one place (`y` first, then `x` inside it) is a loop.
    let reducible =
        "method m(b: Bool) {\n label y\n if (b) {\n goto x\n }\n assert true\n label x\n goto y\n}";
    assert!(check(reducible).0.is_empty());
}
