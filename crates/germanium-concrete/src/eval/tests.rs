//! Forced values: small programs evaluated on chosen values and heaps.

use germanium_semantics::Semantics;
use germanium_syntax::ast::{ItemKind, Program};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::One;

use super::*;

/// The program and its semantics.
fn checked(src: &str) -> (Program, Semantics) {
    let (program, sem, _) = crate::testing::checked(src);
    (program, sem)
}
use crate::heap::{Heap, ObjectId};

/// `f(args)` of the program's function `f`, in `heap`.
fn apply(src: &str, f: &str, args: Vec<Value>, heap: &Heap) -> R<Value> {
    let (program, sem) = checked(src);
    let ev = Evaluator::new(&program, &sem);
    ev.apply(heap, Span::default(), f, args)
}

fn int(i: i64) -> Value {
    Value::int(i)
}

fn one() -> BigRational {
    BigRational::one()
}

fn is_undefined(r: &R<Value>) -> bool {
    matches!(r, Err(Stop::Undefined { .. }))
}

fn is_unknown(r: &R<Value>) -> bool {
    matches!(r, Err(Stop::Unknown(_)))
}

#[test]
fn integer_division_is_euclidean_and_zero_is_no_divisor() {
    let src = "function d(a: Int, b: Int): Int { a / b }\n\
               function m(a: Int, b: Int): Int { a % b }\n\
               function q(a: Int, b: Int): Int { a \\ b }";
    let h = Heap::default();
    assert_eq!(apply(src, "d", vec![int(-7), int(2)], &h), Ok(int(-4)));
    assert_eq!(apply(src, "d", vec![int(7), int(-2)], &h), Ok(int(-3)));
    assert_eq!(apply(src, "m", vec![int(-7), int(2)], &h), Ok(int(1)));
    assert_eq!(apply(src, "m", vec![int(-7), int(-2)], &h), Ok(int(1)));
    assert_eq!(apply(src, "q", vec![int(9), int(4)], &h), Ok(int(2)));
    assert!(is_undefined(&apply(src, "d", vec![int(1), int(0)], &h)));
    // Unbounded integers.
    let big = Value::Int("123456789012345678901234567890".parse::<BigInt>().unwrap());
    let src2 = "function sq(a: Int): Int { a * a }";
    let Ok(Value::Int(v)) = apply(src2, "sq", vec![big], &h) else {
        panic!()
    };
    assert_eq!(v.to_string().len(), 59);
}

#[test]
fn permissions_are_fractions() {
    let src = "function p(a: Int): Perm { a / 4 }\n\
               function q(): Perm { write - 1/4 + none }\n\
               function r(x: Perm): Bool { x > 1/2 && x < write }";
    let h = Heap::default();
    assert_eq!(apply(src, "p", vec![int(3)], &h), Ok(Value::perm(3, 4)));
    assert_eq!(apply(src, "q", vec![], &h), Ok(Value::perm(3, 4)));
    assert_eq!(
        apply(src, "r", vec![Value::perm(3, 4)], &h),
        Ok(Value::Bool(true))
    );
    assert_eq!(
        apply(src, "r", vec![Value::perm(1, 2)], &h),
        Ok(Value::Bool(false))
    );
}

#[test]
fn sequences() {
    let src = "function at(s: Seq[Int], i: Int): Int { s[i] }\n\
               function ops(s: Seq[Int]): Seq[Int] { (s ++ Seq(9))[1..][0 := 5] }\n\
               function len(s: Seq[Int]): Int { |s[..2]| + |[0..4)| }\n\
               function has(s: Seq[Int]): Bool { 3 in s }";
    let h = Heap::default();
    let s = Value::seq([int(1), int(2), int(3)]);
    assert_eq!(apply(src, "at", vec![s.clone(), int(2)], &h), Ok(int(3)));
    assert!(is_undefined(&apply(src, "at", vec![s.clone(), int(3)], &h)));
    assert!(is_undefined(&apply(
        src,
        "at",
        vec![s.clone(), int(-1)],
        &h
    )));
    assert_eq!(
        apply(src, "ops", vec![s.clone()], &h),
        Ok(Value::seq([int(5), int(3), int(9)]))
    );
    assert_eq!(apply(src, "len", vec![s.clone()], &h), Ok(int(6)));
    assert_eq!(apply(src, "has", vec![s], &h), Ok(Value::Bool(true)));
}

#[test]
fn sets_multisets_and_maps() {
    let src = "function s(a: Set[Int], b: Set[Int]): Set[Int] { (a union b) setminus (a intersection b) }\n\
               function sub(a: Set[Int], b: Set[Int]): Bool { a subset b }\n\
               function ms(a: Multiset[Int]): Int { (2 in (a union a)) + |a| }\n\
               function get(m: Map[Int, Bool], k: Int): Bool { m[k] }\n\
               function dom(m: Map[Int, Bool]): Set[Int] { domain(m[7 := true]) }";
    let h = Heap::default();
    let a = Value::set([int(1), int(2)]);
    let b = Value::set([int(2), int(3)]);
    assert_eq!(
        apply(src, "s", vec![a.clone(), b.clone()], &h),
        Ok(Value::set([int(1), int(3)]))
    );
    assert_eq!(
        apply(src, "sub", vec![a.clone(), b], &h),
        Ok(Value::Bool(false))
    );
    let m = Value::multiset([int(2), int(2), int(5)]);
    assert_eq!(apply(src, "ms", vec![m], &h), Ok(int(7)));
    let map = Value::map([(int(1), Value::Bool(true))]);
    assert_eq!(
        apply(src, "get", vec![map.clone(), int(1)], &h),
        Ok(Value::Bool(true))
    );
    assert!(is_undefined(&apply(
        src,
        "get",
        vec![map.clone(), int(2)],
        &h
    )));
    assert_eq!(
        apply(src, "dom", vec![map], &h),
        Ok(Value::set([int(1), int(7)]))
    );
}

#[test]
fn algebraic_data_types() {
    let src = "adt List { Nil() Cons(head: Int, tail: List) }\n\
               function second(l: List): Int { l.tail.head }\n\
               function build(): List { Cons(1, Cons(2, Nil())) }\n\
               function empty(l: List): Bool { l.isNil }";
    let h = Heap::default();
    let list = apply(src, "build", vec![], &h).unwrap();
    assert_eq!(list.to_string(), "Cons(1, Cons(2, Nil()))");
    assert_eq!(apply(src, "second", vec![list.clone()], &h), Ok(int(2)));
    assert_eq!(apply(src, "empty", vec![list], &h), Ok(Value::Bool(false)));
    // A destructor of another constructor is unspecified in Viper.
    let nil = Value::Adt {
        constructor: "Nil".into(),
        args: vec![],
    };
    assert!(is_unknown(&apply(src, "second", vec![nil], &h)));
}

const NODES: &str = "field val: Int\n\
    field next: Ref\n\
    predicate list(x: Ref) { x != null ==> acc(x.val) && acc(x.next) && list(x.next) }\n\
    function length(x: Ref): Int requires list(x) { x == null ? 0 : unfolding list(x) in 1 + length(x.next) }\n\
    function get(x: Ref): Int requires acc(x.val) { x.val }";

/// o1 -> o2 -> o3 -> null, vals 10, 20, 30, folded into `list(o1)`.
fn folded_list() -> Heap {
    let mut h = Heap::default();
    let nodes: Vec<ObjectId> = (0..3).map(|_| h.allocate()).collect();
    for (i, o) in nodes.iter().enumerate() {
        let next = nodes
            .get(i + 1)
            .map_or(Value::null(), |n| Value::Ref(Some(*n)));
        h.fields
            .insert((*o, "val".into()), int(10 * (i as i64 + 1)));
        h.fields.insert((*o, "next".into()), next);
    }
    h.set_instance("list", vec![Value::object(1)], one());
    h
}

#[test]
fn heap_dependent_functions_run_their_bodies_through_unfolding() {
    let h = folded_list();
    assert_eq!(
        apply(NODES, "length", vec![Value::object(1)], &h),
        Ok(int(3))
    );
    // Without the instance the precondition does not hold.
    assert!(is_undefined(&apply(
        NODES,
        "length",
        vec![Value::object(2)],
        &h
    )));
    // A field read needs a permission: folded inside `list(o1)`, `o1.val` is not held.
    assert!(is_undefined(&apply(
        NODES,
        "get",
        vec![Value::object(1)],
        &h
    )));
    // `get` asks for `acc(x.val)`: as in Viper (Silicon's default), an application needs
    // some permission, not the amount written; half is enough.
    let mut held = h.clone();
    held.set_perm(ObjectId(1), "val", BigRational::new(1.into(), 2.into()));
    assert_eq!(
        apply(NODES, "get", vec![Value::object(1)], &held),
        Ok(int(10))
    );
    held.set_perm(ObjectId(1), "val", one());
    assert_eq!(
        apply(NODES, "get", vec![Value::object(1)], &held),
        Ok(int(10))
    );
}

/// The only method's first postcondition and its parameters.
fn method_parts<'p>(program: &'p Program, sem: &Semantics) -> (&'p Expr, Vec<VarId>) {
    let m = program
        .items
        .iter()
        .find_map(|i| match &i.kind {
            ItemKind::Method(m) => Some(m),
            _ => None,
        })
        .unwrap();
    let params = sem.methods[&m.name.name].params.clone();
    (&m.contract.ensures[0], params)
}

#[test]
fn old_and_labelled_heaps() {
    let src = "field f: Int\n\
               method m(x: Ref) requires acc(x.f) ensures acc(x.f) && x.f == old(x.f) + 1";
    let (program, sem) = checked(src);
    let (post, params) = method_parts(&program, &sem);
    let ev = Evaluator::new(&program, &sem);
    let heap_with = |v: i64| {
        let mut h = Heap::default();
        let o = h.allocate();
        h.set(o, "f", int(v), one());
        h
    };
    let (before, right, wrong) = (heap_with(1), heap_with(2), heap_with(3));
    let state = |now| {
        let mut s = State::new(now);
        s.store.insert(params[0], Value::object(1));
        s
    };
    let mut s = state(&right);
    s.old = Some(&before);
    assert_eq!(ev.holds(&s, post), Ok(true));
    let mut s = state(&wrong);
    s.old = Some(&before);
    assert_eq!(ev.holds(&s, post), Ok(false));
    // No old heap given: not known, never a guess.
    assert!(matches!(
        ev.holds(&state(&right), post),
        Err(Stop::Unknown(_))
    ));
}

#[test]
fn permissions_are_taken_as_an_exhale_takes_them() {
    let src = "field f: Int\n\
               method m(x: Ref) ensures acc(x.f, 1/2) && acc(x.f, 1/2)";
    let (program, sem) = checked(src);
    let (post, params) = method_parts(&program, &sem);
    let ev = Evaluator::new(&program, &sem);
    for (held, holds) in [(Value::perm(1, 2), false), (Value::write(), true)] {
        let mut h = Heap::default();
        let o = h.allocate();
        let Value::Perm(p) = held else { panic!() };
        h.set(o, "f", int(0), p);
        let mut s = State::new(&h);
        s.store.insert(params[0], Value::object(1));
        assert_eq!(ev.holds(&s, post), Ok(holds));
    }
}

#[test]
fn quantified_permissions_and_bounded_quantifiers() {
    let src = "field f: Int\n\
               method m(xs: Set[Ref], s: Seq[Int]) ensures (forall x: Ref :: x in xs ==> acc(x.f)) && (forall i: Int :: 0 <= i && i < |s| ==> s[i] > 0)";
    let (program, sem) = checked(src);
    let (post, params) = method_parts(&program, &sem);
    let ev = Evaluator::new(&program, &sem);
    let mut h = Heap::default();
    let (a, b) = (h.allocate(), h.allocate());
    h.set(a, "f", int(1), one());
    let run = |h: &Heap, s: Value| {
        let mut st = State::new(h);
        st.store
            .insert(params[0], Value::set([Value::object(1), Value::object(2)]));
        st.store.insert(params[1], s);
        ev.holds(&st, post)
    };
    let positive = Value::seq([int(1), int(2)]);
    assert_eq!(run(&h, positive.clone()), Ok(false), "o2.f is not held");
    h.set(b, "f", int(1), one());
    assert_eq!(run(&h, positive), Ok(true));
    assert_eq!(run(&h, Value::seq([int(1), int(0)])), Ok(false));
}

#[test]
fn what_cannot_be_computed_is_unknown() {
    let src = "domain D { function g(i: Int): Int }\n\
               function unbounded(): Bool { forall i: Int :: i * i >= 0 }\n\
               function dom(): Int { g(3) }\n\
               function abs(i: Int): Int\n\
               function calls(): Int { abs(2) }\n\
               function loop(i: Int): Int { loop(i + 1) }";
    let h = Heap::default();
    for f in ["unbounded", "dom", "calls"] {
        assert!(is_unknown(&apply(src, f, vec![], &h)), "{f}");
    }
    assert!(is_unknown(&apply(src, "loop", vec![int(0)], &h)));
}
