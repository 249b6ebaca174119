//! Inhaling: permissions given, each location newly held getting a value of its own
//! (chosen when first read, or given by an inhaled equality), facts assumed.

use germanium_semantics::{CallTarget, FieldTarget, Type, VarId};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind, QuantifierKind};
use num_rational::BigRational;
use num_traits::{One, Zero};

use super::{missing_value, out, Choices, Machine, Outcome, Pending, Run, X};
use crate::eval::{is_wildcard, Location, Stop};
use crate::heap::{WandInstance, WandOrigin};
use crate::value::Value;

impl Machine<'_> {
    /// Inhales `e`: the permissions it gives, each location newly held getting a value the
    /// choices pick (`keep_values`: the value it has, when it has one: an unfolded
    /// instance's contents), and its facts assumed.
    pub(super) fn inhale(
        &self,
        run: &mut Run,
        e: &Expr,
        choices: &mut dyn Choices,
        keep_values: bool,
    ) -> X<()> {
        self.inhale_times(run, e, &BigRational::one(), choices, keep_values)?;
        self.resolve_pending(run, choices)
    }

    /// `assume e`: a pure `e` is inhaled (its facts assumed); of an impure one, the state
    /// must already hold what it asks (an `assume` gives no permission), else there is no
    /// such execution.
    pub(super) fn assume(&self, run: &mut Run, e: &Expr, choices: &mut dyn Choices) -> X<()> {
        if !matches!(self.sem.type_of(e.id), Some(Type::Impure)) {
            return self.inhale_well_defined(run, e, choices);
        }
        let holds = self.with_pending(run, choices, |m, run| m.ev.holds(&m.state(run), e))?;
        if holds {
            Ok(())
        } else {
            out(Outcome::Infeasible)
        }
    }

    /// Chooses the values still pending.
    pub(super) fn resolve_pending(&self, run: &mut Run, choices: &mut dyn Choices) -> X<()> {
        while !run.pending.is_empty() {
            self.resolve_first_pending(run, choices)?;
        }
        Ok(())
    }

    /// Chooses the value of the first pending variable or location.
    fn resolve_first_pending(&self, run: &mut Run, choices: &mut dyn Choices) -> X<()> {
        if run.pending.is_empty() {
            return Ok(());
        }
        match run.pending.remove(0) {
            Pending::Field(o, f) => {
                let v = self.choose(run, &self.field_type(&f), choices)?;
                run.heap.fields.insert((o, f), v);
            }
            Pending::Var(var) => {
                let v = self.choose(run, &self.sem.var(var).ty.clone(), choices)?;
                run.store.insert(var, v);
            }
        }
        Ok(())
    }

    /// Evaluates with `f`; where a pending value is missing, chooses the pending values one
    /// at a time, in order, evaluating again after each.
    pub(super) fn with_pending<T>(
        &self,
        run: &mut Run,
        choices: &mut dyn Choices,
        f: impl Fn(&Self, &Run) -> Result<T, Stop>,
    ) -> X<T> {
        loop {
            let r = f(self, run);
            if missing_value(&r) && !run.pending.is_empty() {
                self.resolve_first_pending(run, choices)?;
                continue;
            }
            return self.evaluated(run, r, run.inhale_checked);
        }
    }

    /// An inhaled `a == b` whose one side is a pending variable or location and whose other
    /// side has a value: the pending one takes it (one of the values the semantics allows).
    pub(super) fn solve_equality(&self, run: &mut Run, e: &Expr) -> bool {
        let ExprKind::Binary(BinaryOp::Eq, a, b) = &e.kind else {
            return false;
        };
        for (target, other) in [(a, b), (b, a)] {
            let pending = match &target.kind {
                ExprKind::Ident(_) => self
                    .sem
                    .idents
                    .get(target.id.0 as usize)
                    .copied()
                    .flatten()
                    .map(Pending::Var),
                ExprKind::FieldAccess(receiver, _) => {
                    match (
                        self.sem.field_access(target.id).cloned(),
                        self.ev.eval(&self.state(run), receiver),
                    ) {
                        (Some(FieldTarget::Field(f)), Ok(Value::Ref(Some(o)))) => {
                            Some(Pending::Field(o, f))
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            let Some(pending) = pending.filter(|p| run.pending.contains(p)) else {
                continue;
            };
            let Ok(v) = self.ev.eval(&self.state(run), other) else {
                continue;
            };
            run.pending.retain(|p| *p != pending);
            match pending {
                Pending::Var(var) => {
                    run.store.insert(var, v);
                }
                Pending::Field(o, f) => {
                    run.heap.fields.insert((o, f), v);
                }
            }
            return true;
        }
        false
    }

    /// The values the sides of the equality `e` have, where they have one.
    fn equality_sides(&self, run: &Run, e: &Expr) -> Vec<Value> {
        let ExprKind::Binary(BinaryOp::Eq, a, b) = &e.kind else {
            return Vec::new();
        };
        [a, b]
            .iter()
            .filter_map(|side| self.ev.eval(&self.state(run), side).ok())
            .collect()
    }

    /// Inhales `e`, which must be well-defined where it is (an `inhale` statement's
    /// assertion, a postcondition of a function without a body).
    pub(super) fn inhale_well_defined(
        &self,
        run: &mut Run,
        e: &Expr,
        choices: &mut dyn Choices,
    ) -> X<()> {
        self.well_defined(run, |run| self.inhale(run, e, choices, false))
    }

    /// Runs `inhale` (an inhale) where what it inhales must be well-defined: a method's
    /// precondition, an `inhale` or `assume` statement's assertion.
    pub(super) fn well_defined<T>(
        &self,
        run: &mut Run,
        inhale: impl FnOnce(&mut Run) -> X<T>,
    ) -> X<T> {
        let outer = std::mem::replace(&mut run.inhale_checked, true);
        let r = inhale(run);
        run.inhale_checked = outer;
        r
    }

    pub(super) fn inhale_times(
        &self,
        run: &mut Run,
        e: &Expr,
        factor: &BigRational,
        choices: &mut dyn Choices,
        keep_values: bool,
    ) -> X<()> {
        self.step(run)?;
        match &e.kind {
            ExprKind::Acc(loc, amount) => {
                let location =
                    self.with_pending(run, choices, |m, run| m.ev.location_in(&m.state(run), loc))?;
                let amount = if is_wildcard(amount.as_deref()) {
                    // Some positive amount that fits: half of what is not held.
                    let half = BigRational::new(1.into(), 2.into());
                    match &location {
                        Location::Field(..) => {
                            let held = run.heap_perm(&location);
                            if held >= BigRational::one() {
                                return out(Outcome::Infeasible);
                            }
                            (BigRational::one() - held) * half
                        }
                        Location::Instance(..) => half,
                    }
                } else {
                    self.with_pending(run, choices, |m, run| {
                        m.ev.amount_in(&m.state(run), amount.as_deref(), factor)
                    })?
                };
                self.give(run, location, amount, keep_values)
            }
            ExprKind::Call(..) if matches!(self.sem.call(e.id), Some(CallTarget::Predicate(_))) => {
                let location =
                    self.with_pending(run, choices, |m, run| m.ev.location_in(&m.state(run), e))?;
                self.give(run, location, factor.clone(), keep_values)
            }
            ExprKind::Binary(BinaryOp::And, a, b) => {
                self.inhale_times(run, a, factor, choices, keep_values)?;
                self.inhale_times(run, b, factor, choices, keep_values)
            }
            ExprKind::Binary(BinaryOp::Implies, a, b) => {
                let holds =
                    self.with_pending(run, choices, |m, run| m.ev.eval(&m.state(run), a))?;
                if holds == Value::Bool(true) {
                    self.inhale_times(run, b, factor, choices, keep_values)?;
                }
                Ok(())
            }
            ExprKind::Cond(c, a, b) => {
                let holds =
                    self.with_pending(run, choices, |m, run| m.ev.eval(&m.state(run), c))?;
                let branch = if holds == Value::Bool(true) { a } else { b };
                self.inhale_times(run, branch, factor, choices, keep_values)
            }
            ExprKind::Quantifier {
                kind: QuantifierKind::Forall,
                body,
                ..
            } if self.sem.type_of(e.id) == Some(&Type::Impure) => {
                // Values chosen inside the loop could allocate objects its domain has not
                // got: the pending ones are chosen first.
                if !run.pending.is_empty() {
                    self.resolve_pending(run, choices)?;
                }
                let domain =
                    self.with_pending(run, choices, |m, run| m.ev.domain_in(&m.state(run), e))?;
                for values in domain {
                    let vars: Vec<VarId> = (0..values.len())
                        .filter_map(|i| self.sem.binders.get(&(e.id, i)).copied())
                        .collect();
                    for (var, v) in vars.iter().zip(&values) {
                        run.store.insert(*var, v.clone());
                    }
                    let r = self.inhale_times(run, body, factor, choices, keep_values);
                    for var in &vars {
                        run.store.remove(var);
                    }
                    r?;
                }
                Ok(())
            }
            ExprKind::Binary(BinaryOp::Wand, ..) => {
                if !factor.is_one() {
                    return out(Outcome::Unknown("a magic wand under a fraction".into()));
                }
                let key =
                    self.with_pending(run, choices, |m, run| m.ev.wand_key_in(&m.state(run), e))?;
                // One unfolded here was folded here: where it came from is not known.
                let origin = if keep_values {
                    WandOrigin::Opaque
                } else {
                    WandOrigin::Inhaled
                };
                run.heap.wands.push(WandInstance { key, origin });
                Ok(())
            }
            ExprKind::InhaleExhale(inhaled, _) | ExprKind::Annotated(_, inhaled) => {
                self.inhale_times(run, inhaled, factor, choices, keep_values)
            }
            _ => loop {
                // After each pending value chosen, the equality may give the next one.
                if self.solve_equality(run, e) {
                    return Ok(());
                }
                // Domain applications whose arguments got values since the statement's
                // were chosen get theirs now (reading one would fix it to the default).
                if self.applies_domain_function(e) {
                    self.interpret_domains(run, &[e], &[e], choices)?;
                }
                // Values missing in one side of an equality are first tried as the other;
                // instances inhaled before (a callee's postcondition) whose contents `e`
                // reads get contents of their own first.
                run.hints = self.equality_sides(run, e);
                let r = self.open_contents_for(run, &[e], choices).and_then(|()| {
                    let outer = std::mem::replace(
                        &mut run.scale,
                        (!factor.is_one()).then(|| factor.clone()),
                    );
                    let r = self.ev.eval(&self.state(run), e);
                    run.scale = outer;
                    if missing_value(&r) && !run.pending.is_empty() {
                        self.resolve_first_pending(run, choices)?;
                        return Ok(None);
                    }
                    self.evaluated(run, r, run.inhale_checked).map(Some)
                });
                run.hints.clear();
                return match r? {
                    None => continue,
                    Some(Value::Bool(true)) => Ok(()),
                    Some(Value::Bool(false)) => out(Outcome::Infeasible),
                    Some(other) => out(Outcome::Unknown(format!("an inhaled {}", other.kind()))),
                };
            },
        }
    }

    pub(super) fn give(
        &self,
        run: &mut Run,
        location: Location,
        amount: BigRational,
        keep_values: bool,
    ) -> X<()> {
        if amount < BigRational::zero() {
            return out(Outcome::Unknown("a negative permission inhaled".into()));
        }
        if amount.is_zero() {
            return Ok(());
        }
        match location {
            Location::Field(Value::Ref(Some(o)), f) => {
                let held = run.heap.perm(o, &f);
                let total = &held + &amount;
                if total > BigRational::one() {
                    // More than the whole of a location: no such state.
                    return out(Outcome::Infeasible);
                }
                let known = run.heap.value(o, &f).cloned();
                let carried = run.carried.contains(&(o, f.clone()));
                match known {
                    Some(v) if !held.is_zero() || keep_values || carried => {
                        run.heap.set(o, &f, v, total)
                    }
                    _ => {
                        // A value of its own, chosen later (an equality may give it).
                        run.heap.set_perm(o, &f, total);
                        run.forget(o, f);
                    }
                }
                Ok(())
            }
            Location::Field(_, _) => out(Outcome::Infeasible),
            Location::Instance(p, args) => {
                if self.holds_a_field_of_null(&p, &args) {
                    // Its body cannot hold: no such state.
                    return out(Outcome::Infeasible);
                }
                let held = run.heap.instance(&p, &args);
                let carried = run.carried_instances.contains(&(p.clone(), args.clone()));
                if held.is_zero() {
                    // A new instance: not the pre-state's.
                    run.unchanged_since_pre.remove(&(p.clone(), args.clone()));
                }
                if held.is_zero() && !keep_values && !carried {
                    run.fresh.insert((p.clone(), args.clone()));
                }
                run.heap.set_instance(&p, args, held + amount);
                Ok(())
            }
        }
    }

    /// Whether the body of `predicate(args)` holds, unconditionally, a permission to a field
    /// of a parameter that is `null` here (then no state holds the instance).
    fn holds_a_field_of_null(&self, predicate: &str, args: &[Value]) -> bool {
        let (Some(body), Some(info)) = (
            self.ev.predicate_body(predicate),
            self.sem.predicates.get(predicate),
        ) else {
            return false;
        };
        crate::eval::conjuncts(body).iter().any(|part| {
            let ExprKind::Acc(loc, amount) = &part.kind else {
                return false;
            };
            let ExprKind::FieldAccess(receiver, _) = &loc.kind else {
                return false;
            };
            let positive = matches!(
                amount.as_deref().map(|a| &a.kind),
                None | Some(ExprKind::Write)
            );
            let param = self
                .sem
                .idents
                .get(receiver.id.0 as usize)
                .copied()
                .flatten();
            let null = param
                .and_then(|v| info.params.iter().position(|p| *p == v))
                .and_then(|i| args.get(i))
                .is_some_and(|v| *v == Value::null());
            positive && null
        })
    }
}
