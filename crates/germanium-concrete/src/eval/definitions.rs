//! Domain functions an axiom defines: `forall xs :: f(xs) == e` (or `<==>`, either side up),
//! with `xs` distinct and all of `f`'s arguments and `e` not applying `f`. Every model of the
//! axiom gives `f(vs)` the value `e` has with `xs` bound to `vs`, so the model interprets `f`
//! by evaluating `e`: no table, no choice, and the axiom holds by construction (it is not
//! checked). Definitions that reach themselves (through other definitions or functions'
//! bodies) are left to tables, so that evaluating one always ends. Domains without type
//! parameters only.

use std::collections::{BTreeSet, HashMap};

use germanium_semantics::visit::walk_expr;
use germanium_semantics::{CallTarget, Semantics, VarId};
use germanium_syntax::ast::{
    Axiom, BinaryOp, Domain, Expr, ExprKind, Function, NodeId, QuantifierKind,
};

use super::{unknown, Evaluator, Scope, MAX_DEPTH, R};
use crate::heap::Heap;
use crate::value::Value;

/// A domain function's definition by an axiom.
#[derive(Clone, Debug)]
pub(crate) struct Definition<'p> {
    /// The quantifier's variables, in the order of the function's arguments.
    params: Vec<VarId>,
    /// What the function's value is.
    body: &'p Expr,
    /// The defining axiom's body.
    pub axiom: NodeId,
}

/// The definitions the axioms of `domains` give, by function name (the first axiom that
/// defines a function does).
pub(crate) fn definitions<'p>(
    sem: &Semantics,
    domains: &HashMap<&'p str, &'p Domain>,
    functions: &HashMap<&'p str, &'p Function>,
) -> HashMap<String, Definition<'p>> {
    let mut names: Vec<&&str> = domains.keys().collect();
    names.sort();
    let mut found: HashMap<String, Definition<'p>> = HashMap::new();
    for name in names {
        let domain = domains[*name];
        if !domain.type_params.is_empty() || domain.interpretation.is_some() {
            continue;
        }
        for axiom in &domain.axioms {
            if let Some((f, definition)) = defining(sem, &domain.name.name, axiom) {
                found.entry(f).or_insert(definition);
            }
        }
    }
    let cyclic: Vec<String> = found
        .keys()
        .filter(|f| reaches(sem, &found, functions, f))
        .cloned()
        .collect();
    for f in cyclic {
        found.remove(&f);
    }
    found
}

/// The function `axiom` defines and how, if it has the shape of a definition.
fn defining<'p>(
    sem: &Semantics,
    domain: &str,
    axiom: &'p Axiom,
) -> Option<(String, Definition<'p>)> {
    let ExprKind::Quantifier {
        kind: QuantifierKind::Forall,
        vars,
        body,
        ..
    } = &axiom.body.kind
    else {
        return None;
    };
    let binders: Vec<VarId> = (0..vars.len())
        .map(|i| sem.binders.get(&(axiom.body.id, i)).copied())
        .collect::<Option<_>>()?;
    let ExprKind::Binary(BinaryOp::Eq | BinaryOp::Iff, a, b) = &body.kind else {
        return None;
    };
    for (call, value) in [(a, b), (b, a)] {
        let (ExprKind::Call(_, args), Some(CallTarget::DomainFunction { function, .. })) =
            (&call.kind, sem.call(call.id))
        else {
            continue;
        };
        let info = sem.domain_functions.get(function)?;
        if info.domain != domain || info.unique || info.interpretation.is_some() {
            continue;
        }
        let params: Option<Vec<VarId>> = args
            .iter()
            .map(|arg| match arg.kind {
                ExprKind::Ident(_) => sem.var_id(arg.id).filter(|v| binders.contains(v)),
                _ => None,
            })
            .collect();
        let Some(params) = params else { continue };
        let distinct: BTreeSet<VarId> = params.iter().copied().collect();
        if distinct.len() != params.len() || params.len() != binders.len() {
            continue;
        }
        if applies(sem, value, function) {
            continue;
        }
        let definition = Definition {
            params,
            body: value,
            axiom: axiom.body.id,
        };
        return Some((function.clone(), definition));
    }
    None
}

/// Whether `e` applies the domain function `f` itself.
fn applies(sem: &Semantics, e: &Expr, f: &str) -> bool {
    let mut found = false;
    walk_expr(e, &mut |sub| {
        found |= matches!(sem.call(sub.id), Some(CallTarget::DomainFunction { function, .. }) if function == f);
    });
    found
}

/// Whether `f`'s definition reaches `f` again: through the definitions it applies and the
/// contracts and bodies of the functions it applies.
fn reaches(
    sem: &Semantics,
    definitions: &HashMap<String, Definition>,
    functions: &HashMap<&str, &Function>,
    f: &str,
) -> bool {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut work: Vec<&Expr> = vec![definitions[f].body];
    while let Some(e) = work.pop() {
        let mut reached = false;
        walk_expr(e, &mut |sub| match sem.call(sub.id) {
            Some(CallTarget::DomainFunction { function, .. }) => {
                reached |= function == f;
                if let Some(d) = definitions.get(function) {
                    if seen.insert(format!("d:{function}")) {
                        work.push(d.body);
                    }
                }
            }
            Some(CallTarget::Function(name)) => {
                if let Some(function) = functions.get(name.as_str()) {
                    if seen.insert(format!("f:{name}")) {
                        work.extend(function.body.as_ref());
                        work.extend(function.contract.requires.iter());
                        work.extend(function.contract.ensures.iter());
                    }
                }
            }
            _ => {}
        });
        if reached {
            return true;
        }
    }
    false
}

impl Evaluator<'_> {
    /// Whether an axiom defines the domain function `f` (see the module's comment).
    pub(crate) fn defined(&self, f: &str) -> bool {
        self.definitions.contains_key(f)
    }

    /// The body of the definition of `f`, if an axiom defines it.
    pub(crate) fn definition_body(&self, f: &str) -> Option<&Expr> {
        self.definitions.get(f).map(|d| d.body)
    }

    /// Whether `axiom` (its body's node) defines a function.
    pub(crate) fn is_definition(&self, axiom: NodeId) -> bool {
        self.definitions.values().any(|d| d.axiom == axiom)
    }

    /// `f(args)` for a function an axiom defines: the definition's value on them.
    pub(crate) fn defined_application(&self, heap: &Heap, f: &str, args: Vec<Value>) -> R<Value> {
        let Some(definition) = self.definitions.get(f) else {
            return unknown(format!("no definition of `{f}`"));
        };
        let depth = self.depth.get();
        if depth >= MAX_DEPTH {
            return unknown(format!(
                "function applications nested deeper than {MAX_DEPTH}"
            ));
        }
        let labels = HashMap::new();
        let mut scope = Scope {
            store: definition.params.iter().copied().zip(args).collect(),
            old: None,
            labels: &labels,
            result: None,
            held: None,
            amounts_unknown: false,
            scale: None,
        };
        self.depth.set(depth + 1);
        let v = self.value(&mut scope, heap, definition.body);
        self.depth.set(depth);
        v
    }
}
