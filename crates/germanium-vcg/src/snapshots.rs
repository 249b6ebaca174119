//! What a function's axioms read: the footprint's locations with their values (the
//! function's arguments), where a read must be found (see `Lower::snapshot`).

use germanium_smt::Term;

/// In a function's axioms: a location of the footprint, its value, and where it is held.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub map: String,
    pub at: Term,
    pub value: Term,
    pub held: Term,
    /// A quantified footprint: its whole heap map, read where a location is not otherwise
    /// found; `value` is then the value at the location variable `at`.
    pub heap: Option<Term>,
}

/// The value of `r`'s `map` among the footprint's locations: the one it is where it is held
/// (a location can be in the footprint under several conditions), or, read through another
/// name (`y.f` where the precondition says `x == y`), the one it equals: a well-formed
/// function reads nothing else where its precondition holds. Later entries first (an
/// `unfolding` adds the locations it opens).
pub fn snapshot_value(snapshot: &[Snapshot], map: &str, r: &Term) -> Option<Term> {
    // Every quantified footprint of the map, the later where it holds the location.
    let everywhere = snapshot
        .iter()
        .filter(|s| s.map == map && s.heap.is_some())
        .fold(None, |earlier: Option<Term>, s| {
            let at: std::collections::HashMap<Term, Term> =
                [(s.at.clone(), r.clone())].into_iter().collect();
            let value = germanium_smt::substitute(&s.value, &at);
            Some(match earlier {
                Some(v) => Term::ite(germanium_smt::substitute(&s.held, &at), value, v),
                None => value,
            })
        });
    let same: Vec<&Snapshot> = snapshot
        .iter()
        .rev()
        .filter(|s| s.map == map && s.heap.is_none())
        .collect();
    if same.is_empty() {
        return everywhere;
    }
    let exact: Vec<&Snapshot> = same.iter().copied().filter(|s| s.at == *r).collect();
    let (candidates, compare) = if exact.is_empty() {
        (same, true)
    } else {
        (exact, false)
    };
    // Held unconditionally under several names (the footprint's own and an unfolded
    // instance's): the earliest, the one the applications name directly (a location has one
    // value, so any would do; callers know the heap's better than an instance's frame).
    if let Some(always) = candidates
        .iter()
        .rev()
        .find(|s| s.held == Term::tt() && !compare)
    {
        return Some(always.value.clone());
    }
    let (mut value, others) = match everywhere {
        Some(v) => (v, &candidates[..]),
        None => {
            let (last, others) = candidates.split_last()?;
            (last.value.clone(), others)
        }
    };
    for s in others.iter().rev() {
        let here = if compare {
            Term::and([Term::eq(r.clone(), s.at.clone()), s.held.clone()])
        } else {
            s.held.clone()
        };
        value = Term::ite(here, s.value.clone(), value);
    }
    Some(value)
}
