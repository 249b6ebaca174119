//! Term constructors with cheap, obviously sound simplifications.
//!
//! Every rewrite here holds in every SMT-LIB model (total functions, non-empty sorts,
//! Euclidean `div`/`mod`, division by zero left uninterpreted): Boolean unit and zero
//! laws, flattening and de-duplication of `and`/`or`, `not not`, reflexivity of `=` and of
//! the orders, `ite` with a literal condition or equal branches, and folding of literals
//! when the result fits in `i128`. Nothing is folded when a value would overflow, and
//! nothing is rewritten under a quantifier binder unless it is closed under it.

use std::collections::HashSet;
use std::sync::Arc;

use crate::literal::{IntLit, RealLit};
use crate::sort::Sort;
use crate::symbol::Symbol;
use crate::term::{FunDecl, Op, Quantifier, QuantifierKind, Term, TermKind};

// Constructor names follow SMT-LIB (`not`, `sub`, `neg`), not the `std::ops` traits.
#[allow(clippy::should_implement_trait)]
impl Term {
    // ----- literals and atoms -------------------------------------------------------------

    pub fn bool(value: bool) -> Term {
        Term::make(TermKind::Bool(value), Sort::Bool)
    }

    pub fn tt() -> Term {
        Term::bool(true)
    }

    pub fn ff() -> Term {
        Term::bool(false)
    }

    pub fn int(value: i64) -> Term {
        Term::int_lit(IntLit::Small(value.into()))
    }

    pub fn int_lit(value: IntLit) -> Term {
        Term::make(TermKind::Int(value), Sort::Int)
    }

    /// An integer literal from decimal text of any size (`-123456789012345678901234567890`).
    pub fn int_from_text(text: &str) -> Option<Term> {
        IntLit::parse(text).map(Term::int_lit)
    }

    /// The rational `num/den`. A zero denominator yields the (uninterpreted) SMT-LIB term
    /// `(/ num 0.0)` rather than an error.
    pub fn real(num: i64, den: i64) -> Term {
        let (num, den) = (IntLit::Small(num.into()), IntLit::Small(den.into()));
        match RealLit::new(num.clone(), den.clone()) {
            Some(value) => Term::real_lit(value),
            None => Term::op(
                Op::RealDiv,
                vec![
                    Term::real_lit(RealLit::integer(num)),
                    Term::real_lit(RealLit::integer(den)),
                ],
                Sort::Real,
            ),
        }
    }

    pub fn real_lit(value: RealLit) -> Term {
        Term::make(TermKind::Real(value), Sort::Real)
    }

    /// A bound variable (quantifier, `let` or `define-fun` parameter).
    pub fn var(name: Symbol, sort: Sort) -> Term {
        Term::make(TermKind::Var(name), sort)
    }

    /// A declared constant (a function of no arguments).
    pub fn constant(decl: &FunDecl) -> Term {
        Term::app(decl, Vec::new())
    }

    /// Application of a declared function. Arity and argument sorts are the caller's
    /// responsibility (Z3 reports mismatches as errors).
    pub fn app(decl: &FunDecl, args: Vec<Term>) -> Term {
        Term::make(TermKind::App(decl.clone(), args), decl.result().clone())
    }

    /// Application of a built-in given as SMT-LIB text, e.g. `bvadd` or `(_ extract 7 0)`.
    pub fn builtin(head: &str, args: Vec<Term>, sort: Sort) -> Term {
        Term::make(TermKind::Builtin(head.into(), args), sort)
    }

    fn op(op: Op, args: Vec<Term>, sort: Sort) -> Term {
        Term::make(TermKind::Op(op, args), sort)
    }

    // ----- Boolean connectives -----------------------------------------------------------

    pub fn not(term: Term) -> Term {
        match term.kind() {
            TermKind::Bool(b) => Term::bool(!b),
            TermKind::Op(Op::Not, args) => args[0].clone(),
            _ => Term::op(Op::Not, vec![term], Sort::Bool),
        }
    }

    pub fn and(parts: impl IntoIterator<Item = Term>) -> Term {
        Term::junction(Op::And, parts)
    }

    pub fn or(parts: impl IntoIterator<Item = Term>) -> Term {
        Term::junction(Op::Or, parts)
    }

    /// `and`/`or`: flattened, units dropped, duplicates removed, `x` with `not x` absorbed.
    fn junction(op: Op, parts: impl IntoIterator<Item = Term>) -> Term {
        let unit = op == Op::And; // `true` for `and`, `false` for `or`
        let mut out: Vec<Term> = Vec::new();
        let mut seen: HashSet<Term> = HashSet::new();
        let flat = parts.into_iter().flat_map(|part| match part.as_op() {
            Some((inner, args)) if inner == op => args.to_vec(),
            _ => vec![part],
        });
        for part in flat {
            match part.as_bool() {
                Some(b) if b == unit => continue,
                Some(_) => return Term::bool(!unit),
                None => {}
            }
            if seen.insert(part.clone()) {
                out.push(part);
            }
        }
        let complementary = out.iter().any(|part| match part.as_op() {
            Some((Op::Not, args)) => seen.contains(&args[0]),
            _ => false,
        });
        if complementary {
            return Term::bool(!unit);
        }
        match out.as_slice() {
            [] => Term::bool(unit),
            [single] => single.clone(),
            _ => Term::op(op, out, Sort::Bool),
        }
    }

    pub fn implies(lhs: Term, rhs: Term) -> Term {
        if lhs.is_true() {
            rhs
        } else if lhs.is_false() || rhs.is_true() || lhs == rhs {
            Term::tt()
        } else if rhs.is_false() {
            Term::not(lhs)
        } else {
            Term::op(Op::Implies, vec![lhs, rhs], Sort::Bool)
        }
    }

    /// Boolean equivalence (printed as `=`).
    pub fn iff(lhs: Term, rhs: Term) -> Term {
        Term::eq(lhs, rhs)
    }

    pub fn xor(lhs: Term, rhs: Term) -> Term {
        Term::not(Term::eq(lhs, rhs))
    }

    pub fn ite(cond: Term, then: Term, otherwise: Term) -> Term {
        match cond.as_bool() {
            Some(true) => return then,
            Some(false) => return otherwise,
            None => {}
        }
        if then == otherwise {
            return then;
        }
        match (then.as_bool(), otherwise.as_bool()) {
            (Some(true), Some(false)) => return cond,
            (Some(false), Some(true)) => return Term::not(cond),
            _ => {}
        }
        let sort = then.sort().clone();
        Term::op(Op::Ite, vec![cond, then, otherwise], sort)
    }

    // ----- equality ------------------------------------------------------------------------

    pub fn eq(lhs: Term, rhs: Term) -> Term {
        if lhs == rhs {
            return Term::tt();
        }
        if let Some(equal) = literals_equal(&lhs, &rhs) {
            return Term::bool(equal);
        }
        match (lhs.as_bool(), rhs.as_bool()) {
            (Some(true), _) => return rhs,
            (_, Some(true)) => return lhs,
            (Some(false), _) => return Term::not(rhs),
            (_, Some(false)) => return Term::not(lhs),
            _ => {}
        }
        Term::op(Op::Eq, vec![lhs, rhs], Sort::Bool)
    }

    pub fn distinct(terms: Vec<Term>) -> Term {
        if terms.len() < 2 {
            return Term::tt();
        }
        let mut seen = HashSet::new();
        if !terms.iter().all(|t| seen.insert(t)) {
            return Term::ff();
        }
        let all_literals = terms.iter().all(|t| t.as_int().is_some())
            || terms.iter().all(|t| t.as_bool().is_some());
        if all_literals {
            // Canonical literals: structural difference is value difference.
            return Term::tt();
        }
        Term::op(Op::Distinct, terms, Sort::Bool)
    }

    // ----- arithmetic ----------------------------------------------------------------------

    pub fn add(terms: Vec<Term>) -> Term {
        let sort = arith_sort(&terms);
        let flat = flatten(Op::Add, terms);
        let mut rest = Vec::new();
        let mut constant = Number::zero(&sort);
        for term in flat {
            match Number::of(&term).and_then(|n| constant.add(&n)) {
                Some(sum) => constant = sum,
                None => rest.push(term),
            }
        }
        if !constant.is_zero() || rest.is_empty() {
            rest.push(constant.into_term());
        }
        match rest.as_slice() {
            [single] => single.clone(),
            _ => Term::op(Op::Add, rest, sort),
        }
    }

    pub fn sub(lhs: Term, rhs: Term) -> Term {
        let sort = arith_sort(&[lhs.clone(), rhs.clone()]);
        if lhs == rhs {
            return Number::zero(&sort).into_term();
        }
        if let (Some(a), Some(b)) = (Number::of(&lhs), Number::of(&rhs)) {
            if let Some(diff) = b.neg().and_then(|nb| a.add(&nb)) {
                return diff.into_term();
            }
        }
        if Number::of(&rhs).is_some_and(|n| n.is_zero()) {
            return lhs;
        }
        Term::op(Op::Sub, vec![lhs, rhs], sort)
    }

    pub fn mul(terms: Vec<Term>) -> Term {
        let sort = arith_sort(&terms);
        let flat = flatten(Op::Mul, terms);
        let mut rest = Vec::new();
        let mut constant = Number::one(&sort);
        for term in flat {
            match Number::of(&term).and_then(|n| constant.mul(&n)) {
                Some(product) => constant = product,
                None => rest.push(term),
            }
        }
        if constant.is_zero() {
            return constant.into_term();
        }
        if !constant.is_one() || rest.is_empty() {
            rest.push(constant.into_term());
        }
        match rest.as_slice() {
            [single] => single.clone(),
            _ => Term::op(Op::Mul, rest, sort),
        }
    }

    pub fn neg(term: Term) -> Term {
        if let Some(n) = Number::of(&term).and_then(|n| n.neg()) {
            return n.into_term();
        }
        if let Some((Op::Neg, args)) = term.as_op() {
            return args[0].clone();
        }
        let sort = term.sort().clone();
        Term::op(Op::Neg, vec![term], sort)
    }

    /// Integer division `div` (Euclidean, as in SMT-LIB).
    pub fn int_div(lhs: Term, rhs: Term) -> Term {
        if let (Some(a), Some(b)) = (small_int(&lhs), small_int(&rhs)) {
            if let Some(q) = a.checked_div_euclid(b) {
                return Term::int_lit(IntLit::Small(q));
            }
        }
        if small_int(&rhs) == Some(1) {
            return lhs;
        }
        Term::op(Op::IntDiv, vec![lhs, rhs], Sort::Int)
    }

    /// Integer remainder `mod` (Euclidean: non-negative for a non-zero divisor).
    pub fn modulo(lhs: Term, rhs: Term) -> Term {
        if let (Some(a), Some(b)) = (small_int(&lhs), small_int(&rhs)) {
            if let Some(r) = a.checked_rem_euclid(b) {
                return Term::int_lit(IntLit::Small(r));
            }
        }
        if matches!(small_int(&rhs), Some(1) | Some(-1)) {
            return Term::int(0);
        }
        Term::op(Op::Mod, vec![lhs, rhs], Sort::Int)
    }

    /// Real division `/`.
    pub fn real_div(lhs: Term, rhs: Term) -> Term {
        if let (Some(a), Some(b)) = (lhs.as_real(), rhs.as_real()) {
            if let Some(q) = divide(a, b) {
                return Term::real_lit(q);
            }
        }
        if rhs
            .as_real()
            .is_some_and(|r| *r == RealLit::integer(IntLit::Small(1)))
        {
            return lhs;
        }
        Term::op(Op::RealDiv, vec![lhs, rhs], Sort::Real)
    }

    pub fn abs(term: Term) -> Term {
        if let Some(n) = Number::of(&term) {
            let folded = if n.is_negative() { n.neg() } else { Some(n) };
            if let Some(n) = folded {
                return n.into_term();
            }
        }
        let sort = term.sort().clone();
        Term::op(Op::Abs, vec![term], sort)
    }

    pub fn lt(lhs: Term, rhs: Term) -> Term {
        Term::compare(Op::Lt, lhs, rhs)
    }

    pub fn le(lhs: Term, rhs: Term) -> Term {
        Term::compare(Op::Le, lhs, rhs)
    }

    pub fn gt(lhs: Term, rhs: Term) -> Term {
        Term::compare(Op::Gt, lhs, rhs)
    }

    pub fn ge(lhs: Term, rhs: Term) -> Term {
        Term::compare(Op::Ge, lhs, rhs)
    }

    fn compare(op: Op, lhs: Term, rhs: Term) -> Term {
        let reflexive = matches!(op, Op::Le | Op::Ge);
        if lhs == rhs {
            return Term::bool(reflexive);
        }
        if let Some(order) = Number::of(&lhs)
            .zip(Number::of(&rhs))
            .and_then(|(a, b)| a.cmp(&b))
        {
            use std::cmp::Ordering::*;
            let holds = match op {
                Op::Lt => order == Less,
                Op::Le => order != Greater,
                Op::Gt => order == Greater,
                _ => order != Less,
            };
            return Term::bool(holds);
        }
        Term::op(op, vec![lhs, rhs], Sort::Bool)
    }

    pub fn to_real(term: Term) -> Term {
        match term.kind() {
            TermKind::Int(value) => Term::real_lit(RealLit::integer(value.clone())),
            _ => Term::op(Op::ToReal, vec![term], Sort::Real),
        }
    }

    /// `to_int` (floor).
    pub fn to_int(term: Term) -> Term {
        if let Some((n, d)) = term.as_real().and_then(RealLit::as_i128_pair) {
            return Term::int_lit(IntLit::Small(n.div_euclid(d)));
        }
        Term::op(Op::ToInt, vec![term], Sort::Int)
    }

    pub fn is_int(term: Term) -> Term {
        match term.as_real() {
            Some(value) => Term::bool(value.is_integer()),
            None => Term::op(Op::IsInt, vec![term], Sort::Bool),
        }
    }

    // ----- arrays --------------------------------------------------------------------------

    pub fn select(array: Term, index: Term) -> Term {
        // Read-over-write when the indices are equal, or distinct literals.
        if let Some((Op::Store, args)) = array.as_op() {
            if args[1] == index {
                return args[2].clone();
            }
            if literals_equal(&args[1], &index) == Some(false) {
                return Term::select(args[0].clone(), index);
            }
        }
        let sort = match array.sort().array_parts() {
            Some((_, element)) => element.clone(),
            None => Sort::raw("<select on a non-array>"),
        };
        Term::op(Op::Select, vec![array, index], sort)
    }

    pub fn store(array: Term, index: Term, value: Term) -> Term {
        let sort = array.sort().clone();
        Term::op(Op::Store, vec![array, index, value], sort)
    }

    // ----- binders -------------------------------------------------------------------------

    pub fn forall(vars: Vec<(Symbol, Sort)>, body: Term, triggers: Vec<Vec<Term>>) -> Term {
        Term::quantifier(Quantifier {
            kind: QuantifierKind::Forall,
            vars,
            body,
            triggers,
            qid: None,
            weight: None,
        })
    }

    pub fn exists(vars: Vec<(Symbol, Sort)>, body: Term, triggers: Vec<Vec<Term>>) -> Term {
        Term::quantifier(Quantifier {
            kind: QuantifierKind::Exists,
            vars,
            body,
            triggers,
            qid: None,
            weight: None,
        })
    }

    /// A quantifier with all options. Without variables, or with a literal body (sorts are
    /// non-empty), the quantifier is its body.
    pub fn quantifier(q: Quantifier) -> Term {
        if q.vars.is_empty() || q.body.as_bool().is_some() {
            return q.body;
        }
        Term::make(TermKind::Quantifier(Arc::new(q)), Sort::Bool)
    }

    /// `(let ((x t) ...) body)`; with no bindings, the body itself.
    pub fn let_in(bindings: Vec<(Symbol, Term)>, body: Term) -> Term {
        if bindings.is_empty() {
            return body;
        }
        let sort = body.sort().clone();
        Term::make(TermKind::Let(bindings, body), sort)
    }
}

fn flatten(op: Op, terms: Vec<Term>) -> Vec<Term> {
    let mut out = Vec::with_capacity(terms.len());
    for term in terms {
        match term.as_op() {
            Some((inner, args)) if inner == op => out.extend(args.iter().cloned()),
            _ => out.push(term),
        }
    }
    out
}

/// `Real` if any operand is real, else `Int` (also for no operands).
fn arith_sort(terms: &[Term]) -> Sort {
    if terms.iter().any(|t| *t.sort() == Sort::Real) {
        Sort::Real
    } else {
        terms.first().map_or(Sort::Int, |t| t.sort().clone())
    }
}

fn small_int(term: &Term) -> Option<i128> {
    term.as_int().and_then(IntLit::as_i128)
}

/// Whether two literals denote equal values; `None` when not both comparable literals.
fn literals_equal(a: &Term, b: &Term) -> Option<bool> {
    match (a.kind(), b.kind()) {
        (TermKind::Bool(x), TermKind::Bool(y)) => Some(x == y),
        // Integer literals are canonical.
        (TermKind::Int(x), TermKind::Int(y)) => Some(x == y),
        (TermKind::Real(x), TermKind::Real(y)) => {
            x.checked_cmp(y).map(|o| o == std::cmp::Ordering::Equal)
        }
        _ => None,
    }
}

fn divide(a: &RealLit, b: &RealLit) -> Option<RealLit> {
    let (n, d) = b.as_i128_pair()?;
    if n == 0 {
        return None;
    }
    let inverse = RealLit::new(IntLit::Small(d), IntLit::Small(n))?;
    a.checked_mul(&inverse)
}

/// A literal of either numeric sort, for folding; arithmetic stays within `i128`.
#[derive(Clone, PartialEq, Debug)]
enum Number {
    Int(i128),
    Real(RealLit),
}

impl Number {
    fn of(term: &Term) -> Option<Number> {
        match term.kind() {
            TermKind::Int(IntLit::Small(v)) => Some(Number::Int(*v)),
            TermKind::Real(r) if r.as_i128_pair().is_some() => Some(Number::Real(r.clone())),
            _ => None,
        }
    }

    fn zero(sort: &Sort) -> Number {
        Number::from_i128(sort, 0)
    }

    fn one(sort: &Sort) -> Number {
        Number::from_i128(sort, 1)
    }

    fn from_i128(sort: &Sort, value: i128) -> Number {
        match sort {
            Sort::Real => Number::Real(RealLit::integer(IntLit::Small(value))),
            _ => Number::Int(value),
        }
    }

    fn is_zero(&self) -> bool {
        match self {
            Number::Int(v) => *v == 0,
            Number::Real(r) => r.is_zero(),
        }
    }

    fn is_one(&self) -> bool {
        match self {
            Number::Int(v) => *v == 1,
            Number::Real(r) => *r == RealLit::integer(IntLit::Small(1)),
        }
    }

    fn is_negative(&self) -> bool {
        match self {
            Number::Int(v) => *v < 0,
            Number::Real(r) => r.is_negative(),
        }
    }

    /// Same-sort sum; `None` on sort mismatch or overflow.
    fn add(&self, other: &Number) -> Option<Number> {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a.checked_add(*b).map(Number::Int),
            (Number::Real(a), Number::Real(b)) => a.checked_add(b).map(Number::Real),
            _ => None,
        }
    }

    fn mul(&self, other: &Number) -> Option<Number> {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a.checked_mul(*b).map(Number::Int),
            (Number::Real(a), Number::Real(b)) => a.checked_mul(b).map(Number::Real),
            _ => None,
        }
    }

    fn neg(&self) -> Option<Number> {
        match self {
            Number::Int(a) => a.checked_neg().map(Number::Int),
            Number::Real(r) => {
                let negated = r.negated();
                negated.as_i128_pair().map(|_| Number::Real(negated))
            }
        }
    }

    fn cmp(&self, other: &Number) -> Option<std::cmp::Ordering> {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => Some(a.cmp(b)),
            (Number::Real(a), Number::Real(b)) => a.checked_cmp(b),
            _ => None,
        }
    }

    fn into_term(self) -> Term {
        match self {
            Number::Int(v) => Term::int_lit(IntLit::Small(v)),
            Number::Real(r) => Term::real_lit(r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int_const(name: &str) -> Term {
        Term::constant(&FunDecl::constant(Symbol::user(name), Sort::Int))
    }

    fn bool_const(name: &str) -> Term {
        Term::constant(&FunDecl::constant(Symbol::user(name), Sort::Bool))
    }

    #[track_caller]
    fn expect(term: Term, expected: &str) {
        assert_eq!(term.to_string(), expected);
    }

    #[test]
    fn subterm_searches_see_shared_subterms() {
        let x = int_const("x");
        let g = FunDecl::new(Symbol::user("g"), vec![Sort::Int], Sort::Int);
        let gx = Term::app(&g, vec![x.clone()]);
        let t = Term::add(vec![gx.clone(), gx.clone()]);
        let names = |n: &str| std::iter::once(Symbol::user(n)).collect();
        assert!(t.applies_any(&names("g")));
        assert!(!t.applies_any(&names("h")));
        let among = std::iter::once(x.clone()).collect();
        assert!(t.mentions_any(&among));
        assert_eq!(t.terms_among(&among), vec![x]);
    }

    #[test]
    fn boolean_units_and_zeros() {
        let (p, q) = (bool_const("p"), bool_const("q"));
        expect(Term::and(vec![Term::tt(), p.clone(), Term::tt()]), "p");
        expect(Term::and(vec![p.clone(), Term::ff(), q.clone()]), "false");
        expect(Term::and(Vec::new()), "true");
        expect(Term::or(vec![Term::ff(), p.clone()]), "p");
        expect(Term::or(vec![p.clone(), Term::tt()]), "true");
        expect(Term::or(Vec::new()), "false");
        expect(Term::not(Term::not(p.clone())), "p");
        expect(Term::not(Term::tt()), "false");
    }

    #[test]
    fn junctions_flatten_dedupe_and_absorb() {
        let (p, q, r) = (bool_const("p"), bool_const("q"), bool_const("r"));
        let pq = Term::and(vec![p.clone(), q.clone()]);
        expect(
            Term::and(vec![pq.clone(), r.clone(), p.clone()]),
            "(and p q r)",
        );
        expect(Term::and(vec![pq, Term::not(q.clone())]), "false");
        expect(
            Term::or(vec![p.clone(), Term::not(p.clone()), q.clone()]),
            "true",
        );
        // `or` inside `and` is not flattened.
        expect(
            Term::and(vec![Term::or(vec![p.clone(), q.clone()]), r]),
            "(and (or p q) r)",
        );
    }

    #[test]
    fn implications_and_ite() {
        let (p, q) = (bool_const("p"), bool_const("q"));
        expect(Term::implies(Term::tt(), p.clone()), "p");
        expect(Term::implies(Term::ff(), p.clone()), "true");
        expect(Term::implies(p.clone(), Term::tt()), "true");
        expect(Term::implies(p.clone(), Term::ff()), "(not p)");
        expect(Term::implies(p.clone(), p.clone()), "true");
        expect(Term::implies(p.clone(), q.clone()), "(=> p q)");
        let (x, y) = (int_const("x"), int_const("y"));
        expect(Term::ite(Term::tt(), x.clone(), y.clone()), "x");
        expect(Term::ite(Term::ff(), x.clone(), y.clone()), "y");
        expect(Term::ite(p.clone(), x.clone(), x.clone()), "x");
        expect(Term::ite(p.clone(), Term::tt(), Term::ff()), "p");
        expect(Term::ite(p.clone(), Term::ff(), Term::tt()), "(not p)");
        expect(Term::xor(p.clone(), q), "(not (= p q))");
    }

    #[test]
    fn equality_folds_only_what_it_knows() {
        let (x, y, p) = (int_const("x"), int_const("y"), bool_const("p"));
        expect(Term::eq(x.clone(), x.clone()), "true");
        expect(Term::eq(x.clone(), y.clone()), "(= x y)");
        expect(Term::eq(Term::int(3), Term::int(3)), "true");
        expect(Term::eq(Term::int(3), Term::int(4)), "false");
        expect(Term::eq(Term::real(1, 2), Term::real(2, 4)), "true");
        expect(Term::eq(p.clone(), Term::tt()), "p");
        expect(Term::eq(Term::ff(), p.clone()), "(not p)");
        expect(
            Term::distinct(vec![x.clone(), y.clone(), x.clone()]),
            "false",
        );
        expect(Term::distinct(vec![Term::int(1), Term::int(2)]), "true");
        expect(Term::distinct(vec![x]), "true");
    }

    #[test]
    fn integer_arithmetic_folds() {
        let (x, y) = (int_const("x"), int_const("y"));
        expect(
            Term::add(vec![Term::int(2), x.clone(), Term::int(3)]),
            "(+ x 5)",
        );
        expect(Term::add(vec![Term::int(2), Term::int(-2), x.clone()]), "x");
        expect(
            Term::add(vec![Term::add(vec![x.clone(), y.clone()]), Term::int(1)]),
            "(+ x y 1)",
        );
        expect(Term::add(Vec::new()), "0");
        expect(Term::sub(Term::int(2), Term::int(5)), "(- 3)");
        expect(Term::sub(x.clone(), x.clone()), "0");
        expect(Term::sub(x.clone(), Term::int(0)), "x");
        expect(
            Term::mul(vec![Term::int(2), x.clone(), Term::int(3)]),
            "(* x 6)",
        );
        expect(Term::mul(vec![Term::int(0), x.clone()]), "0");
        expect(Term::mul(vec![Term::int(1), x.clone()]), "x");
        expect(Term::neg(Term::neg(x.clone())), "x");
        expect(Term::neg(Term::int(4)), "(- 4)");
        expect(Term::abs(Term::int(-4)), "4");
        expect(Term::lt(Term::int(1), Term::int(2)), "true");
        expect(Term::ge(Term::int(1), Term::int(2)), "false");
        expect(Term::le(x.clone(), x.clone()), "true");
        expect(Term::gt(x.clone(), x.clone()), "false");
    }

    #[test]
    fn division_is_euclidean_and_zero_is_left_alone() {
        let x = int_const("x");
        expect(Term::int_div(Term::int(7), Term::int(2)), "3");
        expect(Term::int_div(Term::int(-7), Term::int(2)), "(- 4)");
        expect(Term::int_div(Term::int(-7), Term::int(-2)), "4");
        expect(Term::modulo(Term::int(-7), Term::int(2)), "1");
        expect(Term::modulo(Term::int(7), Term::int(-2)), "1");
        expect(Term::int_div(Term::int(7), Term::int(0)), "(div 7 0)");
        expect(Term::modulo(Term::int(7), Term::int(0)), "(mod 7 0)");
        expect(Term::int_div(x.clone(), Term::int(1)), "x");
        expect(Term::modulo(x.clone(), Term::int(1)), "0");
        expect(
            Term::real_div(Term::real(1, 1), Term::real(3, 1)),
            "(/ 1.0 3.0)",
        );
        expect(
            Term::real_div(Term::real(1, 1), Term::real(0, 1)),
            "(/ 1.0 0.0)",
        );
    }

    #[test]
    fn overflow_is_never_folded() {
        let max = Term::int_lit(IntLit::Small(i128::MAX));
        let sum = Term::add(vec![max.clone(), Term::int(1)]);
        // The accumulated constant goes last; the literal that would overflow stays as is.
        assert_eq!(sum.to_string(), format!("(+ 1 {})", i128::MAX));
        let product = Term::mul(vec![max.clone(), Term::int(2)]);
        assert_eq!(product.to_string(), format!("(* 2 {})", i128::MAX));
        let min = Term::int_lit(IntLit::Small(i128::MIN));
        expect(
            Term::int_div(min.clone(), Term::int(-1)),
            &format!("(div {} (- 1))", min),
        );
        let big = Term::int_from_text("1000000000000000000000000000000000000000000").unwrap();
        expect(
            Term::add(vec![big.clone(), Term::int(1)]),
            "(+ 1000000000000000000000000000000000000000000 1)",
        );
    }

    #[test]
    fn reals_fold_exactly() {
        let half = Term::real(1, 2);
        expect(Term::add(vec![half.clone(), half.clone()]), "1.0");
        expect(
            Term::mul(vec![half.clone(), Term::real(2, 3)]),
            "(/ 1.0 3.0)",
        );
        expect(Term::sub(half.clone(), Term::real(1, 1)), "(- (/ 1.0 2.0))");
        expect(Term::lt(Term::real(1, 3), half.clone()), "true");
        expect(Term::to_real(Term::int(3)), "3.0");
        expect(Term::to_int(Term::real(-1, 2)), "(- 1)");
        expect(Term::is_int(Term::real(4, 2)), "true");
    }

    #[test]
    fn arrays_read_over_write() {
        let a = Term::constant(&FunDecl::constant(
            Symbol::user("a"),
            Sort::array(Sort::Int, Sort::Bool),
        ));
        let (i, j) = (int_const("i"), int_const("j"));
        let stored = Term::store(a.clone(), i.clone(), Term::tt());
        expect(Term::select(stored.clone(), i.clone()), "true");
        expect(
            Term::select(stored.clone(), j.clone()),
            "(select (store a i true) j)",
        );
        let stored_at_1 = Term::store(a, Term::int(1), Term::tt());
        expect(Term::select(stored_at_1, Term::int(2)), "(select a 2)");
        assert_eq!(*Term::select(stored, j).sort(), Sort::Bool);
    }

    #[test]
    fn binders_without_content_disappear() {
        let x = Symbol::user("x");
        expect(
            Term::forall(vec![(x.clone(), Sort::Int)], Term::tt(), vec![]),
            "true",
        );
        expect(Term::exists(Vec::new(), bool_const("p"), vec![]), "p");
        expect(Term::let_in(Vec::new(), bool_const("p")), "p");
    }

    #[test]
    fn equal_terms_built_separately_are_equal_and_hash_alike() {
        use std::collections::HashSet;
        let build = || {
            Term::add(vec![
                int_const("x"),
                Term::mul(vec![int_const("y"), Term::int(2)]),
            ])
        };
        let (a, b) = (build(), build());
        assert!(!a.same_node(&b));
        assert_eq!(a, b);
        let set: HashSet<Term> = [a.clone(), b].into_iter().collect();
        assert_eq!(set.len(), 1);
        assert_ne!(a, Term::add(vec![int_const("x"), int_const("y")]));
        // Same text, different sort: not equal.
        let x_real = Term::constant(&FunDecl::constant(Symbol::user("x"), Sort::Real));
        assert_ne!(int_const("x"), x_real);
    }

    #[test]
    fn sorts_are_computed() {
        let x = int_const("x");
        assert_eq!(
            *Term::add(vec![x.clone(), Term::to_real(x.clone())]).sort(),
            Sort::Real
        );
        assert_eq!(*Term::lt(x.clone(), Term::int(1)).sort(), Sort::Bool);
        assert_eq!(
            *Term::ite(bool_const("p"), x.clone(), Term::int(1)).sort(),
            Sort::Int
        );
        assert_eq!(
            *Term::real_div(Term::to_real(x.clone()), Term::real(3, 1)).sort(),
            Sort::Real
        );
    }
}
