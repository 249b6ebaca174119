//! `quasihavoc` and `quasihavocall` on fields: the values of the chosen locations that the
//! state holds permission to become unknown (permissions are unchanged).

use std::collections::HashMap;

use germanium_smt::{Term};
use germanium_syntax::ast::{Expr, ExprKind, Stmt};

use crate::context::{Abort, Verifier, R};
use crate::errors::ErrorContext;
use crate::state::State;
use crate::triggers;

impl<'e, 'a> Verifier<'e, 'a> {
    pub fn quasihavoc(&mut self, st: &mut State, s: &Stmt, cond: Option<&Expr>, res: &Expr) -> R<()> {
        let ctx = ErrorContext::at("quasihavoc.failed", s.span, "Quasihavoc might fail.");
        let (field, rcv) = self.field_location(res)?;
        let heap = st.heap.clone();
        let c = match cond {
            Some(c) => self.eval(st, &heap, c, &ctx)?,
            None => Term::tt(),
        };
        let r = self.under(c.clone(), |v| v.eval(st, &heap, rcv, &ctx))?;
        let indices: Vec<usize> = st.heap.of_field(&field).collect();
        for i in indices {
            let chunk = st.heap.chunks[i].clone();
            let fresh = self.fresh(&field, chunk.value().sort().clone(), s.span)?;
            let hit = Term::and([c.clone(), Term::eq(r.clone(), chunk.receiver().clone())]);
            st.heap.chunks[i].set_value(Term::ite(hit, fresh, chunk.value().clone()));
        }
        Ok(())
    }

    /// `quasihavocall xs :: c(xs) ==> r(xs).f`: `r` must be injective where `c` holds.
    pub fn quasihavocall(&mut self, st: &mut State, s: &Stmt, n_vars: usize, cond: Option<&Expr>, res: &Expr) -> R<()> {
        let ctx = ErrorContext::at("quasihavocall.failed", s.span, "Quasihavocall might fail.");
        let (field, rcv) = self.field_location(res)?;
        let mut first = Vec::new();
        let mut second = Vec::new();
        let mut vars = Vec::new();
        for i in 0..n_vars {
            let Some(var) = self.env.sem.binders.get(&(s.id, i)).copied() else {
                return Err(self.unsupported(s.span, "this `quasihavocall`"));
            };
            let info = self.env.sem.var(var).clone();
            let sort = self.sort_of(&info.ty, s.span)?;
            first.push((var, self.fresh(&info.name, sort.clone(), s.span)?));
            second.push(self.fresh(&info.name, sort.clone(), s.span)?);
            vars.push((self.names.fresh(&format!("sx.q.{}", info.name)), sort));
        }
        let heap = st.heap.clone();
        let depth = self.bound.len();
        self.bound.extend(first.iter().cloned());
        self.quantifier_depth += 1;
        let evaluated = self.push(s.span).and_then(|_| {
            let c = match cond {
                Some(c) => self.eval(st, &heap, c, &ctx)?,
                None => Term::tt(),
            };
            let r = self.under(c.clone(), |v| v.eval(st, &heap, rcv, &ctx))?;
            Ok((c, r))
        });
        let popped = self.pop(s.span);
        self.quantifier_depth -= 1;
        self.bound.truncate(depth);
        self.deferred.clear();
        let (c, r) = evaluated?;
        popped?;
        let to_second: HashMap<Term, Term> = first.iter().map(|(_, t)| t.clone()).zip(second.iter().cloned()).collect();
        let receiver_is_variable = matches!(&rcv.kind, ExprKind::Ident(_)) && n_vars == 1 && r == first[0].1;
        if !receiver_is_variable {
            let same_target = Term::and([
                c.clone(),
                triggers::substitute(&c, &to_second),
                Term::eq(r.clone(), triggers::substitute(&r, &to_second)),
            ]);
            let same_vars = Term::and(first.iter().zip(&second).map(|((_, a), b)| Term::eq(a.clone(), b.clone())));
            if !self.prove(Term::implies(same_target, same_vars), s.span)? && !self.dead_path(s.span)? {
                let text = crate::errors::text_of(self.env.sources, rcv.span);
                self.errors.push(germanium_syntax::Diagnostic::new(
                    "quasihavocall.failed:quasihavocall.not.injective",
                    s.span,
                    format!("Quasihavocall might fail. The receiver {text} might not be injective."),
                ));
                return Err(Abort::Failed);
            }
        }
        let to_vars: HashMap<Term, Term> =
            first.iter().zip(&vars).map(|((_, t), (name, sort))| (t.clone(), Term::var(name.clone(), sort.clone()))).collect();
        let indices: Vec<usize> = st.heap.of_field(&field).collect();
        for i in indices {
            let chunk = st.heap.chunks[i].clone();
            let hit = if receiver_is_variable {
                let at: HashMap<Term, Term> = [(first[0].1.clone(), chunk.receiver().clone())].into_iter().collect();
                triggers::substitute(&c, &at)
            } else {
                let body = Term::and([c.clone(), Term::eq(r.clone(), chunk.receiver().clone())]);
                Term::exists(vars.clone(), triggers::substitute(&body, &to_vars), Vec::new())
            };
            let fresh = self.fresh(&field, chunk.value().sort().clone(), s.span)?;
            st.heap.chunks[i].set_value(Term::ite(hit, fresh, chunk.value().clone()));
        }
        Ok(())
    }
}
