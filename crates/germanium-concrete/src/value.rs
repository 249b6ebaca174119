//! Concrete values of Viper's types, and how Viper writes them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

use crate::heap::ObjectId;

/// A value of a Viper type. Ordered, so that collections of values are sets and maps.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    Int(BigInt),
    Bool(bool),
    Perm(BigRational),
    /// `None` is `null`.
    Ref(Option<ObjectId>),
    Seq(Vec<Value>),
    Set(BTreeSet<Value>),
    /// Each element with its number of occurrences (never zero).
    Multiset(BTreeMap<Value, u64>),
    Map(BTreeMap<Value, Value>),
    Adt {
        constructor: String,
        args: Vec<Value>,
    },
    /// A value of a user domain: the `index`-th one of the model's.
    Domain {
        domain: String,
        index: u32,
    },
}

impl Value {
    pub fn int(i: i64) -> Value {
        Value::Int(BigInt::from(i))
    }

    /// The permission `num/den`.
    pub fn perm(num: i64, den: i64) -> Value {
        Value::Perm(BigRational::new(BigInt::from(num), BigInt::from(den)))
    }

    pub fn write() -> Value {
        Value::Perm(BigRational::one())
    }

    pub fn none() -> Value {
        Value::Perm(BigRational::zero())
    }

    pub fn object(n: u32) -> Value {
        Value::Ref(Some(ObjectId(n)))
    }

    pub fn null() -> Value {
        Value::Ref(None)
    }

    pub fn seq(items: impl IntoIterator<Item = Value>) -> Value {
        Value::Seq(items.into_iter().collect())
    }

    pub fn set(items: impl IntoIterator<Item = Value>) -> Value {
        Value::Set(items.into_iter().collect())
    }

    pub fn multiset(items: impl IntoIterator<Item = Value>) -> Value {
        let mut m = BTreeMap::new();
        for v in items {
            *m.entry(v).or_insert(0) += 1;
        }
        Value::Multiset(m)
    }

    pub fn map(pairs: impl IntoIterator<Item = (Value, Value)>) -> Value {
        Value::Map(pairs.into_iter().collect())
    }

    /// The kind of value, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Int(_) => "Int",
            Value::Bool(_) => "Bool",
            Value::Perm(_) => "Perm",
            Value::Ref(_) => "Ref",
            Value::Seq(_) => "Seq",
            Value::Set(_) => "Set",
            Value::Multiset(_) => "Multiset",
            Value::Map(_) => "Map",
            Value::Adt { .. } => "ADT",
            Value::Domain { .. } => "domain",
        }
    }

    /// Whether this is a value of the scalar type `ty` (`Int`, `Bool`, `Perm`, `Ref`); false
    /// for every other type.
    pub fn has_type(&self, ty: &germanium_semantics::Type) -> bool {
        use germanium_semantics::Type;
        matches!(
            (self, ty),
            (Value::Int(_), Type::Int)
                | (Value::Bool(_), Type::Bool)
                | (Value::Perm(_), Type::Perm)
                | (Value::Ref(_), Type::Ref)
        )
    }
}

/// Names for domain values (a constant they equal), by domain instance and index.
pub type DomainNames = BTreeMap<(String, u32), String>;

impl Value {
    /// As Viper writes the value, a domain value named by `names` where it has a name.
    pub fn named(&self, names: &DomainNames) -> String {
        let all = |items: &mut dyn Iterator<Item = &Value>| -> String {
            items.map(|v| v.named(names)).collect::<Vec<_>>().join(", ")
        };
        match self {
            Value::Int(i) => i.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Perm(p) if p.is_integer() => p.numer().to_string(),
            Value::Perm(p) => format!("{}/{}", p.numer(), p.denom()),
            Value::Ref(None) => "null".into(),
            Value::Ref(Some(o)) => o.to_string(),
            Value::Seq(items) => format!("Seq({})", all(&mut items.iter())),
            Value::Set(items) => format!("Set({})", all(&mut items.iter())),
            Value::Multiset(items) => {
                let each = items
                    .iter()
                    .flat_map(|(v, n)| std::iter::repeat_n(v, *n as usize));
                format!("Multiset({})", all(&mut each.into_iter()))
            }
            Value::Map(pairs) => {
                let each: Vec<String> = pairs
                    .iter()
                    .map(|(k, v)| format!("{} := {}", k.named(names), v.named(names)))
                    .collect();
                format!("Map({})", each.join(", "))
            }
            Value::Adt { constructor, args } => {
                format!("{constructor}({})", all(&mut args.iter()))
            }
            Value::Domain { domain, index } => match names.get(&(domain.clone(), *index)) {
                Some(name) => name.clone(),
                None => format!("{domain}#{index}"),
            },
        }
    }
}

/// As Viper writes values: `5`, `true`, `3/4`, `null`, `o1`, `Seq(1, 2)`, `Set(1)`,
/// `Multiset(1, 1)`, `Map(1 := 2)`, `Cons(4, Nil())`, `Color#2`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.named(&DomainNames::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_as_viper_writes_them() {
        let cases = [
            (Value::int(-5), "-5"),
            (Value::Bool(true), "true"),
            (Value::perm(6, 8), "3/4"),
            (Value::perm(2, 2), "1"),
            (Value::null(), "null"),
            (Value::object(2), "o2"),
            (Value::seq([Value::int(1), Value::int(2)]), "Seq(1, 2)"),
            (
                Value::set([Value::int(7), Value::int(5), Value::int(7)]),
                "Set(5, 7)",
            ),
            (
                Value::multiset([Value::int(1), Value::int(1)]),
                "Multiset(1, 1)",
            ),
            (
                Value::map([(Value::int(1), Value::Bool(false))]),
                "Map(1 := false)",
            ),
            (
                Value::Adt {
                    constructor: "Cons".into(),
                    args: vec![
                        Value::int(4),
                        Value::Adt {
                            constructor: "Nil".into(),
                            args: vec![],
                        },
                    ],
                },
                "Cons(4, Nil())",
            ),
            (
                Value::Domain {
                    domain: "Color".into(),
                    index: 2,
                },
                "Color#2",
            ),
        ];
        for (value, text) in cases {
            assert_eq!(value.to_string(), text);
        }
    }
}
