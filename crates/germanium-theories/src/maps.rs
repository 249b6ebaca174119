//! The theory of one map instance `Map[K, V]`: a declared sort with the empty map, lookup,
//! update, the key domain as a `Set[K]`, the value range as a `Set[V]` and extensional
//! equality. Cardinality is the cardinality of the domain, and key membership is
//! membership in the domain, so both reuse the set theory.
//!
//! Lookups are specified for every key: inside the domain by the map, outside it by a
//! default that updates keep. This has a model (finite maps with one default per key) and
//! keeps the update axiom free of a domain guard. The domain of an update is the old domain
//! with the key added, which hands cardinality and membership to the set axioms.

use germanium_smt::{FunDecl, Sort, Term};

use super::sets::SetTheory;
use super::sorts::{bound, exists, forall, member_fun};

/// Declarations of one `Map[K, V]` instance.
#[derive(Debug)]
pub(crate) struct MapTheory {
    name: String,
    pub sort: Sort,
    pub key: Sort,
    pub value: Sort,
    pub empty: FunDecl,
    pub lookup: FunDecl,
    pub update: FunDecl,
    pub domain: FunDecl,
    pub range: FunDecl,
    pub equal: FunDecl,
}

impl MapTheory {
    /// `keys` and `values` are the sorts of `Set[K]` and `Set[V]`.
    pub fn new(
        name: &str,
        sort: Sort,
        key: Sort,
        value: Sort,
        keys: Sort,
        values: Sort,
    ) -> MapTheory {
        let f = |op: &str, args: Vec<Sort>, result: Sort| member_fun(name, op, args, result);
        let m = sort.clone();
        MapTheory {
            name: name.to_string(),
            empty: f("empty", vec![], m.clone()),
            lookup: f("lookup", vec![m.clone(), key.clone()], value.clone()),
            update: f(
                "update",
                vec![m.clone(), key.clone(), value.clone()],
                m.clone(),
            ),
            domain: f("domain", vec![m.clone()], keys),
            range: f("range", vec![m.clone()], values),
            equal: f("equal", vec![m.clone(), m.clone()], Sort::Bool),
            sort,
            key,
            value,
        }
    }

    pub fn declarations(&self) -> Vec<FunDecl> {
        vec![
            self.empty.clone(),
            self.lookup.clone(),
            self.update.clone(),
            self.domain.clone(),
            self.range.clone(),
            self.equal.clone(),
        ]
    }

    // ----- term builders ------------------------------------------------------------------

    pub fn empty(&self) -> Term {
        Term::constant(&self.empty)
    }
    pub fn lookup(&self, m: Term, k: Term) -> Term {
        Term::app(&self.lookup, vec![m, k])
    }
    pub fn update(&self, m: Term, k: Term, v: Term) -> Term {
        Term::app(&self.update, vec![m, k, v])
    }
    pub fn domain(&self, m: Term) -> Term {
        Term::app(&self.domain, vec![m])
    }
    pub fn range(&self, m: Term) -> Term {
        Term::app(&self.range, vec![m])
    }
    pub fn equal(&self, a: Term, b: Term) -> Term {
        Term::app(&self.equal, vec![a, b])
    }

    /// `Map(k1 := v1, ...)` from `[k1, v1, k2, v2, ...]`: updates of the empty map, left to
    /// right (a later binding of the same key wins). `None` for an odd number of terms.
    pub fn literal(&self, flat: Vec<Term>) -> Option<Term> {
        if flat.len() & 1 == 1 {
            return None;
        }
        let mut map = self.empty();
        let mut items = flat.into_iter();
        while let (Some(k), Some(v)) = (items.next(), items.next()) {
            map = self.update(map, k, v);
        }
        Some(map)
    }

    // ----- axioms ---------------------------------------------------------------------------

    /// `keys` and `values` are the theories of `Set[K]` and `Set[V]`.
    pub fn axioms(&self, keys: &SetTheory, values: &SetTheory) -> Vec<Term> {
        let n = &self.name;
        let qid = |what: &str| format!("{n}.{what}");
        let (m, m2) = (bound("m", &self.sort), bound("m2", &self.sort));
        let (k, k2) = (bound("k", &self.key), bound("k2", &self.key));
        let v = bound("v", &self.value);
        let dom = |map: &Term| self.domain(map.clone());
        let mut out = Vec::new();

        // The empty map: no keys, no values; and the only map without keys.
        out.push(Term::eq(self.domain(self.empty()), keys.empty()));
        out.push(Term::eq(self.range(self.empty()), values.empty()));
        out.push(forall(
            &qid("empty_domain"),
            &[&m],
            vec![vec![dom(&m)]],
            Term::implies(
                Term::eq(dom(&m), keys.empty()),
                Term::eq(m.clone(), self.empty()),
            ),
        ));

        // Update: the key joins the domain; lookups see the new value at that key only.
        let upd = self.update(m.clone(), k.clone(), v.clone());
        out.push(forall(
            &qid("update_domain"),
            &[&m, &k, &v],
            vec![vec![dom(&upd)]],
            Term::eq(dom(&upd), keys.add(dom(&m), k.clone())),
        ));
        let at = self.lookup(upd.clone(), k2.clone());
        out.push(forall(
            &qid("update_lookup"),
            &[&m, &k, &v, &k2],
            vec![vec![at.clone()]],
            Term::eq(
                at,
                Term::ite(
                    Term::eq(k.clone(), k2.clone()),
                    v.clone(),
                    self.lookup(m.clone(), k2.clone()),
                ),
            ),
        ));
        out.push(forall(
            &qid("update_new"),
            &[&m, &k, &v],
            vec![vec![upd.clone()]],
            Term::eq(self.lookup(upd.clone(), k.clone()), v.clone()),
        ));

        // Range: the values at keys of the domain (the inner triggers give the converse for
        // every lookup of a key known to be in the domain).
        let in_range = values.contains(v.clone(), self.range(m.clone()));
        let has_key = keys.contains(k.clone(), dom(&m));
        out.push(forall(
            &qid("range"),
            &[&m, &v],
            vec![vec![in_range.clone()]],
            Term::iff(
                in_range,
                exists(
                    &qid("range_witness"),
                    &[&k],
                    vec![
                        vec![has_key.clone()],
                        vec![self.lookup(m.clone(), k.clone())],
                    ],
                    Term::and([
                        has_key.clone(),
                        Term::eq(self.lookup(m.clone(), k.clone()), v.clone()),
                    ]),
                ),
            ),
        ));
        // A map with a key has a non-empty range. (The witness direction above only fires on
        // a range membership term. Stating `m[k] in range(m)` here instead would loop: each
        // range membership makes a fresh witness key, whose lookup is a new membership term.
        // This form makes no new key or lookup term.)
        out.push(forall(
            &qid("range_nonempty"),
            &[&m, &k],
            vec![vec![has_key.clone()]],
            Term::implies(
                has_key.clone(),
                Term::not(values.equal(self.range(m.clone()), values.empty())),
            ),
        ));

        // Extensional equality.
        let eq = self.equal(m.clone(), m2.clone());
        out.push(forall(
            &qid("equal"),
            &[&m, &m2],
            vec![vec![eq.clone()]],
            Term::and([
                Term::iff(
                    eq.clone(),
                    Term::and([
                        keys.equal(dom(&m), dom(&m2)),
                        forall(
                            &qid("equal_values"),
                            &[&k],
                            vec![
                                vec![self.lookup(m.clone(), k.clone())],
                                vec![self.lookup(m2.clone(), k.clone())],
                            ],
                            Term::implies(
                                has_key,
                                Term::eq(
                                    self.lookup(m.clone(), k.clone()),
                                    self.lookup(m2.clone(), k.clone()),
                                ),
                            ),
                        ),
                    ]),
                ),
                Term::implies(eq, Term::eq(m.clone(), m2.clone())),
            ]),
        ));
        out
    }
}
