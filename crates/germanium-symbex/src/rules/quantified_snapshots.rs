//! Snapshots of quantified permissions (Silicon's field value functions and predicate
//! snapshot maps, as snapshots): the part of a snapshot for one quantified access is a
//! snapshot `S` read through two functions of the resource, `look(S, rs)` (the value at a
//! location) and `dom(S, rs)` (whether the location is in the footprint).
//!
//! Reading one off a heap (a function's precondition at an application, a predicate body at
//! a fold) makes a fresh `S` whose domain is the image of the access's positive part and
//! whose values there are the heap's. Producing from `S` (an unfold, a definitional axiom)
//! gives a quantified chunk whose values are `look(S, rs)`. Two snapshots read at the same
//! assertion are equal when their domains and their values on them are (an extensionality
//! axiom per assertion, triggered by a mark on the snapshots read there): so a function's
//! value stays the same when nothing in its footprint changed.

use germanium_smt::{FunDecl, Sort, Symbol, Term};
use germanium_syntax::ast::{Expr, ExprKind};
use germanium_syntax::Span;

use crate::env::analysis::is_impure;
use crate::errors::ErrorContext;
use crate::resources;
use crate::rules::context::{Abort, Verifier, R};
use crate::rules::quantified::{location_vars, var_terms};
use crate::rules::quantified_parts::BodyParts;
use crate::rules::triggers;
use crate::state::{Heap, Resource, State};

impl<'e, 'a> Verifier<'e, 'a> {
    /// The sorts of the arguments of a location of `resource`.
    pub(crate) fn location_sorts(&mut self, resource: &Resource, span: Span) -> R<Vec<Sort>> {
        match resource {
            Resource::Field(_) => Ok(vec![self.env.null().sort().clone()]),
            Resource::Predicate(p) => {
                let mut sorts = Vec::new();
                for param in self.predicate_params(p) {
                    let ty = self.env.sem.var(param).ty.clone();
                    sorts.push(self.sort_of(&ty, span)?);
                }
                Ok(sorts)
            }
            Resource::Wand(key) => self.wand_hole_sorts(key, span),
        }
    }

    /// `look` and `dom` of `resource` (see the module documentation), declared.
    fn snapshot_map_decls(&mut self, resource: &Resource, span: Span) -> R<(FunDecl, FunDecl)> {
        let kind = match resource {
            Resource::Field(_) => "f",
            Resource::Predicate(_) => "p",
            Resource::Wand(_) => "w",
        };
        let mut sorts = vec![self.env.snap.sort.clone()];
        sorts.extend(self.location_sorts(resource, span)?);
        let value = self.resource_sort(resource, span)?;
        let name = resource.name();
        let look = FunDecl::new(
            Symbol::user(&format!("sx.qlook.{kind}.{name}")),
            sorts.clone(),
            value,
        );
        let dom = FunDecl::new(
            Symbol::user(&format!("sx.qdom.{kind}.{name}")),
            sorts,
            Sort::Bool,
        );
        self.ensure_declared(&look, span)?;
        self.ensure_declared(&dom, span)?;
        Ok((look, dom))
    }

    /// `look(s, rs)` and `dom(s, rs)`: the value at the locations `rs` in snapshot `s`, and
    /// whether they are in its footprint.
    pub(crate) fn snapshot_maps(
        &mut self,
        resource: &Resource,
        s: Term,
        rs: &[(Symbol, Sort)],
        span: Span,
    ) -> R<(Term, Term)> {
        let (look, dom) = self.snapshot_map_decls(resource, span)?;
        let mut args = vec![s];
        args.extend(var_terms(rs));
        Ok((Term::app(&look, args.clone()), Term::app(&dom, args)))
    }

    /// The mark of snapshots read at part `k` of the quantified assertion `e`.
    fn snapshot_mark(&mut self, e: &Expr, k: usize, span: Span) -> R<FunDecl> {
        let mark = FunDecl::new(
            Symbol::user(&format!("sx.qmark.{}.{k}", e.id.0)),
            vec![self.env.snap.sort.clone()],
            Sort::Bool,
        );
        self.ensure_declared(&mark, span)?;
        Ok(mark)
    }

    /// The snapshot of the quantified assertion `e` read from `heap` (one fresh part per
    /// access; see the module documentation). Fails where it cannot be read (an unknown
    /// snapshot is then used).
    pub(crate) fn quantified_snapshot(
        &mut self,
        st: &State,
        heap: &Heap,
        e: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        if self.modes.in_axiom {
            // Its facts would be premises of the axiom.
            return Err(Abort::Failed);
        }
        let accesses = self.quantified_accesses(st, heap, e, ctx)?;
        // Inside a quantifier's body the snapshot's facts are deferred (`assume_read`) and
        // the quantifier makes the snapshot a function of its variables where they mention
        // them (a footprint that depends on the variables has no one snapshot).
        let mut snapshot = None;
        for (k, access) in accesses.iter().enumerate() {
            let s = self.fresh("qsnap", self.env.snap.sort.clone(), e.span)?;
            let sorts = self.location_sorts(&access.resource, e.span)?;
            let rs = location_vars(self, &sorts);
            let r_terms = var_terms(&rs);
            let (look, dom) = self.snapshot_maps(&access.resource, s.clone(), &rs, e.span)?;
            let positive = access.to_vars(&access.positive());
            if let Some(positions) = access.identity() {
                let ([at_r], here) = access.projected([&positive], &positions, &r_terms);
                self.assume_read(
                    Term::forall(
                        rs.clone(),
                        Term::eq(dom.clone(), Term::and([at_r, here])),
                        vec![vec![dom.clone()]],
                    ),
                    e.span,
                )?;
            } else {
                // The domain is the image of the positive part, through inverse functions:
                // only where the locations are injective (else the snapshot is unknown).
                let injective = self.injectivity(access, e)?;
                if !self.prove(injective, e.span)? {
                    return Err(Abort::Failed);
                }
                let (held_vars, held) = self.held_map(access, e)?;
                let map = var_terms(&held_vars)
                    .into_iter()
                    .zip(r_terms.iter().cloned())
                    .collect();
                let held = triggers::substitute(&held.0, &map);
                self.assume_read(
                    Term::forall(
                        rs.clone(),
                        Term::eq(dom.clone(), crate::state::Permission(held).is_positive()),
                        vec![vec![dom.clone()]],
                    ),
                    e.span,
                )?;
            }
            // Its values are the heap's.
            let value = resources::value_of(heap, &access.resource, &r_terms, look.clone());
            self.assume_read(
                Term::forall(
                    rs.clone(),
                    Term::implies(dom.clone(), Term::eq(look.clone(), value)),
                    vec![vec![look.clone()]],
                ),
                e.span,
            )?;
            let mark = self.snapshot_mark(e, k, e.span)?;
            self.assume_read(Term::app(&mark, vec![s.clone()]), e.span)?;
            snapshot = self.env.snap.join(snapshot, Some(s));
        }
        snapshot.ok_or(Abort::Failed)
    }

    /// Assumes a fact about a snapshot being read; inside a quantifier's body it also
    /// outlives the body's scope (the snapshot may be used by the quantifier's term).
    pub(crate) fn assume_read(&mut self, fact: Term, span: Span) -> R<()> {
        if self.member.quantifier_depth > 0 {
            self.member.deferred.push(fact.clone());
        }
        self.assume(fact, span)
    }

    /// Declares the snapshot functions of the quantified assertions in functions'
    /// preconditions and predicates' bodies (where snapshots are read) and assumes their
    /// extensionality (at the outermost solver level).
    pub fn quantified_snapshot_preamble(&mut self) -> R<()> {
        let mut sites: Vec<&'a Expr> = Vec::new();
        let mut functions: Vec<_> = self.env.functions.values().copied().collect();
        functions.sort_by(|a, b| a.name.name.cmp(&b.name.name));
        for f in functions {
            for pre in &f.contract.requires {
                quantified_sites(self, pre, &mut sites);
            }
        }
        let mut predicates: Vec<_> = self.env.predicates.values().copied().collect();
        predicates.sort_by(|a, b| a.name.name.cmp(&b.name.name));
        for p in predicates {
            if let Some(body) = &p.body {
                quantified_sites(self, body, &mut sites);
            }
        }
        for e in sites {
            let ExprKind::Quantifier { body, .. } = &e.kind else {
                continue;
            };
            let parts = BodyParts::of(self.env.sem, body);
            for (k, part) in parts.accesses().enumerate() {
                let Some((resource, ..)) = self.access_parts(part.expr) else {
                    continue;
                };
                let mark = self.snapshot_mark(e, k, e.span)?;
                self.extensionality(&resource, &mark, e.span)?;
            }
        }
        Ok(())
    }

    /// Snapshots marked `mark` are equal when their domains and their values there are.
    fn extensionality(&mut self, resource: &Resource, mark: &FunDecl, span: Span) -> R<()> {
        let sort = self.env.snap.sort.clone();
        let s1 = (Symbol::user("sx.s1"), sort.clone());
        let s2 = (Symbol::user("sx.s2"), sort.clone());
        let sorts = self.location_sorts(resource, span)?;
        let rs: Vec<(Symbol, Sort)> = sorts
            .iter()
            .enumerate()
            .map(|(i, s)| (Symbol::user(&format!("sx.r{i}")), s.clone()))
            .collect();
        let t1 = Term::var(s1.0.clone(), sort.clone());
        let t2 = Term::var(s2.0.clone(), sort);
        let (look1, dom1) = self.snapshot_maps(resource, t1.clone(), &rs, span)?;
        let (look2, dom2) = self.snapshot_maps(resource, t2.clone(), &rs, span)?;
        let agree = Term::forall(
            rs,
            Term::and([
                Term::eq(dom1.clone(), dom2),
                Term::implies(dom1.clone(), Term::eq(look1, look2)),
            ]),
            vec![vec![dom1]],
        );
        let marks = vec![
            Term::app(mark, vec![t1.clone()]),
            Term::app(mark, vec![t2.clone()]),
        ];
        self.assume(
            Term::forall(
                vec![s1, s2],
                Term::implies(agree, Term::eq(t1, t2)),
                vec![marks],
            ),
            span,
        )
    }
}

/// The quantified assertions holding permissions in `a` (outside other quantifiers).
fn quantified_sites<'x>(v: &Verifier, a: &'x Expr, out: &mut Vec<&'x Expr>) {
    if !is_impure(v.env.sem, a) {
        return;
    }
    match &a.kind {
        ExprKind::Quantifier { .. } => out.push(a),
        ExprKind::Binary(_, l, r) => {
            quantified_sites(v, l, out);
            quantified_sites(v, r, out);
        }
        ExprKind::Cond(_, x, y) | ExprKind::InhaleExhale(x, y) => {
            quantified_sites(v, x, out);
            quantified_sites(v, y, out);
        }
        ExprKind::Let(_, _, body) | ExprKind::Annotated(_, body) => quantified_sites(v, body, out),
        _ => {}
    }
}
