//! Axioms for Viper functions (Silicon's scheme, after Heule et al.): `f(s, xs)` is the
//! function of the precondition's snapshot `s` and the arguments, with a limited twin
//! `f%limited` equal to it. The definitional axiom, triggered by `f(s, xs)`, equates it with
//! the body translated with every application limited, so each application unrolls the body
//! once; a second trigger `{f%stateless(xs), P%trigger(s_P, args)}` unrolls it again for
//! every instance the program folds or unfolds, in step with the program. The postcondition
//! axiom holds of `f%limited` (hence of `f`).
//!
//! The body is translated by symbolic evaluation: the precondition is produced from a
//! symbolic snapshot, so every heap value in the body is a function of it. A translation
//! that would mention anything but the snapshot and the parameters (a fresh value the
//! solver knows nothing about) is dropped: the function is then treated by its contract.

use std::collections::HashMap;

use germanium_smt::{FunDecl, Sort, Symbol, Term, TermKind};
use germanium_syntax::ast::Function;
use germanium_syntax::Span;

use crate::env::analysis::is_impure;
use crate::errors::ErrorContext;
use crate::rules::context::{Verifier, R};
use crate::rules::triggers::{self, mentions};
use crate::state::State;

/// A function's definition in terms of a symbolic snapshot and parameters.
struct Translation {
    snap: Term,
    params: Vec<Term>,
    /// The precondition's pure facts.
    pre: Vec<Term>,
    /// The body's value (`None` for abstract functions).
    body: Option<Term>,
    /// The postcondition with `result` the limited application.
    post: Vec<Term>,
    /// That limited application.
    result: Term,
    unfoldings: Vec<(String, Term, Vec<Term>)>,
    /// The `held` facts of the applications the contract and body make, under their guards.
    held: Vec<Term>,
}

/// Whether `t` mentions a fresh constant other than those in `allowed`.
fn mentions_other_fresh(t: &Term, allowed: &[Term]) -> bool {
    if let TermKind::App(decl, args) = t.kind() {
        if args.is_empty() && decl.name().is_fresh() && !allowed.contains(t) {
            return true;
        }
    }
    t.children()
        .into_iter()
        .any(|c| mentions_other_fresh(c, allowed))
}

/// The translation holds for every value of the wildcard amounts it chose (fresh symbols
/// `sx.wildcard@n`, positive and at most what is held), so it holds for one fixed small
/// amount: the axiom is an instance of it that mentions no fresh symbol.
fn fix_wildcards(tr: &mut Translation) {
    let mut found = Vec::new();
    let terms = tr.pre.iter().chain(&tr.post).chain(tr.body.iter());
    for t in terms {
        collect_wildcards(t, &mut found);
    }
    if found.is_empty() {
        return;
    }
    let map: HashMap<Term, Term> = found
        .into_iter()
        .map(|w| (w, Term::real(1, 1000)))
        .collect();
    let fix = |t: &Term| triggers::substitute(t, &map);
    tr.pre = tr.pre.iter().map(fix).collect();
    tr.post = tr.post.iter().map(fix).collect();
    tr.body = tr.body.as_ref().map(fix);
}

fn collect_wildcards(t: &Term, out: &mut Vec<Term>) {
    if let TermKind::App(decl, args) = t.kind() {
        let name = decl.name();
        if args.is_empty()
            && name.is_fresh()
            && name.as_str().starts_with("sx.wildcard@")
            && *t.sort() == Sort::Real
            && !out.contains(t)
        {
            out.push(t.clone());
        }
    }
    for c in t.children() {
        collect_wildcards(c, out);
    }
}

impl<'e, 'a> Verifier<'e, 'a> {
    /// Declares every function and asserts its axioms (at the solver's outermost level).
    pub fn function_axioms(&mut self, posts: &std::collections::HashSet<String>) -> R<()> {
        let mut functions: Vec<&'a Function> = self.env.functions.values().copied().collect();
        functions.sort_by(|a, b| a.name.name.cmp(&b.name.name));
        for f in functions {
            let span = f.name.span;
            let (unlimited, limited) = match self.function_decls(&f.name.name, span) {
                Ok(d) => d,
                Err(_) => {
                    self.errors.clear();
                    continue;
                }
            };
            let Some(info) = self.env.sem.functions.get(&f.name.name).cloned() else {
                continue;
            };
            let mut vars = vec![(Symbol::user("sx.s"), self.env.snap.sort.clone())];
            for (i, p) in info.params.iter().enumerate() {
                let ty = self.env.sem.var(*p).ty.clone();
                let Ok(sort) = self.env.sort_of(&ty) else {
                    continue;
                };
                vars.push((Symbol::user(&format!("sx.x{i}")), sort));
            }
            if vars.len() != info.params.len() + 1 {
                continue;
            }
            let var_terms: Vec<Term> = vars
                .iter()
                .map(|(s, sort)| Term::var(s.clone(), sort.clone()))
                .collect();
            let app = Term::app(&unlimited, var_terms.clone());
            let lapp = Term::app(&limited, var_terms.clone());
            self.assume(
                Term::forall(
                    vars.clone(),
                    Term::eq(app.clone(), lapp.clone()),
                    vec![vec![app.clone()]],
                ),
                span,
            )?;
            // `f%stateless(xs)`: f was applied to xs in some state.
            let stateless_sorts: Vec<Sort> = vars[1..].iter().map(|(_, s)| s.clone()).collect();
            let stateless = FunDecl::new(
                Symbol::user(&format!("sx.fns.{}", f.name.name)),
                stateless_sorts,
                Sort::Bool,
            );
            self.ensure_declared(&stateless, span)?;
            let sapp = Term::app(&stateless, var_terms[1..].to_vec());
            if vars.len() > 1 {
                self.assume(
                    Term::forall(vars.clone(), sapp.clone(), vec![vec![lapp.clone()]]),
                    span,
                )?;
            }
            let translation = self.translate_function(f, &lapp);
            self.errors.clear();
            let Some(tr) = translation else { continue };
            let mut map: HashMap<Term, Term> = HashMap::new();
            map.insert(tr.snap.clone(), var_terms[0].clone());
            for (c, v) in tr.params.iter().zip(&var_terms[1..]) {
                map.insert(c.clone(), v.clone());
            }
            let pre = triggers::substitute(&Term::and(tr.pre.iter().cloned()), &map);
            // Only conjuncts about the result: one about the parameters alone may rest on the
            // precondition's permissions (e.g. a predicate whose body is false), which the
            // axiom cannot state; applications assume those from the contract.
            let about_result: Vec<Term> = tr
                .post
                .iter()
                .filter(|t| mentions(t, &tr.result))
                .cloned()
                .collect();
            // Of snapshots of states that satisfy the precondition, where it holds instances.
            let held = self.held_decl(&f.name.name, span)?;
            let held_here = held.as_ref().map(|h| Term::app(h, var_terms.clone()));
            let trusted_pre = match &held_here {
                Some(h) => Term::and([pre.clone(), h.clone()]),
                None => pre.clone(),
            };
            if !about_result.is_empty() && posts.contains(&f.name.name) {
                let post = triggers::substitute(&Term::and(about_result), &map);
                self.assume(
                    Term::forall(
                        vars.clone(),
                        Term::implies(trusted_pre.clone(), post),
                        vec![vec![lapp.clone()]],
                    ),
                    span,
                )?;
            }
            // A verified function's contract and body are well-defined for such snapshots:
            // the applications they make are of such snapshots too (unrolled applications
            // get their postconditions).
            let passed_on: Vec<Term> = tr
                .held
                .iter()
                .map(|h| triggers::substitute(h, &map))
                .collect();
            let passes_on = held_here.is_some()
                && posts.contains(&f.name.name)
                && !passed_on.is_empty()
                && vars.len() > 1;
            let Some(body) = tr.body else {
                if passes_on {
                    self.assume(
                        Term::forall(
                            vars.clone(),
                            Term::implies(trusted_pre, Term::and(passed_on)),
                            vec![vec![app.clone()], vec![lapp.clone()]],
                        ),
                        span,
                    )?;
                }
                continue;
            };
            let body = triggers::substitute(&body, &map);
            let mut trigger_sets = vec![vec![app.clone()]];
            // An opaque function's definition is only for its `@reveal()`ed applications
            // (the only unlimited ones), not for every unfolding of a predicate.
            if vars.len() > 1 && !self.env.opaque.contains(&f.name.name) {
                for (name, snap, args) in &tr.unfoldings {
                    let snap = triggers::substitute(snap, &map);
                    let args: Vec<Term> =
                        args.iter().map(|a| triggers::substitute(a, &map)).collect();
                    if !mentions(&snap, &var_terms[0]) {
                        continue;
                    }
                    let Ok(ptrig) = self.predicate_trigger(name, snap, args, span) else {
                        continue;
                    };
                    let set = vec![sapp.clone(), ptrig];
                    let symbols: Vec<Symbol> = vars.iter().map(|(s, _)| s.clone()).collect();
                    if triggers::valid_pattern(&symbols, &set) && !trigger_sets.contains(&set) {
                        trigger_sets.push(set);
                    }
                }
            }
            if passes_on {
                self.assume(
                    Term::forall(
                        vars.clone(),
                        Term::implies(trusted_pre, Term::and(passed_on)),
                        trigger_sets.clone(),
                    ),
                    span,
                )?;
            }
            self.assume(
                Term::forall(vars, Term::implies(pre, Term::eq(app, body)), trigger_sets),
                span,
            )?;
            self.decider.set_defined(&f.name.name);
        }
        self.errors.clear();
        Ok(())
    }

    /// Translates `f`'s precondition, body and postcondition in a scope of their own.
    fn translate_function(&mut self, f: &'a Function, lapp_shape: &Term) -> Option<Translation> {
        let span = f.name.span;
        self.push(span).ok()?;
        let outer_unfoldings = std::mem::take(&mut self.member.axiom_unfoldings);
        let outer_held = std::mem::take(&mut self.member.axiom_held);
        self.member.axiom_trigger_unfoldings =
            crate::rules::unrolling_triggers::recursive_unfoldings(
                f,
                self.env.sem,
                &self.env.function_call_graph,
            );
        let r = self.with_modes(
            |m| {
                m.current_function = Some(f.name.name.clone());
                m.checking = false;
                m.in_axiom = true;
                // The definition is read from the precondition's inhale parts.
                m.exhale_parts = false;
            },
            |v| v.translate_in_scope(f, lapp_shape, span),
        );
        self.member.axiom_trigger_unfoldings.clear();
        let held = std::mem::replace(&mut self.member.axiom_held, outer_held);
        let unfoldings = std::mem::replace(&mut self.member.axiom_unfoldings, outer_unfoldings);
        self.member.bound.clear();
        self.member.guards.clear();
        self.pop(span).ok()?;
        let mut tr = r.ok()??;
        fix_wildcards(&mut tr);
        let mut allowed = vec![tr.snap.clone()];
        allowed.extend(tr.params.iter().cloned());
        let wildcard = Term::constant(&crate::rules::produce::axiom_wildcard());
        let fresh = |t: &Term| mentions_other_fresh(t, &allowed);
        let introspects = |t: &Term| mentions(t, &wildcard);
        if tr.pre.iter().any(fresh) || tr.post.iter().any(|t| fresh(t) || introspects(t)) {
            return None;
        }
        if tr.body.as_ref().is_some_and(|b| fresh(b) || introspects(b)) {
            tr.body = None;
        }
        tr.unfoldings = unfoldings
            .into_iter()
            .filter(|(_, s, args)| !fresh(s) && !args.iter().any(fresh))
            .collect();
        tr.held = held.into_iter().filter(|h| !fresh(h)).collect();
        Some(tr)
    }

    fn translate_in_scope(
        &mut self,
        f: &'a Function,
        lapp_shape: &Term,
        span: Span,
    ) -> R<Option<Translation>> {
        let Some(info) = self.env.sem.functions.get(&f.name.name).cloned() else {
            return Ok(None);
        };
        let snap = self.fresh("s", self.env.snap.sort.clone(), span)?;
        let mut params = Vec::new();
        for p in &info.params {
            let var = self.env.sem.var(*p).clone();
            let sort = self.sort_of(&var.ty, span)?;
            let c = self.fresh(&var.name, sort, span)?;
            self.member.bound.push((*p, c.clone()));
            params.push(c);
        }
        let ctx = ErrorContext::at("function.not.wellformed", span, "");
        let mut st = State::default();
        let impure: Vec<bool> = f
            .contract
            .requires
            .iter()
            .map(|pre| is_impure(self.env.sem, pre))
            .collect();
        let count = impure.iter().filter(|b| **b).count();
        let mut parts = self.env.snap.split(&snap, count).into_iter();
        for (pre, impure) in f.contract.requires.iter().zip(impure) {
            let part = if impure { parts.next() } else { None };
            self.produce_from(&mut st, pre, part, &ctx)?;
        }
        let pre: Vec<Term> = self.decider.innermost_assumptions().to_vec();
        // The limited application at this snapshot and these parameters is `result`.
        let lapp = match lapp_shape.kind() {
            TermKind::App(decl, _) => {
                let mut args = vec![snap.clone()];
                args.extend(params.iter().cloned());
                Term::app(decl, args)
            }
            _ => return Ok(None),
        };
        let post = self.with_modes(
            |m| m.result = Some(lapp.clone()),
            |v| -> R<Vec<Term>> {
                let mut post = Vec::new();
                for e in &f.contract.ensures {
                    let e = crate::rules::inhale_exhale::inhale_reading(e);
                    if is_impure(v.env.sem, &e) {
                        continue;
                    }
                    let heap = st.heap.clone();
                    match v.eval(&st, &heap, &e, &ctx) {
                        Ok(t) => post.push(t),
                        Err(crate::rules::context::Abort::Failed) => {}
                        Err(other) => return Err(other),
                    }
                }
                Ok(post)
            },
        )?;
        let body = match &f.body {
            Some(b) => {
                let heap = st.heap.clone();
                match self.eval(&st, &heap, b, &ctx) {
                    Ok(t) => Some(t),
                    Err(crate::rules::context::Abort::Failed) => None,
                    Err(other) => return Err(other),
                }
            }
            None => None,
        };
        Ok(Some(Translation {
            snap,
            params,
            pre,
            body,
            post,
            result: lapp,
            unfoldings: Vec::new(),
            held: Vec::new(),
        }))
    }
}
