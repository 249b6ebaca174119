//! The theory of one set instance `Set[E]`: a declared sort with membership, the empty and
//! singleton sets, adding one element (used for literals, so that their cardinality is
//! immediate), union, intersection, difference, subset, cardinality and extensional
//! equality. Map domains and ranges are sets of this kind too.
//!
//! Triggers: membership facts are triggered by membership terms of the compound set, or by
//! a membership term of an operand together with the compound set (no new set terms are
//! made); cardinality facts by cardinality terms. Nothing creates a larger set term than
//! one already present, so matching terminates.

use germanium_smt::{FunDecl, Sort, Term};

use super::sorts::{bound, exists, forall, member_fun};

/// Declarations of one `Set[E]` instance.
#[derive(Debug)]
pub(crate) struct SetTheory {
    name: String,
    pub sort: Sort,
    pub elem: Sort,
    pub contains: FunDecl,
    pub card: FunDecl,
    pub empty: FunDecl,
    pub singleton: FunDecl,
    /// `add(s, x)` is `s union Set(x)`.
    pub add: FunDecl,
    pub union: FunDecl,
    pub intersection: FunDecl,
    pub difference: FunDecl,
    pub subset: FunDecl,
    pub equal: FunDecl,
}

impl SetTheory {
    pub fn new(name: &str, sort: Sort, elem: Sort) -> SetTheory {
        let f = |op: &str, args: Vec<Sort>, result: Sort| member_fun(name, op, args, result);
        let (s, e) = (sort.clone(), elem.clone());
        let binary = |op: &str| f(op, vec![s.clone(), s.clone()], s.clone());
        SetTheory {
            name: name.to_string(),
            contains: f("contains", vec![e.clone(), s.clone()], Sort::Bool),
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
            self.contains.clone(),
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

    /// `x in s`.
    pub fn contains(&self, x: Term, s: Term) -> Term {
        Term::app(&self.contains, vec![x, s])
    }
    pub fn card(&self, s: Term) -> Term {
        Term::app(&self.card, vec![s])
    }
    pub fn empty(&self) -> Term {
        Term::constant(&self.empty)
    }
    pub fn singleton(&self, x: Term) -> Term {
        Term::app(&self.singleton, vec![x])
    }
    pub fn add(&self, s: Term, x: Term) -> Term {
        Term::app(&self.add, vec![s, x])
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

    /// `Set(e1, ..., en)`: a singleton with the other elements added.
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
        let card = |s: &Term| self.card(s.clone());
        let has = |e: &Term, s: &Term| self.contains(e.clone(), s.clone());
        let zero = || Term::int(0);
        let mut out = Vec::new();

        // Cardinality: non-negative; zero exactly for the empty set; otherwise a witness.
        let witness = exists(
            &qid("nonempty_witness"),
            &[&y],
            vec![vec![has(&y, &a)]],
            has(&y, &a),
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

        // The empty set.
        let in_empty = has(&y, &self.empty());
        out.push(forall(
            &qid("empty"),
            &[&y],
            vec![vec![in_empty.clone()]],
            Term::not(in_empty),
        ));

        // Singletons.
        let one = self.singleton(x.clone());
        let in_one = has(&y, &one);
        out.push(forall(
            &qid("singleton_contains"),
            &[&x, &y],
            vec![vec![in_one.clone()]],
            Term::iff(in_one, Term::eq(x.clone(), y.clone())),
        ));
        out.push(forall(
            &qid("singleton"),
            &[&x],
            vec![vec![one.clone()]],
            Term::and([has(&x, &one), Term::eq(card(&one), Term::int(1))]),
        ));

        // Adding one element.
        let plus = self.add(a.clone(), x.clone());
        let in_plus = has(&y, &plus);
        out.push(forall(
            &qid("add_contains"),
            &[&a, &x, &y],
            vec![vec![in_plus.clone()]],
            Term::iff(
                in_plus.clone(),
                Term::or([Term::eq(x.clone(), y.clone()), has(&y, &a)]),
            ),
        ));
        out.push(forall(
            &qid("add_new"),
            &[&a, &x],
            vec![vec![plus.clone()]],
            has(&x, &plus),
        ));
        out.push(forall(
            &qid("add_keeps"),
            &[&a, &x, &y],
            vec![vec![has(&y, &a), plus.clone()]],
            Term::implies(has(&y, &a), in_plus),
        ));
        out.push(forall(
            &qid("add_card"),
            &[&a, &x],
            vec![vec![card(&plus)]],
            Term::eq(
                card(&plus),
                Term::ite(
                    has(&x, &a),
                    card(&a),
                    Term::add(vec![card(&a), Term::int(1)]),
                ),
            ),
        ));

        // Union.
        let u = self.union(a.clone(), b.clone());
        let in_u = has(&y, &u);
        out.push(forall(
            &qid("union_contains"),
            &[&a, &b, &y],
            vec![vec![in_u.clone()]],
            Term::iff(in_u.clone(), Term::or([has(&y, &a), has(&y, &b)])),
        ));
        out.push(forall(
            &qid("union_left"),
            &[&a, &b, &y],
            vec![vec![has(&y, &a), u.clone()]],
            Term::implies(has(&y, &a), in_u.clone()),
        ));
        out.push(forall(
            &qid("union_right"),
            &[&a, &b, &y],
            vec![vec![has(&y, &b), u.clone()]],
            Term::implies(has(&y, &b), in_u),
        ));

        // Intersection, and the cardinality of union and intersection together.
        let i = self.intersection(a.clone(), b.clone());
        let in_i = has(&y, &i);
        out.push(forall(
            &qid("intersection_contains"),
            &[&a, &b, &y],
            vec![vec![in_i.clone()]],
            Term::iff(in_i, Term::and([has(&y, &a), has(&y, &b)])),
        ));
        out.push(forall(
            &qid("union_intersection_card"),
            &[&a, &b],
            vec![vec![card(&u)], vec![card(&i)]],
            Term::eq(
                Term::add(vec![card(&u), card(&i)]),
                Term::add(vec![card(&a), card(&b)]),
            ),
        ));

        // Difference.
        let d = self.difference(a.clone(), b.clone());
        let in_d = has(&y, &d);
        out.push(forall(
            &qid("difference_contains"),
            &[&a, &b, &y],
            vec![vec![in_d.clone()]],
            Term::iff(
                in_d.clone(),
                Term::and([has(&y, &a), Term::not(has(&y, &b))]),
            ),
        ));
        out.push(forall(
            &qid("difference_removed"),
            &[&a, &b, &y],
            vec![vec![has(&y, &b), d.clone()]],
            Term::implies(has(&y, &b), Term::not(in_d)),
        ));
        let d_back = self.difference(b.clone(), a.clone());
        out.push(forall(
            &qid("difference_card"),
            &[&a, &b],
            vec![vec![card(&d)]],
            Term::and([
                Term::eq(Term::add(vec![card(&d), card(&d_back), card(&i)]), card(&u)),
                Term::eq(card(&d), Term::sub(card(&a), card(&i))),
            ]),
        ));

        // Subset and extensional equality.
        let sub = self.subset(a.clone(), b.clone());
        out.push(forall(
            &qid("subset"),
            &[&a, &b],
            vec![vec![sub.clone()]],
            Term::iff(
                sub,
                forall(
                    &qid("subset_elements"),
                    &[&y],
                    vec![vec![has(&y, &a)], vec![has(&y, &b)]],
                    Term::implies(has(&y, &a), has(&y, &b)),
                ),
            ),
        ));
        let eq = self.equal(a.clone(), b.clone());
        out.push(forall(
            &qid("equal"),
            &[&a, &b],
            vec![vec![eq.clone()]],
            Term::and([
                Term::iff(
                    eq.clone(),
                    forall(
                        &qid("equal_elements"),
                        &[&y],
                        vec![vec![has(&y, &a)], vec![has(&y, &b)]],
                        Term::iff(has(&y, &a), has(&y, &b)),
                    ),
                ),
                Term::implies(eq, Term::eq(a.clone(), b.clone())),
            ]),
        ));
        out
    }
}
