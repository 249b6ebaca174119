//! Proving a universally quantified goal `∀x. body` by its negation `¬body(k)` for fresh
//! constants `k`, with every Viper function application in `body(k)` marked relevant.
//! Z3 (with relevancy, which `case_split 3` needs) matches triggers only on terms of the
//! branch it explores: after `¬(f(k) ∧ g(k, j))` it may explore `¬f(k)` alone, never see
//! `g(k, j)`, and so never instantiate an assumed `∀x, y {g(x, y)}. f(x) ∧ g(x, y)`
//! (Silicon issue 5). An atom `relevant(t)` of a predicate nothing constrains keeps `t`
//! in view and changes nothing else.

use germanium_smt::{FunDecl, QuantifierKind, Sort, Symbol, Term, TermKind};
use germanium_syntax::Span;

use crate::rules::context::{Verifier, R};
use crate::rules::triggers;

/// The applications of Viper functions (heap-dependent or not) in `t`, outside quantifiers.
fn function_applications(t: &Term, out: &mut Vec<Term>) {
    match t.kind() {
        TermKind::Quantifier(_) => {}
        TermKind::App(decl, args) => {
            let viper_function = !args.is_empty()
                && decl
                    .name()
                    .user_name()
                    .is_some_and(|n| n.starts_with("sx.fn.") || n.starts_with("sx.fnl."));
            if viper_function && !out.contains(t) {
                out.push(t.clone());
            }
            for a in args {
                function_applications(a, out);
            }
        }
        _ => {
            for c in t.children() {
                function_applications(c, out);
            }
        }
    }
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// For a goal `∀x. body` that applies Viper functions: the facts whose joint
    /// unsatisfiability proves it (`¬body(k)` and the relevance atoms). `None` otherwise.
    pub fn skolemized_goal(&mut self, goal: &Term, span: Span) -> R<Option<Vec<Term>>> {
        let TermKind::Quantifier(q) = goal.kind() else {
            return Ok(None);
        };
        if q.kind != QuantifierKind::Forall {
            return Ok(None);
        }
        let mut apps = Vec::new();
        function_applications(&q.body, &mut apps);
        if apps.is_empty() {
            return Ok(None);
        }
        let mut map = std::collections::HashMap::new();
        for (symbol, sort) in &q.vars {
            let k = self.fresh("sk", sort.clone(), span)?;
            map.insert(Term::var(symbol.clone(), sort.clone()), k);
        }
        let body = triggers::substitute(&q.body, &map);
        let mut facts = vec![Term::not(body.clone())];
        let mut apps = Vec::new();
        function_applications(&body, &mut apps);
        for t in apps {
            let decl = self.relevance_predicate(t.sort(), span)?;
            facts.push(Term::app(&decl, vec![t]));
        }
        Ok(Some(facts))
    }

    pub(crate) fn relevance_predicate(&mut self, sort: &Sort, span: Span) -> R<FunDecl> {
        let decl = FunDecl::new(
            Symbol::user(&format!("sx.relevant.{sort}")),
            vec![sort.clone()],
            Sort::Bool,
        );
        self.ensure_declared(&decl, span)?;
        Ok(decl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applications_outside_quantifiers_are_collected_once() {
        let f = FunDecl::new(Symbol::user("sx.fn.f"), vec![Sort::Int], Sort::Bool);
        let d = FunDecl::new(Symbol::user("dom"), vec![Sort::Int], Sort::Int);
        let x = Term::int(1);
        let fx = Term::app(&f, vec![Term::app(&d, vec![x.clone()])]);
        let inner = Term::forall(
            vec![(Symbol::user("y"), Sort::Int)],
            Term::app(&f, vec![Term::var(Symbol::user("y"), Sort::Int)]),
            vec![],
        );
        let t = Term::and([
            Term::or([fx.clone(), Term::bool(false)]),
            Term::implies(inner, fx.clone()),
        ]);
        let mut out = Vec::new();
        function_applications(&t, &mut out);
        assert_eq!(out, vec![fx]);
    }
}
