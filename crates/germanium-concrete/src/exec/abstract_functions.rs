//! Applications of functions without a body in a run: before a statement (and before a
//! method's precondition is inhaled), each such application it makes whose arguments have
//! values gets a value of its own, one its postconditions allow (none allowed: no such
//! execution), kept for the rest of the run. Applications under a quantifier or in other
//! functions' bodies get none: they take the function's default where it has no
//! postconditions (any values make a model of it), else their evaluation stays unknown.

use germanium_semantics::visit::walk_expr;
use germanium_semantics::CallTarget;
use germanium_syntax::ast::{Expr, ExprKind};

use super::{out, Choices, End, Machine, Outcome, Run, ROUNDS, X};
use crate::eval::Application;
use crate::heap::Heap;
use crate::value::Value;

impl Machine<'_> {
    pub(super) fn interpret_abstract(
        &self,
        run: &mut Run,
        exprs: &[&Expr],
        assumed: &[&Expr],
        choices: &mut dyn Choices,
    ) -> X<()> {
        let mut calls = Vec::new();
        for e in exprs {
            walk_expr(e, &mut |sub| {
                if let (ExprKind::Call(name, _), Some(CallTarget::Function(_))) =
                    (&sub.kind, self.sem.call(sub.id))
                {
                    if self
                        .ev
                        .functions
                        .get(name.name.as_str())
                        .is_some_and(|f| f.body.is_none())
                    {
                        calls.push(sub);
                    }
                }
            });
        }
        // A function without postconditions gets a default for the applications it makes
        // that are not chosen here (under a quantifier, in another function's body).
        for call in &calls {
            let ExprKind::Call(name, _) = &call.kind else {
                continue;
            };
            let name = name.name.as_str();
            if self.ev.unconstrained(name) && !self.ev.has_default(name) {
                let Some(info) = self.sem.functions.get(name) else {
                    continue;
                };
                let v = self.choose(run, &info.result.clone(), choices)?;
                self.ev.set_default(name, v);
            }
        }
        for _ in 0..ROUNDS {
            let mut chosen = false;
            for call in &calls {
                let Ok(Some(app)) = self.ev.abstract_application(&self.state(run), call) else {
                    continue;
                };
                if self.ev.is_interpreted(&app) {
                    continue;
                }
                let equated = self.equated(run, call, assumed);
                self.choose_application(run, app, None, equated, choices)?;
                chosen = true;
            }
            if !chosen {
                break;
            }
        }
        Ok(())
    }

    /// Gives `app` a value its postconditions allow (read in `heap`, else the run's heap):
    /// `equated`, else one the choices pick; none allowed is no execution.
    fn choose_application(
        &self,
        run: &mut Run,
        app: Application,
        heap: Option<&Heap>,
        equated: Option<Value>,
        choices: &mut dyn Choices,
    ) -> X<()> {
        let Some(info) = self.sem.functions.get(&app.0) else {
            // A value the semantics leaves unspecified: any of its type.
            let Some(ty) = self.ev.unspecified_type(&app.0) else {
                return out(Outcome::Unknown(format!("no function `{}`", app.0)));
            };
            let v = self.choose(run, &ty, choices)?;
            self.ev.interpret(app, v);
            return Ok(());
        };
        let v = match equated {
            Some(v) => v,
            None => self.choose(run, &info.result.clone(), choices)?,
        };
        // Kept at once, so that postconditions applying it again (functions whose
        // postconditions refer to each other in a cycle) read it; where they do not hold,
        // the run ends.
        self.ev.interpret(app.clone(), v.clone());
        loop {
            self.ev.forget_demand();
            let meets = self
                .ev
                .meets_postconditions(heap.unwrap_or(&run.heap), &app.0, &app.1, &v);
            match meets {
                Ok(true) => return Ok(()),
                Ok(false) => return out(Outcome::Infeasible),
                Err(_) => {
                    // The postcondition applies another function without a body: that
                    // application gets its value first.
                    if let Some((other, taken)) = self.ev.answerable_demand() {
                        self.choose_application(run, other, Some(&taken), None, choices)?;
                        continue;
                    }
                    return out(Outcome::Unknown(format!(
                        "the postcondition of `{}` on a chosen value",
                        app.0
                    )));
                }
            }
        }
    }

    /// Runs `step` (a statement, a contract inhaled); where it stops unknown because an
    /// application of a function without a body it evaluated has no value (under a
    /// quantifier, in a function's body, in a callee's postcondition), the application
    /// gets one and `step` runs again from the same state, making the same choices up to
    /// where it stopped. A run answers at most `MAX_DEMANDS` such demands.
    pub(super) fn answering_demands(
        &self,
        run: &mut Run,
        choices: &mut dyn Choices,
        step: impl Fn(&mut Run, &mut dyn Choices) -> X<()>,
    ) -> X<()> {
        let before = run.clone();
        let mut replaying = Replaying {
            inner: choices,
            log: Vec::new(),
            at: 0,
        };
        loop {
            self.ev.forget_demand();
            replaying.at = 0;
            let outcome = step(run, &mut replaying);
            if !matches!(outcome, Err(End::Out(Outcome::Unknown(_)))) {
                return outcome;
            }
            let Some((app, taken)) = self.ev.answerable_demand() else {
                return outcome;
            };
            *run = before.clone();
            self.choose_application(run, app, Some(&taken), None, replaying.inner)?;
        }
    }
}

/// Choices replayed from a log, then asked of `inner` and logged: a step run again makes
/// the choices it made before.
struct Replaying<'c> {
    inner: &'c mut dyn Choices,
    log: Vec<usize>,
    at: usize,
}

impl Choices for Replaying<'_> {
    fn pick(&mut self, options: usize) -> Option<usize> {
        if options == 0 {
            return None;
        }
        let pick = match self.log.get(self.at) {
            Some(p) => (*p).min(options - 1),
            None => {
                let p = self.inner.pick(options)?;
                self.log.push(p);
                p
            }
        };
        self.at += 1;
        Some(pick)
    }
}
