//! Abstract read permissions (seed 003): `rd` is a positive amount below `write`, the
//! method's own, or a fresh one per call and per loop; `rdw` is a wildcard, `rdc(n)` is
//! `n` times a positive unit, `rd_token(tk)` and `rd_token_fresh(tk)` a positive amount per
//! token below `write`, `globalRd` one positive amount below `write`.
//!
//! What may be assumed of a fresh `rd` is decided when it is made, never by branching in
//! the solver: for each location the callee's precondition (or the loop's invariant) takes
//! `rd` from with a positive total coefficient `k`, where what is held there now exceeds
//! the rest of what is taken there (`c`, the amounts at `rd = 0`), `k * rd` stays below the
//! difference. Each such bound is an upper bound with a positive right-hand side that
//! names no `rd` of its own (seed 003's rule: a fresh amount is bounded only by larger
//! ones), so some positive `rd` meets them all; amounts that take `rd` away (`1/2 - rd`)
//! get nothing assumed, which keeps listings 8 and 10 of the seed unsound-free.

use germanium_smt::{Command, FunDecl, Sort, Symbol, Term};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind, ReadPermKind};
use germanium_verifier::errors::ErrorContext;

use crate::lower::{unsupported, Lower, R};
use crate::state::State;

fn epsilon() -> FunDecl {
    FunDecl::constant(Symbol::user("vcg%rdc"), Sort::Real)
}

fn global() -> FunDecl {
    FunDecl::constant(Symbol::user("vcg%globalRd"), Sort::Real)
}

fn token(reference: &Sort) -> FunDecl {
    FunDecl::new(
        Symbol::user("vcg%rdtoken"),
        vec![reference.clone()],
        Sort::Real,
    )
}

/// `0 < t < write`.
fn below_write(t: Term) -> Term {
    Term::and([
        Term::gt(t.clone(), Term::real(0, 1)),
        Term::lt(t, Term::real(1, 1)),
    ])
}

/// The read amounts' symbols and what holds of them.
pub fn commands(reference: &Sort) -> Vec<Command> {
    let token = token(reference);
    let t = Symbol::user("t");
    let of = Term::app(&token, vec![Term::var(t.clone(), reference.clone())]);
    vec![
        Command::DeclareFun(epsilon()),
        Command::DeclareFun(global()),
        Command::DeclareFun(token.clone()),
        Command::assert(Term::gt(Term::constant(&epsilon()), Term::real(0, 1))),
        Command::assert(below_write(Term::constant(&global()))),
        Command::assert(Term::forall(
            vec![(t, reference.clone())],
            below_write(of.clone()),
            vec![vec![of]],
        )),
    ]
}

/// Whether `e` mentions `rd` (then a call or loop gets a fresh one).
pub fn mentions_rd(e: &Expr) -> bool {
    let mut found = false;
    germanium_semantics::visit::walk_expr(e, &mut |x| {
        found |= matches!(x.kind, ExprKind::ReadPerm(ReadPermKind::Rd));
    });
    found
}

impl Lower<'_, '_> {
    /// The amount of a read permission expression.
    pub fn read_perm(
        &mut self,
        st: &State,
        guard: &Term,
        e: &Expr,
        kind: &ReadPermKind,
        ctx: &ErrorContext,
    ) -> R<Term> {
        if self.modes.binding || self.snapshot.is_some() {
            return unsupported(e.span, "a read permission in a quantifier or function");
        }
        Ok(match kind {
            ReadPermKind::Rd => match self.read_amount.clone() {
                Some(rd) => rd,
                None if self.verifying_function.is_some() => self.some_amount(),
                None => return unsupported(e.span, "`rd` here"),
            },
            ReadPermKind::Rdw => self.some_amount(),
            ReadPermKind::Rdc(n) => {
                let n = germanium_theories::operators::real(self.expr(st, guard, n, ctx)?);
                Term::mul(vec![n, Term::constant(&epsilon())])
            }
            ReadPermKind::RdToken(tk) | ReadPermKind::RdTokenFresh(tk) => {
                let tk = self.expr(st, guard, tk, ctx)?;
                Term::app(&token(&self.t.reference), vec![tk])
            }
            ReadPermKind::GlobalRd => Term::constant(&global()),
        })
    }

    /// A fresh `rd` of a method, a call or a loop, below the constant parts of the amounts
    /// of `contract` (in `st`): where `c + k * rd` has `c > 0`, it is positive (constants
    /// are of a larger level than any `rd`; the caller makes the same choice for the
    /// callee's `rd`, so what the callee assumes of its own is what its callers give).
    pub fn small_read_amount(&mut self, st: &State, contract: &[&Expr]) -> R<Term> {
        let rd = self.vc.fresh("rd", Sort::Real);
        self.vc.fact(below_write(rd.clone()));
        let mut amounts = Vec::new();
        for c in contract {
            germanium_semantics::visit::walk_expr(c, &mut |x| {
                if let ExprKind::Acc(_, Some(p)) = &x.kind {
                    if mentions_rd(p) {
                        amounts.push(&**p);
                    }
                }
            });
        }
        let saved = self.read_amount.take();
        let forms = self.leniently(|l| {
            let mut forms = Vec::new();
            let reach = st.reach.clone();
            let ctx = ErrorContext::at_conjunct("internal", "");
            for p in &amounts {
                l.read_amount = Some(Term::real(0, 1));
                let c = germanium_theories::operators::real(l.expr(st, &reach, p, &ctx)?);
                l.read_amount = Some(Term::real(1, 1));
                let one = germanium_theories::operators::real(l.expr(st, &reach, p, &ctx)?);
                forms.push((c.clone(), Term::sub(one, c)));
            }
            Ok(forms)
        });
        self.read_amount = saved;
        for (c, k) in forms? {
            let at_rd = Term::add(vec![c.clone(), self.product(k, rd.clone())]);
            self.vc.fact(Term::implies(
                Term::gt(c, Term::real(0, 1)),
                Term::gt(at_rd, Term::real(0, 1)),
            ));
        }
        Ok(rd)
    }

    /// A fresh `rd` for a call (the callee's contract in `st`, its precondition `clauses`)
    /// or a loop (its invariant), with the bounds of the module documentation.
    pub fn fresh_read_amount(
        &mut self,
        st: &State,
        contract: &[&Expr],
        clauses: &[&Expr],
    ) -> R<Term> {
        let rd = self.small_read_amount(st, contract)?;
        let mut atoms = Vec::new();
        for c in clauses {
            conjunct_atoms(c, &mut atoms);
        }
        let atoms: Vec<&Expr> = atoms.into_iter().filter(|a| mentions_rd(a)).collect();
        if atoms.is_empty() {
            return Ok(rd);
        }
        let saved = self.read_amount.take();
        let parts = self.leniently(|l| {
            let mut parts = Vec::new();
            for a in &atoms {
                l.read_amount = Some(Term::real(0, 1));
                let Some(at_zero) =
                    l.resource(st, a, &ErrorContext::at_conjunct("internal", ""))?
                else {
                    continue;
                };
                l.read_amount = Some(Term::real(1, 1));
                let Some(at_one) = l.resource(st, a, &ErrorContext::at_conjunct("internal", ""))?
                else {
                    continue;
                };
                let slope = Term::sub(at_one.amount, at_zero.amount.clone());
                parts.push((at_zero.map, at_zero.index, at_zero.amount, slope));
            }
            Ok(parts)
        });
        self.read_amount = saved;
        let parts = parts?;
        for (map, index, _, _) in &parts {
            let same = |m: &str, i: &Term| {
                if m == map {
                    Some(Term::eq(i.clone(), index.clone()))
                } else {
                    None
                }
            };
            let mut rest = Vec::new();
            let mut slope = Vec::new();
            for (m, i, c, k) in &parts {
                if let Some(here) = same(m, i) {
                    rest.push(Term::ite(here.clone(), c.clone(), Term::real(0, 1)));
                    slope.push(Term::ite(here, k.clone(), Term::real(0, 1)));
                }
            }
            let Some(mask) = st.memory.mask.get(map) else {
                continue;
            };
            let room = Term::sub(Term::select(mask.clone(), index.clone()), Term::add(rest));
            let taken = self.product(Term::add(slope), rd.clone());
            self.vc.fact(Term::implies(
                Term::gt(room.clone(), Term::real(0, 1)),
                Term::lt(taken, room),
            ));
        }
        Ok(rd)
    }

    /// Runs `f` with `rd` meaning `amount`.
    pub fn with_read_amount<T>(&mut self, amount: Term, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        let saved = self.read_amount.replace(amount);
        let r = f(self);
        self.read_amount = saved;
        r
    }
}

/// The `acc` atoms of the conjunctions at the top of `a` (not under a condition).
fn conjunct_atoms<'x>(a: &'x Expr, out: &mut Vec<&'x Expr>) {
    match &a.kind {
        ExprKind::Binary(BinaryOp::And, x, y) => {
            conjunct_atoms(x, out);
            conjunct_atoms(y, out);
        }
        ExprKind::Ascribed(x, _) | ExprKind::Annotated(_, x) => conjunct_atoms(x, out),
        ExprKind::Acc(..) | ExprKind::Call(..) => out.push(a),
        _ => {}
    }
}
