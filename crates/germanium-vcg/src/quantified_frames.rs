//! Functions whose precondition holds a quantified permission (seed 000 §6's framing over a
//! quantified footprint). The heap map of the field (or predicate) is an argument of the
//! function, and what its value depends on is a *fingerprint* of that map: two maps equal at
//! every location of the footprint have the same fingerprint. That is said by a witness:
//! `witness(fp1, fp2)` is a location where the two maps differ in the footprint, if there is
//! one, so equal values there make the fingerprints equal (a fact E-matching can use, where
//! "equal everywhere in the footprint" would need a quantifier proved).
//!
//! The footprint at a location `r`: `c(inv(r)) && p(inv(r)) > 0 && e(inv(r)) == r`, with
//! `inv` the variable itself where the location is the variable (or a predicate location of
//! the variables), else a choice function: `inv(e(xs))` is some `ys` with the same location
//! in the footprint (true of some function, whatever `e`). The condition, location and
//! amount must read only the function's parameters.

use germanium_semantics::{CallTarget, Semantics};
use germanium_smt::{FunDecl, Quantifier, QuantifierKind, Sort, Symbol, Term};
use germanium_syntax::ast::{Expr, ExprKind, Program};

use crate::lower::{unsupported, Lower, R};
use crate::state::State;

/// A quantified permission of a function's precondition, with its vocabulary.
#[derive(Clone, Debug)]
pub struct QuantifiedFootprint<'a> {
    pub forall: &'a Expr,
    /// The field or predicate.
    pub map: String,
    /// The sort of its heap map (the function's argument).
    pub heap: Sort,
    /// `fingerprint(params, heap)`.
    pub fingerprint: FunDecl,
    /// `witness(params, fp1, fp2)`: a location.
    pub witness: FunDecl,
    /// Per variable, `inv(params, location)` (used where the location is not the variables
    /// themselves).
    pub inverse: Vec<FunDecl>,
}

impl QuantifiedFootprint<'_> {
    pub fn decls(&self) -> Vec<&FunDecl> {
        let mut out = vec![&self.fingerprint, &self.witness];
        out.extend(&self.inverse);
        out
    }
}

/// The field or predicate of a quantified permission a function can be framed by (see
/// `body_footprints::footprint_parts`).
pub fn framable(program: &Program, sem: &Semantics, a: &Expr) -> Option<String> {
    crate::body_footprints::footprint_parts(program, sem, a).map(|(map, _)| map)
}

/// Whether `e` reads the heap or permissions (a field, `perm`, a heap-dependent function).
pub(crate) fn reads_heap(program: &Program, sem: &Semantics, e: &Expr) -> bool {
    let mut found = false;
    germanium_semantics::visit::walk_expr(e, &mut |x| {
        found |= match &x.kind {
            ExprKind::FieldAccess(..)
            | ExprKind::Perm(..)
            | ExprKind::Forperm { .. }
            | ExprKind::Unfolding(..)
            | ExprKind::Old(..) => true,
            _ => match sem.call(x.id) {
                Some(CallTarget::Function(name)) => program.items.iter().any(|item| {
                    matches!(&item.kind, germanium_syntax::ast::ItemKind::Function(f)
                        if f.name.name == *name
                            && f.contract.requires.iter().any(|p| crate::functions::holds_permission(sem, p)))
                }),
                Some(CallTarget::Predicate(_)) => true,
                _ => false,
            },
        };
    });
    found
}

/// The vocabulary of the `k`th quantified footprint of function `name`.
pub fn vocabulary<'a>(
    t: &crate::lower::Tables<'a>,
    name: &str,
    k: usize,
    forall: &'a Expr,
    map: &str,
    params: &[Sort],
) -> Option<QuantifiedFootprint<'a>> {
    let (index, value) = match t.fields.iter().find(|(f, _)| f == map) {
        Some((_, s)) => (t.reference.clone(), s.clone()),
        None => (t.predicates.get(map)?.index.clone(), t.frames.sort.clone()),
    };
    let heap = Sort::array(index.clone(), value);
    let with_params = |last: Vec<Sort>| {
        let mut v = params.to_vec();
        v.extend(last);
        v
    };
    let fingerprint = FunDecl::new(
        Symbol::user(&format!("fun%{name}%qp{k}")),
        with_params(vec![heap.clone()]),
        t.frames.sort.clone(),
    );
    let witness = FunDecl::new(
        Symbol::user(&format!("fun%{name}%witness{k}")),
        with_params(vec![t.frames.sort.clone(), t.frames.sort.clone()]),
        index.clone(),
    );
    let ExprKind::Quantifier { vars, .. } = &forall.kind else {
        return None;
    };
    let mut inverse = Vec::new();
    for j in 0..vars.len() {
        let var = t.sem.binders.get(&(forall.id, j))?;
        let sort = t.theories.sort(&t.sem.var(*var).ty).ok()?;
        inverse.push(FunDecl::new(
            Symbol::user(&format!("fun%{name}%inv{k}_{j}")),
            with_params(vec![index.clone()]),
            sort,
        ));
    }
    Some(QuantifiedFootprint {
        forall,
        map: map.to_string(),
        heap,
        fingerprint,
        witness,
        inverse,
    })
}

/// A quantified footprint lowered over the function's parameters (as variables).
pub struct Lowered {
    /// Whether location `r` (any term) is in the footprint.
    in_footprint: Box<dyn Fn(&Term) -> Term>,
    /// The choice fact of the inverse, if it is a function.
    choice: Option<Term>,
}

impl Lowered {
    pub fn at(&self, r: &Term) -> Term {
        (self.in_footprint)(r)
    }
}

impl Lower<'_, '_> {
    /// The footprint `q` in `st` (the parameters bound to `params`, variables of the axiom).
    pub fn lower_quantified_footprint(
        &mut self,
        st: &State,
        q: &QuantifiedFootprint<'_>,
        params: &[Term],
    ) -> R<Lowered> {
        let parts = self.leniently(|l| l.quantified_parts_closed(st, q.forall))?;
        let (bound, cond, index, amount) = parts;
        let positive = Term::and([cond, Term::gt(amount, Term::real(0, 1))]);
        let direct = self.direct_inverse(&bound, &q.map, &index);
        let is_direct = direct.is_some();
        let inverse_at = {
            let decls = q.inverse.clone();
            let params = params.to_vec();
            move |r: &Term| -> Vec<Term> {
                decls
                    .iter()
                    .map(|d| {
                        let mut args = params.clone();
                        args.push(r.clone());
                        Term::app(d, args)
                    })
                    .collect()
            }
        };
        let (b2, p2, i2) = (bound.clone(), positive.clone(), index.clone());
        let in_footprint: Box<dyn Fn(&Term) -> Term> = match direct {
            Some(d) => Box::new(move |r: &Term| {
                let xs = d.at(r);
                Term::and([b2.at(&p2, &xs), Term::eq(b2.at(&i2, &xs), r.clone())])
            }),
            None => {
                let inverse_at = inverse_at.clone();
                Box::new(move |r: &Term| {
                    let xs = inverse_at(r);
                    Term::and([b2.at(&p2, &xs), Term::eq(b2.at(&i2, &xs), r.clone())])
                })
            }
        };
        let choice = if is_direct {
            None
        } else {
            let xs = inverse_at(&index);
            let chosen = Term::and([
                bound.at(&positive, &xs),
                Term::eq(bound.at(&index, &xs), index.clone()),
            ]);
            let mut triggers = germanium_theories::infer_triggers(&bound.variables(), &index);
            if triggers.is_empty() {
                triggers = germanium_theories::infer_triggers(&bound.variables(), &positive);
            }
            Some(Term::quantifier(Quantifier {
                kind: QuantifierKind::Forall,
                vars: bound.vars.clone(),
                body: Term::implies(positive, chosen),
                triggers,
                qid: None,
                weight: None,
            }))
        };
        Ok(Lowered {
            in_footprint,
            choice,
        })
    }

    /// The axioms of a quantified footprint over `vars` (the parameters'): the inverse's
    /// choice, and the witness making fingerprints of maps equal on the footprint equal.
    pub fn fingerprint_axioms(
        &self,
        q: &QuantifiedFootprint<'_>,
        lowered: &Lowered,
        vars: &[(Symbol, Sort)],
    ) -> Vec<Term> {
        let params: Vec<Term> = vars
            .iter()
            .map(|(s, sort)| Term::var(s.clone(), sort.clone()))
            .collect();
        let mut out = Vec::new();
        if let Some(choice) = &lowered.choice {
            out.push(if vars.is_empty() {
                choice.clone()
            } else {
                Term::forall(vars.to_vec(), choice.clone(), Vec::new())
            });
        }
        let heaps: Vec<(Symbol, Sort)> = ["h1%qp", "h2%qp"]
            .iter()
            .map(|n| (Symbol::user(n), q.heap.clone()))
            .collect();
        let print = |h: &(Symbol, Sort)| {
            let mut args = params.clone();
            args.push(Term::var(h.0.clone(), h.1.clone()));
            Term::app(&q.fingerprint, args)
        };
        let (fp1, fp2) = (print(&heaps[0]), print(&heaps[1]));
        let mut witness_args = params.clone();
        witness_args.extend([fp1.clone(), fp2.clone()]);
        let s = Term::app(&q.witness, witness_args);
        let read =
            |h: &(Symbol, Sort)| Term::select(Term::var(h.0.clone(), h.1.clone()), s.clone());
        let agree = Term::implies(lowered.at(&s), Term::eq(read(&heaps[0]), read(&heaps[1])));
        let mut all = vars.to_vec();
        all.extend(heaps);
        out.push(Term::forall(
            all,
            Term::implies(agree, Term::eq(fp1.clone(), fp2.clone())),
            vec![vec![fp1, fp2]],
        ));
        out
    }

    /// The condition, location and amount of the single access of `forall` (see
    /// `framable`), closed over its variables, in `st`.
    fn quantified_parts_closed(
        &mut self,
        st: &State,
        forall: &Expr,
    ) -> R<(crate::binders::Bound, Term, Term, Term)> {
        let Some((count, _, body)) = crate::quantified::quantified_permission(self.t.sem, forall)
        else {
            return unsupported(forall.span, "this footprint");
        };
        let Some((conds, _, access)) = crate::quantified::single_access(self.t.sem, body) else {
            return unsupported(forall.span, "this footprint");
        };
        let bound = self.bind(forall.id, count, forall.span, "fq")?;
        let ctx = germanium_verifier::errors::ErrorContext::at_conjunct("internal", "");
        let (cond, held) = self.with_modes(
            |m| m.binding = true,
            |l| l.access_at_constants(st, &bound, &conds, access, &ctx),
        )?;
        // A wildcard is some positive amount: the footprint is where the condition holds
        // (its lowering, a fresh constant, has no place in an axiom).
        let amount = if wildcard_amount(self.t.sem, access) {
            Term::real(1, 1)
        } else {
            bound.close(&held.1)
        };
        Ok((
            bound.clone(),
            bound.close(&cond),
            bound.close(&held.0),
            amount,
        ))
    }
}

/// Whether the amount of `access` (a field or predicate access) is `wildcard`.
fn wildcard_amount(sem: &Semantics, access: &Expr) -> bool {
    let amount = match crate::predicates::access(sem, access) {
        Some(pa) => pa.amount,
        None => match &access.kind {
            ExprKind::Acc(_, amount) => amount.as_deref(),
            _ => None,
        },
    };
    amount.is_some_and(|x| matches!(x.kind, ExprKind::Wildcard))
}
