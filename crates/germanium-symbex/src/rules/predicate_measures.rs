//! Predicate instances as termination measures (Viper's termination plugin): in a
//! `decreases` tuple, `P(args)` and `acc(P(args), p)` stand for the instance, a value of the
//! library type `PredicateInstance`, ordered by `nestedPredicates`. Each unfold of an
//! instance records that the instances folded in its body are nested in it (under the
//! body's conditions, evaluated after the unfold), as Viper's `NestedPredicates` does.
//! Predicates are least fixed points, so these facts are true of every instance: assuming
//! them is sound.

use germanium_semantics::Type;
use germanium_smt::{FunDecl, Sort, Symbol, Term};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind};
use germanium_syntax::Span;

use crate::errors::ErrorContext;
use crate::rules::context::{Verifier, R};
use crate::state::{Heap, State};
use germanium_theories::TheoryOp;

/// The library function relating an instance to the one it is folded in.
const NESTED: &str = "nestedPredicates";

/// The type of predicate-instance measures.
pub fn predicate_instance_type() -> Type {
    Type::Domain("PredicateInstance".into(), vec![])
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// `P(args)` as a `PredicateInstance` value: one uninterpreted function per predicate.
    pub fn predicate_instance(&mut self, name: &str, args: Vec<Term>, span: Span) -> R<Term> {
        let sort = self.sort_of(&predicate_instance_type(), span)?;
        let sorts: Vec<Sort> = args.iter().map(|a| a.sort().clone()).collect();
        let decl = FunDecl::new(Symbol::user(&format!("sx.pi.{name}")), sorts, sort);
        self.ensure_declared(&decl, span)?;
        Ok(Term::app(&decl, args))
    }

    /// The measure value of `e` if it denotes a predicate instance (`None` otherwise).
    pub fn predicate_instance_measure(
        &mut self,
        st: &State,
        heap: &Heap,
        e: &Expr,
        ctx: &ErrorContext,
    ) -> R<Option<(Term, Type)>> {
        let Some((name, args)) =
            germanium_semantics::auto_import::predicate_instance_measure(e, self.env.sem)
        else {
            return Ok(None);
        };
        let mut values = Vec::new();
        for a in args {
            values.push(self.eval(st, heap, a, ctx)?);
        }
        let instance = self.predicate_instance(name, values, e.span)?;
        Ok(Some((instance, predicate_instance_type())))
    }

    /// After `st` received the body of the instance `name(args)` by an unfold: assumes that
    /// each instance the body holds (under its conditions) is nested in the unfolded one.
    /// As in Viper, only members with predicate-instance measures get these facts (a
    /// predicate that holds itself, never foldable, would otherwise make every unfold of it
    /// inconsistent), and nothing happens without the library's `nestedPredicates`.
    pub fn assume_nested_instances(
        &mut self,
        st: &State,
        name: &str,
        args: &[Term],
        span: Span,
    ) -> R<()> {
        if self.modes.in_axiom || !self.member_has_predicate_measures() {
            return Ok(());
        }
        let Some(domain) = self
            .env
            .sem
            .domain_functions
            .get(NESTED)
            .map(|f| f.domain.clone())
        else {
            return Ok(());
        };
        let Some(predicate) = self.env.predicates.get(name).copied() else {
            return Ok(());
        };
        let Some(body) = predicate.body.as_ref() else {
            return Ok(());
        };
        let outer = self.predicate_instance(name, args.to_vec(), span)?;
        let params = self.predicate_params(name);
        let depth = self.member.bound.len();
        self.member
            .bound
            .extend(params.into_iter().zip(args.iter().cloned()));
        let r = self.with_modes(
            |m| m.checking = false,
            |v| v.nested_in(st, body, &outer, &domain),
        );
        self.member.bound.truncate(depth);
        r
    }

    /// Whether the member being verified (a method with its loops, or a function) has a
    /// predicate instance in a measure.
    fn member_has_predicate_measures(&self) -> bool {
        use germanium_semantics::auto_import::{has_predicate_measure, method_decreases};
        let sem = self.env.sem;
        if let Some(m) = self.member.method {
            return has_predicate_measure(method_decreases(m), sem);
        }
        match self
            .modes
            .current_function
            .as_ref()
            .and_then(|f| self.env.functions.get(f))
        {
            Some(f) => has_predicate_measure(&f.contract.decreases, sem),
            None => false,
        }
    }

    /// Walks an assertion as Viper does: both sides of binary operators, the branches of
    /// implications and conditionals under their conditions, instances of predicates.
    fn nested_in(&mut self, st: &State, e: &Expr, outer: &Term, domain: &str) -> R<()> {
        let ctx = ErrorContext::at("termination.failed", e.span, "");
        if let Some(pa) = self.as_predicate_access(e) {
            let mut values = Vec::new();
            for a in pa.args {
                values.push(self.eval(st, &st.heap, a, &ctx)?);
            }
            let inner = self.predicate_instance(&pa.name, values, e.span)?;
            let op = TheoryOp::DomainFunction {
                domain: domain.to_string(),
                function: NESTED.to_string(),
                type_args: vec![],
            };
            let fact = match &self.env.theories {
                Some(t) => t.apply(&op, vec![inner, outer.clone()]).map_err(|u| u.0),
                None => Err("predicate-instance measures need the theory layer".to_string()),
            };
            let fact = fact.map_err(|why| self.unsupported(e.span, why))?;
            return self.assume_guarded(fact, e.span);
        }
        match &e.kind {
            ExprKind::Binary(BinaryOp::Implies, c, r) => {
                let c = self.eval(st, &st.heap, c, &ctx)?;
                self.under(c, |v| v.nested_in(st, r, outer, domain))
            }
            ExprKind::Cond(c, t, f) => {
                let c = self.eval(st, &st.heap, c, &ctx)?;
                self.under(c.clone(), |v| v.nested_in(st, t, outer, domain))?;
                self.under(Term::not(c), |v| v.nested_in(st, f, outer, domain))
            }
            ExprKind::Binary(_, l, r) => {
                self.nested_in(st, l, outer, domain)?;
                self.nested_in(st, r, outer, domain)
            }
            ExprKind::Unary(_, a) => self.nested_in(st, a, outer, domain),
            _ => Ok(()),
        }
    }
}
