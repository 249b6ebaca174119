use germanium_syntax::ast::{ItemKind, NodeIdGen};
use germanium_syntax::FileId;

use crate::{BodyCfg, Problem, Shape};

/// The graph of the body of the only method in `text`.
fn cfg_of(text: &str) -> BodyCfg {
    let mut ids = NodeIdGen::default();
    let (items, diagnostics) = germanium_syntax::parse_file(FileId(0), text, &mut ids);
    assert!(diagnostics.iter().all(|d| !d.is_error()), "{diagnostics:?}");
    let body = items
        .iter()
        .find_map(|i| match &i.kind {
            ItemKind::Method(m) => m.body.clone(),
            _ => None,
        })
        .expect("a method with a body");
    BodyCfg::of(&body)
}

/// The labels (and `while` loops, as "while") heading loops, with the labels inside each.
fn loops(cfg: &BodyCfg) -> Vec<(String, Vec<String>)> {
    let name = |n: usize| match &cfg.nodes()[n].shape {
        Shape::Label(l) => Some(l.clone()),
        Shape::While => Some("while".into()),
        _ => None,
    };
    cfg.loops()
        .iter()
        .map(|l| {
            let inside = l
                .members
                .iter()
                .filter(|&&m| m != l.head)
                .filter_map(|&m| match &cfg.nodes()[m].shape {
                    Shape::Label(x) => Some(x.clone()),
                    _ => None,
                })
                .collect();
            (name(l.head).unwrap_or_default(), inside)
        })
        .collect()
}

#[test]
fn a_backward_jump_forming_no_cycle_makes_no_loop() {
    let cfg = cfg_of(
        "method m() {\n goto a\n label b\n assert true\n goto c\n label a\n goto b\n label c\n}",
    );
    assert!(cfg.loops().is_empty());
    assert!(cfg.problems().is_empty());
}

#[test]
fn a_cycle_through_labels_is_headed_by_the_label_entered_first() {
    // Entered at `t0`; `h` and `t` come before it in the text but only after it in time.
    let cfg = cfg_of(
        "method m(b: Bool) {\n goto t0\n label h\n goto t\n label t\n if (b) { goto e }\n label t0\n goto h\n label e\n}",
    );
    assert_eq!(
        loops(&cfg),
        [("t0".to_string(), vec!["h".into(), "t".into()])]
    );
    assert!(cfg.problems().is_empty());
}

#[test]
fn statements_leaving_a_loop_are_not_in_it() {
    let text =
        "method m(b: Bool) {\n var x: Int\n label h\n if (b) { x := 1\n goto out }\n x := 2\n goto h\n label out\n}";
    let cfg = cfg_of(text);
    let [lp] = cfg.loops() else {
        panic!("{:?}", cfg.loops())
    };
    // `x := 2` is in the loop; `x := 1`, followed only by the jump out, is not.
    let simple_members: Vec<&str> = lp
        .members
        .iter()
        .filter(|&&m| cfg.nodes()[m].shape == Shape::Simple)
        .map(|&m| &text[cfg.nodes()[m].span.start as usize..cfg.nodes()[m].span.end as usize])
        .collect();
    assert_eq!(simple_members, ["x := 2"]);
}

#[test]
fn a_while_loop_is_a_loop_of_its_body() {
    let cfg = cfg_of("method m(b: Bool) {\n while (b) { label i\n assert true }\n}");
    assert_eq!(loops(&cfg), [("while".to_string(), vec!["i".into()])]);
    assert!(cfg.problems().is_empty());
}

#[test]
fn a_cycle_entered_at_two_places_is_irreducible() {
    let text =
        "method m(b: Bool) {\n if (b) { goto x }\n label y\n assert true\n label x\n goto y\n}";
    let cfg = cfg_of(text);
    let [Problem::Irreducible { at }] = cfg.problems() else {
        panic!("{:?}", cfg.problems())
    };
    // Reported at the jump into the cycle after its first entry in the text.
    assert_eq!(&text[at.start as usize..at.end as usize], "goto x");
}

#[test]
fn a_jump_into_a_while_body_bypasses_its_head() {
    let cfg = cfg_of("method m(b: Bool) {\n goto i\n while (b) { label i\n assert true }\n}");
    assert!(cfg
        .problems()
        .iter()
        .any(|p| matches!(p, Problem::IntoWhileBody { .. })));
}

#[test]
fn jumps_inside_one_while_body_are_fine() {
    let cfg = cfg_of(
        "method m(b: Bool) {\n while (b) { label i\n if (b) { goto i }\n goto e\n label e }\n}",
    );
    assert!(cfg.problems().is_empty());
    assert_eq!(
        loops(&cfg),
        [
            ("while".to_string(), vec!["i".into(), "e".into()]),
            ("i".to_string(), vec![])
        ]
    );
}

#[test]
fn unreachable_statements_are_in_no_loop() {
    let cfg = cfg_of("method m() {\n label h\n goto h\n assert false\n}");
    let dead = cfg
        .nodes()
        .iter()
        .position(|n| n.shape == Shape::Simple)
        .unwrap();
    assert!(!cfg.is_reachable(cfg.nodes()[dead].stmt.unwrap()));
    assert!(cfg.loops().iter().all(|l| !l.members.contains(&dead)));
    assert_eq!(loops(&cfg), [("h".to_string(), vec![])]);
}

#[test]
fn long_bodies_need_no_deep_recursion() {
    let mut text = String::from("method m() {\n");
    for i in 0..50_000 {
        text.push_str(&format!(" label l{i}\n"));
    }
    text.push_str(" goto l0\n}");
    let cfg = cfg_of(&text);
    assert_eq!(cfg.loops().len(), 1);
    assert_eq!(cfg.loops()[0].members.len(), 50_001);
}

#[test]
fn jumps_are_found_in_nested_blocks_only_where_written() {
    let body = |text: &str| {
        let mut ids = NodeIdGen::default();
        let (items, _) = germanium_syntax::parse_file(FileId(0), text, &mut ids);
        items
            .iter()
            .find_map(|i| match &i.kind {
                ItemKind::Method(m) => m.body.clone(),
                _ => None,
            })
            .unwrap()
    };
    let nested = body("method m(b: Bool) {\n while (b) { if (b) { goto e } }\n label e\n}");
    assert!(crate::has_jumps(&nested));
    let none = body("method m(b: Bool) {\n while (b) { if (b) { label e } }\n}");
    assert!(!crate::has_jumps(&none));
}
