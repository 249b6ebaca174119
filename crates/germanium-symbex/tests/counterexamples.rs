//! `--counterexample`: the values shown for a failed check are forced by the program, and
//! turning counterexamples on changes no result.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use germanium_driver::{run_file, FileReport, Mode, Options};
use germanium_syntax::Counterexample;

fn run(path: &Path, counterexamples: bool) -> FileReport {
    let mut options = Options::new(Mode::Verify);
    options.counterexamples = counterexamples;
    run_file(path, &options)
}

/// The counterexample of the one error `src` gives.
fn only_counterexample(name: &str, src: &str) -> Counterexample {
    let path = std::env::temp_dir().join(format!("germanium-ce-{}-{name}.vpr", std::process::id()));
    std::fs::write(&path, src).unwrap();
    let report = run(&path, true);
    std::fs::remove_file(&path).ok();
    assert_eq!(report.diagnostics.len(), 1, "{:?}", report.diagnostics);
    let d = &report.diagnostics[0];
    *d.counterexample
        .clone()
        .unwrap_or_else(|| panic!("no counterexample: {d:?}"))
}

fn variable<'c>(c: &'c Counterexample, name: &str) -> &'c str {
    c.variables
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name} in {c:?}"))
}

#[test]
fn a_forced_integer_is_shown() {
    let c = only_counterexample(
        "int",
        "method m(x: Int)\n  requires 5 < x && x < 7\n{\n  assert x != 6\n}\n",
    );
    assert_eq!(variable(&c, "x"), "6");
}

#[test]
fn booleans_and_permissions_are_shown_as_viper_writes_them() {
    let c = only_counterexample(
        "bool-perm",
        "method m(b: Bool, p: Perm)\n  requires b && p == 3/4\n{\n  assert !b\n}\n",
    );
    assert_eq!(variable(&c, "b"), "true");
    assert_eq!(variable(&c, "p"), "3/4");
}

#[test]
fn aliases_share_one_object_name_and_fields_show() {
    let src = "field f: Int\nfield next: Ref\n\
        method m(a: Ref, b: Ref, c: Ref)\n  requires acc(a.f) && acc(b.next) && c == a\n{\n  \
        a.f := 3\n  b.next := a\n  assert b.next.f == 4\n}\n";
    let c = only_counterexample("alias", src);
    let a = variable(&c, "a").to_string();
    assert_eq!(variable(&c, "c"), a);
    assert!(
        c.heap.contains(&(a.clone(), "f".into(), "3".into())),
        "{c:?}"
    );
    let b = variable(&c, "b").to_string();
    assert!(c.heap.contains(&(b, "next".into(), a)), "{c:?}");
}

#[test]
fn null_is_named_null() {
    let c = only_counterexample(
        "null",
        "method m(x: Ref)\n  requires x == null\n{\n  assert x != null\n}\n",
    );
    assert_eq!(variable(&c, "x"), "null");
}

#[test]
fn the_heap_before_a_postcondition_is_consumed_is_shown() {
    let src = "field f: Int\nmethod m(a: Ref)\n  requires acc(a.f) && a.f == 1\n  \
        ensures acc(a.f) && a.f > old(a.f)\n{\n  a.f := a.f - 1\n}\n";
    let c = only_counterexample("post", src);
    let a = variable(&c, "a").to_string();
    assert!(c.heap.contains(&(a, "f".into(), "0".into())), "{c:?}");
}

#[test]
fn counterexamples_change_no_result() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "vpr"))
        .collect();
    files.sort();
    for path in files {
        let ids = |r: &FileReport| -> BTreeSet<(u32, String)> {
            r.diagnostics
                .iter()
                .map(|d| (r.sources.start(d.span).line, d.id.clone()))
                .collect()
        };
        let off = run(&path, false);
        let on = run(&path, true);
        assert_eq!(ids(&off), ids(&on), "{}", path.display());
        assert_eq!(off.result, on.result, "{}", path.display());
    }
}

#[test]
fn sequences_show_their_elements() {
    let src = "method m(s: Seq[Int], t: Seq[Ref], x: Ref)\n  \
        requires |s| == 2 && s[0] == 4 && s[1] == 5 && t == Seq(x, x) && x != null\n{\n  \
        assert s[0] == 5\n}\n";
    let c = only_counterexample("seq", src);
    assert_eq!(variable(&c, "s"), "Seq(4, 5)");
    let x = variable(&c, "x").to_string();
    assert_eq!(variable(&c, "t"), format!("Seq({x}, {x})"));
}

#[test]
fn old_values_are_shown_where_the_check_reads_them() {
    let src = "field f: Int\nmethod m(a: Ref)\n  requires acc(a.f) && a.f == 1\n  \
        ensures acc(a.f) && a.f > old(a.f)\n{\n  a.f := a.f - 1\n}\n";
    let c = only_counterexample("old", src);
    let a = variable(&c, "a").to_string();
    assert!(
        c.old_heap.contains(&(a.clone(), "f".into(), "1".into())),
        "{c:?}"
    );
    assert!(c.heap.contains(&(a, "f".into(), "0".into())), "{c:?}");
}

#[test]
fn sets_show_their_members() {
    let c = only_counterexample(
        "set",
        "method m(s: Set[Int])\n  requires |s| == 2 && 5 in s && 7 in s\n{\n  assert 6 in s\n}\n",
    );
    assert_eq!(variable(&c, "s"), "Set(5, 7)");
    let c = only_counterexample(
        "empty-set",
        "method m(s: Set[Int])\n  requires |s| == 0\n{\n  assert 6 in s\n}\n",
    );
    assert_eq!(variable(&c, "s"), "Set()");
}

#[test]
fn maps_show_their_keys_and_values() {
    let c = only_counterexample(
        "map",
        "method m(mp: Map[Int, Int])\n  requires |mp| == 1 && 3 in domain(mp) && mp[3] == 9\n\
         {\n  assert mp[3] == 8\n}\n",
    );
    assert_eq!(variable(&c, "mp"), "Map(3 := 9)");
}

#[test]
fn adt_and_domain_values_are_written_as_viper_writes_them() {
    let src = "adt List { Nil() Cons(head: Int, tail: List) }\n\
        domain Color { unique function red(): Color  unique function green(): Color }\n\
        method m(l: List, c: Color)\n  requires l == Cons(4, Nil()) && c == green()\n\
        {\n  assert c == red() || l.head > 4\n}\n";
    let c = only_counterexample("adt", src);
    assert_eq!(variable(&c, "l"), "Cons(4, Nil())");
    assert_eq!(variable(&c, "c"), "green");
}

#[test]
fn predicate_instances_held_are_shown_with_their_arguments() {
    let src = "field f: Int\npredicate P(x: Ref, n: Int) { acc(x.f) }\n\
        method m(a: Ref)\n  requires P(a, 3) && acc(a.f, 1/2)\n  requires a.f == 2\n\
        {\n  assert a.f == 3\n}\n";
    let c = only_counterexample("predicate", src);
    let a = variable(&c, "a").to_string();
    assert_eq!(
        c.predicates,
        [(
            "P".to_string(),
            vec![a.clone(), "3".to_string()],
            "1".to_string()
        )]
    );
    assert!(c.heap.contains(&(a, "f".into(), "2".into())), "{c:?}");
}

#[test]
fn labelled_old_values_are_shown_where_the_check_reads_them() {
    let src = "field f: Int\n\
        method m(a: Ref)\n  requires acc(a.f) && a.f == 1\n\
        {\n  a.f := 2\n  label l\n  a.f := 3\n  assert old[l](a.f) == 1\n}\n";
    let c = only_counterexample("label", src);
    let a = variable(&c, "a").to_string();
    assert!(
        c.heap.contains(&(a.clone(), "f".into(), "3".into())),
        "{c:?}"
    );
    assert!(
        c.labelled_heap
            .contains(&("l".into(), a.clone(), "f".into(), "2".into())),
        "{c:?}"
    );
    assert!(c.old_heap.is_empty(), "{c:?}");
}

#[test]
fn function_applications_the_check_uses_are_shown() {
    let src = "field f: Int\nfunction get(x: Ref): Int\n  requires acc(x.f)\n{ x.f }\n\
        method m(a: Ref)\n  requires acc(a.f) && a.f == 4\n{\n  assert get(a) > 4\n}\n";
    let c = only_counterexample("function", src);
    let a = variable(&c, "a").to_string();
    assert_eq!(c.functions, [("get".to_string(), vec![a], "4".to_string())]);
}
