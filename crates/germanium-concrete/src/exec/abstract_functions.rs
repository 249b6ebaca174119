//! Applications of functions without a body in a run: before a statement (and before a
//! method's precondition is inhaled), each such application it makes whose arguments have
//! values gets a value of its own, one its postconditions allow (none allowed: no such
//! execution), kept for the rest of the run. Applications under a quantifier or in other
//! functions' bodies get none: they take the function's default where it has no
//! postconditions (any values make a model of it), else their evaluation stays unknown.

use germanium_semantics::visit::walk_expr;
use germanium_semantics::CallTarget;
use germanium_syntax::ast::{Expr, ExprKind};

use super::{out, Choices, Machine, Outcome, Run, ROUNDS, X};

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
                let Some(info) = self.sem.functions.get(&app.0) else {
                    continue;
                };
                let v = match self.equated(run, call, assumed) {
                    Some(v) => v,
                    None => self.choose(run, &info.result.clone(), choices)?,
                };
                match self.ev.meets_postconditions(&run.heap, &app.0, &app.1, &v) {
                    Ok(true) => self.ev.interpret(app, v),
                    Ok(false) => return out(Outcome::Infeasible),
                    Err(_) => {
                        return out(Outcome::Unknown(format!(
                            "the postcondition of `{}` on a chosen value",
                            app.0
                        )))
                    }
                }
                chosen = true;
            }
            if !chosen {
                break;
            }
        }
        Ok(())
    }
}
