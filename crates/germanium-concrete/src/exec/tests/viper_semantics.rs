//! Where Viper's semantics is laxer than a naive run, found by the adversary (issue 54):
//! a run that fails only under the naive reading would call a correct verdict unsound.

use super::{first_failure, first_function_failure};
use crate::exec::Check;

#[test]
fn an_application_needs_some_permission_not_the_amount_written() {
    // Silicon's default: function preconditions' amounts are not enforced at applications.
    let src = "field f: Int\n\
        function get(x: Ref): Int requires acc(x.f) { x.f }\n\
        method half(x: Ref) requires acc(x.f, 1/2) { assert get(x) == x.f }\n\
        method gone(x: Ref) requires acc(x.f, 1/2) { exhale acc(x.f, 1/2); assert get(x) == 0 }";
    assert_eq!(first_failure(src, "half"), None);
    assert_eq!(
        first_failure(src, "gone").map(|(c, _)| c),
        Some(Check::WellDefinedness)
    );
}

#[test]
fn an_application_outside_its_inhaled_precondition_has_no_known_value() {
    // `[i < |xs|, true]`: a caller checks `true` only; the body is defined where `i < |xs|`.
    let src = "function at(xs: Seq[Int], i: Int): Int\n\
        requires 0 <= i && [i < |xs|, true]\n{ xs[i] }\n\
        method m(xs: Seq[Int]) { var v: Int := at(xs, |xs|) }\n\
        method n(xs: Seq[Int]) requires |xs| > 0 { var v: Int := at(xs, 0); assert v == xs[0] + 1 }";
    assert_eq!(first_failure(src, "m"), None);
    assert_eq!(first_failure(src, "n"), Some((Check::Assert, 5)));
}

#[test]
fn a_given_instance_whose_body_cannot_hold_is_no_run() {
    let src = "field f: Int\n\
        predicate P(xs: Set[Ref], x: Ref) { x in xs && forall z: Ref :: z in xs ==> acc(z.f) }\n\
        function get(xs: Set[Ref], x: Ref): Int requires P(xs, x) { unfolding P(xs, x) in x.f }";
    assert_eq!(first_function_failure(src, "get"), None);
}

#[test]
fn reading_the_pure_parts_of_nested_instances_stops() {
    // Each instance's pure part unfolds the next: reading it is bounded, never a stack
    // overflow, and the runs that remain still find the failure.
    let src = "field next: Ref\nfield data: Int\n\
        predicate list(this: Ref) { acc(this.next) && acc(this.data) && (this.next != null ==> \
        acc(list(this.next)) && unfolding list(this.next) in this.data <= this.next.data) }\n\
        function first(this: Ref): Int requires list(this) { unfolding list(this) in this.data }\n\
        method m(this: Ref) requires list(this) { unfold list(this); assert this.data > 0 }";
    assert_eq!(first_failure(src, "m"), Some((Check::Assert, 5)));
    assert_eq!(first_function_failure(src, "first"), None);
}

#[test]
fn a_callee_whose_body_is_not_well_defined_fails_itself_not_its_caller() {
    let src = "field f: Int\n\
        function g(x: Ref): Int { x.f }\n\
        method m(x: Ref) { var v: Int := g(x) }";
    assert_eq!(first_failure(src, "m"), None);
    assert_eq!(
        first_function_failure(src, "g").map(|(c, _, _)| c),
        Some(Check::WellDefinedness)
    );
}

#[test]
fn callers_assume_the_inhaled_part_of_a_postcondition() {
    let src = "function p(i: Int): Int\n  ensures [result > 0, true]\n{ i }\n\
        method m(i: Int) { assert p(i) > 0 }\n\
        method n(i: Int) { assert p(i) > 1 }";
    assert_eq!(first_failure(src, "m"), None);
    assert_eq!(first_failure(src, "n"), Some((Check::Assert, 5)));
}

#[test]
fn wands_are_told_apart_by_holes_as_viper_takes_them() {
    // `old(..)` and heap-independent functions are holes as a whole, as in both back ends
    // (`all/issues/silver/0230.vpr`).
    let src = "field f: Int\n\
        method same(x: Ref, y: Ref) requires acc(x.f) && acc(y.f) {\n\
          inhale true --* old(x.f) + old(y.f) == 4\n  exhale true --* old(x.f + y.f) == 4 }\n\
        method other(x: Ref, y: Ref) requires acc(x.f) && acc(y.f) {\n\
          inhale true --* old(x.f) + old(y.f) == 4\n  exhale true --* old(x.f + y.f) == 5 }";
    assert_eq!(first_failure(src, "same"), None);
    assert_eq!(first_failure(src, "other"), Some((Check::Exhale, 7)));
}
