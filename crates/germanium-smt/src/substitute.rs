//! Substitution in terms: every occurrence of a key of a map replaced by its value, with
//! the simplifying constructors rebuilding what changed.

use std::collections::HashMap;

use crate::term::{Op, Quantifier, Term, TermKind};

/// Replaces every occurrence of a key of `map` in `term` by its value.
pub fn substitute(term: &Term, map: &HashMap<Term, Term>) -> Term {
    if let Some(replacement) = map.get(term) {
        return replacement.clone();
    }
    match term.kind() {
        TermKind::Bool(_) | TermKind::Int(_) | TermKind::Real(_) | TermKind::Var(_) => term.clone(),
        TermKind::App(decl, args) => {
            if args.is_empty() {
                return term.clone();
            }
            Term::app(decl, args.iter().map(|a| substitute(a, map)).collect())
        }
        TermKind::Builtin(head, args) => Term::builtin(
            head,
            args.iter().map(|a| substitute(a, map)).collect(),
            term.sort().clone(),
        ),
        TermKind::Op(op, args) => {
            rebuild_op(*op, args.iter().map(|a| substitute(a, map)).collect())
        }
        TermKind::Quantifier(q) => Term::quantifier(Quantifier {
            kind: q.kind,
            vars: q.vars.clone(),
            body: substitute(&q.body, map),
            triggers: q
                .triggers
                .iter()
                .map(|t| t.iter().map(|x| substitute(x, map)).collect())
                .collect(),
            qid: q.qid.clone(),
            weight: q.weight,
        }),
        TermKind::Let(bindings, body) => Term::let_in(
            bindings
                .iter()
                .map(|(s, t)| (s.clone(), substitute(t, map)))
                .collect(),
            substitute(body, map),
        ),
    }
}

/// `op` applied to `args` through the simplifying constructors.
pub fn rebuild_op(op: Op, args: Vec<Term>) -> Term {
    match op {
        Op::And => return Term::and(args),
        Op::Or => return Term::or(args),
        Op::Distinct => return Term::distinct(args),
        Op::Add => return Term::add(args),
        Op::Mul => return Term::mul(args),
        Op::Sub if args.len() != 2 => {
            let mut it = args.into_iter();
            return Term::neg(it.next().unwrap_or_else(|| Term::int(0)));
        }
        _ => {}
    }
    let mut it = args.into_iter();
    let mut take = || it.next().unwrap_or_else(Term::tt);
    match op {
        Op::Not => Term::not(take()),
        Op::And | Op::Or | Op::Distinct | Op::Add | Op::Mul => unreachable!("handled above"),
        Op::Implies => {
            let a = take();
            Term::implies(a, take())
        }
        Op::Xor => {
            let a = take();
            Term::xor(a, take())
        }
        Op::Eq => {
            let a = take();
            Term::eq(a, take())
        }
        Op::Ite => {
            let c = take();
            let t = take();
            Term::ite(c, t, take())
        }
        Op::Sub => {
            let a = take();
            Term::sub(a, take())
        }
        Op::Neg => Term::neg(take()),
        Op::IntDiv => {
            let a = take();
            Term::int_div(a, take())
        }
        Op::Mod => {
            let a = take();
            Term::modulo(a, take())
        }
        Op::RealDiv => {
            let a = take();
            Term::real_div(a, take())
        }
        Op::Abs => Term::abs(take()),
        Op::Lt => {
            let a = take();
            Term::lt(a, take())
        }
        Op::Le => {
            let a = take();
            Term::le(a, take())
        }
        Op::Gt => {
            let a = take();
            Term::gt(a, take())
        }
        Op::Ge => {
            let a = take();
            Term::ge(a, take())
        }
        Op::ToReal => Term::to_real(take()),
        Op::ToInt => Term::to_int(take()),
        Op::IsInt => Term::is_int(take()),
        Op::Select => {
            let a = take();
            Term::select(a, take())
        }
        Op::Store => {
            let a = take();
            let i = take();
            Term::store(a, i, take())
        }
    }
}

/// `q` with its variables named by its nesting height (`b%{h}%{i}`): quantifiers equal up to
/// the names of their variables become one term, so a fact assumed at several places (a
/// contract read at each call) is one quantifier to the solver, instantiated once per match
/// instead of once per copy. A quantifier inside is lower, so no name is captured.
pub fn alpha_normal(q: Quantifier) -> Term {
    let mut height = quantifier_height(&q.body);
    for t in q.triggers.iter().flatten() {
        height = height.max(quantifier_height(t));
    }
    let height = height + 1;
    let mut renaming = HashMap::new();
    let vars: Vec<(crate::Symbol, crate::Sort)> = q
        .vars
        .iter()
        .enumerate()
        .map(|(i, (s, sort))| {
            let fresh = crate::Symbol::user(&format!("b%{height}%{i}"));
            renaming.insert(
                Term::var(s.clone(), sort.clone()),
                Term::var(fresh.clone(), sort.clone()),
            );
            (fresh, sort.clone())
        })
        .collect();
    Term::quantifier(Quantifier {
        kind: q.kind,
        vars,
        body: substitute(&q.body, &renaming),
        triggers: q
            .triggers
            .iter()
            .map(|t| t.iter().map(|x| substitute(x, &renaming)).collect())
            .collect(),
        qid: q.qid,
        weight: q.weight,
    })
}

/// How deep quantifiers nest in `t` (0 without any).
fn quantifier_height(t: &Term) -> usize {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![t.clone()];
    let mut height = 0;
    while let Some(x) = stack.pop() {
        if !seen.insert(x.clone()) {
            continue;
        }
        match x.kind() {
            TermKind::Quantifier(inner) => {
                let below = quantifier_height(&inner.body);
                height = height.max(below + 1);
            }
            TermKind::App(_, args) | TermKind::Builtin(_, args) | TermKind::Op(_, args) => {
                stack.extend(args.iter().cloned());
            }
            TermKind::Let(bindings, body) => {
                stack.extend(bindings.iter().map(|(_, v)| v.clone()));
                stack.push(body.clone());
            }
            _ => {}
        }
    }
    height
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FunDecl, Sort, Symbol};

    #[test]
    fn substitution_replaces_constants() {
        let c = Term::constant(&FunDecl::constant(Symbol::user("c"), Sort::Int));
        let v = Term::var(Symbol::user("v"), Sort::Int);
        let t = Term::add(vec![c.clone(), Term::int(1)]);
        let map: HashMap<Term, Term> = [(c, v.clone())].into_iter().collect();
        assert_eq!(substitute(&t, &map), Term::add(vec![v, Term::int(1)]));
    }
}

#[cfg(test)]
mod alpha_tests {
    use super::*;
    use crate::{QuantifierKind, Sort, Symbol};

    fn forall(var: &str, body: impl Fn(Term) -> Term) -> Quantifier {
        let v = Term::var(Symbol::user(var), Sort::Int);
        Quantifier {
            kind: QuantifierKind::Forall,
            vars: vec![(Symbol::user(var), Sort::Int)],
            body: body(v),
            triggers: vec![],
            qid: None,
            weight: None,
        }
    }

    #[test]
    fn quantifiers_equal_up_to_names_become_one_term() {
        let a = alpha_normal(forall("x", |x| Term::gt(x, Term::int(0))));
        let b = alpha_normal(forall("y", |y| Term::gt(y, Term::int(0))));
        assert_eq!(a, b);
        let c = alpha_normal(forall("y", |y| Term::gt(y, Term::int(1))));
        assert_ne!(a, c);
    }

    #[test]
    fn an_inner_quantifier_does_not_capture_the_outer_variable() {
        // forall x :: forall y :: x < y, each normalized as it is built (inside first).
        let outer = forall("x", |x| {
            alpha_normal(forall("y", |y| Term::lt(x.clone(), y)))
        });
        let t = alpha_normal(outer);
        let TermKind::Quantifier(q) = t.kind() else {
            panic!("a quantifier")
        };
        let TermKind::Quantifier(inner) = q.body.kind() else {
            panic!("a quantifier inside")
        };
        assert_ne!(q.vars[0].0, inner.vars[0].0);
    }
}
