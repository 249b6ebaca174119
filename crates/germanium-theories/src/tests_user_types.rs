//! Z3 checks of user domains (generic, unique, interpreted, inferred triggers) and ADTs.

use germanium_semantics::types::Type;
use germanium_smt::Term;

use super::tests::{checked, int, Check};
use super::{Theories, TheoryOp};

const DOMAINS: &str = "
domain Pair[A, B] {
  function pair(a: A, b: B): Pair[A, B]
  function fst(p: Pair[A, B]): A
  function snd(p: Pair[A, B]): B
  axiom fst_snd { forall a: A, b: B :: {pair(a, b)} fst(pair(a, b)) == a && snd(pair(a, b)) == b }
}
domain Color {
  unique function red(): Color
  unique function green(): Color
  function blue(): Color
}
domain List[T] {
  function nil(): List[T]
  function cons(x: T, l: List[T]): List[T]
  function len(l: List[T]): Int
  function elems(l: List[T]): Seq[T]
  axiom { len((nil(): List[T])) == 0 }
  axiom { forall x: T, l: List[T] :: len(cons(x, l)) == len(l) + 1 }
  axiom { forall x: T, l: List[T] :: elems(cons(x, l)) == Seq(x) ++ elems(l) }
  axiom { forall l: List[T] :: len(l) >= 0 }
}
domain Unused[T] {
  function unused(t: T): Unused[T]
  axiom { false }
}
method m(p: Pair[Int, Bool], q: Pair[Ref, Seq[Int]], l: List[Int], c: Color) {}
";

fn dfun(domain: &str, function: &str, type_args: Vec<Type>) -> TheoryOp {
    TheoryOp::DomainFunction {
        domain: domain.into(),
        function: function.into(),
        type_args,
    }
}

#[test]
fn generic_domains_are_instantiated_per_ground_type() {
    let mut c = Check::new(DOMAINS);
    let ib = vec![Type::Int, Type::Bool];
    let p = c.op(dfun("Pair", "pair", ib.clone()), vec![int(3), Term::tt()]);
    assert!(c.valid(
        &[],
        Term::eq(
            c.op(dfun("Pair", "fst", ib.clone()), vec![p.clone()]),
            int(3)
        )
    ));
    assert!(c.valid(&[], c.op(dfun("Pair", "snd", ib.clone()), vec![p.clone()])));
    assert!(!c.valid(
        &[],
        Term::eq(c.op(dfun("Pair", "fst", ib.clone()), vec![p]), int(4))
    ));
    // The other instance exists too; instances nobody uses do not (so `axiom { false }`
    // of the unused generic domain is not assumed: the preamble check would have failed).
    let rs = vec![Type::Ref, Type::seq(Type::Int)];
    let q = c.op(
        dfun("Pair", "pair", rs.clone()),
        vec![c.th.null(), c.op(TheoryOp::SeqEmpty(Type::Int), vec![])],
    );
    assert!(c.valid(
        &[],
        Term::eq(c.op(dfun("Pair", "fst", rs), vec![q]), c.th.null())
    ));
    assert!(c
        .th
        .sort(&Type::Domain("List".into(), vec![Type::Bool]))
        .is_err());
    assert!(c
        .th
        .apply(&dfun("List", "nil", vec![Type::Bool]), vec![])
        .is_err());
}

#[test]
fn unique_functions_and_inferred_triggers() {
    let mut c = Check::new(DOMAINS);
    let red = c.op(dfun("Color", "red", vec![]), vec![]);
    let green = c.op(dfun("Color", "green", vec![]), vec![]);
    let blue = c.op(dfun("Color", "blue", vec![]), vec![]);
    assert!(c.valid(&[], Term::not(Term::eq(red.clone(), green))));
    assert!(!c.valid(&[], Term::not(Term::eq(red, blue))));

    let t = vec![Type::Int];
    let nil = c.op(dfun("List", "nil", t.clone()), vec![]);
    let l2 = c.op(dfun("List", "cons", t.clone()), vec![int(2), nil]);
    let l1 = c.op(dfun("List", "cons", t.clone()), vec![int(1), l2]);
    assert!(c.valid(
        &[],
        Term::eq(
            c.op(dfun("List", "len", t.clone()), vec![l1.clone()]),
            int(2)
        )
    ));
    let elems = c.op(dfun("List", "elems", t.clone()), vec![l1]);
    let first = c.op(TheoryOp::SeqIndex(Type::Int), vec![elems.clone(), int(0)]);
    assert!(c.valid(&[], Term::eq(first, int(1))));
    let l = c.constant("l", &Type::Domain("List".into(), t.clone()));
    assert!(c.valid(&[], Term::le(int(0), c.op(dfun("List", "len", t), vec![l]))));
}

#[test]
fn interpreted_domains_use_backend_sorts_and_functions() {
    let mut c = Check::new(
        "
domain myBV interpretation (SMTLIB: \"(_ BitVec 8)\", Boogie: \"bv8\") {
  function toBV(i: Int): myBV interpretation \"(_ int2bv 8)\"
  function add(a: myBV, b: myBV): myBV interpretation \"bvadd\"
  function toNat(b: myBV): Int interpretation \"bv2nat\"
  function zero(): myBV interpretation \"#x00\"
}
domain myFloat interpretation (SMTLIB: \"(_ FloatingPoint 8 24)\") {
  function fadd(a: myFloat, b: myFloat): myFloat interpretation \"fp.add RNE\"
  function isZero(a: myFloat): Bool interpretation \"fp.isZero\"
}
method m(x: myBV, f: myFloat) {}
",
    );
    let sum = c.op(
        dfun("myBV", "add", vec![]),
        vec![
            c.op(dfun("myBV", "toBV", vec![]), vec![int(200)]),
            c.op(dfun("myBV", "toBV", vec![]), vec![int(100)]),
        ],
    );
    assert!(c.valid(
        &[],
        Term::eq(c.op(dfun("myBV", "toNat", vec![]), vec![sum]), int(44))
    ));
    let zero = c.op(dfun("myBV", "zero", vec![]), vec![]);
    assert!(c.valid(
        &[],
        Term::eq(c.op(dfun("myBV", "toNat", vec![]), vec![zero]), int(0))
    ));
    let f = c.constant("f", &Type::Domain("myFloat".into(), vec![]));
    let doubled = c.op(dfun("myFloat", "fadd", vec![]), vec![f.clone(), f.clone()]);
    let is_zero = |c: &Check, t: Term| c.op(dfun("myFloat", "isZero", vec![]), vec![t]);
    assert!(c.valid(&[is_zero(&c, f.clone())], is_zero(&c, doubled)));
}

#[test]
fn domains_interpreted_for_other_backends_only_are_unsupported() {
    let (program, sem) = checked(
        "domain B interpretation (Boogie: \"bv8\") { function b(): B }\nmethod m(x: B) {}\n",
    );
    let th = Theories::new(&program, &sem).expect("theories");
    assert!(th.sort(&Type::Domain("B".into(), vec![])).is_err());
    assert!(!th.problems().is_empty());
}

const ADTS: &str = "
adt Tree[T] {
  Leaf()
  Node(left: Tree[T], value: T, right: Tree[T])
}
adt Op { Plus() Minus() }
adt Expr2 {
  Num(n: Int)
  Bin(op: Op, args: Seq[Expr2])
}
method m(t: Tree[Int], e: Expr2) {}
";

#[test]
fn adts_are_datatypes() {
    let mut c = Check::new(ADTS);
    let ti = vec![Type::Int];
    let ctor = |name: &str, args: Vec<Type>| TheoryOp::AdtConstructor {
        adt: "Tree".into(),
        constructor: name.into(),
        type_args: args,
    };
    let leaf = c.op(ctor("Leaf", ti.clone()), vec![]);
    let node = c.op(
        ctor("Node", ti.clone()),
        vec![leaf.clone(), int(5), leaf.clone()],
    );
    let value = TheoryOp::AdtDestructor {
        adt: "Tree".into(),
        constructor: "Node".into(),
        destructor: "value".into(),
        type_args: ti.clone(),
    };
    let is = |name: &str| TheoryOp::AdtDiscriminator {
        adt: "Tree".into(),
        constructor: name.into(),
        type_args: ti.clone(),
    };
    assert!(c.valid(&[], Term::eq(c.op(value, vec![node.clone()]), int(5))));
    assert!(c.valid(&[], c.op(is("Node"), vec![node.clone()])));
    assert!(c.valid(&[], Term::not(Term::eq(node.clone(), leaf.clone()))));
    let t = c.constant("t", &Type::Adt("Tree".into(), ti.clone()));
    assert!(c.valid(
        &[],
        Term::or([
            c.op(is("Leaf"), vec![t.clone()]),
            c.op(is("Node"), vec![t.clone()])
        ])
    ));
    assert!(!c.valid(&[], c.op(is("Leaf"), vec![t])));
    // ADTs nested in sequences, and enumerations.
    let num = TheoryOp::AdtConstructor {
        adt: "Expr2".into(),
        constructor: "Num".into(),
        type_args: vec![],
    };
    let bin = TheoryOp::AdtConstructor {
        adt: "Expr2".into(),
        constructor: "Bin".into(),
        type_args: vec![],
    };
    let plus = c.op(
        TheoryOp::AdtConstructor {
            adt: "Op".into(),
            constructor: "Plus".into(),
            type_args: vec![],
        },
        vec![],
    );
    let one = c.op(num, vec![int(1)]);
    let args = c.op(
        TheoryOp::SeqLiteral(Type::Adt("Expr2".into(), vec![])),
        vec![one.clone()],
    );
    let e = c.op(bin, vec![plus, args]);
    assert!(c.valid(&[], Term::not(Term::eq(e, one))));
}

#[test]
fn adts_without_a_finite_value_are_left_out() {
    let (program, sem) =
        checked("adt Stream { Cons(head: Int, tail: Stream) }\nmethod m(s: Stream) {}\n");
    let th = Theories::new(&program, &sem).expect("theories");
    assert!(th.sort(&Type::Adt("Stream".into(), vec![])).is_err());
    assert!(th.problems().iter().any(|p| p.contains("Stream")));
}

#[test]
fn axioms_about_an_instance_are_found_by_matching() {
    // `add` at `Option[Int]` is defined by the second axiom of `AddDomain[Int]`, an
    // instance the program never names.
    let mut c = Check::new(
        "
adt Option[T] { Some(value: T) None() }
domain AddDomain[T] {
  function add(a: T, b: T): T
  axiom { forall o1: Int, o2: Int :: {add(o1, o2)} add(o1, o2) == o1 + o2 }
  axiom {
    forall o1: Option[T], o2: Option[T] :: {add(o1, o2)}
      add(o1, o2) == ((o1.isSome && o2.isSome) ? Some(add(o1.value, o2.value)) : None())
  }
}
method m(x: Option[Int]) { var y: Option[Int] := add(x, x) }
",
    );
    let oi = Type::Adt("Option".into(), vec![Type::Int]);
    let some = |c: &Check, v: Term| {
        let op = TheoryOp::AdtConstructor {
            adt: "Option".into(),
            constructor: "Some".into(),
            type_args: vec![Type::Int],
        };
        c.op(op, vec![v])
    };
    let sum = c.op(
        dfun("AddDomain", "add", vec![oi]),
        vec![some(&c, int(2)), some(&c, int(3))],
    );
    assert!(c.valid(&[], Term::eq(sum.clone(), some(&c, int(5)))));
    assert!(!c.valid(&[], Term::eq(sum, some(&c, int(6)))));
}

#[test]
fn viper_functions_in_axioms_go_through_the_engine_hook() {
    use germanium_smt::{FunDecl, QueryLimits, SatResult, Sort, Symbol};
    let (program, sem) = checked(
        "
function interp(i: Int): Int { i + 1 }
domain d {
  function unint(i: Int): Int
  axiom { forall i: Int :: {unint(i)} unint(i) == interp(i) + 1 }
}
method m() {}
",
    );
    // Without a hook the axiom is skipped (and said so).
    let plain = Theories::new(&program, &sem).expect("theories");
    assert!(plain.axioms().is_empty() && plain.problems().iter().any(|p| p.contains("interp")));

    let interp = FunDecl::new(Symbol::user("interp"), vec![Sort::Int], Sort::Int);
    let hook = |name: &str, args: Vec<Term>| (name == "interp").then(|| Term::app(&interp, args));
    let th = Theories::with_functions(&program, &sem, &hook).expect("theories");
    assert!(th.problems().is_empty(), "{:?}", th.problems());
    let mut solver = super::tests::solver();
    // Declarations first, then the engine's, then the axioms.
    let send = |solver: &mut germanium_smt::Solver, command: &germanium_smt::Command| match command
    {
        germanium_smt::Command::DeclareSort(n) => solver.declare_sort(n).unwrap(),
        germanium_smt::Command::DeclareFun(f) => solver.declare_fun(f).unwrap(),
        germanium_smt::Command::Assert { term, .. } => solver.assert(term).unwrap(),
        other => panic!("unexpected {other:?}"),
    };
    th.declarations().iter().for_each(|c| send(&mut solver, c));
    solver.declare_fun(&interp).unwrap();
    th.axioms().iter().for_each(|c| send(&mut solver, c));
    let unint = th.apply(&dfun("d", "unint", vec![]), vec![int(4)]).unwrap();
    let goal = Term::eq(
        unint,
        Term::add(vec![Term::app(&interp, vec![int(4)]), int(1)]),
    );
    solver.assert(&Term::not(goal)).unwrap();
    let answer = solver
        .check_sat(QueryLimits::timeout(std::time::Duration::from_secs(5)))
        .unwrap();
    assert_eq!(answer, SatResult::Unsat);
}

const CONTAINS: &str = "
domain ContainsDomain[A, B] {
  function contains(a: A, b: B): Bool
}
adt List[T] {
  Nil()
  Cons(value: T, tail: List[T])
} derives { contains }
adt Box { B(n: Int, k: Int) } derives { contains without k }
method m(l: List[Int], b: Box) {}
";

#[test]
fn derived_contains_holds_for_arguments_transitively() {
    let mut c = Check::new(CONTAINS);
    let li = Type::Adt("List".into(), vec![Type::Int]);
    let list = |name: &str| TheoryOp::AdtConstructor {
        adt: "List".into(),
        constructor: name.into(),
        type_args: vec![Type::Int],
    };
    let contains = |a: Type, b: Type| dfun("ContainsDomain", "contains", vec![a, b]);
    let nil = c.op(list("Nil"), vec![]);
    let l2 = c.op(list("Cons"), vec![int(2), nil.clone()]);
    let l12 = c.op(list("Cons"), vec![int(1), l2.clone()]);
    assert!(c.valid(
        &[],
        c.op(contains(Type::Int, li.clone()), vec![int(1), l12.clone()])
    ));
    assert!(c.valid(
        &[],
        c.op(
            contains(li.clone(), li.clone()),
            vec![nil.clone(), l12.clone()]
        )
    ));
    assert!(c.valid(
        &[],
        c.op(contains(Type::Int, li.clone()), vec![int(2), l12.clone()])
    ));
    assert!(!c.valid(
        &[],
        c.op(contains(Type::Int, li.clone()), vec![int(3), l12.clone()])
    ));
    assert!(!c.valid(
        &[],
        c.op(contains(li.clone(), li.clone()), vec![l12.clone(), l2])
    ));
    // `without k`: only `n` is contained.
    let bx = Type::Adt("Box".into(), vec![]);
    let b = c.op(
        TheoryOp::AdtConstructor {
            adt: "Box".into(),
            constructor: "B".into(),
            type_args: vec![],
        },
        vec![int(4), int(5)],
    );
    assert!(c.valid(
        &[],
        c.op(contains(Type::Int, bx.clone()), vec![int(4), b.clone()])
    ));
    assert!(!c.valid(&[], c.op(contains(Type::Int, bx), vec![int(5), b])));
}
