//! Trigger inference for quantified domain axioms written without triggers.
//!
//! A candidate is an application of a declared function in the body that mentions some of
//! the quantified variables, each only as an argument of declared functions (never under
//! arithmetic or another interpreted symbol, which E-matching cannot see through), and no
//! variable bound inside the body. Preferred are the smallest candidates mentioning all
//! variables, each an alternative trigger; failing that, one multi-trigger made of
//! candidates that together mention all variables. If neither exists no trigger is given
//! (Z3 then picks its own or ignores the quantifier: weaker, never unsound).

use std::collections::BTreeSet;

use germanium_smt::{Symbol, Term, TermKind};

/// At most this many alternative triggers are inferred.
const MAX_ALTERNATIVES: usize = 4;

/// Triggers for a quantifier over `vars` (bound variables, as made by `Term::var`) with
/// body `body`.
pub(crate) fn infer(vars: &[Term], body: &Term) -> Vec<Vec<Term>> {
    let names: Vec<Symbol> = vars
        .iter()
        .filter_map(|v| match v.kind() {
            TermKind::Var(name) => Some(name.clone()),
            _ => None,
        })
        .collect();
    if names.is_empty() {
        return Vec::new();
    }
    let mut candidates: Vec<(Term, BTreeSet<usize>)> = Vec::new();
    collect(body, &names, &mut Vec::new(), &mut candidates);

    let everything: BTreeSet<usize> = (0..names.len()).collect();
    let full: Vec<&Term> = candidates
        .iter()
        .filter(|(_, c)| *c == everything)
        .map(|(t, _)| t)
        .collect();
    let minimal: Vec<&Term> = full
        .iter()
        .copied()
        .filter(|t| {
            !full
                .iter()
                .any(|u| !u.same_node(t) && *u != *t && contains(t, u))
        })
        .collect();
    let mut out: Vec<Vec<Term>> = Vec::new();
    for t in minimal {
        if !out.iter().any(|o| o[0] == *t) && out.len() < MAX_ALTERNATIVES {
            out.push(vec![t.clone()]);
        }
    }
    if !out.is_empty() {
        return out;
    }
    // A multi-trigger: greedily the candidate adding the most uncovered variables.
    let mut covered = BTreeSet::new();
    let mut multi = Vec::new();
    while covered != everything {
        let best = candidates
            .iter()
            .max_by_key(|(_, c)| c.difference(&covered).count())
            .filter(|(_, c)| c.difference(&covered).count() > 0);
        let Some((t, c)) = best else {
            return Vec::new();
        };
        covered.extend(c.iter().copied());
        multi.push(t.clone());
    }
    vec![multi]
}

/// Whether `inner` occurs in `outer`.
fn contains(outer: &Term, inner: &Term) -> bool {
    let mut stack = vec![outer];
    while let Some(t) = stack.pop() {
        if t == inner {
            return true;
        }
        stack.extend(t.children());
    }
    false
}

/// Walks `t`, recording every valid candidate with the variables it mentions. `inner`
/// holds variables bound by quantifiers and lets inside the body.
fn collect(
    t: &Term,
    vars: &[Symbol],
    inner: &mut Vec<Symbol>,
    out: &mut Vec<(Term, BTreeSet<usize>)>,
) {
    match t.kind() {
        TermKind::App(_, args) => {
            if let Some(mentioned) = mentions(t, vars, inner) {
                if !mentioned.is_empty() && !out.iter().any(|(u, _)| u == t) {
                    out.push((t.clone(), mentioned));
                }
            }
            for a in args {
                collect(a, vars, inner, out);
            }
        }
        TermKind::Quantifier(q) => {
            let depth = inner.len();
            inner.extend(q.vars.iter().map(|(n, _)| n.clone()));
            collect(&q.body, vars, inner, out);
            inner.truncate(depth);
        }
        TermKind::Let(bindings, body) => {
            for (_, value) in bindings {
                collect(value, vars, inner, out);
            }
            let depth = inner.len();
            inner.extend(bindings.iter().map(|(n, _)| n.clone()));
            collect(body, vars, inner, out);
            inner.truncate(depth);
        }
        _ => {
            for c in t.children() {
                collect(c, vars, inner, out);
            }
        }
    }
}

/// The quantified variables `t` mentions, or `None` if `t` is not a valid trigger term
/// (a variable under an interpreted symbol, or an inner bound variable).
fn mentions(t: &Term, vars: &[Symbol], inner: &[Symbol]) -> Option<BTreeSet<usize>> {
    match t.kind() {
        TermKind::Var(name) => {
            if inner.contains(name) {
                None
            } else {
                Some(vars.iter().position(|v| v == name).into_iter().collect())
            }
        }
        TermKind::App(_, args) => {
            let mut all = BTreeSet::new();
            for a in args {
                all.extend(mentions(a, vars, inner)?);
            }
            Some(all)
        }
        // Interpreted or binding terms are fine as arguments only when they mention no
        // variable at all.
        _ => {
            let free = free_vars(t);
            if free.iter().any(|n| vars.contains(n) || inner.contains(n)) {
                None
            } else {
                Some(BTreeSet::new())
            }
        }
    }
}

/// Variable symbols occurring in `t` (bound ones included: a conservative over-approximation).
fn free_vars(t: &Term) -> Vec<Symbol> {
    let mut out = Vec::new();
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        if let TermKind::Var(name) = t.kind() {
            out.push(name.clone());
        }
        stack.extend(t.children());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_smt::{FunDecl, Sort};

    fn f1(name: &str) -> FunDecl {
        FunDecl::new(Symbol::user(name), vec![Sort::Int], Sort::Int)
    }

    #[test]
    fn picks_smallest_application_with_all_variables() {
        let (f, g) = (f1("f"), f1("g"));
        let x = Term::var(Symbol::user("x"), Sort::Int);
        let fx = Term::app(&f, vec![x.clone()]);
        let body = Term::eq(Term::app(&g, vec![fx.clone()]), x.clone());
        assert_eq!(infer(&[x], &body), vec![vec![fx]]);
    }

    #[test]
    fn arithmetic_on_a_variable_is_not_a_trigger_and_multi_triggers_cover() {
        let f = f1("f");
        let (x, y) = (
            Term::var(Symbol::user("x"), Sort::Int),
            Term::var(Symbol::user("y"), Sort::Int),
        );
        let f_plus = Term::app(&f, vec![Term::add(vec![x.clone(), Term::int(1)])]);
        let fx = Term::app(&f, vec![x.clone()]);
        let fy = Term::app(&f, vec![y.clone()]);
        let body = Term::implies(
            Term::lt(fx.clone(), fy.clone()),
            Term::lt(f_plus, fy.clone()),
        );
        let triggers = infer(&[x.clone(), y.clone()], &body);
        assert_eq!(triggers.len(), 1);
        assert_eq!(triggers[0].len(), 2);
        assert!(triggers[0].contains(&fx) && triggers[0].contains(&fy));
        // Nothing usable at all: no trigger.
        assert!(infer(std::slice::from_ref(&x), &Term::lt(x.clone(), Term::int(3))).is_empty());
    }
}
