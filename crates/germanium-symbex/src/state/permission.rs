//! Permission amounts: rational terms of sort Real, with the few operations the rules need.
//!
//! `write` is 1, `none` is 0, fractions are exact rationals; `wildcard` is a fresh positive
//! constant chosen by the caller (see `Verifier::fresh_wildcard`), so nothing here needs a
//! solver.

use germanium_smt::{Op, Term, TermKind};

/// A permission amount (a term of sort Real).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Permission(pub Term);

impl Permission {
    pub fn write() -> Permission {
        Permission(Term::real(1, 1))
    }

    pub fn none() -> Permission {
        Permission(Term::real(0, 1))
    }

    pub fn fraction(num: i64, den: i64) -> Permission {
        Permission(Term::real(num, den))
    }

    /// Wraps an evaluated Perm-typed term (Int terms are converted).
    pub fn of(term: Term) -> Permission {
        if term.sort().is_numeric() && *term.sort() == germanium_smt::Sort::Int {
            Permission(Term::to_real(term))
        } else {
            Permission(term)
        }
    }

    pub fn term(&self) -> &Term {
        &self.0
    }

    /// `self + other`; `x` for `(x - other) + other` (an amount given back where it was
    /// taken, so amounts of symbols such as read permissions do not grow).
    pub fn add(&self, other: &Permission) -> Permission {
        if let TermKind::Op(Op::Sub, args) = self.0.kind() {
            if args.len() == 2 && args[1] == other.0 {
                return Permission(args[0].clone());
            }
        }
        Permission(Term::add(vec![self.0.clone(), other.0.clone()]))
    }

    /// `self - other`; `x` for `(x + other) - other`.
    pub fn sub(&self, other: &Permission) -> Permission {
        if let TermKind::Op(Op::Add, args) = self.0.kind() {
            if let Some(at) = args.iter().position(|a| *a == other.0) {
                let mut rest = args.clone();
                rest.remove(at);
                return Permission(Term::add(rest));
            }
        }
        Permission(Term::sub(self.0.clone(), other.0.clone()))
    }

    /// `self` when `cond` holds, none otherwise (a guarded amount).
    pub fn when(&self, cond: &Term) -> Permission {
        Permission(Term::ite(
            cond.clone(),
            self.0.clone(),
            Permission::none().0,
        ))
    }

    pub fn is_positive(&self) -> Term {
        Term::gt(self.0.clone(), Permission::none().0)
    }

    pub fn is_non_negative(&self) -> Term {
        Term::ge(self.0.clone(), Permission::none().0)
    }

    /// Whether this amount covers `needed` (`None`: some positive amount, a wildcard's).
    pub fn covers(&self, needed: Option<&Permission>) -> Term {
        match needed {
            Some(p) => self.at_least(p),
            None => self.is_positive(),
        }
    }

    pub fn at_least(&self, other: &Permission) -> Term {
        Term::ge(self.0.clone(), other.0.clone())
    }

    pub fn at_most(&self, other: &Permission) -> Term {
        Term::le(self.0.clone(), other.0.clone())
    }

    /// Whether the amount is syntactically all or nothing: `write`, or `write` under a
    /// condition and none otherwise (`ite(c, write, none)`).
    pub fn is_all_or_nothing(&self) -> bool {
        if self.0 == Permission::write().0 {
            return true;
        }
        match self.0.kind() {
            germanium_smt::TermKind::Op(germanium_smt::Op::Ite, args) => {
                args.len() == 3
                    && args[1] == Permission::write().0
                    && args[2] == Permission::none().0
            }
            _ => false,
        }
    }

    /// Whether the amount is syntactically the literal zero.
    pub fn is_literally_none(&self) -> bool {
        self.0.as_real().is_some_and(|r| r.is_zero())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_arithmetic_folds() {
        let half = Permission::fraction(1, 2);
        assert_eq!(half.add(&half), Permission::write());
        assert!(Permission::write()
            .sub(&Permission::write())
            .is_literally_none());
        assert!(Permission::write().is_positive().is_true());
        assert!(Permission::none().is_positive().is_false());
        assert!(Permission::write().at_least(&half).is_true());
        assert!(half.at_least(&Permission::write()).is_false());
    }

    #[test]
    fn all_or_nothing_amounts() {
        let c = Term::var(germanium_smt::Symbol::user("c"), germanium_smt::Sort::Bool);
        assert!(Permission::write().is_all_or_nothing());
        assert!(Permission::write().when(&c).is_all_or_nothing());
        assert!(!Permission::fraction(1, 2).when(&c).is_all_or_nothing());
        assert!(!Permission::none().is_all_or_nothing());
    }

    #[test]
    fn guarded_amounts() {
        let half = Permission::fraction(1, 2);
        assert_eq!(half.when(&Term::tt()), half);
        assert!(half.when(&Term::ff()).is_literally_none());
    }

    #[test]
    fn integers_become_reals() {
        let p = Permission::of(Term::int(1));
        assert_eq!(p.term().sort(), &germanium_smt::Sort::Real);
    }
}
