//! The theory of one multiset instance `Multiset[E]`: a declared sort with the
//! multiplicity function `count` (Viper's `x in m`), the empty and singleton multisets,
//! adding one occurrence (used for literals), union (multiplicities add up), intersection
//! (minimum), difference (truncated subtraction), subset, cardinality and extensional
//! equality.
//!
//! Triggers follow the set theory: `count` terms of a compound multiset, or of an operand
//! together with the compound, and cardinality terms; no instantiation makes a multiset
//! term larger than one already present.

use germanium_smt::{FunDecl, Sort, Term};

use super::sorts::{bound, exists, forall, member_fun};

/// Declarations of one `Multiset[E]` instance.
#[derive(Debug)]
pub(crate) struct MultisetTheory {
    name: String,
    pub sort: Sort,
    pub elem: Sort,
    pub count: FunDecl,
    pub card: FunDecl,
    pub empty: FunDecl,
    pub singleton: FunDecl,
    pub add: FunDecl,
    pub union: FunDecl,
    pub intersection: FunDecl,
    pub difference: FunDecl,
    pub subset: FunDecl,
    pub equal: FunDecl,
}

impl MultisetTheory {
    pub fn new(name: &str, sort: Sort, elem: Sort) -> MultisetTheory {
        let f = |op: &str, args: Vec<Sort>, result: Sort| member_fun(name, op, args, result);
        let (s, e) = (sort.clone(), elem.clone());
        let binary = |op: &str| f(op, vec![s.clone(), s.clone()], s.clone());
        MultisetTheory {
            name: name.to_string(),
            count: f("count", vec![s.clone(), e.clone()], Sort::Int),
            card: f("card", vec![s.clone()], Sort::Int),
            empty: f("empty", vec![], s.clone()),
            singleton: f("singleton", vec![e.clone()], s.clone()),
            add: f("add", vec![s.clone(), e.clone()], s.clone()),
            union: binary("union"),
            intersection: binary("intersection"),
            difference: binary("difference"),
            subset: f("subset", vec![s.clone(), s.clone()], Sort::Bool),
            equal: f("equal", vec![s.clone(), s.clone()], Sort::Bool),
            sort,
            elem,
        }
    }

    pub fn declarations(&self) -> Vec<FunDecl> {
        vec![
            self.count.clone(),
            self.card.clone(),
            self.empty.clone(),
            self.singleton.clone(),
            self.add.clone(),
            self.union.clone(),
            self.intersection.clone(),
            self.difference.clone(),
            self.subset.clone(),
            self.equal.clone(),
        ]
    }

    // ----- term builders ------------------------------------------------------------------

    pub fn count(&self, m: Term, x: Term) -> Term {
        Term::app(&self.count, vec![m, x])
    }
    pub fn card(&self, m: Term) -> Term {
        Term::app(&self.card, vec![m])
    }
    pub fn empty(&self) -> Term {
        Term::constant(&self.empty)
    }
    pub fn singleton(&self, x: Term) -> Term {
        Term::app(&self.singleton, vec![x])
    }
    pub fn add(&self, m: Term, x: Term) -> Term {
        Term::app(&self.add, vec![m, x])
    }
    pub fn union(&self, a: Term, b: Term) -> Term {
        Term::app(&self.union, vec![a, b])
    }
    pub fn intersection(&self, a: Term, b: Term) -> Term {
        Term::app(&self.intersection, vec![a, b])
    }
    pub fn difference(&self, a: Term, b: Term) -> Term {
        Term::app(&self.difference, vec![a, b])
    }
    pub fn subset(&self, a: Term, b: Term) -> Term {
        Term::app(&self.subset, vec![a, b])
    }
    pub fn equal(&self, a: Term, b: Term) -> Term {
        Term::app(&self.equal, vec![a, b])
    }

    /// `Multiset(e1, ..., en)`: a singleton with the other occurrences added.
    pub fn literal(&self, elems: Vec<Term>) -> Term {
        let mut elems = elems.into_iter();
        match elems.next() {
            None => self.empty(),
            Some(first) => elems.fold(self.singleton(first), |acc, x| self.add(acc, x)),
        }
    }

    // ----- axioms ---------------------------------------------------------------------------

    pub fn axioms(&self) -> Vec<Term> {
        let n = &self.name;
        let qid = |what: &str| format!("{n}.{what}");
        let (a, b) = (bound("a", &self.sort), bound("b", &self.sort));
        let (x, y) = (bound("x", &self.elem), bound("y", &self.elem));
        let card = |m: &Term| self.card(m.clone());
        let count = |m: &Term, e: &Term| self.count(m.clone(), e.clone());
        let zero = || Term::int(0);
        let one = || Term::int(1);
        let mut out = Vec::new();

        out.push(forall(
            &qid("count"),
            &[&a, &y],
            vec![vec![count(&a, &y)]],
            Term::le(zero(), count(&a, &y)),
        ));
        let witness = exists(
            &qid("nonempty_witness"),
            &[&y],
            vec![vec![count(&a, &y)]],
            Term::lt(zero(), count(&a, &y)),
        );
        out.push(forall(
            &qid("card"),
            &[&a],
            vec![vec![card(&a)]],
            Term::and([
                Term::le(zero(), card(&a)),
                Term::iff(
                    Term::eq(card(&a), zero()),
                    Term::eq(a.clone(), self.empty()),
                ),
                Term::implies(Term::not(Term::eq(card(&a), zero())), witness),
            ]),
        ));

        let none = count(&self.empty(), &y);
        out.push(forall(
            &qid("empty"),
            &[&y],
            vec![vec![none.clone()]],
            Term::eq(none, zero()),
        ));

        // Singletons.
        let single = self.singleton(x.clone());
        out.push(forall(
            &qid("singleton_count"),
            &[&x, &y],
            vec![vec![count(&single, &y)]],
            Term::eq(
                count(&single, &y),
                Term::ite(Term::eq(x.clone(), y.clone()), one(), zero()),
            ),
        ));
        out.push(forall(
            &qid("singleton"),
            &[&x],
            vec![vec![single.clone()]],
            Term::and([
                Term::eq(count(&single, &x), one()),
                Term::eq(card(&single), one()),
            ]),
        ));

        // One more occurrence.
        let plus = self.add(a.clone(), x.clone());
        let plus_def = Term::eq(
            count(&plus, &y),
            Term::ite(
                Term::eq(x.clone(), y.clone()),
                Term::add(vec![count(&a, &y), one()]),
                count(&a, &y),
            ),
        );
        out.push(forall(
            &qid("add_count"),
            &[&a, &x, &y],
            vec![vec![count(&plus, &y)], vec![count(&a, &y), plus.clone()]],
            plus_def,
        ));
        out.push(forall(
            &qid("add"),
            &[&a, &x],
            vec![vec![plus.clone()]],
            Term::eq(count(&plus, &x), Term::add(vec![count(&a, &x), one()])),
        ));
        out.push(forall(
            &qid("add_card"),
            &[&a, &x],
            vec![vec![card(&plus)]],
            Term::eq(card(&plus), Term::add(vec![card(&a), one()])),
        ));

        // Union: multiplicities add up.
        let u = self.union(a.clone(), b.clone());
        out.push(forall(
            &qid("union_count"),
            &[&a, &b, &y],
            vec![
                vec![count(&u, &y)],
                vec![count(&a, &y), u.clone()],
                vec![count(&b, &y), u.clone()],
            ],
            Term::eq(count(&u, &y), Term::add(vec![count(&a, &y), count(&b, &y)])),
        ));
        out.push(forall(
            &qid("union_card"),
            &[&a, &b],
            vec![vec![card(&u)]],
            Term::eq(card(&u), Term::add(vec![card(&a), card(&b)])),
        ));

        // Intersection: the smaller multiplicity.
        let i = self.intersection(a.clone(), b.clone());
        let (ca, cb) = (count(&a, &y), count(&b, &y));
        out.push(forall(
            &qid("intersection_count"),
            &[&a, &b, &y],
            vec![vec![count(&i, &y)]],
            Term::eq(
                count(&i, &y),
                Term::ite(Term::le(ca.clone(), cb.clone()), ca.clone(), cb.clone()),
            ),
        ));

        // Difference: truncated subtraction.
        let d = self.difference(a.clone(), b.clone());
        out.push(forall(
            &qid("difference_count"),
            &[&a, &b, &y],
            vec![vec![count(&d, &y)]],
            Term::eq(
                count(&d, &y),
                Term::ite(Term::le(cb.clone(), ca.clone()), Term::sub(ca, cb), zero()),
            ),
        ));
        let d_back = self.difference(b.clone(), a.clone());
        out.push(forall(
            &qid("difference_card"),
            &[&a, &b],
            vec![vec![card(&d)]],
            Term::and([
                Term::eq(
                    Term::add(vec![
                        card(&d),
                        card(&d_back),
                        Term::mul(vec![Term::int(2), card(&i)]),
                    ]),
                    card(&u),
                ),
                Term::eq(card(&d), Term::sub(card(&a), card(&i))),
            ]),
        ));

        // Subset and extensional equality.
        let pointwise = |what: &str, rel: fn(Term, Term) -> Term| {
            forall(
                &qid(what),
                &[&y],
                vec![vec![count(&a, &y)], vec![count(&b, &y)]],
                rel(count(&a, &y), count(&b, &y)),
            )
        };
        let sub = self.subset(a.clone(), b.clone());
        out.push(forall(
            &qid("subset"),
            &[&a, &b],
            vec![vec![sub.clone()]],
            Term::iff(sub, pointwise("subset_counts", Term::le)),
        ));
        let eq = self.equal(a.clone(), b.clone());
        out.push(forall(
            &qid("equal"),
            &[&a, &b],
            vec![vec![eq.clone()]],
            Term::and([
                Term::iff(eq.clone(), pointwise("equal_counts", Term::eq)),
                Term::implies(eq, Term::eq(a.clone(), b.clone())),
            ]),
        ));
        out
    }
}
