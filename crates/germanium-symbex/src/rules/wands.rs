//! Magic wands as resources. A wand `A --* B` is identified by its *shape* (the wand with
//! every heap-independent part replaced by a hole) and the values of its holes: equal
//! shape and equal values, the same wand (Carbon's representation, seed 000). A wand chunk
//! is `Resource::Wand(shape)` with the hole values as arguments and an amount (one per
//! instance held); its snapshot `w` says what the right-hand side holds for each
//! left-hand side: applying it to a left-hand side whose snapshot is `s` produces the
//! right-hand side from `apply(w, s)` (see `package` for how a package defines it).
//!
//! `apply A --* B` consumes the wand and `A`, then produces `B` from that snapshot, with
//! `old[lhs](e)` reading the state before; `applying (A --* B) in e` does so on a copy of
//! the state.

use germanium_semantics::visit::children;
use germanium_semantics::{CallTarget, FieldTarget};
use germanium_smt::{FunDecl, Sort, Symbol, Term};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind};
use germanium_syntax::Span;

use crate::env::analysis::{self, is_impure, is_wand};
use crate::errors::ErrorContext;
use crate::rules::context::{Abort, Verifier, R};
use crate::state::{Heap, Permission, Resource, State};

/// The label under which a wand's left-hand-side state is read (`old[lhs](e)`).
pub const LHS_STATE: &str = "lhs";

/// A wand's shape: its key (the resource's name) and its holes, in order.
pub struct WandShape<'x> {
    pub key: String,
    pub holes: Vec<&'x Expr>,
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// The left- and right-hand sides of a wand expression.
    pub fn wand_sides<'x>(&mut self, wand: &'x Expr) -> R<(&'x Expr, &'x Expr)> {
        match &wand.kind {
            ExprKind::Binary(BinaryOp::Wand, lhs, rhs) => Ok((lhs, rhs)),
            _ => Err(self.unsupported(wand.span, "this magic wand")),
        }
    }

    /// The shape of `wand` (see the module documentation).
    pub fn wand_shape<'x>(&self, wand: &'x Expr) -> WandShape<'x> {
        let mut shape = WandShape {
            key: String::from("wand"),
            holes: Vec::new(),
        };
        let mut bound = Vec::new();
        self.shape_of(wand, &mut bound, &mut shape);
        shape
    }

    fn shape_of<'x>(&self, e: &'x Expr, bound: &mut Vec<String>, shape: &mut WandShape<'x>) {
        if !is_wand(e) && !is_impure(self.env.sem, e) && self.independent(e, bound) {
            shape.key.push('?');
            shape.holes.push(e);
            return;
        }
        shape.key.push_str(&self.shape_head(e, bound));
        shape.key.push('(');
        let before = bound.len();
        match &e.kind {
            ExprKind::Let(name, value, body) => {
                self.shape_of(value, bound, shape);
                shape.key.push(',');
                bound.push(name.name.clone());
                self.shape_of(body, bound, shape);
            }
            ExprKind::Quantifier { vars, .. } | ExprKind::Forperm { vars, .. } => {
                bound.extend(vars.iter().map(|v| v.name.name.clone()));
                for c in children(e) {
                    self.shape_of(c, bound, shape);
                    shape.key.push(',');
                }
            }
            _ => {
                for c in children(e) {
                    self.shape_of(c, bound, shape);
                    shape.key.push(',');
                }
            }
        }
        bound.truncate(before);
        shape.key.push(')');
    }

    /// `head(e)`, except that variables bound inside the wand are named by their distance to
    /// their binder and binders by their variables' types: shapes equal up to the names of
    /// bound variables are one shape.
    fn shape_head(&self, e: &Expr, bound: &[String]) -> String {
        let binder_types = |count: usize| -> String {
            (0..count)
                .map(|i| match self.env.sem.binders.get(&(e.id, i)) {
                    Some(v) => format!("{:?}", self.env.sem.var(*v).ty),
                    None => "?".to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        match &e.kind {
            ExprKind::Ident(name) => match bound.iter().rposition(|b| *b == name.name) {
                Some(i) => format!("#{}", bound.len() - 1 - i),
                None => name.name.clone(),
            },
            ExprKind::Let(..) => "let".to_string(),
            ExprKind::Quantifier { kind, vars, .. } => {
                format!("{kind:?} {}", binder_types(vars.len()))
            }
            ExprKind::Forperm { vars, .. } => format!("forperm {}", binder_types(vars.len())),
            _ => head(e),
        }
    }

    /// Whether `e` can be evaluated before the wand's states exist: it reads no heap
    /// (except through `old`, whose states are fixed) and no variable bound inside the wand.
    fn independent(&self, e: &Expr, bound: &[String]) -> bool {
        match &e.kind {
            ExprKind::Ident(name) => !bound.contains(&name.name),
            ExprKind::FieldAccess(..)
                if matches!(
                    self.env.sem.field_access(e.id),
                    Some(FieldTarget::Field(_)) | None
                ) =>
            {
                false
            }
            ExprKind::Call(..) if !self.call_independent(e) => false,
            ExprKind::Old(Some(label), _) if label.name == LHS_STATE => false,
            ExprKind::Old(_, body) => no_bound_names(body, bound),
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
            | ExprKind::Binary(BinaryOp::Wand, ..) => false,
            _ => children(e).into_iter().all(|c| self.independent(c, bound)),
        }
    }

    /// Whether the call `e` is one of a function whose value does not depend on the heap.
    fn call_independent(&self, e: &Expr) -> bool {
        match self.env.sem.call(e.id) {
            Some(CallTarget::DomainFunction { .. } | CallTarget::AdtConstructor { .. }) => true,
            Some(CallTarget::Function(name)) => self
                .env
                .functions
                .get(name)
                .is_some_and(|f| !analysis::reads_heap(self.env.sem, f)),
            _ => false,
        }
    }

    /// The resource of `wand` and its holes. The resource's name is the shape's key with
    /// the holes' types (one shape may have holes of different types); the holes' sorts
    /// are remembered for quantified chunks of the wand.
    pub fn wand_resource<'x>(&mut self, wand: &'x Expr) -> R<(Resource, Vec<&'x Expr>)> {
        let mut shape = self.wand_shape(wand);
        let mut sorts = Vec::new();
        for hole in &shape.holes {
            let ty = self.type_of(hole)?;
            shape.key.push_str(&format!("#{ty}"));
            sorts.push(self.sort_of(&ty, hole.span)?);
        }
        self.member
            .wand_holes
            .entry(shape.key.clone())
            .or_insert(sorts);
        Ok((Resource::Wand(shape.key), shape.holes))
    }

    /// The sorts of the holes of the wand named `key` (seen in this member).
    pub fn wand_hole_sorts(&mut self, key: &str, span: Span) -> R<Vec<Sort>> {
        match self.member.wand_holes.get(key) {
            Some(sorts) => Ok(sorts.clone()),
            None => Err(self.unsupported(span, "a magic wand not seen before")),
        }
    }

    /// The resource and arguments (hole values, evaluated in `heap`) of `wand`.
    pub fn wand_location(
        &mut self,
        st: &State,
        heap: &Heap,
        wand: &Expr,
        ctx: &ErrorContext,
    ) -> R<(Resource, Vec<Term>)> {
        let (resource, holes) = self.wand_resource(wand)?;
        let mut args = Vec::new();
        for hole in holes {
            args.push(self.eval(st, heap, hole, ctx)?);
        }
        Ok((resource, args))
    }

    /// Checks that the right-hand side of `wand` is self-framing (`wand.not.wellformed`):
    /// it is produced into an empty heap, in a scope of its own, with the left-hand side's
    /// state as `old[lhs]` (as in Viper, the left-hand side's permissions do not frame it,
    /// except for the reads of its receivers: `in_wand_rhs`; the left-hand side is checked
    /// where it is produced). Not while nothing is checked.
    /// Returns whether it is well-formed; an ill-formed wand is reported, and the path goes
    /// on (as in Viper).
    pub fn check_wand_wellformed(&mut self, st: &State, wand: &Expr) -> R<bool> {
        if !self.modes.checking {
            return Ok(true);
        }
        let reported = self.errors.len();
        let (lhs, rhs) = self.wand_sides(wand)?;
        let ctx = ErrorContext::at(
            "wand.not.wellformed",
            wand.span,
            "Magic wand might not be well-formed.",
        );
        self.push(wand.span)?;
        let r = (|| -> R<()> {
            let mut side = State {
                store: st.store.clone(),
                heap: Heap::default(),
                old_heaps: st.old_heaps.clone(),
                label_loops: Vec::new(),
            };
            self.with_modes(|m| m.checking = false, |v| v.produce(&mut side, lhs, &ctx))?;
            let lhs_state = std::mem::take(&mut side.heap);
            side.old_heaps.insert(LHS_STATE.to_string(), lhs_state);
            self.in_wand_rhs(|v| {
                v.with_modes(
                    |m| m.wand_rhs_check = true,
                    |v| v.produce(&mut side, rhs, &ctx),
                )
            })
        })();
        self.pop(wand.span)?;
        match r {
            Ok(()) | Err(Abort::Failed) => Ok(self.errors.len() == reported),
            Err(other) => Err(other),
        }
    }

    /// `apply(w, s)`: the snapshot of the right-hand side of the wand whose snapshot is `w`
    /// for the left-hand side whose snapshot is `s`.
    pub fn wand_apply(&mut self, w: Term, s: Term, span: Span) -> R<Term> {
        let decl = wand_apply_decl(&self.env.snap.sort);
        self.ensure_declared(&decl, span)?;
        Ok(Term::app(&decl, vec![w, s]))
    }

    /// Produces the wand `wand` (one instance), with snapshot `snap` (fresh if `None`).
    pub fn produce_wand(
        &mut self,
        st: &mut State,
        wand: &Expr,
        snap: Option<Term>,
        ctx: &ErrorContext,
    ) -> R<()> {
        self.check_wand_wellformed(st, wand)?;
        let (resource, args) = self.wand_location(st, &st.heap, wand, ctx)?;
        let amount = self.scaled(Permission::write()).when(&self.guard());
        self.produce_resource(st, &resource, args, amount, snap, wand.span)
    }

    /// Consumes one instance of `wand` (`wand.not.found` if it is not held); returns its
    /// snapshot.
    pub fn consume_wand(
        &mut self,
        st: &mut State,
        eval_heap: &Heap,
        wand: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let (resource, args) = self.wand_location(st, eval_heap, wand, ctx)?;
        self.consume_wand_at(st, &resource, &args, wand, ctx)
    }

    /// Consumes one instance of the wand `resource(args)` (`wand` is where it is written).
    fn consume_wand_at(
        &mut self,
        st: &mut State,
        resource: &Resource,
        args: &[Term],
        wand: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let amount = self.scaled(Permission::write());
        self.consume_resource(st, resource, args, Some(amount), wand, ctx)
    }

    /// `apply A --* B`: consumes the wand and `A`, produces `B` from the wand's snapshot
    /// applied to `A`'s.
    pub fn apply_wand(&mut self, st: &mut State, wand: &Expr, ctx: &ErrorContext) -> R<()> {
        let (lhs, rhs) = self.wand_sides(wand)?;
        let before = st.heap.clone();
        let (resource, args) = self.wand_location(st, &before, wand, ctx)?;
        let checked = self.member.wands_checked.contains(resource.name());
        if !checked && !self.check_wand_wellformed(st, wand)? {
            // Reported; an ill-formed wand is not applied (the path goes on).
            return Ok(());
        }
        let w = self.consume_wand_at(st, &resource, &args, wand, ctx)?;
        let lhs_state = st.heap.clone();
        let s = self.assertion_snapshot(st, &lhs_state, lhs)?;
        self.consume(st, &lhs_state, lhs, ctx)?;
        let given: Vec<_> = given_locations(&lhs_state, &st.heap)
            .into_iter()
            .filter(|h| !matches!(&h.resource, Resource::Predicate(p) if self.env.wand_predicates.contains(p)))
            .collect();
        let s = s.unwrap_or_else(|| self.env.snap.unit());
        let snap = self.wand_apply(w, s, wand.span)?;
        let saved = st.old_heaps.insert(LHS_STATE.to_string(), lhs_state);
        let r = self.in_wand_rhs(|v| v.produce_from(st, rhs, Some(snap), ctx));
        match saved {
            Some(h) => st.old_heaps.insert(LHS_STATE.to_string(), h),
            None => st.old_heaps.remove(LHS_STATE),
        };
        r?;
        // A package writes no field: where the right-hand side holds a location the
        // left-hand side gave, its value is the one given (the right-hand side holds in
        // the left-hand side's state combined with the footprint, where a location, field
        // or predicate instance, has one value; not wands, nor predicates holding one).
        for h in given {
            let held = crate::resources::perm_of(&st.heap, &h.resource, &h.args);
            let value = crate::resources::value_of(&st.heap, &h.resource, &h.args, h.snap.clone());
            let kept = Term::implies(
                Term::and([h.perm.is_positive(), held.is_positive()]),
                Term::eq(value, h.snap),
            );
            self.assume(kept, wand.span)?;
        }
        Ok(())
    }

    /// `applying (A --* B) in e`: `e` in the state after applying the wand (to a copy).
    pub fn eval_applying(
        &mut self,
        st: &State,
        heap: &Heap,
        wand: &Expr,
        body: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let mut copy = st.clone();
        copy.heap = heap.clone();
        // `perm(..)` in the body sees the state after the apply.
        self.with_perm_heap(None, |v| {
            v.apply_wand(&mut copy, wand, ctx)?;
            let after = copy.heap.clone();
            v.eval(&copy, &after, body, ctx)
        })
    }
}

/// `sx.wand_apply: Snap × Snap → Snap`.
pub fn wand_apply_decl(snap: &Sort) -> FunDecl {
    FunDecl::new(
        Symbol::user("sx.wand_apply"),
        vec![snap.clone(), snap.clone()],
        snap.clone(),
    )
}

/// Whether no identifier in `e` is one of `bound`.
fn no_bound_names(e: &Expr, bound: &[String]) -> bool {
    match &e.kind {
        ExprKind::Ident(name) => !bound.contains(&name.name),
        _ => children(e).into_iter().all(|c| no_bound_names(c, bound)),
    }
}

/// What distinguishes `e`'s node from others of its kind (names, operators, literals).
fn head(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Ident(n) => n.name.clone(),
        ExprKind::FieldAccess(_, f) => format!(".{}", f.name),
        ExprKind::Call(n, _) => format!("{}!", n.name),
        ExprKind::Binary(op, ..) => format!("{op:?}"),
        ExprKind::Unary(op, _) => format!("{op:?}"),
        ExprKind::IntLit(s) => s.clone(),
        ExprKind::BoolLit(b) => b.to_string(),
        ExprKind::Old(label, _) => format!("old[{}]", label.as_ref().map_or("", |l| &l.name)),
        ExprKind::Collection(kind, ..) => format!("{kind:?}"),
        other => format!("{:?}", std::mem::discriminant(other)),
    }
}

/// The chunks of `before` of fields and predicate instances that are not in `after` as they
/// were (what a consumption took, wholly or in part).
fn given_locations(before: &Heap, after: &Heap) -> Vec<crate::resources::Held> {
    let left = crate::resources::held(after, None);
    crate::resources::held(before, None)
        .into_iter()
        .filter(|h| h.resource.values_agree())
        .filter(|h| {
            !left
                .iter()
                .any(|l| l.resource == h.resource && l.args == h.args && l.perm == h.perm)
        })
        .collect()
}
