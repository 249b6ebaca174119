//! Predicate instances as locations (seed 002): per predicate a permission map and a heap map
//! over its locations `loc%P(args)`, holding the instance's frame (see `frames`). Neither
//! `fold` nor `unfold` havocs the heap: `fold` takes the body (amounts times the instance's)
//! and records the frame of what it held; `unfold` takes the instance and gives the body
//! back, its values those of the frame. `unfolding` does the same on a copy of the state.
//! Each records `unfolded%P(frame)`, which lets the definitions of functions over the
//! instance unroll once more (seed 002: only as deep as the program looked).

use germanium_semantics::CallTarget;
use germanium_smt::Term;
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind, Predicate};
use germanium_verifier::errors::{text_of, ErrorContext, Reason};

use crate::frames::PredicateShape;
use crate::lower::{unsupported, Lower, R};
use crate::snapshots::Snapshot;
use crate::state::{Memory, State};

/// A predicate access as written: `P(args)` or `acc(P(args), amount)`.
pub struct Access<'x> {
    pub name: String,
    pub call: &'x Expr,
    pub args: &'x [Expr],
    pub amount: Option<&'x Expr>,
}

/// The predicate access `e` is, if it is one.
pub fn access<'x>(sem: &germanium_semantics::Semantics, e: &'x Expr) -> Option<Access<'x>> {
    let (call, amount) = match &e.kind {
        ExprKind::Acc(loc, amount) => (&**loc, amount.as_deref()),
        ExprKind::Call(..) => (e, None),
        _ => return None,
    };
    let ExprKind::Call(_, args) = &call.kind else {
        return None;
    };
    match sem.call(call.id) {
        Some(CallTarget::Predicate(name)) => Some(Access {
            name: name.clone(),
            call,
            args,
            amount,
        }),
        _ => None,
    }
}

fn is_wildcard(amount: Option<&Expr>) -> bool {
    amount.is_some_and(|x| matches!(x.kind, ExprKind::Wildcard))
}

/// How an instance is taken when it is opened.
#[derive(Clone, Copy)]
enum Opening<'c> {
    /// `unfold`: the amount is checked in this context, then taken.
    Checked(&'c ErrorContext),
    /// `unfolding` (its definedness checked where it is read): the amount is taken.
    Assumed,
    /// Inside a function, where amounts are wildcards: some is held, nothing taken.
    Positive,
}

impl<'t, 'a> Lower<'t, 'a> {
    fn predicate_shape(&self, name: &str, span: germanium_syntax::Span) -> R<PredicateShape<'a>> {
        match self.t.predicates.get(name) {
            Some(shape) => Ok(shape.clone()),
            None => unsupported(span, format!("the predicate {name}")),
        }
    }

    /// The location of the instance `pa` names.
    pub fn instance(
        &mut self,
        st: &State,
        guard: &Term,
        pa: &Access<'_>,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let shape = self.predicate_shape(&pa.name, pa.call.span)?;
        let args = self.instance_args(st, guard, pa, ctx)?;
        Ok(shape.location(args))
    }

    /// The state in which the body of `shape`'s instance at `args` is read: the caller's,
    /// with the predicate's parameters bound.
    fn body_state(&self, st: &State, shape: &PredicateShape<'_>, args: &[Term]) -> State {
        let mut inner = st.clone();
        for (p, a) in shape.params.iter().zip(args) {
            inner.store.insert(*p, a.clone());
        }
        inner
    }

    fn instance_args(
        &mut self,
        st: &State,
        guard: &Term,
        pa: &Access<'_>,
        ctx: &ErrorContext,
    ) -> R<Vec<Term>> {
        let mut args = Vec::new();
        for a in pa.args {
            args.push(self.expr(st, guard, a, ctx)?);
        }
        Ok(args)
    }

    /// The amount of `pa`, and that it is positive where it is written (folding and
    /// unfolding need some permission).
    fn positive_amount(&mut self, st: &mut State, pa: &Access<'_>, ctx: &ErrorContext) -> R<Term> {
        let Some(x) = pa.amount else {
            return Ok(Term::real(1, 1));
        };
        if matches!(x.kind, ExprKind::Wildcard) {
            return Ok(self.some_amount());
        }
        let reach = st.reach.clone();
        let p = germanium_theories::operators::real(self.expr(st, &reach, x, ctx)?);
        let positive = Term::gt(p.clone(), Term::real(0, 1));
        self.check(&reach, positive.clone(), ctx, Reason::NotPositive, x);
        st.reach = self.vc.assume(&st.reach, positive);
        Ok(p)
    }

    /// The instance a `fold` or `unfold` statement names, and the context of its errors.
    fn statement_access<'x>(
        &self,
        access_expr: &'x Expr,
        span: germanium_syntax::Span,
        error_id: &'static str,
        verb: &str,
    ) -> R<(Access<'x>, ErrorContext)> {
        let Some(pa) = access(self.t.sem, access_expr) else {
            return unsupported(access_expr.span, "this statement's predicate access");
        };
        let text = text_of(self.t.sources, access_expr.span);
        let ctx = ErrorContext::at(error_id, span, format!("{verb} {text} might fail."));
        Ok((pa, ctx))
    }

    /// `fold acc(P(args), p)`.
    pub fn fold(
        &mut self,
        st: &mut State,
        access_expr: &Expr,
        span: germanium_syntax::Span,
    ) -> R<()> {
        let (pa, ctx) = self.statement_access(access_expr, span, "fold.failed", "Folding")?;
        let shape = self.predicate_shape(&pa.name, pa.call.span)?;
        let Some(body) = &shape.predicate.body else {
            return unsupported(access_expr.span, "folding an abstract predicate");
        };
        let reach = st.reach.clone();
        let args = self.instance_args(st, &reach, &pa, &ctx)?;
        let p = self.positive_amount(st, &pa, &ctx)?;
        let inner = self.body_state(st, &shape, &args);
        let frame = self.leniently(|l| l.frame_of(&inner, body))?;
        let frame = self.vc.define(&format!("frame_{}", pa.name), frame);
        // The body, taken from the caller's state with the predicate's parameters bound.
        let mut taking = inner;
        self.with_modes(
            |m| {
                m.scale = Some(p.clone());
                m.wildcard_take = is_wildcard(pa.amount);
            },
            |l| l.exhale_all(&mut taking, &[(body, ctx.clone())], false),
        )?;
        st.memory = taking.memory;
        st.reach = taking.reach;
        let loc = shape.location(args);
        let mask = st.memory.mask[&pa.name].clone();
        let heap = st.memory.heap[&pa.name].clone();
        let before = Term::select(mask.clone(), loc.clone());
        // An instance already held has this frame too.
        let same = Term::implies(
            Term::gt(before.clone(), Term::real(0, 1)),
            Term::eq(Term::select(heap.clone(), loc.clone()), frame.clone()),
        );
        let unfolded = Term::app(&shape.unfolded, vec![frame.clone()]);
        st.reach = self.vc.assume(&st.reach, Term::and([same, unfolded]));
        let mask = Term::store(mask, loc.clone(), Term::add(vec![before, p]));
        let mask = self.vc.define(&format!("M_{}", pa.name), mask);
        let heap = self
            .vc
            .define(&format!("H_{}", pa.name), Term::store(heap, loc, frame));
        st.memory.mask.insert(pa.name.clone(), mask);
        st.memory.heap.insert(pa.name, heap);
        Ok(())
    }

    /// `unfold acc(P(args), p)`.
    pub fn unfold(
        &mut self,
        st: &mut State,
        access_expr: &Expr,
        span: germanium_syntax::Span,
    ) -> R<()> {
        let (pa, ctx) = self.statement_access(access_expr, span, "unfold.failed", "Unfolding")?;
        let reach = st.reach.clone();
        let args = self.instance_args(st, &reach, &pa, &ctx)?;
        let p = self.positive_amount(st, &pa, &ctx)?;
        self.open_instance(st, &pa, args, p, Opening::Checked(&ctx), &ctx)
    }

    /// Takes `p` of the instance of `pa` at `args` (see `Opening`) and gives its body back
    /// with the frame's values.
    fn open_instance(
        &mut self,
        st: &mut State,
        pa: &Access<'_>,
        args: Vec<Term>,
        p: Term,
        opening: Opening<'_>,
        body_ctx: &ErrorContext,
    ) -> R<()> {
        let shape = self.predicate_shape(&pa.name, pa.call.span)?;
        let Some(body) = &shape.predicate.body else {
            return unsupported(pa.call.span, "unfolding an abstract predicate");
        };
        let loc = shape.location(args.clone());
        if matches!(opening, Opening::Checked(_)) && !is_wildcard(pa.amount) {
            // Inside a package: what its witnesses miss comes from the state around.
            self.extract(st, &pa.name, &loc, &p, false)?;
        }
        let mask = st.memory.mask[&pa.name].clone();
        let heap = st.memory.heap[&pa.name].clone();
        let held = Term::select(mask.clone(), loc.clone());
        let frame = Term::select(heap.clone(), loc.clone());
        let reach = st.reach.clone();
        let (left, enough) = match opening {
            Opening::Checked(ctx) if is_wildcard(pa.amount) => {
                let some = Term::gt(held.clone(), Term::real(0, 1));
                let missing = Reason::InsufficientPermission;
                self.check(&reach, some.clone(), ctx, missing, pa.call);
                let less = Term::lt(p.clone(), held.clone());
                (Term::sub(held.clone(), p.clone()), Term::and([some, less]))
            }
            Opening::Checked(ctx) => {
                let enough = Term::ge(held.clone(), p.clone());
                let missing = Reason::InsufficientPermission;
                self.check(&reach, enough.clone(), ctx, missing, pa.call);
                (Term::sub(held.clone(), p.clone()), enough)
            }
            Opening::Assumed => (
                Term::sub(held.clone(), p.clone()),
                Term::ge(held, p.clone()),
            ),
            Opening::Positive => (held.clone(), Term::gt(held, Term::real(0, 1))),
        };
        let unfolded = Term::app(&shape.unfolded, vec![frame.clone()]);
        st.reach = self.vc.assume(&st.reach, Term::and([enough, unfolded]));
        let mask = self.vc.define(
            &format!("M_{}", pa.name),
            Term::store(mask, loc.clone(), left.clone()),
        );
        // What is not held any more has no known frame.
        let unknown = self.vc.fresh("frame", self.t.frames.sort.clone());
        let kept = Term::ite(Term::gt(left, Term::real(0, 1)), frame.clone(), unknown);
        let heap = self
            .vc
            .define(&format!("H_{}", pa.name), Term::store(heap, loc, kept));
        st.memory.mask.insert(pa.name.clone(), mask);
        st.memory.heap.insert(pa.name.clone(), heap);
        let mut inner = self.body_state(st, &shape, &args);
        let ctx = body_ctx.clone();
        let positive = matches!(opening, Opening::Positive);
        // The body's expressions were checked with the predicate: not again here.
        self.with_modes(
            |m| {
                m.scale = Some(p);
                m.fresh_on_inhale = true;
                m.wildcard_amounts = positive;
                m.opening_depth += 1;
                m.lenient = true;
            },
            |l| l.inhale(&mut inner, body, &ctx),
        )?;
        let again = self.leniently(|l| l.frame_of(&inner, body))?;
        inner.reach = self.vc.assume(&inner.reach, Term::eq(frame, again));
        st.memory = inner.memory;
        st.reach = inner.reach;
        self.assume_nested_instances(st, &pa.name, &args)
    }

    /// `unfolding acc(P(args), p) in e`: `e` in a copy of the state where the instance is
    /// unfolded. What the unfolding assumes holds wherever it is evaluated with the instance
    /// held.
    pub fn unfolding(
        &mut self,
        st: &State,
        guard: &Term,
        access_expr: &Expr,
        body: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let Some(pa) = access(self.t.sem, access_expr) else {
            return unsupported(access_expr.span, "this unfolding");
        };
        if self.snapshot.is_some() {
            return self.unfolding_in_axiom(st, guard, &pa, body, ctx);
        }
        // Inside a body opened inside another: the value is left unknown (the body's
        // well-formedness is checked with its predicate).
        if self.modes.opening_depth >= 2 {
            let ty = self.type_of(body)?;
            let sort = self.sort(&ty, body.span)?;
            return Ok(self.vc.fresh("unfolding", sort));
        }
        let args = self.instance_args(st, guard, &pa, ctx)?;
        let (p, guard) = match pa.amount {
            None => (Term::real(1, 1), guard.clone()),
            Some(x) if matches!(x.kind, ExprKind::Wildcard) => (self.some_amount(), guard.clone()),
            Some(x) => {
                let p = germanium_theories::operators::real(self.expr(st, guard, x, ctx)?);
                let positive = Term::gt(p.clone(), Term::real(0, 1));
                self.defined(guard, positive.clone(), ctx, Reason::NotPositive, x);
                (p, Term::and([guard.clone(), positive]))
            }
        };
        let guard = &guard;
        let shape = self.predicate_shape(&pa.name, pa.call.span)?;
        let loc = shape.location(args.clone());
        let Some(mask) = st.memory.mask.get(&pa.name) else {
            return unsupported(pa.call.span, "this predicate");
        };
        let held = Term::select(mask.clone(), loc);
        let in_function = self.verifying_function.is_some() || self.modes.function_reads;
        let enough = if in_function || is_wildcard(pa.amount) {
            Term::gt(held.clone(), Term::real(0, 1))
        } else {
            Term::ge(held.clone(), p.clone())
        };
        self.defined(
            guard,
            enough.clone(),
            ctx,
            Reason::InsufficientPermission,
            pa.call,
        );
        // Where not enough is held (a failed or a lenient check), nothing is assumed.
        let start = self.vc.assume(guard, enough);
        let mut inner = State {
            reach: start.clone(),
            ..st.clone()
        };
        // Amounts of the expression are not scaled by an enclosing fold or unfold.
        let opening = if in_function {
            Opening::Positive
        } else {
            Opening::Assumed
        };
        self.with_modes(
            |m| m.scale = None,
            |l| l.open_instance(&mut inner, &pa, args, p, opening, ctx),
        )?;
        self.vc.fact(Term::implies(start, inner.reach.clone()));
        let reach = inner.reach.clone();
        let value = self.expr(&inner, &reach, body, ctx)?;
        if !self.modes.binding {
            return Ok(value);
        }
        // Inside a quantifier the unfolded values are fresh constants, which closing it
        // cannot reach: there the value is read from the instance's frame (its definedness
        // was checked just now). What an axiom cannot read keeps the value at the constants.
        Ok(self
            .closed_unfolding(st, guard, &pa, body, ctx)
            .unwrap_or(value))
    }

    /// `unfolding` as a function's axiom reads it: the instance's locations from its frame
    /// in `st`, every other location from `st`'s heap; nothing checked.
    fn closed_unfolding(
        &mut self,
        st: &State,
        guard: &Term,
        pa: &Access<'_>,
        body: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let checks = self.vc.checks.len();
        let value = self.with_snapshot(Vec::new(), |l| {
            l.with_modes(
                |m| m.snapshot_falls_back = true,
                |l| l.unfolding_in_axiom(st, guard, pa, body, ctx),
            )
        });
        self.vc.checks.truncate(checks);
        value
    }

    /// The frame of what `body` holds in `st`: a field's value, a nested instance's frame,
    /// pairs of the parts of `&&`, the side a condition chooses.
    pub fn frame_of(&mut self, st: &State, body: &Expr) -> R<Term> {
        let frames = &self.t.frames;
        if !crate::assertions::is_impure(self.t.sem, body) {
            return Ok(frames.empty());
        }
        let ctx = ErrorContext::at_conjunct("internal", "");
        let reach = st.reach.clone();
        if let Some(pa) = access(self.t.sem, body) {
            let loc = self.instance(st, &reach, &pa, &ctx)?;
            return self.read_location(st, &pa.name, loc, body);
        }
        match &body.kind {
            ExprKind::Ascribed(x, _) | ExprKind::Annotated(_, x) => self.frame_of(st, x),
            ExprKind::Binary(BinaryOp::And, x, y) => {
                let (x, y) = (self.frame_of(st, x)?, self.frame_of(st, y)?);
                Ok(self.t.frames.pair(x, y))
            }
            ExprKind::Binary(BinaryOp::Implies, c, x) => {
                let c = self.expr(st, &reach, c, &ctx)?;
                let x = self.frame_of(st, x)?;
                Ok(Term::ite(c, x, self.t.frames.empty()))
            }
            ExprKind::Cond(c, x, y) => {
                let c = self.expr(st, &reach, c, &ctx)?;
                let (x, y) = (self.frame_of(st, x)?, self.frame_of(st, y)?);
                Ok(Term::ite(c, x, y))
            }
            ExprKind::Acc(loc, _) => {
                let ExprKind::FieldAccess(rcv, field) = &loc.kind else {
                    return unsupported(loc.span, "this permission in a predicate body");
                };
                let r = self.expr(st, &reach, rcv, &ctx)?;
                let v = self.read_location(st, &field.name, r, loc)?;
                match self.t.frames.of_value(&field.name, v) {
                    Some(f) => Ok(f),
                    None => unsupported(field.span, "this field"),
                }
            }
            ExprKind::Quantifier { .. } => self.quantified_frame(st, body),
            // A wand (combinable wands only): its instance's frame.
            ExprKind::Binary(BinaryOp::Wand, ..) => {
                let (map, index) = self.wand_location(st, &reach, body, &ctx)?;
                self.read_location(st, &map, index, body)
            }
            _ => unsupported(body.span, "this part of a predicate body"),
        }
    }

    /// In a function's axiom: the locations the instance's frame holds become readable, at
    /// the parts of the frame the body says.
    fn unfolding_in_axiom(
        &mut self,
        st: &State,
        guard: &Term,
        pa: &Access<'_>,
        body: &Expr,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let shape = self.predicate_shape(&pa.name, pa.call.span)?;
        let Some(pbody) = &shape.predicate.body else {
            return unsupported(pa.call.span, "unfolding an abstract predicate");
        };
        let args = self.instance_args(st, guard, pa, ctx)?;
        let frame = self.read_location(st, &pa.name, shape.location(args.clone()), pa.call)?;
        let known = self.snapshot.as_ref().map_or(0, Vec::len);
        let inner = self.body_state(st, &shape, &args);
        let opened = self.open_frame(&inner, pbody, frame);
        let value = opened.and_then(|()| self.expr(st, guard, body, ctx));
        if let Some(s) = self.snapshot.as_mut() {
            s.truncate(known);
        }
        value
    }

    /// Makes the locations `body` holds readable in an axiom, at their parts of `frame`.
    fn open_frame(&mut self, st: &State, body: &Expr, frame: Term) -> R<()> {
        if !crate::assertions::is_impure(self.t.sem, body) {
            return Ok(());
        }
        let ctx = ErrorContext::at_conjunct("internal", "");
        let reach = Term::tt();
        if let Some(pa) = access(self.t.sem, body) {
            let loc = self.instance(st, &reach, &pa, &ctx)?;
            if let Some(s) = self.snapshot.as_mut() {
                s.push(Snapshot {
                    map: pa.name,
                    at: loc,
                    value: frame,
                    held: Term::tt(),
                    heap: None,
                });
            }
            return Ok(());
        }
        match &body.kind {
            ExprKind::Ascribed(x, _) | ExprKind::Annotated(_, x) => self.open_frame(st, x, frame),
            ExprKind::Binary(BinaryOp::And, x, y) => {
                let (first, second) = (
                    self.t.frames.first(frame.clone()),
                    self.t.frames.second(frame),
                );
                self.open_frame(st, x, first)?;
                self.open_frame(st, y, second)
            }
            // Parts under a condition are read only where it holds, and there the frame is
            // theirs.
            ExprKind::Binary(BinaryOp::Implies, _, x) => self.open_frame(st, x, frame),
            ExprKind::Cond(_, x, y) => {
                self.open_frame(st, x, frame.clone())?;
                self.open_frame(st, y, frame)
            }
            ExprKind::Acc(loc, _) => {
                let ExprKind::FieldAccess(rcv, field) = &loc.kind else {
                    return unsupported(loc.span, "this permission in a predicate body");
                };
                let r = self.expr(st, &reach, rcv, &ctx)?;
                let Some(v) = self.t.frames.value_in(&field.name, frame) else {
                    return unsupported(field.span, "this field");
                };
                if let Some(s) = self.snapshot.as_mut() {
                    s.push(Snapshot {
                        map: field.name.clone(),
                        at: r,
                        value: v,
                        held: Term::tt(),
                        heap: None,
                    });
                }
                Ok(())
            }
            ExprKind::Quantifier { .. } => self.open_quantified_frame(st, body, frame),
            ExprKind::Binary(BinaryOp::Wand, ..) => {
                let (map, at) = self.wand_location(st, &reach, body, &ctx)?;
                if let Some(s) = self.snapshot.as_mut() {
                    s.push(Snapshot {
                        map,
                        at,
                        value: frame,
                        held: Term::tt(),
                        heap: None,
                    });
                }
                Ok(())
            }
            _ => unsupported(body.span, "this part of a predicate body"),
        }
    }

    /// A predicate's body is well-formed: its expressions defined where they are read.
    pub fn predicate(&mut self, p: &Predicate) -> R<()> {
        let shape = self.predicate_shape(&p.name.name, p.name.span)?;
        let Some(body) = &p.body else { return Ok(()) };
        let mut st = State {
            store: Default::default(),
            memory: Memory::empty(&mut self.vc, self.t),
            labels: Default::default(),
            reach: Term::tt(),
        };
        for v in &shape.params {
            let info = self.t.sem.var(*v).clone();
            let sort = self.sort(&info.ty, p.name.span)?;
            let t = self.vc.fresh(&info.name, sort);
            st.store.insert(*v, t);
        }
        let ctx = ErrorContext::at(
            "predicate.not.wellformed",
            p.name.span,
            "Predicate might not be well-formed.",
        );
        self.inhale(&mut st, body, &ctx)
    }
}
