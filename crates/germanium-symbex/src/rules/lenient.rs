//! Values of reads without permission where they are allowed (`lenient_reads`: the
//! well-definedness of what is read is checked and reported on its own). Carbon reads a
//! total heap there, in which a field folded inside a predicate instance keeps its value.
//! So a location held inside a predicate instance of the heap reads as what unfolding that
//! instance would give; then `old(x.f)` and `unfolding P(x) in x.f` agree when nothing
//! changed the instance in between, and an unrelated value is never invented for it.

use germanium_smt::Term;
use germanium_syntax::Span;

use crate::errors::ErrorContext;
use crate::resources;
use crate::rules::context::{Verifier, R};
use crate::state::{Heap, Resource, State};

impl<'e, 'a> Verifier<'e, 'a> {
    /// Where reads need no permission: whether `unfolding acc(P(args), ..) in body` names
    /// an instance that is not held (then the body is read in the heap as it is: in a total
    /// heap, the body's locations have their values whether folded or not).
    pub fn lenient_unfolding_unheld(
        &mut self,
        st: &State,
        heap: &Heap,
        access: &germanium_syntax::ast::Expr,
        ctx: &ErrorContext,
    ) -> R<bool> {
        if !self.modes.lenient_reads
            || !self.modes.checking
            || self.modes.assuming
            || self.modes.in_axiom
        {
            return Ok(false);
        }
        let Some(pa) = self.as_predicate_access(access) else {
            return Ok(false);
        };
        let mut args = Vec::new();
        for a in pa.args {
            args.push(self.eval(st, heap, a, ctx)?);
        }
        let held = resources::perm_of(heap, &Resource::Predicate(pa.name.clone()), &args);
        Ok(!self.prove(held.is_positive(), access.span)?)
    }

    /// The value of `receiver.field` in a predicate instance of `heap` that directly holds
    /// it (its body unfolded on a copy), if one is found.
    pub fn folded_value(
        &mut self,
        heap: &Heap,
        field: &str,
        receiver: &Term,
        span: Span,
    ) -> R<Option<Term>> {
        for instance in resources::held(heap, None) {
            let resources::Held {
                index,
                resource,
                args,
                snap,
                perm,
            } = instance;
            let name = match resource {
                Resource::Predicate(name) => name,
                Resource::Field(_) | Resource::Wand(_) => continue,
            };
            let has_body = self
                .env
                .predicates
                .get(&name)
                .is_some_and(|p| p.body.is_some());
            if !has_body || !self.prove(perm.is_positive(), span)? {
                continue;
            }
            let mut scratch = State {
                heap: heap.clone(),
                ..State::default()
            };
            resources::remove_at(&mut scratch.heap, index);
            let start = resources::count(&scratch.heap);
            let ctx = ErrorContext::at("unfold.failed", span, "");
            self.member.body_unfold_depth += 1;
            // Not inside any instance being unfolded (no nesting facts for this copy).
            self.nesting.enclosing.push(None);
            let reported = self.errors.len();
            let produced = self.with_modes(
                |m| {
                    m.checking = false;
                    m.perm_scale = None;
                },
                |v| {
                    v.in_predicate_body(&name, &args, &perm, span, |v, body| {
                        v.produce_from(&mut scratch, body, Some(snap), &ctx)
                    })
                },
            );
            self.nesting.enclosing.pop();
            self.member.body_unfold_depth -= 1;
            if produced.is_err() {
                // Only a better value was looked for: what could not be done is not an error.
                self.errors.truncate(reported);
                continue;
            }
            let produced = resources::held(&scratch.heap, Some(&Resource::Field(field.into())));
            for c in produced.into_iter().filter(|c| c.index >= start) {
                if self.prove(
                    Term::and([
                        resources::same_args(&c.args, std::slice::from_ref(receiver)),
                        c.perm.is_positive(),
                    ]),
                    span,
                )? {
                    return Ok(Some(c.snap));
                }
            }
        }
        Ok(None)
    }
}
