//! Predicate instances are never nested inside themselves (Viper's predicates are least
//! fixpoints: every instance unfolds finitely). As in Carbon, a relation
//! `inside(P(a), v, Q(b), w)` records that instance `P(a)` with snapshot `v` directly or
//! transitively holds `Q(b)` with snapshot `w`; it is transitive, and no instance is inside
//! itself, whatever the two snapshots.
//!
//! Why both snapshots may differ: a fact is recorded when an unfold produces a body (the
//! nested instances' snapshots are parts of the outer one) or when a fold consumes one (the
//! consumed instances are in the heap the new one is built from). In one heap an instance
//! has one snapshot, and a snapshot determines the instance's whole unfolding (its values
//! decide every condition of the body), so a chain of facts from different times that came
//! back to the same instance would describe a cyclic, infinite unfolding.
//!
//! Instances are values of the sort `sx.Inst`, built by one injective function per
//! predicate; a tag keeps the functions of different predicates apart.

use std::collections::HashMap;

use germanium_smt::{FunDecl, Sort, Symbol, Term};
use germanium_syntax::Span;

use crate::rules::context::{Verifier, R};

/// An instance found in a body a fold reads: its `sx.Inst` term, its snapshot, and the
/// condition under which it is held.
pub type FoundInstance = (Term, Term, Term);

/// A snapshot read for a fold, with the instances found in it.
pub type FoldSnapshot = (Option<Term>, Vec<FoundInstance>);

/// What the nesting facts need while a fold or unfold runs.
#[derive(Default)]
pub struct Nesting {
    /// The instance (its `sx.Inst` term) and snapshot whose body an unfold is producing,
    /// innermost last.
    /// (`None`: the predicate has no instance function).
    pub enclosing: Vec<Option<(Term, Term)>>,
    /// While a fold reads its body's snapshot: the nested instances found, with their
    /// snapshots and the condition under which they are held.
    pub found: Option<Vec<FoundInstance>>,
    /// The instance function of each predicate (`None`: an argument sort is unsupported).
    instances: HashMap<String, Option<FunDecl>>,
}

fn inst_sort() -> Sort {
    Sort::Uninterpreted(Symbol::user("sx.Inst"))
}

fn inside_decl(snap: &Sort) -> FunDecl {
    FunDecl::new(
        Symbol::user("sx.inside"),
        vec![inst_sort(), snap.clone(), inst_sort(), snap.clone()],
        Sort::Bool,
    )
}

fn tag_decl() -> FunDecl {
    FunDecl::new(Symbol::user("sx.inst_tag"), vec![inst_sort()], Sort::Int)
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// Declares the instance sort, the relation and its axioms, and each predicate's
    /// instance function (at the outermost solver level).
    pub fn nesting_preamble(&mut self) -> Result<(), germanium_smt::SolverError> {
        let snap = self.env.snap.sort.clone();
        self.decider.declare_sort(&Symbol::user("sx.Inst"))?;
        let inside = inside_decl(&snap);
        let tag = tag_decl();
        for d in [&inside, &tag] {
            self.decider.declare(d)?;
        }
        let var = |n: &str, s: &Sort| (Symbol::user(n), s.clone());
        let (p, v, q, w, r, u) = (
            var("sx.p", &inst_sort()),
            var("sx.v", &snap),
            var("sx.q", &inst_sort()),
            var("sx.w", &snap),
            var("sx.r", &inst_sort()),
            var("sx.u", &snap),
        );
        let t = |x: &(Symbol, Sort)| Term::var(x.0.clone(), x.1.clone());
        let pq = Term::app(&inside, vec![t(&p), t(&v), t(&q), t(&w)]);
        let qr = Term::app(&inside, vec![t(&q), t(&w), t(&r), t(&u)]);
        let pr = Term::app(&inside, vec![t(&p), t(&v), t(&r), t(&u)]);
        let pp = Term::app(&inside, vec![t(&p), t(&v), t(&p), t(&w)]);
        let transitive = Term::forall(
            vec![p.clone(), v.clone(), q, w.clone(), r, u],
            Term::implies(Term::and([pq.clone(), qr.clone()]), pr),
            vec![vec![pq, qr]],
        );
        self.decider.assume(transitive)?;
        let irreflexive = Term::forall(vec![p, v, w], Term::not(pp.clone()), vec![vec![pp]]);
        self.decider.assume(irreflexive)?;
        let mut names: Vec<String> = self.env.predicates.keys().cloned().collect();
        names.sort();
        for (k, name) in names.into_iter().enumerate() {
            let decl = self.instance_decl(&name, k as i64)?;
            self.nesting.instances.insert(name, decl);
        }
        Ok(())
    }

    /// `sx.inst.P` with its inverses (injectivity) and tag `k`.
    fn instance_decl(
        &mut self,
        name: &str,
        k: i64,
    ) -> Result<Option<FunDecl>, germanium_smt::SolverError> {
        // A body with inhale-exhale parts is folded from one reading and unfolded into
        // another: no facts for it.
        let mixed = self
            .env
            .predicates
            .get(name)
            .and_then(|p| p.body.as_ref())
            .is_some_and(crate::env::analysis::has_inhale_exhale);
        if mixed {
            return Ok(None);
        }
        let params = self.predicate_params(name);
        let mut sorts = Vec::new();
        for p in &params {
            match self.env.sort_of(&self.env.sem.var(*p).ty) {
                Ok(s) => sorts.push(s),
                Err(_) => return Ok(None),
            }
        }
        let decl = FunDecl::new(
            Symbol::user(&format!("sx.inst.{name}")),
            sorts.clone(),
            inst_sort(),
        );
        self.decider.declare(&decl)?;
        let vars: Vec<(Symbol, Sort)> = sorts
            .iter()
            .enumerate()
            .map(|(i, s)| (Symbol::user(&format!("sx.a{i}")), s.clone()))
            .collect();
        let args: Vec<Term> = vars
            .iter()
            .map(|(n, s)| Term::var(n.clone(), s.clone()))
            .collect();
        let inst = Term::app(&decl, args.clone());
        let mut facts = vec![Term::eq(
            Term::app(&tag_decl(), vec![inst.clone()]),
            Term::int(k),
        )];
        for (i, (a, s)) in args.iter().zip(&sorts).enumerate() {
            let inverse = FunDecl::new(
                Symbol::user(&format!("sx.inst.{name}.{i}")),
                vec![inst_sort()],
                s.clone(),
            );
            self.decider.declare(&inverse)?;
            facts.push(Term::eq(Term::app(&inverse, vec![inst.clone()]), a.clone()));
        }
        let axiom = if vars.is_empty() {
            Term::and(facts)
        } else {
            Term::forall(vars, Term::and(facts), vec![vec![inst]])
        };
        self.decider.assume(axiom)?;
        Ok(Some(decl))
    }

    /// The `sx.Inst` term of `name(args)`, if the predicate has one.
    pub fn instance(&self, name: &str, args: &[Term]) -> Option<Term> {
        let decl = self.nesting.instances.get(name)?.as_ref()?;
        Some(Term::app(decl, args.to_vec()))
    }

    /// Assumes that `inner` (with snapshot `inner_snap`) is inside `outer` (with
    /// `outer_snap`) when `held` and the current guards hold.
    pub fn assume_inside(
        &mut self,
        outer: (Term, Term),
        inner: (Term, Term),
        held: Term,
        span: Span,
    ) -> R<()> {
        let inside = inside_decl(&self.env.snap.sort);
        let fact = Term::app(&inside, vec![outer.0, outer.1, inner.0, inner.1]);
        self.assume_guarded(Term::implies(held, fact), span)
    }

    /// Inside an unfold's body: records that the produced instance `name(args)` (with
    /// snapshot `snap`, held when `held`) is inside the instance being unfolded.
    pub fn record_unfolded_nesting(
        &mut self,
        name: &str,
        args: &[Term],
        snap: &Term,
        held: Term,
        span: Span,
    ) -> R<()> {
        if self.modes.in_axiom {
            return Ok(());
        }
        let (Some(Some(outer)), Some(inner)) = (
            self.nesting.enclosing.last().cloned(),
            self.instance(name, args),
        ) else {
            return Ok(());
        };
        self.assume_inside(outer, (inner, snap.clone()), held, span)
    }
}
