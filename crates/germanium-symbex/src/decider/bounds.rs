//! Integer bounds read off literal path conditions: `x > 5` assumed and `x > 3` asked is
//! decided here without the solver. Only facts of the shape `t op c` (or its negation) with
//! `t` an integer term and `c` an integer literal count; anything else is left to the
//! solver. A sufficient test: "undecided" is always a safe answer.

use germanium_smt::{Op, Sort, Term, TermKind};

/// What a literal fact says of its term: `lower <= t <= upper`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    pub lower: Option<i128>,
    pub upper: Option<i128>,
}

impl Interval {
    pub const ANY: Interval = Interval {
        lower: None,
        upper: None,
    };

    /// Both constraints at once.
    pub fn meet(self, other: Interval) -> Interval {
        Interval {
            lower: max_option(self.lower, other.lower),
            upper: min_option(self.upper, other.upper),
        }
    }

    /// Whether every value in `self` lies in `other`.
    fn within(self, other: Interval) -> bool {
        let lower_ok = match (other.lower, self.lower) {
            (None, _) => true,
            (Some(o), Some(s)) => s >= o,
            (Some(_), None) => false,
        };
        let upper_ok = match (other.upper, self.upper) {
            (None, _) => true,
            (Some(o), Some(s)) => s <= o,
            (Some(_), None) => false,
        };
        lower_ok && upper_ok
    }

    /// Whether `self` and `other` share no value.
    fn disjoint(self, other: Interval) -> bool {
        let joint = self.meet(other);
        matches!((joint.lower, joint.upper), (Some(l), Some(u)) if l > u)
    }

    /// Whether a value in `known` certainly satisfies (`Some(true)`) or certainly violates
    /// (`Some(false)`) `self`.
    pub fn decide(self, known: Interval) -> Option<bool> {
        if known.within(self) {
            Some(true)
        } else if known.disjoint(self) {
            Some(false)
        } else {
            None
        }
    }
}

fn max_option(a: Option<i128>, b: Option<i128>) -> Option<i128> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

fn min_option(a: Option<i128>, b: Option<i128>) -> Option<i128> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// The term a literal fact bounds and the interval it bounds it to, if the fact is one.
/// (Disequalities `t != c` are not intervals and are left to the solver.)
pub fn bound_of(fact: &Term) -> Option<(Term, Interval)> {
    let (negated, atom) = match fact.kind() {
        TermKind::Op(Op::Not, args) if args.len() == 1 => (true, &args[0]),
        _ => (false, fact),
    };
    let TermKind::Op(op, args) = atom.kind() else {
        return None;
    };
    let [lhs, rhs] = args.as_slice() else {
        return None;
    };
    // `t op c`, or `c op t` read as `t op' c`.
    let (term, c, op) = match (int_literal(lhs), int_literal(rhs)) {
        (None, Some(c)) => (lhs, c, *op),
        (Some(c), None) => (rhs, c, flipped(*op)?),
        _ => return None,
    };
    if *term.sort() != Sort::Int {
        return None;
    }
    let op = if negated { negated_comparison(op)? } else { op };
    let interval = match op {
        Op::Gt => Interval {
            lower: c.checked_add(1),
            upper: None,
        },
        Op::Ge => Interval {
            lower: Some(c),
            upper: None,
        },
        Op::Lt => Interval {
            lower: None,
            upper: c.checked_sub(1),
        },
        Op::Le => Interval {
            lower: None,
            upper: Some(c),
        },
        Op::Eq => Interval {
            lower: Some(c),
            upper: Some(c),
        },
        _ => return None,
    };
    Some((term.clone(), interval))
}

fn int_literal(t: &Term) -> Option<i128> {
    t.as_int().and_then(|i| i.as_i128())
}

/// `c op t` as `t op' c`.
fn flipped(op: Op) -> Option<Op> {
    Some(match op {
        Op::Gt => Op::Lt,
        Op::Ge => Op::Le,
        Op::Lt => Op::Gt,
        Op::Le => Op::Ge,
        Op::Eq => Op::Eq,
        _ => return None,
    })
}

/// `not (t op c)` as `t op' c` (integers are totally ordered; `not (t = c)` is no interval).
fn negated_comparison(op: Op) -> Option<Op> {
    Some(match op {
        Op::Gt => Op::Le,
        Op::Ge => Op::Lt,
        Op::Lt => Op::Ge,
        Op::Le => Op::Gt,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use germanium_smt::{FunDecl, Symbol};

    fn x() -> Term {
        Term::constant(&FunDecl::constant(Symbol::user("x"), Sort::Int))
    }

    fn known(facts: &[Term]) -> Interval {
        facts
            .iter()
            .filter_map(bound_of)
            .fold(Interval::ANY, |acc, (_, i)| acc.meet(i))
    }

    fn decide(facts: &[Term], question: Term) -> Option<bool> {
        let (_, wanted) = bound_of(&question).unwrap();
        wanted.decide(known(facts))
    }

    #[test]
    fn bounds_decide_comparisons_of_the_same_term() {
        let below_six = Term::not(Term::gt(x(), Term::int(5)));
        assert_eq!(
            decide(
                std::slice::from_ref(&below_six),
                Term::gt(x(), Term::int(6))
            ),
            Some(false)
        );
        assert_eq!(
            decide(
                std::slice::from_ref(&below_six),
                Term::le(x(), Term::int(7))
            ),
            Some(true)
        );
        assert_eq!(decide(&[below_six], Term::gt(x(), Term::int(2))), None);
        let above_five = Term::gt(x(), Term::int(5));
        assert_eq!(
            decide(
                std::slice::from_ref(&above_five),
                Term::ge(x(), Term::int(6))
            ),
            Some(true)
        );
        assert_eq!(decide(&[above_five], Term::gt(x(), Term::int(6))), None);
        let both = [Term::ge(x(), Term::int(3)), Term::le(x(), Term::int(3))];
        assert_eq!(decide(&both, Term::eq(x(), Term::int(3))), Some(true));
        assert_eq!(decide(&both, Term::eq(x(), Term::int(4))), Some(false));
        // A literal on the left reads the other way round.
        assert_eq!(
            decide(&[Term::lt(Term::int(5), x())], Term::gt(x(), Term::int(5))),
            Some(true)
        );
    }

    #[test]
    fn other_facts_bound_nothing() {
        let y = Term::constant(&FunDecl::constant(Symbol::user("y"), Sort::Int));
        assert!(bound_of(&Term::gt(x(), y)).is_none());
        assert!(bound_of(&Term::not(Term::eq(x(), Term::int(1)))).is_none());
        let r = Term::constant(&FunDecl::constant(Symbol::user("r"), Sort::Real));
        assert!(bound_of(&Term::gt(r, Term::real(1, 1))).is_none());
        assert_eq!(decide(&[Term::tt()], Term::gt(x(), Term::int(0))), None);
    }
}
