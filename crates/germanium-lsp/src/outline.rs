//! What a document declares, from its current text: the declarations of the file and of
//! the files it imports, for document symbols, go to definition and the members' code
//! lenses. Parsing is linear and fast, so the outline is made afresh for each text.
//!
//! Viper gives every top-level declaration (and every domain function, axiom, ADT
//! constructor and destructor) one global namespace, so a name says which declaration it
//! is; parameters and results are looked up in the member around the name first.

use std::path::{Path, PathBuf};

use germanium_syntax::ast::{ItemKind, NodeIdGen};
use germanium_syntax::{FileId, SourceMap, Span};

/// One named declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declaration {
    pub name: String,
    pub kind: Kind,
    /// The name where it is declared.
    pub name_span: Span,
    /// The whole declaration.
    pub span: Span,
    /// Domain functions and axioms, ADT constructors, a member's parameters and results.
    pub children: Vec<Declaration>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Field,
    Method,
    Function,
    Predicate,
    Domain,
    DomainFunction,
    Axiom,
    Adt,
    Constructor,
    Destructor,
    Macro,
    /// A parameter or a result of a member.
    Variable,
}

impl Kind {
    /// Members are what the verifier verifies (and what gets a code lens).
    pub fn is_member(self) -> bool {
        matches!(self, Kind::Method | Kind::Function | Kind::Predicate)
    }

    pub fn word(self) -> &'static str {
        match self {
            Kind::Field => "field",
            Kind::Method => "method",
            Kind::Function => "function",
            Kind::Predicate => "predicate",
            Kind::Domain => "domain",
            Kind::DomainFunction => "domain function",
            Kind::Axiom => "axiom",
            Kind::Adt => "adt",
            Kind::Constructor => "constructor",
            Kind::Destructor => "destructor",
            Kind::Macro => "macro",
            Kind::Variable => "variable",
        }
    }
}

/// The declarations of a text and of what it imports.
pub struct Outline {
    pub sources: SourceMap,
    /// The document itself.
    pub main: FileId,
    /// Top-level declarations of every loaded file, in order.
    pub declarations: Vec<Declaration>,
}

impl Outline {
    /// Parses `text` as the contents of `path` and the files it imports (read from disk;
    /// `import <...>` also from `import_paths`).
    /// Parse errors are left to the verification run: the outline has what did parse.
    pub fn of(path: &Path, text: &str, import_paths: &[PathBuf]) -> Outline {
        let mut sources = SourceMap::new();
        let mut ids = NodeIdGen::default();
        let (program, _) = germanium_syntax::load_program_text(
            path,
            text.to_string(),
            import_paths,
            &mut sources,
            &mut ids,
        );
        let declarations = program.items.iter().flat_map(declarations_of).collect();
        Outline {
            main: sources.find(path).unwrap_or(FileId(0)),
            sources,
            declarations,
        }
    }

    /// The document's own top-level declarations.
    pub fn own(&self) -> impl Iterator<Item = &Declaration> {
        self.declarations
            .iter()
            .filter(move |d| d.span.file == self.main)
    }

    /// The declaration `offset` (in the document) names, if it names one: a variable of
    /// the member around it first, then any declaration of that name.
    pub fn definition_at(&self, offset: usize) -> Option<&Declaration> {
        let text = &self.sources.get(self.main).text;
        let name = identifier_at(text, offset)?;
        let inside = |d: &&Declaration| {
            d.span.file == self.main
                && (d.span.start as usize) <= offset
                && offset <= d.span.end as usize
        };
        let local = self
            .own()
            .filter(|d| d.kind.is_member())
            .find(inside)
            .and_then(|member| {
                member
                    .children
                    .iter()
                    .find(|c| c.kind == Kind::Variable && c.name == name)
            });
        local.or_else(|| self.find(name))
    }

    /// The declaration named `name`, nested ones included (not variables).
    pub fn find(&self, name: &str) -> Option<&Declaration> {
        fn search<'d>(ds: &'d [Declaration], name: &str) -> Option<&'d Declaration> {
            ds.iter().find_map(|d| {
                if d.name == name && d.kind != Kind::Variable {
                    Some(d)
                } else {
                    search(&d.children, name)
                }
            })
        }
        search(&self.declarations, name)
    }

    /// Where a declaration is: its file's path and text.
    pub fn file_of(&self, d: &Declaration) -> (&Path, &str) {
        let file = self.sources.get(d.name_span.file);
        (&file.path, &file.text)
    }
}

/// The identifier around `offset` (Viper's `[A-Za-z_$][A-Za-z0-9_$']*`), if any.
pub fn identifier_at(text: &str, offset: usize) -> Option<&str> {
    let part = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '\'');
    let offset = offset.min(text.len());
    if !text.is_char_boundary(offset) {
        return None;
    }
    let start = text[..offset]
        .char_indices()
        .rev()
        .take_while(|(_, c)| part(*c))
        .last()
        .map_or(offset, |(i, _)| i);
    let end = text[offset..]
        .char_indices()
        .find(|(_, c)| !part(*c))
        .map_or(text.len(), |(i, _)| offset + i);
    let word = &text[start..end];
    let first = word.chars().next()?;
    (first.is_ascii_alphabetic() || first == '_' || first == '$').then_some(word)
}

fn leaf(name: &germanium_syntax::ast::Ident, kind: Kind, span: Span) -> Declaration {
    Declaration {
        name: name.name.clone(),
        kind,
        name_span: name.span,
        span,
        children: Vec::new(),
    }
}

fn variables(decls: &[germanium_syntax::ast::VarDecl]) -> Vec<Declaration> {
    decls
        .iter()
        .map(|v| leaf(&v.name, Kind::Variable, v.span))
        .collect()
}

fn declarations_of(item: &germanium_syntax::ast::Item) -> Vec<Declaration> {
    let with = |name, kind, children| Declaration {
        children,
        ..leaf(name, kind, item.span)
    };
    match &item.kind {
        ItemKind::Import(_) => Vec::new(),
        ItemKind::Field(fields) => fields
            .iter()
            .map(|f| leaf(&f.name, Kind::Field, f.span))
            .collect(),
        ItemKind::Method(m) => {
            let mut vars = variables(&m.params);
            vars.extend(variables(&m.returns));
            vec![with(&m.name, Kind::Method, vars)]
        }
        ItemKind::Function(f) => vec![with(&f.name, Kind::Function, variables(&f.params))],
        ItemKind::Predicate(p) => vec![with(&p.name, Kind::Predicate, variables(&p.params))],
        ItemKind::Domain(d) => {
            let mut children: Vec<Declaration> = d
                .functions
                .iter()
                .map(|f| leaf(&f.name, Kind::DomainFunction, f.span))
                .collect();
            children.extend(
                d.axioms
                    .iter()
                    .filter_map(|a| Some(leaf(a.name.as_ref()?, Kind::Axiom, a.span))),
            );
            vec![with(&d.name, Kind::Domain, children)]
        }
        ItemKind::Adt(a) => {
            let children = a
                .constructors
                .iter()
                .map(|c| Declaration {
                    children: c
                        .fields
                        .iter()
                        .map(|f| leaf(&f.name, Kind::Destructor, f.span))
                        .collect(),
                    ..leaf(&c.name, Kind::Constructor, c.span)
                })
                .collect();
            vec![with(&a.name, Kind::Adt, children)]
        }
        ItemKind::Macro(m) => vec![leaf(&m.name, Kind::Macro, m.span)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = "field val: Int\n\
        predicate list(x: Ref) { acc(x.val) }\n\
        domain Pair { function first(p: Pair): Int  axiom first_ax { true } }\n\
        adt Tree { Leaf() Node(left: Tree, right: Tree) }\n\
        method m(x: Ref) returns (r: Int) requires list(x) { r := first(p0()) }\n";

    fn outline() -> Outline {
        let dir = std::env::temp_dir();
        Outline::of(&dir.join("germanium-outline-test.vpr"), PROGRAM, &[])
    }

    fn offset_of(needle: &str, nth: usize) -> usize {
        PROGRAM.match_indices(needle).nth(nth).unwrap().0 + 1
    }

    #[test]
    fn declarations_nest_domain_and_adt_parts_and_member_variables() {
        let outline = outline();
        let names: Vec<(&str, Kind)> = outline.own().map(|d| (d.name.as_str(), d.kind)).collect();
        assert_eq!(
            names,
            [
                ("val", Kind::Field),
                ("list", Kind::Predicate),
                ("Pair", Kind::Domain),
                ("Tree", Kind::Adt),
                ("m", Kind::Method)
            ]
        );
        let pair = outline.find("Pair").unwrap();
        let parts: Vec<&str> = pair.children.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(parts, ["first", "first_ax"]);
        assert_eq!(outline.find("right").unwrap().kind, Kind::Destructor);
    }

    #[test]
    fn a_name_leads_to_its_declaration_and_a_parameter_to_its_member_s() {
        let outline = outline();
        let at = |needle, nth| outline.definition_at(offset_of(needle, nth));
        assert_eq!(at("list(x)", 0).unwrap().kind, Kind::Predicate);
        assert_eq!(at(" first(p0", 0).unwrap().kind, Kind::DomainFunction);
        let x = at("(x)", 0).unwrap();
        assert_eq!(
            (x.kind, &PROGRAM[x.name_span.start as usize..][..1]),
            (Kind::Variable, "x")
        );
        assert!(PROGRAM[..x.span.start as usize].contains("method m"));
        // `p0` is declared nowhere; a keyword is no declaration.
        assert!(at("p0", 0).is_none());
        assert!(at("requires", 0).is_none());
    }

    #[test]
    fn identifiers_are_found_around_an_offset() {
        assert_eq!(identifier_at("a + foo_1'.f", 5), Some("foo_1'"));
        assert_eq!(identifier_at("a + foo", 4), Some("foo"));
        assert_eq!(identifier_at("a + foo", 3), None);
        assert_eq!(identifier_at("12", 1), None);
    }
}
