//! Quantified permissions (seed 000 §6): `forall xs :: c(xs) ==> acc(e(xs).f, p(xs))` and
//! `forall xs :: c(xs) ==> acc(P(e1(xs), ..), p(xs))`, inhaled and exhaled over the
//! permission maps.
//!
//! The body is lowered at fresh constants for `xs` (its definedness checked for arbitrary
//! values, and exhale's amounts checked there, where a model names the location that lacks
//! permission), then closed over bound variables. Locations are checked injective where the
//! amount is positive; an inverse `inv` of the location (a fresh function, or the variable
//! itself, or a predicate location's argument) defines the new permission map pointwise:
//! at `r`, the amount at `xs = inv(r)` is added or taken where `c(inv(r))` and
//! `e(inv(r)) == r`. That definition is right for every `inv`; the path assumes
//! `c(xs) && p(xs) > 0 ==> inv(e(xs)) == xs` only after injectivity was checked, so a
//! failed check cannot make it contradictory.

use std::collections::HashMap;

use germanium_smt::{FunDecl, Quantifier, QuantifierKind, Symbol, Term, TermKind};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind, NodeId, QuantifierKind as ViperKind};
use germanium_verifier::errors::{ErrorContext, Reason};

use crate::assertions::{is_impure, Held, Taking};
use crate::binders::Bound;
use crate::lower::{unsupported, Lower, R};
use crate::state::State;

/// What leads to a part of a quantified assertion's body, outermost first.
pub type Conditions<'x> = Vec<Step<'x>>;

/// One step towards a part of a quantified assertion's body.
#[derive(Clone, Copy, Debug)]
pub enum Step<'x> {
    /// A condition, and whether it holds there.
    Holds(&'x Expr, bool),
    /// A `let` whose variable the part may name.
    Let(&'x Expr),
}

/// One part of a quantified assertion's body, under its conditions.
enum Part<'x> {
    Access(Conditions<'x>, &'x Expr),
    Pure(Conditions<'x>, &'x Expr),
}

/// The parts of `body`, in order; an error for what is not a permission or a pure fact.
fn parts<'x>(
    sem: &germanium_semantics::Semantics,
    body: &'x Expr,
    conds: &mut Conditions<'x>,
    out: &mut Vec<Part<'x>>,
) -> R<()> {
    if !is_impure(sem, body) {
        out.push(Part::Pure(conds.clone(), body));
        return Ok(());
    }
    if crate::predicates::access(sem, body).is_some() {
        out.push(Part::Access(conds.clone(), body));
        return Ok(());
    }
    let mut under = |step: Step<'x>, x: &'x Expr, out: &mut Vec<Part<'x>>| {
        conds.push(step);
        let r = parts(sem, x, conds, out);
        conds.pop();
        r
    };
    match &body.kind {
        ExprKind::Acc(loc, _) if matches!(loc.kind, ExprKind::FieldAccess(..)) => {
            out.push(Part::Access(conds.clone(), body));
            Ok(())
        }
        ExprKind::Binary(BinaryOp::Wand, ..) => {
            out.push(Part::Access(conds.clone(), body));
            Ok(())
        }
        ExprKind::Ascribed(x, _) | ExprKind::Annotated(_, x) => parts(sem, x, conds, out),
        ExprKind::Binary(BinaryOp::And, x, y) => {
            parts(sem, x, conds, out)?;
            parts(sem, y, conds, out)
        }
        ExprKind::Binary(BinaryOp::Implies, c, x) => under(Step::Holds(c, true), x, out),
        ExprKind::Cond(c, x, y) => {
            under(Step::Holds(c, true), x, out)?;
            under(Step::Holds(c, false), y, out)
        }
        ExprKind::Let(_, _, x) => under(Step::Let(body), x, out),
        _ => unsupported(
            body.span,
            "this quantified permission (wands, nested quantifiers)",
        ),
    }
}

/// A quantified assertion: its variables and body, if `a` is one that holds permissions.
pub fn quantified_permission<'x>(
    sem: &germanium_semantics::Semantics,
    a: &'x Expr,
) -> Option<(usize, &'x [germanium_syntax::ast::Trigger], &'x Expr)> {
    match &a.kind {
        ExprKind::Quantifier {
            kind: ViperKind::Forall,
            vars,
            triggers,
            body,
        } if is_impure(sem, body) => Some((vars.len(), triggers, body)),
        _ => None,
    }
}

/// The one access of a quantified assertion's body that has nothing else (no pure part,
/// no `let`), with the expressions it reads besides the heap location: its conditions,
/// receiver or arguments, amount.
pub fn single_access<'x>(
    sem: &germanium_semantics::Semantics,
    body: &'x Expr,
) -> Option<(Conditions<'x>, Vec<&'x Expr>, &'x Expr)> {
    let mut list = Vec::new();
    parts(sem, body, &mut Vec::new(), &mut list).ok()?;
    let [Part::Access(conds, access)] = list.as_slice() else {
        return None;
    };
    let mut reads = Vec::new();
    for step in conds {
        match step {
            Step::Holds(c, _) => reads.push(*c),
            Step::Let(_) => return None,
        }
    }
    if let Some(pa) = crate::predicates::access(sem, access) {
        reads.extend(pa.args.iter());
        reads.extend(pa.amount);
    } else if let ExprKind::Acc(loc, amount) = &access.kind {
        if let ExprKind::FieldAccess(rcv, _) = &loc.kind {
            reads.push(rcv);
        }
        reads.extend(amount.as_deref());
    } else if matches!(access.kind, ExprKind::Binary(BinaryOp::Wand, ..)) {
        reads.extend(crate::wands::shape_of(sem, access).1);
    }
    Some((conds.clone(), reads, access))
}

/// One access of a quantified assertion, lowered at the binder's constants.
struct Lowered<'x> {
    /// Where the access applies: the path and the conditions.
    guard: Term,
    cond: Term,
    held: Held<'x>,
}

/// The inverse of a quantified access's locations: per variable, its value at location
/// `r`.
pub(crate) enum Inverse {
    /// The location is the variable (or a predicate location of the variables): nothing to
    /// assume.
    Direct(Vec<Term>),
    /// Fresh functions, one per variable.
    Functions(Vec<FunDecl>),
}

impl Inverse {
    pub fn at(&self, r: &Term) -> Vec<Term> {
        match self {
            Inverse::Direct(values) => {
                let v = Term::var(Symbol::user("r%q"), r.sort().clone());
                let map: HashMap<Term, Term> = [(v, r.clone())].into_iter().collect();
                values
                    .iter()
                    .map(|t| germanium_smt::substitute(t, &map))
                    .collect()
            }
            Inverse::Functions(decls) => decls
                .iter()
                .map(|d| Term::app(d, vec![r.clone()]))
                .collect(),
        }
    }
}

impl Lower<'_, '_> {
    /// The parts of the quantified permission `a`, its variables' constants and the
    /// program's triggers (read in `st`).
    fn open_quantified<'x>(
        &mut self,
        st: &State,
        a: &'x Expr,
        ctx: &ErrorContext,
    ) -> R<(Vec<Part<'x>>, Bound, Vec<Vec<Term>>)> {
        let Some((count, triggers, body)) = quantified_permission(self.t.sem, a) else {
            return unsupported(a.span, "this assertion");
        };
        let mut list = Vec::new();
        parts(self.t.sem, body, &mut Vec::new(), &mut list)?;
        let bound = self.bind(a.id, count, a.span, "q")?;
        let patterns = self.user_patterns(st, &bound, triggers, ctx)?;
        Ok((list, bound, patterns))
    }

    /// Inhales the quantified permission `a` into `st`.
    pub fn inhale_quantified(&mut self, st: &mut State, a: &Expr, ctx: &ErrorContext) -> R<()> {
        let (list, bound, patterns) = self.open_quantified(st, a, ctx)?;
        let mut conditions = HashMap::new();
        for part in &list {
            match part {
                Part::Pure(conds, x) => {
                    let mut inner = bound.state(st);
                    let (guard, cond) =
                        self.part_conditions(&mut inner, conds, &mut conditions, ctx)?;
                    let t = self.binding(|l| l.expr(&inner, &guard, x, ctx))?;
                    let fact = self.closed_fact(&bound, &patterns, Term::implies(cond, t));
                    st.reach = self.vc.assume(&st.reach, fact);
                }
                Part::Access(conds, x) => {
                    let lowered = self.lower_access(st, &bound, conds, x, &mut conditions, ctx)?;
                    self.inhale_access(st, a.id, &bound, &patterns, lowered, ctx)?;
                }
            }
        }
        Ok(())
    }

    /// Takes the quantified permission `a` from `st`, reading `eval` (see `take`).
    pub(crate) fn take_quantified(
        &mut self,
        eval: &State,
        st: &mut State,
        a: &Expr,
        ctx: &ErrorContext,
        how: Taking,
    ) -> R<()> {
        let (list, bound, patterns) = self.open_quantified(eval, a, ctx)?;
        let mut conditions = HashMap::new();
        for part in &list {
            let view = State {
                reach: st.reach.clone(),
                ..eval.clone()
            };
            match part {
                Part::Pure(conds, x) => {
                    let mut inner = bound.state(&view);
                    let (guard, cond) =
                        self.part_conditions(&mut inner, conds, &mut conditions, ctx)?;
                    let t = self.binding(|l| l.expr(&inner, &guard, x, ctx))?;
                    if how == Taking::Checked {
                        self.check(&guard, t.clone(), ctx, Reason::AssertionFalse, x);
                    }
                    let fact = self.closed_fact(&bound, &patterns, Term::implies(cond, t));
                    st.reach = self.vc.assume(&st.reach, fact);
                }
                Part::Access(conds, x) => {
                    let lowered =
                        self.lower_access(&view, &bound, conds, x, &mut conditions, ctx)?;
                    self.take_access(st, a.id, &bound, &patterns, lowered, ctx, how)?;
                }
            }
        }
        Ok(())
    }

    /// A trigger's term: the expression's, or for a predicate instance or a wand its
    /// location (which every statement about the resource mentions).
    pub fn trigger_term(
        &mut self,
        st: &State,
        guard: &Term,
        x: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        if matches!(x.kind, ExprKind::Binary(BinaryOp::Wand, ..)) {
            return Ok(self.wand_location(st, guard, x, ctx)?.1);
        }
        match crate::predicates::access(self.t.sem, x) {
            Some(pa) => self.instance(st, guard, &pa, ctx),
            None => self.expr(st, guard, x, ctx),
        }
    }

    fn binding<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        self.with_modes(|m| m.binding = true, f)
    }

    /// The program's triggers, closed (nothing of them is checked).
    fn user_patterns(
        &mut self,
        st: &State,
        bound: &Bound,
        triggers: &[germanium_syntax::ast::Trigger],
        ctx: &ErrorContext,
    ) -> R<Vec<Vec<Term>>> {
        let inner = bound.state(st);
        let reach = st.reach.clone();
        let checks = self.vc.checks.len();
        let mut out = Vec::new();
        for set in triggers {
            let mut terms = Vec::new();
            for x in &set.exprs {
                let t =
                    self.binding(|l| l.leniently(|l| l.trigger_term(&inner, &reach, x, ctx)))?;
                terms.push(bound.close(&t));
            }
            out.push(terms);
        }
        self.vc.checks.truncate(checks);
        Ok(out)
    }

    /// The guard (path and conditions) and the conditions of a part, at the constants, with
    /// its `let`s bound in `inner`; each condition and value lowered once (its definedness
    /// checked once) for all parts.
    fn part_conditions(
        &mut self,
        inner: &mut State,
        conds: &[Step<'_>],
        lowered: &mut HashMap<NodeId, Term>,
        ctx: &ErrorContext,
    ) -> R<(Term, Term)> {
        let mut guard = inner.reach.clone();
        let mut all = Vec::new();
        for step in conds {
            // A condition is read whole (it may itself be a pure `let`); a `let` step reads
            // its value.
            let (x, read) = match *step {
                Step::Holds(c, _) => (c, c),
                Step::Let(l) => match &l.kind {
                    ExprKind::Let(_, value, _) => (l, &**value),
                    _ => return unsupported(l.span, "this `let`"),
                },
            };
            let t = match lowered.get(&x.id) {
                Some(t) => t.clone(),
                None => {
                    let t = self.binding(|l| l.expr(inner, &guard, read, ctx))?;
                    lowered.insert(x.id, t.clone());
                    t
                }
            };
            match *step {
                Step::Holds(_, holds) => {
                    let t = if holds { t } else { Term::not(t) };
                    guard = Term::and([guard, t.clone()]);
                    all.push(t);
                }
                Step::Let(x) => {
                    let Some(var) = self.t.sem.binders.get(&(x.id, 0)).copied() else {
                        return unsupported(x.span, "this `let`");
                    };
                    inner.store.insert(var, t);
                }
            }
        }
        Ok((guard, Term::and(all)))
    }

    /// `forall xs :: {patterns} fact` of a fact at the constants (the patterns inferred
    /// where the program gives none).
    fn closed_fact(&self, bound: &Bound, patterns: &[Vec<Term>], fact: Term) -> Term {
        let body = bound.close(&fact);
        let triggers = if patterns.is_empty() {
            germanium_theories::infer_triggers(&bound.variables(), &body)
        } else {
            patterns.to_vec()
        };
        germanium_smt::alpha_normal(Quantifier {
            kind: QuantifierKind::Forall,
            vars: bound.vars.clone(),
            body,
            triggers,
            qid: None,
            weight: None,
        })
    }

    /// The access `x` under its conditions, at the constants, read in `st`.
    fn lower_access<'x>(
        &mut self,
        st: &State,
        bound: &Bound,
        conds: &[Step<'_>],
        x: &'x Expr,
        conditions: &mut HashMap<NodeId, Term>,
        ctx: &ErrorContext,
    ) -> R<Lowered<'x>> {
        let mut inner = bound.state(st);
        let (guard, cond) = self.part_conditions(&mut inner, conds, conditions, ctx)?;
        inner.reach = guard.clone();
        let Some(mut held) = self.binding(|l| l.resource(&inner, x, ctx))? else {
            return unsupported(x.span, "this quantified permission");
        };
        // Inside a function every amount is a wildcard.
        if !held.wildcard && self.verifying_function.is_some() {
            held.wildcard = true;
        }
        Ok(Lowered { guard, cond, held })
    }

    /// The condition of `access` (a part of `body`) and its location and amount, at the
    /// constants of `bound`, in `st`, nothing checked.
    pub(crate) fn access_at_constants(
        &mut self,
        st: &State,
        bound: &Bound,
        conds: &[Step<'_>],
        access: &Expr,
        ctx: &ErrorContext,
    ) -> R<(Term, (Term, Term))> {
        let checks = self.vc.checks.len();
        let lowered = self.lower_access(st, bound, conds, access, &mut HashMap::new(), ctx);
        self.vc.checks.truncate(checks);
        let lowered = lowered?;
        Ok((lowered.cond, (lowered.held.index, lowered.held.amount)))
    }

    /// Checks that some permission is held of every location of the quantified permission
    /// `a` where its amount is positive, and its pure parts (a function's precondition
    /// where it is applied: nothing is taken).
    pub fn check_quantified_held(
        &mut self,
        st: &State,
        guard: &Term,
        a: &Expr,
        ctx: &ErrorContext,
    ) -> R<()> {
        let Some((count, _, body)) = quantified_permission(self.t.sem, a) else {
            return unsupported(a.span, "this assertion");
        };
        let mut list = Vec::new();
        parts(self.t.sem, body, &mut Vec::new(), &mut list)?;
        let bound = self.bind(a.id, count, a.span, "q")?;
        let view = State {
            reach: guard.clone(),
            ..st.clone()
        };
        let mut conditions = HashMap::new();
        for part in &list {
            match part {
                Part::Pure(conds, x) => {
                    let mut inner = bound.state(&view);
                    let (guard, _) =
                        self.part_conditions(&mut inner, conds, &mut conditions, ctx)?;
                    let t = self.binding(|l| l.expr(&inner, &guard, x, ctx))?;
                    self.check_ending_path(&guard, t, ctx, Reason::AssertionFalse, x);
                }
                Part::Access(conds, x) => {
                    let lowered =
                        self.lower_access(&view, &bound, conds, x, &mut conditions, ctx)?;
                    let Some(mask) = st.memory.mask.get(&lowered.held.map) else {
                        return unsupported(x.span, "this resource");
                    };
                    let zero = Term::real(0, 1);
                    let held = Term::implies(
                        Term::gt(lowered.held.amount.clone(), zero.clone()),
                        Term::gt(Term::select(mask.clone(), lowered.held.index.clone()), zero),
                    );
                    let missing = self.missing_reason(&lowered.held.map);
                    self.check(&lowered.guard, held, ctx, missing, lowered.held.node);
                }
            }
        }
        Ok(())
    }

    /// Checks the amounts non-negative and the locations injective where the amount is
    /// positive; the inverse of the locations, and the fact the path may assume of it once
    /// what depends on injectivity no longer does (it is contradictory where the check
    /// fails).
    fn checked_inverse(
        &mut self,
        st: &mut State,
        node: NodeId,
        bound: &Bound,
        patterns: &[Vec<Term>],
        lowered: &Lowered<'_>,
        ctx: &ErrorContext,
    ) -> R<(Inverse, Option<Term>)> {
        let Lowered { guard, cond, held } = lowered;
        let zero = Term::real(0, 1);
        if !held.wildcard {
            let offending = held.amount_node.unwrap_or(held.node);
            let nonnegative = Term::ge(held.amount.clone(), zero.clone());
            self.check(
                guard,
                nonnegative,
                ctx,
                Reason::NegativePermission,
                offending,
            );
        }
        let index = bound.close(&held.index);
        if let Some(direct) = self.direct_inverse(bound, &held.map, &index) {
            return Ok((direct, None));
        }
        let applies = bound.close(&Term::and([
            cond.clone(),
            Term::gt(held.amount.clone(), zero),
        ]));
        let others = bound.other_constants(self);
        let same = Term::and(
            bound
                .constants
                .iter()
                .zip(&others)
                .map(|(a, b)| Term::eq(a.clone(), b.clone())),
        );
        let injective = Term::implies(
            Term::and([
                bound.at(&applies, &bound.constants),
                bound.at(&applies, &others),
                Term::eq(
                    bound.at(&index, &bound.constants),
                    bound.at(&index, &others),
                ),
            ]),
            same,
        );
        self.check(&st.reach, injective, ctx, Reason::NotInjective, held.node);
        let index_sort = index.sort().clone();
        let decls: Vec<FunDecl> = bound
            .vars
            .iter()
            .map(|(s, sort)| {
                let name = self.vc.fresh_name(&format!("inv%{s}"));
                FunDecl::new(name, vec![index_sort.clone()], sort.clone())
            })
            .collect();
        self.vc.decls.extend(decls.iter().cloned());
        let inverse = Inverse::Functions(decls);
        let back = Term::and(
            inverse
                .at(&index)
                .into_iter()
                .zip(bound.variables())
                .map(|(a, v)| Term::eq(a, v)),
        );
        let mut triggers = patterns.to_vec();
        if triggers.is_empty() {
            triggers = germanium_theories::infer_triggers(&bound.variables(), &index);
        }
        if let Some(TermKind::App(decl, _)) = inverse.at(&index).first().map(|t| t.kind().clone()) {
            triggers.push(vec![Term::app(&decl, vec![index.clone()])]);
        }
        let fact = Term::quantifier(Quantifier {
            kind: QuantifierKind::Forall,
            vars: bound.vars.clone(),
            body: Term::implies(applies, back),
            triggers,
            qid: Some(Symbol::user(&format!("qp-inverse-{}", node.0))),
            weight: None,
        });
        Ok((inverse, Some(fact)))
    }

    /// An inverse that needs no function: the location is the (one) variable, or a
    /// predicate location whose arguments include every variable.
    pub(crate) fn direct_inverse(&self, bound: &Bound, map: &str, index: &Term) -> Option<Inverse> {
        let vars = bound.variables();
        let r = Term::var(Symbol::user("r%q"), index.sort().clone());
        if vars.len() == 1 && *index == vars[0] {
            return Some(Inverse::Direct(vec![r]));
        }
        let shape = self.t.predicates.get(map)?;
        let TermKind::App(_, args) = index.kind() else {
            return None;
        };
        let bound_vars: std::collections::HashSet<Term> = vars.iter().cloned().collect();
        // An argument that is the variable, or the variable plus or minus a term free of the
        // variables: the variable is that argument of the location, less or plus the term.
        let solved = |arg: &Term, v: &Term, at: Term| -> Option<Term> {
            if arg == v {
                return Some(at);
            }
            let TermKind::Op(op, xs) = arg.kind() else {
                return None;
            };
            let free = |t: &Term| !t.mentions_any(&bound_vars);
            match (op, xs.as_slice()) {
                (germanium_smt::Op::Add, [x, c]) | (germanium_smt::Op::Add, [c, x])
                    if x == v && free(c) =>
                {
                    Some(Term::sub(at, c.clone()))
                }
                (germanium_smt::Op::Sub, [x, c]) if x == v && free(c) => {
                    Some(Term::add(vec![at, c.clone()]))
                }
                _ => None,
            }
        };
        let values = vars
            .iter()
            .map(|v| {
                args.iter().enumerate().find_map(|(i, a)| {
                    solved(a, v, Term::app(&shape.arguments[i], vec![r.clone()]))
                })
            })
            .collect::<Option<Vec<Term>>>()?;
        Some(Inverse::Direct(values))
    }

    /// Where location `r` is one of the access's, and the amount there, through `inverse`.
    fn at_location(
        &self,
        bound: &Bound,
        lowered: &Lowered<'_>,
        inverse: &Inverse,
        r: &Term,
    ) -> (Term, Term) {
        let xs = inverse.at(r);
        let cond = bound.at(&bound.close(&lowered.cond), &xs);
        let index = bound.at(&bound.close(&lowered.held.index), &xs);
        let amount = bound.at(&bound.close(&lowered.held.amount), &xs);
        (Term::and([cond, Term::eq(index, r.clone())]), amount)
    }

    /// A fresh permission map for `map`, the old one changed by `delta` where `inside` (both
    /// over the location variable `r`).
    fn pointwise_mask(
        &mut self,
        st: &mut State,
        map: &str,
        r: &Term,
        inside: Term,
        changed: Term,
    ) -> Term {
        let old = st.memory.mask[map].clone();
        let new = self.vc.fresh(&format!("M_{map}"), old.sort().clone());
        let TermKind::Var(symbol) = r.kind() else {
            unreachable!("the location is a variable");
        };
        let at = Term::select(new.clone(), r.clone());
        self.vc.fact(Term::forall(
            vec![(symbol.clone(), r.sort().clone())],
            Term::eq(
                at.clone(),
                Term::ite(inside, changed, Term::select(old, r.clone())),
            ),
            vec![vec![at]],
        ));
        st.memory.mask.insert(map.to_string(), new.clone());
        new
    }

    fn inhale_access(
        &mut self,
        st: &mut State,
        node: NodeId,
        bound: &Bound,
        patterns: &[Vec<Term>],
        mut lowered: Lowered<'_>,
        ctx: &ErrorContext,
    ) -> R<()> {
        if self.modes.wildcard_amounts || lowered.held.wildcard {
            // Some positive amount where one is written, the same everywhere.
            let some = self.some_amount();
            let positive = Term::gt(lowered.held.amount.clone(), Term::real(0, 1));
            lowered.held.amount = Term::ite(positive, some, Term::real(0, 1));
            lowered.held.wildcard = true;
        }
        let (inverse, fact) = self.checked_inverse(st, node, bound, patterns, &lowered, ctx)?;
        if let Some(fact) = fact {
            st.reach = self.vc.assume(&st.reach, fact);
        }
        let map = lowered.held.map.clone();
        let index_sort = lowered.held.index.sort().clone();
        let r = Term::var(Symbol::user(&format!("r%i{}", node.0)), index_sort);
        let (inside, amount) = self.at_location(bound, &lowered, &inverse, &r);
        let old = st.memory.mask[&map].clone();
        let before = Term::select(old.clone(), r.clone());
        let added = Term::add(vec![before.clone(), amount.clone()]);
        let new = self.pointwise_mask(st, &map, &r, inside.clone(), added);
        if self.modes.fresh_on_inhale {
            self.fresh_where_newly_held(st, &map, &old);
        }
        if map.starts_with("wand%") {
            // The instances added have footprints of their own, not another's frame.
            let old_heap = st.memory.heap[&map].clone();
            let heap = self.vc.fresh(&format!("H_{map}"), old_heap.sort().clone());
            let TermKind::Var(symbol) = r.kind() else {
                unreachable!("the location is a variable");
            };
            let read = Term::select(heap.clone(), r.clone());
            let added = Term::and([inside.clone(), Term::gt(amount.clone(), Term::real(0, 1))]);
            self.vc.fact(Term::forall(
                vec![(symbol.clone(), r.sort().clone())],
                Term::implies(
                    Term::not(added),
                    Term::eq(read.clone(), Term::select(old_heap, r.clone())),
                ),
                vec![vec![read]],
            ));
            st.memory.heap.insert(map.clone(), heap);
        }
        if lowered.held.field {
            // Null is not a location held, and none is held beyond a whole permission.
            let null = self.t.theories.null();
            let at_null: HashMap<Term, Term> = [(r.clone(), null)].into_iter().collect();
            let somewhere = Term::and([inside, Term::gt(amount, Term::real(0, 1))]);
            let not_null = Term::not(germanium_smt::substitute(&somewhere, &at_null));
            let TermKind::Var(symbol) = r.kind() else {
                unreachable!("the location is a variable");
            };
            let at = Term::select(new, r.clone());
            let at_most_whole = Term::forall(
                vec![(symbol.clone(), r.sort().clone())],
                Term::le(at.clone(), Term::real(1, 1)),
                vec![vec![at]],
            );
            st.reach = self
                .vc
                .assume(&st.reach, Term::and([not_null, at_most_whole]));
        }
        Ok(())
    }

    /// A fresh heap map for `map`, equal to the old one where `held` holds some permission
    /// (the locations an unfolded body adds get values of their own).
    fn fresh_where_newly_held(&mut self, st: &mut State, map: &str, held: &Term) {
        let mut memory = st.memory.clone();
        memory.mask.insert(map.to_string(), held.clone());
        self.fresh_where_unheld(&mut memory, map);
        st.memory
            .heap
            .insert(map.to_string(), memory.heap[map].clone());
    }

    #[allow(clippy::too_many_arguments)]
    fn take_access(
        &mut self,
        st: &mut State,
        node: NodeId,
        bound: &Bound,
        patterns: &[Vec<Term>],
        lowered: Lowered<'_>,
        ctx: &ErrorContext,
        how: Taking,
    ) -> R<()> {
        // Amounts and injectivity first, then what is held (as the symbolic engine); the
        // inverse's fact is assumed after that check (where injectivity fails it is
        // contradictory, and the missing permission is reported too, as by Carbon), except
        // inside a package, where what is held includes what the inverse lets it extract.
        let (inverse, mut fact) = self.checked_inverse(st, node, bound, patterns, &lowered, ctx)?;
        let map = lowered.held.map.clone();
        let zero = Term::real(0, 1);
        let packaging = how == Taking::Checked && !lowered.held.wildcard && self.in_package();
        if packaging {
            if let Some(fact) = fact.take() {
                st.reach = self.vc.assume(&st.reach, fact);
            }
            // Inside a package: what the witnesses miss at each location comes from the
            // state around.
            let index_sort = lowered.held.index.sort().clone();
            let r = Term::var(Symbol::user(&format!("r%x{}", node.0)), index_sort);
            let (inside, amount) = self.at_location(bound, &lowered, &inverse, &r);
            self.extract_pointwise(st, &map, &r, inside, amount, lowered.held.field)?;
        }
        let mask = st.memory.mask[&map].clone();
        let held_here = Term::select(mask.clone(), lowered.held.index.clone());
        let p = lowered.held.amount.clone();
        let enough = if lowered.held.wildcard {
            Term::implies(
                Term::gt(p.clone(), zero.clone()),
                Term::gt(held_here, zero.clone()),
            )
        } else {
            Term::implies(
                Term::gt(p.clone(), zero.clone()),
                Term::ge(held_here, p.clone()),
            )
        };
        match how {
            Taking::Checked => {
                let missing = self.missing_reason(&lowered.held.map);
                self.check(&lowered.guard, enough, ctx, missing, lowered.held.node);
            }
            Taking::Assumed => {
                let fact =
                    self.closed_fact(bound, patterns, Term::implies(lowered.cond.clone(), enough));
                st.reach = self.vc.assume(&st.reach, fact);
            }
        }
        if let Some(fact) = fact {
            st.reach = self.vc.assume(&st.reach, fact);
        }
        let index_sort = lowered.held.index.sort().clone();
        let r = Term::var(Symbol::user(&format!("r%e{}", node.0)), index_sort.clone());
        let (inside, amount) = self.at_location(bound, &lowered, &inverse, &r);
        let before = Term::select(mask.clone(), r.clone());
        let taken = if lowered.held.wildcard {
            // Some of what is held at each location, less than all of it.
            let decl = FunDecl::new(
                self.vc.fresh_name(&format!("wildcard%{map}")),
                vec![index_sort.clone()],
                germanium_smt::Sort::Real,
            );
            self.vc.decls.push(decl.clone());
            let w = Term::app(&decl, vec![r.clone()]);
            let TermKind::Var(symbol) = r.kind() else {
                unreachable!("the location is a variable");
            };
            self.vc.fact(Term::forall(
                vec![(symbol.clone(), index_sort)],
                Term::implies(
                    Term::gt(before.clone(), zero.clone()),
                    Term::and([
                        Term::gt(w.clone(), zero.clone()),
                        Term::lt(w.clone(), before.clone()),
                    ]),
                ),
                vec![vec![w.clone()]],
            ));
            Term::ite(Term::gt(amount, zero), w, Term::real(0, 1))
        } else {
            amount
        };
        self.pointwise_mask(st, &map, &r, inside, Term::sub(before, taken));
        Ok(())
    }
}
