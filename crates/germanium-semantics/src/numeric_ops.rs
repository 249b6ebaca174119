//! Typing of the overloaded arithmetic operators (`+ - * /`, comparisons, negation).
//!
//! Viper gives each of these operators an ordered list of signatures over Int and Perm
//! (`/` on two Ints may yield an Int quotient or a fraction, and Viper lists the fraction
//! first). Among the typings of a whole top-level expression that satisfy every
//! constraint, the one taken prefers, operand by operand, the earlier signature, with the
//! operands deciding before the operator that combines them (left before right). So an
//! Int division is a fraction unless its context forces an Int: `2/3 == 3/4` and
//! `0/1 < 1/2` compare fractions, `1/4000/2` is a positive permission, while `2/3 == 0` and
//! `2/3 == 3/4 + 0` compare Ints. (Viper's own tests fix this order: `all/basic/arithmetic`,
//! `all/issues/silver/0211`, `0745`.)
//!
//! Here an operator whose signature is not forced by its operand types becomes a
//! [`NumericChoice`]; [`Checker::resolve_numeric_choices`] searches the choices depth first
//! in post-order, which yields that preferred typing.

use germanium_syntax::ast::{BinaryOp, Expr};

use crate::checker::Checker;
use crate::types::{Type, Unifier, VarClass};

/// An operator whose signature is still open: each candidate is a list of types that must
/// be made equal (operand and result types against one signature).
#[derive(Debug)]
pub(crate) struct NumericChoice {
    /// Post-order position of the operator in its top-level expression.
    pub order: u32,
    pub candidates: Vec<Vec<(Type, Type)>>,
    /// Where to report when no candidate fits the rest of the expression.
    pub span: germanium_syntax::Span,
}

/// The most choice combinations tried before settling for the first choices that fit.
const SEARCH_BUDGET: u32 = 10_000;

const I: Type = Type::Int;
const P: Type = Type::Perm;

/// Viper's signatures of a binary arithmetic operator, in Viper's order: `(left, right,
/// result)`.
fn binary_signatures(op: BinaryOp) -> &'static [(Type, Type, Type)] {
    use BinaryOp::*;
    match op {
        Add | Sub => &[(I, I, I), (P, P, P)],
        Mul => &[(P, P, P), (I, P, P), (P, I, P), (I, I, I)],
        // Int / Int is a fraction unless the context needs an Int.
        Div => &[(I, I, P), (P, I, P), (I, I, I), (P, P, P)],
        Lt | Le | Gt | Ge => &[(I, I, Type::Bool), (P, P, Type::Bool)],
        _ => &[],
    }
}

impl Checker {
    /// Post-order position for the operator being checked; call after checking operands.
    pub(crate) fn next_numeric_order(&mut self) -> u32 {
        self.numeric_order += 1;
        self.numeric_order
    }

    /// The result type of a binary arithmetic operator or comparison with operand types
    /// `tl`, `tr`; the error type (reported) when no signature fits.
    pub(crate) fn numeric_binary(
        &mut self,
        e: &Expr,
        order: u32,
        op: BinaryOp,
        tl: &Type,
        tr: &Type,
    ) -> Type {
        let sigs = binary_signatures(op);
        let result = match op {
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => Type::Bool,
            _ => self.unifier.fresh(VarClass::Numeric),
        };
        let candidates = sigs
            .iter()
            .map(|(l, r, res)| {
                let mut eqs = vec![(tl.clone(), l.clone()), (tr.clone(), r.clone())];
                if result != Type::Bool {
                    eqs.push((result.clone(), res.clone()));
                }
                eqs
            })
            .collect();
        self.numeric_choice(e, order, candidates, result)
    }

    /// The result type of `-e` where `e` has type `t`.
    pub(crate) fn numeric_negation(&mut self, e: &Expr, order: u32, t: &Type) -> Type {
        let candidates = vec![vec![(t.clone(), I)], vec![(t.clone(), P)]];
        self.numeric_choice(e, order, candidates, t.clone())
    }

    /// Keeps the candidates that fit what is known now: none is a type error, one is
    /// applied at once, several become a choice resolved with the whole expression.
    fn numeric_choice(
        &mut self,
        e: &Expr,
        order: u32,
        candidates: Vec<Vec<(Type, Type)>>,
        result: Type,
    ) -> Type {
        let fitting: Vec<Vec<(Type, Type)>> = candidates
            .into_iter()
            .filter(|eqs| fits(&mut self.unifier.clone(), eqs))
            .collect();
        match fitting.len() {
            0 => {
                self.type_error(e.span, "Type error in the expression");
                Type::Error
            }
            1 => {
                apply(&mut self.unifier, &fitting[0]);
                self.unifier.resolve(&result)
            }
            _ => {
                self.numeric_choices.push(NumericChoice {
                    order,
                    candidates: fitting,
                    span: e.span,
                });
                result
            }
        }
    }

    /// Settles the open operator signatures of the finished top-level expression (see the
    /// module comment); reports a type error when no combination is consistent.
    pub(crate) fn resolve_numeric_choices(&mut self) {
        let mut choices = std::mem::take(&mut self.numeric_choices);
        if choices.is_empty() {
            return;
        }
        choices.sort_by_key(|c| c.order);
        let mut budget = SEARCH_BUDGET;
        let mut unifier = self.unifier.clone();
        if search(&mut unifier, &choices, &mut budget) {
            self.unifier = unifier;
            return;
        }
        if budget > 0 {
            // Exhausted: no consistent typing at all.
            self.type_error(choices[0].span, "Type error in the expression");
            return;
        }
        // Too many combinations: take the first fitting candidate of each in turn.
        for c in &choices {
            match c
                .candidates
                .iter()
                .find(|eqs| fits(&mut self.unifier.clone(), eqs))
            {
                Some(eqs) => {
                    apply(&mut self.unifier, eqs);
                }
                None => {
                    self.type_error(c.span, "Type error in the expression");
                    return;
                }
            }
        }
    }
}

/// Depth-first search for the first consistent combination; `unifier` holds it on success.
fn search(unifier: &mut Unifier, choices: &[NumericChoice], budget: &mut u32) -> bool {
    let Some((first, rest)) = choices.split_first() else {
        return true;
    };
    for eqs in &first.candidates {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        let mut attempt = unifier.clone();
        if apply(&mut attempt, eqs) && search(&mut attempt, rest, budget) {
            *unifier = attempt;
            return true;
        }
    }
    false
}

fn fits(unifier: &mut Unifier, eqs: &[(Type, Type)]) -> bool {
    apply(unifier, eqs)
}

fn apply(unifier: &mut Unifier, eqs: &[(Type, Type)]) -> bool {
    eqs.iter().all(|(a, b)| unifier.unify(a, b))
}
