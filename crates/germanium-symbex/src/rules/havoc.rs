//! `quasihavoc` and `quasihavocall` on field locations and predicate instances: the values
//! (snapshots) of the chosen locations (instances) that the state holds, whatever the
//! amount, become unknown; permissions are unchanged. A chunk is havocked under the
//! condition that its arguments are one of the chosen ones; chunks that may be the same
//! location get the same new value.

use std::collections::HashMap;

use germanium_smt::{FunDecl, Term};
use germanium_syntax::ast::{Expr, Stmt};
use germanium_syntax::Span;

use crate::errors::ErrorContext;
use crate::resources;
use crate::rules::context::{Abort, Verifier, R};
use crate::rules::forperm::ResourcePattern;
use crate::rules::quantified::{location_vars, var_terms};
use crate::rules::triggers;
use crate::state::{Resource, State};

impl<'e, 'a> Verifier<'e, 'a> {
    /// The condition of a (quasi)havoc and the arguments of its resource, evaluated where
    /// the condition holds.
    fn havoc_target(
        &mut self,
        st: &State,
        heap: &crate::state::Heap,
        cond: Option<&Expr>,
        pattern: &crate::rules::forperm::ResourcePattern<'_>,
        ctx: &ErrorContext,
    ) -> R<(Term, Vec<Term>)> {
        let c = match cond {
            Some(c) => self.eval(st, heap, c, ctx)?,
            None => Term::tt(),
        };
        let mut args = Vec::new();
        for a in &pattern.args {
            args.push(self.under(c.clone(), |v| v.eval(st, heap, a, ctx))?);
        }
        Ok((c, args))
    }

    pub fn quasihavoc(
        &mut self,
        st: &mut State,
        s: &Stmt,
        cond: Option<&Expr>,
        res: &Expr,
    ) -> R<()> {
        let ctx = ErrorContext::at("quasihavoc.failed", s.span, "Quasihavoc might fail.");
        let pattern = self.resource_pattern(res, "`quasihavoc`")?;
        let heap = st.heap.clone();
        let (c, args) = self.havoc_target(st, &heap, cond, &pattern, &ctx)?;
        let sort = self.resource_sort(&pattern.resource, s.span)?;
        // One location: every chunk that may be it gets the same new value.
        let fresh = self.fresh(pattern.resource.name(), sort, s.span)?;
        for h in resources::held(&st.heap, Some(&pattern.resource)) {
            let same = resources::equal_args(self.env, &pattern.resource, &args, &h.args);
            let hit = Term::and([c.clone(), same]);
            resources::havoc_at(&mut st.heap, h.index, &hit, &fresh);
        }
        let sorts = self.location_sorts(&pattern.resource, s.span)?;
        let rs = location_vars(self, &sorts);
        let same = resources::equal_args(self.env, &pattern.resource, &args, &var_terms(&rs));
        let hit = Term::and([c, same]);
        resources::havoc_quantified(&mut st.heap, &pattern.resource, &rs, &hit, &fresh);
        Ok(())
    }

    /// `quasihavocall xs :: c(xs) ==> R(e(xs))`: `e` must be injective where `c` holds.
    pub fn quasihavocall(
        &mut self,
        st: &mut State,
        s: &Stmt,
        n_vars: usize,
        cond: Option<&Expr>,
        res: &Expr,
    ) -> R<()> {
        let ctx = ErrorContext::at("quasihavocall.failed", s.span, "Quasihavocall might fail.");
        let pattern = self.resource_pattern(res, "`quasihavocall`")?;
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
            vars.push((
                self.decider.fresh_symbol(&format!("sx.q.{}", info.name)),
                sort,
            ));
        }
        let heap = st.heap.clone();
        let depth = self.member.bound.len();
        self.member.bound.extend(first.iter().cloned());
        self.member.quantifier_depth += 1;
        let evaluated = self
            .push(s.span)
            .and_then(|_| self.havoc_target(st, &heap, cond, &pattern, &ctx));
        let popped = self.pop(s.span);
        self.member.quantifier_depth -= 1;
        self.member.bound.truncate(depth);
        self.member.deferred.clear();
        let (c, args) = evaluated?;
        popped?;
        // Where each variable is an argument on its own, a chunk's arguments give its value:
        // no quantifier and no injectivity check needed.
        let positions: Option<Vec<usize>> = first
            .iter()
            .map(|(_, t)| args.iter().position(|a| a == t))
            .collect();
        if positions.is_none() {
            // Named as Viper does: a field's receiver, a predicate's instance.
            let named = match pattern.resource {
                Resource::Predicate(_) | Resource::Wand(_) => res.span,
                Resource::Field(_) => pattern.args[0].span,
            };
            self.check_havocall_injective(s, named, &pattern, &c, &args, &first, &second)?;
        }
        let to_vars: HashMap<Term, Term> = first
            .iter()
            .zip(&vars)
            .map(|((_, t), (name, sort))| (t.clone(), Term::var(name.clone(), sort.clone())))
            .collect();
        // The new values: one fresh function of the location, so chunks that may be the
        // same location get the same new value.
        let sorts = self.location_sorts(&pattern.resource, s.span)?;
        let value_sort = self.resource_sort(&pattern.resource, s.span)?;
        let map = FunDecl::new(
            self.decider
                .fresh_symbol(&format!("havoc.{}", pattern.resource.name())),
            sorts.clone(),
            value_sort,
        );
        self.ensure_declared(&map, s.span)?;
        // Whether the location `actual` is one of those chosen.
        let chosen = |v: &Self, actual: &[Term]| -> Term {
            let same = v.pattern_args_equal(&pattern, &args, actual);
            match &positions {
                Some(positions) => {
                    let at: HashMap<Term, Term> = first
                        .iter()
                        .zip(positions)
                        .map(|((_, t), p)| (t.clone(), actual[*p].clone()))
                        .collect();
                    triggers::substitute(&Term::and([c.clone(), same]), &at)
                }
                None => Term::exists(
                    vars.clone(),
                    triggers::substitute(&Term::and([c.clone(), same]), &to_vars),
                    Vec::new(),
                ),
            }
        };
        for chunk in resources::held(&st.heap, Some(&pattern.resource)) {
            let hit = chosen(self, &chunk.args);
            let fresh = Term::app(&map, chunk.args.clone());
            resources::havoc_at(&mut st.heap, chunk.index, &hit, &fresh);
        }
        let rs = location_vars(self, &sorts);
        let r_terms = var_terms(&rs);
        let hit = chosen(self, &r_terms);
        let fresh = Term::app(&map, r_terms);
        resources::havoc_quantified(&mut st.heap, &pattern.resource, &rs, &hit, &fresh);
        Ok(())
    }

    /// Checks that distinct variable values satisfying the condition choose distinct
    /// locations (`quasihavocall.not.injective` otherwise).
    #[allow(clippy::too_many_arguments)]
    fn check_havocall_injective(
        &mut self,
        s: &Stmt,
        resource_span: Span,
        pattern: &ResourcePattern<'_>,
        c: &Term,
        args: &[Term],
        first: &[(germanium_semantics::VarId, Term)],
        second: &[Term],
    ) -> R<()> {
        let to_second: HashMap<Term, Term> = first
            .iter()
            .map(|(_, t)| t.clone())
            .zip(second.iter().cloned())
            .collect();
        let moved: Vec<Term> = args
            .iter()
            .map(|a| triggers::substitute(a, &to_second))
            .collect();
        let same_target = Term::and([
            c.clone(),
            triggers::substitute(c, &to_second),
            self.pattern_args_equal(pattern, args, &moved),
        ]);
        let same_vars = Term::and(
            first
                .iter()
                .zip(second)
                .map(|((_, a), b)| Term::eq(a.clone(), b.clone())),
        );
        if self.prove(Term::implies(same_target, same_vars), s.span)? || self.dead_path(s.span)? {
            return Ok(());
        }
        let text = crate::errors::text_of(self.env.sources, resource_span);
        self.add_error(germanium_syntax::Diagnostic::new(
            "quasihavocall.failed:quasihavocall.not.injective",
            s.span,
            format!("Quasihavocall might fail. The receiver {text} might not be injective."),
        ));
        Err(Abort::Failed)
    }
}
