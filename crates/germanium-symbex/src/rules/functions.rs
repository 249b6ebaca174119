//! Applications of Viper functions, treated modularly (Silicon style, without bodies): the
//! precondition is checked against the current heap without removing anything, the result
//! is an uninterpreted function of a snapshot of the precondition's footprint and the
//! arguments, and the postcondition is assumed of that result.

use germanium_smt::{FunDecl, Symbol, Term, TermKind};
use germanium_syntax::ast::Expr;

use crate::env::analysis::is_impure;
use crate::errors::ErrorContext;
use crate::rules::context::{Abort, Verifier, R};
use crate::state::{Heap, State};

impl<'e, 'a> Verifier<'e, 'a> {
    /// The SMT functions standing for Viper function `name`: (snapshot, arguments) →
    /// result, unlimited and limited (see `function_axioms`).
    pub fn function_decls(
        &mut self,
        name: &str,
        span: germanium_syntax::Span,
    ) -> R<(FunDecl, FunDecl)> {
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
        let decl = FunDecl::new(
            Symbol::user(&format!("sx.fn.{name}")),
            args.clone(),
            result.clone(),
        );
        let limited = FunDecl::new(Symbol::user(&format!("sx.fnl.{name}")), args, result);
        self.ensure_declared(&decl, span)?;
        self.ensure_declared(&limited, span)?;
        Ok((decl, limited))
    }

    /// `sx.held.f(s, xs)` for a function whose precondition holds predicate instances or
    /// wands: `s` and `xs` are the snapshot and arguments of a state that satisfies the
    /// precondition. The function's verification read the instances' bodies, so its
    /// postcondition axiom holds of such snapshots only, not of every one: a snapshot that
    /// a package's script defined where one branch folds an instance is no instance's
    /// where the branch is not taken. An application assumes it on its path where its
    /// precondition was checked (or is trusted); a verified function's axioms give it to
    /// the applications its contract and body make.
    pub fn held_decl(&mut self, name: &str, span: germanium_syntax::Span) -> R<Option<FunDecl>> {
        if !self.env.reads_instances.contains(name) {
            return Ok(None);
        }
        let (decl, _) = self.function_decls(name, span)?;
        let held = FunDecl::new(
            Symbol::user(&format!("sx.held.{name}")),
            decl.args().to_vec(),
            germanium_smt::Sort::Bool,
        );
        self.ensure_declared(&held, span)?;
        Ok(Some(held))
    }

    /// Whether an application of `callee` in the axioms being translated uses the limited
    /// version: only a call back into the translated function's own recursive group does
    /// (Silicon's heights), a call to a function below it unrolls that function's definition
    /// as an application in a method would.
    fn limited_in_axiom(&self, callee: &str) -> bool {
        match &self.modes.current_function {
            Some(caller) => {
                germanium_semantics::calls::reaches(&self.env.function_call_graph, callee, caller)
            }
            None => true,
        }
    }

    /// Runs `f` with every application in an axiom limited: for the triggers of quantifiers
    /// in a function's definition, which then also match the limited applications its
    /// unrolling produces (every unlimited application has a limited twin).
    pub fn with_limited_applications<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        if !self.modes.in_axiom {
            return f(self);
        }
        self.with_modes(|m| m.current_function = None, f)
    }

    /// A trigger term that applies a Viper function uses the limited version (as Silicon
    /// does): every unlimited application has a limited twin, so it matches at least as
    /// often, and also the limited applications that unrolling a definition produces.
    pub fn limited_trigger(&mut self, t: Term, span: germanium_syntax::Span) -> R<Term> {
        let TermKind::App(decl, args) = t.kind() else {
            return Ok(t);
        };
        let Some(name) = decl
            .name()
            .user_name()
            .and_then(|n| n.strip_prefix("sx.fn.").map(str::to_string))
        else {
            return Ok(t);
        };
        if !self.env.functions.contains_key(&name) {
            return Ok(t);
        }
        let (_, limited) = self.function_decls(&name, span)?;
        Ok(Term::app(&limited, args.to_vec()))
    }

    /// The snapshot a function application depends on: that of its precondition (its
    /// inhale parts, as the definition reads it), read from `heap` (parameters bound to
    /// the arguments).
    pub fn precondition_snapshot(
        &mut self,
        st: &State,
        heap: &Heap,
        function: &germanium_syntax::ast::Function,
    ) -> R<Term> {
        let mut snapshot = None;
        for pre in &function.contract.requires {
            let part = self.assertion_snapshot(st, heap, pre)?;
            snapshot = self.env.snap.join(snapshot, part);
        }
        Ok(snapshot.unwrap_or_else(|| self.env.snap.unit()))
    }

    pub fn apply_function(
        &mut self,
        st: &State,
        heap: &Heap,
        e: &Expr,
        name: &str,
        args: Vec<Term>,
        _ctx: &ErrorContext,
    ) -> R<Term> {
        let Some(function) = self.env.functions.get(name).copied() else {
            return Err(self.unsupported(e.span, "an unknown function"));
        };
        // A body without a definitional axiom is not used (the function is treated by its
        // contract): that only loses knowledge, which `refute` would turn into silently
        // passing refutations.
        if function.body.is_some()
            && !self.decider.is_defined(name)
            && self
                .member
                .method
                .is_some_and(|m| m.body.as_ref().is_some_and(|b| has_refute(&b.stmts)))
        {
            return Err(self.unsupported(e.span, "functions with bodies in methods with `refute`"));
        }
        let Some(params) = self.env.sem.functions.get(name).map(|f| f.params.clone()) else {
            return Err(self.unsupported(e.span, "an unknown function"));
        };
        let (unlimited, limited) = self.function_decls(name, e.span)?;
        // An opaque function's definition is known only where it is revealed (Silicon: its
        // other applications are limited).
        let hidden = self.env.opaque.contains(name) && self.member.revealing != Some(e.id);
        let decl = if hidden || (self.modes.in_axiom && self.limited_in_axiom(name)) {
            limited
        } else {
            unlimited
        };
        let depth = self.member.bound.len();
        self.member
            .bound
            .extend(params.iter().copied().zip(args.iter().cloned()));
        if !self.member.function_measures.is_empty() && self.modes.checking && !self.modes.in_axiom
        {
            if let Err(err) = self.check_function_call_terminates(st, heap, function, e) {
                self.member.bound.truncate(depth);
                return Err(err);
            }
        }
        let measures = std::mem::take(&mut self.member.function_measures);
        let outcome = self.with_modes(
            |m| {
                m.perm_scale = None;
                m.result = None;
            },
            |v| v.apply_bound(st, heap, e, name, function, &decl, &args),
        );
        self.member.function_measures = measures;
        self.member.bound.truncate(depth);
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
        let call_ctx = ErrorContext::at(
            "application.precondition",
            e.span,
            format!("Precondition of function {name} might not hold."),
        );
        let reported_before = self.errors.len();
        if self.modes.checking {
            let mut scratch = State {
                store: st.store.clone(),
                heap: heap.clone(),
                old_heaps: st.old_heaps.clone(),
                label_loops: Vec::new(),
            };
            self.with_modes(
                |m| m.positive_only = true,
                |v| -> R<()> {
                    // One error per application, as Silicon gives: the clauses after one
                    // that failed are not checked.
                    let reported = v.errors.len();
                    for pre in &function.contract.requires {
                        v.consume(&mut scratch, heap, pre, &call_ctx)?;
                        if v.errors.len() > reported {
                            break;
                        }
                    }
                    Ok(())
                },
            )?;
        }
        let snapshot = self.precondition_snapshot(st, heap, function)?;
        let mut full = vec![snapshot];
        full.extend(args.iter().cloned());
        let app = Term::app(decl, full.clone());
        if let Some(held) = self.held_decl(name, e.span)? {
            let fact = Term::app(&held, full);
            if self.modes.in_axiom {
                let guarded = Term::implies(self.guard(), fact);
                self.member.axiom_held.push(guarded);
            } else if (self.modes.checking || self.modes.trusted)
                && !self.modes.in_function_post
                && self.errors.len() == reported_before
            {
                if self.member.quantifier_depth > 0 {
                    self.member
                        .deferred
                        .push(Term::implies(self.guard(), fact.clone()));
                }
                self.assume_guarded(fact, e.span)?;
            }
        }
        if (self.modes.checking || self.modes.trusted)
            && !self.modes.in_function_post
            && !function.contract.ensures.is_empty()
            && !self.untrusted_posts.contains(name)
        {
            self.with_modes(
                |m| {
                    m.in_function_post = true;
                    m.result = Some(app.clone());
                    m.checking = false;
                },
                |v| -> R<()> {
                    for post in &function.contract.ensures {
                        // The caller gains the postcondition: its inhale parts.
                        let post = crate::rules::inhale_exhale::inhale_reading(post);
                        if is_impure(v.env.sem, &post) {
                            continue;
                        }
                        match v.eval(st, heap, &post, &call_ctx) {
                            Ok(t) => {
                                if v.member.quantifier_depth > 0 {
                                    v.member.deferred.push(Term::implies(v.guard(), t.clone()));
                                }
                                v.assume_guarded(t, e.span)?;
                            }
                            Err(Abort::Failed) => {}
                            Err(other) => return Err(other),
                        }
                    }
                    Ok(())
                },
            )?;
        }
        Ok(app)
    }
}

/// Whether a `refute` occurs in the statements.
fn has_refute(stmts: &[germanium_syntax::ast::Stmt]) -> bool {
    use germanium_syntax::ast::StmtKind;
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Refute(_) => true,
        StmtKind::Block(b) | StmtKind::While { body: b, .. } => has_refute(&b.stmts),
        StmtKind::If {
            then, otherwise, ..
        } => has_refute(&then.stmts) || otherwise.as_ref().is_some_and(|o| has_refute(&o.stmts)),
        _ => false,
    })
}
