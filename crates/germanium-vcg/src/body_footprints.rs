//! Quantified footprints: the quantified permissions of predicate bodies and of functions'
//! preconditions, by the quantifier's node. An instance's frame (see `frames`) records
//! the values its body held when it was folded; for `forall xs :: c(xs) ==> acc(e(xs).f, p)`
//! that is a *fingerprint* of the heap map of `f` over the footprint (as for a function's
//! quantified precondition, `quantified_frames`): `fp(args, H)`, equal for two maps equal on
//! the footprint. Its arguments are the parts of `c`, `e` and `p` that do not depend on the
//! variables (`s` in `x in s`, `this.nodes` in `this.nodes[i]`), evaluated where the frame
//! is built, so the footprint is a closed function of them and the axioms can speak of it.
//!
//! Values come back out through `values(args, frame)`, a heap map equal to the folded one on
//! the footprint:
//! `forall args, h, r :: in_footprint(args, r) ==> values(args, fp(args, h))[r] == h[r]`.
//! An unfold assumes its frame is the fingerprint of the heap it inhaled, so the values it
//! gives back are those the frame recorded. A function's frame function takes the same
//! fingerprints (`functions`).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use germanium_semantics::{CallTarget, Semantics, VarId};
use germanium_smt::{FunDecl, Sort, Symbol, Term};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind, NodeId, Program};

use crate::lower::{unsupported, Lower, Tables, R};
use crate::quantified_frames::QuantifiedFootprint;
use crate::snapshots::Snapshot;
use crate::state::State;

/// A quantified permission of a predicate body or a function's precondition, with its
/// vocabulary.
#[derive(Clone, Debug)]
pub struct BodyFootprint<'a> {
    pub footprint: QuantifiedFootprint<'a>,
    /// The parts of the quantifier that do not depend on its variables: the fingerprint's
    /// arguments, in this order.
    pub abstracted: Vec<&'a Expr>,
    /// Their sorts.
    pub sorts: Vec<Sort>,
    /// `values(args, frame)`: the heap map the frame recorded (read back by unfolds; for a
    /// function's footprint only its axiom's instances, which E-matching has found to help).
    pub values: FunDecl,
}

impl BodyFootprint<'_> {
    pub fn decls(&self) -> Vec<&FunDecl> {
        let mut out = self.footprint.decls();
        out.push(&self.values);
        out
    }
}

/// The quantified permissions of the program's predicate bodies and functions'
/// preconditions whose footprint can be framed, by the quantifier's node.
pub fn shapes<'a>(t: &Tables<'a>) -> HashMap<NodeId, BodyFootprint<'a>> {
    let mut out = HashMap::new();
    let mut names: Vec<&String> = t.predicates.keys().collect();
    names.sort();
    for name in names {
        let Some(body) = &t.predicates[name].predicate.body else {
            continue;
        };
        let mut foralls = Vec::new();
        quantified_parts(t.sem, body, &mut foralls);
        register(t, &format!("{name}%body"), foralls, &mut out);
    }
    for item in &t.program.items {
        let germanium_syntax::ast::ItemKind::Function(f) = &item.kind else {
            continue;
        };
        let mut foralls = Vec::new();
        for pre in &f.contract.requires {
            quantified_parts(t.sem, pre, &mut foralls);
        }
        register(t, &f.name.name, foralls, &mut out);
    }
    out
}

fn register<'a>(
    t: &Tables<'a>,
    name: &str,
    foralls: Vec<&'a Expr>,
    out: &mut HashMap<NodeId, BodyFootprint<'a>>,
) {
    for (k, forall) in foralls.into_iter().enumerate() {
        if let Some(b) = body_footprint(t, name, k, forall) {
            out.insert(forall.id, b);
        }
    }
}

/// The quantified permissions among the parts of an assertion a frame is made of.
fn quantified_parts<'a>(sem: &Semantics, a: &'a Expr, out: &mut Vec<&'a Expr>) {
    match &a.kind {
        ExprKind::Ascribed(x, _) | ExprKind::Annotated(_, x) | ExprKind::InhaleExhale(x, _) => {
            quantified_parts(sem, x, out)
        }
        ExprKind::Binary(BinaryOp::And, x, y) | ExprKind::Cond(_, x, y) => {
            quantified_parts(sem, x, out);
            quantified_parts(sem, y, out);
        }
        ExprKind::Binary(BinaryOp::Implies, _, x) => quantified_parts(sem, x, out),
        ExprKind::Quantifier { .. }
            if crate::quantified::quantified_permission(sem, a).is_some() =>
        {
            out.push(a)
        }
        _ => {}
    }
}

/// The field or predicate of a quantified permission whose footprint is a function of its
/// parts free of its variables, with those parts: one access, whose parts that name the
/// variables read no heap.
pub fn footprint_parts<'a>(
    program: &Program,
    sem: &Semantics,
    forall: &'a Expr,
) -> Option<(String, Vec<&'a Expr>)> {
    let (_, _, body) = crate::quantified::quantified_permission(sem, forall)?;
    let (_, reads, access) = crate::quantified::single_access(sem, body)?;
    let map = match crate::predicates::access(sem, access) {
        Some(pa) => pa.name,
        None => match &access.kind {
            ExprKind::Acc(loc, _) => match &loc.kind {
                ExprKind::FieldAccess(_, field) if sem.fields.contains_key(&field.name) => {
                    field.name.clone()
                }
                _ => return None,
            },
            _ => return None,
        },
    };
    let bound = bound_inside(sem, forall)?;
    let mut abstracted = Vec::new();
    for e in reads {
        if !abstract_parts(program, sem, e, &bound, &mut abstracted) {
            return None;
        }
    }
    Some((map, abstracted))
}

fn body_footprint<'a>(
    t: &Tables<'a>,
    name: &str,
    k: usize,
    forall: &'a Expr,
) -> Option<BodyFootprint<'a>> {
    let (map, abstracted) = footprint_parts(t.program, t.sem, forall)?;
    let mut sorts = Vec::new();
    for e in &abstracted {
        let ty = t.sem.type_of(e.id).filter(|ty| ty.is_ground())?;
        sorts.push(t.theories.sort(ty).ok()?);
    }
    let footprint = crate::quantified_frames::vocabulary(t, name, k, forall, &map, &sorts)?;
    let mut args = sorts.clone();
    args.push(t.frames.sort.clone());
    let values = FunDecl::new(
        Symbol::user(&format!("fun%{name}%values{k}")),
        args,
        footprint.heap.clone(),
    );
    Some(BodyFootprint {
        footprint,
        abstracted,
        sorts,
        values,
    })
}

/// The variables the quantifier binds; `None` where it nests another binder (whose
/// variables could not be told apart from the footprint's arguments here).
fn bound_inside(sem: &Semantics, forall: &Expr) -> Option<HashSet<VarId>> {
    let ExprKind::Quantifier { vars, body, .. } = &forall.kind else {
        return None;
    };
    let mut nested = false;
    germanium_semantics::visit::walk_expr(body, &mut |x| {
        nested |= matches!(
            x.kind,
            ExprKind::Quantifier { .. } | ExprKind::Let(..) | ExprKind::Forperm { .. }
        );
    });
    if nested {
        return None;
    }
    (0..vars.len())
        .map(|j| sem.binders.get(&(forall.id, j)).copied())
        .collect()
}

/// Collects the largest parts of `e` that name none of `bound` (literals aside); false where
/// a part naming them reads the heap (the footprint would not be a function of the
/// arguments).
fn abstract_parts<'a>(
    program: &Program,
    sem: &Semantics,
    e: &'a Expr,
    bound: &HashSet<VarId>,
    out: &mut Vec<&'a Expr>,
) -> bool {
    let mut names_bound = false;
    germanium_semantics::visit::walk_expr(e, &mut |x| {
        if let ExprKind::Ident(_) = x.kind {
            names_bound |= sem
                .idents
                .get(x.id.0 as usize)
                .copied()
                .flatten()
                .is_some_and(|v| bound.contains(&v));
        }
    });
    if !names_bound {
        if !matches!(
            e.kind,
            ExprKind::IntLit(_) | ExprKind::BoolLit(_) | ExprKind::Null | ExprKind::Wildcard
        ) {
            out.push(e);
        }
        return true;
    }
    let reads_heap = match &e.kind {
        ExprKind::FieldAccess(..)
        | ExprKind::Perm(..)
        | ExprKind::Forperm { .. }
        | ExprKind::Unfolding(..)
        | ExprKind::Old(..) => true,
        _ => match sem.call(e.id) {
            Some(CallTarget::Function(_)) => crate::quantified_frames::reads_heap(program, sem, e),
            Some(CallTarget::Predicate(_)) => true,
            _ => false,
        },
    };
    !reads_heap
        && germanium_semantics::visit::children(e)
            .into_iter()
            .all(|c| abstract_parts(program, sem, c, bound, out))
}

impl<'a> Lower<'_, 'a> {
    pub fn body_footprint(&self, forall: &Expr) -> R<BodyFootprint<'a>> {
        match self.t.body_footprints.get(&forall.id) {
            Some(b) => Ok(b.clone()),
            None => unsupported(forall.span, "this quantified footprint"),
        }
    }

    /// The fingerprint's arguments: its abstracted parts, read in `st`.
    pub fn footprint_args(&mut self, st: &State, b: &BodyFootprint<'_>) -> R<Vec<Term>> {
        let ctx = germanium_verifier::errors::ErrorContext::at_conjunct("internal", "");
        let reach = st.reach.clone();
        let mut args = Vec::new();
        for e in &b.abstracted {
            args.push(self.leniently(|l| l.expr(st, &reach, e, &ctx))?);
        }
        Ok(args)
    }

    /// The part of a frame a quantified permission of a predicate body records in `st`.
    pub fn quantified_frame(&mut self, st: &State, forall: &Expr) -> R<Term> {
        let Some(b) = self.t.body_footprints.get(&forall.id).cloned() else {
            // A footprint that is no function of the quantifier's parts: a value of its own,
            // so an unfold learns nothing of the values the fold recorded.
            return Ok(self.vc.fresh("qpframe", self.t.frames.sort.clone()));
        };
        let mut args = self.footprint_args(st, &b)?;
        let heap = self.heap_map(st, &b.footprint.map, forall)?;
        args.push(heap);
        Ok(Term::app(&b.footprint.fingerprint, args))
    }

    /// In a function's axiom: the locations of the quantified permission become readable,
    /// with the values `frame` recorded.
    pub fn open_quantified_frame(&mut self, st: &State, forall: &Expr, frame: Term) -> R<()> {
        let b = self.body_footprint(forall)?;
        let args = self.footprint_args(st, &b)?;
        let lowered = self.with_overrides(&b, &args, |l| {
            l.lower_quantified_footprint(st, &b.footprint, &args)
        })?;
        let Some(unheld) = self.t.frames.unheld(&b.footprint.map) else {
            return unsupported(forall.span, "this field");
        };
        let mut values_args = args;
        values_args.push(frame);
        let heap = Term::app(&b.values, values_args);
        let r = Term::var(Symbol::user("r%fp"), b.footprint.witness.result().clone());
        let held = lowered.at(&r);
        let value = Term::ite(held.clone(), Term::select(heap.clone(), r.clone()), unheld);
        if let Some(s) = self.snapshot.as_mut() {
            s.push(Snapshot {
                map: b.footprint.map.clone(),
                held,
                at: r,
                value,
                heap: Some(heap),
            });
        }
        Ok(())
    }

    /// Lowers with the abstracted parts of `b` standing for `args`.
    pub fn with_overrides<T>(
        &mut self,
        b: &BodyFootprint<'_>,
        args: &[Term],
        f: impl FnOnce(&mut Self) -> R<T>,
    ) -> R<T> {
        let overrides: HashMap<NodeId, Term> = b
            .abstracted
            .iter()
            .map(|e| e.id)
            .zip(args.iter().cloned())
            .collect();
        let overrides = Some(Rc::new(overrides));
        self.with_modes(
            |m| {
                m.overrides = overrides;
                m.lenient = true;
            },
            f,
        )
    }

    /// The axioms of every quantified footprint, over its arguments: the inverse's choice,
    /// fingerprints equal for maps equal on the footprint, and the values a fingerprint
    /// records.
    pub fn body_footprint_axioms(&mut self) -> Vec<Term> {
        let mut ids: Vec<&NodeId> = self.t.body_footprints.keys().collect();
        ids.sort_by_key(|id| id.0);
        let mut out = Vec::new();
        // Nothing is read of the heap: the footprint's parts that read it are arguments.
        let st = State {
            store: Default::default(),
            memory: crate::state::Memory::empty(&mut self.vc, self.t),
            labels: Default::default(),
            reach: Term::tt(),
        };
        for id in ids {
            let b = self.t.body_footprints[id].clone();
            let vars: Vec<(Symbol, Sort)> = b
                .sorts
                .iter()
                .enumerate()
                .map(|(j, s)| (Symbol::user(&format!("a{j}%fp")), s.clone()))
                .collect();
            let args: Vec<Term> = vars
                .iter()
                .map(|(s, sort)| Term::var(s.clone(), sort.clone()))
                .collect();
            let q = &b.footprint;
            let Ok(lowered) =
                self.with_overrides(&b, &args, |l| l.lower_quantified_footprint(&st, q, &args))
            else {
                continue;
            };
            out.extend(self.fingerprint_axioms(q, &lowered, &vars));
            // The values a fingerprint records.
            let h = (Symbol::user("h%fp"), q.heap.clone());
            let r = (Symbol::user("r%fp"), q.witness.result().clone());
            let (th, tr) = (
                Term::var(h.0.clone(), h.1.clone()),
                Term::var(r.0.clone(), r.1.clone()),
            );
            let mut fp_args = args.clone();
            fp_args.push(th.clone());
            let fp = Term::app(&q.fingerprint, fp_args);
            let mut values_args = args;
            values_args.push(fp.clone());
            let recorded = Term::select(Term::app(&b.values, values_args), tr.clone());
            let read = Term::select(th, tr.clone());
            let mut all = vars;
            all.extend([h, r]);
            out.push(Term::forall(
                all,
                Term::implies(lowered.at(&tr), Term::eq(recorded.clone(), read.clone())),
                vec![vec![fp, read], vec![recorded]],
            ));
        }
        out
    }
}
