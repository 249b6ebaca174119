//! Term utilities for quantifiers: substitution of constants by bound variables, and
//! trigger inference when the program gives none (as Viper does: applications of
//! uninterpreted or theory functions that mention every bound variable).

#[cfg(test)]
use germanium_smt::Sort;
use germanium_smt::{Op, Symbol, Term, TermKind};

pub use germanium_smt::substitute;

/// The bound variables (by name) occurring in `term`.
fn vars_in(term: &Term, vars: &[Symbol], out: &mut Vec<Symbol>) {
    match term.kind() {
        TermKind::Var(s) => {
            if vars.contains(s) && !out.contains(s) {
                out.push(s.clone());
            }
        }
        TermKind::Quantifier(q) => vars_in(&q.body, vars, out),
        _ => {
            for c in term.children() {
                vars_in(c, vars, out);
            }
        }
    }
}

/// Whether `t` contains `x`.
pub fn mentions(t: &Term, x: &Term) -> bool {
    t == x || t.children().into_iter().any(|c| mentions(c, x))
}

/// Whether `term` may appear in a pattern: an application whose arguments are built from
/// variables, constants, literals, integer arithmetic and further applications (Z3 matches
/// arithmetic inside patterns; connectives, equalities and `ite` are not allowed).
pub fn pattern_safe(term: &Term) -> bool {
    match term.kind() {
        TermKind::Var(_) | TermKind::Bool(_) | TermKind::Int(_) | TermKind::Real(_) => true,
        TermKind::App(_, args) => args.iter().all(pattern_safe),
        TermKind::Op(Op::Add | Op::Sub | Op::Mul | Op::Neg | Op::ToReal, args) => {
            args.iter().all(pattern_safe)
        }
        _ => false,
    }
}

fn candidates(term: &Term, vars: &[Symbol], out: &mut Vec<Term>) {
    if let TermKind::Quantifier(_) = term.kind() {
        return; // nested binders: their variables would be free in a pattern
    }
    if let TermKind::App(_, args) = term.kind() {
        if !args.is_empty() && pattern_safe(term) {
            let mut found = Vec::new();
            vars_in(term, vars, &mut found);
            if !found.is_empty() && !out.contains(term) {
                out.push(term.clone());
            }
        }
    }
    for c in term.children() {
        candidates(c, vars, out);
    }
}

/// Whether a user-given pattern can be sent to the solver: applications built from
/// applications, variables and literals, together mentioning every variable.
pub fn valid_pattern(vars: &[Symbol], terms: &[Term]) -> bool {
    let mut found = Vec::new();
    for t in terms {
        if !matches!(t.kind(), TermKind::App(_, args) if !args.is_empty()) || !pattern_safe(t) {
            return false;
        }
        vars_in(t, vars, &mut found);
    }
    found.len() == vars.len()
}

/// Triggers for a quantifier over `vars` with `body`: each minimal application covering all
/// variables as its own pattern; else one multi-pattern covering them; else none.
pub fn infer(vars: &[Symbol], body: &Term) -> Vec<Vec<Term>> {
    infer_in(vars, std::slice::from_ref(body))
}

/// [`infer`] for a quantifier whose body mentions the terms `parts`.
pub fn infer_in(vars: &[Symbol], parts: &[Term]) -> Vec<Vec<Term>> {
    let mut cands = Vec::new();
    for part in parts {
        candidates(part, vars, &mut cands);
    }
    let covers = |t: &Term| {
        let mut found = Vec::new();
        vars_in(t, vars, &mut found);
        found.len() == vars.len()
    };
    let full: Vec<&Term> = cands.iter().filter(|t| covers(t)).collect();
    let contains = |outer: &Term, inner: &Term| -> bool {
        let mut stack = outer.children();
        while let Some(t) = stack.pop() {
            if t == inner {
                return true;
            }
            stack.extend(t.children());
        }
        false
    };
    let minimal: Vec<Vec<Term>> = full
        .iter()
        .filter(|t| !full.iter().any(|u| u != *t && contains(t, u)))
        .map(|t| vec![(*t).clone()])
        .collect();
    if !minimal.is_empty() {
        return minimal;
    }
    // A multi-pattern: greedily add the candidate covering most uncovered variables.
    let mut chosen: Vec<Term> = Vec::new();
    let mut covered: Vec<Symbol> = Vec::new();
    while covered.len() < vars.len() {
        let best = cands
            .iter()
            .map(|t| {
                let mut found = Vec::new();
                vars_in(t, vars, &mut found);
                let new = found.iter().filter(|v| !covered.contains(v)).count();
                (new, t, found)
            })
            .filter(|(new, _, _)| *new > 0)
            .max_by_key(|(new, _, _)| *new);
        match best {
            Some((_, t, found)) => {
                chosen.push(t.clone());
                for v in found {
                    if !covered.contains(&v) {
                        covered.push(v);
                    }
                }
            }
            None => return Vec::new(),
        }
    }
    vec![chosen]
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_smt::FunDecl;

    #[test]
    fn infers_an_application_covering_the_variable() {
        let f = FunDecl::new(Symbol::user("f"), vec![Sort::Int], Sort::Int);
        let i = Symbol::user("i");
        let x = Term::var(i.clone(), Sort::Int);
        let body = Term::gt(
            Term::app(&f, vec![x.clone()]),
            Term::add(vec![x, Term::int(1)]),
        );
        let triggers = infer(&[i], &body);
        assert_eq!(triggers.len(), 1);
        assert_eq!(triggers[0].len(), 1);
    }

    #[test]
    fn arithmetic_alone_gives_no_trigger() {
        let i = Symbol::user("i");
        let x = Term::var(i.clone(), Sort::Int);
        let body = Term::gt(Term::add(vec![x.clone(), Term::int(1)]), x);
        assert!(infer(&[i], &body).is_empty());
    }
}
