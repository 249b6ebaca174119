//! Magic wands as resources (seed 000, section 4): a wand `A --* B` is identified by its
//! *shape* — the wand with every part that can be evaluated where the wand is written
//! (reading no heap of the wand's own states and no variable bound inside it) replaced by
//! a hole — and the values of its holes. Each shape has a permission map indexed by the
//! locations `wand%k(holes)`; holding a wand is a count there, like a predicate instance
//! without a value.
//!
//! `apply A --* B` takes the wand and `A` and adds `B`, reading `old[lhs]` in the state
//! before; the heap is not havocked between the two (a location `B` holds has the value the
//! left-hand side gave it, or the footprint's), only after. `applying (w) in e` does so on a
//! copy of the state. How a wand is made is `package`.

use std::collections::HashMap;

use germanium_semantics::visit::{children, for_each_member_expr, walk_expr};
use germanium_semantics::{CallTarget, FieldTarget, Semantics};
use germanium_smt::{Command, FunDecl, Sort, Symbol, Term};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind};
use germanium_verifier::errors::{ErrorContext, Reason};

use crate::lower::{unsupported, Lower, Tables, R};
use crate::state::{Memory, State};

/// The label under which a wand's left-hand-side state is read (`old[lhs](e)`).
pub const LHS: &str = "lhs";

/// What the VCG knows of one wand shape.
#[derive(Clone, Debug)]
pub struct WandShape {
    /// The name of its heap and permission maps.
    pub map: String,
    pub index: Sort,
    index_name: Symbol,
    location: FunDecl,
    arguments: Vec<FunDecl>,
    /// `wandrhs%k(w, a)`: the frame of the right-hand side an instance whose frame is `w`
    /// gives for a left-hand side whose frame is `a` (see `package`).
    pub rhs: FunDecl,
    /// Per heap map, `wandval%k%m(w, r)`: the value the footprint of the instance whose
    /// frame is `w` gave location `r` (where the package took some of it).
    pub values: std::collections::BTreeMap<String, FunDecl>,
}

/// The shape key of `wand` and its holes, in order.
pub fn shape_of<'x>(sem: &Semantics, wand: &'x Expr) -> (String, Vec<&'x Expr>) {
    let mut key = String::new();
    let mut holes = Vec::new();
    let mut bound = Vec::new();
    walk_shape(sem, wand, &mut bound, &mut key, &mut holes);
    (key, holes)
}

fn walk_shape<'x>(
    sem: &Semantics,
    e: &'x Expr,
    bound: &mut Vec<String>,
    key: &mut String,
    holes: &mut Vec<&'x Expr>,
) {
    if independent(sem, e, bound) {
        key.push('?');
        holes.push(e);
        return;
    }
    key.push_str(&head(e, bound));
    key.push('(');
    let before = bound.len();
    match &e.kind {
        ExprKind::Let(name, value, body) => {
            walk_shape(sem, value, bound, key, holes);
            key.push(',');
            bound.push(name.name.clone());
            walk_shape(sem, body, bound, key, holes);
        }
        _ => {
            if let ExprKind::Quantifier { vars, .. } | ExprKind::Forperm { vars, .. } = &e.kind {
                bound.extend(vars.iter().map(|v| v.name.name.clone()));
            }
            for c in children(e) {
                walk_shape(sem, c, bound, key, holes);
                key.push(',');
            }
        }
    }
    bound.truncate(before);
    key.push(')');
}

/// The node itself without its children; variables bound inside the wand by their distance
/// to their binder (shapes equal up to bound names are one shape).
fn head(e: &Expr, bound: &[String]) -> String {
    match &e.kind {
        ExprKind::Ident(name) => match bound.iter().rposition(|b| *b == name.name) {
            Some(i) => format!("#{}", bound.len() - 1 - i),
            None => name.name.clone(),
        },
        ExprKind::Unary(op, _) => format!("{op:?}"),
        ExprKind::Binary(op, ..) => format!("{op:?}"),
        ExprKind::FieldAccess(_, f) => format!(".{}", f.name),
        ExprKind::Call(f, _) => format!("call {}", f.name),
        ExprKind::Old(label, _) => format!("old[{}]", label.as_ref().map_or("", |l| &l.name)),
        ExprKind::Quantifier { kind, vars, .. } => format!("{kind:?} {}", vars.len()),
        ExprKind::Forperm { vars, .. } => format!("forperm {}", vars.len()),
        ExprKind::Collection(kind, ..) => format!("{kind:?}"),
        ExprKind::ReadPerm(kind) => format!("{kind:?}"),
        ExprKind::IntLit(text) => text.clone(),
        ExprKind::BoolLit(b) => b.to_string(),
        other => {
            let text = format!("{other:?}");
            text.split(['(', ' ', '{']).next().unwrap_or("").to_string()
        }
    }
}

/// Whether `e` can be evaluated where the wand is written: it reads no heap (except through
/// `old`, whose states are fixed) and no variable bound inside the wand.
fn independent(sem: &Semantics, e: &Expr, bound: &[String]) -> bool {
    match &e.kind {
        ExprKind::Ident(name) => !bound.contains(&name.name),
        ExprKind::FieldAccess(..)
            if matches!(sem.field_access(e.id), Some(FieldTarget::Field(_)) | None) =>
        {
            false
        }
        ExprKind::Call(..)
            if matches!(
                sem.call(e.id),
                Some(CallTarget::Function(_) | CallTarget::Predicate(_)) | None
            ) =>
        {
            false
        }
        ExprKind::Old(Some(label), _) if label.name == LHS => false,
        ExprKind::Old(_, body) => {
            let mut free = true;
            walk_expr(body, &mut |x| {
                if let ExprKind::Ident(n) = &x.kind {
                    free &= !bound.contains(&n.name);
                }
            });
            free
        }
        ExprKind::Perm(_)
        | ExprKind::Forperm { .. }
        | ExprKind::Unfolding(..)
        | ExprKind::Applying(..)
        | ExprKind::Asserting(..)
        | ExprKind::Acc(..)
        | ExprKind::Lhs(_)
        | ExprKind::InhaleExhale(..)
        | ExprKind::Wildcard
        | ExprKind::Epsilon
        | ExprKind::ReadPerm(_)
        | ExprKind::Result
        | ExprKind::Binary(BinaryOp::Wand, ..) => false,
        ExprKind::Quantifier { vars, .. } => {
            let mut inner = bound.to_vec();
            inner.extend(vars.iter().map(|v| v.name.name.clone()));
            children(e).iter().all(|c| independent(sem, c, &inner))
        }
        ExprKind::Let(name, value, body) => {
            let mut inner = bound.to_vec();
            inner.push(name.name.clone());
            independent(sem, value, bound) && independent(sem, body, &inner)
        }
        _ => children(e).iter().all(|c| independent(sem, c, bound)),
    }
}

/// Every wand shape of the program whose holes have sorts, by key.
pub fn shapes(t: &Tables<'_>) -> HashMap<String, WandShape> {
    let mut wands: Vec<&Expr> = Vec::new();
    for_each_member_expr(t.program, &mut |e| {
        walk_expr(e, &mut |x| {
            if matches!(x.kind, ExprKind::Binary(BinaryOp::Wand, ..)) {
                wands.push(x);
            }
        })
    });
    let mut out = HashMap::new();
    for wand in wands {
        let (key, holes) = shape_of(t.sem, wand);
        if out.contains_key(&key) {
            continue;
        }
        let sorts: Option<Vec<Sort>> = holes
            .iter()
            .map(|h| {
                let ty = t.sem.type_of(h.id)?;
                t.theories.sort(ty).ok()
            })
            .collect();
        let Some(sorts) = sorts else { continue };
        let n = out.len();
        let index_name = Symbol::user(&format!("vcg%WandLoc%{n}"));
        let index = Sort::Uninterpreted(index_name.clone());
        let location = FunDecl::new(
            Symbol::user(&format!("vcg%wand%{n}")),
            sorts.clone(),
            index.clone(),
        );
        let arguments = sorts
            .iter()
            .enumerate()
            .map(|(i, s)| {
                FunDecl::new(
                    Symbol::user(&format!("vcg%wandarg{i}%{n}")),
                    vec![index.clone()],
                    s.clone(),
                )
            })
            .collect();
        let rhs = FunDecl::new(
            Symbol::user(&format!("vcg%wandrhs%{n}")),
            vec![t.frames.sort.clone(), t.frames.sort.clone()],
            t.frames.sort.clone(),
        );
        let values = t
            .maps()
            .into_iter()
            .filter(|(m, _, _)| !m.starts_with("wand%"))
            .map(|(m, index, value)| {
                let decl = FunDecl::new(
                    Symbol::user(&format!("vcg%wandval%{n}%{m}")),
                    vec![t.frames.sort.clone(), index],
                    value,
                );
                (m, decl)
            })
            .collect();
        let shape = WandShape {
            map: format!("wand%{n}"),
            index,
            index_name,
            location,
            arguments,
            rhs,
            values,
        };
        out.insert(key, shape);
    }
    out
}

/// The wand sorts and their locations, distinct for distinct holes.
pub fn commands(t: &Tables<'_>) -> Vec<Command> {
    let mut shapes: Vec<&WandShape> = t.wands.values().collect();
    shapes.sort_by(|a, b| a.map.cmp(&b.map));
    let mut out = Vec::new();
    for shape in shapes {
        out.push(Command::DeclareSort(shape.index_name.clone()));
        out.push(Command::DeclareFun(shape.rhs.clone()));
        for decl in shape.values.values() {
            out.push(Command::DeclareFun(decl.clone()));
        }
        crate::frames::location_commands(&shape.location, &shape.arguments, &mut out);
    }
    out
}

impl Lower<'_, '_> {
    /// The map and location of `wand` in `st` (its holes evaluated there).
    pub fn wand_location(
        &mut self,
        st: &State,
        guard: &Term,
        wand: &Expr,
        ctx: &ErrorContext,
    ) -> R<(String, Term)> {
        let (key, holes) = shape_of(self.t.sem, wand);
        let Some(shape) = self.t.wands.get(&key) else {
            return unsupported(wand.span, "this magic wand");
        };
        let (map, location) = (shape.map.clone(), shape.location.clone());
        let mut args = Vec::new();
        for h in holes {
            args.push(self.expr(st, guard, h, ctx)?);
        }
        Ok((map, Term::app(&location, args)))
    }

    /// `apply wand` (with `ctx`'s error id).
    pub fn apply_wand(&mut self, st: &mut State, wand: &Expr, ctx: &ErrorContext) -> R<()> {
        let ExprKind::Binary(BinaryOp::Wand, lhs, rhs) = &wand.kind else {
            return unsupported(wand.span, "this magic wand");
        };
        // Checked where packaged already; else an ill-formed wand is reported and not
        // applied (what the apply would report comes after it).
        if !self.wands_checked.contains(&shape_of(self.t.sem, wand).0) {
            let wellformed = self.check_wand_wellformed(st, wand)?;
            st.reach = self.vc.branch_off_after(&st.reach, &wellformed);
        }
        let before = st.clone();
        let reach = st.reach.clone();
        let (map, index) = self.wand_location(st, &reach, wand, ctx)?;
        let instance = Term::select(st.memory.heap[&map].clone(), index);
        let changed = self.take_all(st, &[(wand, ctx.clone()), (lhs, ctx.clone())])?;
        // Locations held before the apply keep their values (the left-hand side's); the
        // others the right-hand side may hold get values of their own, then the wand's
        // (inside a package the heap around is the witnesses' base and stays).
        if !self.in_package() {
            for map in self.maps_named(rhs) {
                let mut kept = st.memory.clone();
                kept.mask
                    .insert(map.clone(), before.memory.mask[&map].clone());
                self.fresh_where_unheld(&mut kept, &map);
                st.memory.heap.insert(map.clone(), kept.heap[&map].clone());
            }
        }
        let saved = st.labels.insert(LHS.to_string(), before.memory.clone());
        let r = self.inhale(st, rhs, ctx);
        match saved {
            Some(m) => st.labels.insert(LHS.to_string(), m),
            None => st.labels.remove(LHS),
        };
        r?;
        // What the right-hand side holds, as the package found it for this left-hand side;
        // where it holds what was not held before, the footprint's values.
        if let Some(shape) = self.wand_shape(wand) {
            if let Some((a, b)) = self.frames_of(&before, lhs, st, rhs) {
                let promised = Term::app(&shape.rhs, vec![instance.clone(), a]);
                st.reach = self.vc.assume(&st.reach, Term::eq(b, promised));
            }
            let mut given = Vec::new();
            for (map, value) in &shape.values {
                let (Some(was), Some(now)) = (before.memory.mask.get(map), st.memory.mask.get(map))
                else {
                    continue;
                };
                if was == now {
                    continue;
                }
                let Some((index_sort, _)) = now.sort().array_parts() else {
                    continue;
                };
                let r = Term::var(germanium_smt::Symbol::user("r"), index_sort.clone());
                let at = |m: &Term| Term::select(m.clone(), r.clone());
                let read = at(&st.memory.heap[map]);
                let zero = Term::real(0, 1);
                given.push(Term::forall(
                    vec![(germanium_smt::Symbol::user("r"), index_sort.clone())],
                    Term::implies(
                        Term::and([Term::eq(at(was), zero.clone()), Term::gt(at(now), zero)]),
                        Term::eq(
                            read.clone(),
                            Term::app(value, vec![instance.clone(), r.clone()]),
                        ),
                    ),
                    vec![vec![read]],
                ));
            }
            st.reach = self.vc.assume(&st.reach, Term::and(given));
        }
        for map in changed {
            if !self.in_package() {
                self.havoc_unheld(&mut st.memory, &map);
            }
        }
        Ok(())
    }

    /// `applying (wand) in body`: `body` after applying the wand to a copy of the state.
    pub fn applying(
        &mut self,
        st: &State,
        guard: &Term,
        wand: &Expr,
        body: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let mut copy = st.clone();
        let start = self.vc.assume(guard, Term::tt());
        copy.reach = start.clone();
        let during_exhale = self.perm_masks.take();
        let r = (|| {
            self.apply_wand(&mut copy, wand, ctx)?;
            // What the apply checked and found holds where the expression is read (as for
            // `unfolding`).
            self.vc
                .fact(Term::implies(start.clone(), copy.reach.clone()));
            let reach = copy.reach.clone();
            self.expr(&copy, &reach, body, ctx)
        })();
        self.perm_masks = during_exhale;
        r
    }

    /// Checks that `wand` is well-formed (`wand.not.wellformed`): its left-hand side read in a state holding nothing else, its right-hand side in a
    /// state holding only what it gives itself, except that the left-hand side frames the
    /// receivers of its resources; on a path of their own.
    /// Returns where its path ends (the package that follows is a path after it: where
    /// the wand is not well-formed, only that is reported).
    pub fn check_wand_wellformed(&mut self, st: &State, wand: &Expr) -> R<Term> {
        let ExprKind::Binary(BinaryOp::Wand, lhs, rhs) = &wand.kind else {
            return unsupported(wand.span, "this magic wand");
        };
        let ctx = ErrorContext::at(
            "wand.not.wellformed",
            wand.span,
            "Magic wand might not be well-formed.",
        );
        let checked = |l: &mut Self, reach: Term| -> R<Term> {
            let mut side = State {
                memory: Memory::empty(&mut l.vc, l.t),
                reach,
                ..st.clone()
            };
            let nothing = side.memory.mask.clone();
            l.inhale(&mut side, lhs, &ctx)?;
            let given = side.memory.clone();
            side.labels.insert(LHS.to_string(), given.clone());
            side.memory.mask = nothing.clone();
            let maps: Vec<String> = given
                .mask
                .iter()
                .filter(|(m, mask)| nothing.get(*m) != Some(*mask))
                .map(|(m, _)| m.clone())
                .collect();
            l.with_modes(
                |m| m.receivers_in = Some((given, maps)),
                |l| l.inhale(&mut side, rhs, &ctx),
            )?;
            Ok(side.reach)
        };
        self.side_path(&st.reach, |l, reach| {
            l.with_modes(|m| m.wand_wellformedness = true, |l| checked(l, reach))
        })
    }

    /// The heap maps an assertion may hold locations of: the fields, predicates and wand
    /// shapes it names.
    fn maps_named(&self, a: &Expr) -> Vec<String> {
        let mut out = std::collections::BTreeSet::new();
        walk_expr(a, &mut |x| match &x.kind {
            ExprKind::FieldAccess(_, f) if self.t.is_field(&f.name) => {
                out.insert(f.name.clone());
            }
            ExprKind::Call(name, _) if self.t.predicates.contains_key(&name.name) => {
                out.insert(name.name.clone());
            }
            ExprKind::Binary(BinaryOp::Wand, ..) => {
                if let Some(shape) = self.t.wands.get(&shape_of(self.t.sem, x).0) {
                    out.insert(shape.map.clone());
                }
            }
            _ => {}
        });
        out.into_iter().collect()
    }

    /// The shape of `wand`, if the program has it.
    pub fn wand_shape(&self, wand: &Expr) -> Option<WandShape> {
        self.t.wands.get(&shape_of(self.t.sem, wand).0).cloned()
    }

    /// The frames of `lhs` in `a` and of `rhs` in `b`, where both have one.
    pub fn frames_of(
        &mut self,
        a: &State,
        lhs: &Expr,
        b: &State,
        rhs: &Expr,
    ) -> Option<(Term, Term)> {
        let saved = self.perm_masks.take();
        let frames = self.leniently(|l| Ok((l.frame_of(a, lhs)?, l.frame_of(b, rhs)?)));
        self.perm_masks = saved;
        frames.ok()
    }

    /// The reason a missing amount of `map` is reported with.
    pub fn missing_reason(&self, map: &str) -> Reason {
        if map.starts_with("wand%") {
            Reason::WandNotFound
        } else {
            Reason::InsufficientPermission
        }
    }
}
