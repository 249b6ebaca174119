//! Z3 checks of the sequence, set, multiset and map axioms: textbook facts are proved,
//! non-facts are not, and every answer comes quickly.

use germanium_semantics::types::Type;
use germanium_smt::Term;

use super::tests::{int, seq_int, Check};
use super::TheoryOp::*;

const PROGRAM: &str = "
method m(s: Seq[Int], t: Seq[Int], a: Set[Int], b: Set[Int], p: Multiset[Int], q: Multiset[Int],
         f: Map[Int, Bool], r: Seq[Ref])
{}
";

#[test]
fn sequences() {
    let mut c = Check::new(PROGRAM);
    let e = Type::Int;
    let s = c.constant("s", &seq_int());
    let t = c.constant("t", &seq_int());
    let i = c.constant("i", &Type::Int);
    let n = c.constant("n", &Type::Int);
    let len = |c: &Check, x: &Term| c.op(SeqLength(e.clone()), vec![x.clone()]);
    let at = |c: &Check, x: &Term, k: Term| c.op(SeqIndex(e.clone()), vec![x.clone(), k]);
    let st = c.op(SeqAppend(e.clone()), vec![s.clone(), t.clone()]);

    // |s ++ t| == |s| + |t|, and not |s|.
    let goal = Term::eq(len(&c, &st), Term::add(vec![len(&c, &s), len(&c, &t)]));
    assert!(c.valid(&[], goal));
    assert!(!c.valid(&[], Term::eq(len(&c, &st), len(&c, &s))));
    // (s ++ t)[|s|] == t[0] when t is not empty; (s ++ t)[i] == s[i] in range of s.
    let hyp = Term::lt(int(0), len(&c, &t));
    assert!(c.valid(
        &[hyp],
        Term::eq(at(&c, &st, len(&c, &s)), at(&c, &t, int(0)))
    ));
    let in_s = Term::and([
        Term::le(int(0), i.clone()),
        Term::lt(i.clone(), len(&c, &s)),
    ]);
    assert!(c.valid(
        &[in_s.clone()],
        Term::eq(at(&c, &st, i.clone()), at(&c, &s, i.clone()))
    ));
    assert!(!c.valid(&[], Term::eq(at(&c, &st, i.clone()), at(&c, &s, i.clone()))));

    // Literals.
    let lit = c.op(SeqLiteral(e.clone()), vec![int(1), int(2), int(3)]);
    assert!(c.valid(&[], Term::eq(len(&c, &lit), int(3))));
    assert!(c.valid(&[], Term::eq(at(&c, &lit, int(1)), int(2))));
    assert!(c.valid(&[], c.op(SeqContains(e.clone()), vec![int(2), lit.clone()])));
    assert!(c.valid(
        &[],
        Term::not(c.op(SeqContains(e.clone()), vec![int(4), lit.clone()]))
    ));
    // Literals of one length differ where an element does, with no index term about
    // (Nagini's strings compare so), and are equal where every element is.
    let other = c.op(SeqLiteral(e.clone()), vec![int(1), int(2), int(4)]);
    let same = c.op(SeqLiteral(e.clone()), vec![int(1), int(2), int(3)]);
    let equal =
        |c: &Check, x: &Term, y: &Term| c.op(SeqEqual(e.clone()), vec![x.clone(), y.clone()]);
    assert!(c.valid(&[], Term::not(equal(&c, &lit, &other))));
    assert!(!c.valid(&[], equal(&c, &lit, &other)));
    assert!(c.valid(&[], equal(&c, &lit, &same)));
    assert!(!c.valid(&[], Term::not(equal(&c, &lit, &same))));
    // With unknown elements: equal exactly when the elements are.
    let with_i = c.op(SeqLiteral(e.clone()), vec![int(1), i.clone(), int(3)]);
    assert!(!c.valid(&[], equal(&c, &lit, &with_i)));
    assert!(c.valid(&[Term::eq(i.clone(), int(2))], equal(&c, &lit, &with_i)));
    assert!(c.valid(&[equal(&c, &lit, &with_i)], Term::eq(i.clone(), int(2))));
    let empty = c.op(SeqEmpty(e.clone()), vec![]);
    assert!(c.valid(&[], Term::eq(len(&c, &empty), int(0))));
    let is_empty = c.op(SeqEqual(e.clone()), vec![s.clone(), empty.clone()]);
    assert!(c.valid(&[Term::eq(len(&c, &s), int(0))], is_empty));

    // Take, drop and extensionality: s[..n] ++ s[n..] == s.
    let take = c.op(SeqTake(e.clone()), vec![s.clone(), n.clone()]);
    let drop = c.op(SeqDrop(e.clone()), vec![s.clone(), n.clone()]);
    let n_ok = Term::and([
        Term::le(int(0), n.clone()),
        Term::le(n.clone(), len(&c, &s)),
    ]);
    assert!(c.valid(&[n_ok.clone()], Term::eq(len(&c, &take), n.clone())));
    assert!(c.valid(
        &[n_ok.clone()],
        Term::eq(len(&c, &drop), Term::sub(len(&c, &s), n.clone()))
    ));
    // Dropping nothing is the sequence itself, with no term for the axioms to relate.
    assert_eq!(c.op(SeqDrop(e.clone()), vec![s.clone(), int(0)]), s);
    let glued = c.op(SeqAppend(e.clone()), vec![take.clone(), drop.clone()]);
    assert!(c.valid(
        &[n_ok.clone()],
        c.op(SeqEqual(e.clone()), vec![glued, s.clone()])
    ));
    assert!(c.valid(
        &[Term::lt(n.clone(), int(0))],
        Term::eq(len(&c, &take), int(0))
    ));
    assert!(!c.valid(
        &[],
        c.op(SeqEqual(e.clone()), vec![take.clone(), s.clone()])
    ));
    // An element of the dropped part.
    let k_ok = Term::and([
        Term::le(n.clone(), i.clone()),
        Term::lt(i.clone(), len(&c, &s)),
        Term::le(int(0), n.clone()),
    ]);
    let moved = at(&c, &drop, Term::sub(i.clone(), n.clone()));
    assert!(c.valid(&[k_ok], Term::eq(moved, at(&c, &s, i.clone()))));

    // Update.
    let upd = c.op(SeqUpdate(e.clone()), vec![s.clone(), i.clone(), int(5)]);
    assert!(c.valid(&[in_s.clone()], Term::eq(at(&c, &upd, i.clone()), int(5))));
    assert!(c.valid(&[], Term::eq(len(&c, &upd), len(&c, &s))));
    let j = c.constant("j", &Type::Int);
    let j_ok = Term::and([
        Term::le(int(0), j.clone()),
        Term::lt(j.clone(), len(&c, &s)),
        Term::not(Term::eq(i.clone(), j.clone())),
    ]);
    assert!(c.valid(
        &[j_ok],
        Term::eq(at(&c, &upd, j.clone()), at(&c, &s, j.clone()))
    ));

    // Membership.
    let elem = at(&c, &s, i.clone());
    assert!(c.valid(
        &[in_s.clone()],
        c.op(SeqContains(e.clone()), vec![elem, s.clone()])
    ));
    let x = c.constant("x", &Type::Int);
    let x_in = c.op(SeqContains(e.clone()), vec![x.clone(), s.clone()]);
    assert!(c.valid(&[x_in.clone()], Term::lt(int(0), len(&c, &s))));
    assert!(c.valid(
        &[x_in.clone()],
        c.op(SeqContains(e.clone()), vec![x.clone(), st.clone()])
    ));
    assert!(!c.valid(&[], x_in));

    // Equality.
    let eq = c.op(SeqEqual(e.clone()), vec![s.clone(), t.clone()]);
    assert!(c.valid(
        &[eq.clone(), in_s.clone()],
        Term::eq(at(&c, &s, i.clone()), at(&c, &t, i.clone()))
    ));
    assert!(c.valid(&[eq.clone()], Term::eq(len(&c, &s), len(&c, &t))));
    assert!(!c.valid(&[Term::eq(len(&c, &s), len(&c, &t))], eq));

    // Ranges.
    let range = c.op(SeqRange, vec![int(2), int(5)]);
    assert!(c.valid(&[], Term::eq(len(&c, &range), int(3))));
    assert!(c.valid(&[], Term::eq(at(&c, &range, int(1)), int(3))));
    assert!(c.valid(
        &[],
        c.op(SeqContains(e.clone()), vec![int(4), range.clone()])
    ));
    assert!(c.valid(
        &[],
        Term::not(c.op(SeqContains(e.clone()), vec![int(5), range]))
    ));
}

#[test]
fn sets() {
    let mut c = Check::new(PROGRAM);
    let e = Type::Int;
    let set = Type::set(Type::Int);
    let (a, b) = (c.constant("A", &set), c.constant("B", &set));
    let x = c.constant("x", &Type::Int);
    let has = |c: &Check, s: &Term| c.op(SetContains(e.clone()), vec![x.clone(), s.clone()]);
    let card = |c: &Check, s: &Term| c.op(SetCardinality(e.clone()), vec![s.clone()]);
    let u = c.op(SetUnion(e.clone()), vec![a.clone(), b.clone()]);
    let i = c.op(SetIntersection(e.clone()), vec![a.clone(), b.clone()]);
    let d = c.op(SetDifference(e.clone()), vec![a.clone(), b.clone()]);

    assert!(c.valid(
        &[],
        Term::iff(has(&c, &u), Term::or([has(&c, &a), has(&c, &b)]))
    ));
    assert!(c.valid(
        &[],
        Term::iff(has(&c, &i), Term::and([has(&c, &a), has(&c, &b)]))
    ));
    assert!(c.valid(
        &[],
        Term::iff(
            has(&c, &d),
            Term::and([has(&c, &a), Term::not(has(&c, &b))])
        )
    ));
    assert!(!c.valid(&[], Term::iff(has(&c, &u), has(&c, &a))));

    let lit = c.op(SetLiteral(e.clone()), vec![int(1), int(2), int(3)]);
    assert!(c.valid(&[], Term::eq(card(&c, &lit), int(3))));
    let dup = c.op(SetLiteral(e.clone()), vec![int(1), int(1)]);
    assert!(c.valid(&[], Term::eq(card(&c, &dup), int(1))));
    assert!(c.valid(&[], c.op(SetContains(e.clone()), vec![int(2), lit.clone()])));
    assert!(c.valid(
        &[],
        Term::not(c.op(SetContains(e.clone()), vec![int(4), lit]))
    ));

    let sub = c.op(SetSubset(e.clone()), vec![a.clone(), b.clone()]);
    assert!(c.valid(&[sub.clone(), has(&c, &a)], has(&c, &b)));
    let u_back = c.op(SetUnion(e.clone()), vec![b.clone(), a.clone()]);
    assert!(c.valid(&[], c.op(SetEqual(e.clone()), vec![u.clone(), u_back])));
    let sum = Term::add(vec![card(&c, &a), card(&c, &b)]);
    assert!(c.valid(&[], Term::le(card(&c, &u), sum)));
    assert!(c.valid(&[], Term::le(card(&c, &d), card(&c, &a))));
    let empty_a = Term::eq(card(&c, &a), int(0));
    assert!(c.valid(&[empty_a], Term::not(has(&c, &a))));
    assert!(c.valid(&[has(&c, &a)], Term::lt(int(0), card(&c, &a))));
    let same_size = Term::eq(card(&c, &a), card(&c, &b));
    assert!(!c.valid(
        &[same_size],
        c.op(SetEqual(e.clone()), vec![a.clone(), b.clone()])
    ));
    let empty = c.op(SetEmpty(e.clone()), vec![]);
    assert!(c.valid(&[], Term::eq(card(&c, &empty), int(0))));
}

#[test]
fn multisets() {
    let mut c = Check::new(PROGRAM);
    let e = Type::Int;
    let ms = Type::multiset(Type::Int);
    let (a, b) = (c.constant("A", &ms), c.constant("B", &ms));
    let x = c.constant("x", &Type::Int);
    let count = |c: &Check, m: &Term, y: Term| c.op(MultisetCount(e.clone()), vec![y, m.clone()]);
    let card = |c: &Check, m: &Term| c.op(MultisetCardinality(e.clone()), vec![m.clone()]);

    let lit = c.op(MultisetLiteral(e.clone()), vec![int(1), int(1), int(2)]);
    assert!(c.valid(&[], Term::eq(count(&c, &lit, int(1)), int(2))));
    assert!(c.valid(&[], Term::eq(count(&c, &lit, int(3)), int(0))));
    assert!(c.valid(&[], Term::eq(card(&c, &lit), int(3))));

    let u = c.op(MultisetUnion(e.clone()), vec![a.clone(), b.clone()]);
    let i = c.op(MultisetIntersection(e.clone()), vec![a.clone(), b.clone()]);
    let d = c.op(MultisetDifference(e.clone()), vec![a.clone(), b.clone()]);
    let sum = Term::add(vec![count(&c, &a, x.clone()), count(&c, &b, x.clone())]);
    assert!(c.valid(&[], Term::eq(count(&c, &u, x.clone()), sum)));
    assert!(c.valid(
        &[],
        Term::eq(card(&c, &u), Term::add(vec![card(&c, &a), card(&c, &b)]))
    ));
    assert!(c.valid(
        &[],
        Term::le(count(&c, &i, x.clone()), count(&c, &a, x.clone()))
    ));
    assert!(c.valid(
        &[],
        Term::le(count(&c, &d, x.clone()), count(&c, &a, x.clone()))
    ));
    assert!(c.valid(&[], Term::le(int(0), count(&c, &d, x.clone()))));
    assert!(c.valid(&[], Term::le(card(&c, &d), card(&c, &a))));
    let u_back = c.op(MultisetUnion(e.clone()), vec![b.clone(), a.clone()]);
    assert!(c.valid(&[], c.op(MultisetEqual(e.clone()), vec![u.clone(), u_back])));
    let sub = c.op(MultisetSubset(e.clone()), vec![a.clone(), b.clone()]);
    assert!(c.valid(
        &[sub],
        Term::le(count(&c, &a, x.clone()), count(&c, &b, x.clone()))
    ));
    assert!(!c.valid(
        &[],
        Term::eq(count(&c, &u, x.clone()), count(&c, &a, x.clone()))
    ));
    let empty = c.op(MultisetEmpty(e.clone()), vec![]);
    assert!(c.valid(&[], Term::eq(card(&c, &empty), int(0))));
    assert!(c.valid(
        &[Term::lt(int(0), count(&c, &a, x.clone()))],
        Term::lt(int(0), card(&c, &a))
    ));
}

#[test]
fn maps() {
    let mut c = Check::new(PROGRAM);
    let (k, v) = (Type::Int, Type::Bool);
    let m = c.constant("m", &Type::map(k.clone(), v.clone()));
    let (key, key2) = (c.constant("k", &Type::Int), c.constant("k2", &Type::Int));
    let val = c.constant("v", &Type::Bool);
    let lookup = |c: &Check, map: &Term, x: Term| {
        c.op(MapLookup(k.clone(), v.clone()), vec![map.clone(), x])
    };
    let has = |c: &Check, map: &Term, x: Term| {
        c.op(MapContainsKey(k.clone(), v.clone()), vec![x, map.clone()])
    };
    let card =
        |c: &Check, map: &Term| c.op(MapCardinality(k.clone(), v.clone()), vec![map.clone()]);

    let upd = c.op(
        MapUpdate(k.clone(), v.clone()),
        vec![m.clone(), key.clone(), val.clone()],
    );
    assert!(c.valid(&[], Term::eq(lookup(&c, &upd, key.clone()), val.clone())));
    let other = Term::not(Term::eq(key.clone(), key2.clone()));
    assert!(c.valid(
        &[other.clone()],
        Term::eq(lookup(&c, &upd, key2.clone()), lookup(&c, &m, key2.clone()))
    ));
    assert!(c.valid(
        &[other],
        Term::iff(has(&c, &upd, key2.clone()), has(&c, &m, key2.clone()))
    ));
    assert!(c.valid(&[], has(&c, &upd, key.clone())));
    assert!(!c.valid(&[], Term::eq(lookup(&c, &m, key.clone()), val.clone())));
    // A known key makes the range non-empty.
    let range = c.op(MapRange(k.clone(), v.clone()), vec![m.clone()]);
    let no_values = c.op(SetEmpty(v.clone()), vec![]);
    assert!(c.valid(
        &[has(&c, &m, key.clone())],
        Term::not(c.op(SetEqual(v.clone()), vec![range.clone(), no_values.clone()]))
    ));
    assert!(!c.valid(
        &[],
        Term::not(c.op(SetEqual(v.clone()), vec![range, no_values]))
    ));

    let empty = c.op(MapEmpty(k.clone(), v.clone()), vec![]);
    assert!(c.valid(&[], Term::eq(card(&c, &empty), int(0))));
    assert!(c.valid(&[], Term::not(has(&c, &empty, key.clone()))));
    let two = c.op(
        MapLiteral(k.clone(), v.clone()),
        vec![int(1), Term::tt(), int(2), Term::ff()],
    );
    assert!(c.valid(&[], Term::eq(card(&c, &two), int(2))));
    assert!(c.valid(&[], lookup(&c, &two, int(1))));
    assert!(c.valid(&[], Term::not(lookup(&c, &two, int(2)))));
    let same_key = c.op(
        MapLiteral(k.clone(), v.clone()),
        vec![int(1), Term::tt(), int(1), Term::ff()],
    );
    assert!(c.valid(&[], Term::eq(card(&c, &same_key), int(1))));
    assert!(c.valid(
        &[has(&c, &m, key.clone())],
        Term::eq(card(&c, &upd), card(&c, &m))
    ));
    let grows = Term::eq(card(&c, &upd), Term::add(vec![card(&c, &m), int(1)]));
    assert!(c.valid(&[Term::not(has(&c, &m, key.clone()))], grows));

    // Range and domain.
    let range = c.op(MapRange(k.clone(), v.clone()), vec![m.clone()]);
    let value_in_range = c.op(
        SetContains(v.clone()),
        vec![lookup(&c, &m, key.clone()), range],
    );
    assert!(c.valid(&[has(&c, &m, key.clone())], value_in_range));
    let dom = c.op(MapDomain(k.clone(), v.clone()), vec![upd.clone()]);
    let expected = c.op(
        SetUnion(k.clone()),
        vec![
            c.op(MapDomain(k.clone(), v.clone()), vec![m.clone()]),
            c.op(SetLiteral(k.clone()), vec![key.clone()]),
        ],
    );
    assert!(c.valid(&[], c.op(SetEqual(k.clone()), vec![dom, expected])));

    // Extensional equality.
    let twice = c.op(
        MapUpdate(k.clone(), v.clone()),
        vec![upd.clone(), key.clone(), val.clone()],
    );
    assert!(c.valid(
        &[],
        c.op(MapEqual(k.clone(), v.clone()), vec![twice, upd.clone()])
    ));
    assert!(!c.valid(
        &[],
        c.op(MapEqual(k.clone(), v.clone()), vec![upd.clone(), m.clone()])
    ));
}

/// Many unprovable goals over terms of every operation: E-matching must saturate (answer
/// `sat`/`unknown`) quickly, which it does not if the axioms contain a matching loop.
#[test]
fn no_matching_loops_on_unprovable_goals() {
    let mut c = Check::new(PROGRAM);
    let e = Type::Int;
    let (s, t) = (c.constant("s", &seq_int()), c.constant("t", &seq_int()));
    let (i, n) = (c.constant("i", &Type::Int), c.constant("n", &Type::Int));
    let st = c.op(SeqAppend(e.clone()), vec![s.clone(), t.clone()]);
    let take = c.op(SeqTake(e.clone()), vec![st.clone(), n.clone()]);
    let drop = c.op(SeqDrop(e.clone()), vec![take.clone(), i.clone()]);
    let upd = c.op(
        SeqUpdate(e.clone()),
        vec![drop.clone(), i.clone(), n.clone()],
    );
    let mut facts = vec![
        c.op(SeqContains(e.clone()), vec![n.clone(), upd.clone()]),
        c.op(SeqEqual(e.clone()), vec![upd.clone(), s.clone()]),
        Term::lt(int(3), c.op(SeqLength(e.clone()), vec![drop.clone()])),
        Term::eq(
            c.op(SeqIndex(e.clone()), vec![s.clone(), i.clone()]),
            c.op(SeqIndex(e.clone()), vec![t.clone(), n.clone()]),
        ),
    ];
    let set = Type::set(Type::Int);
    let (a, b) = (c.constant("A", &set), c.constant("B", &set));
    let u = c.op(SetUnion(e.clone()), vec![a.clone(), b.clone()]);
    let d = c.op(SetDifference(e.clone()), vec![u.clone(), a.clone()]);
    facts.push(c.op(SetSubset(e.clone()), vec![d.clone(), b.clone()]));
    facts.push(Term::lt(
        int(2),
        c.op(SetCardinality(e.clone()), vec![d.clone()]),
    ));
    facts.push(c.op(
        SetContains(e.clone()),
        vec![
            i.clone(),
            c.op(SetIntersection(e.clone()), vec![b.clone(), d]),
        ],
    ));
    let ms = Type::multiset(Type::Int);
    let (p, q) = (c.constant("P", &ms), c.constant("Q", &ms));
    let mu = c.op(
        MultisetDifference(e.clone()),
        vec![
            c.op(MultisetUnion(e.clone()), vec![p.clone(), q.clone()]),
            p.clone(),
        ],
    );
    facts.push(Term::lt(
        int(1),
        c.op(MultisetCount(e.clone()), vec![i.clone(), mu.clone()]),
    ));
    facts.push(c.op(MultisetSubset(e.clone()), vec![mu.clone(), q.clone()]));
    let (k, v) = (Type::Int, Type::Bool);
    let m = c.constant("m", &Type::map(k.clone(), v.clone()));
    let mu2 = c.op(
        MapUpdate(k.clone(), v.clone()),
        vec![m.clone(), i.clone(), Term::tt()],
    );
    facts.push(c.op(MapEqual(k.clone(), v.clone()), vec![mu2.clone(), m.clone()]));
    facts.push(c.op(
        SetContains(v.clone()),
        vec![Term::ff(), c.op(MapRange(k.clone(), v.clone()), vec![mu2])],
    ));
    // Goals that do not follow (the facts are consistent): each must come back, not
    // proved, within the time limit.
    let goals = [
        Term::ff(),
        Term::eq(i.clone(), n.clone()),
        Term::lt(c.op(SeqLength(e.clone()), vec![s.clone()]), int(2)),
        c.op(SetEqual(e.clone()), vec![a.clone(), b.clone()]),
        c.op(MultisetEqual(e.clone()), vec![p, q]),
        c.op(SeqContains(e.clone()), vec![int(7), t.clone()]),
    ];
    for goal in goals {
        assert!(!c.valid(&facts, goal));
    }
}

#[test]
fn collections_of_references_and_nested_collections() {
    let mut c = Check::new("method m(r: Seq[Ref], x: Ref, n: Seq[Set[Int]]) {}");
    let r = c.constant("r", &Type::seq(Type::Ref));
    let x = c.constant("x", &Type::Ref);
    let lit = c.op(SeqLiteral(Type::Ref), vec![x.clone(), c.th.null()]);
    let app = c.op(SeqAppend(Type::Ref), vec![r.clone(), lit]);
    assert!(c.valid(&[], c.op(SeqContains(Type::Ref), vec![c.th.null(), app])));
    let sets = Type::seq(Type::set(Type::Int));
    let n = c.constant("n", &sets);
    let first = c.op(SeqIndex(Type::set(Type::Int)), vec![n.clone(), int(0)]);
    let one = c.op(SetLiteral(Type::Int), vec![int(1)]);
    let upd = c.op(
        SeqUpdate(Type::set(Type::Int)),
        vec![n.clone(), int(0), one.clone()],
    );
    let nonempty = Term::lt(int(0), c.op(SeqLength(Type::set(Type::Int)), vec![n]));
    let got = c.op(SeqIndex(Type::set(Type::Int)), vec![upd, int(0)]);
    assert!(c.valid(&[nonempty], Term::eq(got, one)));
    assert!(!c.valid(&[], Term::eq(first, c.op(SetEmpty(Type::Int), vec![]))));
}

#[test]
fn take_and_drop_at_the_seam_of_an_append() {
    let mut c = Check::new(PROGRAM);
    let e = Type::Int;
    let s = c.constant("s", &seq_int());
    let t = c.constant("t", &seq_int());
    let st = c.op(SeqAppend(e.clone()), vec![s.clone(), t.clone()]);
    let seam = c.op(SeqLength(e.clone()), vec![s.clone()]);
    let take = c.op(SeqTake(e.clone()), vec![st.clone(), seam.clone()]);
    let drop = c.op(SeqDrop(e.clone()), vec![st.clone(), seam.clone()]);
    // The second part itself (SMT `=`, not only extensional equality); the first part
    // extensionally.
    assert!(c.valid(&[], Term::eq(drop.clone(), t.clone())));
    let first = c.op(SeqEqual(e.clone()), vec![take.clone(), s.clone()]);
    assert!(c.valid(&[], first));
    // Not the other part, and not away from the seam.
    let wrong = c.op(SeqEqual(e.clone()), vec![take, t.clone()]);
    assert!(!c.valid(&[], wrong));
    assert!(!c.valid(&[], Term::eq(drop, s.clone())));
    let off = c.op(SeqDrop(e.clone()), vec![st, int(1)]);
    assert!(!c.valid(&[], Term::eq(off, t)));
}

#[test]
fn sequence_literals_split_into_head_and_rest() {
    let mut c = Check::new(PROGRAM);
    let e = Type::Int;
    let lit =
        |c: &Check, xs: &[i64]| c.op(SeqLiteral(e.clone()), xs.iter().map(|x| int(*x)).collect());
    let seq_eq = |c: &Check, a: Term, b: Term| c.op(SeqEqual(e.clone()), vec![a, b]);
    let whole = lit(&c, &[1, 2, 3, 4]);
    let rest = c.op(SeqDrop(e.clone()), vec![whole.clone(), int(1)]);
    assert!(c.valid(&[], seq_eq(&c, rest.clone(), lit(&c, &[2, 3, 4]))));
    assert!(!c.valid(&[], seq_eq(&c, rest.clone(), lit(&c, &[1, 2, 3]))));
    let prefix = c.op(SeqTake(e.clone()), vec![whole.clone(), int(3)]);
    assert!(c.valid(&[], seq_eq(&c, prefix.clone(), lit(&c, &[1, 2, 3]))));
    assert!(!c.valid(&[], seq_eq(&c, prefix, lit(&c, &[2, 3, 4]))));
    let len = c.op(SeqLength(e.clone()), vec![whole.clone()]);
    assert!(c.valid(&[], Term::eq(len.clone(), int(4))));
    assert!(!c.valid(&[], Term::eq(len, int(3))));
    let last = c.op(SeqIndex(e.clone()), vec![whole.clone(), int(3)]);
    assert!(c.valid(&[], Term::eq(last, int(4))));
    // A literal equals the same elements appended in another grouping.
    let regrouped = c.op(
        SeqAppend(e.clone()),
        vec![lit(&c, &[1, 2]), lit(&c, &[3, 4])],
    );
    assert!(c.valid(&[], seq_eq(&c, whole.clone(), regrouped)));
    assert!(!c.valid(&[], seq_eq(&c, whole, lit(&c, &[1, 2, 4, 3]))));
}

/// A program's appends of literal pieces stay literals, so lengths and elements are
/// numbers and terms without any quantifier instantiation; other appends are left alone.
#[test]
fn appends_of_literals_stay_literals() {
    let mut c = Check::new(PROGRAM);
    let e = Type::Int;
    let lit =
        |c: &Check, xs: &[i64]| c.op(SeqLiteral(e.clone()), xs.iter().map(|x| int(*x)).collect());
    let appended = c.op(SeqAppend(e.clone()), vec![lit(&c, &[1, 2]), lit(&c, &[3])]);
    assert_eq!(appended, lit(&c, &[1, 2, 3]));
    assert_eq!(c.op(SeqLength(e.clone()), vec![appended.clone()]), int(3));
    assert_eq!(
        c.op(SeqIndex(e.clone()), vec![appended.clone(), int(2)]),
        int(3)
    );
    // Out of range, or at an unknown index: left to the axioms.
    let outside = c.op(SeqIndex(e.clone()), vec![appended.clone(), int(3)]);
    assert!(outside.as_int().is_none());
    let s = c.constant("s", &seq_int());
    let mixed = c.op(SeqAppend(e.clone()), vec![lit(&c, &[1]), s.clone()]);
    assert!(c
        .op(SeqLength(e.clone()), vec![mixed.clone()])
        .as_int()
        .is_none());
    assert_eq!(c.op(SeqAppend(e.clone()), vec![lit(&c, &[]), s.clone()]), s);
    // What the solver proves of the unfolded terms, it proves of the folded ones.
    let len = c.op(SeqLength(e.clone()), vec![mixed]);
    let one_more = Term::add(vec![c.op(SeqLength(e.clone()), vec![s]), int(1)]);
    assert!(c.valid(&[], Term::eq(len, one_more)));
}

/// A user axiom recursing on `s[0]` and `s[1..]` of a sequence of ADT values: both branches
/// of its conditional are terms for Z3, so unfolding it on a literal must not depend on
/// guessing the lengths of sequences it has not computed yet.
const FOREST: &str = "
adt Tree {
  Node(tag: Int, kids: Seq[Tree])
}
domain Flatten {
  function flat(t: Tree): Seq[Int]
  function flatAll(ts: Seq[Tree]): Seq[Int]
  axiom { forall ts: Seq[Tree] :: {flatAll(ts)}
    flatAll(ts) == (|ts| > 0 ? flat(ts[0]) ++ flatAll(ts[1..]) : Seq[Int]()) }
  axiom { forall t: Tree :: {flat(t)}
    flat(t) == (|t.kids| > 0 ? Seq(t.tag) ++ flatAll(t.kids) : Seq(t.tag)) }
}
method m(t: Tree) {}
";

#[test]
fn recursive_user_axioms_unfold_literals_quickly() {
    let mut c = Check::new(FOREST);
    let tree = Type::Adt("Tree".into(), vec![]);
    let node = |c: &Check, label: i64, kids: Vec<Term>| {
        let kids = c.op(SeqLiteral(tree.clone()), kids);
        let ctor = AdtConstructor {
            adt: "Tree".into(),
            constructor: "Node".into(),
            type_args: vec![],
        };
        c.op(ctor, vec![int(label), kids])
    };
    let flat = |c: &Check, t: Term| {
        let f = DomainFunction {
            domain: "Flatten".into(),
            function: "flat".into(),
            type_args: vec![],
        };
        c.op(f, vec![t])
    };
    let leaf = |c: &Check, label: i64| node(c, label, vec![]);
    let small = |c: &Check| node(c, 2, vec![leaf(c, 3)]);
    let kids = vec![small(&c), small(&c), leaf(&c, 4), leaf(&c, 5), leaf(&c, 6)];
    let root = node(&c, 1, kids);
    let lit =
        |c: &Check, xs: &[i64]| c.op(SeqLiteral(Type::Int), xs.iter().map(|x| int(*x)).collect());
    let flat_root = flat(&c, root);
    let expected = lit(&c, &[1, 2, 3, 2, 3, 4, 5, 6]);
    let goal = c.op(SeqEqual(Type::Int), vec![flat_root.clone(), expected]);
    assert!(c.valid(&[], goal));
    let wrong = lit(&c, &[1, 2, 3, 2, 3, 4, 6, 5]);
    let goal = c.op(SeqEqual(Type::Int), vec![flat_root, wrong]);
    assert!(!c.valid(&[], goal));
}
