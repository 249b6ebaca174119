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

/// ADT values nest this deep before only non-recursive constructors are tried.
const ADT_DEPTH: usize = 2;
/// New objects in one collection at most.
const MAX_NEW_OBJECTS: usize = 12;

impl Machine<'_> {
    /// A value of type `ty` the choices pick (a new object among the references).
    pub(super) fn choose(&self, run: &mut Run, ty: &Type, choices: &mut dyn Choices) -> X<Value> {
        if let Type::Adt(name, type_args) = ty {
            return self.choose_adt(run, name, type_args, choices);
        }
        if self.ev.modelled_domain(ty) {
            return self.choose_domain_value(ty, choices);
        }
        let value = |v: Value| Candidate::Value(v);
        let ints = |items: &[i64]| items.iter().map(|i| Value::int(*i)).collect::<Vec<_>>();
        let mut options: Vec<Candidate> = match ty {
            Type::Int => self
                .ev
                .sample_integers()
                .iter()
                .map(|i| value(Value::int(*i)))
                .collect(),
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
            Type::Seq(t) if **t == Type::Int => {
                let mut v = vec![
                    value(Value::seq([])),
                    value(Value::seq(ints(&[0]))),
                    value(Value::seq(ints(&[1, 0]))),
                ];
                // Longer ones, as long as the program's small literals say: 0, 1, 2, ...
                v.extend(
                    self.longer_lengths()
                        .map(|n| value(Value::seq((0..n as i64).map(Value::int)))),
                );
                v
            }
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
                v.extend(
                    self.longer_lengths()
                        .map(|n| Candidate::New(Some((set, n)))),
                );
                // One holding `null`.
                v.push(value(collect(vec![Value::null()])));
                v
            }
            Type::Seq(t) | Type::Set(t) | Type::Multiset(t) => {
                return self.choose_collection(run, ty, t, choices)
            }
            Type::Map(k, v) => return self.choose_map(run, k, v, choices),
            other => {
                return out(Outcome::Unknown(format!(
                    "no values of {other:?} are tried yet"
                )))
            }
        };
        // Hinted values of the type first (see `Run::hints`).
        for hint in run.hints.iter().rev() {
            if hint.has_type(ty) {
                options.retain(|o| !matches!(o, Candidate::Value(v) if v == hint));
                options.insert(0, value(hint.clone()));
            }
        }
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

    /// A collection of another element type: empty, or of one or two elements chosen in
    /// turn.
    fn choose_collection(
        &self,
        run: &mut Run,
        ty: &Type,
        element: &Type,
        choices: &mut dyn Choices,
    ) -> X<Value> {
        let Some(n) = choices.pick(3) else {
            return out(Outcome::Exhausted);
        };
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(self.choose(run, element, choices)?);
        }
        Ok(match ty {
            Type::Set(_) => Value::set(items),
            Type::Multiset(_) => Value::multiset(items),
            _ => Value::seq(items),
        })
    }

    /// A map: empty, or of one key chosen with its value; with integer keys also the keys
    /// `0, 1, ..` as many as the program's small literals say, each value chosen.
    fn choose_map(
        &self,
        run: &mut Run,
        key: &Type,
        value: &Type,
        choices: &mut dyn Choices,
    ) -> X<Value> {
        let mut sizes = vec![0, 1];
        if *key == Type::Int {
            sizes.push(2);
            sizes.extend(self.longer_lengths());
        }
        let Some(i) = choices.pick(sizes.len()) else {
            return out(Outcome::Exhausted);
        };
        let mut pairs = Vec::with_capacity(sizes[i]);
        for n in 0..sizes[i] {
            let k = if *key == Type::Int && i > 1 {
                Value::int(n as i64)
            } else {
                self.choose(run, key, choices)?
            };
            let v = self.choose(run, value, choices)?;
            pairs.push((k, v));
        }
        Ok(Value::map(pairs))
    }

    /// Lengths of collections beyond two: 3, 4, and the program's small literals'.
    fn longer_lengths(&self) -> impl Iterator<Item = usize> + '_ {
        self.ev
            .sample_integers()
            .iter()
            .filter_map(|n| usize::try_from(*n).ok())
            .filter(|n| (3..=MAX_NEW_OBJECTS).contains(n))
    }

    /// A value of an ADT: a constructor, then its arguments, nested at most a few deep
    /// (deeper, only constructors that do not contain the ADT itself).
    fn choose_adt(
        &self,
        run: &mut Run,
        name: &str,
        type_args: &[Type],
        choices: &mut dyn Choices,
    ) -> X<Value> {
        let Some(info) = self.sem.adts.get(name) else {
            return out(Outcome::Unknown(format!("no ADT `{name}`")));
        };
        let field_types = |c: &str| -> Vec<Type> {
            let Some(ctor) = self.sem.constructors.get(c) else {
                return Vec::new();
            };
            let lookup = |v: &str| {
                info.type_params
                    .iter()
                    .position(|p| p == v)
                    .and_then(|i| type_args.get(i).cloned())
            };
            ctor.fields
                .iter()
                .map(|(_, t)| t.subst_vars(&lookup))
                .collect()
        };
        let recursive = |c: &str| field_types(c).iter().any(|t| mentions_adt(t, name));
        let mut options: Vec<&String> = info.constructors.iter().collect();
        if run.adt_depth >= ADT_DEPTH {
            options.retain(|c| !recursive(c));
        }
        if options.is_empty() {
            return out(Outcome::Unknown(format!(
                "values of `{name}` nested deeper"
            )));
        }
        let Some(i) = choices.pick(options.len()) else {
            return out(Outcome::Exhausted);
        };
        let constructor = options[i].clone();
        run.adt_depth += 1;
        let mut args = Vec::new();
        let mut result = Ok(());
        for t in field_types(&constructor) {
            match self.choose(run, &t, choices) {
                Ok(v) => args.push(v),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        run.adt_depth -= 1;
        result?;
        Ok(Value::Adt { constructor, args })
    }
}

/// Whether `t` is or contains the ADT `name`.
fn mentions_adt(t: &Type, name: &str) -> bool {
    match t {
        Type::Adt(n, args) => n == name || args.iter().any(|a| mentions_adt(a, name)),
        Type::Seq(e) | Type::Set(e) | Type::Multiset(e) => mentions_adt(e, name),
        Type::Map(k, v) => mentions_adt(k, name) || mentions_adt(v, name),
        Type::Domain(_, args) => args.iter().any(|a| mentions_adt(a, name)),
        _ => false,
    }
}
