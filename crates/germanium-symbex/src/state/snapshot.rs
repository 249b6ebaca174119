//! Snapshots: the values a heap-dependent function may depend on. For a field chunk the
//! snapshot is its value (wrapped into the `Snap` sort); a predicate chunk holds one; an
//! assertion's snapshot combines its parts' snapshots with `pair`, and `first`/`second`
//! take them apart again (axiomatised in the preamble).
//!
//! The shape of an assertion's snapshot is static: a pure part has none, `A && B` pairs the
//! snapshots of its impure sides, so producing an assertion from a snapshot (unfold, function
//! preconditions) and reading one off the heap (fold, function applications) agree.

use germanium_smt::{FunDecl, Sort, Symbol, Term};

/// The declarations of the snapshot sort and its constructors.
#[derive(Clone, Debug)]
pub struct SnapDecls {
    pub sort: Sort,
    pub unit: FunDecl,
    pub pair: FunDecl,
    pub first: FunDecl,
    pub second: FunDecl,
}

impl SnapDecls {
    pub fn new() -> SnapDecls {
        let sort = Sort::Uninterpreted(Symbol::user("sx.Snap"));
        SnapDecls {
            unit: FunDecl::constant(Symbol::user("sx.unit"), sort.clone()),
            pair: FunDecl::new(
                Symbol::user("sx.pair"),
                vec![sort.clone(), sort.clone()],
                sort.clone(),
            ),
            first: FunDecl::new(Symbol::user("sx.first"), vec![sort.clone()], sort.clone()),
            second: FunDecl::new(Symbol::user("sx.second"), vec![sort.clone()], sort.clone()),
            sort,
        }
    }

    pub fn unit(&self) -> Term {
        Term::constant(&self.unit)
    }

    /// `pair(a, b)`, leaving out a side that is the unit.
    pub fn pair(&self, a: Term, b: Term) -> Term {
        if a == self.unit() {
            return b;
        }
        if b == self.unit() {
            return a;
        }
        Term::app(&self.pair, vec![a, b])
    }

    /// `pair(a, b)` as it is (for snapshots whose shape must not depend on values).
    pub fn combine(&self, a: Term, b: Term) -> Term {
        Term::app(&self.pair, vec![a, b])
    }

    pub fn first(&self, s: &Term) -> Term {
        Term::app(&self.first, vec![s.clone()])
    }

    pub fn second(&self, s: &Term) -> Term {
        Term::app(&self.second, vec![s.clone()])
    }

    /// Combines optional parts (none: a pure part) the way [`SnapDecls::split`] takes them
    /// apart.
    pub fn join(&self, a: Option<Term>, b: Option<Term>) -> Option<Term> {
        match (a, b) {
            (None, x) | (x, None) => x,
            (Some(a), Some(b)) => Some(self.combine(a, b)),
        }
    }

    /// The parts of `s` for a left-nested join of `n` parts.
    pub fn split(&self, s: &Term, n: usize) -> Vec<Term> {
        match n {
            0 => Vec::new(),
            1 => vec![s.clone()],
            _ => {
                let mut out = self.split(&self.first(s), n - 1);
                out.push(self.second(s));
                out
            }
        }
    }

    /// `first(pair(a, b)) = a`, `second(pair(a, b)) = b`.
    pub fn axioms(&self) -> Vec<Term> {
        let a = Symbol::user("sx.a");
        let b = Symbol::user("sx.b");
        let va = Term::var(a.clone(), self.sort.clone());
        let vb = Term::var(b.clone(), self.sort.clone());
        let p = Term::app(&self.pair, vec![va.clone(), vb.clone()]);
        let vars = vec![(a, self.sort.clone()), (b, self.sort.clone())];
        vec![
            Term::forall(
                vars.clone(),
                Term::eq(self.first(&p), va),
                vec![vec![p.clone()]],
            ),
            Term::forall(vars, Term::eq(self.second(&p), vb), vec![vec![p]]),
        ]
    }
}

impl Default for SnapDecls {
    fn default() -> Self {
        SnapDecls::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_inverts_join() {
        let d = SnapDecls::new();
        let x = Term::constant(&FunDecl::constant(Symbol::user("x"), d.sort.clone()));
        let y = Term::constant(&FunDecl::constant(Symbol::user("y"), d.sort.clone()));
        let j = d
            .join(d.join(None, Some(x.clone())), Some(y.clone()))
            .unwrap();
        assert_eq!(j, d.combine(x.clone(), y));
        assert_eq!(d.split(&j, 2), vec![d.first(&j), d.second(&j)]);
        assert_eq!(d.join(Some(x.clone()), None), Some(x));
    }
}
