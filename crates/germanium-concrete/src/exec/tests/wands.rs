//! Magic wands in runs: packages (with and without proof scripts, where a left-hand side
//! fits and where none does), applies, quasihavoc of wands and `old[lhs]`.

use super::first_failure;
use crate::exec::Check;

#[test]
fn packages_fail_only_where_no_footprint_makes_the_wand_hold() {
    // Some other object's f, not 0: the right-hand side fails on that left-hand side.
    let wrong = "field f: Int\n\
        method m(x: Ref, y: Ref) requires acc(x.f) && x != y { package acc(y.f) --* acc(y.f) && y.f == 0 }";
    assert_eq!(first_failure(wrong, "m"), Some((Check::Package, 2)));
    let needs_more = "field f: Int\n\
        method m(x: Ref) requires acc(x.f, 1/2) { package true --* acc(x.f) }";
    assert_eq!(first_failure(needs_more, "m"), Some((Check::Package, 2)));
    // The footprint gives what the left-hand side lacks; its value is kept.
    let fine = "field f: Int\n\
        method m(x: Ref) requires acc(x.f) && x.f == 42\n\
        { package true --* acc(x.f) && x.f == 42; apply true --* acc(x.f) && x.f == 42; assert x.f == 42 }";
    assert_eq!(first_failure(fine, "m"), None);
    let kept = "field f: Int\n\
        method m(x: Ref) requires acc(x.f) && x.f == 42\n\
        { package true --* acc(x.f); apply true --* acc(x.f); assert x.f == 41 }";
    assert_eq!(first_failure(kept, "m"), Some((Check::Assert, 3)));
    // The footprint is gone until the wand is applied.
    let taken = "field f: Int\n\
        method m(x: Ref) requires acc(x.f) { package true --* acc(x.f); x.f := 1 }";
    assert_eq!(first_failure(taken, "m"), Some((Check::Assignment, 2)));
    // `applying` reads the state the apply would make, without making it.
    let applying = "field f: Int\n\
        method m(x: Ref) requires acc(x.f) && x.f == 42\n\
        { package true --* acc(x.f); assert applying (true --* acc(x.f)) in x.f == 42; assert applying (true --* acc(x.f)) in x.f == 41 }";
    assert_eq!(first_failure(applying, "m"), Some((Check::Assert, 3)));
    // An apply needs the wand.
    let missing = "field f: Int\n\
        method m(x: Ref) requires acc(x.f) { apply acc(x.f) --* acc(x.f) }";
    assert_eq!(first_failure(missing, "m"), Some((Check::Apply, 2)));
}

#[test]
fn an_inhaled_wand_gives_back_what_its_left_hand_side_held_with_its_values() {
    // The left-hand side's location is the right-hand side's: its value stays.
    let same = "field f: Int\n\
        method m(x: Ref) requires acc(x.f) && (acc(x.f) --* acc(x.f))\n\
        { var v: Int := x.f; apply acc(x.f) --* acc(x.f); assert x.f == v }";
    assert_eq!(first_failure(same, "m"), None);
    // Another location: its value is any the footprint may hold.
    let other = "field f: Int\n\
        method m(x: Ref, y: Ref) requires acc(x.f) && (acc(x.f) --* acc(y.f))\n\
        { apply acc(x.f) --* acc(y.f); assert y.f == 0 }";
    assert_eq!(first_failure(other, "m"), Some((Check::Assert, 3)));
}

#[test]
fn a_vacuous_package_leaves_only_the_next_heap_free_check_known() {
    // No left-hand side is compatible with the whole of x.f: the footprint is not unique.
    let next = "field f: Int\n\
        method m(x: Ref) requires acc(x.f) && x.f == 3\n\
        { package acc(x.f, 1/2) && x.f == 2 --* acc(x.f)\n  assert false }";
    assert_eq!(first_failure(next, "m"), Some((Check::Assert, 4)));
    let later = "field f: Int\n\
        method m(x: Ref) requires acc(x.f) && x.f == 3\n\
        { package acc(x.f, 1/2) && x.f == 2 --* acc(x.f)\n  assert x.f == 4 }";
    assert_eq!(first_failure(later, "m"), None);
    // Of `B`, what the left-hand side lacks is taken from the state until what is taken
    // cannot be had with the left-hand side: x.f's whole permission, not y.f's.
    let separate = "field f: Int\n\
        method m(x: Ref, y: Ref) requires acc(x.f) && acc(y.f)\n\
        { package acc(x.f) --* acc(x.f) && acc(x.f) && acc(y.f)\n  exhale acc(y.f)\n  assert perm(x.f) == write }";
    assert_eq!(first_failure(separate, "m"), Some((Check::Assert, 5)));
}

#[test]
fn a_package_takes_nothing_for_a_pure_right_hand_side_or_an_unsatisfiable_left_one() {
    let f = "field f: Int\n";
    for wand in [
        "false --* acc(x.f)",
        "acc(x.f) && acc(x.f) --* acc(x.f)",
        "acc(x.f) --* true",
    ] {
        let valid =
            format!("{f}method m(x: Ref) requires acc(x.f) {{ package {wand}; exhale acc(x.f) }}");
        assert_eq!(first_failure(&valid, "m"), None, "{wand}");
        let wrong = format!(
            "{f}method m(x: Ref) requires acc(x.f) {{ package {wand}; exhale acc(x.f); assert false }}"
        );
        assert_eq!(
            first_failure(&wrong, "m"),
            Some((Check::Assert, 2)),
            "{wand}"
        );
    }
}

#[test]
fn a_package_no_left_hand_side_fits_with_checks_its_right_hand_side_on_viper_s_footprint() {
    let f = "field f: Int\n";
    // The footprint Viper takes holds none of x.f: the left-hand side's x.f is any value.
    let wrong = format!(
        "{f}method m(x: Ref) requires acc(x.f) {{ x.f := 0; package acc(x.f, 1/2) --* (acc(x.f, 1/2) && x.f == 0) }}"
    );
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Package, 2)));
    let valid = format!(
        "{f}method m(x: Ref) requires acc(x.f) {{ x.f := 0; package acc(x.f, 1/2) --* acc(x.f, 1/2) }}"
    );
    assert_eq!(first_failure(&valid, "m"), None);
    let pure = format!(
        "{f}method m(x: Ref) requires acc(x.f, 1/2) && x.f == 1 {{ package (acc(x.f, 1/2) && x.f == 0) --* false }}"
    );
    assert_eq!(first_failure(&pure, "m"), Some((Check::Package, 2)));
}

#[test]
fn quasihavoc_of_a_wand_makes_its_footprint_s_values_any() {
    let f = "field f: Int\n";
    let run = |havoc: &str| {
        format!(
            "{f}method m(x: Ref) requires acc(x.f) && x.f == 3 {{\n  package true --* acc(x.f)\n  {havoc}\n  apply true --* acc(x.f)\n  assert x.f == 3\n}}"
        )
    };
    assert_eq!(first_failure(&run(""), "m"), None);
    assert_eq!(
        first_failure(&run("quasihavoc true --* acc(x.f)"), "m"),
        Some((Check::Assert, 6))
    );
    assert_eq!(
        first_failure(
            &run("quasihavocall z: Ref :: z == x ==> true --* acc(z.f)"),
            "m"
        ),
        Some((Check::Assert, 6))
    );
    // Of other objects' wands only: x's keeps its values.
    assert_eq!(
        first_failure(
            &run("quasihavocall z: Ref :: z != x ==> true --* acc(z.f)"),
            "m"
        ),
        None
    );
}

#[test]
fn a_package_with_quantified_permissions_takes_viper_s_footprint() {
    let qp = "field f: Int\nmethod m(xs: Set[Ref], y: Ref, z: Ref)\n  \
              requires (forall x: Ref :: x in xs ==> acc(x.f)) && acc(y.f) && !(y in xs) && z in xs\n{\n  ";
    // `B` from the state: y.f goes into the footprint, whether or not a left-hand side fits.
    let valid = format!("{qp}package (forall x: Ref :: x in xs ==> acc(x.f)) --* acc(y.f)\n  assert perm(y.f) == none\n}}");
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong = format!("{qp}package (forall x: Ref :: x in xs ==> acc(x.f)) --* acc(y.f)\n  assert perm(y.f) == write\n}}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 6)));
    // `B` from the left-hand side: the state keeps z.f.
    let valid = format!("{qp}package (forall x: Ref :: x in xs ==> acc(x.f)) --* acc(z.f)\n  assert perm(z.f) == write\n}}");
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong = format!(
        "{qp}package (forall x: Ref :: x in xs ==> acc(x.f)) --* acc(z.f)\n  assert false\n}}"
    );
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 6)));
    // A quantified `B` the left-hand side gives whole: nothing is taken, z.f is still written.
    let same = "package (forall x: Ref :: x in xs ==> acc(x.f)) --* (forall x: Ref :: x in xs ==> acc(x.f))";
    let valid = format!("{qp}{same}\n  z.f := 1\n  assert z.f == 1\n}}");
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong = format!("{qp}{same}\n  z.f := 1\n  assert z.f == 2\n}}");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 7)));
}

#[test]
fn past_a_package_viper_chooses_the_footprint_of_the_state_is_a_lower_bound() {
    let run = |tail: &str| {
        format!(
            "field f: Int\nfield g: Int\nfield h: Int\nmethod m(x: Ref, y: Ref, z: Ref, w: Ref)\n  \
             requires acc(x.f) && acc(y.g) && acc(z.g) && acc(w.h) && w.h == 1 && y != z\n{{\n  \
             package (acc(x.f) && x.f > 0) --* (x.f > 0 ? acc(y.g) : acc(z.g))\n  {tail}\n}}"
        )
    };
    // The run gave up every g: what it still holds, it holds with the real values.
    assert_eq!(
        first_failure(&run("assert w.h == 2"), "m"),
        Some((Check::Assert, 8))
    );
    assert_eq!(
        first_failure(&run("assert false"), "m"),
        Some((Check::Assert, 8))
    );
    // z.g is still held really: its missing permission is no real failure.
    assert_eq!(
        first_failure(&run("assert acc(z.g)\n  assert w.h == 1"), "m"),
        None
    );
    // Inhaling z.g again is infeasible really: what follows is never a real failure.
    assert_eq!(
        first_failure(&run("inhale acc(z.g)\n  assert false"), "m"),
        None
    );
}

#[test]
fn a_script_no_left_hand_side_fits_with_runs_in_the_left_hand_side_moving_in_what_it_lacks() {
    // The left-hand side's x.f has a value of its own: the assertion in the script fails.
    let own_values = "field f: Int\n\
        method m(x: Ref) requires acc(x.f)\n\
        { x.f := 0\n  package acc(x.f) --* true {\n    assert acc(x.f) && x.f == 0\n  }\n}";
    assert_eq!(first_failure(own_values, "m"), Some((Check::Assert, 5)));
    // P(x) is folded from the left-hand side's half, Q(x) from half moved in from the
    // state: the footprint is that half, the other half is still held.
    let folds = "field f: Int\npredicate P(x: Ref) { acc(x.f, 1/2) }\npredicate Q(x: Ref) { acc(x.f, 1/2) }\n\
        method m(x: Ref) requires acc(x.f)\n\
        { package acc(x.f, 1/2) --* P(x) && Q(x) {\n    fold P(x)\n    fold Q(x)\n  }\n  TAIL\n}";
    let valid = folds.replace("TAIL", "assert perm(x.f) == 1/2");
    assert_eq!(first_failure(&valid, "m"), None);
    let wrong = folds.replace("TAIL", "exhale acc(x.f, 1/2)\n  assert false");
    assert_eq!(first_failure(&wrong, "m"), Some((Check::Assert, 10)));
    let too_much = folds.replace("TAIL", "exhale acc(x.f, 1/2)\n  exhale acc(x.f, 1/2)");
    assert_eq!(first_failure(&too_much, "m"), Some((Check::Exhale, 10)));
}

#[test]
fn a_script_reading_permission_amounts_reads_the_package_s_own_state() {
    // Viper's package state holds the left-hand side and what was moved in so far: not
    // the half of x.a the method holds.
    let src = |check: &str| {
        format!(
            "field a: Int\nfield b: Int\nmethod m(x: Ref) requires acc(x.a, 1/2)\n{{\n  \
             package acc(x.b, 1/2) --* true {{\n    {check}\n  }}\n  assert acc(x.a, 1/2)\n}}"
        )
    };
    assert_eq!(
        first_failure(&src("assert perm(x.a) == perm(x.b)"), "m"),
        Some((Check::Assert, 6))
    );
    assert_eq!(
        first_failure(&src("assert perm(x.a) == none && perm(x.b) == 1/2"), "m"),
        None
    );
    // What a step moved in is held from then on.
    let moved = "field a: Int\nmethod m(x: Ref) requires acc(x.a)\n{\n  \
        package true --* acc(x.a, 1/2) {\n    assert acc(x.a, 1/2)\n    assert perm(x.a) == 1/2\n  }\n  \
        assert perm(x.a) == 1/2\n}";
    assert_eq!(first_failure(moved, "m"), None);
}

#[test]
fn an_applied_wand_with_a_proof_script_gives_what_its_package_run_again_gives() {
    let run = |tail: &str| {
        format!(
            "field f: Int\nfield h: Int\npredicate P(x: Ref) {{ acc(x.f) }}\n\
             method m(x: Ref, w: Ref) requires acc(x.f) && acc(w.h) && w.h == 1\n{{\n  \
             package true --* acc(P(x)) {{ fold acc(P(x)) }}\n  apply true --* acc(P(x))\n  {tail}\n}}"
        )
    };
    assert_eq!(
        first_failure(&run("assert w.h == 2"), "m"),
        Some((Check::Assert, 8))
    );
    assert_eq!(
        first_failure(&run("unfold acc(P(x))\n  assert x.f == old(x.f)"), "m"),
        None
    );
    assert_eq!(first_failure(&run("assert acc(P(x))"), "m"), None);
    assert_eq!(
        first_failure(&run("unfold acc(P(x))\n  assert x.f == old(x.f) + 1"), "m"),
        Some((Check::Assert, 9))
    );
    // The script runs on the left-hand side the apply gives up: its values are the apply's.
    let lhs_values = |check: &str| {
        format!(
            "field f: Int\npredicate P(x: Ref) {{ acc(x.f) }}\n\
             method m(x: Ref) requires acc(x.f)\n{{\n  \
             package acc(x.f) --* acc(P(x)) {{ fold acc(P(x)) }}\n  x.f := 7\n  \
             apply acc(x.f) --* acc(P(x))\n  unfold acc(P(x))\n  {check}\n}}"
        )
    };
    assert_eq!(first_failure(&lhs_values("assert x.f == 7"), "m"), None);
    assert_eq!(
        first_failure(&lhs_values("assert x.f == 8"), "m"),
        Some((Check::Assert, 9))
    );
    // Wands given back by a wand (currying) keep what their own packages give.
    let curried = |check: &str| {
        format!(
            "field f: Int\nmethod m(x: Ref, y: Ref) requires acc(x.f) && acc(y.f)\n{{\n  \
             x.f := 3\n  \
             package acc(x.f) --* (acc(y.f) --* acc(x.f) && acc(y.f)) {{\n    \
             package acc(y.f) --* acc(x.f) && acc(y.f)\n  }}\n  \
             apply acc(x.f) --* (acc(y.f) --* acc(x.f) && acc(y.f))\n  \
             apply acc(y.f) --* acc(x.f) && acc(y.f)\n  {check}\n}}"
        )
    };
    assert_eq!(first_failure(&curried("assert x.f == 3"), "m"), None);
    assert_eq!(
        first_failure(&curried("assert x.f == 4"), "m"),
        Some((Check::Assert, 10))
    );
}

#[test]
fn old_lhs_reads_the_wand_s_left_hand_side_state() {
    let run = |check: &str| {
        format!(
            "field f: Int\nmethod m(x: Ref) requires acc(x.f) {{\n  x.f := 3\n  \
             package acc(x.f) --* acc(x.f) && x.f == old[lhs](x.f)\n  \
             apply acc(x.f) --* acc(x.f) && x.f == old[lhs](x.f)\n  {check}\n}}"
        )
    };
    assert_eq!(first_failure(&run("assert x.f == 3"), "m"), None);
    assert_eq!(
        first_failure(&run("assert x.f == 0"), "m"),
        Some((Check::Assert, 6))
    );
}
