//! Viper's operators on concrete values.

use std::collections::{BTreeMap, BTreeSet};

use germanium_syntax::ast::{BinaryOp, CollectionKind, UnaryOp};
use germanium_syntax::Span;
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};

use super::{undefined, unknown, R};
use crate::value::Value;

/// Sequences longer than this are not built.
const MAX_LENGTH: usize = 1_000_000;

pub(crate) fn unary(op: UnaryOp, v: Value) -> R<Value> {
    match (op, v) {
        (UnaryOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
        (UnaryOp::Neg, Value::Int(i)) => Ok(Value::Int(-i)),
        (UnaryOp::Neg, Value::Perm(p)) => Ok(Value::Perm(-p)),
        (op, v) => unknown(format!("{op:?} of a {}", v.kind())),
    }
}

fn as_perm(v: &Value) -> Option<BigRational> {
    match v {
        Value::Perm(p) => Some(p.clone()),
        Value::Int(i) => Some(BigRational::from_integer(i.clone())),
        _ => None,
    }
}

/// Euclidean division and remainder, as SMT-LIB's `div` and `mod` (the remainder is never
/// negative).
fn euclid(a: &BigInt, b: &BigInt) -> (BigInt, BigInt) {
    let (q, r) = a.div_mod_floor(b);
    if r.is_negative() {
        // Only with a negative divisor: floor's remainder has the divisor's sign.
        (q + 1, r - b)
    } else {
        (q, r)
    }
}

/// `x op y` for the operators that evaluate both sides; `perm_result` when the expression is
/// typed Perm (`1/2` of two Ints is a fraction).
pub(crate) fn binary(span: Span, op: BinaryOp, x: Value, y: Value, perm_result: bool) -> R<Value> {
    use BinaryOp as B;
    let bool = |b: bool| Ok(Value::Bool(b));
    match (op, &x, &y) {
        (B::Eq, ..) => bool(equal(&x, &y)),
        (B::Ne, ..) => bool(!equal(&x, &y)),
        (B::Iff, Value::Bool(a), Value::Bool(b)) => bool(a == b),
        (B::Add, Value::Int(a), Value::Int(b)) => Ok(Value::Int(a + b)),
        (B::Sub, Value::Int(a), Value::Int(b)) => Ok(Value::Int(a - b)),
        (B::Mul, Value::Int(a), Value::Int(b)) if !perm_result => Ok(Value::Int(a * b)),
        (B::Div, Value::Int(a), Value::Int(b)) if !perm_result => {
            if b.is_zero() {
                return undefined(span, "the divisor is zero");
            }
            Ok(Value::Int(euclid(a, b).0))
        }
        (B::IntDiv, Value::Int(a), Value::Int(b)) | (B::Mod, Value::Int(a), Value::Int(b)) => {
            if b.is_zero() {
                return undefined(span, "the divisor is zero");
            }
            let (q, r) = euclid(a, b);
            Ok(Value::Int(if op == B::Mod { r } else { q }))
        }
        (B::Lt | B::Le | B::Gt | B::Ge, Value::Int(a), Value::Int(b)) => bool(match op {
            B::Lt => a < b,
            B::Le => a <= b,
            B::Gt => a > b,
            _ => a >= b,
        }),
        (B::Add | B::Sub | B::Mul | B::Div | B::Lt | B::Le | B::Gt | B::Ge, ..) => {
            let (Some(a), Some(b)) = (as_perm(&x), as_perm(&y)) else {
                return unknown(format!("{op:?} of a {} and a {}", x.kind(), y.kind()));
            };
            match op {
                B::Add => Ok(Value::Perm(a + b)),
                B::Sub => Ok(Value::Perm(a - b)),
                B::Mul => Ok(Value::Perm(a * b)),
                B::Div => {
                    if b.is_zero() {
                        return undefined(span, "the divisor is zero");
                    }
                    Ok(Value::Perm(a / b))
                }
                B::Lt => bool(a < b),
                B::Le => bool(a <= b),
                B::Gt => bool(a > b),
                _ => bool(a >= b),
            }
        }
        (B::In, e, Value::Seq(s)) => bool(s.contains(e)),
        (B::In, e, Value::Set(s)) => bool(s.contains(e)),
        (B::In, e, Value::Multiset(m)) => Ok(Value::Int(BigInt::from(*m.get(e).unwrap_or(&0)))),
        (B::In, e, Value::Map(m)) => bool(m.contains_key(e)),
        (B::Concat, Value::Seq(a), Value::Seq(b)) => {
            Ok(Value::Seq(a.iter().chain(b).cloned().collect()))
        }
        (B::Union, Value::Set(a), Value::Set(b)) => Ok(Value::Set(a.union(b).cloned().collect())),
        (B::Intersection, Value::Set(a), Value::Set(b)) => {
            Ok(Value::Set(a.intersection(b).cloned().collect()))
        }
        (B::Setminus, Value::Set(a), Value::Set(b)) => {
            Ok(Value::Set(a.difference(b).cloned().collect()))
        }
        (B::Subset, Value::Set(a), Value::Set(b)) => bool(a.is_subset(b)),
        (
            B::Union | B::Intersection | B::Setminus | B::Subset,
            Value::Multiset(a),
            Value::Multiset(b),
        ) => multiset(op, a, b),
        _ => unknown(format!("{op:?} of a {} and a {}", x.kind(), y.kind())),
    }
}

/// Equality of values, an Int equal to the same Perm (Viper converts).
fn equal(x: &Value, y: &Value) -> bool {
    match (x, y) {
        (Value::Int(_), Value::Perm(_)) | (Value::Perm(_), Value::Int(_)) => {
            as_perm(x) == as_perm(y)
        }
        _ => x == y,
    }
}

fn multiset(op: BinaryOp, a: &BTreeMap<Value, u64>, b: &BTreeMap<Value, u64>) -> R<Value> {
    let count = |m: &BTreeMap<Value, u64>, v: &Value| *m.get(v).unwrap_or(&0);
    let keys: BTreeSet<&Value> = a.keys().chain(b.keys()).collect();
    if op == BinaryOp::Subset {
        return Ok(Value::Bool(keys.iter().all(|k| count(a, k) <= count(b, k))));
    }
    let mut out = BTreeMap::new();
    for k in keys {
        let n = match op {
            BinaryOp::Union => count(a, k) + count(b, k),
            BinaryOp::Intersection => count(a, k).min(count(b, k)),
            _ => count(a, k).saturating_sub(count(b, k)),
        };
        if n > 0 {
            out.insert(k.clone(), n);
        }
    }
    Ok(Value::Multiset(out))
}

pub(crate) fn collection(kind: CollectionKind, values: Vec<Value>) -> Value {
    match kind {
        CollectionKind::Seq => Value::Seq(values),
        CollectionKind::Set => Value::set(values),
        CollectionKind::Multiset => Value::multiset(values),
    }
}

fn small(i: &BigInt) -> Option<i64> {
    i.to_i64()
}

/// `[a..b)`.
pub(crate) fn range(a: Value, b: Value) -> R<Value> {
    let (Value::Int(a), Value::Int(b)) = (&a, &b) else {
        return unknown("a range of non-integers");
    };
    let (Some(lo), Some(hi)) = (small(a), small(b)) else {
        return unknown("a range too large to build");
    };
    if hi > lo && (hi - lo) as u64 > MAX_LENGTH as u64 {
        return unknown("a range too large to build");
    }
    Ok(Value::Seq((lo..hi).map(Value::int).collect()))
}

/// `s[i]` of a sequence (in bounds) or a map (a key of it).
pub(crate) fn index(span: Span, s: Value, i: Value) -> R<Value> {
    match (s, i) {
        (Value::Seq(s), Value::Int(i)) => {
            if i.is_negative() {
                return undefined(span, format!("the index {i} is negative"));
            }
            match small(&i).and_then(|i| s.get(i as usize)) {
                Some(v) => Ok(v.clone()),
                None => undefined(
                    span,
                    format!("the index {i} is not below the length {}", s.len()),
                ),
            }
        }
        (Value::Map(m), k) => match m.get(&k) {
            Some(v) => Ok(v.clone()),
            None => undefined(span, format!("the key {k} is not in the map's domain")),
        },
        (s, i) => unknown(format!("an index {} into a {}", i.kind(), s.kind())),
    }
}

/// `s[a..b]`, `s[a..]`, `s[..b]`: drop `a`, take up to `b` (clamped, as Viper's axioms).
pub(crate) fn slice(s: Value, from: Option<Value>, to: Option<Value>) -> R<Value> {
    let Value::Seq(s) = s else {
        return unknown(format!("a slice of a {}", s.kind()));
    };
    let clamp = |v: Option<Value>, default: usize| -> R<usize> {
        match v {
            None => Ok(default),
            Some(Value::Int(i)) if i.is_negative() => Ok(0),
            Some(Value::Int(i)) => Ok(small(&i).map_or(s.len(), |i| (i as usize).min(s.len()))),
            Some(other) => unknown(format!("a slice bound of type {}", other.kind())),
        }
    };
    let to = clamp(to, s.len())?;
    let from = clamp(from, 0)?.min(to);
    Ok(Value::Seq(s[from..to].to_vec()))
}

/// `s[i := v]` of a sequence (in bounds) or a map.
pub(crate) fn update(span: Span, s: Value, i: Value, v: Value) -> R<Value> {
    match (s, i) {
        (Value::Seq(mut s), Value::Int(i)) => {
            let at = small(&i).filter(|i| *i >= 0).map(|i| i as usize);
            match at {
                Some(at) if at < s.len() => {
                    s[at] = v;
                    Ok(Value::Seq(s))
                }
                _ => undefined(
                    span,
                    format!("the index {i} is out of bounds (length {})", s.len()),
                ),
            }
        }
        (Value::Map(mut m), k) => {
            m.insert(k, v);
            Ok(Value::Map(m))
        }
        (s, i) => unknown(format!("an update at a {} of a {}", i.kind(), s.kind())),
    }
}

/// `|s|`.
pub(crate) fn length(v: Value) -> R<Value> {
    let n = match &v {
        Value::Seq(s) => s.len() as u64,
        Value::Set(s) => s.len() as u64,
        Value::Multiset(m) => m.values().sum(),
        Value::Map(m) => m.len() as u64,
        other => return unknown(format!("the length of a {}", other.kind())),
    };
    Ok(Value::Int(BigInt::from(n)))
}

pub(crate) fn map_domain(m: Value) -> R<Value> {
    match m {
        Value::Map(m) => Ok(Value::Set(m.into_keys().collect())),
        other => unknown(format!("`domain` of a {}", other.kind())),
    }
}

pub(crate) fn map_range(m: Value) -> R<Value> {
    match m {
        Value::Map(m) => Ok(Value::Set(m.into_values().collect())),
        other => unknown(format!("`range` of a {}", other.kind())),
    }
}
