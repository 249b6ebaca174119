//! One heap for the two sides of an `if`: the chunks both sides hold, with the values and
//! amounts of each side where its condition holds.

use std::collections::HashMap;

use germanium_smt::{SolverError, Sort, Term};

use crate::decider::Decider;
use crate::state::Heap;

/// The heap that is `then` where `cond` holds and `otherwise` elsewhere, or `None` when the
/// two do not hold the same chunks (same resource and arguments, in the same order) or
/// differ in a value of sort `keep_syntactic` (references: a receiver that became a
/// join's fresh constant would no longer match its chunks syntactically). A value that
/// differs becomes a fresh constant defined on each side (`cond ==> v = a`, `!cond ==> v =
/// b`, assumed here), an amount that differs `ite(cond, a, b)`.
pub fn join(
    decider: &mut Decider,
    cond: &Term,
    (then, otherwise): (&Heap, &Heap),
    keep_syntactic: &Sort,
    definitions: Definitions,
) -> Result<Option<Heap>, SolverError> {
    if then.chunks.len() != otherwise.chunks.len() {
        return Ok(None);
    }
    let pairs = then.chunks.iter().zip(&otherwise.chunks);
    for (a, b) in pairs.clone() {
        let same_place = a.resource == b.resource && a.vars == b.vars && a.args == b.args;
        // A quantified chunk's value map is a term over its variables: no constant can
        // name it.
        let unnameable = a.snap.sort() == keep_syntactic || a.is_quantified();
        if !same_place || (a.snap != b.snap && unnameable) {
            return Ok(None);
        }
    }
    let mut joined = then.clone();
    for (i, (a, b)) in pairs.enumerate() {
        if a.snap != b.snap {
            joined.chunks[i].snap =
                join_value(decider, cond, (&a.snap, &b.snap), "joined", definitions)?;
        }
        if a.perm != b.perm {
            joined.chunks[i].perm = crate::state::Permission(Term::ite(
                cond.clone(),
                a.perm.0.clone(),
                b.perm.0.clone(),
            ));
        }
    }
    if then.owners != otherwise.owners {
        // Labels of one side only: the next full chunk starts a fresh labelling.
        joined.owners.clear();
    }
    Ok(Some(joined))
}

/// The named values each side of a join defined: `name = term` on the facts of that side
/// (where the other side's facts do not hold).
pub type Definitions<'d> = (&'d HashMap<Term, Term>, &'d HashMap<Term, Term>);

/// A fresh constant that is `a` where `cond` holds and `b` elsewhere. For integers that are
/// one linear base plus a constant on each side (`y + 1` and `y + 2`, or `1` and `5`), also
/// that it lies between the two, a fact without a disjunction: a counter that `n` joined
/// `if`s each increment by 1 or 2 is between `n` and `2n` above its start by linear
/// arithmetic alone, where the disjunctions would have the solver split on every `if`
/// (`2^n` cases). Each side's value is read with that side's definitions, which hold where
/// that side's value is the joined one.
pub fn join_value(
    decider: &mut Decider,
    cond: &Term,
    (a, b): (&Term, &Term),
    base: &str,
    (then_defs, else_defs): Definitions,
) -> Result<Term, SolverError> {
    let v = decider.fresh(base, a.sort().clone())?;
    decider.assume(Term::implies(cond.clone(), Term::eq(v.clone(), a.clone())))?;
    decider.assume(Term::implies(
        Term::not(cond.clone()),
        Term::eq(v.clone(), b.clone()),
    ))?;
    // `a` is `base + ca` where `cond` holds (read with that side's definitions), `b` is
    // `base + cb` elsewhere: `v` lies between the two either way.
    if let Some((base, ca, cb)) = super::linear::common_base((a, then_defs), (b, else_defs)) {
        let at = |c: i128| Term::add(vec![base.clone(), Term::int_lit(c.into())]);
        decider.assume(Term::le(at(ca.min(cb)), v.clone()))?;
        decider.assume(Term::le(v.clone(), at(ca.max(cb))))?;
    }
    Ok(v)
}
