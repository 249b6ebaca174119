//! Quantifiers over concrete values: the values each variable ranges over, when they are
//! finitely many (Bool; Ref: null, every object, and one object standing for all others;
//! Int: between the bounds its guard gives, or the elements of a collection it is guarded
//! to be in), else an unknown result.

use std::collections::BTreeSet;

use germanium_semantics::visit::{stmt_exprs, walk_expr, walk_stmts};
use germanium_semantics::{Type, VarId};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind, QuantifierKind};
use num_bigint::BigInt;
use num_traits::ToPrimitive;

use super::{unknown, Evaluator, Scope, Stop, R};
use crate::heap::{Heap, ObjectId};
use crate::value::Value;

/// Small integers, tried first, in this order.
const INTS: [i64; 6] = [0, 1, -1, 2, -2, 3];
/// At most this many integers from the program's literals are tried after them.
const FROM_LITERALS: usize = 16;

/// The integers a choice tries: the small ones, then each integer literal of the program,
/// its negation and their neighbours (a bound like `i < 5` or `x > -60` is met and
/// missed), smallest first.
fn integers(ev: &Evaluator) -> Vec<i64> {
    let mut literals = BTreeSet::new();
    let mut collect = |e: &Expr| {
        walk_expr(e, &mut |sub| {
            if let ExprKind::IntLit(digits) = &sub.kind {
                if let Ok(c) = digits.parse::<i64>() {
                    // Its negation too: `i + 3 >= 0` is missed at -4.
                    for c in [c, c.saturating_neg()] {
                        for v in [c.saturating_sub(1), c, c.saturating_add(1)] {
                            literals.insert((v.unsigned_abs(), v < 0, v));
                        }
                    }
                }
            }
        })
    };
    let mut names: Vec<&&str> = ev.methods.keys().collect();
    names.sort();
    for name in names {
        let m = ev.methods[*name];
        m.contract.requires.iter().for_each(&mut collect);
        m.contract.ensures.iter().for_each(&mut collect);
        if let Some(body) = &m.body {
            walk_stmts(body, &mut |s| {
                stmt_exprs(s).into_iter().for_each(&mut collect)
            });
        }
    }
    for f in ev.functions.values() {
        f.contract.requires.iter().for_each(&mut collect);
        f.contract.ensures.iter().for_each(&mut collect);
        f.body.iter().for_each(&mut collect);
    }
    let mut ints = INTS.to_vec();
    let extra: Vec<i64> = literals
        .into_iter()
        .map(|(_, _, v)| v)
        .filter(|v| !INTS.contains(v))
        .take(FROM_LITERALS)
        .collect();
    ints.extend(extra);
    ints
}

const UNBOUNDED: &str = "a quantifier over integers its guard does not bound";

/// Combinations of values at most.
const MAX_COMBINATIONS: usize = 1_000_000;

/// The conjuncts of `e`.
pub(crate) fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Binary(BinaryOp::And, a, b) => {
            let mut v = conjuncts(a);
            v.extend(conjuncts(b));
            v
        }
        _ => vec![e],
    }
}

impl Evaluator<'_> {
    /// The integers a run tries where one is open, in order, and those a quantifier whose
    /// guard does not bound it is tried on (see `integers`).
    pub(crate) fn sample_integers(&self) -> &[i64] {
        self.sample_ints.get_or_init(|| integers(self))
    }

    fn is_var(&self, e: &Expr, var: VarId) -> bool {
        matches!(e.kind, ExprKind::Ident(_)) && self.sem.var_id(e.id) == Some(var)
    }

    /// An integer bound's value, where it does not need the quantifier's variables.
    fn bound(&self, scope: &mut Scope, heap: &Heap, e: &Expr) -> Option<BigInt> {
        match self.value(scope, heap, e) {
            Ok(Value::Int(i)) => Some(i),
            _ => None,
        }
    }

    /// The integers `var` ranges over, as its guard bounds them.
    fn int_candidates(
        &self,
        scope: &mut Scope,
        heap: &Heap,
        var: VarId,
        guard: &[&Expr],
    ) -> R<Vec<Value>> {
        let (mut lo, mut hi): (Option<BigInt>, Option<BigInt>) = (None, None);
        let mut members: Option<Vec<Value>> = None;
        let raise = |b: &mut Option<BigInt>, v: BigInt| {
            *b = Some(b.take().map_or(v.clone(), |old| old.max(v)));
        };
        let lower = |b: &mut Option<BigInt>, v: BigInt| {
            *b = Some(b.take().map_or(v.clone(), |old| old.min(v)));
        };
        for c in guard {
            let ExprKind::Binary(op, l, r) = &c.kind else {
                continue;
            };
            // `v op e` or `e op v`, turned into `v op' e`.
            let (op, other) = if self.is_var(l, var) {
                (*op, r.as_ref())
            } else if self.is_var(r, var) {
                let flipped = match op {
                    BinaryOp::Lt => BinaryOp::Gt,
                    BinaryOp::Le => BinaryOp::Ge,
                    BinaryOp::Gt => BinaryOp::Lt,
                    BinaryOp::Ge => BinaryOp::Le,
                    _ => continue,
                };
                (flipped, l.as_ref())
            } else {
                continue;
            };
            if op == BinaryOp::In {
                if let Ok(Value::Seq(items)) = self.value(scope, heap, other) {
                    members = Some(items);
                } else if let Ok(Value::Set(items)) = self.value(scope, heap, other) {
                    members = Some(items.into_iter().collect());
                }
                continue;
            }
            let Some(b) = self.bound(scope, heap, other) else {
                continue;
            };
            match op {
                BinaryOp::Ge => raise(&mut lo, b),
                BinaryOp::Gt => raise(&mut lo, b + 1),
                BinaryOp::Lt => lower(&mut hi, b),
                BinaryOp::Le => lower(&mut hi, b + 1),
                _ => {}
            }
        }
        let inside =
            |i: &BigInt| lo.as_ref().is_none_or(|l| i >= l) && hi.as_ref().is_none_or(|h| i < h);
        if let Some(members) = members {
            return Ok(members
                .into_iter()
                .filter(|v| matches!(v, Value::Int(i) if inside(i)))
                .collect());
        }
        match (lo.and_then(|l| l.to_i64()), hi.and_then(|h| h.to_i64())) {
            (Some(l), Some(h)) if h <= l => Ok(Vec::new()),
            (Some(l), Some(h)) if ((h - l) as u64) <= MAX_COMBINATIONS as u64 => {
                Ok((l..h).map(Value::int).collect())
            }
            (Some(_), Some(_)) => unknown("a quantifier over too many integers"),
            _ => unknown(UNBOUNDED),
        }
    }

    /// Every combination of values the variables of the quantifier `e` range over.
    pub(crate) fn domain(&self, scope: &mut Scope, heap: &Heap, e: &Expr) -> R<Vec<Vec<Value>>> {
        match self.domain_or_sample(scope, heap, e)? {
            (values, true) => Ok(values),
            (_, false) => unknown(UNBOUNDED),
        }
    }

    /// The combinations of values the variables of `e` range over, and whether they are all
    /// of them: an integer its guard does not bound is sampled instead.
    fn domain_or_sample(
        &self,
        scope: &mut Scope,
        heap: &Heap,
        e: &Expr,
    ) -> R<(Vec<Vec<Value>>, bool)> {
        let ExprKind::Quantifier {
            kind, vars, body, ..
        } = &e.kind
        else {
            return unknown("not a quantifier");
        };
        let guard: Vec<&Expr> = match (kind, &body.kind) {
            (QuantifierKind::Forall, ExprKind::Binary(BinaryOp::Implies, a, _)) => conjuncts(a),
            (QuantifierKind::Exists, _) => conjuncts(body),
            _ => Vec::new(),
        };
        // A guard false whatever the variables are: no value satisfies it.
        let binders: Vec<VarId> = (0..vars.len())
            .filter_map(|i| self.sem.binders.get(&(e.id, i)).copied())
            .collect();
        for c in &guard {
            if binders.iter().all(|b| !self.mentions_var(c, *b))
                && matches!(self.value(scope, heap, c), Ok(Value::Bool(false)))
            {
                return Ok((Vec::new(), true));
            }
        }
        let mut combinations: Vec<Vec<Value>> = vec![Vec::new()];
        let mut complete = true;
        let int_vars = self
            .quantified_types(e)
            .iter()
            .filter(|t| **t == Type::Int)
            .count();
        if binders.len() != vars.len() {
            return unknown("a bound variable without its declaration");
        }
        for &var in &binders {
            let ty = self.concrete_type(&self.sem.var(var).ty);
            let symmetric = match ty {
                Type::Int => self.symmetric_integers(scope, var, body, int_vars),
                _ => None,
            };
            let candidates = match &ty {
                // A variable the body does not use: one integer decides it.
                Type::Int if !self.mentions_var(e, var) => vec![Value::int(0)],
                _ if symmetric.is_some() => symmetric.unwrap_or_default(),
                Type::Domain(..) if self.modelled_domain(&ty) => self.domain_values(&ty)?,
                Type::Bool => vec![Value::Bool(false), Value::Bool(true)],
                Type::Ref => std::iter::once(Value::null())
                    .chain(heap.all_objects().map(|o| Value::Ref(Some(o))))
                    // One object the heap does not have stands for every other.
                    .chain(std::iter::once(Value::Ref(Some(ObjectId(
                        heap.objects + 1,
                    )))))
                    .collect(),
                Type::Int => match self.int_candidates(scope, heap, var, &guard) {
                    Err(Stop::Unknown(why)) if why == UNBOUNDED => {
                        match self.breakpoint_integers(scope, heap, &binders, var, body) {
                            Some(values) => values,
                            None => {
                                complete = false;
                                self.sample_integers()
                                    .iter()
                                    .map(|i| Value::int(*i))
                                    .collect()
                            }
                        }
                    }
                    other => other?,
                },
                other => return unknown(format!("a quantifier over {other:?}")),
            };
            if combinations.len().saturating_mul(candidates.len()) > MAX_COMBINATIONS {
                return unknown("a quantifier over too many values");
            }
            combinations = extend_combinations(combinations, &candidates);
        }
        Ok((combinations, complete))
    }

    /// Where every use of `var` in `body` compares it (`<`, `<=`, `>`, `>=`, `==`, `!=`)
    /// with an expression free of the quantifier's variables, asks whether it is in such a
    /// collection, or indexes such a sequence or map: the integers that decide the body
    /// for all of them. The body's value changes with `var` only where one of those
    /// comparisons or memberships does, so each value compared with, each element and
    /// index, and their neighbours stand for every integer. `None` where the body uses
    /// `var` otherwise.
    fn breakpoint_integers(
        &self,
        scope: &mut Scope,
        heap: &Heap,
        bound: &[VarId],
        var: VarId,
        body: &Expr,
    ) -> Option<Vec<Value>> {
        enum Operand {
            Compared,
            Container,
            Indexed,
        }
        let free = |e: &Expr| bound.iter().all(|b| !self.mentions_var(e, *b));
        let (mut uses, mut allowed) = (0, 0);
        let mut operands: Vec<(&Expr, Operand)> = Vec::new();
        walk_expr(body, &mut |sub| {
            if self.is_var(sub, var) {
                uses += 1;
            }
            match &sub.kind {
                ExprKind::Binary(
                    BinaryOp::Lt
                    | BinaryOp::Le
                    | BinaryOp::Gt
                    | BinaryOp::Ge
                    | BinaryOp::Eq
                    | BinaryOp::Ne,
                    a,
                    b,
                ) => match (self.is_var(a, var), self.is_var(b, var)) {
                    (true, true) => allowed += 2,
                    (true, false) if free(b) => {
                        allowed += 1;
                        operands.push((b, Operand::Compared));
                    }
                    (false, true) if free(a) => {
                        allowed += 1;
                        operands.push((a, Operand::Compared));
                    }
                    _ => {}
                },
                ExprKind::Binary(BinaryOp::In, a, b) if self.is_var(a, var) && free(b) => {
                    allowed += 1;
                    operands.push((b, Operand::Container));
                }
                ExprKind::Index(c, i) if self.is_var(i, var) && free(c) => {
                    allowed += 1;
                    operands.push((c, Operand::Indexed));
                }
                _ => {}
            }
        });
        if uses == 0 || uses != allowed {
            return None;
        }
        let mut points: BTreeSet<BigInt> = BTreeSet::new();
        for (e, operand) in operands {
            let value = self.value(scope, heap, e).ok()?;
            let ints: Vec<BigInt> = match (operand, value) {
                (Operand::Compared, Value::Int(n)) => vec![n],
                (Operand::Container, Value::Seq(items)) => ints_of(items.iter())?,
                (Operand::Container, Value::Set(items)) => ints_of(items.iter())?,
                (Operand::Container, Value::Multiset(items)) => ints_of(items.keys())?,
                (Operand::Container | Operand::Indexed, Value::Map(items)) => {
                    ints_of(items.keys())?
                }
                (Operand::Indexed, Value::Seq(items)) => {
                    (0..items.len()).map(BigInt::from).collect()
                }
                _ => return None,
            };
            points.extend(ints);
        }
        let mut values: BTreeSet<BigInt> = BTreeSet::new();
        for p in &points {
            values.extend([p - 1, p.clone(), p + 1]);
        }
        if values.is_empty() {
            values.insert(BigInt::from(0));
        }
        if values.len() > MAX_COMBINATIONS {
            return None;
        }
        Some(values.into_iter().map(Value::Int).collect())
    }

    /// Whether `var` occurs in `e`.
    fn mentions_var(&self, e: &Expr, var: VarId) -> bool {
        let mut found = false;
        walk_expr(e, &mut |sub| {
            found |= matches!(sub.kind, ExprKind::Ident(_)) && self.sem.var_id(sub.id) == Some(var);
        });
        found
    }

    /// `forall` or `exists` as a value; over integers its guard does not bound, known only
    /// where a sampled instance decides it (one false makes a `forall` false).
    pub(crate) fn quantifier(
        &self,
        scope: &mut Scope,
        heap: &Heap,
        e: &Expr,
        kind: QuantifierKind,
        body: &Expr,
    ) -> R<Value> {
        let (domain, complete) = self.domain_or_sample(scope, heap, e)?;
        for values in domain {
            let holds =
                self.with_bound(scope, e, &values, |ev, scope| ev.boolean(scope, heap, body))?;
            match kind {
                QuantifierKind::Forall if !holds => return Ok(Value::Bool(false)),
                QuantifierKind::Exists if holds => return Ok(Value::Bool(true)),
                _ => {}
            }
        }
        if !complete {
            return unknown(UNBOUNDED);
        }
        Ok(Value::Bool(kind == QuantifierKind::Forall))
    }
}

/// The integers among `items`; `None` where one is not an integer.
fn ints_of<'v>(items: impl Iterator<Item = &'v Value>) -> Option<Vec<BigInt>> {
    items
        .map(|v| match v {
            Value::Int(n) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

/// Every combination of `combinations` followed by one of `values`.
pub(crate) fn extend_combinations(
    combinations: Vec<Vec<Value>>,
    values: &[Value],
) -> Vec<Vec<Value>> {
    combinations
        .into_iter()
        .flat_map(|prefix| {
            values.iter().map(move |v| {
                let mut next = prefix.clone();
                next.push(v.clone());
                next
            })
        })
        .collect()
}
