//! A run's model of the program's domains (see `eval::domains`). Before a statement, each
//! domain function instance it applies, itself or through the functions and predicates it
//! uses, gets a table and a default; each application whose arguments have values gets a
//! value of its own; a domain type instance gets its number of values (1 to
//! [`MAX_DOMAIN_VALUES`]) when first needed. All are choices, so the search tries them. At a
//! failure the model is completed with what the axioms that constrain it need, and those
//! axioms are checked: the failure counts only where they hold.

use germanium_semantics::visit::walk_expr;
use germanium_semantics::{CallTarget, Type};
use germanium_syntax::ast::{Expr, ExprKind};

use super::{equation_side, out, Choices, FunctionInstance, Machine, Outcome, Run, ROUNDS, X};
use crate::eval::{instance_name, Stop, Table};
use crate::value::Value;

/// Values of one domain type instance at most.
const MAX_DOMAIN_VALUES: usize = 3;

impl Machine<'_> {
    /// Whether runs keep a model of the program's domains.
    pub(super) fn models_domains(&self) -> bool {
        !self.ev.domains.is_empty()
    }

    /// Gives the domain functions `exprs` apply tables, and their applications whose
    /// arguments have values their own values.
    pub(super) fn interpret_domains(
        &self,
        run: &mut Run,
        exprs: &[&Expr],
        assumed: &[&Expr],
        choices: &mut dyn Choices,
    ) -> X<()> {
        let (direct, reachable) = self.domain_calls(exprs);
        for (function, type_args) in &reachable {
            self.ensure_table(run, function, type_args, choices)?;
        }
        for ty in self.quantified_domains(exprs) {
            self.ensure_domain_size(&ty, choices)?;
        }
        // An application equated with what reads applications still to be chosen waits for
        // them (reading one would fix it to the table's default); where only such are left,
        // the first is chosen freely.
        for _ in 0..ROUNDS * direct.len().max(1) {
            let mut chosen = false;
            let mut waiting = None;
            // Inner applications first: an outer one's arguments read their values.
            for call in direct.iter().rev() {
                let Some((key, values)) = self.unchosen_application(run, call) else {
                    continue;
                };
                let v = match equation_side(call, assumed) {
                    Some(side) if self.reads_unchosen(run, side) => {
                        waiting.get_or_insert((*call, key, values));
                        continue;
                    }
                    Some(side) => self.ev.eval(&self.state(run), side).ok(),
                    None => None,
                };
                let v = match v {
                    Some(v) => v,
                    None => self.choose_model_value(run, &self.call_result_type(call), choices)?,
                };
                self.ev.with_model(|m| {
                    if let Some(t) = m.tables.get_mut(&key) {
                        t.entries.insert(values, v);
                    }
                });
                chosen = true;
            }
            if !chosen {
                let Some((call, key, values)) = waiting else {
                    break;
                };
                let v = self.choose_model_value(run, &self.call_result_type(call), choices)?;
                self.ev.with_model(|m| {
                    if let Some(t) = m.tables.get_mut(&key) {
                        t.entries.insert(values, v);
                    }
                });
            }
        }
        Ok(())
    }

    /// Whether `e` applies a domain function itself.
    pub(super) fn applies_domain_function(&self, e: &Expr) -> bool {
        if !self.models_domains() {
            return false;
        }
        let mut applies = false;
        walk_expr(e, &mut |sub| {
            applies |= matches!(
                self.sem.call(sub.id),
                Some(CallTarget::DomainFunction { .. })
            );
        });
        applies
    }

    /// The table and arguments of the domain function application `call`, if its
    /// arguments have values and its table has none for them.
    fn unchosen_application(&self, run: &Run, call: &Expr) -> Option<(String, Vec<Value>)> {
        let (
            ExprKind::Call(_, args),
            Some(CallTarget::DomainFunction {
                function,
                type_args,
                ..
            }),
        ) = (&call.kind, self.sem.call(call.id))
        else {
            return None;
        };
        let state = self.state(run);
        let values = args
            .iter()
            .map(|a| self.ev.eval(&state, a))
            .collect::<Result<Vec<Value>, Stop>>()
            .ok()?;
        let key = instance_name(function, type_args);
        let known = self
            .ev
            .with_model(|m| m.tables.get(&key).map(|t| t.entries.contains_key(&values)));
        (known == Some(false)).then_some((key, values))
    }

    /// Whether `e` applies a domain function whose value for its arguments is not chosen.
    fn reads_unchosen(&self, run: &Run, e: &Expr) -> bool {
        let mut calls = Vec::new();
        walk_expr(e, &mut |sub| {
            if matches!(
                self.sem.call(sub.id),
                Some(CallTarget::DomainFunction { .. })
            ) {
                calls.push(sub);
            }
        });
        // Inner applications first: reading an outer one's arguments would fix them.
        calls
            .iter()
            .rev()
            .any(|call| self.unchosen_application(run, call).is_some())
    }

    fn call_result_type(&self, call: &Expr) -> Type {
        match self.sem.call(call.id) {
            Some(CallTarget::DomainFunction {
                function,
                type_args,
                ..
            }) => self.result_type(function, type_args),
            _ => Type::Error,
        }
    }

    /// The domain function applications in `exprs` (preorder) and the domain function
    /// instances they and the functions and predicates they use apply (in walk order).
    fn domain_calls<'e>(&self, exprs: &[&'e Expr]) -> (Vec<&'e Expr>, Vec<FunctionInstance>) {
        let mut direct = Vec::new();
        for e in exprs {
            walk_expr(e, &mut |sub| {
                if matches!(
                    self.sem.call(sub.id),
                    Some(CallTarget::DomainFunction { .. })
                ) {
                    direct.push(sub);
                }
            });
        }
        let ids: Vec<_> = exprs.iter().map(|e| e.id).collect();
        if let Some(known) = self.reachable_domain_calls.borrow().get(&ids) {
            return (direct, known.clone());
        }
        let mut reachable: Vec<FunctionInstance> = Vec::new();
        self.walk_reachable(exprs, &mut |sub| {
            if let Some(CallTarget::DomainFunction {
                function,
                type_args,
                ..
            }) = self.sem.call(sub.id)
            {
                let instance = (function.clone(), type_args.clone());
                if !reachable.contains(&instance) {
                    reachable.push(instance);
                }
            }
        });
        self.reachable_domain_calls
            .borrow_mut()
            .insert(ids, reachable.clone());
        (direct, reachable)
    }

    /// The domain type instances quantifiers in `exprs` range over.
    fn quantified_domains(&self, exprs: &[&Expr]) -> Vec<Type> {
        let mut types = Vec::new();
        for e in exprs {
            walk_expr(e, &mut |sub| {
                for ty in self.ev.quantified_types(sub) {
                    if self.ev.modelled_domain(&ty) && !types.contains(&ty) {
                        types.push(ty);
                    }
                }
            });
        }
        types
    }

    /// The result type of the domain function instance.
    fn result_type(&self, function: &str, type_args: &[Type]) -> Type {
        let Some(info) = self.sem.domain_functions.get(function) else {
            return Type::Error;
        };
        let params = self
            .sem
            .domains
            .get(&info.domain)
            .map(|d| d.type_params.clone())
            .unwrap_or_default();
        info.result.subst_vars(&|v| {
            params
                .iter()
                .position(|p| p == v)
                .and_then(|i| type_args.get(i).cloned())
        })
    }

    /// Gives the domain function instance a table with a default, unless it has one.
    fn ensure_table(
        &self,
        run: &mut Run,
        function: &str,
        type_args: &[Type],
        choices: &mut dyn Choices,
    ) -> X<()> {
        let key = instance_name(function, type_args);
        if self.ev.with_model(|m| m.tables.contains_key(&key)) {
            return Ok(());
        }
        if self
            .sem
            .domain_functions
            .get(function)
            .is_some_and(|f| f.interpretation.is_some())
        {
            return Ok(());
        }
        if let Some(body) = self.ev.definition_body(function) {
            // No table: what the definition applies gets one.
            if self
                .ev
                .with_model(|m| m.defined.insert(function.to_string()))
            {
                let (_, reachable) = self.domain_calls(&[body]);
                for (f, type_args) in &reachable {
                    self.ensure_table(run, f, type_args, choices)?;
                }
            }
            return Ok(());
        }
        let default =
            self.choose_model_value(run, &self.result_type(function, type_args), choices)?;
        self.ev.with_model(|m| {
            m.tables.insert(
                key,
                Table {
                    function: function.to_string(),
                    type_args: type_args.to_vec(),
                    entries: Default::default(),
                    default,
                },
            )
        });
        Ok(())
    }

    /// A value for a domain function's result: one of a domain instance's values, `null` or
    /// an object there (no new one), or any value `choose` tries.
    fn choose_model_value(&self, run: &mut Run, ty: &Type, choices: &mut dyn Choices) -> X<Value> {
        if *ty == Type::Ref {
            let options: Vec<Value> = std::iter::once(Value::null())
                .chain(run.heap.all_objects().map(|o| Value::Ref(Some(o))))
                .collect();
            let Some(i) = choices.pick(options.len()) else {
                return out(Outcome::Exhausted);
            };
            return Ok(options[i].clone());
        }
        self.choose(run, ty, choices)
    }

    /// One of the values of the domain type instance `ty` (its number chosen first).
    pub(super) fn choose_domain_value(&self, ty: &Type, choices: &mut dyn Choices) -> X<Value> {
        self.ensure_domain_size(ty, choices)?;
        let values = self.ev.domain_values(ty).map_err(|s| match s {
            Stop::Unknown(why) | Stop::Undefined { reason: why, .. } => {
                super::End::Out(Outcome::Unknown(why))
            }
        })?;
        let Some(i) = choices.pick(values.len()) else {
            return out(Outcome::Exhausted);
        };
        Ok(values[i].clone())
    }

    fn ensure_domain_size(&self, ty: &Type, choices: &mut dyn Choices) -> X<()> {
        let Type::Domain(name, args) = ty else {
            return Ok(());
        };
        let instance = instance_name(name, args);
        if self.ev.with_model(|m| m.sizes.contains_key(&instance)) {
            return Ok(());
        }
        let Some(i) = choices.pick(MAX_DOMAIN_VALUES) else {
            return out(Outcome::Exhausted);
        };
        self.ev
            .with_model(|m| m.sizes.insert(instance, i as u32 + 1));
        Ok(())
    }

    /// At a failure: completes the model and checks the program's axioms on it; where one is
    /// false no such execution exists.
    pub(super) fn check_model(&self, run: &mut Run, choices: &mut dyn Choices) -> X<()> {
        for _ in 0..ROUNDS {
            let before = self.ev.with_model(|m| (m.sizes.len(), m.tables.len()));
            self.complete_model(run, choices)?;
            if self.ev.with_model(|m| (m.sizes.len(), m.tables.len())) == before {
                break;
            }
        }
        // A broken axiom says only that this completion is no model: another might be.
        match self.ev.axioms_hold(&run.heap) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(why)) => out(Outcome::Unknown(format!(
                "no model of the domains found with the values chosen: {why}"
            ))),
            Err(Stop::Unknown(why) | Stop::Undefined { reason: why, .. }) => out(Outcome::Unknown(
                format!("the domain axioms on the chosen model: {why}"),
            )),
        }
    }

    /// Gives every axiom that constrains the model (see `Evaluator::axioms_hold`) the
    /// tables and domain values it needs; new tables may make more axioms constrain it.
    fn complete_model(&self, run: &mut Run, choices: &mut dyn Choices) -> X<()> {
        let mut names: Vec<&&str> = self.ev.domains.keys().collect();
        names.sort();
        for name in names {
            let domain = self.ev.domains[*name];
            for type_args in self.ev.instances_of(domain) {
                for axiom in domain
                    .axioms
                    .iter()
                    .filter(|a| !self.ev.is_definition(a.body.id))
                {
                    let needs = self.ev.axiom_needs(domain, &type_args, axiom);
                    if !self.ev.constrains_model(&needs) {
                        continue;
                    }
                    for (function, args) in &needs.functions {
                        self.ensure_table(run, function, args, choices)?;
                    }
                    for ty in &needs.quantified {
                        self.ensure_domain_size(ty, choices)?;
                    }
                }
            }
        }
        Ok(())
    }
}
