//! Abstract read permissions (seed 003) as plain data: the symbols that stand for read
//! amounts, each with its level, and the linear form of an amount over them.
//!
//! The seed's per-chunk log is not a separate structure here: a chunk's amount is an exact
//! term, and every read-amount symbol in it carries its level, so the linear form of an
//! amount says which parts of it come from which level. Levels order the symbols:
//! `ε < fresh < rdw < token < the method's rd < globalRd < anything else`, and among the
//! fresh amounts (and among the `rdw`s) a newer one is smaller. A symbol may only ever be
//! bounded from above, by terms of strictly larger levels (Boyland's rule), and only where
//! it is still to be chosen; then every set of such bounds can be met.

use std::collections::HashMap;

use germanium_smt::{FunDecl, Op, RealLit, Sort, Symbol, Term, TermKind};

/// The kind of a read amount, smallest first (the seed's levels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReadClass {
    /// `rdc(n)` is `n` times the one unit ε.
    Epsilon,
    /// The amount chosen for a call or a loop.
    Fresh,
    /// `rdw` inside a larger amount.
    Wildcard,
    /// `rd_token(tk)`.
    Token,
    /// The `rd` of the method being verified.
    Context,
    /// `globalRd` (and `rd` in predicate bodies).
    Global,
}

/// A read amount's place in the order: its class, then (for fresh and `rdw` amounts) its
/// age, newer ones smaller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReadLevel {
    pub class: ReadClass,
    /// Minus the creation count for fresh and `rdw` amounts, 0 otherwise.
    pub order: i64,
}

/// ε, the unit of `rdc(n)`: one symbol for every member (its only facts are its bounds and
/// bounds from above).
pub fn epsilon_decl() -> FunDecl {
    FunDecl::constant(Symbol::user("sx.arp.epsilon"), Sort::Real)
}

/// `globalRd`, the amount of `rd` in predicate bodies: one symbol for every member.
pub fn global_decl() -> FunDecl {
    FunDecl::constant(Symbol::user("sx.arp.global"), Sort::Real)
}

/// The amount tied to a token (`rd_token(tk)`).
pub fn token_decl() -> FunDecl {
    FunDecl::new(
        Symbol::user("sx.arp.token"),
        vec![Sort::named("Ref")],
        Sort::Real,
    )
}

/// The read-amount symbols of one member besides the fixed ones (ε, `globalRd`, tokens).
#[derive(Clone, Debug, Default)]
pub struct ReadAmounts {
    /// The method's own `rd` (made at the member's start where the program uses read
    /// permissions).
    pub own: Option<Term>,
    /// Every fresh and `rdw` amount, with its level.
    pub levels: HashMap<Term, ReadLevel>,
    /// Amounts that are chosen where they first occur (`rdw` inside an amount,
    /// `rd_token_fresh`), in order: a consumption may bound those made while its amount was
    /// evaluated (see [`ReadAmounts::born_since`]).
    pub born: Vec<Term>,
    /// Fresh and `rdw` amounts made so far (their order).
    pub made: i64,
}

impl ReadAmounts {
    /// The level of `t` if it is a read-amount symbol (or a token's amount).
    pub fn level(&self, t: &Term) -> Option<ReadLevel> {
        let fixed = |class| Some(ReadLevel { class, order: 0 });
        match t.kind() {
            TermKind::App(f, args) if args.is_empty() && *f == epsilon_decl() => {
                fixed(ReadClass::Epsilon)
            }
            TermKind::App(f, args) if args.is_empty() && *f == global_decl() => {
                fixed(ReadClass::Global)
            }
            TermKind::App(f, _) if *f == token_decl() => fixed(ReadClass::Token),
            _ if Some(t) == self.own.as_ref() => fixed(ReadClass::Context),
            _ => self.levels.get(t).copied(),
        }
    }

    /// Records a new fresh or `rdw` amount `t`: smaller than every earlier one of its class.
    pub fn add_chosen(&mut self, t: Term, class: ReadClass) {
        self.made += 1;
        self.levels.insert(
            t,
            ReadLevel {
                class,
                order: -self.made,
            },
        );
    }

    /// The amounts born since `mark` (a length of [`ReadAmounts::born`]).
    pub fn born_since(&self, mark: usize) -> &[Term] {
        &self.born[mark.min(self.born.len())..]
    }

    /// The read-amount symbols `t` mentions anywhere.
    pub fn atoms_in(&self, t: &Term, out: &mut Vec<Term>) {
        if self.level(t).is_some() {
            if !out.contains(t) {
                out.push(t.clone());
            }
            return;
        }
        for c in t.children() {
            self.atoms_in(c, out);
        }
    }
}

/// An amount as `Σ coefficient · symbol + constant + rest`, where the rest are the parts
/// that are not linear in read-amount symbols (other amounts, `perm(..)` results, `?:`).
#[derive(Clone, Debug, Default)]
pub struct LinearAmount {
    pub atoms: Vec<(Term, RealLit)>,
    pub constant: Option<RealLit>,
    pub rest: Vec<Term>,
}

impl LinearAmount {
    /// `sign` times the linear form of `t`, added to `self`; `false` where a coefficient
    /// does not fit (then the form is not to be used).
    pub fn add(&mut self, amounts: &ReadAmounts, t: &Term, sign: &RealLit) -> bool {
        if amounts.level(t).is_some() {
            return self.add_atom(t, sign);
        }
        if let Some(value) = literal(t) {
            return self.add_constant(&value, sign);
        }
        match t.kind() {
            TermKind::Op(Op::Add, args) => args.iter().all(|a| self.add(amounts, a, sign)),
            TermKind::Op(Op::Sub, args) if args.len() == 2 => {
                self.add(amounts, &args[0], sign) && self.add(amounts, &args[1], &sign.negated())
            }
            TermKind::Op(Op::Neg, args) if args.len() == 1 => {
                self.add(amounts, &args[0], &sign.negated())
            }
            TermKind::Op(Op::ToReal, args) if args.len() == 1 => self.add(amounts, &args[0], sign),
            TermKind::Op(Op::Mul, args) => {
                let mut factor = sign.clone();
                let mut others = Vec::new();
                for a in args {
                    match literal(a) {
                        Some(v) => match factor.checked_mul(&v) {
                            Some(f) => factor = f,
                            None => return false,
                        },
                        None => others.push(a),
                    }
                }
                match others.as_slice() {
                    [] => self.add_constant(&RealLit::integer(1.into()), &factor),
                    [one] => self.add(amounts, one, &factor),
                    _ => self.add_rest(t, sign),
                }
            }
            TermKind::Op(Op::RealDiv, args) if args.len() == 2 => {
                match literal(&args[1]).and_then(|d| inverse(&d)) {
                    Some(inv) => match sign.checked_mul(&inv) {
                        Some(f) => self.add(amounts, &args[0], &f),
                        None => false,
                    },
                    None => self.add_rest(t, sign),
                }
            }
            _ => self.add_rest(t, sign),
        }
    }

    fn add_atom(&mut self, t: &Term, coefficient: &RealLit) -> bool {
        match self.atoms.iter_mut().find(|(a, _)| a == t) {
            Some((_, c)) => match c.checked_add(coefficient) {
                Some(sum) => {
                    *c = sum;
                    true
                }
                None => false,
            },
            None => {
                self.atoms.push((t.clone(), coefficient.clone()));
                true
            }
        }
    }

    fn add_constant(&mut self, value: &RealLit, sign: &RealLit) -> bool {
        let Some(scaled) = value.checked_mul(sign) else {
            return false;
        };
        let sum = match &self.constant {
            Some(c) => c.checked_add(&scaled),
            None => Some(scaled),
        };
        self.constant = sum;
        self.constant.is_some()
    }

    fn add_rest(&mut self, t: &Term, sign: &RealLit) -> bool {
        self.rest
            .push(Term::mul(vec![Term::real_lit(sign.clone()), t.clone()]));
        true
    }

    /// The form as a term.
    pub fn term(&self) -> Term {
        self.term_but(None)
    }

    /// The form without the symbol `v`, as a term.
    pub fn term_without(&self, v: &Term) -> Term {
        self.term_but(Some(v))
    }

    fn term_but(&self, v: Option<&Term>) -> Term {
        let mut parts: Vec<Term> = self
            .atoms
            .iter()
            .filter(|(a, c)| Some(a) != v && !c.is_zero())
            .map(|(a, c)| Term::mul(vec![Term::real_lit(c.clone()), a.clone()]))
            .collect();
        parts.extend(self.constant.iter().map(|c| Term::real_lit(c.clone())));
        parts.extend(self.rest.iter().cloned());
        if parts.is_empty() {
            return Term::real(0, 1);
        }
        Term::add(parts)
    }

    /// Whether the form without `v` is positive by its shape: no negative coefficient, no
    /// other parts, and something positive (every read amount is positive).
    pub fn positive_without(&self, v: &Term) -> bool {
        self.positive_but(Some(v))
    }

    /// Whether the form is positive by its shape (see [`LinearAmount::positive_without`]).
    pub fn positive(&self) -> bool {
        self.positive_but(None)
    }

    fn positive_but(&self, v: Option<&Term>) -> bool {
        let atoms: Vec<&RealLit> = self
            .atoms
            .iter()
            .filter(|(a, c)| Some(a) != v && !c.is_zero())
            .map(|(_, c)| c)
            .collect();
        let constant = self.constant.as_ref().filter(|c| !c.is_zero());
        self.rest.is_empty()
            && atoms.iter().all(|c| !c.is_negative())
            && constant.is_none_or(|c| !c.is_negative())
            && (!atoms.is_empty() || constant.is_some())
    }

    /// The form without its positive read amounts of levels below its smallest negative
    /// one: a smaller amount (every read amount is positive) with the same highest level,
    /// so a bound that makes it positive makes the form positive too (`1/4 - rd + rdc(1)`
    /// is above `1/4 - rd`).
    pub fn without_positive_below_negative(&self, amounts: &ReadAmounts) -> LinearAmount {
        let lowest_negative = self
            .atoms
            .iter()
            .filter(|(_, c)| c.is_negative())
            .filter_map(|(a, _)| amounts.level(a))
            .min();
        let Some(bar) = lowest_negative else {
            return self.clone();
        };
        let mut out = self.clone();
        out.atoms.retain(|(a, c)| {
            c.is_negative() || c.is_zero() || amounts.level(a).is_none_or(|l| l >= bar)
        });
        out
    }

    /// The symbol of the smallest level with a non-zero coefficient, and its coefficient.
    pub fn smallest(&self, amounts: &ReadAmounts) -> Option<(Term, RealLit, ReadLevel)> {
        self.atoms
            .iter()
            .filter(|(_, c)| !c.is_zero())
            .filter_map(|(a, c)| amounts.level(a).map(|l| (a.clone(), c.clone(), l)))
            .min_by_key(|(_, _, l)| *l)
    }
}

fn literal(t: &Term) -> Option<RealLit> {
    if let Some(r) = t.as_real() {
        return Some(r.clone());
    }
    if let TermKind::Op(Op::ToReal, args) = t.kind() {
        return args.first().and_then(literal);
    }
    t.as_int().map(|i| RealLit::integer(i.clone()))
}

fn inverse(value: &RealLit) -> Option<RealLit> {
    if value.is_zero() {
        return None;
    }
    RealLit::new(value.denominator().clone(), value.numerator().clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constant(name: &str) -> Term {
        Term::constant(&FunDecl::constant(Symbol::user(name), Sort::Real))
    }

    fn one() -> RealLit {
        RealLit::integer(1.into())
    }

    #[test]
    fn linear_form_of_a_combination() {
        let mut amounts = ReadAmounts::default();
        let rd = constant("rd");
        amounts.add_chosen(rd.clone(), ReadClass::Fresh);
        // 1/4 - (rd - 4 * rd) = 1/4 + 3 rd
        let t = Term::sub(
            Term::real(1, 4),
            Term::sub(rd.clone(), Term::mul(vec![Term::real(4, 1), rd.clone()])),
        );
        let mut form = LinearAmount::default();
        assert!(form.add(&amounts, &t, &one()));
        let (v, c, level) = form.smallest(&amounts).expect("an atom");
        assert_eq!(v, rd);
        assert_eq!(c, RealLit::integer(3.into()));
        assert_eq!(level.class, ReadClass::Fresh);
        assert_eq!(form.constant, RealLit::new(1.into(), 4.into()));
        assert!(form.rest.is_empty());
    }

    #[test]
    fn newer_fresh_amounts_are_smaller_and_epsilon_smallest() {
        let mut amounts = ReadAmounts::default();
        let (a, b) = (constant("a"), constant("b"));
        amounts.add_chosen(a.clone(), ReadClass::Fresh);
        amounts.add_chosen(b.clone(), ReadClass::Fresh);
        assert!(amounts.level(&b) < amounts.level(&a));
        let e = Term::constant(&epsilon_decl());
        assert!(amounts.level(&e) < amounts.level(&b));
    }

    #[test]
    fn positive_amounts_below_the_smallest_negative_one_are_dropped() {
        let mut amounts = ReadAmounts::default();
        let rd = constant("rd");
        amounts.add_chosen(rd.clone(), ReadClass::Fresh);
        let e = Term::constant(&epsilon_decl());
        // 1/4 - rd + ε: ε is below rd, so the form to bound is 1/4 - rd.
        let t = Term::add(vec![Term::sub(Term::real(1, 4), rd.clone()), e.clone()]);
        let mut form = LinearAmount::default();
        assert!(form.add(&amounts, &t, &one()));
        let reduced = form.without_positive_below_negative(&amounts);
        let (v, c, _) = reduced.smallest(&amounts).expect("an atom");
        assert_eq!((v, c.is_negative()), (rd.clone(), true));
        assert_eq!(reduced.constant, form.constant);
        // rd - ε: nothing positive lies below ε, the form stays as it is.
        let mut other = LinearAmount::default();
        assert!(other.add(&amounts, &Term::sub(rd.clone(), e.clone()), &one()));
        let same = other.without_positive_below_negative(&amounts);
        assert_eq!(same.atoms.len(), 2);
    }

    #[test]
    fn other_terms_are_the_rest() {
        let amounts = ReadAmounts::default();
        let p = constant("p");
        let mut form = LinearAmount::default();
        assert!(form.add(
            &amounts,
            &Term::add(vec![p.clone(), Term::real(1, 2)]),
            &one()
        ));
        assert!(form.atoms.is_empty());
        assert_eq!(form.rest.len(), 1);
        assert!(form.smallest(&amounts).is_none());
    }
}
