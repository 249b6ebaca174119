use germanium_syntax::ast::NodeIdGen;
use germanium_syntax::SourceMap;

use crate::keys::tests::plan_and_sources;
use crate::Slice;

const PROGRAM: &str = "field f: Int\n\
    field g: Bool\n\
    function get(x: Ref): Int\n  requires acc(x.f)\n{ x.f }\n\
    function flag(x: Ref): Bool\n  requires acc(x.g)\n  ensures result == !!result\n{ x.g }\n\
    function free(): Int\n  ensures result > 0\n\
    predicate P(x: Ref) { acc(x.f) }\n\
    domain D { axiom { true } }\n\
    method a(x: Ref)\n  requires acc(x.f)\n{\n  x.f := 1\n}\n\
    method b(x: Ref)\n  requires acc(x.f)\n  ensures acc(x.f)\n{\n  assert get(x) == x.f\n  a(x)\n}\n\
    method c(x: Ref)\n  requires P(x)\n{\n  unfold P(x)\n}\n";

fn slice_of(text: &str, member: &str) -> (Slice, SourceMap) {
    let (plan, sources) = plan_and_sources(text, "salt");
    let order = plan
        .members
        .iter()
        .position(|m| m.name == member)
        .expect("a member");
    let slice = plan.slice(order, &sources).expect("a slice");
    (slice, sources)
}

/// The slice parses as a program of its own.
fn parses(slice: &Slice) {
    let mut sources = SourceMap::new();
    let file = sources.add("slice.vpr".into(), slice.text.clone());
    let mut ids = NodeIdGen::default();
    let (_, diagnostics) = germanium_syntax::parse_file(file, &slice.text, &mut ids);
    assert!(diagnostics.is_empty(), "{diagnostics:?}\n{}", slice.text);
}

#[test]
fn a_slice_holds_what_the_member_names_and_every_contract() {
    let (slice, _) = slice_of(PROGRAM, "b");
    parses(&slice);
    let t = &slice.text;
    // Named: the field, `get` whole, `a`'s contract without its body.
    assert!(t.contains("field f: Int"), "{t}");
    assert!(t.contains("{ x.f }"), "{t}");
    assert!(t.contains("method a(x: Ref)\n  requires acc(x.f)\n"), "{t}");
    assert!(!t.contains("x.f := 1"), "{t}");
    // Everywhere: the domain, every function's contract; `flag`'s body is not named.
    assert!(t.contains("domain D"), "{t}");
    assert!(t.contains("ensures result == !!result"), "{t}");
    assert!(!t.contains("{ x.g }"), "{t}");
    assert!(
        t.contains("function free(): Int\n  ensures result > 0"),
        "{t}"
    );
    // Named by a contract (`flag`'s), so assumed everywhere: the other field.
    assert!(t.contains("field g: Bool"), "{t}");
    // Not named: the other methods, the predicate.
    assert!(!t.contains("method c"), "{t}");
    assert!(!t.contains("predicate P"), "{t}");
    // `flag` has a body in the program and none here; `free` has none anywhere.
    assert_eq!(
        slice.bodiless_functions.iter().collect::<Vec<_>>(),
        ["flag"]
    );
}

#[test]
fn an_edit_elsewhere_leaves_a_slice_as_it_is() {
    let (before, _) = slice_of(PROGRAM, "b");
    // Another method's body, a function's body that `b` does not name.
    for (from, to) in [("x.f := 1", "x.f := 2"), ("{ x.g }", "{ !x.g }")] {
        let (after, _) = slice_of(&PROGRAM.replacen(from, to, 1), "b");
        assert_eq!(before.text, after.text, "{from}");
    }
    // What it names does change it.
    for (from, to) in [
        ("{ x.f }", "{ x.f + 0 }"),
        ("ensures result > 0", "ensures result > 1"),
    ] {
        let (after, _) = slice_of(&PROGRAM.replacen(from, to, 1), "b");
        assert_ne!(before.text, after.text, "{from}");
    }
}

#[test]
fn places_in_the_slice_map_back_to_the_program() {
    let (slice, sources) = slice_of(PROGRAM, "b");
    let needle = "assert get(x) == x.f";
    let at = slice.text.find(needle).unwrap() as u32;
    let span = slice
        .original(at, at + needle.len() as u32)
        .expect("inside the member");
    let program = &sources.get(span.file).text;
    assert_eq!(&program[span.start as usize..span.end as usize], needle);
    // Inside a declaration printed without its body: no place.
    let contract = slice.text.find("method a(").unwrap() as u32;
    assert_eq!(slice.original(contract, contract + 6), None);
}

#[test]
fn a_function_member_is_whole_and_others_lose_their_bodies() {
    let (slice, _) = slice_of(PROGRAM, "get");
    parses(&slice);
    assert!(slice.text.contains("{ x.f }"));
    assert!(!slice.text.contains("{ x.g }"));
    assert!(!slice.text.contains("method"), "{}", slice.text);
    assert_eq!(slice.kind, "function");
    assert!(slice.bodiless_functions.contains("flag"));
}

#[test]
fn the_whole_program_holds_every_declaration_and_places_map_both_ways() {
    let (plan, sources) = plan_and_sources(PROGRAM, "salt");
    let whole = plan.whole_program(&sources);
    parses(&whole);
    for needle in [
        "x.f := 1",
        "{ x.g }",
        "unfold P(x)",
        "domain D",
        "field g: Bool",
    ] {
        assert!(whole.text.contains(needle), "{needle}");
    }
    // `unfold P(x)` in the program, in the whole text, and back.
    let at = PROGRAM.find("unfold P(x)").unwrap() as u32;
    let file = germanium_syntax::FileId(0);
    let span = germanium_syntax::Span::new(file, at, at + 11);
    let (start, end) = whole.offsets_of(span).expect("inside a declaration");
    assert_eq!(&whole.text[start as usize..end as usize], "unfold P(x)");
    assert_eq!(whole.original(start, end), Some(span));
    // And into a member's slice: `b`'s slice holds `get` whole, not `c`.
    let (b, _) = slice_of(PROGRAM, "b");
    let get = PROGRAM.find("{ x.f }").unwrap() as u32;
    let in_b = b
        .offsets_of(germanium_syntax::Span::new(file, get, get + 7))
        .unwrap();
    assert_eq!(&b.text[in_b.0 as usize..in_b.1 as usize], "{ x.f }");
    assert_eq!(b.offsets_of(span), None);
}
