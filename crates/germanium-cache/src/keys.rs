//! Keys: what a member's result depends on, hashed.

use germanium_syntax::ast::{ItemKind, Program};
use germanium_syntax::{SourceMap, Span};
use sha2::{Digest, Sha256};

/// A SHA-256 digest naming one member's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key(pub [u8; 32]);

/// A member of the program with its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberKey {
    pub name: String,
    /// `method`, `function` or `predicate`.
    pub kind: &'static str,
    /// The whole declaration (errors are stored relative to its start).
    pub span: Span,
    pub key: Key,
}

/// The keys of every method, function and predicate of `program`. `salt` stands for what
/// is not in the text: the options that change verification and the tools' versions.
pub fn member_keys(program: &Program, sources: &SourceMap, salt: &str) -> Vec<MemberKey> {
    let bodies: Vec<Span> = program
        .items
        .iter()
        .filter_map(|item| match &item.kind {
            ItemKind::Method(m) => m.body.as_ref().map(|b| b.span),
            _ => None,
        })
        .collect();
    let context = context_digest(sources, &bodies);
    let mut out = Vec::new();
    for item in &program.items {
        let (name, kind, body) = match &item.kind {
            ItemKind::Method(m) => (&m.name.name, "method", m.body.as_ref().map(|b| b.span)),
            ItemKind::Function(f) => (&f.name.name, "function", None),
            ItemKind::Predicate(p) => (&p.name.name, "predicate", None),
            _ => continue,
        };
        let mut h = Sha256::new();
        for part in [salt.as_bytes(), &context, kind.as_bytes(), name.as_bytes()] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
        let own = body.map_or("", |b| text_of(sources, b));
        h.update((own.len() as u64).to_le_bytes());
        h.update(own.as_bytes());
        out.push(MemberKey {
            name: name.clone(),
            kind,
            span: item.span,
            key: Key(h.finalize().into()),
        });
    }
    out
}

/// Every file's path and text, with the method bodies `bodies` left out.
fn context_digest(sources: &SourceMap, bodies: &[Span]) -> Vec<u8> {
    let mut h = Sha256::new();
    for (id, file) in sources.files() {
        let path = file.path.display().to_string();
        h.update((path.len() as u64).to_le_bytes());
        h.update(path.as_bytes());
        let mut cuts: Vec<&Span> = bodies.iter().filter(|b| b.file == id).collect();
        cuts.sort_by_key(|b| b.start);
        let mut at = 0usize;
        for cut in cuts {
            let (start, end) = (cut.start as usize, cut.end as usize);
            if start >= at && end <= file.text.len() {
                h.update(&file.text.as_bytes()[at..start]);
                // A body's place is kept, not its text.
                h.update(b"\0body\0");
                at = end;
            }
        }
        h.update(file.text.get(at..).unwrap_or_default().as_bytes());
        h.update(b"\0end of file\0");
    }
    h.finalize().to_vec()
}

fn text_of(sources: &SourceMap, span: Span) -> &str {
    sources
        .get(span.file)
        .text
        .get(span.start as usize..span.end as usize)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_syntax::ast::NodeIdGen;

    fn keys_of(text: &str) -> Vec<(String, Key)> {
        let mut sources = SourceMap::new();
        let file = sources.add("t.vpr".into(), text.to_string());
        let mut ids = NodeIdGen::default();
        let (items, diagnostics) = germanium_syntax::parse_file(file, text, &mut ids);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let program = Program {
            items,
            macros_expanded: false,
        };
        member_keys(&program, &sources, "salt")
            .into_iter()
            .map(|k| (k.name, k.key))
            .collect()
    }

    const PROGRAM: &str = "field f: Int\n\
        function get(x: Ref): Int\n  requires acc(x.f)\n{ x.f }\n\
        predicate P(x: Ref) { acc(x.f) }\n\
        domain D { axiom { true } }\n\
        method a(x: Ref)\n  requires acc(x.f)\n{\n  x.f := 1\n}\n\
        method b(x: Ref)\n  requires acc(x.f)\n  ensures acc(x.f)\n{\n  assert get(x) == x.f\n}\n";

    /// Which members' keys differ between `PROGRAM` and `PROGRAM` edited.
    fn changed(from: &str, to: &str) -> Vec<String> {
        let before = keys_of(PROGRAM);
        let after = keys_of(&PROGRAM.replacen(from, to, 1));
        assert_eq!(before.len(), after.len());
        before
            .iter()
            .zip(&after)
            .filter(|(x, y)| x.1 != y.1)
            .map(|(x, _)| x.0.clone())
            .collect()
    }

    #[test]
    fn editing_a_method_body_changes_that_method_only() {
        assert_eq!(changed("x.f := 1", "x.f := 2"), ["a"]);
        assert_eq!(changed("assert get(x) == x.f", "assert true"), ["b"]);
    }

    #[test]
    fn every_kind_of_dependency_changes_every_key() {
        let all = ["get", "P", "a", "b"];
        // A function body, a predicate body, an axiom, a field's type, a contract.
        assert_eq!(changed("{ x.f }", "{ 0 }"), all);
        assert_eq!(changed("{ acc(x.f) }", "{ acc(x.f, 1/2) }"), all);
        assert_eq!(changed("axiom { true }", "axiom { false }"), all);
        assert_eq!(changed("field f: Int", "field f: Bool"), all);
        assert_eq!(
            changed("  ensures acc(x.f)\n", "  ensures acc(x.f, 1/2)\n"),
            all
        );
    }

    #[test]
    fn the_salt_is_part_of_every_key() {
        let mut sources = SourceMap::new();
        let file = sources.add("t.vpr".into(), PROGRAM.to_string());
        let mut ids = NodeIdGen::default();
        let (items, _) = germanium_syntax::parse_file(file, PROGRAM, &mut ids);
        let program = Program {
            items,
            macros_expanded: false,
        };
        let one = member_keys(&program, &sources, "timeout=5");
        let two = member_keys(&program, &sources, "timeout=6");
        assert!(one.iter().zip(&two).all(|(x, y)| x.key != y.key));
    }
}
