//! Predicate instances in a run: fold, unfold, and quasihavoc of a location or an instance.

use germanium_semantics::CallTarget;
use germanium_semantics::VarId;
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind, Stmt, StmtKind};
use num_rational::BigRational;
use num_traits::{One, Zero};

use super::{out, Check, Choices, Instance, Machine, Outcome, Run, X};
use crate::eval::Location;
use crate::heap::WandOrigin;
use crate::value::Value;

impl<'p> Machine<'p> {
    /// `quasihavoc [c ==>] e.f`: where `c` holds, a held field location gets a value of its
    /// own (chosen when read); a predicate instance's contents become new, and so do the
    /// values of a held wand's footprint.
    pub(super) fn quasihavoc(&self, run: &mut Run, cond: Option<&Expr>, resource: &Expr) -> X<()> {
        if let Some(c) = cond {
            if !self.boolean(run, c)? {
                return Ok(());
            }
        }
        if let ExprKind::Binary(BinaryOp::Wand, ..) = &resource.kind {
            // A wand held keeps its permissions; its footprint's values become any: applying
            // it gives what applying an inhaled one gives.
            let key = self.ev.wand_key_in(&self.state(run), resource);
            let key = self.evaluated(run, key, true)?;
            for wand in run.heap.wands.iter_mut().filter(|w| w.key == key) {
                if matches!(
                    wand.origin,
                    WandOrigin::Packaged(_) | WandOrigin::Replayed(_) | WandOrigin::Opaque
                ) {
                    wand.origin = WandOrigin::Inhaled;
                }
            }
            return Ok(());
        }
        let location = self.ev.location_in(&self.state(run), resource);
        match self.evaluated(run, location, true)? {
            Location::Field(Value::Ref(Some(o)), f) => {
                if run.heap.perm(o, &f) > BigRational::zero() {
                    run.forget(o, f);
                }
                Ok(())
            }
            Location::Field(..) => Ok(()),
            Location::Instance(p, args) => {
                if run.heap.instance(&p, &args) > BigRational::zero() {
                    run.unchanged_since_pre.remove(&(p.clone(), args.clone()));
                    run.fresh.insert((p, args));
                }
                Ok(())
            }
        }
    }

    /// `quasihavocall xs :: [c ==>] r`: `quasihavoc` of every held location or instance `r`
    /// names for values of `xs` where `c` holds. The locations held are the candidates: each
    /// argument of `r` must be one of `xs` or read none of them.
    pub(super) fn quasihavocall(
        &self,
        run: &mut Run,
        quantifier: &Stmt,
        cond: Option<&Expr>,
        resource: &Expr,
    ) -> X<()> {
        let vars: Vec<VarId> = (0..)
            .map_while(|i| self.sem.binders.get(&(quantifier.id, i)).copied())
            .collect();
        if let ExprKind::Binary(BinaryOp::Wand, ..) = &resource.kind {
            return self.quasihavocall_wands(run, &vars, cond, resource);
        }
        let (args, field): (Vec<&Expr>, Option<String>) = match &resource.kind {
            ExprKind::FieldAccess(receiver, _) => match self.sem.field_access(resource.id) {
                Some(germanium_semantics::FieldTarget::Field(f)) => {
                    (vec![receiver], Some(f.clone()))
                }
                _ => return out(Outcome::Unknown("a quasihavocall of no field".into())),
            },
            ExprKind::Call(_, args) => (args.iter().collect(), None),
            _ => {
                return out(Outcome::Unknown(
                    "a quasihavocall of no field or predicate".into(),
                ))
            }
        };
        // Each held resource of the right kind, as the values of its arguments.
        let held: Vec<(Vec<Value>, Option<String>)> = match &field {
            Some(f) => run
                .heap
                .perms
                .keys()
                .filter(|(_, g)| g == f)
                .map(|(o, _)| (vec![Value::Ref(Some(*o))], None))
                .collect(),
            None => {
                let Some(germanium_semantics::CallTarget::Predicate(p)) =
                    self.sem.call(resource.id)
                else {
                    return out(Outcome::Unknown("a quasihavocall of no predicate".into()));
                };
                run.heap
                    .predicates
                    .keys()
                    .filter(|(q, _)| q == p)
                    .map(|(q, a)| (a.clone(), Some(q.clone())))
                    .collect()
            }
        };
        for (values, predicate) in held {
            let mut bound: Vec<(VarId, Value)> = Vec::new();
            let mut matches = true;
            for (arg, v) in args.iter().zip(&values) {
                let var = match &arg.kind {
                    ExprKind::Ident(_) => self.sem.var_id(arg.id),
                    _ => None,
                };
                match var.filter(|v| vars.contains(v)) {
                    Some(x) => match bound.iter().find(|(y, _)| *y == x) {
                        Some((_, w)) => matches &= w == v,
                        None => bound.push((x, v.clone())),
                    },
                    None => {
                        if !self.ev.reads_no_heap(arg, &vars) {
                            return out(Outcome::Unknown(
                                "a quasihavocall whose resource's arguments compute with its variables".into(),
                            ));
                        }
                        matches &= self.value(run, arg)? == *v;
                    }
                }
            }
            if !matches || bound.len() != vars.len() {
                if matches {
                    return out(Outcome::Unknown(
                        "a quasihavocall variable no argument names".into(),
                    ));
                }
                continue;
            }
            for (x, v) in &bound {
                run.store.insert(*x, v.clone());
            }
            let holds = match cond {
                Some(c) => self.boolean(run, c),
                None => Ok(true),
            };
            for (x, _) in &bound {
                run.store.remove(x);
            }
            if !holds? {
                continue;
            }
            match (predicate, &field, values.first()) {
                (Some(p), _, _) => {
                    run.unchanged_since_pre.remove(&(p.clone(), values.clone()));
                    run.fresh.insert((p, values));
                }
                (None, Some(f), Some(Value::Ref(Some(o)))) => run.forget(*o, f.clone()),
                _ => {}
            }
        }
        Ok(())
    }

    /// `quasihavocall xs :: [c ==>] A --* B`: `quasihavoc` of the wand for every value of
    /// `xs` where `c` holds. References range over `null` and every object (a wand held
    /// names no other), booleans over both values.
    fn quasihavocall_wands(
        &self,
        run: &mut Run,
        vars: &[VarId],
        cond: Option<&Expr>,
        wand: &Expr,
    ) -> X<()> {
        let mut combinations: Vec<Vec<Value>> = vec![Vec::new()];
        for var in vars {
            let values: Vec<Value> = match &self.sem.var(*var).ty {
                germanium_semantics::Type::Ref => std::iter::once(Value::null())
                    .chain(run.heap.all_objects().map(|o| Value::Ref(Some(o))))
                    .collect(),
                germanium_semantics::Type::Bool => vec![Value::Bool(false), Value::Bool(true)],
                other => {
                    return out(Outcome::Unknown(format!(
                        "a quasihavocall of wands over {other:?}"
                    )))
                }
            };
            combinations = crate::eval::extend_combinations(combinations, &values);
        }
        for values in combinations {
            for (var, v) in vars.iter().zip(&values) {
                run.store.insert(*var, v.clone());
            }
            let r = self.quasihavoc(run, cond, wand);
            for var in vars {
                run.store.remove(var);
            }
            r?;
        }
        Ok(())
    }

    /// `acc(P(args), p)`: the predicate, its arguments and the amount.
    pub(super) fn instance(
        &self,
        run: &Run,
        e: &Expr,
    ) -> X<(
        String,
        Vec<Value>,
        BigRational,
        &'p germanium_syntax::ast::Expr,
    )> {
        let (loc, amount) = match &e.kind {
            ExprKind::Acc(loc, amount) => (loc.as_ref(), amount.as_deref()),
            _ => (e, None),
        };
        let location = self.ev.location_in(&self.state(run), loc);
        let Location::Instance(name, args) = self.evaluated(run, location, true)? else {
            return out(Outcome::Unknown("fold or unfold of no predicate".into()));
        };
        let amount = if crate::eval::is_wildcard(amount) {
            // Some positive amount held: half of it (a fold of a wildcard: half of one).
            let held = run.heap.instance(&name, &args);
            let whole = if held.is_zero() {
                BigRational::one()
            } else {
                held
            };
            whole / BigRational::from_integer(2.into())
        } else {
            let amount = self
                .ev
                .amount_in(&self.state(run), amount, &BigRational::one());
            self.evaluated(run, amount, true)?
        };
        let Some(body) = self.ev.predicate_body(&name) else {
            return out(Outcome::Unknown(format!("`{name}` is abstract")));
        };
        Ok((name, args, amount, body))
    }

    /// Binds a predicate's parameters to `args` for its body, and gives the old bindings.
    pub(super) fn bind(
        &self,
        run: &mut Run,
        name: &str,
        args: &[Value],
    ) -> Vec<(VarId, Option<Value>)> {
        let params = self
            .sem
            .predicates
            .get(name)
            .map(|p| p.params.clone())
            .unwrap_or_default();
        params
            .into_iter()
            .zip(args)
            .map(|(p, v)| (p, run.store.insert(p, v.clone())))
            .collect()
    }

    pub(super) fn unbind(&self, run: &mut Run, saved: Vec<(VarId, Option<Value>)>) {
        for (p, v) in saved {
            match v {
                Some(v) => run.store.insert(p, v),
                None => run.store.remove(&p),
            };
        }
    }

    pub(super) fn fold(&self, run: &mut Run, e: &Expr) -> X<()> {
        let (name, args, amount, body) = self.instance(run, e)?;
        let saved = self.bind(run, &name, &args);
        if self.supplied(run) {
            if let Err(end) = self.supply_assertion(run, None, body, &amount) {
                self.unbind(run, saved);
                return Err(end);
            }
        }
        let state = self.state(run);
        let r = self.ev.take(&state, &run.heap, body, &amount);
        let taken = self.evaluated(run, r, true);
        self.unbind(run, saved);
        match taken? {
            Some(left) => {
                run.heap = left;
                let held = run.heap.instance(&name, &args);
                run.fresh.remove(&(name.clone(), args.clone()));
                run.heap.set_instance(&name, args, held + amount);
                Ok(())
            }
            None => self.fail(
                run,
                Check::Fold,
                e.span,
                "the predicate's body does not hold",
            ),
        }
    }

    pub(super) fn unfold(&self, run: &mut Run, e: &Expr, choices: &mut dyn Choices) -> X<()> {
        let (name, args, amount, body) = self.instance(run, e)?;
        if self.supplied(run) {
            let asked = [(
                Location::Instance(name.clone(), args.clone()),
                amount.clone(),
            )];
            self.supply(run, &mut [], &asked)?;
        }
        let held = run.heap.instance(&name, &args);
        if held < amount || amount <= BigRational::zero() {
            return self.fail(run, Check::Unfold, e.span, "the instance is not held");
        }
        run.heap.set_instance(&name, args.clone(), held - &amount);
        let instance = (name.clone(), args.clone());
        let fresh = run.fresh.contains(&instance);
        let before = run.before_contents(&instance);
        let saved = self.bind(run, &name, &args);
        let r = self.inhale_times(run, body, &amount, choices, !fresh);
        self.unbind(run, saved);
        r?;
        self.resolve_pending(run, choices)?;
        run.contents_seen(before);
        // Unfolded, its contents may change.
        run.unchanged_since_pre.remove(&instance);
        Ok(())
    }

    /// Where `s` reads inside predicate instances (`unfolding`, a function's body, a
    /// callee's contract), gives the contents of the instances held whose contents were not
    /// seen values of their own, as an unfold would, a few levels deep; the instances stay
    /// folded. An instance whose contents cannot hold with the rest of the state ends the
    /// run as infeasible.
    pub(super) fn open_contents(
        &self,
        run: &mut Run,
        s: &Stmt,
        choices: &mut dyn Choices,
    ) -> X<()> {
        if run.fresh.is_empty() {
            return Ok(());
        }
        let exprs = self.statement_reads(s);
        self.open_contents_for(run, &exprs, choices)
    }

    /// As `open_contents`, where `exprs` read inside instances.
    pub(super) fn open_contents_for(
        &self,
        run: &mut Run,
        exprs: &[&Expr],
        choices: &mut dyn Choices,
    ) -> X<()> {
        if run.fresh.is_empty() || !self.reads_inside_instances(exprs) {
            return Ok(());
        }
        // Instances to open, with the amount held of each: first those held, then those
        // inside the ones opened (folded there, so held by no one directly). Each with the
        // instance held it is inside (itself at first).
        let mut frontier: Vec<(Instance, BigRational, Instance)> = run
            .fresh
            .iter()
            .map(|i| (i.clone(), run.heap.instance(&i.0, &i.1), i.clone()))
            .filter(|(_, amount, _)| *amount > BigRational::zero())
            .collect();
        // The contents are all held at once, together with the state: their permissions
        // add up (a location more than whole, an instance inside itself, is no state); the
        // state's own come back after.
        let (perms, predicates, wands) = (
            run.heap.perms.clone(),
            run.heap.predicates.clone(),
            run.heap.wands.clone(),
        );
        for _ in 0..CONTENT_LEVELS {
            let mut inner = Vec::new();
            for ((name, args), amount, root) in std::mem::take(&mut frontier) {
                let fresh = run.fresh.remove(&(name.clone(), args.clone()));
                let before = run.before_contents(&root);
                let Some(body) = self.ev.predicate_body(&name) else {
                    continue;
                };
                let had = run.heap.predicates.clone();
                let saved = self.bind(run, &name, &args);
                let r = self.inhale_times(run, body, &amount, choices, !fresh);
                self.unbind(run, saved);
                r?;
                self.resolve_pending(run, choices)?;
                for (instance, now) in &run.heap.predicates {
                    let had = had.get(instance).cloned().unwrap_or_default();
                    if *now > had {
                        inner.push((instance.clone(), now - had, root.clone()));
                    }
                }
                run.contents_seen(before);
            }
            if inner.is_empty() {
                break;
            }
            frontier = inner;
        }
        run.heap.perms = perms;
        run.heap.predicates = predicates;
        run.heap.wands = wands;
        Ok(())
    }

    /// The expressions `s` evaluates: its own and, for a call, the callee's contract.
    pub(super) fn statement_reads<'s>(&self, s: &'s Stmt) -> Vec<&'s Expr>
    where
        'p: 's,
    {
        let mut exprs = germanium_semantics::visit::stmt_exprs(s);
        let callee = match &s.kind {
            StmtKind::Call(..) => self.sem.call(s.id),
            StmtKind::Assign(_, rhs) => self.sem.call(rhs.id),
            _ => None,
        };
        if let Some(CallTarget::Method(m)) = callee {
            if let Some(method) = self.ev.methods.get(m.as_str()) {
                exprs.extend(method.contract.requires.iter());
                exprs.extend(method.contract.ensures.iter());
            }
        }
        exprs
    }

    pub(super) fn reads_inside_instances(&self, exprs: &[&Expr]) -> bool {
        let mut reads = false;
        for e in exprs {
            germanium_semantics::visit::walk_expr(e, &mut |sub| match &sub.kind {
                ExprKind::Unfolding(..) => reads = true,
                ExprKind::Call(..) => {
                    reads |= matches!(self.sem.call(sub.id), Some(CallTarget::Function(_)))
                }
                _ => {}
            });
        }
        reads
    }
}

/// How many levels of nested instances a statement's reads open at most.
const CONTENT_LEVELS: usize = 3;
