//! Applications of Viper functions, treated modularly (Silicon style, without bodies): the
//! precondition is checked against the current heap without removing anything, the result
//! is an uninterpreted function of a snapshot of the precondition's footprint and the
//! arguments, and the postcondition is assumed of that result.

use germanium_smt::{FunDecl, Symbol, Term};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind};

use crate::context::{Abort, Verifier, R};
use crate::errors::ErrorContext;
use crate::produce::is_impure;
use crate::state::{Heap, State};

impl<'e, 'a> Verifier<'e, 'a> {
    /// The SMT function standing for Viper function `name`: (snapshot, arguments) → result.
    pub fn function_decl(&mut self, name: &str, span: germanium_syntax::Span) -> R<FunDecl> {
        let Some(info) = self.env.sem.functions.get(name) else {
            return Err(self.unsupported(span, "an unknown function"));
        };
        let info = info.clone();
        let mut args = vec![self.env.snap.sort.clone()];
        for p in &info.params {
            let ty = self.env.sem.var(*p).ty.clone();
            args.push(self.sort_of(&ty, span)?);
        }
        let result = self.sort_of(&info.result, span)?;
        let decl = FunDecl::new(Symbol::user(&format!("sx.fn.{name}")), args, result);
        self.ensure_declared(&decl, span)?;
        Ok(decl)
    }

    pub fn apply_function(&mut self, st: &State, heap: &Heap, e: &Expr, name: &str, args: Vec<Term>, _ctx: &ErrorContext) -> R<Term> {
        let Some(function) = self.env.functions.get(name).copied() else {
            return Err(self.unsupported(e.span, "an unknown function"));
        };
        // Bodies are not used (the function is treated by its contract): that only loses
        // knowledge, which `refute` would turn into silently passing refutations.
        if function.body.is_some() && self.method.is_some_and(|m| m.body.as_ref().is_some_and(|b| has_refute(&b.stmts))) {
            return Err(self.unsupported(e.span, "functions with bodies in methods with `refute`"));
        }
        let Some(params) = self.env.sem.functions.get(name).map(|f| f.params.clone()) else {
            return Err(self.unsupported(e.span, "an unknown function"));
        };
        let decl = self.function_decl(name, e.span)?;
        let depth = self.bound.len();
        self.bound.extend(params.iter().copied().zip(args.iter().cloned()));
        let saved_result = self.result.take();
        let outcome = self.apply_bound(st, heap, e, name, function, &decl, &args);
        self.result = saved_result;
        self.bound.truncate(depth);
        outcome
    }

    #[allow(clippy::too_many_arguments)]
    fn apply_bound(
        &mut self,
        st: &State,
        heap: &Heap,
        e: &Expr,
        name: &str,
        function: &germanium_syntax::ast::Function,
        decl: &FunDecl,
        args: &[Term],
    ) -> R<Term> {
        let call_ctx = ErrorContext::at("application.precondition", e.span, format!("Precondition of function {name} might not hold."));
        if self.checking {
            let mut scratch = State { store: st.store.clone(), heap: heap.clone(), old_heaps: st.old_heaps.clone() };
            for pre in &function.contract.requires {
                self.consume(&mut scratch, heap, pre, &call_ctx)?;
            }
        }
        let mut snapshot = self.env.snap.unit();
        for pre in &function.contract.requires {
            let part = self.footprint(st, heap, pre)?;
            snapshot = self.env.snap.pair(snapshot, part);
        }
        let mut full = vec![snapshot];
        full.extend(args.iter().cloned());
        let app = Term::app(decl, full);
        if (self.checking || self.trusted) && !self.in_function_post && !function.contract.ensures.is_empty() {
            self.in_function_post = true;
            self.result = Some(app.clone());
            let saved = std::mem::replace(&mut self.checking, false);
            for post in &function.contract.ensures {
                if is_impure(self.env.sem, post) {
                    continue;
                }
                match self.eval(st, heap, post, &call_ctx) {
                    Ok(t) => {
                        if self.quantifier_depth > 0 {
                            self.deferred.push(Term::implies(self.guard(), t.clone()));
                        }
                        if let Err(err) = self.assume_guarded(t, e.span) {
                            self.checking = saved;
                            self.in_function_post = false;
                            return Err(err);
                        }
                    }
                    Err(Abort::Failed) => {}
                    Err(other) => {
                        self.checking = saved;
                        self.in_function_post = false;
                        return Err(other);
                    }
                }
            }
            self.checking = saved;
            self.in_function_post = false;
        }
        Ok(app)
    }

    /// The snapshot of the permissions `a` requires, read from `heap`.
    fn footprint(&mut self, st: &State, heap: &Heap, a: &Expr) -> R<Term> {
        let unit = self.env.snap.unit();
        if !is_impure(self.env.sem, a) {
            return Ok(unit);
        }
        let ctx = ErrorContext::at("application.precondition", a.span, "");
        let saved = std::mem::replace(&mut self.checking, false);
        let result = self.footprint_inner(st, heap, a, &ctx);
        self.checking = saved;
        match result {
            Ok(t) => Ok(t),
            // Could not read it: an unknown snapshot is always sound.
            Err(Abort::Failed) => self.fresh("snap", self.env.snap.sort.clone(), a.span),
            Err(other) => Err(other),
        }
    }

    fn footprint_inner(&mut self, st: &State, heap: &Heap, a: &Expr, ctx: &ErrorContext) -> R<Term> {
        let unit = self.env.snap.unit();
        if !is_impure(self.env.sem, a) {
            return Ok(unit);
        }
        match &a.kind {
            ExprKind::Binary(BinaryOp::And, l, r) => {
                let l = self.footprint_inner(st, heap, l, ctx)?;
                let r = self.footprint_inner(st, heap, r, ctx)?;
                Ok(self.env.snap.pair(l, r))
            }
            ExprKind::Binary(BinaryOp::Implies, c, body) => {
                let c = self.eval(st, heap, c, ctx)?;
                let b = self.under(c.clone(), |v| v.footprint_inner(st, heap, body, ctx))?;
                Ok(Term::ite(c, b, unit))
            }
            ExprKind::Cond(c, x, y) => {
                let c = self.eval(st, heap, c, ctx)?;
                let x = self.under(c.clone(), |v| v.footprint_inner(st, heap, x, ctx))?;
                let y = self.under(Term::not(c.clone()), |v| v.footprint_inner(st, heap, y, ctx))?;
                Ok(Term::ite(c, x, y))
            }
            ExprKind::Annotated(_, x) | ExprKind::InhaleExhale(_, x) => self.footprint_inner(st, heap, x, ctx),
            ExprKind::Acc(loc, amount) => {
                let (field, rcv) = self.field_location(loc)?;
                let r = self.eval(st, heap, rcv, ctx)?;
                let held = match amount {
                    Some(x) if !matches!(x.kind, ExprKind::Wildcard) => {
                        let p = crate::state::Permission::of(self.eval(st, heap, x, ctx)?);
                        p.is_positive()
                    }
                    _ => Term::tt(),
                };
                let value = match self.find_chunk(heap, &field, &r, loc.span)? {
                    Some(i) => heap.chunks[i].value().clone(),
                    None => {
                        let ty = self.env.sem.fields.get(&field).map(|f| f.ty.clone());
                        let Some(ty) = ty else { return Err(Abort::Failed) };
                        let sort = self.sort_of(&ty, loc.span)?;
                        self.aliased_value(heap, &field, &r, sort, loc.span)?
                    }
                };
                let wrapped = self.wrap(value, loc.span)?;
                Ok(Term::ite(held, wrapped, self.env.snap.unit()))
            }
            _ => Err(Abort::Failed),
        }
    }
}

/// Whether a `refute` occurs in the statements.
fn has_refute(stmts: &[germanium_syntax::ast::Stmt]) -> bool {
    use germanium_syntax::ast::StmtKind;
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Refute(_) => true,
        StmtKind::Block(b) | StmtKind::While { body: b, .. } => has_refute(&b.stmts),
        StmtKind::If { then, otherwise, .. } => has_refute(&then.stmts) || otherwise.as_ref().is_some_and(|o| has_refute(&o.stmts)),
        _ => false,
    })
}
