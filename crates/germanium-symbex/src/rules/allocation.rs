//! A new object is not referenced from anything that existed before it, including the
//! values folded inside predicate instances (as in Carbon, where every reference stored in
//! the heap is allocated). The references in a snapshot are described by
//! `sx.holds_ref(s, r)`: a snapshot holds the reference it wraps, and a pair holds what its
//! parts hold. `new` assumes that no predicate snapshot of the state holds the new object,
//! so that a reference later unfolded out of one differs from it.

use germanium_smt::{Sort, Symbol, Term};
use germanium_syntax::Span;

use crate::rules::context::{Verifier, R};
use crate::state::{Resource, State};

fn holds_ref_decl(snap: &Sort, r: &Sort) -> germanium_smt::FunDecl {
    germanium_smt::FunDecl::new(
        Symbol::user("sx.holds_ref"),
        vec![snap.clone(), r.clone()],
        Sort::Bool,
    )
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// Declares `sx.holds_ref` and its axioms (at the outermost solver level, after the
    /// wrapping functions of `Ref`).
    pub fn allocation_preamble(&mut self) -> Result<(), germanium_smt::SolverError> {
        let snap = self.env.snap.sort.clone();
        let r = self.env.ref_sort.clone();
        let holds = holds_ref_decl(&snap, &r);
        self.decider.declare(&holds)?;
        let (_, unwrap) = self.decider.wrap_decls(&r)?;
        let s = (Symbol::user("sx.s"), snap.clone());
        let x = (Symbol::user("sx.x"), r.clone());
        let sv = Term::var(s.0.clone(), s.1.clone());
        let xv = Term::var(x.0.clone(), x.1.clone());
        let unwrapped = Term::app(&unwrap, vec![sv.clone()]);
        let own = Term::app(&holds, vec![sv.clone(), unwrapped.clone()]);
        self.decider
            .assume(Term::forall(vec![s.clone()], own, vec![vec![unwrapped]]))?;
        for part in [self.env.snap.first(&sv), self.env.snap.second(&sv)] {
            let inner = Term::app(&holds, vec![part, xv.clone()]);
            let outer = Term::app(&holds, vec![sv.clone(), xv.clone()]);
            let axiom = Term::forall(
                vec![s.clone(), x.clone()],
                Term::implies(inner.clone(), outer),
                vec![vec![inner]],
            );
            self.decider.assume(axiom)?;
        }
        Ok(())
    }

    /// Assumes that no predicate instance of `st` (current and labelled heaps) holds `r`.
    pub fn assume_not_in_snapshots(&mut self, st: &State, r: &Term, span: Span) -> R<()> {
        let holds = holds_ref_decl(&self.env.snap.sort, &self.env.ref_sort);
        let mut snaps: Vec<Term> = Vec::new();
        for heap in std::iter::once(&st.heap).chain(st.old_heaps.values()) {
            for h in crate::resources::held(heap, None) {
                match h.resource {
                    Resource::Predicate(_) if !snaps.contains(&h.snap) => snaps.push(h.snap),
                    Resource::Predicate(_) | Resource::Field(_) | Resource::Wand(_) => {}
                }
            }
        }
        for s in snaps {
            self.assume(Term::not(Term::app(&holds, vec![s, r.clone()])), span)?;
        }
        Ok(())
    }
}
