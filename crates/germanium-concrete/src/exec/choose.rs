//! The values a run tries where the semantics leaves one open: small integers first, then
//! those near the program's literals; `null`, the objects there and a new one.

use germanium_semantics::Type;

use super::{out, Choices, Machine, Outcome, Run, X};
use crate::value::Value;

/// A value to try: one given, or made of new objects (`None`: one reference; `Some((set,
/// n))`: a set or a sequence of `n` of them).
enum Candidate {
    Value(Value),
    New(Option<(bool, usize)>),
}

/// New objects in one collection at most.
const MAX_NEW_OBJECTS: usize = 12;

impl Machine<'_> {
    /// A value of type `ty` the choices pick (a new object among the references).
    pub(super) fn choose(&self, run: &mut Run, ty: &Type, choices: &mut dyn Choices) -> X<Value> {
        let value = |v: Value| Candidate::Value(v);
        let ints = |items: &[i64]| items.iter().map(|i| Value::int(*i)).collect::<Vec<_>>();
        let mut options: Vec<Candidate> = match ty {
            Type::Int => self.ints.iter().map(|i| value(Value::int(*i))).collect(),
            Type::Bool => vec![value(Value::Bool(false)), value(Value::Bool(true))],
            Type::Perm => vec![
                value(Value::none()),
                value(Value::perm(1, 2)),
                value(Value::write()),
            ],
            Type::Ref => std::iter::once(value(Value::null()))
                .chain(run.heap.all_objects().map(|o| value(Value::Ref(Some(o)))))
                .chain(std::iter::once(Candidate::New(None)))
                .collect(),
            Type::Seq(t) if **t == Type::Int => vec![
                value(Value::seq([])),
                value(Value::seq(ints(&[0]))),
                value(Value::seq(ints(&[1, 0]))),
            ],
            Type::Set(t) if **t == Type::Int => vec![
                value(Value::set([])),
                value(Value::set(ints(&[0]))),
                value(Value::set(ints(&[0, 1]))),
            ],
            Type::Multiset(t) if **t == Type::Int => vec![
                value(Value::multiset([])),
                value(Value::multiset(ints(&[0]))),
                value(Value::multiset(ints(&[0, 0]))),
                value(Value::multiset(ints(&[0, 1]))),
            ],
            // Collections of references: empty, new objects, or one object already there.
            Type::Seq(t) | Type::Set(t) if **t == Type::Ref => {
                let set = matches!(ty, Type::Set(_));
                let collect = move |items: Vec<Value>| {
                    if set {
                        Value::set(items)
                    } else {
                        Value::seq(items)
                    }
                };
                let mut v = vec![
                    value(collect(Vec::new())),
                    Candidate::New(Some((set, 1))),
                    Candidate::New(Some((set, 2))),
                ];
                v.extend(
                    run.heap
                        .all_objects()
                        .map(|o| value(collect(vec![Value::Ref(Some(o))]))),
                );
                // Longer ones of new objects: 3, 4, and the program's small literals' sizes.
                let longer = self
                    .ints
                    .iter()
                    .filter_map(|n| usize::try_from(*n).ok())
                    .filter(|n| (3..=MAX_NEW_OBJECTS).contains(n));
                v.extend(longer.map(|n| Candidate::New(Some((set, n)))));
                v
            }
            other => {
                return out(Outcome::Unknown(format!(
                    "no values of {other:?} are tried yet"
                )))
            }
        };
        let Some(i) = choices.pick(options.len()) else {
            return out(Outcome::Exhausted);
        };
        Ok(match options.swap_remove(i) {
            Candidate::Value(v) => v,
            Candidate::New(None) => Value::Ref(Some(run.heap.allocate())),
            Candidate::New(Some((set, n))) => {
                let objects: Vec<Value> = (0..n)
                    .map(|_| Value::Ref(Some(run.heap.allocate())))
                    .collect();
                if set {
                    Value::set(objects)
                } else {
                    Value::seq(objects)
                }
            }
        })
    }
}
