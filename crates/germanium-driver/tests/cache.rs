//! The per-member result cache end to end: hits, positions after edits, and invalidation by
//! each kind of dependency, with results always those of a run without the cache.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use germanium_driver::{run_file, CacheSettings, MemberEvent, MemberEvents, Mode, Options};

struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new() -> Scratch {
        Scratch(tempfile::tempdir().unwrap())
    }

    fn program(&self, text: &str) -> PathBuf {
        let path = self.0.path().join("p.vpr");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn settings(&self) -> CacheSettings {
        CacheSettings {
            path: self.0.path().join("cache").join("results.redb"),
            salt: "test".into(),
        }
    }
}

/// Errors as (line, id), and which members were verified rather than taken from the cache.
fn run(path: &Path, cache: Option<CacheSettings>) -> (Vec<(u32, String)>, Vec<String>) {
    let mut options = Options::new(Mode::Verify);
    options.cache = cache;
    let (report, verified) = run_with(path, options);
    let errors = report
        .diagnostics
        .iter()
        .map(|d| (report.sources.start(d.span).line, d.id.clone()))
        .collect();
    (errors, verified)
}

/// The report, and which members were verified rather than taken from the cache (sorted).
fn run_with(path: &Path, mut options: Options) -> (germanium_driver::FileReport, Vec<String>) {
    let verified = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&verified);
    options.events = Some(MemberEvents(Arc::new(move |e| {
        if let MemberEvent::Finished {
            member,
            source: germanium_driver::ResultSource::Local,
            ..
        } = e
        {
            seen.lock().unwrap().push(member);
        }
    })));
    let report = run_file(path, &options);
    let mut verified = verified.lock().unwrap().clone();
    verified.sort();
    (report, verified)
}

const PROGRAM: &str = "field f: Int
function inc(n: Int): Int
  ensures result > n
{ n + 1 }
method a(x: Ref)
  requires acc(x.f)
{
  x.f := inc(x.f)
  assert x.f == 3
}
method b(n: Int)
{
  assert inc(n) > n
}
";

#[test]
fn a_second_run_takes_every_result_from_the_cache_and_says_the_same() {
    let s = Scratch::new();
    let path = s.program(PROGRAM);
    let plain = run(&path, None);
    assert_eq!(plain.0, [(9, "assert.failed:assertion.false".to_string())]);
    let first = run(&path, Some(s.settings()));
    assert_eq!(first.0, plain.0);
    assert_eq!(first.1, ["a", "b", "inc"]);
    let second = run(&path, Some(s.settings()));
    assert_eq!(second.0, plain.0);
    assert!(second.1.is_empty(), "verified again: {:?}", second.1);
}

#[test]
fn editing_one_method_body_verifies_that_method_only_and_moves_the_others_errors() {
    let s = Scratch::new();
    let path = s.program(PROGRAM);
    run(&path, Some(s.settings()));
    // Two more lines in `a`'s body: `a` is verified again, `b` and `inc` are not, and `a`'s
    // error moves down with it.
    let edited = PROGRAM.replace("  x.f := inc(x.f)\n", "  x.f := inc(x.f)\n  x.f := x.f\n\n");
    let path = s.program(&edited);
    let (errors, verified) = run(&path, Some(s.settings()));
    assert_eq!(verified, ["a"]);
    assert_eq!(errors, run(&path, None).0);
    assert_eq!(errors, [(11, "assert.failed:assertion.false".to_string())]);
    // Now `b` moves: its stored (empty) result is placed where it is.
    let (errors, verified) = run(&path, Some(s.settings()));
    assert!(verified.is_empty());
    assert_eq!(errors, [(11, "assert.failed:assertion.false".to_string())]);
}

#[test]
fn a_function_that_stops_verifying_is_seen_by_every_member() {
    let s = Scratch::new();
    let path = s.program(PROGRAM);
    run(&path, Some(s.settings()));
    // `inc`'s body no longer proves its postcondition: every member is verified again, and
    // the results are those of a run without the cache (`inc` fails).
    let broken = PROGRAM.replace("{ n + 1 }", "{ n }");
    let path = s.program(&broken);
    let (errors, verified) = run(&path, Some(s.settings()));
    assert_eq!(verified, ["a", "b", "inc"]);
    assert_eq!(errors, run(&path, None).0);
    assert!(errors
        .iter()
        .any(|(_, id)| id == "postcondition.violated:assertion.false"));
    // Editing `b` alone later: `inc`'s stored failure is used as a fresh run would use it.
    let path = s.program(&broken.replace("assert inc(n) > n", "assert inc(n) > n  "));
    let (errors, verified) = run(&path, Some(s.settings()));
    assert_eq!(verified, ["b"]);
    assert_eq!(errors, run(&path, None).0);
}

/// Verifies `base` (without errors) into a fresh cache, then `base` with `from` replaced by
/// `to`: checks that exactly the members `again` are verified again and that the errors
/// are those of a run without the cache; returns them.
fn edited_once(base: &str, from: &str, to: &str, again: &[&str]) -> Vec<(u32, String)> {
    let s = Scratch::new();
    let path = s.program(base);
    assert_eq!(run(&path, Some(s.settings())).0, []);
    let path = s.program(&base.replace(from, to));
    let (errors, verified) = run(&path, Some(s.settings()));
    assert_eq!(verified, again, "{to}");
    assert_eq!(errors, run(&path, None).0, "{to}");
    errors
}

#[test]
fn predicates_axioms_and_field_types_are_dependencies_of_those_that_use_them() {
    let base = "field f: Int
field h: Seq[Int]
domain D { function c(): Int  axiom { c() == 1 } }
predicate P(x: Ref) { acc(x.f) && x.f > 0 }
method m(x: Ref)
  requires P(x)
{
  unfold P(x)
  assert x.f > 0 && c() == 1
}
method n(x: Ref)
  requires acc(x.h)
{
  assert |x.h| >= 0
}
";
    // (edit, members verified again): a predicate's users, everything for an axiom (axioms
    // hold in every member), a field's users, nobody for a new field.
    for (from, to, again) in [
        ("x.f > 0 }", "x.f > -1 }", &["P", "m"][..]),
        ("axiom { c() == 1 }", "axiom { c() == 2 }", &["P", "m", "n"]),
        ("field h: Seq[Int]", "field h: Set[Int]", &["n"]),
        ("field f: Int", "field f: Int\nfield g: Int", &[]),
    ] {
        edited_once(base, from, to, again);
    }
}

/// A method's contract is a dependency of its callers, not its body; a function's body is
/// one of the members that apply it only, unless whether it verifies changes.
#[test]
fn callers_see_contracts_and_users_see_function_bodies() {
    let base = "field f: Int
function twice(n: Int): Int
  requires n >= 0
  ensures result >= n
{ n + n }
function other(n: Int): Int { n }
method callee(x: Ref)
  requires acc(x.f)
  ensures acc(x.f) && x.f > 0
{
  x.f := 1
}
method caller(x: Ref)
  requires acc(x.f)
{
  callee(x)
  assert x.f > 0
}
method user(n: Int)
  requires n >= 0
{
  assert twice(n) >= n
}
";
    for (from, to, again) in [
        ("  x.f := 1\n", "  x.f := 2\n", &["callee"][..]),
        (
            "ensures acc(x.f) && x.f > 0",
            "ensures acc(x.f) && x.f > -1",
            &["callee", "caller"],
        ),
        ("{ n + n }", "{ n + n + 0 }", &["twice", "user"]),
        ("{ n }", "{ n + 0 }", &["other"]),
        // `twice` no longer verifies: its postcondition is no axiom in any member now.
        (
            "{ n + n }",
            "{ n - 1 }",
            &["callee", "caller", "twice", "user"],
        ),
    ] {
        edited_once(base, from, to, again);
    }
}

/// A function no member applies still counts where its postcondition is an axiom: one that
/// says `false` (a function that never terminates proves it) makes every member verify, so
/// its contract, and whether it verifies, are part of every key.
#[test]
fn a_function_whose_postcondition_is_false_is_a_dependency_of_every_member() {
    let base = "function bad(n: Int): Int
  ensures result + 1 == result
{ bad(n) }
method m()
{
  assert false
}
";
    for (from, to) in [
        ("result + 1 == result", "result + 1 > result"),
        ("{ bad(n) }", "{ 0 }"),
    ] {
        let errors = edited_once(base, from, to, &["bad", "m"]);
        assert!(errors.contains(&(6, "assert.failed:assertion.false".to_string())));
    }
}

#[test]
fn a_cache_that_cannot_be_opened_is_no_cache() {
    let s = Scratch::new();
    let path = s.program(PROGRAM);
    let settings = CacheSettings {
        path: PathBuf::from("/proc/no-such-dir/results.redb"),
        salt: "test".into(),
    };
    let (errors, verified) = run(&path, Some(settings));
    assert_eq!(errors, run(&path, None).0);
    assert_eq!(verified, ["a", "b", "inc"]);
}

/// Stored errors have no counterexamples: asked for, a member stored with errors is verified
/// again (and gets its counterexample), while one stored without errors is not.
#[test]
fn with_counterexamples_only_members_stored_without_errors_come_from_the_cache() {
    let s = Scratch::new();
    let path = s.program(PROGRAM);
    run(&path, Some(s.settings()));
    let mut options = Options::new(Mode::Verify);
    options.cache = Some(s.settings());
    options.counterexamples = true;
    let (report, verified) = run_with(&path, options);
    assert_eq!(verified, ["a"]);
    assert_eq!(report.diagnostics.len(), 1);
    assert!(report.diagnostics[0].counterexample.is_some());
}

/// Functions are verified first through the cache, yet errors come in the program's order,
/// as without it.
#[test]
fn errors_come_in_the_programs_order() {
    let s = Scratch::new();
    let path = s.program(
        "method m()
{
  assert false
}
function f(n: Int): Int
  ensures result > n
{ n }
",
    );
    let expected = run(&path, None).0;
    assert_eq!(expected.len(), 2);
    assert_eq!(expected[0].0, 3);
    assert_eq!(run(&path, Some(s.settings())).0, expected);
    assert_eq!(run(&path, Some(s.settings())).0, expected);
}

#[test]
fn a_member_run_keeps_the_solvers_answers_but_no_member_results() {
    let scratch = Scratch::new();
    let path = scratch.program(PROGRAM);
    let mut options = Options::new(Mode::Verify);
    options.cache = Some(scratch.settings());
    options.members = Some(germanium_driver::MemberFilter(Arc::new(|name: &str| {
        name == "a"
    })));
    let (_, verified) = run_with(&path, options);
    assert_eq!(verified, vec!["a".to_string()]);
    let stored = {
        let cache = germanium_cache::ResultCache::open(&scratch.settings().path).unwrap();
        cache.answers("test").len()
    };
    assert!(stored > 0, "no answers kept");
    // No member result was stored: a full run verifies every member.
    let (errors, verified) = run(&path, Some(scratch.settings()));
    assert_eq!(verified, vec!["a", "b", "inc"]);
    assert_eq!(errors, run(&path, None).0);
}

#[test]
fn editing_a_macro_verifies_the_members_that_use_it_again() {
    // Macros are gone from the program once expanded; their text is still a dependency.
    let s = Scratch::new();
    let base = "define BIG(x) x > 10\n\
        method m(x: Int)\n  requires x > 20\n{\n  assert BIG(x)\n}\n\
        method n(x: Int)\n{\n  assert x == x\n}\n";
    let path = s.program(base);
    let (errors, verified) = run(&path, Some(s.settings()));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(verified, ["m", "n"]);
    let path = s.program(&base.replace("x > 10", "x > 30"));
    let (errors, verified) = run(&path, Some(s.settings()));
    assert_eq!(verified, ["m"]);
    assert_eq!(errors, [(5, "assert.failed:assertion.false".to_string())]);
    assert_eq!(errors, run(&path, None).0);
}
