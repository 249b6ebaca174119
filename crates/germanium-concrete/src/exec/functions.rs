//! A heap-dependent function's own checks on concrete values: for arguments and a heap its
//! precondition allows, its body is well-defined (every read permitted, every applied
//! function's precondition true) and its postconditions hold of the body's value.
//!
//! The body is run as it is, recursive applications included (their bodies, not their
//! postconditions): a failure found this way is one of the real function, never one of a
//! modular approximation of it.

use germanium_syntax::ast::Function;
use num_rational::BigRational;
use num_traits::One;

use super::{out, Check, Choices, Machine, Outcome, Run, X};

impl Machine<'_> {
    /// Checks the function `name` on a pre-state the choices make.
    pub fn run_function(&self, name: &str, choices: &mut dyn Choices) -> Outcome {
        let Some(function) = self.ev.functions.get(name).copied() else {
            return Outcome::Unknown(format!("no function `{name}`"));
        };
        self.fresh_run(choices, |run, choices| {
            self.function(run, function, choices)
        })
    }

    fn function(&self, run: &mut Run, function: &Function, choices: &mut dyn Choices) -> X<()> {
        let name = &function.name.name;
        let Some(info) = self.sem.functions.get(name) else {
            return out(Outcome::Unknown(format!("no function `{name}`")));
        };
        for p in &info.params {
            let v = self.choose(run, &self.sem.var(*p).ty.clone(), choices)?;
            run.store.insert(*p, v);
        }
        let exprs: Vec<&germanium_syntax::ast::Expr> = function
            .contract
            .requires
            .iter()
            .chain(&function.contract.ensures)
            .chain(&function.body)
            .collect();
        let assumed: Vec<&germanium_syntax::ast::Expr> = function
            .contract
            .requires
            .iter()
            .flat_map(crate::eval::conjuncts)
            .collect();
        self.answering_demands(run, choices, |run, choices| {
            self.interpret(run, &exprs, &assumed, choices)?;
            for pre in &function.contract.requires {
                self.well_defined(run, |run| {
                    self.inhale_times(run, pre, &BigRational::one(), choices, false)
                })?;
            }
            self.resolve_pending(run, choices)
        })?;
        run.begin();
        let Some(body) = &function.body else {
            // Without a body, any result: its postconditions are assumed, each one
            // well-defined where the ones before hold.
            let result = self.choose(run, &info.result.clone(), choices)?;
            run.result = Some(result);
            return self.answering_demands(run, choices, |run, choices| {
                for post in &function.contract.ensures {
                    self.inhale_well_defined(run, post, choices)?;
                }
                Ok(())
            });
        };
        self.answering_demands(run, choices, |run, _| {
            let result = self.value(run, body)?;
            run.result = Some(result);
            self.exhale_all(run, &function.contract.ensures, Check::Postcondition, false)
        })
    }
}
