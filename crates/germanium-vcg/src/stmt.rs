//! Statements and methods as guarded commands over the explicit state: assignments give
//! new names, branches are joined, loops are cut by their invariants (the body is checked
//! from a state where the variables it assigns and the heap are arbitrary and only the
//! invariant's permissions are held), calls exhale the callee's precondition and inhale its
//! postcondition.

use std::collections::HashSet;

use germanium_semantics::{CallTarget, VarId};
use germanium_smt::Term;
use germanium_syntax::ast::{Expr, ExprKind, Method, NewFields, Stmt, StmtKind};
use germanium_verifier::errors::{ErrorContext, Reason};

use crate::lower::{unsupported, Lower, R};
use crate::state::{grows, Memory, State, OLD};

impl Lower<'_, '_> {
    /// The method's contract well-formedness, its body against the contract.
    pub fn method(&mut self, m: &Method) -> R<()> {
        let Some(info) = self.t.sem.methods.get(&m.name.name).cloned() else {
            return unsupported(m.name.span, "this method");
        };
        let decreases = germanium_semantics::auto_import::method_decreases(m);
        self.nests_instances =
            germanium_semantics::auto_import::has_predicate_measure(decreases, self.t.sem);
        let memory = Memory::empty(&mut self.vc, self.t);
        let null = Term::select(memory.allocated.clone(), self.t.theories.null());
        self.vc.fact(null);
        let mut st = State {
            store: Default::default(),
            memory,
            labels: Default::default(),
            reach: Term::tt(),
        };
        for v in info.params.iter().chain(&info.returns) {
            self.havoc_var(&mut st, *v, m.name.span)?;
        }
        // The method's own `rd` (seed 003), where it has one.
        let mut own: Vec<&Expr> = m
            .contract
            .requires
            .iter()
            .chain(&m.contract.ensures)
            .collect();
        if let Some(b) = &m.body {
            germanium_semantics::visit::walk_stmts(b, &mut |s| {
                own.extend(germanium_semantics::visit::stmt_exprs(s))
            });
        }
        if own.iter().any(|e| crate::read_permissions::mentions_rd(e)) {
            let contract: Vec<&Expr> = m
                .contract
                .requires
                .iter()
                .chain(&m.contract.ensures)
                .collect();
            self.read_amount = Some(self.small_read_amount(&st, &contract)?);
        }
        let wellformed =
            ErrorContext::at_conjunct("not.wellformed", "Contract might not be well-formed.");
        self.inhale_contract(&mut st, &m.contract.requires, &wellformed)?;
        st.labels.insert(OLD.to_string(), st.memory.clone());
        // The postcondition is well-formed with its own permissions, after the precondition.
        let mut post_state = st.clone();
        post_state.memory = Memory::empty(&mut self.vc, self.t);
        self.side_path(&st.reach, |l, reach| {
            post_state.reach = reach;
            l.inhale_contract(&mut post_state, &m.contract.ensures, &wellformed)
        })?;
        let Some(body) = &m.body else { return Ok(()) };
        let caller = self.caller_at(&st, &m.name.name, &m.contract.decreases, true)?;
        self.with_caller(caller, |l| l.stmts(&mut st, &body.stmts))?;
        if let Some(label) = self.pending_jumps.keys().next() {
            return unsupported(
                m.name.span,
                format!("a jump to the label {label} from here"),
            );
        }
        let violated = ErrorContext::at_conjunct(
            "postcondition.violated",
            format!("Postcondition of {} might not hold.", m.name.name),
        );
        let clauses = with_contexts(&m.contract.ensures, &violated);
        self.leniently(|l| l.exhale_all(&mut st, &clauses, false))
    }

    /// A fresh value for `v` (a reference: an allocated one, as every value of the store).
    fn havoc_var(&mut self, st: &mut State, v: VarId, span: germanium_syntax::Span) -> R<()> {
        let info = self.t.sem.var(v).clone();
        let sort = self.sort(&info.ty, span)?;
        let t = self.vc.fresh(&info.name, sort);
        if info.ty == germanium_semantics::types::Type::Ref {
            let allocated = Term::select(st.memory.allocated.clone(), t.clone());
            self.vc.fact(allocated);
        }
        st.store.insert(v, t);
        Ok(())
    }

    pub fn stmts(&mut self, st: &mut State, stmts: &[Stmt]) -> R<()> {
        for s in stmts {
            self.stmt(st, s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, st: &mut State, s: &Stmt) -> R<()> {
        self.defined_facts.clear();
        match &s.kind {
            StmtKind::VarDecl(decls, init) => {
                for i in 0..decls.len() {
                    let Some(v) = self.t.sem.binders.get(&(s.id, i)).copied() else {
                        return unsupported(s.span, "this declaration");
                    };
                    self.havoc_var(st, v, s.span)?;
                }
                if let Some(init) = init {
                    if let Some(CallTarget::Method(name)) = self.t.sem.call(init.id).cloned() {
                        let ExprKind::Call(_, args) = &init.kind else {
                            return unsupported(s.span, "this call");
                        };
                        let results = self.call(st, s, &name, args)?;
                        for (i, value) in results.into_iter().enumerate() {
                            let Some(v) = self.t.sem.binders.get(&(s.id, i)).copied() else {
                                return unsupported(s.span, "this declaration");
                            };
                            st.store.insert(v, value);
                        }
                        return Ok(());
                    }
                }
                if let (Some(init), [decl]) = (init, decls.as_slice()) {
                    let ctx =
                        ErrorContext::at("assignment.failed", s.span, "Assignment might fail.");
                    let v = self.t.sem.binders[&(s.id, 0)];
                    let _ = decl;
                    let reach = st.reach.clone();
                    let t = self.expr(st, &reach, init, &ctx)?;
                    let name = self.t.sem.var(v).name.clone();
                    let t = self.vc.define(&name, t);
                    st.store.insert(v, t);
                }
                Ok(())
            }
            StmtKind::Assign(targets, rhs) => {
                if let Some(CallTarget::Method(name)) = self.t.sem.call(rhs.id).cloned() {
                    let ExprKind::Call(_, args) = &rhs.kind else {
                        return unsupported(s.span, "this call");
                    };
                    // Receivers are read before the call, the fields written after it (their
                    // permission needed then).
                    let ctx =
                        ErrorContext::at("assignment.failed", s.span, "Assignment might fail.");
                    let mut receivers = Vec::new();
                    for target in targets {
                        receivers.push(self.receiver(st, target, &ctx)?);
                    }
                    let results = self.call(st, s, &name, args)?;
                    for ((target, receiver), value) in targets.iter().zip(receivers).zip(results) {
                        self.assign_value(st, target, receiver, value, &ctx)?;
                    }
                    return Ok(());
                }
                let [target] = targets.as_slice() else {
                    return unsupported(s.span, "this assignment");
                };
                let ctx = ErrorContext::at("assignment.failed", s.span, "Assignment might fail.");
                self.assign(st, target, rhs, &ctx)
            }
            StmtKind::Call(name, args) => match self.t.sem.call(s.id).cloned() {
                Some(CallTarget::Method(m)) => self.call(st, s, &m, args).map(|_| ()),
                _ => unsupported(name.span, "this call"),
            },
            StmtKind::New(target, fields) => self.new_object(st, s, target, fields),
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                let ctx =
                    ErrorContext::at("if.failed", cond.span, "Conditional statement might fail.");
                let reach = st.reach.clone();
                let c = self.expr(st, &reach, cond, &ctx)?;
                self.branch(
                    st,
                    c,
                    |l, s| l.stmts(s, &then.stmts),
                    |l, s| match otherwise {
                        Some(o) => l.stmts(s, &o.stmts),
                        None => Ok(()),
                    },
                )
            }
            StmtKind::While { invariants, .. }
                if invariants.iter().any(crate::read_permissions::mentions_rd) =>
            {
                // A fresh `rd` for the loop (seed 003).
                let clauses: Vec<&Expr> = invariants.iter().collect();
                let rd = self.fresh_read_amount(st, &clauses, &clauses)?;
                self.with_read_amount(rd, |l| l.while_loop(st, s))
            }
            StmtKind::While { .. } => self.while_loop(st, s),
            StmtKind::Block(b) => self.stmts(st, &b.stmts),
            StmtKind::Inhale(a) => {
                let ctx = ErrorContext::at("inhale.failed", a.span, "Inhale might fail.");
                self.inhale(st, a, &ctx)
            }
            StmtKind::Exhale(a) => {
                let ctx = ErrorContext::at("exhale.failed", a.span, "Exhale might fail.");
                self.exhale(st, a, &ctx, false)
            }
            StmtKind::Assert(a) => {
                let ctx = ErrorContext::at("assert.failed", a.span, "Assert might fail.");
                self.exhale(st, a, &ctx, true)
            }
            StmtKind::Assume(a) => {
                let ctx = ErrorContext::at("inhale.failed", a.span, "Inhale might fail.");
                self.assume_exhalable(st, a, &ctx)
            }
            StmtKind::Refute(a) if !crate::assertions::is_impure(self.t.sem, a) => {
                let ctx = ErrorContext::at("refute.failed", s.span, "Refute might fail.");
                let reach = st.reach.clone();
                let t = self.expr(st, &reach, a, &ctx)?;
                self.refutation(&reach, t, &ctx, a);
                Ok(())
            }
            StmtKind::Quasihavoc(cond, res) => self.quasihavoc(st, s, cond.as_ref(), res),
            StmtKind::Quasihavocall(vars, cond, res) => {
                self.quasihavocall(st, s, vars.len(), cond.as_ref(), res)
            }
            StmtKind::Fold(a) => self.fold(st, a, s.span),
            StmtKind::Package(wand, proof) => self.package(st, s, wand, proof.as_ref()),
            StmtKind::Apply(wand) => {
                let ctx = ErrorContext::at("apply.failed", s.span, "Applying wand might fail.");
                self.apply_wand(st, wand, &ctx)
            }
            StmtKind::Unfold(a) => self.unfold(st, a, s.span),
            StmtKind::Label(name, invariants) if invariants.is_empty() => {
                // Where the jumps to it meet the path that reaches it in order.
                for jumped in self.pending_jumps.remove(&name.name).unwrap_or_default() {
                    *st = crate::state::join(&mut self.vc, st, &jumped);
                }
                self.labels_passed.insert(name.name.clone());
                st.labels.insert(name.name.clone(), st.memory.clone());
                Ok(())
            }
            // A jump forward: its state waits at the label; nothing after it is reached.
            StmtKind::Goto(target) if !self.labels_passed.contains(&target.name) => {
                let here = st.clone();
                self.pending_jumps
                    .entry(target.name.clone())
                    .or_default()
                    .push(here);
                st.reach = Term::ff();
                Ok(())
            }
            StmtKind::Goto(target) => unsupported(
                target.span,
                "a jump back to a label (a loop made of labels and gotos)",
            ),
            _ => unsupported(
                s.span,
                format!("this statement ({})", crate::expr::kind_name(&s.kind)),
            ),
        }
    }

    fn assign(&mut self, st: &mut State, target: &Expr, rhs: &Expr, ctx: &ErrorContext) -> R<()> {
        let reach = st.reach.clone();
        let receiver = self.receiver(st, target, ctx)?;
        let value = self.expr(st, &reach, rhs, ctx)?;
        self.assign_value(st, target, receiver, value, ctx)
    }

    /// The receiver of a field target, read before what is assigned to it.
    fn receiver(&mut self, st: &State, target: &Expr, ctx: &ErrorContext) -> R<Option<Term>> {
        let reach = st.reach.clone();
        match &target.kind {
            ExprKind::FieldAccess(rcv, _) => Ok(Some(self.expr(st, &reach, rcv, ctx)?)),
            _ => Ok(None),
        }
    }

    /// `target := value` (a field of `receiver`, if read already).
    fn assign_value(
        &mut self,
        st: &mut State,
        target: &Expr,
        receiver: Option<Term>,
        value: Term,
        ctx: &ErrorContext,
    ) -> R<()> {
        let reach = st.reach.clone();
        match &target.kind {
            ExprKind::Ident(_) => {
                let v = self.variable(target)?;
                let name = self.t.sem.var(v).name.clone();
                let t = self.vc.define(&name, value);
                st.store.insert(v, t);
                Ok(())
            }
            ExprKind::FieldAccess(rcv, field) => {
                let r = match receiver {
                    Some(r) => r,
                    None => self.expr(st, &reach, rcv, ctx)?,
                };
                let (Some(heap), Some(mask)) = (
                    st.memory.heap.get(&field.name).cloned(),
                    st.memory.mask.get(&field.name).cloned(),
                ) else {
                    return unsupported(field.span, "this field");
                };
                let whole = Term::eq(Term::select(mask, r.clone()), Term::real(1, 1));
                self.check(&reach, whole, ctx, Reason::InsufficientPermission, target);
                let updated = self
                    .vc
                    .define(&format!("H_{}", field.name), Term::store(heap, r, value));
                st.memory.heap.insert(field.name.clone(), updated);
                Ok(())
            }
            _ => unsupported(target.span, "this assignment target"),
        }
    }

    fn new_object(&mut self, st: &mut State, s: &Stmt, target: &Expr, fields: &NewFields) -> R<()> {
        let r = self.vc.fresh("new", self.t.reference.clone());
        // A new object: not allocated yet (so not null, nor any value of the store or heap),
        // and no permission to any of its fields is held.
        let mut facts = vec![Term::not(Term::select(
            st.memory.allocated.clone(),
            r.clone(),
        ))];
        let field_masks = st.memory.mask.iter().filter(|(f, _)| self.t.is_field(f));
        for (_, mask) in field_masks {
            facts.push(Term::eq(
                Term::select(mask.clone(), r.clone()),
                Term::real(0, 1),
            ));
        }
        self.vc.fact(Term::and(facts));
        let allocated = Term::store(st.memory.allocated.clone(), r.clone(), Term::tt());
        st.memory.allocated = self.vc.define("allocated", allocated);
        let names: Vec<String> = match fields {
            NewFields::All => self.t.fields.iter().map(|(f, _)| f.clone()).collect(),
            NewFields::Fields(list) => list.iter().map(|f| f.name.clone()).collect(),
        };
        for f in names {
            let Some(mask) = st.memory.mask.get(&f).cloned() else {
                return unsupported(s.span, "this field");
            };
            let m = self.vc.define(
                &format!("M_{f}"),
                Term::store(mask, r.clone(), Term::real(1, 1)),
            );
            st.memory.mask.insert(f, m);
        }
        let ctx = ErrorContext::at("assignment.failed", s.span, "Assignment might fail.");
        self.assign_value(st, target, None, r, &ctx)
    }

    /// A call: the callee's precondition exhaled, its postcondition inhaled; the values of
    /// its results.
    fn call(&mut self, st: &mut State, s: &Stmt, name: &str, args: &[Expr]) -> R<Vec<Term>> {
        let (Some(info), Some(callee)) = (
            self.t.sem.methods.get(name).cloned(),
            self.t.program.items.iter().find_map(|i| match &i.kind {
                germanium_syntax::ast::ItemKind::Method(m) if m.name.name == name => Some(m),
                _ => None,
            }),
        ) else {
            return unsupported(s.span, "this call");
        };
        let failed = ErrorContext::at("call.failed", s.span, "Method call might fail.");
        let reach = st.reach.clone();
        let mut values = Vec::new();
        for a in args {
            values.push(self.expr(st, &reach, a, &failed)?);
        }
        // The callee's contract over its own variables, bound to the arguments.
        let mut callee_state = st.clone();
        for (p, v) in info.params.iter().zip(values) {
            callee_state.store.insert(*p, v);
        }
        self.check_call_terminates(&callee_state, callee, s.span)?;
        self.assume_terminated(&mut callee_state);
        let contract = callee
            .contract
            .requires
            .iter()
            .chain(&callee.contract.ensures);
        if contract.clone().any(crate::read_permissions::mentions_rd) {
            // A fresh `rd` for the call (seed 003).
            let clauses: Vec<&Expr> = callee.contract.requires.iter().collect();
            let whole: Vec<&Expr> = contract.collect();
            let rd = self.fresh_read_amount(&callee_state, &whole, &clauses)?;
            let outer = self.read_amount.replace(rd);
            let r = self.call_contract(st, s, name, callee, &info, callee_state);
            self.read_amount = outer;
            return r;
        }
        self.call_contract(st, s, name, callee, &info, callee_state)
    }

    /// A call's contract: the precondition exhaled from `callee_state` (the caller's state
    /// with the callee's parameters bound), the postcondition inhaled.
    fn call_contract(
        &mut self,
        st: &mut State,
        s: &Stmt,
        name: &str,
        callee: &Method,
        info: &germanium_semantics::MethodInfo,
        mut callee_state: State,
    ) -> R<Vec<Term>> {
        let at_call = st.memory.clone();
        let pre_ctx = ErrorContext::at(
            "call.precondition",
            s.span,
            format!("The precondition of method {name} might not hold."),
        );
        let clauses: Vec<(&Expr, ErrorContext)> = callee
            .contract
            .requires
            .iter()
            .map(|pre| (pre, pre_ctx.clone()))
            .collect();
        self.exhale_all(&mut callee_state, &clauses, false)?;
        callee_state
            .memory
            .allocate_more(&mut self.vc, &self.t.reference);
        for r in &info.returns {
            self.havoc_var(&mut callee_state, *r, s.span)?;
        }
        callee_state.labels.insert(OLD.to_string(), at_call);
        let post_ctx = ErrorContext::at("call.failed", s.span, "Method call might fail.");
        self.leniently(|l| {
            for post in &callee.contract.ensures {
                l.inhale(&mut callee_state, post, &post_ctx)?;
            }
            Ok(())
        })?;
        // Back in the caller: its store and labels, the callee's memory and path.
        let results: Vec<Term> = info
            .returns
            .iter()
            .map(|r| callee_state.store[r].clone())
            .collect();
        st.memory = callee_state.memory;
        st.reach = callee_state.reach;
        Ok(results)
    }

    fn while_loop(&mut self, st: &mut State, s: &Stmt) -> R<()> {
        let StmtKind::While {
            cond,
            invariants,
            body,
            ..
        } = &s.kind
        else {
            return unsupported(s.span, "this loop");
        };
        let established = ErrorContext::at_conjunct(
            "invariant.not.established",
            "Loop invariant might not hold on entry.",
        );
        let wellformed =
            ErrorContext::at_conjunct("not.wellformed", "Contract might not be well-formed.");
        let while_ctx = ErrorContext::at("while.failed", cond.span, "While statement might fail.");
        let mut assigned = HashSet::new();
        assigned_vars(self.t.sem, &body.stmts, &mut assigned);
        let mut assigned: Vec<VarId> = assigned.into_iter().collect();
        assigned.sort();
        // On entry. The body is checked whatever happens there: from the path before it.
        let before_entry = st.reach.clone();
        let clauses = with_contexts(invariants, &established);
        self.leniently(|l| l.exhale_all(st, &clauses, false))?;
        // One iteration from any state the invariant allows.
        let mut inner = st.clone();
        inner.memory = Memory::empty(&mut self.vc, self.t);
        let kept = grows(
            &st.memory.allocated,
            &inner.memory.allocated,
            &self.t.reference,
        );
        self.vc.fact(kept);
        self.side_path(&before_entry, |l, reach| {
            inner.reach = reach;
            l.iteration(inner, s, &assigned)
        })?;
        // After the loop: the frame, the invariant, the condition false.
        st.memory.allocate_more(&mut self.vc, &self.t.reference);
        for v in &assigned {
            if st.store.contains_key(v) {
                self.havoc_var(st, *v, s.span)?;
            }
        }
        for inv in invariants {
            self.inhale(st, inv, &wellformed.for_clause(inv))?;
        }
        let reach = st.reach.clone();
        let c = self.expr(st, &reach, cond, &while_ctx)?;
        st.reach = self.vc.assume(&st.reach, Term::not(c));
        Ok(())
    }
}

impl Lower<'_, '_> {
    /// One iteration of the loop `s` from `inner` (the loop's frame left out): the
    /// assigned variables havocked, the invariant and the condition assumed, the body, the
    /// measure decreased, the invariant again.
    fn iteration(&mut self, mut inner: State, s: &Stmt, assigned: &[VarId]) -> R<()> {
        let StmtKind::While {
            cond,
            invariants,
            decreases,
            body,
        } = &s.kind
        else {
            return unsupported(s.span, "this loop");
        };
        let preserved = ErrorContext::at_conjunct(
            "invariant.not.preserved",
            "Loop invariant might not be preserved.",
        );
        let wellformed =
            ErrorContext::at_conjunct("not.wellformed", "Contract might not be well-formed.");
        let while_ctx = ErrorContext::at("while.failed", cond.span, "While statement might fail.");
        for v in assigned {
            if inner.store.contains_key(v) {
                self.havoc_var(&mut inner, *v, s.span)?;
            }
        }
        self.inhale_contract(&mut inner, invariants, &wellformed)?;
        let reach = inner.reach.clone();
        let c = self.expr(&inner, &reach, cond, &while_ctx)?;
        inner.reach = self.vc.assume(&inner.reach, c);
        let start = self.loop_measures_at_start(&inner, decreases, s.span)?;
        self.assume_terminated(&mut inner);
        let pending = |l: &Self| l.pending_jumps.values().map(Vec::len).sum::<usize>();
        let jumps_before = pending(self);
        self.stmts(&mut inner, &body.stmts)?;
        // A jump out of the body would have to take the loop's frame along: not lowered.
        if pending(self) > jumps_before {
            return unsupported(s.span, "a jump out of a loop");
        }
        if !start.is_empty() {
            let reach = inner.reach.clone();
            let checks = self.vc.checks.len();
            let again = self.leniently(|l| l.expr(&inner, &reach, cond, &while_ctx));
            self.vc.checks.truncate(checks);
            self.loop_measures_at_end(&inner, decreases, again?, &start)?;
            self.assume_terminated(&mut inner);
        }
        let clauses = with_contexts(invariants, &preserved);
        self.leniently(|l| l.exhale_all(&mut inner, &clauses, false))
    }
}

/// Each clause with its context, reported at the clause where the context says so.
fn with_contexts<'x>(clauses: &'x [Expr], ctx: &ErrorContext) -> Vec<(&'x Expr, ErrorContext)> {
    clauses.iter().map(|c| (c, ctx.for_clause(c))).collect()
}

/// The local variables the statements may assign.
fn assigned_vars(sem: &germanium_semantics::Semantics, stmts: &[Stmt], out: &mut HashSet<VarId>) {
    let target = |e: &Expr, out: &mut HashSet<VarId>| {
        if let ExprKind::Ident(_) = e.kind {
            if let Some(v) = sem.idents.get(e.id.0 as usize).copied().flatten() {
                out.insert(v);
            }
        }
    };
    for s in stmts {
        match &s.kind {
            StmtKind::Assign(targets, _) => targets.iter().for_each(|t| target(t, out)),
            StmtKind::New(t, _) => target(t, out),
            StmtKind::Block(b) | StmtKind::While { body: b, .. } => {
                assigned_vars(sem, &b.stmts, out)
            }
            StmtKind::If {
                then, otherwise, ..
            } => {
                assigned_vars(sem, &then.stmts, out);
                if let Some(o) = otherwise {
                    assigned_vars(sem, &o.stmts, out);
                }
            }
            _ => {}
        }
    }
}
