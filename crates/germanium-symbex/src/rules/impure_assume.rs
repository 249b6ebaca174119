//! Impure `assume A`: Viper rewrites it into a pure inhale that, for each accessibility
//! predicate in `A` (in order, under the conditions guarding it), assumes the current
//! permission to the resource is at least its amount plus the amounts of the earlier
//! ones that name the same resource. Nothing is added to or removed from the state.
//!
//! Consumption with `assuming` set does the same on a scratch copy of the state: each
//! amount is assumed to be held and then taken away, so a later one for the same resource
//! must be held on top of it. This module holds the predicate-instance and `unfolding`
//! cases (fields are in `consume`).

use germanium_smt::Term;
use germanium_syntax::ast::Expr;
use germanium_syntax::Span;

use crate::errors::ErrorContext;
use crate::rules::context::{Verifier, R};
use crate::state::{Chunk, Heap, Permission, State};

impl<'e, 'a> Verifier<'e, 'a> {
    /// `assume acc(name(args), amount)` (`None`: wildcard, some positive amount): assumes
    /// the instance is held to that amount (where the guards hold) and takes the amount
    /// from the chunks that may be the instance. Returns an unconstrained snapshot (an
    /// assumption does not look at the instance's contents).
    pub fn assume_predicate_held(
        &mut self,
        st: &mut State,
        name: &str,
        args: &[Term],
        amount: Option<Permission>,
        span: Span,
    ) -> R<Term> {
        let guard = self.guard();
        let total = self.predicate_perm(&st.heap, name, args);
        let needed = match &amount {
            Some(p) => total.at_least(p),
            None => total.is_positive(),
        };
        self.assume(Term::implies(guard.clone(), needed), span)?;
        // A wildcard takes nothing: later amounts are then assumed less strictly, which
        // only assumes less.
        if let Some(p) = amount {
            take_predicate_spread(&mut st.heap, name, args, p.when(&guard));
        }
        self.fresh(&format!("snap.{name}"), self.env.snap.sort.clone(), span)
    }

    /// `assume unfolding acc(P(args), p) in A` with `A` impure: the instance must be held
    /// (checked, as the expression's well-definedness), and `A` is assumed in the state
    /// with it unfolded. What `A` takes is taken from that scratch state only, so later
    /// conjuncts are assumed without counting it (assuming less).
    pub fn assume_unfolding(
        &mut self,
        st: &State,
        eval_heap: &Heap,
        access: &Expr,
        body: &Expr,
        ctx: &ErrorContext,
    ) -> R<()> {
        let mut scratch = State {
            store: st.store.clone(),
            heap: eval_heap.clone(),
            old_heaps: st.old_heaps.clone(),
        };
        let assuming = std::mem::replace(&mut self.assuming, false);
        let saved_scale = self.perm_scale.take();
        let unfolded = self.unfold(&mut scratch, eval_heap, access, ctx);
        self.perm_scale = saved_scale;
        self.assuming = assuming;
        unfolded?;
        let heap = scratch.heap.clone();
        self.consume(&mut scratch, &heap, body, ctx)
    }
}

/// Removes `amount` of `name(args)` from the chunks whose arguments may equal `args`,
/// greedily in heap order (the caller has assumed the total suffices).
fn take_predicate_spread(heap: &mut Heap, name: &str, args: &[Term], amount: Permission) {
    let mut remaining = amount;
    let indices: Vec<usize> = heap.of_predicate(name).collect();
    for i in indices {
        let Chunk::Predicate {
            args: other, perm, ..
        } = heap.chunks[i].clone()
        else {
            continue;
        };
        let same = Term::and(
            args.iter()
                .zip(&other)
                .map(|(x, y)| Term::eq(x.clone(), y.clone())),
        );
        let available = Permission(Term::ite(same, perm.0.clone(), Permission::none().0));
        let taken = Permission(Term::ite(
            available.at_least(&remaining),
            remaining.0.clone(),
            available.0.clone(),
        ));
        heap.chunks[i].set_perm(perm.sub(&taken));
        remaining = remaining.sub(&taken);
    }
    heap.drop_empty();
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_smt::{Sort, Symbol};

    fn constant(name: &str, sort: Sort) -> Term {
        Term::var(Symbol::user(name), sort)
    }

    #[test]
    fn taking_all_of_the_same_instance_empties_its_chunk() {
        let x = constant("x", Sort::Int);
        let snap = constant("s", Sort::Int);
        let mut heap = Heap::default();
        heap.push(Chunk::Predicate {
            name: "P".into(),
            args: vec![x.clone()],
            snap,
            perm: Permission::write(),
        });
        take_predicate_spread(&mut heap, "P", &[x], Permission::write());
        assert!(heap.chunks.is_empty());
    }

    #[test]
    fn an_instance_that_may_differ_keeps_a_conditional_amount() {
        let (x, y) = (constant("x", Sort::Int), constant("y", Sort::Int));
        let snap = constant("s", Sort::Int);
        let mut heap = Heap::default();
        heap.push(Chunk::Predicate {
            name: "P".into(),
            args: vec![x],
            snap,
            perm: Permission::write(),
        });
        take_predicate_spread(&mut heap, "P", &[y], Permission::write());
        assert_eq!(heap.chunks.len(), 1);
        assert_ne!(heap.chunks[0].perm(), &Permission::write());
    }

    #[test]
    fn other_predicates_are_left_alone() {
        let x = constant("x", Sort::Int);
        let snap = constant("s", Sort::Int);
        let mut heap = Heap::default();
        heap.push(Chunk::Predicate {
            name: "Q".into(),
            args: vec![x.clone()],
            snap,
            perm: Permission::write(),
        });
        take_predicate_spread(&mut heap, "P", &[x], Permission::write());
        assert_eq!(heap.chunks[0].perm(), &Permission::write());
    }
}
