//! Stand-in for the verifier: Germanium must never call something verified that it did not
//! check, so each member with something to verify gets an `internal:feature.unsupported`.

use germanium_syntax::ast::{Contract, ItemKind, Program};
use germanium_syntax::diagnostic::ids;
use germanium_syntax::Diagnostic;

/// One diagnostic at the name of each method, function and predicate that has a body or a
/// contract; none for a program of only fields, domains and ADTs.
pub fn members_to_verify(program: &Program) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for item in &program.items {
        let (kind, name, has_obligations) = match &item.kind {
            ItemKind::Method(m) => (
                "methods",
                &m.name,
                m.body.is_some() || has_clauses(&m.contract),
            ),
            ItemKind::Function(f) => (
                "functions",
                &f.name,
                f.body.is_some() || has_clauses(&f.contract),
            ),
            ItemKind::Predicate(p) => ("predicates", &p.name, p.body.is_some()),
            _ => continue,
        };
        if has_obligations {
            diagnostics.push(Diagnostic::new(
                ids::UNSUPPORTED,
                name.span,
                format!(
                    "verification of {kind} is not supported yet (`{}` was not verified)",
                    name.name
                ),
            ));
        }
    }
    diagnostics
}

fn has_clauses(contract: &Contract) -> bool {
    !contract.requires.is_empty() || !contract.ensures.is_empty() || !contract.decreases.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_syntax::ast::{Ident, Item, Method, Predicate};
    use germanium_syntax::Span;

    fn ident(name: &str) -> Ident {
        Ident {
            name: name.into(),
            span: Span::default(),
        }
    }

    fn item(kind: ItemKind) -> Item {
        Item {
            annotations: Vec::new(),
            kind,
            span: Span::default(),
        }
    }

    #[test]
    fn abstract_members_without_contracts_need_nothing() {
        let program = Program {
            items: vec![
                item(ItemKind::Method(Method {
                    name: ident("m"),
                    params: vec![],
                    returns: vec![],
                    contract: Contract::default(),
                    body: None,
                })),
                item(ItemKind::Predicate(Predicate {
                    name: ident("p"),
                    params: vec![],
                    body: None,
                })),
                item(ItemKind::Field(vec![])),
            ],
            macros_expanded: true,
        };
        assert!(members_to_verify(&program).is_empty());
    }

    #[test]
    fn a_method_with_a_body_is_reported_unsupported() {
        let body = germanium_syntax::ast::Block {
            stmts: vec![],
            span: Span::default(),
        };
        let program = Program {
            items: vec![item(ItemKind::Method(Method {
                name: ident("main"),
                params: vec![],
                returns: vec![],
                contract: Contract::default(),
                body: Some(body),
            }))],
            macros_expanded: true,
        };
        let found = members_to_verify(&program);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].id, "internal:feature.unsupported");
        assert!(found[0].message.contains("methods"));
    }
}
