//! Which parts of the `decreases` library a program needs but does not import (Viper's
//! termination plugin imports them on its own): for each type of a termination measure the
//! file with its well-founded order, unless a domain of the order's name is already there;
//! the bare declaration of `decreasing`/`bounded` for any other type; and the order on
//! predicate instances when a measure is a predicate instance.

use std::collections::BTreeSet;

use germanium_syntax::ast::{
    Block, Decreases, DecreasesKind, Expr, ExprKind, ItemKind, Method, Program, StmtKind,
};

use crate::semantics::{CallTarget, Semantics};
use crate::types::Type;

/// The `decreases` clauses of a method: its own and those of its loops.
pub fn method_decreases(m: &Method) -> Vec<&Decreases> {
    fn in_block<'p>(b: &'p Block, out: &mut Vec<&'p Decreases>) {
        for s in &b.stmts {
            match &s.kind {
                StmtKind::While {
                    decreases, body, ..
                } => {
                    out.extend(decreases.iter());
                    in_block(body, out);
                }
                StmtKind::Block(b) => in_block(b, out),
                StmtKind::If {
                    then, otherwise, ..
                } => {
                    in_block(then, out);
                    if let Some(o) = otherwise {
                        in_block(o, out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out: Vec<&Decreases> = m.contract.decreases.iter().collect();
    if let Some(b) = &m.body {
        in_block(b, &mut out);
    }
    out
}

/// Every `decreases` clause of the program: of functions, methods and loops.
pub fn all_decreases(program: &Program) -> Vec<&Decreases> {
    let mut out = Vec::new();
    for item in &program.items {
        match &item.kind {
            ItemKind::Function(f) => out.extend(f.contract.decreases.iter()),
            ItemKind::Method(m) => out.extend(method_decreases(m)),
            _ => {}
        }
    }
    out
}

/// Whether one of `clauses` has a predicate instance in its tuple.
pub fn has_predicate_measure<'d>(
    clauses: impl IntoIterator<Item = &'d Decreases>,
    sem: &Semantics,
) -> bool {
    clauses.into_iter().any(|d| match &d.kind {
        DecreasesKind::Tuple(exprs) => exprs
            .iter()
            .any(|e| predicate_instance_measure(e, sem).is_some()),
        _ => false,
    })
}

/// The predicate instance a measure denotes: `P(args)` or `acc(P(args), p)` for a predicate
/// `P` (Viper reads both as the instance, not as an assertion).
pub fn predicate_instance_measure<'e>(
    e: &'e Expr,
    sem: &Semantics,
) -> Option<(&'e str, &'e [Expr])> {
    let call = match &e.kind {
        ExprKind::Acc(loc, _) => loc,
        _ => e,
    };
    match (&call.kind, sem.call(call.id)) {
        (ExprKind::Call(name, args), Some(CallTarget::Predicate(_))) => {
            Some((name.name.as_str(), args.as_slice()))
        }
        _ => None,
    }
}

/// Library files (`decreases/*.vpr`) to add to `program`, in a fixed order.
pub fn termination_imports(program: &Program, sem: &Semantics) -> Vec<&'static str> {
    let present = |name: &str| sem.domains.contains_key(name);
    let mut out = BTreeSet::new();
    for d in all_decreases(program) {
        let DecreasesKind::Tuple(exprs) = &d.kind else {
            continue;
        };
        for e in exprs {
            if predicate_instance_measure(e, sem).is_some() {
                if !present("PredicateInstancesWellFoundedOrder") {
                    out.insert("decreases/predicate_instance.vpr");
                }
                continue;
            }
            let Some(ty) = sem.type_of(e.id) else {
                continue;
            };
            let own = match ty {
                Type::Int => Some(("IntWellFoundedOrder", "decreases/int.vpr")),
                Type::Ref => Some(("RefWellFoundedOrder", "decreases/ref.vpr")),
                Type::Bool => Some(("BoolWellFoundedOrder", "decreases/bool.vpr")),
                Type::Perm if present("RationalWellFoundedOrder") => None,
                Type::Perm => Some(("PermWellFoundedOrder", "decreases/perm.vpr")),
                Type::Multiset(_) => Some(("MultiSetWellFoundedOrder", "decreases/multiset.vpr")),
                Type::Seq(_) => Some(("SeqWellFoundedOrder", "decreases/seq.vpr")),
                Type::Set(_) => Some(("SetWellFoundedOrder", "decreases/set.vpr")),
                _ => None,
            };
            match own {
                Some((domain, file)) if !present(domain) => {
                    out.insert(file);
                }
                _ => {
                    if !present("WellFoundedOrder") {
                        out.insert("decreases/declaration.vpr");
                    }
                }
            }
        }
    }
    out.into_iter().collect()
}

/// The instances `WellFoundedOrder[T]` the measures of the program compare in (a predicate
/// instance at type `PredicateInstance`), so that `decreasing`/`bounded` exist at each.
pub fn measure_order_instances(program: &Program, sem: &Semantics) -> Vec<Type> {
    if sem
        .domains
        .get("WellFoundedOrder")
        .map(|d| d.type_params.len())
        != Some(1)
    {
        return Vec::new();
    }
    let mut out = Vec::new();
    for d in all_decreases(program) {
        let DecreasesKind::Tuple(exprs) = &d.kind else {
            continue;
        };
        for e in exprs {
            let ty = if predicate_instance_measure(e, sem).is_some() {
                Type::Domain("PredicateInstance".into(), vec![])
            } else {
                match sem.type_of(e.id) {
                    Some(t) => t.clone(),
                    None => continue,
                }
            };
            let instance = Type::Domain("WellFoundedOrder".into(), vec![ty]);
            if !out.contains(&instance) {
                out.push(instance);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_syntax::ast::NodeIdGen;
    use germanium_syntax::FileId;

    fn imports_of(src: &str) -> Vec<&'static str> {
        let mut ids = NodeIdGen::default();
        let (items, diags) = germanium_syntax::parse_file(FileId(0), src, &mut ids);
        assert!(diags.is_empty(), "{diags:?}");
        let program = Program {
            items,
            macros_expanded: true,
            expanded_macros: Vec::new(),
        };
        let (sem, errors) = crate::check_program(&program, ids.count());
        assert!(errors.is_empty(), "{errors:?}");
        termination_imports(&program, &sem)
    }

    #[test]
    fn imports_the_order_of_each_measure_type() {
        let src = "function f(x: Int, s: Seq[Int], p: Perm): Int decreases x, s, p { 0 }\n\
                   method m(r: Ref) decreases r { while (true) decreases true {} }";
        assert_eq!(
            imports_of(src),
            vec![
                "decreases/bool.vpr",
                "decreases/int.vpr",
                "decreases/perm.vpr",
                "decreases/ref.vpr",
                "decreases/seq.vpr"
            ]
        );
    }

    #[test]
    fn present_orders_and_other_types() {
        let src = "domain IntWellFoundedOrder {}\ndomain D {}\n\
                   function f(x: Int, d: D): Int decreases x, d { 0 }";
        assert_eq!(imports_of(src), vec!["decreases/declaration.vpr"]);
        let src = "domain WellFoundedOrder[T] {}\ndomain IntWellFoundedOrder {}\n\
                   function f(x: Int): Int decreases x { 0 }";
        assert!(imports_of(src).is_empty());
    }

    #[test]
    fn predicate_instances() {
        let src = "field n: Ref\npredicate P(x: Ref) { acc(x.n) }\n\
                   method m(x: Ref) requires P(x) decreases acc(P(x), 1/2) {}";
        assert_eq!(imports_of(src), vec!["decreases/predicate_instance.vpr"]);
        assert!(imports_of("method m() decreases _ {}").is_empty());
    }
}
