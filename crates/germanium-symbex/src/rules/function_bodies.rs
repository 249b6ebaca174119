//! Well-formedness of function bodies and predicate bodies, and termination of function
//! calls: a body is evaluated from its precondition (reads need permission, calls need
//! their preconditions), its value must satisfy the postcondition, and a call within the
//! body of a function with a `decreases` clause must decrease it (Viper's termination
//! plugin). A predicate body is produced into an empty heap.

use germanium_syntax::ast::{Expr, Function, Predicate};

use germanium_smt::Term;

use crate::errors::ErrorContext;
use crate::rules::context::{Abort, Verifier, R};
use crate::rules::execute::path_end;
use crate::state::{Heap, State};
use germanium_semantics::calls::reaches;

impl<'e, 'a> Verifier<'e, 'a> {
    /// Checks `f`'s body in `st` (the precondition produced).
    pub fn verify_function_body(&mut self, f: &Function, st: &State) -> R<()> {
        let Some(body) = &f.body else { return Ok(()) };
        let name = f.name.name.clone();
        let ctx = ErrorContext::at(
            "function.not.wellformed",
            f.name.span,
            "Function might not be well-formed.",
        );
        let heap = st.heap.clone();
        self.modes.current_function = Some(name.clone());
        self.member.function_measures = self.measures(st, &heap, &f.contract.decreases)?;
        // Inside a function only some positive amount of each permission is ever needed.
        let value = self.with_modes(
            |m| m.positive_only = true,
            |v| v.eval(st, &heap, body, &ctx),
        );
        self.member.function_measures.clear();
        let value = value?;
        if f.contract.ensures.is_empty() {
            return Ok(());
        }
        let violated = ErrorContext::at_conjunct(
            "postcondition.violated",
            format!("Postcondition of {name} might not hold."),
        );
        let mut end = st.clone();
        // Well-definedness of the postcondition is checked on its own (as for methods).
        let r = self.with_modes(
            |m| {
                m.result = Some(value);
                m.lenient_reads = true;
            },
            |v| -> R<()> {
                for post in &f.contract.ensures {
                    v.consume(&mut end, &heap, post, &violated.for_clause(post))?;
                }
                Ok(())
            },
        );
        path_end(r)
    }

    /// The value of `f`'s body in `st`, evaluated without checking anything (`None` if it
    /// cannot be evaluated); what evaluation would report is left to `verify_function_body`.
    /// Not for a recursive function: its applications here would instantiate its definition
    /// before the termination of the call is checked (a non-terminating definition can be
    /// contradictory, `f(x) == 1 + f(x)`).
    pub fn body_value_quietly(&mut self, f: &Function, st: &State) -> R<Option<Term>> {
        let Some(body) = &f.body else { return Ok(None) };
        if reaches(&self.env.function_call_graph, &f.name.name, &f.name.name) {
            return Ok(None);
        }
        let heap = st.heap.clone();
        let reported = self.errors.len();
        let value = self.with_modes(
            |m| {
                m.checking = false;
                m.positive_only = true;
                m.result = None;
            },
            |v| {
                let ctx = ErrorContext::at("function.not.wellformed", f.name.span, "");
                v.eval(st, &heap, body, &ctx)
            },
        );
        if value == Err(Abort::Solver) {
            return Err(Abort::Solver);
        }
        self.errors.truncate(reported);
        Ok(value.ok())
    }

    /// A predicate's body must be well-formed in a heap holding nothing else.
    pub fn verify_predicate(&mut self, p: &Predicate) -> R<()> {
        let Some(body) = &p.body else { return Ok(()) };
        let Some(info) = self.env.sem.predicates.get(&p.name.name).cloned() else {
            return Err(self.unsupported(p.name.span, "this predicate"));
        };
        let mut st = State::default();
        for var in &info.params {
            let v = self.env.sem.var(*var).clone();
            let sort = self.sort_of(&v.ty, p.name.span)?;
            let t = self.fresh(&v.name, sort, p.name.span)?;
            st.store.insert(*var, t);
        }
        let ctx = ErrorContext::at(
            "predicate.not.wellformed",
            p.name.span,
            "Predicate might not be well-formed.",
        );
        path_end(self.produce(&mut st, body, &ctx))
    }

    /// At an application of `callee` (parameters bound to the arguments) inside the body of
    /// a function with a measure.
    pub fn check_function_call_terminates(
        &mut self,
        st: &State,
        heap: &Heap,
        callee: &Function,
        call: &Expr,
    ) -> R<()> {
        let caller_measures = std::mem::take(&mut self.member.function_measures);
        let r = self.function_call_terminates(st, heap, callee, call, &caller_measures);
        self.member.function_measures = caller_measures;
        r
    }

    fn function_call_terminates(
        &mut self,
        st: &State,
        heap: &Heap,
        callee: &Function,
        call: &Expr,
        caller_measures: &[crate::rules::termination::Measure],
    ) -> R<()> {
        if caller_measures.iter().all(|m| m.tuple.is_none()) {
            return Ok(());
        }
        let caller = self.modes.current_function.clone().unwrap_or_default();
        let name = callee.name.name.clone();
        let recursive = name == caller || reaches(&self.env.function_call_graph, &name, &caller);
        if recursive && callee.contract.decreases.is_empty() {
            return Ok(()); // Viper checks only functions with measures
        }
        let callee_measures = self.measures(st, heap, &callee.contract.decreases)?;
        let what = format!("the application of {name}");
        let has_measure = !callee.contract.decreases.is_empty();
        self.compare_measures(
            caller_measures,
            &callee_measures,
            recursive,
            has_measure,
            call.span,
            &what,
        )
    }
}
