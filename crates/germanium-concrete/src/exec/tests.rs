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
    match search(&machine, method, 5_000, &|_| true) {
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
    let Found::Failure(f) = search(&machine, "m", 5_000, &|_| true) else {
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
    let found = search(&machine, "b", 1_000, &|_| true);
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
