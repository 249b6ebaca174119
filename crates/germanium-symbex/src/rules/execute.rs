//! Execution of statements in continuation-passing style: `k` receives every state that
//! reaches the end of the statements. Branches (`if`) are explored one after the other,
//! each inside its own solver scope; a branch found infeasible is skipped.

use std::collections::HashSet;

use germanium_semantics::{CallTarget, VarId};
use germanium_smt::Term;
use germanium_syntax::ast::{Expr, ExprKind, NewFields, Stmt, StmtKind};

use crate::errors::{ErrorContext, Reason};
use crate::resources;
use crate::rules::context::{Abort, Verifier, R};
use crate::rules::jumps::WhileFrame;
use crate::state::{Heap, Permission, State, PRE_STATE};
use crate::trace::Step;

pub type Cont<'k, 'e, 'a> = dyn FnMut(&mut Verifier<'e, 'a>, State) -> R<()> + 'k;

/// Ends a path quietly: a failure on one branch does not stop the others.
pub fn path_end(r: R<()>) -> R<()> {
    match r {
        Err(Abort::Failed) => Ok(()),
        other => other,
    }
}

impl<'e, 'a> Verifier<'e, 'a> {
    pub fn exec_seq(&mut self, mut st: State, stmts: &[Stmt], k: &mut Cont<'_, 'e, 'a>) -> R<()> {
        // Straight-line statements run in a loop; only branching ones nest continuations.
        let mut rest = stmts;
        while let Some((first, tail)) = rest.split_first() {
            if !st.label_loops.is_empty() {
                self.move_on(&mut st, Some(first.id), first.span)?;
            }
            if let StmtKind::Label(name, _) = &first.kind {
                match self.loop_headed_by(&st, &name.name) {
                    Some(true) => return self.back_to_loop_head(st, &name.name),
                    Some(false) => {
                        return self.enter_label_loop(
                            st,
                            first,
                            &mut |v: &mut Verifier<'e, 'a>, s| v.exec_seq(s, tail, k),
                        )
                    }
                    None => {}
                }
            }
            if matches!(
                first.kind,
                StmtKind::Block(_)
                    | StmtKind::If { .. }
                    | StmtKind::While { .. }
                    | StmtKind::Goto(_)
            ) {
                return self.exec_stmt(st, first, &mut |v: &mut Verifier<'e, 'a>, s| {
                    v.exec_seq(s, tail, k)
                });
            }
            self.note_state(&st);
            let view = self.view_of(&st, &st.heap);
            self.traced(Step::Execute, first.span, view, String::new, |v| {
                v.step(&mut st, first)
            })?;
            rest = tail;
        }
        k(self, st)
    }

    fn exec_stmt(&mut self, st: State, s: &Stmt, k: &mut Cont<'_, 'e, 'a>) -> R<()> {
        let view = self.view_of(&st, &st.heap);
        self.traced(Step::Execute, s.span, view, String::new, |v| {
            v.exec_stmt_step(st, s, k)
        })
    }

    fn exec_stmt_step(&mut self, mut st: State, s: &Stmt, k: &mut Cont<'_, 'e, 'a>) -> R<()> {
        self.note_state(&st);
        match &s.kind {
            StmtKind::Block(b) => self.exec_seq(st, &b.stmts, k),
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                let ctx =
                    ErrorContext::at("if.failed", cond.span, "Conditional statement might fail.");
                let heap = st.heap.clone();
                let c = self.eval(&st, &heap, cond, &ctx)?;
                let empty = Vec::new();
                let branches = [
                    (c.clone(), &then.stmts),
                    (
                        Term::not(c.clone()),
                        otherwise.as_ref().map_or(&empty, |b| &b.stmts),
                    ),
                ];
                // Where the path's literal facts decide the condition, only that side is
                // feasible, and no query is needed.
                let mut feasible: Vec<(Term, &[Stmt])> = Vec::new();
                let decided = self.decider.decides(&c);
                for (i, (guard, stmts)) in branches.into_iter().enumerate() {
                    let possible = match decided {
                        Some(holds) => holds == (i == 0),
                        None => self.feasible(guard.clone(), s.span)?,
                    };
                    if possible {
                        feasible.push((guard, stmts.as_slice()));
                    }
                }
                self.exec_sides(st, s, &c, feasible, k)
            }
            StmtKind::While { .. } => self.exec_while(st, s, k),
            StmtKind::Goto(label) => {
                if !self.feasible(Term::tt(), s.span)? {
                    return Ok(());
                }
                self.goto(st, s, &label.name)
            }
            _ => {
                self.step(&mut st, s)?;
                k(self, st)
            }
        }
    }

    /// The statements that do not branch.
    pub(crate) fn step(&mut self, st: &mut State, s: &Stmt) -> R<()> {
        match &s.kind {
            StmtKind::VarDecl(decls, init) => {
                let mut last = None;
                for i in 0..decls.len() {
                    let Some(var) = self.env.sem.binders.get(&(s.id, i)).copied() else {
                        return Err(self.unsupported(s.span, "this declaration"));
                    };
                    let info = self.env.sem.var(var).clone();
                    let sort = self.sort_of(&info.ty, s.span)?;
                    let t = self.fresh(&info.name, sort, s.span)?;
                    st.store.insert(var, t);
                    last = Some(var);
                }
                if let (Some(e), Some(var)) = (init, last) {
                    // `var x, y := m(..)`: a declaration, then a call assigning to the variables.
                    if let (ExprKind::Call(_, args), Some(CallTarget::Method(m))) =
                        (&e.kind, self.env.sem.call(e.id).cloned())
                    {
                        let vars: Option<Vec<VarId>> = (0..decls.len())
                            .map(|i| self.env.sem.binders.get(&(s.id, i)).copied())
                            .collect();
                        let Some(vars) = vars else {
                            return Err(self.unsupported(s.span, "this declaration"));
                        };
                        let targets: Vec<crate::rules::call_targets::ResultTarget> = vars
                            .into_iter()
                            .map(crate::rules::call_targets::ResultTarget::Local)
                            .collect();
                        return self.call_method(st, s, &m, args, &targets);
                    }
                    let ctx =
                        ErrorContext::at("assignment.failed", s.span, "Assignment might fail.");
                    let heap = st.heap.clone();
                    let t = self.eval(st, &heap, e, &ctx)?;
                    let t = self.name_value(t, s)?;
                    st.store.insert(var, t);
                }
                Ok(())
            }
            StmtKind::Assign(targets, rhs) => {
                if let ExprKind::Call(name, args) = &rhs.kind {
                    if let Some(CallTarget::Method(m)) = self.env.sem.call(rhs.id).cloned() {
                        let _ = name;
                        let targets = self.call_targets(st, s, targets)?;
                        return self.call_method(st, s, &m, args, &targets);
                    }
                }
                let ctx = ErrorContext::at("assignment.failed", s.span, "Assignment might fail.");
                let [target] = targets.as_slice() else {
                    return Err(self.unsupported(s.span, "this assignment"));
                };
                match &target.kind {
                    ExprKind::Ident(_) => {
                        let heap = st.heap.clone();
                        let t = self.eval(st, &heap, rhs, &ctx)?;
                        let var = self.var_of(target)?;
                        let t = self.name_value(t, s)?;
                        st.store.insert(var, t);
                        Ok(())
                    }
                    ExprKind::FieldAccess(rcv, _) => {
                        let (field, _) = self.field_location(target)?;
                        let heap = st.heap.clone();
                        let r = self.eval(st, &heap, rcv, &ctx)?;
                        let t = self.eval(st, &heap, rhs, &ctx)?;
                        // Named like local values: a field updated in a loop of folds and
                        // unfolds would otherwise grow one term per step.
                        let t = self.name_value(t, s)?;
                        self.write_field(st, s, target, &field, r, t)
                    }
                    _ => Err(self.unsupported(s.span, "this assignment target")),
                }
            }
            StmtKind::Call(name, args) => match self.env.sem.call(s.id).cloned() {
                Some(CallTarget::Method(m)) => self.call_method(st, s, &m, args, &[]),
                _ => Err(self.unsupported(name.span, "this call statement")),
            },
            StmtKind::New(target, fields) => {
                // A field target's receiver is evaluated before the allocation.
                let destination = self.call_target(st, s, target)?;
                let r = self.fresh("new", self.env.ref_sort.clone(), s.span)?;
                self.assume(Term::not(Term::eq(r.clone(), self.env.null())), s.span)?;
                // A new object differs from every reference the state knows.
                let mut known = st.heap.receivers();
                let held = resources::held(&st.heap, None);
                let values = st.store.values().chain(held.iter().map(|h| &h.snap));
                for t in values.chain(self.member.bound.iter().map(|(_, t)| t)) {
                    if *t.sort() == self.env.ref_sort && !known.contains(t) {
                        known.push(t.clone());
                    }
                }
                for other in known {
                    self.assume(Term::not(Term::eq(r.clone(), other)), s.span)?;
                }
                self.assume_not_in_snapshots(st, &r, s.span)?;
                let names: Vec<String> = match fields {
                    NewFields::All => self.env.sem.field_order.clone(),
                    NewFields::Fields(fs) => fs.iter().map(|f| f.name.clone()).collect(),
                };
                for f in names {
                    self.add_field_chunk(st, &f, r.clone(), Permission::write(), target)?;
                }
                self.assign_call_results(st, s, &[destination], vec![r])
            }
            StmtKind::Label(name, invariants) => {
                // Not a loop head: its invariants are checked like assertions.
                let ctx = ErrorContext::at_conjunct(
                    "invariant.not.established",
                    "Loop invariant might not hold on entry.",
                );
                let mut scratch = st.clone();
                for inv in invariants {
                    self.consume(&mut scratch, &st.heap, inv, &ctx.for_clause(inv))?;
                }
                st.old_heaps.insert(name.name.clone(), st.heap.clone());
                Ok(())
            }
            StmtKind::Inhale(a) => {
                let ctx = ErrorContext::at("inhale.failed", a.span, "Inhale might fail.");
                self.produce(st, a, &ctx)
            }
            StmtKind::Assume(a) => {
                // `assume A` with permissions: assume that A could be exhaled here.
                let ctx = ErrorContext::at("inhale.failed", a.span, "Inhale might fail.");
                if !crate::env::analysis::is_impure(self.env.sem, a) {
                    return self.produce(st, a, &ctx);
                }
                let mut scratch = st.clone();
                self.with_modes(
                    |m| m.assuming = true,
                    |v| v.consume(&mut scratch, &st.heap, a, &ctx),
                )
            }
            StmtKind::Exhale(a) => {
                let ctx = ErrorContext::at("exhale.failed", a.span, "Exhale might fail.");
                let heap = st.heap.clone();
                self.consume(st, &heap, a, &ctx)
            }
            StmtKind::Assert(a) => {
                // Viper reports these at the assertion (which may start after the keyword's line).
                let ctx = ErrorContext::at("assert.failed", a.span, "Assert might fail.");
                let mut scratch = st.clone();
                self.consume(&mut scratch, &st.heap, a, &ctx)
            }
            StmtKind::Refute(a) => self.refute(st, s, a),
            StmtKind::Quasihavoc(cond, res) => self.quasihavoc(st, s, cond.as_ref(), res),
            StmtKind::Quasihavocall(vars, cond, res) => {
                self.quasihavocall(st, s, vars.len(), cond.as_ref(), res)
            }
            StmtKind::Fold(a) => {
                let text = crate::errors::text_of(self.env.sources, a.span);
                let ctx =
                    ErrorContext::at("fold.failed", s.span, format!("Folding {text} might fail."));
                self.fold(st, a, &ctx)
            }
            StmtKind::Unfold(a) => {
                let text = crate::errors::text_of(self.env.sources, a.span);
                let ctx = ErrorContext::at(
                    "unfold.failed",
                    s.span,
                    format!("Unfolding {text} might fail."),
                );
                let heap = st.heap.clone();
                self.unfold(st, &heap, a, &ctx)
            }
            StmtKind::Package(wand, proof) => self.package(st, s, wand, proof.as_ref()),
            StmtKind::Apply(wand) => {
                let ctx = ErrorContext::at("apply.failed", s.span, "Applying wand might fail.");
                self.apply_wand(st, wand, &ctx)
            }
            StmtKind::MacroRef(_) | StmtKind::Define(_) => {
                Err(self.unsupported(s.span, "an unexpanded macro"))
            }
            StmtKind::Block(_)
            | StmtKind::If { .. }
            | StmtKind::While { .. }
            | StmtKind::Goto(_) => {
                unreachable!("branching statements are handled by exec_stmt")
            }
        }
    }

    /// A value assigned by `s`, named (see [`Verifier::name_term`]).
    fn name_value(&mut self, t: Term, s: &Stmt) -> R<Term> {
        self.name_term(t, "v", s.span)
    }

    pub fn var_of(&mut self, e: &Expr) -> R<VarId> {
        match self.env.sem.idents.get(e.id.0 as usize).copied().flatten() {
            Some(v) => Ok(v),
            None => Err(self.unsupported(e.span, "an unresolved variable")),
        }
    }

    fn call_method(
        &mut self,
        st: &mut State,
        s: &Stmt,
        name: &str,
        args: &[Expr],
        targets: &[crate::rules::call_targets::ResultTarget<'_>],
    ) -> R<()> {
        let Some(callee) = self.env.methods.get(name).copied() else {
            return Err(self.unsupported(s.span, "an unknown method"));
        };
        let Some(info) = self.env.sem.methods.get(name).cloned() else {
            return Err(self.unsupported(s.span, "an unknown method"));
        };
        let ctx = ErrorContext::at("call.failed", s.span, "Method call might fail.");
        let heap = st.heap.clone();
        let mut values = Vec::new();
        for a in args {
            values.push(self.eval(st, &heap, a, &ctx)?);
        }
        let depth = self.member.bound.len();
        self.member
            .bound
            .extend(info.params.iter().copied().zip(values));
        if !self.member.method_measures.is_empty() {
            if let Err(e) = self.check_call_terminates(st, &heap, callee, s) {
                self.member.bound.truncate(depth);
                return Err(e);
            }
        }
        let result = self.call_bound(st, s, name, callee, &info.returns, heap);
        let returned: Vec<Term> = self
            .member
            .bound
            .drain(depth..)
            .skip(info.params.len())
            .map(|(_, t)| t)
            .collect();
        result?;
        self.assign_call_results(st, s, targets, returned)
    }

    fn call_bound(
        &mut self,
        st: &mut State,
        s: &Stmt,
        name: &str,
        callee: &germanium_syntax::ast::Method,
        returns: &[VarId],
        pre_heap: Heap,
    ) -> R<()> {
        let pre_ctx = ErrorContext::at(
            "call.precondition",
            s.span,
            format!("The precondition of method {name} might not hold."),
        );
        // The callee's `rd`: chosen now, as small as its precondition needs.
        let read = self.choose_read_amount(s.span)?;
        self.with_modes(
            |m| m.read_amount = read.clone(),
            |v| -> R<()> {
                for pre in &callee.contract.requires {
                    v.consume(st, &pre_heap, pre, &pre_ctx)?;
                }
                Ok(())
            },
        )?;
        for r in returns {
            let info = self.env.sem.var(*r).clone();
            let sort = self.sort_of(&info.ty, s.span)?;
            let t = self.fresh(&info.name, sort, s.span)?;
            self.member.bound.push((*r, t));
        }
        let post_ctx = ErrorContext::at("call.failed", s.span, "Method call might fail.");
        let saved = st.old_heaps.insert(PRE_STATE.to_string(), pre_heap);
        // The callee's postcondition was checked to be well-formed where it was verified.
        let result = self.with_modes(
            |m| {
                m.checking = false;
                m.trusted = true;
                m.read_amount = read;
            },
            |v| -> R<()> {
                for post in &callee.contract.ensures {
                    v.produce(st, post, &post_ctx)?;
                }
                Ok(())
            },
        );
        match saved {
            Some(h) => st.old_heaps.insert(PRE_STATE.to_string(), h),
            None => st.old_heaps.remove(PRE_STATE),
        };
        result
    }

    fn refute(&mut self, st: &mut State, s: &Stmt, a: &Expr) -> R<()> {
        let ctx = ErrorContext::at("refute.failed", s.span, "Refute might fail.");
        let errors_before = self.errors.len();
        self.push(s.span)?;
        let mut scratch = st.clone();
        let result = self.consume(&mut scratch, &st.heap, a, &ctx);
        let failed_checks = self.errors.len() > errors_before;
        self.errors.truncate(errors_before);
        self.pop(s.span)?;
        match result {
            Ok(()) if !failed_checks => Ok(()),
            // A package's dry run checks nothing and may lack what the real step extracts:
            // only the real step says whether the assertion was refuted.
            Ok(()) | Err(Abort::Failed) if self.modes.extracting => Ok(()),
            Ok(()) | Err(Abort::Failed) => {
                self.member.refuted.insert(s.id);
                Ok(())
            }
            Err(other) => Err(other),
        }
    }

    /// Reports every `refute` in `stmts` whose assertion held on all paths that reached it.
    pub fn report_refutations(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            match &s.kind {
                StmtKind::Refute(a) if !self.member.refuted.contains(&s.id) => {
                    let ctx = ErrorContext::at("refute.failed", s.span, "Refute might fail.");
                    self.report(&ctx, Reason::RefutationTrue, a);
                }
                StmtKind::Block(b)
                | StmtKind::While { body: b, .. }
                | StmtKind::Package(_, Some(b)) => self.report_refutations(&b.stmts),
                StmtKind::If {
                    then, otherwise, ..
                } => {
                    self.report_refutations(&then.stmts);
                    if let Some(o) = otherwise {
                        self.report_refutations(&o.stmts);
                    }
                }
                _ => {}
            }
        }
    }

    fn exec_while(&mut self, st: State, s: &Stmt, k: &mut Cont<'_, 'e, 'a>) -> R<()> {
        let StmtKind::While {
            cond,
            invariants,
            decreases,
            body,
        } = &s.kind
        else {
            return Err(self.unsupported(s.span, "this loop"));
        };
        // The loop's `rd`: chosen on entry, as small as its invariant needs; the same in
        // the body and after the loop.
        let read = self.choose_read_amount(s.span)?;
        let after = self.with_modes(
            |m| m.read_amount = read.clone().or(m.read_amount.take()),
            |v| v.exec_loop(st, s, cond, invariants, decreases, &body.stmts),
        )?;
        k(self, after)
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_loop(
        &mut self,
        st: State,
        s: &Stmt,
        cond: &Expr,
        invariants: &[Expr],
        decreases: &[germanium_syntax::ast::Decreases],
        body: &[Stmt],
    ) -> R<State> {
        // On entry: the invariant must hold; what it does not mention stays in the frame.
        let mut frame = self.establish_invariants(&st, invariants)?;
        let mut modified = HashSet::new();
        assigned_vars(self.env.sem, body, &mut modified);
        let wellformed =
            ErrorContext::at_conjunct("not.wellformed", "Contract might not be well-formed.");
        let while_ctx = ErrorContext::at("while.failed", cond.span, "While statement might fail.");
        // The body, from an arbitrary state satisfying the invariant and the condition.
        let mut inner = State {
            heap: Heap::new(),
            ..st.clone()
        };
        self.havoc(&mut inner, &modified, s)?;
        self.push(s.span)?;
        self.member.loop_frames.push(WhileFrame {
            id: s.id,
            frame: frame.heap.clone(),
            start: Vec::new(),
        });
        let body_result = (|| -> R<()> {
            for inv in invariants {
                self.produce(&mut inner, inv, &wellformed.for_clause(inv))?;
            }
            let heap = inner.heap.clone();
            let c = self.eval(&inner, &heap, cond, &while_ctx)?;
            self.assume(c, s.span)?;
            let start = if germanium_semantics::calls::has_measure(decreases) {
                self.loop_measures_at_start(&inner, decreases, s.span)?
            } else {
                Vec::new()
            };
            if let Some(w) = self.member.loop_frames.last_mut() {
                w.start = start.clone();
            }
            self.exec_seq(inner, body, &mut |v: &mut Verifier<'e, 'a>, end: State| {
                v.end_of_while_body(end, s, &start)
            })
        })();
        self.member.loop_frames.pop();
        self.pop(s.span)?;
        path_end(body_result)?;
        // After the loop: the frame, havocked variables, the invariant and the negated condition.
        self.havoc(&mut frame, &modified, s)?;
        for inv in invariants {
            self.produce(&mut frame, inv, &wellformed.for_clause(inv))?;
        }
        let heap = frame.heap.clone();
        let c = self.eval(&frame, &heap, cond, &while_ctx)?;
        self.assume(Term::not(c), s.span)?;
        Ok(frame)
    }

    /// The end of an iteration of the `while` loop `w` that began with measures `start`:
    /// the measures must have decreased and the invariant must hold again.
    pub(crate) fn end_of_while_body(
        &mut self,
        mut end: State,
        w: &Stmt,
        start: &[crate::rules::termination::Measure],
    ) -> R<()> {
        let StmtKind::While {
            cond,
            invariants,
            decreases,
            ..
        } = &w.kind
        else {
            return Err(self.unsupported(w.span, "this loop"));
        };
        self.move_on(&mut end, Some(w.id), w.span)?;
        if !start.is_empty() {
            self.loop_measures_at_end(&end, decreases, cond, start)?;
        }
        self.preserve_invariants(end, invariants)
    }

    /// At the end of an iteration (of a `while` or a loop made of labels): `invariants` must
    /// hold again; what is left of the state is no longer needed.
    pub(crate) fn preserve_invariants(&mut self, mut end: State, invariants: &[Expr]) -> R<()> {
        let preserved = ErrorContext::at_conjunct(
            "invariant.not.preserved",
            "Loop invariant might not be preserved.",
        );
        let heap = end.heap.clone();
        self.with_modes(
            |m| m.lenient_reads = true,
            |v| -> R<()> {
                for inv in invariants {
                    v.consume(&mut end, &heap, inv, &preserved.for_clause(inv))?;
                }
                Ok(())
            },
        )
    }

    pub(crate) fn havoc(&mut self, st: &mut State, vars: &HashSet<VarId>, s: &Stmt) -> R<()> {
        let mut sorted: Vec<&VarId> = vars.iter().collect();
        sorted.sort();
        for var in sorted {
            if st.store.contains_key(var) {
                let info = self.env.sem.var(*var).clone();
                let sort = self.sort_of(&info.ty, s.span)?;
                let t = self.fresh(&info.name, sort, s.span)?;
                st.store.insert(*var, t);
            }
        }
        Ok(())
    }
}

/// The (statement list, index) pairs leading from `stmts` down to the first statement
/// satisfying `wanted`, outermost first; empty if there is none.
pub(crate) fn path_to<'x>(
    stmts: &'x [Stmt],
    wanted: &dyn Fn(&Stmt) -> bool,
    out: &mut Vec<(&'x [Stmt], usize)>,
) -> bool {
    for (i, s) in stmts.iter().enumerate() {
        out.push((stmts, i));
        if wanted(s) {
            return true;
        }
        let found = match &s.kind {
            StmtKind::Block(b) | StmtKind::While { body: b, .. } => path_to(&b.stmts, wanted, out),
            StmtKind::If {
                then, otherwise, ..
            } => {
                path_to(&then.stmts, wanted, out)
                    || otherwise
                        .as_ref()
                        .is_some_and(|o| path_to(&o.stmts, wanted, out))
            }
            _ => false,
        };
        if found {
            return true;
        }
        out.pop();
    }
    false
}

/// Variables a statement list may assign. Statements after a `goto` up to the next label
/// cannot run (as Viper's control-flow graph has it: they belong to no loop).
pub(crate) fn assigned_vars(
    sem: &germanium_semantics::Semantics,
    stmts: &[Stmt],
    out: &mut HashSet<VarId>,
) {
    let target = |e: &Expr, out: &mut HashSet<VarId>| {
        if let ExprKind::Ident(_) = e.kind {
            if let Some(v) = sem.idents.get(e.id.0 as usize).copied().flatten() {
                out.insert(v);
            }
        }
    };
    let mut dead = false;
    for s in stmts {
        match &s.kind {
            StmtKind::Label(..) => dead = false,
            _ if dead => {}
            StmtKind::Goto(_) => dead = true,
            StmtKind::Assign(targets, _) => targets.iter().for_each(|t| target(t, out)),
            StmtKind::New(t, _) => target(t, out),
            StmtKind::Block(b) => assigned_vars(sem, &b.stmts, out),
            StmtKind::If {
                then, otherwise, ..
            } => {
                assigned_vars(sem, &then.stmts, out);
                if let Some(o) = otherwise {
                    assigned_vars(sem, &o.stmts, out);
                }
            }
            StmtKind::While { body, .. } => assigned_vars(sem, &body.stmts, out),
            _ => {}
        }
    }
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// Checks that `invariants` hold on entry to a loop (a `while` or a label loop) and
    /// returns the frame: `st` without what the invariants consumed. Well-definedness of the
    /// invariants is checked on the body's entry state, so reads here need no permission of
    /// their own (as in Viper's Carbon).
    pub(crate) fn establish_invariants<'x>(
        &mut self,
        st: &State,
        invariants: impl IntoIterator<Item = &'x Expr>,
    ) -> R<State> {
        let established = ErrorContext::at_conjunct(
            "invariant.not.established",
            "Loop invariant might not hold on entry.",
        );
        let mut frame = st.clone();
        self.with_modes(
            |m| m.lenient_reads = true,
            |v| -> R<()> {
                for inv in invariants {
                    v.consume(&mut frame, &st.heap, inv, &established.for_clause(inv))?;
                }
                Ok(())
            },
        )?;
        Ok(frame)
    }
}
