//! One chunk seen from one location: whether it is the location, how much of it and which
//! value it holds there, and how taking and writing there change it. A chunk of one
//! location is the location when the arguments are equal; a quantified chunk covers every
//! location, and its amount at the location (its permission map applied there) says how
//! much it holds of it.

use std::collections::HashMap;

use germanium_smt::{substitute, Term};

use super::same_args;
use crate::state::{Chunk, Permission};

/// Whether `chunk` is the location `args` (always, for a quantified chunk).
pub(super) fn is_location(chunk: &Chunk, args: &[Term]) -> Term {
    if chunk.is_quantified() {
        Term::tt()
    } else {
        same_args(args, &chunk.args)
    }
}

/// The quantified chunk's variables mapped to `args`.
fn at(chunk: &Chunk, args: &[Term]) -> HashMap<Term, Term> {
    chunk
        .args
        .iter()
        .cloned()
        .zip(args.iter().cloned())
        .collect()
}

/// How much `chunk` holds of `args`, where it is that location.
pub(super) fn amount_for(chunk: &Chunk, args: &[Term]) -> Permission {
    if chunk.is_quantified() {
        Permission(substitute(&chunk.perm.0, &at(chunk, args)))
    } else {
        chunk.perm.clone()
    }
}

/// The value `chunk` has at `args`, where it is that location.
pub(super) fn value_for(chunk: &Chunk, args: &[Term]) -> Term {
    if chunk.is_quantified() {
        substitute(&chunk.snap, &at(chunk, args))
    } else {
        chunk.snap.clone()
    }
}

/// Takes `taken` (at most what it holds there) of `args` from `chunk`.
pub(super) fn take_for(chunk: &mut Chunk, args: &[Term], taken: &Permission) {
    let taken = if chunk.is_quantified() {
        Permission(Term::ite(
            same_args(&chunk.args, args),
            taken.0.clone(),
            Permission::none().0,
        ))
    } else {
        taken.clone()
    };
    chunk.perm = chunk.perm.sub(&taken);
}

/// Writes `value` at `args` in `chunk`, wherever `chunk` is that location.
pub(super) fn write_for(chunk: &mut Chunk, args: &[Term], value: &Term) {
    let here = same_args(args, &chunk.args);
    chunk.snap = Term::ite(here, value.clone(), chunk.snap.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Resource;
    use germanium_smt::{FunDecl, Sort, Symbol};

    fn r(name: &str) -> Term {
        Term::constant(&FunDecl::constant(Symbol::user(name), Sort::named("Ref")))
    }

    /// `forall r :: acc(r.f, 1/2)` with value `val(r)`.
    fn half_of_every_location() -> (Chunk, FunDecl) {
        let val = FunDecl::new(Symbol::user("val"), vec![Sort::named("Ref")], Sort::Int);
        let v = Symbol::user("r");
        let var = Term::var(v.clone(), Sort::named("Ref"));
        let chunk = Chunk::quantified(
            Resource::Field("f".into()),
            vec![(v, Sort::named("Ref"))],
            Term::app(&val, vec![var]),
            Permission::fraction(1, 2),
        );
        (chunk, val)
    }

    #[test]
    fn a_quantified_chunk_is_read_at_the_location() {
        let (chunk, val) = half_of_every_location();
        assert!(is_location(&chunk, &[r("x")]).is_true());
        assert_eq!(amount_for(&chunk, &[r("x")]), Permission::fraction(1, 2));
        assert_eq!(value_for(&chunk, &[r("x")]), Term::app(&val, vec![r("x")]));
    }

    #[test]
    fn taking_and_writing_change_only_the_location() {
        let (mut chunk, val) = half_of_every_location();
        take_for(&mut chunk, &[r("x")], &Permission::fraction(1, 2));
        write_for(&mut chunk, &[r("y")], &Term::int(3));
        // Still a map over the variable; at x nothing is left, at y the value is 3.
        assert!(chunk.is_quantified());
        let at_y = amount_for(&chunk, &[r("y")]);
        assert!(at_y.0.to_string().contains("(= y x)"), "{}", at_y.0);
        let value = value_for(&chunk, &[r("y")]);
        assert_eq!(
            value,
            Term::ite(
                Term::eq(r("y"), r("y")),
                Term::int(3),
                Term::app(&val, vec![r("y")])
            )
        );
    }
}
