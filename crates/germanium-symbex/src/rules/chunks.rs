//! Heap access when a location's permission is spread over several chunks whose receivers
//! may alias (e.g. after `acc(x.f) && (x != y ==> acc(y.f))`): amounts are summed over all
//! chunks of the field, reads pick the value of an aliasing chunk, writes update every
//! aliasing chunk conditionally, and consumption takes greedily from each.

use germanium_smt::{Sort, Term};
use germanium_syntax::Span;

use crate::rules::context::{Verifier, R};
use crate::state::{Heap, Permission};

impl<'e, 'a> Verifier<'e, 'a> {
    /// `perm(receiver.field)` in `heap`.
    pub fn total_perm(&self, heap: &Heap, field: &str, receiver: &Term) -> Permission {
        let mut parts = vec![Permission::none().0];
        for i in heap.of_field(field) {
            let c = &heap.chunks[i];
            let same = Term::eq(receiver.clone(), c.receiver().clone());
            parts.push(Term::ite(same, c.perm().0.clone(), Permission::none().0));
        }
        Permission(Term::add(parts))
    }

    /// The value of `receiver.field` from whichever chunk holds it; unconstrained if none.
    pub fn aliased_value(
        &mut self,
        heap: &Heap,
        field: &str,
        receiver: &Term,
        sort: Sort,
        span: Span,
    ) -> R<Term> {
        let mut value = self.fresh(field, sort, span)?;
        let indices: Vec<usize> = heap.of_field(field).collect();
        for i in indices.into_iter().rev() {
            let c = &heap.chunks[i];
            let holds = Term::and([
                Term::eq(receiver.clone(), c.receiver().clone()),
                c.perm().is_positive(),
            ]);
            value = Term::ite(holds, c.value().clone(), value);
        }
        Ok(value)
    }

    /// Writes `value` to `receiver.field` in every chunk that may be that location.
    pub fn write_aliased(&self, heap: &mut Heap, field: &str, receiver: &Term, value: &Term) {
        let indices: Vec<usize> = heap.of_field(field).collect();
        for i in indices {
            let c = &heap.chunks[i];
            let same = Term::eq(receiver.clone(), c.receiver().clone());
            let updated = Term::ite(same, value.clone(), c.value().clone());
            heap.chunks[i].set_value(updated);
        }
    }

    /// Removes `amount` of `receiver.field`, greedily from the chunks that may hold it (the
    /// caller has proved the total suffices).
    pub fn take_spread(&self, heap: &mut Heap, field: &str, receiver: &Term, amount: &Permission) {
        let mut remaining = amount.clone();
        let indices: Vec<usize> = heap.of_field(field).collect();
        for i in indices {
            let c = heap.chunks[i].clone();
            let same = Term::eq(receiver.clone(), c.receiver().clone());
            let available = Permission(Term::ite(same, c.perm().0.clone(), Permission::none().0));
            let enough = available.at_least(&remaining);
            let taken = Permission(Term::ite(enough, remaining.0.clone(), available.0.clone()));
            heap.chunks[i].set_perm(c.perm().sub(&taken));
            remaining = remaining.sub(&taken);
        }
        heap.drop_empty();
    }

    /// Adds a chunk taken out of the state earlier (a loop's frame) back to it.
    pub fn readd_chunk(
        &mut self,
        st: &mut crate::state::State,
        c: &crate::state::Chunk,
        span: Span,
    ) -> R<()> {
        match c {
            crate::state::Chunk::Field {
                field,
                receiver,
                value,
                perm,
            } => self.add_chunk(
                st,
                field,
                receiver.clone(),
                perm.clone(),
                Some(value.clone()),
                span,
            ),
            crate::state::Chunk::Predicate {
                name,
                args,
                snap,
                perm,
            } => {
                // Outside any guard: the amount already says when it is held.
                let guards = std::mem::take(&mut self.guards);
                let r = self.produce_predicate(
                    st,
                    name,
                    args.clone(),
                    perm.clone(),
                    Some(snap.clone()),
                    span,
                );
                self.guards = guards;
                r
            }
        }
    }

    /// Whether the current path is infeasible (then every check holds vacuously).
    pub fn dead_path(&mut self, span: Span) -> R<bool> {
        self.prove(Term::ff(), span)
    }
}
