//! The contracts and bodies of members: a method's precondition, body and postcondition,
//! a function's contract and body, each from a fresh store.

use germanium_smt::Term;
use germanium_syntax::ast::{Function, Method};
use germanium_syntax::Span;

use crate::errors::ErrorContext;
use crate::rules::context::{Verifier, R};
use crate::rules::execute::path_end;
use crate::state::{State, PRE_STATE};

impl<'e, 'a> Verifier<'e, 'a> {
    pub(crate) fn fresh_store(
        &mut self,
        st: &mut State,
        vars: &[germanium_semantics::VarId],
        span: Span,
    ) -> R<()> {
        for var in vars {
            let info = self.env.sem.var(*var).clone();
            let sort = self.sort_of(&info.ty, span)?;
            let t = self.fresh(&info.name, sort, span)?;
            st.store.insert(*var, t);
        }
        Ok(())
    }

    pub(crate) fn verify_method(&mut self, m: &Method) -> R<()> {
        let Some(info) = self.env.sem.methods.get(&m.name.name).cloned() else {
            return Err(self.unsupported(m.name.span, "this method"));
        };
        let mut st = State::default();
        self.fresh_store(&mut st, &info.params, m.name.span)?;
        self.fresh_store(&mut st, &info.returns, m.name.span)?;
        let wellformed =
            ErrorContext::at_conjunct("not.wellformed", "Contract might not be well-formed.");
        self.check_exhale_parts(
            &st,
            &m.contract.requires,
            true,
            false,
            &wellformed,
            m.name.span,
        )?;
        let produced = (|| -> R<()> {
            for pre in &m.contract.requires {
                self.produce(&mut st, pre, &wellformed.for_clause(pre))?;
            }
            Ok(())
        })();
        if produced.is_err() {
            return path_end(produced);
        }
        st.old_heaps.insert(PRE_STATE.to_string(), st.heap.clone());
        // The postcondition must be well-formed in any state reachable from the pre-state.
        self.push(m.name.span)?;
        let mut post_state = State {
            heap: Default::default(),
            ..st.clone()
        };
        let post_wf = (|| -> R<()> {
            for post in &m.contract.ensures {
                self.produce(&mut post_state, post, &wellformed.for_clause(post))?;
            }
            Ok(())
        })();
        self.pop(m.name.span)?;
        path_end(post_wf)?;
        self.check_exhale_parts(
            &st,
            &m.contract.ensures,
            false,
            false,
            &wellformed,
            m.name.span,
        )?;
        let Some(body) = &m.body else { return Ok(()) };
        self.member.method = self.env.methods.get(&m.name.name).copied();
        // Without a `goto` no label heads a loop: the graph is not needed.
        if germanium_cfg::has_jumps(body) {
            let cfg = germanium_cfg::BodyCfg::of(body);
            self.member.loops = self.method_loops(&cfg)?;
        }
        let heap = st.heap.clone();
        self.member.method_measures = self.measures(&st, &heap, &m.contract.decreases)?;
        let r = self.exec_seq(
            st,
            &body.stmts,
            &mut |v: &mut Verifier<'e, 'a>, end: State| v.method_end(end),
        );
        path_end(r)?;
        self.report_refutations(&body.stmts);
        Ok(())
    }

    /// Well-formedness of `clauses` read with the exhale parts of `[a, b]`: produced from
    /// the parameters alone (preconditions, `from_scratch`) or after the precondition
    /// (postconditions: of a method in any heap, of a function in the precondition's,
    /// `keep_heap`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn check_exhale_parts(
        &mut self,
        st: &State,
        clauses: &[germanium_syntax::ast::Expr],
        from_scratch: bool,
        keep_heap: bool,
        ctx: &ErrorContext,
        span: Span,
    ) -> R<()> {
        if !clauses.iter().any(crate::env::analysis::has_inhale_exhale) {
            return Ok(());
        }
        self.push(span)?;
        let mut scratch = if keep_heap {
            st.clone()
        } else {
            State {
                heap: Default::default(),
                ..st.clone()
            }
        };
        if from_scratch {
            scratch.old_heaps.clear();
        }
        let r = self.with_modes(
            |m| m.exhale_parts = true,
            |v| -> R<()> {
                for c in clauses {
                    v.produce(&mut scratch, c, &ctx.for_clause(c))?;
                }
                Ok(())
            },
        );
        self.pop(span)?;
        path_end(r)
    }

    /// The end of the method body: the postcondition must hold.
    pub fn method_end(&mut self, mut end: State) -> R<()> {
        let Some(m) = self.member.method else {
            return Ok(());
        };
        self.move_on(&mut end, None, m.name.span)?;
        let violated = ErrorContext::at_conjunct(
            "postcondition.violated",
            format!("Postcondition of {} might not hold.", m.name.name),
        );
        let heap = end.heap.clone();
        // Well-definedness of the postcondition is checked on its own; reads here need no
        // permission of their own (as in Carbon).
        self.with_modes(
            |m| m.lenient_reads = true,
            |v| -> R<()> {
                for post in &m.contract.ensures {
                    v.consume(&mut end, &heap, post, &violated.for_clause(post))?;
                }
                Ok(())
            },
        )
    }

    pub(crate) fn verify_function(&mut self, f: &Function) -> R<()> {
        let Some(info) = self.env.sem.functions.get(&f.name.name).cloned() else {
            return Err(self.unsupported(f.name.span, "this function"));
        };
        let mut st = State::default();
        self.fresh_store(&mut st, &info.params, f.name.span)?;
        let wellformed =
            ErrorContext::at_conjunct("not.wellformed", "Contract might not be well-formed.");
        let r = (|| -> R<()> {
            self.check_exhale_parts(
                &st,
                &f.contract.requires,
                true,
                false,
                &wellformed,
                f.name.span,
            )?;
            // Calls in the contract must terminate too (Viper's termination plugin): those
            // in the precondition against the measure of the initial state, those in the
            // postcondition against the measure after the precondition.
            let calls = |clauses: &[germanium_syntax::ast::Expr]| {
                clauses
                    .iter()
                    .any(|c| germanium_semantics::calls::calls_function(self.env.sem, c))
            };
            let terminating = germanium_semantics::calls::has_measure(&f.contract.decreases);
            let (check_pres, check_posts) = (
                terminating && calls(&f.contract.requires),
                terminating && calls(&f.contract.ensures),
            );
            if check_pres {
                self.modes.current_function = Some(f.name.name.clone());
            }
            // In a function, a permission is only ever some positive amount (Viper's
            // function semantics): `acc(x.f) && acc(y.f)` does not make x and y differ.
            let produced = self.with_modes(
                |m| m.positive_only = true,
                |v| -> R<()> {
                    if check_pres {
                        let heap = st.heap.clone();
                        v.member.function_measures =
                            v.measures(&st, &heap, &f.contract.decreases)?;
                    }
                    for pre in &f.contract.requires {
                        v.produce(&mut st, pre, &wellformed.for_clause(pre))?;
                    }
                    Ok(())
                },
            );
            self.member.function_measures.clear();
            produced?;
            if check_posts {
                self.modes.current_function = Some(f.name.name.clone());
                let heap = st.heap.clone();
                self.member.function_measures = self.measures(&st, &heap, &f.contract.decreases)?;
            }
            let result_sort = self.sort_of(&info.result, f.name.span)?;
            let result = self.fresh("result", result_sort, f.name.span)?;
            self.modes.result = Some(result.clone());
            // The body's value, and what reading it quietly assumed, in a scope of their own:
            // the body is checked after, on a path they must not reach (an unfolding of an
            // instance not held would have produced its body there, maybe `false`).
            self.push(f.name.span)?;
            let posts = (|| -> R<()> {
                // With a body, `result` in the postcondition is the body's value (as in Viper).
                if let Some(value) = self.body_value_quietly(f, &st)? {
                    self.assume(Term::eq(result, value), f.name.span)?;
                }
                let mut post_state = st.clone();
                // The postcondition too needs only some positive amount of what it unfolds.
                self.push(f.name.span)?;
                let posts = self.with_modes(
                    |m| m.positive_only = true,
                    |v| -> R<()> {
                        for post in &f.contract.ensures {
                            v.produce(&mut post_state, post, &wellformed.for_clause(post))?;
                        }
                        Ok(())
                    },
                );
                self.pop(f.name.span)?;
                self.member.function_measures.clear();
                path_end(posts)?;
                self.check_exhale_parts(
                    &st,
                    &f.contract.ensures,
                    false,
                    true,
                    &wellformed,
                    f.name.span,
                )
            })();
            self.pop(f.name.span)?;
            posts?;
            self.modes.result = None;
            self.verify_function_body(f, &st)
        })();
        self.modes.result = None;
        self.member.function_measures.clear();
        path_end(r)
    }
}
