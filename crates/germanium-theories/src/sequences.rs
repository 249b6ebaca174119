//! The theory of one sequence instance `Seq[E]`: a declared sort with functions for the
//! empty and singleton sequences, append, length, indexing, take/drop, update, membership,
//! extensional equality and (for `Seq[Int]`) integer ranges.
//!
//! Indexing is only specified in range, so the axioms have a model where sequences are
//! finite lists and out-of-range reads are arbitrary. Every quantifier has explicit
//! triggers; an instantiation only creates terms over strictly smaller sequence terms, or
//! `index` terms on sequence terms that already exist, so matching terminates.
//! `s[a..b]` is `drop(take(s, b), a)`.
//!
//! A literal `Seq(a, b, c)` is a list built from the front, `[a] ++ ([b] ++ [c])`: with the
//! drop-at-the-seam axiom, `lit[1..]` *is* the rest of the literal (an E-graph
//! equality, no arithmetic), and `lit[0]` is its head, so recursive definitions over
//! `s[0]` and `s[1..]` unfold a literal without case splits on unknown lengths. A literal
//! built from the back made Z3 reach such facts only through long chains of index
//! instances, and guess the conditions of user axioms first (adt/example_5.vpr).

use germanium_smt::{FunDecl, Sort, Term, TermKind};

use super::sorts::{bound, exists, forall, in_range, member_fun};

/// The longest literal an append folds into: a literal is a term as deep as it is long,
/// and terms are walked recursively (printing, dropping), so their depth stays bounded.
const MAX_FOLDED_LENGTH: usize = 1024;

/// Declarations of one `Seq[E]` instance.
#[derive(Debug)]
pub(crate) struct SeqTheory {
    name: String,
    pub sort: Sort,
    pub elem: Sort,
    pub empty: FunDecl,
    pub singleton: FunDecl,
    pub append: FunDecl,
    pub length: FunDecl,
    pub index: FunDecl,
    pub take: FunDecl,
    pub drop: FunDecl,
    pub update: FunDecl,
    pub contains: FunDecl,
    /// A second pattern of the membership axiom, made for every index term: `contains`
    /// itself would set off the axioms of membership in appends, takes and drops.
    pub contains_trigger: FunDecl,
    pub equal: FunDecl,
    /// `[a..b)`, only for `Seq[Int]`.
    pub range: Option<FunDecl>,
    /// Whether some quantifier of the program speaks about members of sequences of this
    /// sort: only then are index terms marked by `contains_trigger` (each mark is a term
    /// and an instance more, a cost where sequence axioms already make many index terms).
    pub members_quantified: bool,
}

impl SeqTheory {
    /// The theory of the sequence sort `sort` (named `name`) with elements of sort `elem`.
    pub fn new(name: &str, sort: Sort, elem: Sort) -> SeqTheory {
        let f = |op: &str, args: Vec<Sort>, result: Sort| member_fun(name, op, args, result);
        let s = sort.clone();
        let e = elem.clone();
        SeqTheory {
            name: name.to_string(),
            empty: f("empty", vec![], s.clone()),
            singleton: f("singleton", vec![e.clone()], s.clone()),
            append: f("append", vec![s.clone(), s.clone()], s.clone()),
            length: f("length", vec![s.clone()], Sort::Int),
            index: f("index", vec![s.clone(), Sort::Int], e.clone()),
            take: f("take", vec![s.clone(), Sort::Int], s.clone()),
            drop: f("drop", vec![s.clone(), Sort::Int], s.clone()),
            update: f("update", vec![s.clone(), Sort::Int, e.clone()], s.clone()),
            contains: f("contains", vec![s.clone(), e.clone()], Sort::Bool),
            contains_trigger: f("contains_trigger", vec![s.clone(), e.clone()], Sort::Bool),
            equal: f("equal", vec![s.clone(), s.clone()], Sort::Bool),
            range: (elem == Sort::Int).then(|| f("range", vec![Sort::Int, Sort::Int], s.clone())),
            members_quantified: false,
            sort,
            elem,
        }
    }

    pub fn declarations(&self) -> Vec<FunDecl> {
        let mut out = vec![
            self.empty.clone(),
            self.singleton.clone(),
            self.append.clone(),
            self.length.clone(),
            self.index.clone(),
            self.take.clone(),
            self.drop.clone(),
            self.update.clone(),
            self.contains.clone(),
            self.contains_trigger.clone(),
            self.equal.clone(),
        ];
        out.extend(self.range.clone());
        out
    }

    // ----- term builders ------------------------------------------------------------------

    pub fn empty(&self) -> Term {
        Term::constant(&self.empty)
    }
    pub fn singleton(&self, e: Term) -> Term {
        Term::app(&self.singleton, vec![e])
    }
    pub fn append(&self, s: Term, t: Term) -> Term {
        Term::app(&self.append, vec![s, t])
    }
    pub fn length(&self, s: Term) -> Term {
        Term::app(&self.length, vec![s])
    }
    pub fn index(&self, s: Term, i: Term) -> Term {
        Term::app(&self.index, vec![s, i])
    }

    /// [`SeqTheory::append`] of a program's values: appends of sequences built from
    /// literal pieces stay literals, so their lengths and elements are known without
    /// quantifier instantiation. (Not for axioms: `[e]` with `e` bound is a literal too.)
    pub fn fold_append(&self, s: Term, t: Term) -> Term {
        match (self.elements(&s), self.elements(&t)) {
            (Some(a), _) if a.is_empty() => t,
            (_, Some(b)) if b.is_empty() => s,
            (Some(mut a), Some(b)) if a.len() + b.len() <= MAX_FOLDED_LENGTH => {
                a.extend(b);
                self.literal(a)
            }
            _ => self.append(s, t),
        }
    }

    /// [`SeqTheory::length`] of a program's value, a number for a literal of at least two
    /// elements. (A singleton's length is one instantiation of its axiom away, and the term
    /// `|[e]|` triggers the axioms about `[e]` that the prover has always relied on.)
    pub fn fold_length(&self, s: Term) -> Term {
        match self.elements(&s) {
            Some(elems) if elems.len() >= 2 => Term::int(elems.len() as i64),
            _ => self.length(s),
        }
    }

    /// [`SeqTheory::index`] of a program's value, the element for a literal and an index
    /// in range.
    pub fn fold_index(&self, s: Term, i: Term) -> Term {
        let known = i.as_int().and_then(|i| i.as_i128()).and_then(|i| {
            let elems = self.elements(&s)?;
            usize::try_from(i).ok().and_then(|i| elems.get(i).cloned())
        });
        known.unwrap_or_else(|| self.index(s, i))
    }

    /// The elements of `s` when it is built from literal pieces: the empty sequence,
    /// singletons and appends of those.
    pub fn elements(&self, s: &Term) -> Option<Vec<Term>> {
        let mut out = Vec::new();
        // Left to right, without recursion (literals can be long).
        let mut pending = vec![s];
        while let Some(t) = pending.pop() {
            let TermKind::App(decl, args) = t.kind() else {
                return None;
            };
            if *decl == self.empty {
                continue;
            } else if *decl == self.singleton {
                out.push(args.first()?.clone());
            } else if *decl == self.append && args.len() == 2 {
                pending.push(&args[1]);
                pending.push(&args[0]);
            } else {
                return None;
            }
        }
        Some(out)
    }
    pub fn take(&self, s: Term, n: Term) -> Term {
        Term::app(&self.take, vec![s, n])
    }
    /// `drop(s, n)`; `s` itself for `n` = 0 (`s[0..b]` is `take(s, b)`: one term less for
    /// the solver's sequence axioms to relate).
    pub fn drop(&self, s: Term, n: Term) -> Term {
        if n.as_int().and_then(|n| n.as_i128()) == Some(0) {
            return s;
        }
        Term::app(&self.drop, vec![s, n])
    }
    pub fn update(&self, s: Term, i: Term, e: Term) -> Term {
        Term::app(&self.update, vec![s, i, e])
    }
    pub fn contains(&self, s: Term, e: Term) -> Term {
        Term::app(&self.contains, vec![s, e])
    }
    pub fn contains_trigger(&self, s: Term, e: Term) -> Term {
        Term::app(&self.contains_trigger, vec![s, e])
    }
    pub fn equal(&self, s: Term, t: Term) -> Term {
        Term::app(&self.equal, vec![s, t])
    }

    /// `Seq(e1, ..., en)`: `[e1] ++ ([e2] ++ (... ++ [en]))`, nested to the right (see the
    /// module documentation).
    pub fn literal(&self, elems: Vec<Term>) -> Term {
        elems
            .into_iter()
            .rev()
            .map(|e| self.singleton(e))
            .reduce(|rest, one| Term::app(&self.append, vec![one, rest]))
            .unwrap_or_else(|| self.empty())
    }

    // ----- axioms ---------------------------------------------------------------------------

    pub fn axioms(&self) -> Vec<Term> {
        let n = &self.name;
        let qid = |what: &str| format!("{n}.{what}");
        let (s, t) = (bound("s", &self.sort), bound("t", &self.sort));
        let (i, k) = (bound("i", &Sort::Int), bound("k", &Sort::Int));
        let (e, x) = (bound("e", &self.elem), bound("x", &self.elem));
        let len = |q: &Term| self.length(q.clone());
        let zero = || Term::int(0);
        let mut out = Vec::new();

        // Length is non-negative, and only the empty sequence has length 0.
        out.push(forall(
            &qid("length"),
            &[&s],
            vec![vec![len(&s)]],
            Term::and([
                Term::le(zero(), len(&s)),
                Term::implies(Term::eq(len(&s), zero()), Term::eq(s.clone(), self.empty())),
            ]),
        ));
        out.push(Term::eq(self.length(self.empty()), zero()));

        // Singleton: length 1, its element at 0.
        let one = self.singleton(e.clone());
        out.push(forall(
            &qid("singleton"),
            &[&e],
            vec![vec![one.clone()]],
            Term::and([
                Term::eq(self.length(one.clone()), Term::int(1)),
                Term::eq(self.index(one.clone(), zero()), e.clone()),
            ]),
        ));

        // Append: lengths add up; the empty sequence is neutral; indexing splits.
        let st = self.append(s.clone(), t.clone());
        out.push(forall(
            &qid("append_length"),
            &[&s, &t],
            vec![vec![len(&st)]],
            Term::eq(len(&st), Term::add(vec![len(&s), len(&t)])),
        ));
        let left = self.append(self.empty(), s.clone());
        out.push(forall(
            &qid("append_empty_left"),
            &[&s],
            vec![vec![left.clone()]],
            Term::eq(left, s.clone()),
        ));
        let right = self.append(s.clone(), self.empty());
        out.push(forall(
            &qid("append_empty_right"),
            &[&s],
            vec![vec![right.clone()]],
            Term::eq(right, s.clone()),
        ));
        let at = self.index(st.clone(), i.clone());
        out.push(forall(
            &qid("append_index"),
            &[&s, &t, &i],
            vec![
                vec![at.clone()],
                vec![self.index(s.clone(), i.clone()), st.clone()],
            ],
            Term::implies(
                in_range(zero(), &i, Term::add(vec![len(&s), len(&t)])),
                Term::eq(
                    at,
                    Term::ite(
                        Term::lt(i.clone(), len(&s)),
                        self.index(s.clone(), i.clone()),
                        self.index(t.clone(), Term::sub(i.clone(), len(&s))),
                    ),
                ),
            ),
        ));

        // Update: same length; the element at `i` replaced.
        let upd = self.update(s.clone(), i.clone(), e.clone());
        out.push(forall(
            &qid("update_length"),
            &[&s, &i, &e],
            vec![vec![len(&upd)]],
            Term::eq(len(&upd), len(&s)),
        ));
        let at = self.index(upd.clone(), k.clone());
        out.push(forall(
            &qid("update_index"),
            &[&s, &i, &e, &k],
            vec![vec![at.clone()]],
            Term::implies(
                in_range(zero(), &k, len(&s)),
                Term::eq(
                    at,
                    Term::ite(
                        Term::eq(i.clone(), k.clone()),
                        e.clone(),
                        self.index(s.clone(), k.clone()),
                    ),
                ),
            ),
        ));

        // Take: the first `k` elements (none for k <= 0, all for k >= |s|).
        let tk = self.take(s.clone(), k.clone());
        out.push(forall(
            &qid("take_length"),
            &[&s, &k],
            vec![vec![len(&tk)]],
            Term::eq(
                len(&tk),
                Term::ite(
                    Term::le(k.clone(), zero()),
                    zero(),
                    Term::ite(Term::le(k.clone(), len(&s)), k.clone(), len(&s)),
                ),
            ),
        ));
        out.push(forall(
            &qid("take_nonpositive"),
            &[&s, &k],
            vec![vec![tk.clone()]],
            Term::implies(
                Term::le(k.clone(), zero()),
                Term::eq(tk.clone(), self.empty()),
            ),
        ));
        let at = self.index(tk.clone(), i.clone());
        out.push(forall(
            &qid("take_index"),
            &[&s, &k, &i],
            vec![
                vec![at.clone()],
                vec![self.index(s.clone(), i.clone()), tk.clone()],
            ],
            Term::implies(
                Term::and([
                    in_range(zero(), &i, len(&s)),
                    Term::lt(i.clone(), k.clone()),
                ]),
                Term::eq(at, self.index(s.clone(), i.clone())),
            ),
        ));

        // Drop: all but the first `k` elements (all for k <= 0, none for k >= |s|).
        let dr = self.drop(s.clone(), k.clone());
        out.push(forall(
            &qid("drop_length"),
            &[&s, &k],
            vec![vec![len(&dr)]],
            Term::eq(
                len(&dr),
                Term::ite(
                    Term::le(k.clone(), zero()),
                    len(&s),
                    Term::ite(
                        Term::le(k.clone(), len(&s)),
                        Term::sub(len(&s), k.clone()),
                        zero(),
                    ),
                ),
            ),
        ));
        out.push(forall(
            &qid("drop_nonpositive"),
            &[&s, &k],
            vec![vec![dr.clone()]],
            Term::implies(Term::le(k.clone(), zero()), Term::eq(dr.clone(), s.clone())),
        ));
        let at = self.index(dr.clone(), i.clone());
        out.push(forall(
            &qid("drop_index"),
            &[&s, &k, &i],
            vec![vec![at.clone()]],
            Term::implies(
                Term::and([
                    Term::le(zero(), k.clone()),
                    in_range(zero(), &i, Term::sub(len(&s), k.clone())),
                ]),
                Term::eq(
                    at,
                    self.index(s.clone(), Term::add(vec![i.clone(), k.clone()])),
                ),
            ),
        ));
        // The other direction, from an element of `s` to its place in `drop(s, k)`.
        out.push(forall(
            &qid("drop_index_back"),
            &[&s, &k, &i],
            vec![vec![self.index(s.clone(), i.clone()), dr.clone()]],
            Term::implies(
                Term::and([
                    Term::le(zero(), k.clone()),
                    in_range(k.clone(), &i, len(&s)),
                ]),
                Term::eq(
                    self.index(dr.clone(), Term::sub(i.clone(), k.clone())),
                    self.index(s.clone(), i.clone()),
                ),
            ),
        ));

        // Drop at the seam of an append gives back its second part (one half of an axiom
        // of Dafny's prelude). It creates no sequence terms, only `|s|`. The take half is
        // left out: the equalities it adds between prefixes made Z3 lose its way on append
        // associativity (all/sequences/sequences.vpr), and extensionality proves
        // `(s ++ t)[..|s|] == s` anyway.
        let dr_st = self.drop(st.clone(), k.clone());
        out.push(forall(
            &qid("drop_append_seam"),
            &[&s, &t, &k],
            vec![vec![dr_st.clone()]],
            Term::implies(Term::eq(k.clone(), len(&s)), Term::eq(dr_st, t.clone())),
        ));

        // Membership: some in-range index holds the element (the inner trigger gives the
        // converse for every index term of `s`). Every in-range index term is also marked
        // by `contains_trigger`, an alternative pattern of the program's quantifiers over
        // members (see `Theories::with_membership_triggers`): the element of a witness `j`
        // of an assumed `exists` can then witness an `exists` over members. It is not a
        // pattern of these axioms: that loops through the membership axioms of appends,
        // takes and drops.
        let has = self.contains(s.clone(), x.clone());
        let witness = |lo: Term, hi: Term| {
            exists(
                &qid("contains_witness"),
                &[&i],
                vec![vec![self.index(s.clone(), i.clone())]],
                Term::and([
                    in_range(lo, &i, hi),
                    Term::eq(self.index(s.clone(), i.clone()), x.clone()),
                ]),
            )
        };
        out.push(forall(
            &qid("contains"),
            &[&s, &x],
            vec![vec![has.clone()]],
            Term::iff(has, witness(zero(), len(&s))),
        ));
        if self.members_quantified {
            let at_i = self.index(s.clone(), i.clone());
            out.push(forall(
                &qid("index_member"),
                &[&s, &i],
                vec![vec![at_i.clone()]],
                Term::implies(
                    in_range(zero(), &i, len(&s)),
                    self.contains_trigger(s.clone(), at_i),
                ),
            ));
        }
        let none = self.contains(self.empty(), x.clone());
        out.push(forall(
            &qid("contains_empty"),
            &[&x],
            vec![vec![none.clone()]],
            Term::not(none),
        ));
        let in_one = self.contains(self.singleton(e.clone()), x.clone());
        out.push(forall(
            &qid("contains_singleton"),
            &[&e, &x],
            vec![vec![in_one.clone()]],
            Term::iff(in_one, Term::eq(e.clone(), x.clone())),
        ));
        let in_st = self.contains(st.clone(), x.clone());
        out.push(forall(
            &qid("contains_append"),
            &[&s, &t, &x],
            vec![vec![in_st.clone()]],
            Term::iff(
                in_st,
                Term::or([
                    self.contains(s.clone(), x.clone()),
                    self.contains(t.clone(), x.clone()),
                ]),
            ),
        ));
        let in_tk = self.contains(tk.clone(), x.clone());
        out.push(forall(
            &qid("contains_take"),
            &[&s, &k, &x],
            vec![vec![in_tk.clone()]],
            Term::iff(
                in_tk,
                witness(
                    zero(),
                    Term::ite(Term::lt(k.clone(), len(&s)), k.clone(), len(&s)),
                ),
            ),
        ));
        let in_dr = self.contains(dr.clone(), x.clone());
        out.push(forall(
            &qid("contains_drop"),
            &[&s, &k, &x],
            vec![vec![in_dr.clone()]],
            Term::iff(
                in_dr,
                witness(
                    Term::ite(Term::lt(zero(), k.clone()), k.clone(), zero()),
                    len(&s),
                ),
            ),
        ));

        // Extensional equality.
        let eq = self.equal(s.clone(), t.clone());
        let pointwise = forall(
            &qid("equal_pointwise"),
            &[&i],
            vec![
                vec![self.index(s.clone(), i.clone())],
                vec![self.index(t.clone(), i.clone())],
            ],
            Term::implies(
                in_range(zero(), &i, len(&s)),
                Term::eq(
                    self.index(s.clone(), i.clone()),
                    self.index(t.clone(), i.clone()),
                ),
            ),
        );
        out.push(forall(
            &qid("equal"),
            &[&s, &t],
            vec![vec![eq.clone()]],
            Term::and([
                Term::iff(
                    eq.clone(),
                    Term::and([Term::eq(len(&s), len(&t)), pointwise]),
                ),
                Term::implies(eq, Term::eq(s.clone(), t.clone())),
            ]),
        ));

        // Literals are lists built from the front: two of them are equal exactly when their
        // heads are and their rests are. Matching stops at the shorter literal's end, and
        // unequal elements refute the equality without any index term existing (the
        // pointwise axiom needs one: `Seq(1, 2) != Seq(1, 3)` had none).
        let (a, b) = (bound("a", &self.elem), bound("b", &self.elem));
        let cons = |h: &Term, r: &Term| {
            Term::app(&self.append, vec![self.singleton(h.clone()), r.clone()])
        };
        let both = self.equal(cons(&a, &s), cons(&b, &t));
        out.push(forall(
            &qid("equal_cons"),
            &[&a, &s, &b, &t],
            vec![vec![both.clone()]],
            Term::iff(
                both,
                Term::and([
                    Term::eq(a.clone(), b.clone()),
                    self.equal(s.clone(), t.clone()),
                ]),
            ),
        ));

        // Integer ranges `[a..b)`.
        if let Some(range) = &self.range {
            let (a, b) = (bound("a", &Sort::Int), bound("b", &Sort::Int));
            let r = Term::app(range, vec![a.clone(), b.clone()]);
            out.push(forall(
                &qid("range_length"),
                &[&a, &b],
                vec![vec![len(&r)]],
                Term::eq(
                    len(&r),
                    Term::ite(
                        Term::lt(a.clone(), b.clone()),
                        Term::sub(b.clone(), a.clone()),
                        zero(),
                    ),
                ),
            ));
            let at = self.index(r.clone(), i.clone());
            out.push(forall(
                &qid("range_index"),
                &[&a, &b, &i],
                vec![vec![at.clone()]],
                Term::implies(
                    in_range(zero(), &i, Term::sub(b.clone(), a.clone())),
                    Term::eq(at, Term::add(vec![a.clone(), i.clone()])),
                ),
            ));
            let has = self.contains(r.clone(), i.clone());
            out.push(forall(
                &qid("range_contains"),
                &[&a, &b, &i],
                vec![vec![has.clone()]],
                Term::iff(has, in_range(a.clone(), &i, b.clone())),
            ));
        }
        out
    }
}
