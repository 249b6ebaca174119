//! Which `unfolding`s in a function's body give its definitional axiom an extra trigger
//! `{f%stateless(xs), P%trigger(s, args)}` (see `function_axioms`): the outermost unfolding
//! around each call back into the function's own recursive group, as in Silicon. An
//! unfolding around nothing recursive would only re-instantiate the axiom for the same
//! arguments, or chain instantiations along calls the program never makes (a matching
//! loop that unrolls a recursion to any depth; silver issue 895).

use std::collections::{HashMap, HashSet};

use germanium_semantics::{visit, CallTarget, Semantics};
use germanium_syntax::ast::{Expr, ExprKind, Function, NodeId};

use germanium_semantics::calls::reaches;

/// The ids of the predicate-access expressions of those unfoldings in `f`'s body.
pub fn recursive_unfoldings(
    f: &Function,
    sem: &Semantics,
    call_graph: &HashMap<String, HashSet<String>>,
) -> HashSet<NodeId> {
    let mut out = HashSet::new();
    if let Some(body) = &f.body {
        collect(body, &f.name.name, sem, call_graph, None, &mut out);
    }
    out
}

/// `outermost`: the access of the outermost unfolding around `e`, if any.
fn collect(
    e: &Expr,
    caller: &str,
    sem: &Semantics,
    graph: &HashMap<String, HashSet<String>>,
    outermost: Option<NodeId>,
    out: &mut HashSet<NodeId>,
) {
    match &e.kind {
        // The unfolded access itself is not looked into (as in Silicon).
        ExprKind::Unfolding(access, body) => {
            collect(body, caller, sem, graph, outermost.or(Some(access.id)), out)
        }
        _ => {
            if let (Some(CallTarget::Function(callee)), Some(access)) = (sem.call(e.id), outermost)
            {
                if reaches(graph, callee, caller) {
                    out.insert(access);
                }
            }
            for c in visit::children(e) {
                collect(c, caller, sem, graph, outermost, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_syntax::ast::ItemKind;

    fn unfolded_predicates(src: &str, function: &str) -> Vec<String> {
        let (program, sem) = germanium_theories::testing::checked(src);
        let graph = germanium_semantics::calls::function_call_graph(&program, &sem);
        let f = program
            .items
            .iter()
            .find_map(|i| match &i.kind {
                ItemKind::Function(f) if f.name.name == function => Some(f),
                _ => None,
            })
            .expect("function");
        let ids = recursive_unfoldings(f, &sem, &graph);
        let mut names = Vec::new();
        visit::walk_expr(f.body.as_ref().unwrap(), &mut |x: &Expr| {
            if let ExprKind::Unfolding(access, _) = &x.kind {
                if ids.contains(&access.id) {
                    let text = match &access.kind {
                        ExprKind::Call(name, _) => name.name.clone(),
                        _ => "?".into(),
                    };
                    names.push(text);
                }
            }
        });
        names
    }

    const PROGRAM: &str = "
field next: Ref
predicate P() { true }
predicate L(x: Ref) { acc(x.next) && (x.next != null ==> L(x.next)) }
function mark(): Bool { true }
function loop(n: Int): Bool requires P() { n <= 0 ? true : (unfolding P() in mark()) && loop(n - 1) }
function len(x: Ref): Int requires L(x) { unfolding L(x) in (x.next == null ? 1 : 1 + len(x.next)) }
function even(x: Ref): Bool requires L(x) { unfolding L(x) in (x.next == null ? true : odd(x.next)) }
function odd(x: Ref): Bool requires L(x) { unfolding L(x) in (x.next == null ? false : even(x.next)) }
method m() {}
";

    #[test]
    fn an_unfolding_around_a_call_of_another_function_is_no_trigger() {
        assert!(unfolded_predicates(PROGRAM, "loop").is_empty());
    }

    #[test]
    fn an_unfolding_around_a_recursive_call_is_one() {
        assert_eq!(unfolded_predicates(PROGRAM, "len"), vec!["L".to_string()]);
        assert_eq!(unfolded_predicates(PROGRAM, "even"), vec!["L".to_string()]);
    }
}
