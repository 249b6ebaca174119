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
use crate::state::{Heap, Permission, State, PRE_STATE};
use crate::trace::Step;

/// Bound on the `goto`s followed on one path (beyond it, the program loops through labels).
const MAX_GOTOS_PER_PATH: usize = 32;

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
            if let StmtKind::Label(name, _) = &first.kind {
                if let Some(&end_id) = self.member.loop_heads.get(&name.name) {
                    let index = stmts.len() - rest.len();
                    let Some(end) = stmts
                        .iter()
                        .position(|x| x.id == end_id)
                        .filter(|e| *e >= index)
                    else {
                        return Err(self.unsupported(first.span, "this loop made of labels"));
                    };
                    return self.exec_label_loop(st, stmts, index, end, k);
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
                if self.member.label_loops.iter().any(|l| l.name == label.name) {
                    return self.goto_loop_head(st, &label.name);
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
                StmtKind::Block(b) | StmtKind::While { body: b, .. } => {
                    self.report_refutations(&b.stmts)
                }
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

    /// `goto label` where the label comes later in this or an enclosing statement list:
    /// execution resumes at the label (taking back the frames of the loops it leaves).
    fn goto(&mut self, mut st: State, s: &Stmt, label: &str) -> R<()> {
        let Some(body) = self.member.method.and_then(|m| m.body.as_ref()) else {
            return Err(self.unsupported(s.span, "`goto` here"));
        };
        let mut to_goto = Vec::new();
        let mut to_label = Vec::new();
        path_to(&body.stmts, &|x: &Stmt| x.id == s.id, &mut to_goto);
        path_to(
            &body.stmts,
            &|x: &Stmt| matches!(&x.kind, StmtKind::Label(l, _) if l.name == label),
            &mut to_label,
        );
        let Some(k) = to_label.len().checked_sub(1) else {
            return Err(self.unsupported(s.span, "`goto` to this label"));
        };
        let same_level =
            |a: &(&[Stmt], usize), b: &(&[Stmt], usize)| std::ptr::eq(a.0, b.0) && a.1 == b.1;
        let forward_out = to_goto.len() > k
            && to_label[..k]
                .iter()
                .zip(&to_goto[..k])
                .all(|(a, b)| same_level(a, b))
            && std::ptr::eq(to_label[k].0, to_goto[k].0)
            && to_label[k].1 > to_goto[k].1
            && !to_label[..k]
                .iter()
                .any(|(list, i)| matches!(list[*i].kind, StmtKind::While { .. }));
        if !forward_out {
            // Jumps back would make loops without invariants, which Viper verifies as loops.
            return Err(self.unsupported(s.span, "`goto` backwards or into a nested block or loop"));
        }
        if self.member.gotos_on_path >= MAX_GOTOS_PER_PATH {
            return Err(self.unsupported(s.span, "loops made of labels and `goto`"));
        }
        let exited = to_goto[k..to_goto.len() - 1]
            .iter()
            .filter(|(list, i)| matches!(list[*i].kind, StmtKind::While { .. }))
            .count();
        if exited > self.member.loop_frames.len() {
            return Err(self.unsupported(s.span, "this `goto`"));
        }
        let kept = self.member.loop_frames.len() - exited;
        let frames: Vec<Heap> = self.member.loop_frames.drain(kept..).collect();
        // Loops made of labels whose bodies the target lies outside of are left too.
        let inside = self
            .member
            .label_loops
            .iter()
            .take_while(|l| l.contains(&to_label))
            .count();
        let left_label_loops = self.member.label_loops.split_off(inside);
        for lp in left_label_loops.iter().rev() {
            self.readd_frame(&mut st, &lp.frame, s.span)?;
        }
        for frame in &frames {
            self.readd_frame(&mut st, frame, s.span)?;
        }
        let (last_list, last_index) = to_label[k];
        let outer = to_label[..k].to_vec();
        self.member.gotos_on_path += 1;
        let r = self.run_from(st, last_list, last_index, &outer);
        self.member.gotos_on_path -= 1;
        self.member.loop_frames.extend(frames);
        self.member.label_loops.extend(left_label_loops);
        r
    }

    /// Continues after the statement at each level of `chain`, innermost first, then ends
    /// the method.
    fn resume(&mut self, st: State, chain: &[(&[Stmt], usize)]) -> R<()> {
        match chain.split_last() {
            None => self.method_end(st),
            Some(((list, index), outer)) => self.run_from(st, list, index + 1, outer),
        }
    }

    /// Runs `list[from..]`, then the rest of `outer`. If that starts inside the body of a
    /// loop made of labels, running past the body's end leaves the loop (its frame comes
    /// back) as it does on the ordinary path.
    fn run_from(
        &mut self,
        st: State,
        list: &[Stmt],
        from: usize,
        outer: &[(&[Stmt], usize)],
    ) -> R<()> {
        let inside = list.get(from).and_then(|first| {
            self.member
                .label_loops
                .iter()
                .rposition(|l| l.body.contains(&first.id))
        });
        let end = inside.and_then(|pos| {
            list.iter()
                .position(|x| x.id == self.member.label_loops[pos].last)
        });
        if let (Some(pos), Some(end)) = (inside, end) {
            let lp = self.member.label_loops[pos].clone();
            let body = &list[from..=end.max(from)];
            return self.exec_seq(st, body, &mut |v: &mut Verifier<'e, 'a>, mut out: State| {
                let left = v.member.label_loops.split_off(pos);
                v.readd_frame(&mut out, &lp.frame, list[end].span)?;
                let r = v.run_from(out, list, end + 1, outer);
                v.member.label_loops.extend(left);
                r
            });
        }
        let rest = &list[from.min(list.len())..];
        self.exec_seq(st, rest, &mut |v: &mut Verifier<'e, 'a>, st2| {
            v.resume(st2, outer)
        })
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
            store: st.store.clone(),
            heap: Heap::new(),
            old_heaps: st.old_heaps.clone(),
        };
        self.havoc(&mut inner, &modified, s)?;
        self.push(s.span)?;
        self.member.loop_frames.push(frame.heap.clone());
        let body_result = (|| -> R<()> {
            for inv in invariants {
                self.produce(&mut inner, inv, &wellformed.for_clause(inv))?;
            }
            let heap = inner.heap.clone();
            let c = self.eval(&inner, &heap, cond, &while_ctx)?;
            self.assume(c, s.span)?;
            let start = if crate::rules::termination::has_measure(decreases) {
                self.loop_measures_at_start(&inner, decreases, s.span)?
            } else {
                Vec::new()
            };
            let preserved = ErrorContext::at_conjunct(
                "invariant.not.preserved",
                "Loop invariant might not be preserved.",
            );
            self.exec_seq(
                inner,
                body,
                &mut |v: &mut Verifier<'e, 'a>, mut end: State| {
                    if !start.is_empty() {
                        v.loop_measures_at_end(&end, decreases, cond, &start)?;
                    }
                    let heap = end.heap.clone();
                    v.with_modes(
                        |m| m.lenient_reads = true,
                        |v| -> R<()> {
                            for inv in invariants {
                                v.consume(&mut end, &heap, inv, &preserved.for_clause(inv))?;
                            }
                            Ok(())
                        },
                    )
                },
            )
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
