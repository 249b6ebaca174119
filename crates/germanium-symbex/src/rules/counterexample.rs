//! Counterexamples (`--counterexample`): for a failed check, concrete values of the state
//! the check was made in, from the solver's model of the failing query, read inside that
//! query's scope (after it the model is gone).
//!
//! The state is the one last recorded where a statement was executed or an assertion
//! consumed (`note_state`, only with counterexamples on). Shown are the variables with
//! values of basic types (`Int`, `Bool`, `Perm`, `Ref`) and the field values of the
//! locations the state holds some permission to; references are named `o1`, `o2`, ... in
//! order of first appearance, so aliases show as one name. The failing query is asked
//! again of a second solver process in the same state (`Decider::explain_in_fork`), so
//! the worker's own solver, and every later answer, stays as it is: turning
//! counterexamples on never changes a result.

use std::collections::HashMap;

use germanium_semantics::VarId;
use germanium_smt::{RealLit, Sort, Term, Value};
use germanium_syntax::ast::{Expr, ExprKind};
use germanium_syntax::Counterexample;

use crate::decider::Refutation;
use crate::resources;
use crate::rules::context::Verifier;
use crate::state::{Heap, Resource, State, PRE_STATE};

/// The state a counterexample is read from.
#[derive(Clone, Debug, Default)]
pub struct ModelState {
    pub store: HashMap<VarId, Term>,
    pub heap: Heap,
    /// The method's pre-state heap, if there is one.
    pub old_heap: Option<Heap>,
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
                old_heap: st.old_heaps.get(PRE_STATE).cloned(),
            });
        }
    }

    /// The values of the recorded state in a model of the failing query `negation` (and
    /// of its pre-state's heap where the failing assertion `offending` reads `old(..)`).
    pub(crate) fn counterexample(
        &mut self,
        negation: &Term,
        offending: &Expr,
    ) -> Option<Counterexample> {
        let state = self.member.model_state.clone()?;
        let with_old = mentions_old(offending);
        let env = self.env;
        let shown = |t: &Term| shown_kind(env, t.sort());
        let mut vars: Vec<(VarId, Term)> = state
            .store
            .iter()
            .filter(|(_, t)| shown(t).is_some())
            .map(|(v, t)| (*v, t.clone()))
            .collect();
        vars.sort_by_key(|(v, _)| *v);
        let fields_of = |heap: &Heap, old: bool| -> Vec<(bool, String, Term, Term, Term)> {
            resources::held(heap, None)
                .into_iter()
                .filter_map(|h| match (&h.resource, h.args.as_slice()) {
                    (Resource::Field(f), [r]) if shown(&h.snap).is_some() => Some((
                        old,
                        f.clone(),
                        r.clone(),
                        h.snap.clone(),
                        h.perm.is_positive(),
                    )),
                    _ => None,
                })
                .collect()
        };
        let mut fields = fields_of(&state.heap, false);
        if let (true, Some(old)) = (with_old, &state.old_heap) {
            fields.extend(fields_of(old, true));
        }
        // First round: null, each variable (a sequence by its length), and per field chunk
        // its receiver, value (length) and whether it holds some permission.
        let first_of = |t: &Term| match shown(t) {
            Some(Kind::Seq(_)) => theories(env).and_then(|th| th.sequence_length(t.clone())),
            _ => Some(t.clone()),
        };
        let mut wanted = vec![self.env.null.clone()];
        wanted.extend(vars.iter().filter_map(|(_, t)| first_of(t)));
        for (_, _, r, v, held) in &fields {
            wanted.push(r.clone());
            wanted.extend(first_of(v));
            wanted.push(held.clone());
        }
        // Second round: the first elements of each sequence, once its length is known.
        let seq_positions: Vec<(usize, Term)> = {
            let mut out = Vec::new();
            let mut at = 1;
            for (_, t) in &vars {
                if matches!(shown(t), Some(Kind::Seq(_))) {
                    out.push((at, t.clone()));
                }
                at += 1;
            }
            for (_, _, _, v, _) in &fields {
                if matches!(shown(v), Some(Kind::Seq(_))) {
                    out.push((at + 1, v.clone()));
                }
                at += 3;
            }
            out
        };
        let elements = |first: &[Value]| -> (Vec<Term>, Vec<Term>) {
            let (mut more, mut pinned) = (Vec::new(), Vec::new());
            for (at, s) in &seq_positions {
                let (Some(th), Some(n)) = (theories(env), shown_length(&first[*at])) else {
                    continue;
                };
                pinned.extend(
                    th.sequence_length(s.clone())
                        .map(|len| Term::eq(len, Term::int(n as i64))),
                );
                for i in 0..n.min(MAX_ELEMENTS) {
                    more.extend(th.sequence_index(s.clone(), Term::int(i as i64)));
                }
            }
            (more, pinned)
        };
        // A forked solver that fails (cannot start, dies) gives no counterexample; the
        // result stays what the worker's own solver decided.
        let refutation = self
            .decider
            .explain_in_fork(negation, &wanted, &elements)
            .ok()?;
        let Refutation::NotProved {
            answer,
            values: Some(values),
        } = refutation
        else {
            return None;
        };
        let mut names = ObjectNames::new(values[0].clone());
        let mut reader = Reader {
            values: &values,
            first: 1,
            second: wanted.len(),
        };
        let mut out = Counterexample {
            candidate: !matches!(answer, germanium_smt::SatResult::Sat),
            ..Counterexample::default()
        };
        for (var, t) in &vars {
            let name = self.env.sem.var(*var).name.clone();
            let value = reader.next_shown(shown(t), &mut names);
            out.variables.push((name, value));
        }
        for (old, field, _, v, _) in &fields {
            let object = names.show(reader.next_first(), true);
            let value = reader.next_shown(shown(v), &mut names);
            let held = reader.next_first();
            if *held != Value::Bool(true) {
                continue;
            }
            let heap = if *old {
                &mut out.old_heap
            } else {
                &mut out.heap
            };
            if !heap.iter().any(|(o, f, _)| *o == object && f == field) {
                heap.push((object, field.clone(), value));
            }
        }
        out.heap.sort();
        out.old_heap.sort();
        Some(out)
    }
}

/// At most this many elements of a sequence are shown.
const MAX_ELEMENTS: u64 = 10;

/// How a value of a sort is shown: plainly (a reference by its object name), or as a
/// sequence of such values.
#[derive(Clone, Copy)]
enum Kind {
    Plain { reference: bool },
    Seq(bool),
}

fn shown_kind(env: &crate::env::Env<'_>, sort: &Sort) -> Option<Kind> {
    let plain = |s: &Sort| matches!(s, Sort::Int | Sort::Bool | Sort::Real) || *s == ref_sort();
    if plain(sort) {
        return Some(Kind::Plain {
            reference: *sort == ref_sort(),
        });
    }
    let elem = theories(env)?.sequence_element(sort)?;
    plain(&elem).then_some(Kind::Seq(elem == ref_sort()))
}

fn theories<'x>(env: &'x crate::env::Env<'_>) -> Option<&'x germanium_theories::Theories> {
    env.theories.as_ref()
}

/// A sequence length read from the model, if it is a small enough number.
fn shown_length(value: &Value) -> Option<u64> {
    match value {
        Value::Int(i) => i.as_i128().and_then(|n| u64::try_from(n).ok()),
        _ => None,
    }
}

/// Reads the two rounds of values in the order they were asked for.
struct Reader<'v> {
    values: &'v [Value],
    /// Next value of the first round, and of the second (after the first).
    first: usize,
    second: usize,
}

impl<'v> Reader<'v> {
    fn next_first(&mut self) -> &'v Value {
        self.first += 1;
        &self.values[self.first - 1]
    }

    fn next_shown(&mut self, kind: Option<Kind>, names: &mut ObjectNames) -> String {
        match kind {
            Some(Kind::Seq(reference)) => {
                let n = shown_length(self.next_first());
                let Some(n) = n else {
                    return "Seq(...)".into();
                };
                let shown = n.min(MAX_ELEMENTS) as usize;
                let elems: Vec<String> = (0..shown)
                    .map(|_| {
                        let v = self.values.get(self.second).cloned();
                        self.second += 1;
                        v.map_or("?".into(), |v| names.show(&v, reference))
                    })
                    .collect();
                let more = if (shown as u64) < n { ", ..." } else { "" };
                format!("Seq({}{more})", elems.join(", "))
            }
            Some(Kind::Plain { reference }) => names.show(self.next_first(), reference),
            None => {
                self.first += 1;
                "?".into()
            }
        }
    }
}

/// Whether `e` reads the method's pre-state (`old(..)`).
fn mentions_old(e: &Expr) -> bool {
    let mut found = false;
    germanium_semantics::visit::walk_expr(e, &mut |x| {
        found |= matches!(x.kind, ExprKind::Old(None, _))
    });
    found
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
