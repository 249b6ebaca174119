//! Impure `assume A`: Viper rewrites it into a pure inhale that, for each accessibility
//! predicate in `A` (in order, under the conditions guarding it), assumes the current
//! permission to the resource is at least its amount plus the amounts of the earlier
//! ones that name the same resource. Nothing is added to or removed from the state.
//!
//! Consumption with `assuming` set does the same on a scratch copy of the state: each
//! amount is assumed to be held and then taken away, so a later one for the same resource
//! must be held on top of it (`Verifier::assume_held`, for every kind of resource). This
//! module holds the `unfolding` case.

use germanium_syntax::ast::Expr;

use crate::errors::ErrorContext;
use crate::rules::context::{Verifier, R};
use crate::state::{Heap, State};

impl<'e, 'a> Verifier<'e, 'a> {
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
            label_loops: Vec::new(),
        };
        self.with_modes(
            |m| {
                m.assuming = false;
                m.perm_scale = None;
            },
            |v| v.unfold(&mut scratch, eval_heap, access, ctx),
        )?;
        let heap = scratch.heap.clone();
        self.consume(&mut scratch, &heap, body, ctx)
    }
}
