//! Counterexamples (`--counterexample`): for a failed check, concrete values of the state
//! the check was made in, from the solver's model of the failing query, read inside that
//! query's scope (after it the model is gone).
//!
//! The state is the one last recorded where a statement was executed or an assertion
//! consumed (`note_state`, only with counterexamples on). Shown are the variables, the
//! field values of the locations the state holds some permission to, the predicate
//! instances it holds, and the field values at `old` and the labels the failing assertion
//! reads; values are read by type (`counterexample_values`). References are named `o1`,
//! `o2`, ... in order of first appearance, so aliases show as one name. The failing query
//! is asked again of a second solver process in the same state
//! (`Decider::explain_in_fork`), so the worker's own solver, and every later answer, stays
//! as it is: turning counterexamples on never changes a result.

use std::collections::HashMap;

use germanium_semantics::VarId;
use germanium_smt::{Term, Value};
use germanium_syntax::ast::{Expr, ExprKind};
use germanium_syntax::Counterexample;

use crate::decider::Refutation;
use crate::resources;
use crate::rules::context::Verifier;
use crate::rules::counterexample_values::{fraction, Plan, Reader};
use crate::state::{Heap, Resource, State, PRE_STATE};

/// The state a counterexample is read from.
#[derive(Clone, Debug, Default)]
pub struct ModelState {
    pub store: HashMap<VarId, Term>,
    pub heap: Heap,
    /// The heaps at `old` ([`PRE_STATE`]) and at the labels.
    pub old_heaps: HashMap<String, Heap>,
}

/// Which heap a field value is read in.
#[derive(Clone, Debug, PartialEq)]
enum At {
    Now,
    Old,
    Label(String),
}

/// What one line of the counterexample shows, with where its answers are.
enum Entry {
    Variable {
        name: String,
        slot: usize,
    },
    Field {
        at: At,
        field: String,
        receiver: usize,
        value: usize,
        held: usize,
    },
    Predicate {
        name: String,
        args: Vec<Option<usize>>,
        amount: usize,
    },
    Application {
        name: String,
        args: Vec<Option<usize>>,
        result: usize,
    },
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
                old_heaps: st.old_heaps.clone(),
            });
        }
    }

    /// The values of the recorded state in a model of the failing query `negation` (and
    /// of its earlier heaps where the failing assertion `offending` reads them), or why
    /// there are none.
    pub(crate) fn counterexample(&mut self, negation: &Term, offending: &Expr) -> Counterexample {
        let none = |why: &str| Counterexample {
            not_found: Some(why.to_string()),
            ..Counterexample::default()
        };
        let Some(state) = self.member.model_state.clone() else {
            return none("no state was recorded where the check was made");
        };
        let env = self.env;
        let sem = env.sem;
        let mut plan = Plan::new(env);
        let mut entries = Vec::new();
        let mut vars: Vec<(&VarId, &Term)> = state.store.iter().collect();
        vars.sort_by_key(|(v, _)| **v);
        for (var, t) in vars {
            let info = sem.var(*var);
            if let Some(slot) = plan.value(&info.ty, t.clone()) {
                let name = info.name.clone();
                entries.push(Entry::Variable { name, slot });
            }
        }
        let mut heaps = vec![(At::Now, &state.heap)];
        for at in earlier_states(offending) {
            let key = match &at {
                At::Label(l) => l.as_str(),
                _ => PRE_STATE,
            };
            if let Some(heap) = state.old_heaps.get(key) {
                heaps.push((at, heap));
            }
        }
        for (at, heap) in heaps {
            for h in resources::held(heap, None) {
                let held = h.perm.is_positive();
                match (&h.resource, h.args.as_slice()) {
                    (Resource::Field(f), [r]) => {
                        let Some(info) = sem.fields.get(f) else {
                            continue;
                        };
                        let Some(value) = plan.value(&info.ty, h.snap.clone()) else {
                            continue;
                        };
                        entries.push(Entry::Field {
                            at: at.clone(),
                            field: f.clone(),
                            receiver: plan.ask(r.clone()),
                            value,
                            held: plan.ask(held),
                        });
                    }
                    (Resource::Predicate(p), args) if at == At::Now => {
                        let Some(info) = sem.predicates.get(p) else {
                            continue;
                        };
                        let types = info.params.iter().map(|v| &sem.var(*v).ty);
                        let args = types
                            .zip(args)
                            .map(|(ty, a)| plan.value(ty, a.clone()))
                            .collect();
                        entries.push(Entry::Predicate {
                            name: p.clone(),
                            args,
                            amount: plan.ask(h.perm.0.clone()),
                        });
                    }
                    _ => {}
                }
            }
        }
        let mut apps = Vec::new();
        applications(negation, &mut apps);
        for (name, app) in apps {
            let Some(info) = sem.functions.get(&name) else {
                continue;
            };
            let germanium_smt::TermKind::App(_, all) = app.kind() else {
                continue;
            };
            let types = info.params.iter().map(|v| &sem.var(*v).ty);
            // The first argument is the snapshot of the function's precondition.
            let args = types
                .zip(all.iter().skip(1))
                .map(|(ty, a)| plan.value(ty, a.clone()))
                .collect();
            if let Some(result) = plan.value(&info.result, app.clone()) {
                entries.push(Entry::Application { name, args, result });
            }
        }
        // A forked solver that fails (cannot start, dies) gives no counterexample; the
        // result stays what the worker's own solver decided.
        let refutation =
            self.decider
                .explain_in_fork(negation, plan.first_round(), &|first: &[Value]| {
                    plan.second_round(first)
                });
        let (answer, values) = match refutation {
            Ok(Refutation::NotProved {
                answer,
                values: Some(values),
            }) => (answer, values),
            Ok(Refutation::NotProved { values: None, .. }) => {
                return none("the solver gave no model")
            }
            Ok(Refutation::Proved) => {
                return none("a second solver process proved the check (within its budget)")
            }
            Err(_) => return none("a second solver process could not be used"),
        };
        let mut out = Counterexample {
            candidate: !matches!(answer, germanium_smt::SatResult::Sat),
            ..Counterexample::default()
        };
        let mut reader = plan.reader(&values);
        for entry in &entries {
            show_entry(&mut reader, entry, &mut out);
        }
        out.heap.sort();
        out.old_heap.sort();
        out.labelled_heap.sort();
        out
    }
}

fn show_entry(reader: &mut Reader<'_, '_, '_>, entry: &Entry, out: &mut Counterexample) {
    match entry {
        Entry::Variable { name, slot } => {
            let value = reader.show(*slot);
            out.variables.push((name.clone(), value));
        }
        Entry::Field {
            at,
            field,
            receiver,
            value,
            held,
        } => {
            let Some(r) = reader.answer(*receiver).cloned() else {
                return;
            };
            let object = reader.object(&r);
            let value = reader.show(*value);
            if reader.answer(*held) != Some(&Value::Bool(true)) {
                return;
            }
            let field = field.clone();
            match at {
                At::Now => push_new(&mut out.heap, (object, field, value)),
                At::Old => push_new(&mut out.old_heap, (object, field, value)),
                At::Label(l) => push_new(&mut out.labelled_heap, (l.clone(), object, field, value)),
            }
        }
        Entry::Predicate { name, args, amount } => {
            let shown = match reader.answer(*amount) {
                Some(Value::Real(r)) if r.numerator().as_i128().is_some_and(|n| n > 0) => {
                    fraction(r)
                }
                _ => return,
            };
            let args = args
                .iter()
                .map(|slot| slot.map_or("?".to_string(), |s| reader.show(s)))
                .collect();
            out.predicates.push((name.clone(), args, shown));
        }
        Entry::Application { name, args, result } => {
            let args = args
                .iter()
                .map(|slot| slot.map_or("?".to_string(), |s| reader.show(s)))
                .collect();
            let result = reader.show(*result);
            push_new(&mut out.functions, (name.clone(), args, result));
        }
    }
}

/// The applications of heap-dependent functions in `t` outside quantifiers (whose
/// arguments may be bound variables): the function's name and the application.
fn applications(t: &Term, out: &mut Vec<(String, Term)>) {
    match t.kind() {
        germanium_smt::TermKind::App(decl, args) => {
            let symbol = decl.name().as_str();
            let name = symbol
                .strip_prefix("sx.fn.")
                .or_else(|| symbol.strip_prefix("sx.fnl."));
            if let Some(name) = name {
                if !out.iter().any(|(_, a)| a == t) {
                    out.push((name.to_string(), t.clone()));
                }
            }
            args.iter().for_each(|a| applications(a, out));
        }
        germanium_smt::TermKind::Op(_, args) | germanium_smt::TermKind::Builtin(_, args) => {
            args.iter().for_each(|a| applications(a, out));
        }
        _ => {}
    }
}

/// Adds `item` unless an equal one is there (two chunks of one location show once).
fn push_new<T: PartialEq + Clone>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// The earlier states `e` reads: `old(..)` and the labels of `old[l](..)`, in order of
/// first appearance.
fn earlier_states(e: &Expr) -> Vec<At> {
    let mut found = Vec::new();
    germanium_semantics::visit::walk_expr(e, &mut |x| {
        let at = match &x.kind {
            ExprKind::Old(None, _) => At::Old,
            ExprKind::Old(Some(l), _) if l.name == "old" => At::Old,
            ExprKind::Old(Some(l), _) => At::Label(l.name.clone()),
            _ => return,
        };
        if !found.contains(&at) {
            found.push(at);
        }
    });
    found
}
