//! `fun%f%held` (issue 54): where a function's footprint holds predicate instances, its
//! verification read the instances' bodies, so its postcondition holds of the values a
//! state satisfying its precondition has — not of every frame. A frame a `fold` defined on
//! one path is no instance's frame on another, and an axiom about every frame would carry
//! the body's facts across paths. So the postcondition axiom is guarded by `held` of the
//! application's values, which only these places make true:
//! - an application, on its own path, where its precondition holds ([`application_held`]);
//! - a verified function's body, for the applications it makes ([`held_in_body`], stated
//!   as an axiom beside the postcondition's).

use germanium_smt::{FunDecl, Sort, Symbol, Term};
use germanium_verifier::errors::ErrorContext;

use crate::functions::{Conditions, Footprint, FunctionShape};
use crate::lower::{Lower, Tables, R};
use crate::state::State;

/// `fun%name%held` over the function's arguments and footprint values (`args`), where the
/// footprint holds predicate instances.
pub fn held_decl(
    name: &str,
    footprint: &[(Conditions<'_>, Footprint<'_>)],
    args: &[Sort],
    t: &Tables<'_>,
) -> Option<FunDecl> {
    let reads_instances = footprint.iter().any(|(_, item)| match item {
        Footprint::Predicate(..) => true,
        Footprint::Quantified(map, _) => t.predicates.contains_key(map),
        Footprint::Field(..) => false,
    });
    reads_instances.then(|| {
        FunDecl::new(
            Symbol::user(&format!("fun%{name}%held")),
            args.to_vec(),
            Sort::Bool,
        )
    })
}

impl Lower<'_, '_> {
    /// An application of `shape` to `values` in `st` under `guard`, whose precondition
    /// holds where `precondition` does: `held` of its values, on this path.
    pub(crate) fn application_held(
        &mut self,
        shape: &FunctionShape<'_>,
        st: &State,
        guard: &Term,
        precondition: &Term,
        values: &[Term],
    ) {
        let Some(held) = &shape.held else {
            return;
        };
        let fact = Term::app(held, values.to_vec());
        match self.held_applications.as_mut() {
            // In a function's axioms: where the body's guard holds (see `held_in_body`).
            Some(found) => found.push(Term::implies(guard.clone(), fact)),
            // On this path, where the precondition holds (a path that fails it ends).
            // Inside a package it is true of every witness holding the instance and ties
            // none of the values it names to a witness (it only makes `held` true).
            None if self.snapshot.is_none() => {
                let applies = Term::and([st.reach.clone(), guard.clone(), precondition.clone()]);
                self.vc.fact_outside(Term::implies(applies, fact));
            }
            None => {}
        }
    }

    /// The `held` facts of the applications the body of `shape` makes (read in `st`, as
    /// its axioms read it), each under its guard.
    pub(crate) fn held_in_body(
        &mut self,
        shape: &FunctionShape<'_>,
        st: &State,
        ctx: &ErrorContext,
    ) -> R<Vec<Term>> {
        let Some(body) = &shape.function.body else {
            return Ok(Vec::new());
        };
        self.limited = Some(shape.function.name.name.clone());
        let outer = self.held_applications.replace(Vec::new());
        let lowered = self.expr(st, &Term::tt(), body, ctx);
        let found = std::mem::replace(&mut self.held_applications, outer);
        self.limited = None;
        lowered?;
        Ok(found.unwrap_or_default())
    }
}
