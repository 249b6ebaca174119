//! Runs and searches on small methods: failures that are real are found with their
//! pre-state; checks that hold are never reported failing.

use crate::exec::{Check, Machine};
use crate::search::{search, Found};
use crate::testing::checked;
use crate::{Evaluator, Value};

/// The first failure of `method` the search finds (any check), within 5,000 runs: its check
/// and line.
fn first_failure(src: &str, method: &str) -> Option<(Check, u32)> {
    let (program, sem, sources) = checked(src);
    let ev = Evaluator::new(&program, &sem);
    let machine = Machine::new(&ev);
    match search(&machine, &|c| machine.run(method, c), 5_000, &|_| true) {
        Found::Failure(f) => Some((f.check, sources.start(f.span).line)),
        Found::None { .. } => None,
    }
}

#[test]
fn a_wrong_assertion_fails_with_its_pre_state() {
    let src = "field f: Int\n\
               method m(x: Ref, k: Int)\n  requires acc(x.f) && k > 1\n{\n  x.f := k\n  assert x.f == 2\n}";
    let (program, sem, _) = checked(src);
    let ev = Evaluator::new(&program, &sem);
    let machine = Machine::new(&ev);
    let Found::Failure(f) = search(&machine, &|c| machine.run("m", c), 5_000, &|_| true) else {
        panic!("not found")
    };
    assert_eq!(f.check, Check::Assert);
    // The smallest k above 1 that is not 2.
    let k = sem.methods["m"].params[1];
    assert_eq!(f.pre_store[&k], Value::int(3));
}

#[test]
fn checks_that_hold_are_never_failing_runs() {
    // Valid, but a verifier may fail it on its budget: 20 independent counting `if`s.
    let mut body = String::from("  var r: Int := 0\n");
    for i in 0..20 {
        body.push_str(&format!(
            "  var b{i}: Bool\n  if (b{i}) {{ r := r + 1 }} else {{ r := r + 2 }}\n"
        ));
    }
    body.push_str("  assert r >= 20\n");
    let src = format!("method count()\n{{\n{body}}}");
    assert_eq!(first_failure(&src, "count"), None);
    let calls = "field f: Int\n\
        method inc(x: Ref) requires acc(x.f) ensures acc(x.f) && x.f == old(x.f) + 1\n\
        method client(x: Ref) requires acc(x.f) { x.f := 1; inc(x); assert x.f == 2 }";
    assert_eq!(first_failure(calls, "client"), None);
}

#[test]
fn calls_loops_and_predicates_fail_where_viper_says() {
    let wrong_post = "field f: Int\n\
        method inc(x: Ref) requires acc(x.f) ensures acc(x.f) && x.f == old(x.f) + 1\n\
        method client(x: Ref) requires acc(x.f) { x.f := 1; inc(x); assert x.f == 3 }";
    assert_eq!(
        first_failure(wrong_post, "client"),
        Some((Check::Assert, 3))
    );
    let no_permission = "field f: Int\n\
        method inc(x: Ref) requires acc(x.f) ensures acc(x.f)\n\
        method client(x: Ref) requires acc(x.f, 1/2) { inc(x) }";
    assert_eq!(
        first_failure(no_permission, "client"),
        Some((Check::CallPrecondition, 3))
    );
    // After the loop only the invariant and the negated condition are known: with n = 0
    // the loop never runs.
    let loop_src = "method l(n: Int)\n  requires n >= 0\n{\n  var i: Int := 0\n  while (i < n)\n    invariant 0 <= i && i <= n\n  { i := i + 1 }\n  assert i > 0\n}";
    assert_eq!(first_failure(loop_src, "l"), Some((Check::Assert, 8)));
    let preserved = "method l(n: Int)\n{\n  var i: Int := 0\n  while (i < n)\n    invariant i <= 1\n  { i := i + 1 }\n}";
    assert_eq!(
        first_failure(preserved, "l"),
        Some((Check::InvariantPreserved, 5))
    );
    let folded = "field v: Int\n\
        predicate P(x: Ref) { acc(x.v) && x.v > 0 }\n\
        method p(x: Ref) requires P(x) { unfold P(x); assert x.v > 0; x.v := 0; fold P(x) }";
    assert_eq!(first_failure(folded, "p"), Some((Check::Fold, 3)));
    let fine = "field v: Int\n\
        predicate P(x: Ref) { acc(x.v) && x.v > 0 }\n\
        method p(x: Ref) requires P(x) ensures P(x) { unfold P(x); x.v := x.v + 1; fold P(x) }";
    assert_eq!(first_failure(fine, "p"), None);
}

#[test]
fn the_search_is_exhaustive_where_the_choices_are_few() {
    let src = "method b(x: Bool, y: Bool) { assert x || !x || y }";
    let (program, sem, _) = checked(src);
    let ev = Evaluator::new(&program, &sem);
    let machine = Machine::new(&ev);
    let found = search(&machine, &|c| machine.run("b", c), 1_000, &|_| true);
    assert!(
        matches!(found, Found::None { exhaustive: true, runs, unknown: None } if runs <= 10),
        "{found:?}"
    );
}

#[test]
fn wildcards_collections_of_objects_and_quasihavoc() {
    // A wildcard exhale takes some of what is held, never all of it.
    let wildcard = "field f: Int\n\
        method w(x: Ref) requires acc(x.f) { exhale acc(x.f, wildcard); assert perm(x.f) > none; x.f := 1 }";
    assert_eq!(first_failure(wildcard, "w"), Some((Check::Assignment, 2)));
    // Quantified permissions over a set of new objects.
    let qp = "field f: Int\n\
        method q(s: Set[Ref]) requires forall x: Ref :: x in s ==> acc(x.f) { assert |s| < 2 }";
    assert_eq!(first_failure(qp, "q"), Some((Check::Assert, 2)));
    // After a quasihavoc the value is any value.
    let havoc = "field f: Int\n\
        method h(x: Ref) requires acc(x.f) { x.f := 0; quasihavoc x.f; assert x.f == 0 }";
    assert_eq!(first_failure(havoc, "h"), Some((Check::Assert, 2)));
}

/// The first failure of the function `name`'s own checks the search finds.
fn first_function_failure(src: &str, name: &str) -> Option<(Check, u32, Option<Value>)> {
    let (program, sem, sources) = checked(src);
    let ev = Evaluator::new(&program, &sem);
    let machine = Machine::new(&ev);
    match search(&machine, &|c| machine.run_function(name, c), 5_000, &|_| {
        true
    }) {
        Found::Failure(f) => Some((f.check, sources.start(f.span).line, f.result)),
        Found::None { .. } => None,
    }
}

#[test]
fn functions_fail_their_postconditions_and_preconditions_of_what_they_apply() {
    let wrong = "function f(x: Int): Int\n  ensures result > x\n{ x }";
    assert_eq!(
        first_function_failure(wrong, "f"),
        Some((Check::Postcondition, 2, Some(Value::int(0))))
    );
    let fine = "function g(x: Int): Int\n  requires x > 0\n  ensures result > 0\n{ x }";
    assert_eq!(first_function_failure(fine, "g"), None);
    let pre = "function h(x: Int): Int requires x > 0 { x }\n\
               function k(y: Int): Int\n{ h(y) }";
    assert_eq!(
        first_function_failure(pre, "k"),
        Some((Check::WellDefinedness, 3, None))
    );
    // Recursion runs on the bodies: the real values.
    let recursive = "function sum(n: Int): Int\n  requires n >= 0\n  ensures result >= n\n{ n == 0 ? 0 : n + sum(n - 1) }";
    assert_eq!(first_function_failure(recursive, "sum"), None);
}

#[test]
fn gotos_jump_and_loops_of_labels_run_for_real() {
    let skip = "method m()\n{\n  goto l\n  assert false\n  label l\n  assert 1 == 2\n}";
    assert_eq!(first_failure(skip, "m"), Some((Check::Assert, 6)));
    let looped = "method m()\n{\n  var i: Int := 0\n  label head invariant i <= 3\n  if (i < 3) { i := i + 1; goto head }\n  assert i == 4\n}";
    assert_eq!(first_failure(looped, "m"), Some((Check::Assert, 6)));
    let broken = "method m()\n{\n  var i: Int := 0\n  label head invariant i <= 2\n  if (i < 3) { i := i + 1; goto head }\n}";
    assert_eq!(
        first_failure(broken, "m"),
        Some((Check::InvariantPreserved, 4))
    );
}

#[test]
fn quasihavocall_forgets_every_location_it_names() {
    let src = "field f: Int\n\
        method h(x: Ref, y: Ref) requires acc(x.f) && acc(y.f) && x.f == 0 && y.f == 0\n\
        { quasihavocall z: Ref :: z == y ==> z.f; assert x.f == 0; assert y.f == 0 }";
    assert_eq!(first_failure(src, "h"), Some((Check::Assert, 3)));
    let (program, sem, _) = checked(src);
    let ev = Evaluator::new(&program, &sem);
    let machine = Machine::new(&ev);
    let Found::Failure(f) = search(&machine, &|c| machine.run("h", c), 5_000, &|_| true) else {
        panic!("not found")
    };
    // The failing check is the second: x.f is not havocked.
    assert!(f.span.start > program_text_index(src, "assert y.f"));
}

fn program_text_index(src: &str, needle: &str) -> u32 {
    src.find(needle).unwrap() as u32 - 1
}

#[test]
fn reads_inside_instances_held_from_the_pre_state_see_one_content() {
    let wrong = "field v: Int\n\
        predicate P(x: Ref) { acc(x.v) }\n\
        method m(x: Ref) requires P(x) { var i: Int := unfolding P(x) in x.v; assert i == 0 }";
    assert_eq!(first_failure(wrong, "m"), Some((Check::Assert, 3)));
    let same = "field v: Int\n\
        predicate P(x: Ref) { acc(x.v) }\n\
        function get(x: Ref): Int requires P(x) { unfolding P(x) in x.v }\n\
        method m(x: Ref) requires P(x)\n\
        { var i: Int := unfolding P(x) in x.v; assert get(x) == i; unfold P(x); assert x.v == i }";
    assert_eq!(first_failure(same, "m"), None);
}

#[test]
fn functions_without_a_body_take_values_their_postconditions_allow_and_keep_them() {
    let src = "field f: Ref\n\
        function fun01(x: Ref): Int\n  ensures 0 < result\n\
        method holds(x: Ref) { var r: Int := fun01(x); assert fun01(x) >= 1; assert fun01(x) == r }\n\
        method fails(x: Ref, y: Ref) { assert fun01(x) == fun01(y) }";
    assert_eq!(first_failure(src, "holds"), None);
    assert_eq!(first_failure(src, "fails"), Some((Check::Assert, 5)));
    // A heap-dependent one is a function of the locations its precondition reads.
    let framed = "field f: Int\n\
        function get(x: Ref): Int\n  requires acc(x.f)\n\
        method m(x: Ref) requires acc(x.f)\n\
        { var r: Int := get(x); x.f := x.f; assert get(x) == r; x.f := x.f + 1; assert get(x) == r }";
    assert_eq!(first_failure(framed, "m"), Some((Check::Assert, 5)));
}

#[test]
fn an_unbounded_quantifier_is_false_where_a_sampled_instance_is() {
    let false_one = "method m() { assert forall n: Int :: n >= 1 ==> n < 5 }";
    assert_eq!(first_failure(false_one, "m"), Some((Check::Assert, 1)));
    // True on every sample, and true: never a failure (and not known either).
    let (program, sem, _) = checked("method m() { assert forall n: Int :: n * n >= 0 }");
    let ev = Evaluator::new(&program, &sem);
    let machine = Machine::new(&ev);
    let found = search(&machine, &|c| machine.run("m", c), 100, &|_| true);
    assert!(
        matches!(
            found,
            Found::None {
                unknown: Some(_),
                ..
            }
        ),
        "{found:?}"
    );
}

#[test]
fn values_of_adts_are_built_from_their_constructors() {
    let src = "adt List[T] { Nil() Cons(value: T, tail: List[T]) }\n\
        method m(l: List[Int]) { assert l.isNil || l.value != 2 }";
    assert_eq!(first_failure(src, "m"), Some((Check::Assert, 2)));
    let fine = "adt List[T] { Nil() Cons(value: T, tail: List[T]) }\n\
        method m(l: List[Int]) { assert l.isNil || l.isCons }";
    assert_eq!(first_failure(fine, "m"), None);
}

#[test]
fn a_list_of_clauses_is_exhaled_as_their_conjunction() {
    // The second clause reads what the first gives up: still well-defined.
    let holds = "field f: Int\n\
        method m(x: Ref) requires acc(x.f) ensures acc(x.f) ensures x.f == 1 { x.f := 1 }";
    assert_eq!(first_failure(holds, "m"), None);
    let wrong = "field f: Int\n\
        method m(x: Ref) requires acc(x.f) ensures acc(x.f) ensures x.f == 1 { x.f := 2 }";
    assert_eq!(first_failure(wrong, "m"), Some((Check::Postcondition, 2)));
    let invariant = "field f: Int\n\
        method m(x: Ref, n: Int) requires acc(x.f) && x.f == 0 && n > 0\n\
        {\n  var i: Int := 0\n  while (i < n)\n    invariant acc(x.f)\n    invariant i <= n\n    invariant x.f == i * n\n  { x.f := x.f + n; i := i + 2 }\n}";
    assert_eq!(
        first_failure(invariant, "m"),
        Some((Check::InvariantPreserved, 7))
    );
}

#[test]
fn domain_functions_take_values_only_where_the_axioms_allow_them() {
    let bounded =
        "domain F {\n  function f(i: Int): Int\n  axiom { forall i: Int :: f(i) >= 0 }\n}\n";
    // f(k) = -1 fails the first assertion, but no model of the axiom has it.
    let valid = format!("{bounded}method m(k: Int) {{ assert f(k) >= 0 && f(k + 1) >= 0 }}");
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong = format!("{bounded}method m(k: Int) {{ assert f(k) >= 1 }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 5)));
    // A variable the axiom compares is not sampled: no model is claimed.
    let guarded = "domain G {\n  function g(i: Int): Int\n  axiom { forall i: Int :: i > 0 ==> g(i) > 0 }\n}\n\
                   method m(k: Int) { assert k <= 0 || g(k) > 0 }";
    assert_eq!(first_failure(guarded, "m"), None);
}

#[test]
fn functions_an_axiom_defines_are_evaluated_by_their_definition() {
    // Every model of the axiom has twice(i) = i + i: no table, and the axiom is not sampled.
    let twice = "domain D {\n  function twice(i: Int): Int\n  \
                 axiom { forall i: Int :: twice(i) == i + i }\n}\n";
    let valid = format!(
        "{twice}method m(k: Int) {{ assert twice(k) == 2 * k && twice(k + 7) > twice(k) }}"
    );
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong = format!("{twice}method m(k: Int) {{ assert twice(k) != 6 }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 5)));
    // Another axiom on a defined function is checked: `twice(1) == 3` has no model.
    let contradicting = "domain E {\n  function twice(i: Int): Int\n  \
                         axiom { forall i: Int :: i + i == twice(i) }\n  axiom { twice(1) == 3 }\n}\n\
                         method m(k: Int) { assert twice(k) != 6 }";
    assert_eq!(first_failure(contradicting, "m"), None);
    // Definitions through each other are not definitions: they get tables, and the axioms
    // are checked on them.
    let cyclic = "domain C {\n  function f(i: Int): Int\n  function g(i: Int): Int\n  \
                  axiom { forall i: Int :: f(i) == g(i) }\n  axiom { forall i: Int :: g(i) == f(i) }\n}\n";
    let valid = format!("{cyclic}method m(k: Int) {{ assert f(k) == g(k) }}");
    assert_eq!(first_failure(&valid, "m"), None);
}

#[test]
fn an_application_equated_with_others_waits_for_their_values() {
    // Were foo(a) and foo(b) read at their defaults to give foo(c) its value, foo(c) could
    // only be twice one value.
    let src = "domain D {\n  function foo(i: Int): Int\n}\n\
               method m(a: Int, b: Int, c: Int)\n  requires foo(a) + foo(b) == foo(c) && a != b\n\
               {\n  assert foo(c) != 1\n}";
    assert_eq!(first_failure(src, "m"), Some((Check::Assert, 7)));
    let valid = src.replace("foo(c) != 1", "foo(c) - foo(b) == foo(a)");
    assert_eq!(first_failure(&valid, "m"), None);
}

#[test]
fn domain_values_unique_functions_and_generic_instances() {
    let values = "domain D {\n  function g(d: D): Int\n  axiom { forall d: D :: g(d) == 1 }\n}\n";
    let valid = format!("{values}method m(x: D, y: D) {{ assert g(x) == g(y) }}");
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong = format!("{values}method m(x: D, y: D) {{ assert x == y }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 5)));
    let unique =
        "domain T {\n  unique function a(): T\n  unique function b(): T\n  function c(): T\n}\n";
    let valid = format!("{unique}method m() {{ assert a() != b() }}");
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong = format!("{unique}method m() {{ assert c() != a() }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 6)));
    let option = "domain Option[T] {\n  function discr(o: Option[T]): Int\n  function none_of(): Option[T]\n  \
                  axiom { forall o: Option[T] :: discr(o) >= 0 && discr(none_of()) == 0 }\n}\n";
    let valid = format!("{option}method m() {{ assert discr((none_of(): Option[Perm])) == 0 }}");
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong = format!("{option}method m(o: Option[Bool]) {{ assert discr(o) == 0 }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 6)));
}

#[test]
fn functions_without_postconditions_take_a_default_under_quantifiers() {
    let h = "function h(x: Ref): Bool\n";
    let valid = format!("{h}method m(x: Ref) {{ assert h(x) ==> exists y: Ref :: h(y) }}");
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong = format!("{h}method m(x: Ref) {{ assert h(x) ==> forall y: Ref :: h(y) }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 2)));
    // With a postcondition no default is assumed: each application under the quantifier
    // gets a value the postcondition allows.
    let constrained = "function g(x: Ref): Int\n  ensures result > 0\n\
                       method m(x: Ref) { assert g(x) > 0 ==> forall y: Ref :: g(y) > 0 }";
    assert_eq!(first_failure(constrained, "m"), None);
}

#[test]
fn an_assumed_equality_gives_an_application_its_value() {
    // 24691 is no integer the search tries: only the equality gives it.
    let f = "function f(x: Int): Int\n";
    let wrong =
        format!("{f}method m(k: Int) {{ inhale f(k) == 2 * 12345 + 1; assert f(k) != 24691 }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 2)));
    let valid =
        format!("{f}method m(k: Int) {{ inhale f(k) == 2 * 12345 + 1; assert f(k) == 24691 }}");
    assert_eq!(first_failure(&valid, "m"), None);
}

#[test]
fn reads_inside_nested_instances_see_their_contents() {
    let list = "field next: Ref\n\
        predicate node(x: Ref) { acc(x.next) && (x.next != null ==> node(x.next)) }\n\
        function len(x: Ref): Int requires node(x) { unfolding node(x) in (x.next == null ? 1 : 1 + len(x.next)) }\n";
    let wrong = format!("{list}method m(x: Ref) requires node(x) {{ assert len(x) <= 2 }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 4)));
    let valid = format!("{list}method m(x: Ref) requires node(x) {{ assert len(x) >= 1 }}");
    assert_eq!(first_failure(&valid, "m"), None);
}

#[test]
fn an_exhale_reads_permission_amounts_after_the_parts_before_are_taken() {
    let f = "field f: Int\n";
    let wrong = format!(
        "{f}method m(x: Ref) requires acc(x.f) {{ exhale acc(x.f) && perm(x.f) == write }}"
    );
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Exhale, 2)));
    let valid = format!(
        "{f}method m(x: Ref) requires acc(x.f) {{ exhale acc(x.f, 1/2) && perm(x.f) == 1/2 && old(perm(x.f)) == write }}"
    );
    assert_eq!(first_failure(&valid, "m"), None);
}

#[test]
fn an_instance_a_callee_gives_back_has_contents_of_its_own() {
    let cell = "field v: Int\n\
        predicate cell(x: Ref) { acc(x.v) }\n\
        function get(x: Ref): Int requires cell(x) { unfolding cell(x) in x.v }\n\
        method set(x: Ref, k: Int) requires cell(x) ensures cell(x) && get(x) == k\n";
    let wrong = format!("{cell}method m(x: Ref) requires cell(x) {{ set(x, 12345); set(x, 54321); assert get(x) == 12345 }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 5)));
    let valid = format!("{cell}method m(x: Ref) requires cell(x) {{ set(x, 12345); set(x, 54321); assert get(x) == 54321 }}");
    assert_eq!(first_failure(&valid, "m"), None);
}

#[test]
fn collections_of_references_may_hold_null_and_integer_sequences_grow_long() {
    let wrong =
        "method m(s: Set[Ref]) requires |s| > 0 { assert forall x: Ref :: x in s ==> x != null }";
    assert_eq!(first_failure(wrong, "m"), Some((Check::Assert, 1)));
    let valid = "field f: Int\n\
                 method m(s: Set[Ref]) requires forall x: Ref :: x in s ==> acc(x.f)\n\
                 { assert forall x: Ref :: x in s ==> x != null }";
    assert_eq!(first_failure(valid, "m"), None);
    let long = "method m(xs: Seq[Int]) requires |xs| > 6 { assert xs[5] != 5 }";
    assert_eq!(first_failure(long, "m"), Some((Check::Assert, 1)));
}

#[test]
fn permission_amounts_are_not_read_after_a_loop_of_labels() {
    // Viper's loop body holds only the invariant (1/2); a run holds the frame too.
    let src = "field f: Int\n\
        method m(x: Ref) requires acc(x.f) {\n\
          var n: Int\n\
          label head invariant acc(x.f, 1/2)\n\
          assert perm(x.f) == 1/2\n\
          n := n + 1\n\
          if (n != 0) { goto head }\n\
        }";
    assert_eq!(first_failure(src, "m"), None);
}

#[test]
fn a_loop_body_holds_only_what_its_invariant_gives() {
    let f = "field f: Int\n";
    let valid = format!(
        "{f}method m(x: Ref, c: Bool) requires acc(x.f) {{\n  while (c) invariant acc(x.f, 1/2) {{ assert perm(x.f) == 1/2 }}\n  assert perm(x.f) == write\n}}"
    );
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong = format!(
        "{f}method m(x: Ref, c: Bool) requires acc(x.f) {{\n  while (c) invariant acc(x.f, 1/2) {{ x.f := 1 }}\n}}"
    );
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assignment, 3)));
}

#[test]
fn a_jump_out_of_a_loop_takes_the_frame_along() {
    let f = "field g: Int\n";
    let body = "var c: Int\n  while (c > 0) { if (c == 5) { goto l } c := c - 1 }\n  label l\n";
    let valid = format!(
        "{f}method m(x: Ref) requires acc(x.g) {{\n  {body}  assert perm(x.g) == write\n}}"
    );
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong =
        format!("{f}method m(x: Ref) requires acc(x.g) {{\n  {body}  assert perm(x.g) == none\n}}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 6)));
}

#[test]
fn a_quantifier_whose_variable_is_unused_is_its_body_and_negated_literals_are_tried() {
    let wrong = "method m(i: Int) requires forall k: Int :: true { assert 0 <= i + 3 }";
    assert_eq!(first_failure(wrong, "m"), Some((Check::Assert, 1)));
    let valid =
        "method m(i: Int) requires (forall k: Int :: true) && i >= -3 { assert 0 <= i + 3 }";
    assert_eq!(first_failure(valid, "m"), None);
}

#[test]
fn applications_under_quantifiers_in_bodies_and_in_callee_contracts_get_values() {
    let g = "function g(x: Ref): Int\n  ensures result > 0\n";
    let valid =
        format!("{g}method m(s: Set[Ref]) {{ assert forall y: Ref :: y in s ==> g(y) > 0 }}");
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong =
        format!("{g}method m(s: Set[Ref]) {{ assert forall y: Ref :: y in s ==> g(y) > 1 }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 3)));
    // In another function's body.
    let body =
        "function p(x: Int): Bool\n  ensures x > 0 ==> result\nfunction k(x: Int): Bool { p(x) }\n";
    let valid = format!("{body}method m(x: Int) requires x > 0 {{ assert k(x) }}");
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong = format!("{body}method m(x: Int) {{ assert k(x) }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 4)));
    // A domain function a callee's postcondition applies.
    let callee = "domain D {\n  function d(i: Int): Int\n}\nmethod c(k: Int) ensures d(k) > 5\n";
    let valid = format!("{callee}method m(k: Int) {{ c(k); assert d(k) > 5 }}");
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong = format!("{callee}method m(k: Int) {{ c(k); assert d(k) > 6 }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 5)));
}

#[test]
fn a_function_without_a_body_has_its_postconditions_checked_well_defined() {
    let pre = "function p(x: Int): Int\n  requires x > 0\n";
    let wrong = format!("{pre}function h(a: Int): Bool\n  ensures p(a) > 0 ==> result\n");
    assert_eq!(
        first_function_failure(&wrong, "h"),
        Some((Check::WellDefinedness, 4, Some(Value::Bool(false))))
    );
    // The postconditions before hold where a later one is checked.
    let valid =
        format!("{pre}function h(a: Int): Bool\n  ensures a > 0\n  ensures p(a) > 0 ==> result\n");
    assert_eq!(first_function_failure(&valid, "h"), None);
}

#[test]
fn an_unfolding_in_a_body_unfolded_at_a_fraction_needs_that_fraction() {
    let src = |tail: &str| {
        format!(
            "field f: Ref\npredicate Q(r: Ref) {{ true }}\n\
             predicate P(r: Ref) {{ acc(r.f) && Q(r.f) && unfolding Q(r.f) in true }}\n\
             method m(r: Ref)\n{{\n  inhale acc(P(r))\n  unfold acc(P(r), 1/2)\n  {tail}\n}}"
        )
    };
    assert_eq!(
        first_failure(&src("assert false"), "m"),
        Some((Check::Assert, 8))
    );
    assert_eq!(first_failure(&src("assert perm(r.f) == 1/2"), "m"), None);
}

#[test]
fn integer_quantifiers_that_only_compare_are_decided_on_the_values_compared_with() {
    let domain =
        "method m(s: Set[Int])\n  requires forall i: Int :: (0 <= i && i < 2) <==> i in s\n";
    assert_eq!(
        first_failure(&format!("{domain}{{ assert 1 in s }}"), "m"),
        None
    );
    assert_eq!(
        first_failure(&format!("{domain}{{ assert 2 in s }}"), "m"),
        Some((Check::Assert, 3))
    );
    let wrong = "method m(k: Int) { assert forall i: Int :: i != k ==> i < k + 5 }";
    assert_eq!(first_failure(wrong, "m"), Some((Check::Assert, 1)));
    let valid = "method m(k: Int, s: Seq[Int]) { assert forall i: Int :: i < k || i >= k }";
    assert_eq!(first_failure(valid, "m"), None);
    // A guard false whatever the variable: the quantifier holds.
    let vacuous = "method m(k: Int) { assert forall i: Int :: k > 0 ==> i * i >= 0; assert k > 0 }";
    assert_eq!(first_failure(vacuous, "m"), Some((Check::Assert, 1)));
}

#[test]
fn values_chosen_while_a_quantified_permission_is_inhaled_do_not_shrink_its_range() {
    // The callee's result is chosen when the postcondition reads it: its new objects must
    // all get their permission.
    let src = "field f: Int\n\
        method get() returns (s: Set[Ref]) ensures forall x: Ref :: x in s ==> acc(x.f)\n\
        method m() { var s: Set[Ref]; s := get(); assert forall x: Ref :: x in s ==> perm(x.f) == write }";
    assert_eq!(first_failure(src, "m"), None);
    let wrong = "field f: Int\n\
        method get() returns (s: Set[Ref]) ensures forall x: Ref :: x in s ==> acc(x.f)\n\
        method m() { var s: Set[Ref]; s := get(); assert |s| < 2 }";
    assert_eq!(first_failure(wrong, "m"), Some((Check::Assert, 3)));
}

#[test]
fn parameters_take_the_values_the_precondition_s_equalities_give() {
    let pre = "method m(xs: Seq[Ref], n: Int, x: Ref, y: Ref, k: Int)\n  \
               requires |xs| == n && n > 6 && xs[0] == x && xs[5] == y && k == n + 7\n";
    assert_eq!(
        first_failure(&format!("{pre}{{ assert x == y }}"), "m"),
        Some((Check::Assert, 3))
    );
    assert_eq!(
        first_failure(&format!("{pre}{{ assert k > 13 }}"), "m"),
        None
    );
}

#[test]
fn preconditions_and_assumptions_must_be_well_defined() {
    let p = "function p(x: Int): Int\n  requires x > 0\n";
    let wrong = format!("{p}method m(k: Int) requires p(k) > 0 {{}}");
    assert_eq!(
        first_failure(&wrong, "m"),
        Some((Check::WellDefinedness, 3))
    );
    let valid = format!("{p}method m(k: Int) requires k > 0 && p(k) > 0 {{}}");
    assert_eq!(first_failure(&valid, "m"), None);
    let assume = format!("{p}method m(k: Int) {{ assume p(k) > 0 }}");
    assert_eq!(
        first_failure(&assume, "m"),
        Some((Check::WellDefinedness, 3))
    );
}

#[test]
fn functions_without_a_body_or_postconditions_may_hold_predicate_instances() {
    let src = "field f: Int\npredicate P(x: Ref) { acc(x.f) }\nfunction inner(x: Ref): Int\n  requires P(x)\n";
    let wrong = format!("{src}method m(x: Ref) {{ inhale P(x); assert inner(x) > 0 }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 5)));
    let valid = format!(
        "{src}method m(x: Ref) {{ inhale P(x); var a: Int := inner(x); assert a == inner(x) }}"
    );
    assert_eq!(first_failure(&valid, "m"), None);
}

#[test]
fn contents_of_an_instance_held_since_the_pre_state_are_the_pre_state_s_too() {
    let run = |body: &str| {
        format!(
            "field f: Int\npredicate P(x: Ref) {{ acc(x.f) }}\nmethod m(x: Ref)\n  requires P(x)\n  \
             ensures P(x) && (unfolding P(x) in x.f) == old(unfolding P(x) in x.f)\n{{ {body} }}"
        )
    };
    assert_eq!(
        first_failure(&run("unfold P(x); x.f := x.f + 1; fold P(x)"), "m"),
        Some((Check::Postcondition, 5))
    );
    assert_eq!(first_failure(&run("unfold P(x); fold P(x)"), "m"), None);
}

#[test]
fn the_contents_of_nested_instances_are_held_together() {
    // A list instance cannot hold itself: x.r == x would hold x.v twice.
    let list = "field v: Int\nfield r: Ref\n\
        predicate L(x: Ref) { acc(x.v) && acc(x.r) && (x.r != null ==> L(x.r)) }\n";
    let valid =
        format!("{list}method m(x: Ref) requires L(x) {{ assert unfolding L(x) in x.r != x }}");
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong =
        format!("{list}method m(x: Ref) requires L(x) {{ assert unfolding L(x) in x.r == null }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 4)));
}

#[test]
fn a_destructor_of_another_constructor_is_some_value_kept_for_the_run() {
    let adt = "adt L {\n  Nil()\n  Cons(value: Int, tail: L)\n}\n";
    let wrong = format!("{adt}method m() {{ assert Nil().value == 1 }}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 5)));
    let valid = format!("{adt}method m() {{ var a: Int := Nil().value; assert a == Nil().value }}");
    assert_eq!(first_failure(&valid, "m"), None);
}

#[test]
fn functions_whose_postconditions_refer_to_each_other_get_values_together() {
    let cycle = "function a(): Bool\n  ensures result == b()\nfunction b(): Bool\n  ensures result == a()\n";
    assert_eq!(
        first_failure(&format!("{cycle}method m() {{ assert a() }}"), "m"),
        Some((Check::Assert, 5))
    );
    assert_eq!(
        first_failure(&format!("{cycle}method m() {{ assert a() == b() }}"), "m"),
        None
    );
}

mod viper_semantics;
mod wands;
