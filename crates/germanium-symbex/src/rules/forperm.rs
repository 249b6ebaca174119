//! `forperm xs [r1, ..., rk] :: body`: the body holds for every `xs` for which the current
//! state holds positive permission to one of the resources `ri(xs)` (a field location or a
//! predicate instance). With heap chunks this is a finite conjunction: for each chunk of
//! the resource with positive permission, the bound variables are read off the chunk's
//! arguments (each must occur as an argument on its own), the remaining arguments must
//! match, and then the body must hold. Where quantified chunks hold some of the resource it
//! is a quantifier over the variables instead, whose condition is the amount held at the
//! arguments. A magic wand's arguments are the values of its holes (`rules::wands`).

use germanium_semantics::{FieldTarget, VarId};
use germanium_smt::Term;
use germanium_syntax::ast::{Expr, ExprKind, QuantifierKind};

use crate::env::analysis::is_wand;
use crate::errors::ErrorContext;
use crate::resources;
use crate::rules::context::{Verifier, R};
use crate::state::{Heap, Resource, State};

/// A `forperm` resource: the field or predicate whose chunks it ranges over, and the
/// argument expressions (for a field, the receiver alone).
pub(crate) struct ResourcePattern<'x> {
    pub resource: Resource,
    pub args: Vec<&'x Expr>,
}

/// For each bound variable, the first argument position that is that variable on its own;
/// `None` if some variable is not one of the arguments (then the instances it ranges over
/// cannot be read off the chunks).
pub(crate) fn binding_positions(arg_vars: &[Option<VarId>], vars: &[VarId]) -> Option<Vec<usize>> {
    vars.iter()
        .map(|v| arg_vars.iter().position(|a| *a == Some(*v)))
        .collect()
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// The field location or predicate instance `resource` names.
    pub(crate) fn resource_pattern<'x>(
        &mut self,
        resource: &'x Expr,
        what: &str,
    ) -> R<ResourcePattern<'x>> {
        if let Some(pa) = self.as_predicate_access(resource) {
            if pa.amount.is_none() {
                return Ok(ResourcePattern {
                    resource: Resource::Predicate(pa.name),
                    args: pa.args.iter().collect(),
                });
            }
        }
        if let (ExprKind::FieldAccess(rcv, _), Some(FieldTarget::Field(f))) =
            (&resource.kind, self.env.sem.field_access(resource.id))
        {
            return Ok(ResourcePattern {
                resource: Resource::Field(f.clone()),
                args: vec![&**rcv],
            });
        }
        if is_wand(resource) {
            // A wand: its shape, with the holes' values as the arguments.
            let (resource, holes) = self.wand_resource(resource)?;
            return Ok(ResourcePattern {
                resource,
                args: holes,
            });
        }
        Err(self.unsupported(resource.span, format!("{what} over this resource")))
    }

    /// Whether two argument lists of `pattern`'s resource name the same location or
    /// instance (as Viper values).
    pub(crate) fn pattern_args_equal(
        &self,
        pattern: &ResourcePattern<'_>,
        a: &[Term],
        b: &[Term],
    ) -> Term {
        resources::equal_args(self.env, &pattern.resource, a, b)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn eval_forperm(
        &mut self,
        st: &State,
        heap: &Heap,
        e: &Expr,
        n_vars: usize,
        resources: &[Expr],
        body: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let mut vars = Vec::new();
        for i in 0..n_vars {
            match self.env.sem.binders.get(&(e.id, i)).copied() {
                Some(v) => vars.push(v),
                None => return Err(self.unsupported(e.span, "this `forperm`")),
            }
        }
        // Evaluated in the current state (during an exhale: what is left), body included.
        let current = self
            .member
            .perm_heap
            .clone()
            .unwrap_or_else(|| heap.clone());
        let mut parts = Vec::new();
        for resource in resources {
            let pattern = self.resource_pattern(resource, "`forperm`")?;
            let arg_vars: Vec<Option<VarId>> = pattern
                .args
                .iter()
                .map(|a| self.plain_variable(a))
                .collect();
            let Some(positions) = binding_positions(&arg_vars, &vars) else {
                return Err(self.unsupported(
                    resource.span,
                    "a `forperm` whose variables are not arguments of the resource",
                ));
            };
            if resources::holds_quantified(&current, Some(&pattern.resource)) {
                // Every location, held or not: a quantifier over the variables.
                parts.push(self.forperm_everywhere(st, &current, e, &pattern, body, ctx)?);
                continue;
            }
            for chunk in resources::held(&current, Some(&pattern.resource)) {
                let held = chunk.perm.is_positive();
                let actual = chunk.args.clone();
                let depth = self.member.bound.len();
                self.member.bound.extend(
                    vars.iter()
                        .zip(&positions)
                        .map(|(v, p)| (*v, actual[*p].clone())),
                );
                let part = self
                    .forperm_instance(st, &current, &pattern, &positions, &actual, held, body, ctx);
                self.member.bound.truncate(depth);
                parts.push(part?);
            }
        }
        Ok(Term::and(parts))
    }

    /// `forall xs :: perm(R(args(xs))) > 0 ==> body(xs)` in `current` (which holds some of
    /// `R` through quantified chunks).
    fn forperm_everywhere(
        &mut self,
        st: &State,
        current: &Heap,
        e: &Expr,
        pattern: &ResourcePattern<'_>,
        body: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let ExprKind::Forperm { vars, .. } = &e.kind else {
            return Err(self.unsupported(e.span, "this `forperm`"));
        };
        let n = vars.len();
        let marked = self.marks_instances(&pattern.resource);
        if marked {
            self.marks_hold(&pattern.resource, e.span)?;
        }
        self.eval_quantifier_with(st, current, e, QuantifierKind::Forall, n, &[], ctx, |v| {
            let mut args = Vec::new();
            for a in &pattern.args {
                args.push(v.eval(st, current, a, ctx)?);
            }
            let mut held = resources::perm_of(current, &pattern.resource, &args).is_positive();
            if marked {
                // The instance's mark (true, see `marks_hold`) makes a quantifier triggered
                // on the instance (`{P(x)}`, `{A --* B}`) match where the body is proved.
                let mark = v.instance_mark(&pattern.resource, args, e.span)?;
                held = Term::and([held, mark]);
            }
            let t = v.under(held.clone(), |v| v.eval(st, current, body, ctx))?;
            Ok(Term::implies(held, t))
        })
    }

    /// `held && args match ==> body` for one chunk, the bound variables already bound.
    #[allow(clippy::too_many_arguments)]
    fn forperm_instance(
        &mut self,
        st: &State,
        current: &Heap,
        pattern: &ResourcePattern<'_>,
        positions: &[usize],
        actual: &[Term],
        held: Term,
        body: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let mut wanted = Vec::new();
        let mut given = Vec::new();
        for (k, arg) in pattern.args.iter().enumerate() {
            if positions.contains(&k) {
                continue;
            }
            wanted.push(self.under(held.clone(), |v| v.eval(st, current, arg, ctx))?);
            given.push(actual[k].clone());
        }
        let matches = Term::and([held, self.pattern_args_equal(pattern, &wanted, &given)]);
        let t = self.under(matches.clone(), |v| v.eval(st, current, body, ctx))?;
        Ok(Term::implies(matches, t))
    }

    /// The variable `e` is, if it is a variable on its own.
    pub(crate) fn plain_variable(&self, e: &Expr) -> Option<VarId> {
        match &e.kind {
            ExprKind::Ident(_) => self.env.sem.idents.get(e.id.0 as usize).copied().flatten(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_variable_is_read_off_its_first_position() {
        let (a, b) = (VarId(0), VarId(1));
        assert_eq!(
            binding_positions(&[Some(b), None, Some(a), Some(b)], &[a, b]),
            Some(vec![2, 0])
        );
        assert_eq!(binding_positions(&[Some(a), Some(a)], &[a]), Some(vec![0]));
    }

    #[test]
    fn a_variable_that_is_no_argument_cannot_be_bound() {
        let (a, b) = (VarId(0), VarId(1));
        assert_eq!(binding_positions(&[Some(a), None], &[a, b]), None);
        assert_eq!(binding_positions(&[], &[a]), None);
        assert_eq!(binding_positions(&[None], &[]), Some(vec![]));
    }
}
