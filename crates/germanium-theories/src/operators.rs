//! Viper's binary operators on values as SMT terms. The heap evaluator and the translator of
//! domain axioms both use this; they differ only in how they apply a theory operation and
//! in the definedness checks (division by zero) the evaluator makes first.

use germanium_semantics::types::Type;
use germanium_smt::{Sort, Term};
use germanium_syntax::ast::BinaryOp;

use super::TheoryOp;

/// What a binary operator becomes.
#[derive(Debug)]
pub enum BinaryTerm {
    /// A term built directly.
    Term(Term),
    /// A theory operation to apply to the operands, then to negate if `negated`.
    Theory {
        op: TheoryOp,
        args: Vec<Term>,
        negated: bool,
    },
    /// The operator on these operand types is not supported (the reason).
    Unsupported(String),
}

/// The term for `a op b`, where `result`, `left` and `right` are the types of the whole
/// expression and of its operands. Division by zero is not checked here.
pub fn binary_term(
    op: BinaryOp,
    result: &Type,
    left: &Type,
    right: &Type,
    a: Term,
    b: Term,
) -> BinaryTerm {
    let term = match op {
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul => {
            let (a, b) = if *result == Type::Perm {
                (real(a), real(b))
            } else {
                same_numeric(a, b)
            };
            match op {
                BinaryOp::Add => Term::add(vec![a, b]),
                BinaryOp::Sub => Term::sub(a, b),
                _ => Term::mul(vec![a, b]),
            }
        }
        BinaryOp::Div if *result == Type::Perm => Term::real_div(real(a), real(b)),
        BinaryOp::Div | BinaryOp::IntDiv => Term::int_div(a, b),
        BinaryOp::Mod => Term::modulo(a, b),
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
            let (a, b) = same_numeric(a, b);
            match op {
                BinaryOp::Lt => Term::lt(a, b),
                BinaryOp::Le => Term::le(a, b),
                BinaryOp::Gt => Term::gt(a, b),
                _ => Term::ge(a, b),
            }
        }
        BinaryOp::Eq | BinaryOp::Ne => match equality_op(left) {
            Some(equal) => {
                return BinaryTerm::Theory {
                    op: equal,
                    args: vec![a, b],
                    negated: op == BinaryOp::Ne,
                }
            }
            None => {
                let (a, b) = same_numeric(a, b);
                let eq = Term::eq(a, b);
                if op == BinaryOp::Ne {
                    Term::not(eq)
                } else {
                    eq
                }
            }
        },
        BinaryOp::Iff => Term::iff(a, b),
        BinaryOp::And => Term::and([a, b]),
        BinaryOp::Or => Term::or([a, b]),
        BinaryOp::Implies => Term::implies(a, b),
        BinaryOp::In => {
            let op = match right {
                Type::Seq(t) => TheoryOp::SeqContains((**t).clone()),
                Type::Set(t) => TheoryOp::SetContains((**t).clone()),
                Type::Multiset(t) => TheoryOp::MultisetCount((**t).clone()),
                Type::Map(k, v) => TheoryOp::MapContainsKey((**k).clone(), (**v).clone()),
                t => return BinaryTerm::Unsupported(format!("`in` on a {t}")),
            };
            return theory(op, a, b);
        }
        BinaryOp::Concat => match left {
            Type::Seq(t) => return theory(TheoryOp::SeqAppend((**t).clone()), a, b),
            _ => return BinaryTerm::Unsupported("`++` on a non-sequence".into()),
        },
        BinaryOp::Union | BinaryOp::Intersection | BinaryOp::Setminus | BinaryOp::Subset => {
            let (t, multiset) = match left {
                Type::Set(t) => ((**t).clone(), false),
                Type::Multiset(t) => ((**t).clone(), true),
                _ => return BinaryTerm::Unsupported("a set operation on a non-set".into()),
            };
            let op = match (op, multiset) {
                (BinaryOp::Union, false) => TheoryOp::SetUnion(t),
                (BinaryOp::Intersection, false) => TheoryOp::SetIntersection(t),
                (BinaryOp::Setminus, false) => TheoryOp::SetDifference(t),
                (_, false) => TheoryOp::SetSubset(t),
                (BinaryOp::Union, true) => TheoryOp::MultisetUnion(t),
                (BinaryOp::Intersection, true) => TheoryOp::MultisetIntersection(t),
                (BinaryOp::Setminus, true) => TheoryOp::MultisetDifference(t),
                (_, true) => TheoryOp::MultisetSubset(t),
            };
            return theory(op, a, b);
        }
        BinaryOp::Wand => return BinaryTerm::Unsupported("magic wands".into()),
    };
    BinaryTerm::Term(term)
}

fn theory(op: TheoryOp, a: Term, b: Term) -> BinaryTerm {
    BinaryTerm::Theory {
        op,
        args: vec![a, b],
        negated: false,
    }
}

/// The theory's equality for collection types (extensional), `None` for `=`.
pub fn equality_op(ty: &Type) -> Option<TheoryOp> {
    match ty {
        Type::Seq(t) => Some(TheoryOp::SeqEqual((**t).clone())),
        Type::Set(t) => Some(TheoryOp::SetEqual((**t).clone())),
        Type::Multiset(t) => Some(TheoryOp::MultisetEqual((**t).clone())),
        Type::Map(k, v) => Some(TheoryOp::MapEqual((**k).clone(), (**v).clone())),
        _ => None,
    }
}

/// `t` as a Real (Perm) term.
pub fn real(t: Term) -> Term {
    if *t.sort() == Sort::Int {
        Term::to_real(t)
    } else {
        t
    }
}

/// Both operands as Real when one of them is (Viper mixes Int and Perm in places).
pub fn same_numeric(a: Term, b: Term) -> (Term, Term) {
    let mixed = *a.sort() == Sort::Real && *b.sort() == Sort::Int
        || *a.sort() == Sort::Int && *b.sort() == Sort::Real;
    if mixed {
        (real(a), real(b))
    } else {
        (a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_arithmetic_is_real_and_collection_equality_is_the_theory_s() {
        let (i, r) = (Term::int(1), Term::real(1, 2));
        match binary_term(BinaryOp::Add, &Type::Perm, &Type::Int, &Type::Perm, i, r) {
            BinaryTerm::Term(t) => assert_eq!(*t.sort(), Sort::Real),
            other => panic!("{other:?}"),
        }
        let seq = Type::Seq(Box::new(Type::Int));
        match binary_term(
            BinaryOp::Ne,
            &Type::Bool,
            &seq,
            &seq,
            Term::int(0),
            Term::int(0),
        ) {
            BinaryTerm::Theory { op, negated, .. } => {
                assert_eq!(op, TheoryOp::SeqEqual(Type::Int));
                assert!(negated);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            binary_term(
                BinaryOp::In,
                &Type::Bool,
                &Type::Int,
                &Type::Int,
                Term::int(0),
                Term::int(1)
            ),
            BinaryTerm::Unsupported(_)
        ));
    }
}
