//! Keys: what a member's result depends on, hashed.
//!
//! A member's result depends on its own text, on the declarations it names, transitively
//! (a callee's contract but not its body; a function's, predicate's, field's or macro's
//! whole text), and on what the verifier assumes in every member: every domain and ADT
//! (their axioms hold everywhere), every function's contract (a verified function's
//! postcondition is an axiom everywhere) and, for members other than functions, which
//! functions failed (theirs are not). A function's *definition* is an axiom too, but one
//! that only acts on its applications (its triggers; model-based instantiation is off), so
//! a member that never comes to apply the function cannot use it: function bodies count
//! only where they are named.
//!
//! Names are found as identifier tokens of the text, comments included: a word that is
//! also a declaration's name brings that declaration in even where it names a local
//! variable, which costs a needless re-verification, never a stale result.

use std::collections::{BTreeSet, HashMap};

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
    /// Its place among the program's members (in the program's order).
    pub order: usize,
    pub key: Key,
}

/// One top-level declaration as a dependency: the digest of the text it contributes and
/// the declarations that text names.
struct Dependency {
    digest: [u8; 32],
    names: Vec<usize>,
}

/// One top-level declaration as [`crate::Slice`] prints it (read from the source map
/// then: keying alone copies no text).
pub(crate) struct Declaration {
    /// Where it is in the program.
    pub span: Span,
    /// For a method or a function with a body: the body's bounds in the declaration's
    /// text (see [`body_bounds`]).
    pub body: Option<(usize, usize)>,
    /// For a function: its name.
    pub function: Option<String>,
    /// Domains and ADTs: in every slice.
    pub everywhere: bool,
}

/// A member to be keyed.
pub(crate) struct Member {
    pub name: String,
    pub kind: &'static str,
    pub span: Span,
    own: [u8; 32],
    /// The dependencies its own text (body included) names, transitively, and those of
    /// what is assumed everywhere.
    pub closure: BTreeSet<usize>,
}

/// The dependencies of every member of a program, read once; [`KeyPlan::function_keys`]
/// and [`KeyPlan::other_keys`] hash them into keys.
pub struct KeyPlan {
    salt: String,
    dependencies: Vec<Dependency>,
    /// The digest of every function's contract (assumed everywhere).
    contracts: [u8; 32],
    pub(crate) members: Vec<Member>,
    /// Each dependency's texts, for slices (same indices as `dependencies`).
    pub(crate) declarations: Vec<Declaration>,
}

impl KeyPlan {
    /// `salt` stands for what is not in the text: the options that change verification and
    /// the tools' versions.
    pub fn new(program: &Program, sources: &SourceMap, salt: &str) -> KeyPlan {
        // The text each declaration contributes, and which names call it up.
        let mut texts: Vec<String> = Vec::new();
        let mut by_name: HashMap<&str, usize> = HashMap::new();
        let mut everywhere: Vec<usize> = Vec::new();
        let mut contract_texts: Vec<(&str, String)> = Vec::new();
        let mut members: Vec<(&str, &'static str, Span)> = Vec::new();
        let mut declarations: Vec<Declaration> = Vec::new();
        for item in program.items.iter().chain(&program.expanded_macros) {
            let index = texts.len();
            let whole = text_of(sources, item.span).to_string();
            let (body, function) = match &item.kind {
                ItemKind::Method(m) => (m.body.as_ref().map(|b| b.span), None),
                ItemKind::Function(f) => {
                    (f.body.as_ref().map(|b| b.span), Some(f.name.name.clone()))
                }
                _ => (None, None),
            };
            if !matches!(item.kind, ItemKind::Import(_)) {
                declarations.push(Declaration {
                    span: item.span,
                    body: body.and_then(|cut| body_bounds(&whole, item.span, cut)),
                    function,
                    everywhere: matches!(item.kind, ItemKind::Domain(_) | ItemKind::Adt(_)),
                });
            }
            let text = match &item.kind {
                ItemKind::Import(_) => continue,
                ItemKind::Field(fields) => {
                    for f in fields {
                        by_name.insert(&f.name.name, index);
                    }
                    whole
                }
                // A caller depends on a method's signature and contract, not on its body.
                ItemKind::Method(m) => {
                    by_name.insert(&m.name.name, index);
                    members.push((&m.name.name, "method", item.span));
                    without(sources, item.span, m.body.as_ref().map(|b| b.span))
                }
                ItemKind::Function(f) => {
                    by_name.insert(&f.name.name, index);
                    members.push((&f.name.name, "function", item.span));
                    let body = f.body.as_ref().map(|b| b.span);
                    contract_texts.push((&f.name.name, without(sources, item.span, body)));
                    whole
                }
                ItemKind::Predicate(p) => {
                    by_name.insert(&p.name.name, index);
                    members.push((&p.name.name, "predicate", item.span));
                    whole
                }
                ItemKind::Macro(m) => {
                    by_name.insert(&m.name.name, index);
                    whole
                }
                ItemKind::Domain(_) | ItemKind::Adt(_) => {
                    everywhere.push(index);
                    whole
                }
            };
            texts.push(text);
        }
        let named = |text: &str| -> Vec<usize> {
            let found: BTreeSet<usize> = identifiers(text)
                .filter_map(|word| by_name.get(word).copied())
                .collect();
            found.into_iter().collect()
        };
        let dependencies: Vec<Dependency> = texts
            .iter()
            .map(|text| Dependency {
                digest: Sha256::digest(text.as_bytes()).into(),
                names: named(text),
            })
            .collect();
        let mut contracts = Sha256::new();
        for (function, text) in &contract_texts {
            hash_part(&mut contracts, text.as_bytes());
            // The function's own name there does not bring in its body.
            let own = by_name.get(*function).copied();
            everywhere.extend(named(text).into_iter().filter(|d| Some(*d) != own));
        }
        let assumed = closure(&dependencies, everywhere);
        let members = members
            .into_iter()
            .map(|(name, kind, span)| {
                let own = text_of(sources, span);
                let mut closure = closure(&dependencies, named(own));
                closure.extend(assumed.iter().copied());
                Member {
                    name: name.to_string(),
                    kind,
                    span,
                    own: Sha256::digest(own.as_bytes()).into(),
                    closure,
                }
            })
            .collect();
        KeyPlan {
            salt: salt.to_string(),
            dependencies,
            contracts: contracts.finalize().into(),
            members,
            declarations,
        }
    }

    /// The keys of the program's functions.
    pub fn function_keys(&self) -> Vec<MemberKey> {
        self.keys(|kind| kind == "function", None)
    }

    /// The keys of the program's methods and predicates, verified with the postconditions
    /// of every function but those in `failed` as axioms.
    pub fn other_keys(&self, failed: &BTreeSet<String>) -> Vec<MemberKey> {
        self.keys(|kind| kind != "function", Some(failed))
    }

    fn keys(
        &self,
        which: impl Fn(&str) -> bool,
        failed: Option<&BTreeSet<String>>,
    ) -> Vec<MemberKey> {
        let mut out = Vec::new();
        for (order, m) in self
            .members
            .iter()
            .enumerate()
            .filter(|(_, m)| which(m.kind))
        {
            let mut h = Sha256::new();
            for part in [
                self.salt.as_bytes(),
                m.kind.as_bytes(),
                m.name.as_bytes(),
                &m.own,
            ] {
                hash_part(&mut h, part);
            }
            hash_part(&mut h, &self.contracts);
            for &d in &m.closure {
                hash_part(&mut h, &self.dependencies[d].digest);
            }
            if let Some(failed) = failed {
                hash_part(&mut h, b"failed functions");
                for name in failed {
                    hash_part(&mut h, name.as_bytes());
                }
            }
            out.push(MemberKey {
                name: m.name.clone(),
                kind: m.kind,
                span: m.span,
                order,
                key: Key(h.finalize().into()),
            });
        }
        out
    }
}

/// `start` and every dependency the dependencies in it name, transitively.
fn closure(dependencies: &[Dependency], start: Vec<usize>) -> BTreeSet<usize> {
    let mut found: BTreeSet<usize> = BTreeSet::new();
    let mut todo = start;
    while let Some(d) = todo.pop() {
        if found.insert(d) {
            todo.extend(dependencies[d].names.iter().copied());
        }
    }
    found
}

/// The words of `text` that could be identifiers.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    let part = |c: char| c.is_alphanumeric() || matches!(c, '_' | '$' | '\'');
    text.split(move |c: char| !part(c))
        .filter(|w| w.chars().next().is_some_and(|c| !c.is_ascii_digit()))
}

/// The text of `span`.
pub(crate) fn text_of(sources: &SourceMap, span: Span) -> &str {
    sources
        .get(span.file)
        .text
        .get(span.start as usize..span.end as usize)
        .unwrap_or_default()
}

/// The text of `span` with the body `cut` (inside it) left out; the cut's place is kept.
fn without(sources: &SourceMap, span: Span, cut: Option<Span>) -> String {
    let whole = text_of(sources, span);
    match cut.and_then(|c| body_bounds(whole, span, c)) {
        Some((a, b)) => format!("{}\0body\0{}", &whole[..a], &whole[b..]),
        None => whole.to_string(),
    }
}

/// Where the body `cut` of the declaration `whole` (at `span`) is in its text, braces
/// included (a function's body is the expression between them, and its span may leave out
/// the expression's opening parentheses: from the brace before it to the declaration's
/// end); `None` when the cut is not inside.
pub(crate) fn body_bounds(whole: &str, span: Span, cut: Span) -> Option<(usize, usize)> {
    if cut.file != span.file || cut.start < span.start || cut.end > span.end {
        return None;
    }
    let (a, b) = (
        (cut.start - span.start) as usize,
        (cut.end - span.start) as usize,
    );
    if whole.get(a..b)?.starts_with('{') {
        return Some((a, b));
    }
    let open = whole
        .get(..a)?
        .trim_end_matches(|c: char| c.is_whitespace() || c == '(');
    let close = whole.trim_end();
    if !open.ends_with('{') || !close.ends_with('}') || close.len() < b {
        return None;
    }
    Some((open.len() - 1, close.len()))
}

fn hash_part(h: &mut Sha256, part: &[u8]) {
    h.update((part.len() as u64).to_le_bytes());
    h.update(part);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use germanium_syntax::ast::NodeIdGen;

    fn plan_of(text: &str, salt: &str) -> KeyPlan {
        plan_and_sources(text, salt).0
    }

    /// The key plan of `text` (parsed, not expanded) and its source map.
    pub(crate) fn plan_and_sources(text: &str, salt: &str) -> (KeyPlan, SourceMap) {
        let mut sources = SourceMap::new();
        let file = sources.add("t.vpr".into(), text.to_string());
        let mut ids = NodeIdGen::default();
        let (items, diagnostics) = germanium_syntax::parse_file(file, text, &mut ids);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let program = Program {
            items,
            macros_expanded: false,
            expanded_macros: Vec::new(),
        };
        let plan = KeyPlan::new(&program, &sources, salt);
        (plan, sources)
    }

    fn keys_of(text: &str, failed: &[&str]) -> Vec<(String, Key)> {
        let plan = plan_of(text, "salt");
        let failed: BTreeSet<String> = failed.iter().map(|s| s.to_string()).collect();
        let mut keys = plan.function_keys();
        keys.extend(plan.other_keys(&failed));
        keys.into_iter().map(|k| (k.name, k.key)).collect()
    }

    const PROGRAM: &str = "field f: Int\n\
        field g: Bool\n\
        define SMALL(x) x.f < 10\n\
        function get(x: Ref): Int\n  requires acc(x.f)\n{ x.f }\n\
        function flag(x: Ref): Bool\n  requires acc(x.g)\n{ x.g }\n\
        predicate P(x: Ref) { acc(x.f) }\n\
        domain D { axiom { true } }\n\
        method a(x: Ref)\n  requires acc(x.f)\n{\n  x.f := 1\n}\n\
        method b(x: Ref)\n  requires acc(x.f)\n  ensures acc(x.f)\n{\n  assert get(x) == x.f\n}\n\
        method c(x: Ref)\n  requires P(x)\n{\n  unfold P(x)\n  a(x)\n}\n\
        method d(x: Ref)\n  requires acc(x.g) && acc(x.f)\n{\n  assert flag(x) == x.g\n  assert SMALL(x) || true\n}\n";

    /// Which members' keys differ between `PROGRAM` and `PROGRAM` edited.
    fn changed(from: &str, to: &str) -> Vec<String> {
        assert!(PROGRAM.contains(from), "{from}");
        let before = keys_of(PROGRAM, &[]);
        let after = keys_of(&PROGRAM.replacen(from, to, 1), &[]);
        assert_eq!(before.len(), after.len());
        let mut names: Vec<String> = before
            .iter()
            .zip(&after)
            .filter(|(x, y)| x.1 != y.1)
            .map(|(x, _)| x.0.clone())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn editing_a_method_body_changes_that_method_only() {
        assert_eq!(changed("x.f := 1", "x.f := 2"), ["a"]);
        assert_eq!(changed("assert get(x) == x.f", "assert true"), ["b"]);
    }

    #[test]
    fn a_contract_changes_the_method_and_its_callers() {
        assert_eq!(
            changed(
                "  requires acc(x.f)\n{\n  x.f",
                "  requires acc(x.f, 1/2)\n{\n  x.f"
            ),
            ["a", "c"]
        );
    }

    #[test]
    fn a_function_body_changes_the_function_and_who_names_it() {
        assert_eq!(changed("{ x.f }", "{ 0 }"), ["b", "get"]);
        assert_eq!(changed("{ x.g }", "{ true }"), ["d", "flag"]);
    }

    #[test]
    fn what_is_assumed_everywhere_changes_every_key() {
        let all = ["P", "a", "b", "c", "d", "flag", "get"];
        // A function's contract (its postcondition is an axiom everywhere), an axiom.
        assert_eq!(
            changed(
                "  requires acc(x.f)\n{ x.f }",
                "  requires acc(x.f)\n  ensures true\n{ x.f }"
            ),
            all
        );
        assert_eq!(changed("axiom { true }", "axiom { false }"), all);
    }

    #[test]
    fn predicates_fields_and_macros_change_those_that_use_them() {
        assert_eq!(changed("{ acc(x.f) }", "{ acc(x.f, 1/2) }"), ["P", "c"]);
        // `get`'s contract names `f`, and contracts are assumed everywhere.
        assert_eq!(
            changed("field f: Int", "field f: Bool"),
            ["P", "a", "b", "c", "d", "flag", "get"]
        );
        assert_eq!(changed("x.f < 10", "x.f < 11"), ["d"]);
    }

    #[test]
    fn failed_functions_change_the_other_members_keys_only() {
        let before = keys_of(PROGRAM, &[]);
        let after = keys_of(PROGRAM, &["get"]);
        for (x, y) in before.iter().zip(&after) {
            let function = x.0 == "get" || x.0 == "flag";
            assert_eq!(x.1 == y.1, function, "{}", x.0);
        }
    }

    #[test]
    fn the_salt_is_part_of_every_key() {
        let none = BTreeSet::new();
        let one = plan_of(PROGRAM, "timeout=5").other_keys(&none);
        let two = plan_of(PROGRAM, "timeout=6").other_keys(&none);
        assert!(one.iter().zip(&two).all(|(x, y)| x.key != y.key));
    }

    #[test]
    fn identifiers_are_words_that_do_not_start_with_a_digit() {
        let words: Vec<&str> = identifiers("x.f := 1 + y$1 // P(x')").collect();
        assert_eq!(words, ["x", "f", "y$1", "P", "x'"]);
    }
}
