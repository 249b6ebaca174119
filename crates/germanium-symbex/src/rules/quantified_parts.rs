//! The parts of a quantified assertion's body: its accessibility predicates, each with the
//! conditions, `let`s and nested quantifiers it is under, and its pure conjuncts, which
//! are read as quantifiers of their own (`forall xs :: c ==> acc(x.f) && x.f > 0` is
//! `forall xs :: c ==> acc(x.f)`, then `forall xs :: c ==> x.f > 0`).

use germanium_semantics::Semantics;
use germanium_smt::{Sort, Symbol, Term};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind, QuantifierKind};

use crate::env::analysis::is_impure;
use crate::errors::ErrorContext;
use crate::rules::context::{Verifier, R};
use crate::state::{Heap, State};

/// What an accessibility predicate in a quantifier's body is under.
#[derive(Clone, Copy)]
pub(crate) enum Guard<'x> {
    /// `c ==> ..`, `c ? .. : _`
    Holds(&'x Expr),
    /// `c ? _ : ..`
    Fails(&'x Expr),
    /// `let x == v in ..` (the `let` expression)
    Let(&'x Expr),
    /// `forall ys :: ..` nested (the quantifier): more bound variables.
    Vars(&'x Expr),
}

/// One conjunct of a quantifier's body with what it is under: an accessibility predicate,
/// or a pure assertion.
pub(crate) struct Part<'x> {
    pub guards: Vec<Guard<'x>>,
    pub expr: &'x Expr,
    pub pure: bool,
}

/// A quantifier's body split into its conjuncts, in order.
#[derive(Default)]
pub(crate) struct BodyParts<'x> {
    pub parts: Vec<Part<'x>>,
}

impl<'x> BodyParts<'x> {
    pub fn of(sem: &Semantics, body: &'x Expr) -> BodyParts<'x> {
        let mut parts = BodyParts::default();
        parts.split(sem, body, Vec::new());
        parts
    }

    /// The parts of the quantifier `e` (none if it is not one).
    pub fn of_quantifier(sem: &Semantics, e: &'x Expr) -> BodyParts<'x> {
        match &e.kind {
            ExprKind::Quantifier { body, .. } => BodyParts::of(sem, body),
            _ => BodyParts::default(),
        }
    }

    /// The accessibility predicates, in order.
    pub fn accesses(&self) -> impl Iterator<Item = &Part<'x>> {
        self.parts.iter().filter(|p| !p.pure)
    }

    fn split(&mut self, sem: &Semantics, e: &'x Expr, guards: Vec<Guard<'x>>) {
        if !is_impure(sem, e) {
            self.parts.push(Part {
                guards,
                expr: e,
                pure: true,
            });
            return;
        }
        let with = |mut guards: Vec<Guard<'x>>, g| {
            guards.push(g);
            guards
        };
        match &e.kind {
            ExprKind::Binary(BinaryOp::Implies, c, rest) => {
                self.split(sem, rest, with(guards, Guard::Holds(c)))
            }
            ExprKind::Binary(BinaryOp::And, l, r) => {
                let copy = guards.clone();
                self.split(sem, l, copy);
                self.split(sem, r, guards);
            }
            ExprKind::Cond(c, a, b) => {
                let copy = guards.clone();
                self.split(sem, a, with(copy, Guard::Holds(c)));
                self.split(sem, b, with(guards, Guard::Fails(c)));
            }
            ExprKind::Let(_, _, body) => self.split(sem, body, with(guards, Guard::Let(e))),
            ExprKind::Quantifier {
                kind: QuantifierKind::Forall,
                body,
                ..
            } => self.split(sem, body, with(guards, Guard::Vars(e))),
            ExprKind::Annotated(a, body) if a.name.name != "reveal" => {
                self.split(sem, body, guards)
            }
            _ => self.parts.push(Part {
                guards,
                expr: e,
                pure: false,
            }),
        }
    }
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// The condition the guards of one access in a quantifier's body put it under; `let`s
    /// and nested quantifiers bind their variables (nested ones add to `vars` and `at`).
    pub(crate) fn read_guards(
        &mut self,
        st: &State,
        heap: &Heap,
        guards: &[Guard],
        vars: &mut Vec<(Symbol, Sort)>,
        at: &mut Vec<Term>,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let mut cond = self.guard();
        for guard in guards {
            match *guard {
                Guard::Holds(c) => {
                    let t = self.under(cond.clone(), |v| v.eval(st, heap, c, ctx))?;
                    cond = Term::and([cond, t]);
                }
                Guard::Fails(c) => {
                    let t = self.under(cond.clone(), |v| v.eval(st, heap, c, ctx))?;
                    cond = Term::and([cond, Term::not(t)]);
                }
                Guard::Let(e) => {
                    let ExprKind::Let(_, value, _) = &e.kind else {
                        continue;
                    };
                    let t = self.under(cond.clone(), |v| v.eval(st, heap, value, ctx))?;
                    let Some(var) = self.env.sem.binders.get(&(e.id, 0)).copied() else {
                        return Err(self.unsupported(e.span, "this `let`"));
                    };
                    self.member.bound.push((var, t));
                }
                Guard::Vars(q) => {
                    let ExprKind::Quantifier { vars: declared, .. } = &q.kind else {
                        continue;
                    };
                    for i in 0..declared.len() {
                        let (var, symbol, constant) = self.bound_variable(q, i)?;
                        vars.push(symbol);
                        at.push(constant.clone());
                        self.member.bound.push((var, constant));
                    }
                }
            }
        }
        Ok(cond)
    }

    /// Variable `i` of the quantifier `q`: its binder, a fresh bound variable and a fresh
    /// constant standing for it.
    pub(crate) fn bound_variable(
        &mut self,
        q: &Expr,
        i: usize,
    ) -> R<(germanium_semantics::VarId, (Symbol, Sort), Term)> {
        let Some(var) = self.env.sem.binders.get(&(q.id, i)).copied() else {
            return Err(self.unsupported(q.span, "this quantifier"));
        };
        let info = self.env.sem.var(var).clone();
        let sort = self.sort_of(&info.ty, q.span)?;
        let constant = self.fresh(&info.name, sort.clone(), q.span)?;
        let symbol = self.decider.fresh_symbol(&format!("sx.q.{}", info.name));
        Ok((var, (symbol, sort), constant))
    }

    /// The pure conjunct `part` of the quantifier `e`, as a quantifier of its own.
    pub(crate) fn eval_pure_part(
        &mut self,
        st: &State,
        heap: &Heap,
        e: &Expr,
        part: &Part,
        ctx: &ErrorContext,
    ) -> R<Term> {
        self.eval_guarded(st, heap, e, &part.guards, part.expr, ctx)
    }

    /// `x` under `guards` in the body of the quantifier `q`.
    fn eval_guarded(
        &mut self,
        st: &State,
        heap: &Heap,
        q: &Expr,
        guards: &[Guard],
        x: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let ExprKind::Quantifier {
            kind,
            vars,
            triggers,
            ..
        } = &q.kind
        else {
            return Err(self.unsupported(q.span, "this quantifier"));
        };
        let n = vars.len();
        self.eval_quantifier_with(st, heap, q, *kind, n, triggers, ctx, |v| {
            v.eval_under(st, heap, guards, x, ctx)
        })
    }

    /// `x` under `guards` (up to the next nested quantifier).
    fn eval_under(
        &mut self,
        st: &State,
        heap: &Heap,
        guards: &[Guard],
        x: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let Some((first, rest)) = guards.split_first() else {
            return self.eval(st, heap, x, ctx);
        };
        match *first {
            Guard::Holds(c) | Guard::Fails(c) => {
                let mut t = self.eval(st, heap, c, ctx)?;
                if matches!(first, Guard::Fails(_)) {
                    t = Term::not(t);
                }
                let body = self.under(t.clone(), |v| v.eval_under(st, heap, rest, x, ctx))?;
                Ok(Term::implies(t, body))
            }
            Guard::Let(l) => {
                let ExprKind::Let(_, value, _) = &l.kind else {
                    return Err(self.unsupported(l.span, "this `let`"));
                };
                let t = self.eval(st, heap, value, ctx)?;
                let Some(var) = self.env.sem.binders.get(&(l.id, 0)).copied() else {
                    return Err(self.unsupported(l.span, "this `let`"));
                };
                self.member.bound.push((var, t));
                let r = self.eval_under(st, heap, rest, x, ctx);
                self.member.bound.pop();
                r
            }
            Guard::Vars(q) => self.eval_guarded(st, heap, q, rest, x, ctx),
        }
    }
}
