//! Counterexamples (`--counterexample`): for a failed check, concrete values of the state
//! the check was made in, from the solver's model of the failing query, read inside that
//! query's scope (after it the model is gone).
//!
//! The state is the one last recorded where a statement was executed or an assertion
//! consumed (`note_state`, only with counterexamples on). Shown are the variables with
//! values of basic types (`Int`, `Bool`, `Perm`, `Ref`) and the field values of the
//! locations the state holds some permission to; references are named `o1`, `o2`, ... in
//! order of first appearance, so aliases show as one name. Asking for them re-runs the
//! failing query once more with `get-value`: it never changes a result.

use std::collections::HashMap;

use germanium_semantics::VarId;
use germanium_smt::{RealLit, Sort, Term, Value};
use germanium_syntax::{Counterexample, Span};

use crate::decider::Refutation;
use crate::resources;
use crate::rules::context::{Verifier, R};
use crate::state::{Heap, Resource, State};

/// The state a counterexample is read from.
#[derive(Clone, Debug, Default)]
pub struct ModelState {
    pub store: HashMap<VarId, Term>,
    pub heap: Heap,
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// Records `st` as the state checks are made in from now on.
    pub(crate) fn note_state(&mut self, st: &State) {
        self.note_state_with(st, &st.heap);
    }

    /// Records `st`'s store with `heap` (during a consumption, the heap before it: what
    /// the assertion's reads see).
    pub(crate) fn note_state_with(&mut self, st: &State, heap: &Heap) {
        if self.env.counterexamples {
            self.member.model_state = Some(ModelState {
                store: st.store.clone(),
                heap: heap.clone(),
            });
        }
    }

    /// The values of the recorded state in a model of the failing query `negation`.
    pub(crate) fn counterexample(
        &mut self,
        negation: &Term,
        span: Span,
    ) -> R<Option<Counterexample>> {
        let Some(state) = self.member.model_state.clone() else {
            return Ok(None);
        };
        let basic = |t: &Term| {
            matches!(t.sort(), Sort::Int | Sort::Bool | Sort::Real) || *t.sort() == ref_sort()
        };
        let mut vars: Vec<(VarId, Term)> = state
            .store
            .iter()
            .filter(|(_, t)| basic(t))
            .map(|(v, t)| (*v, t.clone()))
            .collect();
        vars.sort_by_key(|(v, _)| *v);
        let fields: Vec<(String, Term, Term, Term)> = resources::held(&state.heap, None)
            .into_iter()
            .filter_map(|h| match (&h.resource, h.args.as_slice()) {
                (Resource::Field(f), [r]) if basic(&h.snap) => {
                    Some((f.clone(), r.clone(), h.snap.clone(), h.perm.is_positive()))
                }
                _ => None,
            })
            .collect();
        let null = self.env.null.clone();
        let mut wanted = vec![null];
        wanted.extend(vars.iter().map(|(_, t)| t.clone()));
        for (_, r, v, held) in &fields {
            wanted.extend([r.clone(), v.clone(), held.clone()]);
        }
        let refutation = self
            .decider
            .refutes_or_explains(negation, &wanted)
            .map_err(|e| self.solver_failed(e, span))?;
        let Refutation::NotProved {
            answer,
            values: Some(values),
        } = refutation
        else {
            return Ok(None);
        };
        let mut names = ObjectNames::new(values[0].clone());
        let mut out = Counterexample {
            candidate: !matches!(answer, germanium_smt::SatResult::Sat),
            ..Counterexample::default()
        };
        let mut at = 1;
        for (var, t) in &vars {
            let name = self.env.sem.var(*var).name.clone();
            out.variables
                .push((name, names.show(&values[at], *t.sort() == ref_sort())));
            at += 1;
        }
        for (field, _, v, _) in &fields {
            let (receiver, value, held) = (&values[at], &values[at + 1], &values[at + 2]);
            at += 3;
            if *held != Value::Bool(true) {
                continue;
            }
            let object = names.show(receiver, true);
            let shown = names.show(value, *v.sort() == ref_sort());
            if !out.heap.iter().any(|(o, f, _)| *o == object && f == field) {
                out.heap.push((object, field.clone(), shown));
            }
        }
        out.heap.sort();
        Ok(Some(out))
    }
}

fn ref_sort() -> Sort {
    Sort::named("Ref")
}

/// Stable names for references: `null`, then `o1`, `o2`, ... in order of first use.
struct ObjectNames {
    null: Value,
    named: Vec<Value>,
}

impl ObjectNames {
    fn new(null: Value) -> ObjectNames {
        ObjectNames {
            null,
            named: Vec::new(),
        }
    }

    /// `value` as Viper writes it (a reference by its object name).
    fn show(&mut self, value: &Value, reference: bool) -> String {
        if reference {
            if *value == self.null {
                return "null".into();
            }
            let at = match self.named.iter().position(|v| v == value) {
                Some(i) => i,
                None => {
                    self.named.push(value.clone());
                    self.named.len() - 1
                }
            };
            return format!("o{}", at + 1);
        }
        match value {
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Real(r) => fraction(r),
            Value::Element(e) => e.as_str().to_string(),
            Value::Other(x) => x.to_string(),
        }
    }
}

/// A rational as Viper writes a permission: `1/2`, `0`, `-3/4`.
fn fraction(r: &RealLit) -> String {
    if r.is_integer() {
        r.numerator().to_string()
    } else {
        format!("{}/{}", r.numerator(), r.denominator())
    }
}
