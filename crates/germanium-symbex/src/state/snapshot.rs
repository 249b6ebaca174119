//! Snapshots: the values a heap-dependent function may depend on. For a field chunk the
//! snapshot is its value; an assertion's snapshot combines its chunks' snapshots with the
//! `Snap` constructors declared in the solver preamble (see `crate::env`).

use germanium_smt::{FunDecl, Sort, Symbol, Term};

/// The declarations of the snapshot sort and its constructors.
#[derive(Clone, Debug)]
pub struct SnapDecls {
    pub sort: Sort,
    pub unit: FunDecl,
    pub pair: FunDecl,
}

impl SnapDecls {
    pub fn new() -> SnapDecls {
        let sort = Sort::Uninterpreted(Symbol::user("sx.Snap"));
        SnapDecls {
            unit: FunDecl::constant(Symbol::user("sx.unit"), sort.clone()),
            pair: FunDecl::new(Symbol::user("sx.pair"), vec![sort.clone(), sort.clone()], sort.clone()),
            sort,
        }
    }

    pub fn unit(&self) -> Term {
        Term::constant(&self.unit)
    }

    pub fn pair(&self, a: Term, b: Term) -> Term {
        if a == self.unit() {
            return b;
        }
        if b == self.unit() {
            return a;
        }
        Term::app(&self.pair, vec![a, b])
    }
}

impl Default for SnapDecls {
    fn default() -> Self {
        SnapDecls::new()
    }
}
