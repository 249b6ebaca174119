//! Heap-dependent functions, framed by their footprint (seed 002): `f(args)` is an SMT
//! function of its arguments and of the values at the locations its precondition holds
//! (`acc(e.f)` clauses, in order), so an application keeps its value while those locations
//! do, whatever else changes. A limited twin `f%limited` with the same values stops the
//! definition from unrolling itself: the definitional axiom is triggered by `f` and speaks
//! of `f%limited` inside. Only a function that verified gets its axioms (definition and
//! postcondition, both under the pure part of its precondition); an unverified one stays
//! uninterpreted. Preconditions of other shapes (predicates, conditional or quantified
//! permissions) are not lowered yet.

use std::collections::HashMap;

use germanium_semantics::types::Type;
use germanium_semantics::VarId;
use germanium_smt::{FunDecl, Sort, Symbol, Term};
use germanium_syntax::ast::{BinaryOp, Expr, ExprKind, Function};
use germanium_verifier::errors::{ErrorContext, Reason};

use germanium_semantics::calls::reaches;

use crate::body_footprints::BodyFootprint;
use crate::lower::{unsupported, Lower, Tables, R};
use crate::snapshots::{snapshot_value, Snapshot};
use crate::state::{Memory, State};

/// What the VCG knows of one function.
#[derive(Clone, Debug)]
pub struct FunctionShape<'a> {
    pub function: &'a Function,
    pub params: Vec<VarId>,
    pub result: Type,
    /// The footprint: the locations the precondition holds, in order, each with the
    /// conditions under which it does (each condition and whether it holds or not).
    pub footprint: Vec<(Conditions<'a>, Footprint<'a>)>,
    pub full: FunDecl,
    pub limited: FunDecl,
    /// A recursive function's definition holds where this does: everywhere but in the
    /// verification of a function of its recursion cluster, whose termination would be
    /// proved from a definition that may contradict itself (`f(x) == 1 + f(x)`).
    pub trusted: Option<FunDecl>,
    /// `@opaque()`: its definition holds only at applications `@reveal()` names; the others
    /// are of its limited twin (its postcondition holds at all).
    pub opaque: bool,
    /// The quantified permissions of the footprint, in order (see `body_footprints`).
    pub quantified: Vec<BodyFootprint<'a>>,
    /// With quantified permissions: `fun%f%frame`, of the arguments, the other footprint
    /// values and the fingerprints, which the limited twin equals.
    pub framed: Option<FunDecl>,
    /// With predicate instances in the footprint: `fun%f%held`, of the arguments and the
    /// footprint's values, true where a state satisfying the precondition has them. The
    /// function's verification read the instances' bodies, so its postcondition holds of
    /// such values only, not of every frame: a frame defined on one path (a fold's) is
    /// no instance's on another. An application asserts it on its own path where the
    /// precondition holds; a verified function's body asserts it of the applications it
    /// makes (see [`Lower::function_axioms`]).
    pub held: Option<FunDecl>,
}

impl FunctionShape<'_> {
    /// Whether this function's definition may be assumed while `member` is verified (a
    /// function, or `None` for a method or predicate).
    pub fn trusted_in(&self, t: &Tables<'_>, member: Option<&str>) -> bool {
        let name = &self.function.name.name;
        match member {
            Some(m) => {
                !(m == name
                    || reaches(&t.function_call_graph, m, name)
                        && reaches(&t.function_call_graph, name, m))
            }
            None => true,
        }
    }
}

/// Conditions under which a location is in a footprint: each expression and whether it is
/// true there.
pub type Conditions<'a> = Vec<(&'a Expr, bool)>;

/// A location of a function's footprint.
#[derive(Clone, Debug)]
pub enum Footprint<'a> {
    /// `acc(e.f)`: the field and the receiver.
    Field(String, &'a Expr),
    /// `P(args)`: the predicate and its arguments.
    Predicate(String, &'a [Expr]),
    /// `forall xs :: c ==> acc(e.f, p)` (or of a predicate): the map and the quantifier.
    Quantified(String, &'a Expr),
}

impl Footprint<'_> {
    /// The field or predicate.
    pub fn map(&self) -> &str {
        match self {
            Footprint::Field(f, _) | Footprint::Predicate(f, _) | Footprint::Quantified(f, _) => f,
        }
    }
}

/// The shapes of the program's functions; a function whose precondition the VCG cannot
/// frame is absent (its applications are then not lowered).
pub fn shapes<'a>(t: &Tables<'a>) -> HashMap<String, FunctionShape<'a>> {
    let mut out = HashMap::new();
    for item in &t.program.items {
        let germanium_syntax::ast::ItemKind::Function(f) = &item.kind else {
            continue;
        };
        let opaque = item.annotations.iter().any(|a| a.name.name == "opaque");
        let Some(info) = t.sem.functions.get(&f.name.name) else {
            continue;
        };
        let mut footprint = Vec::new();
        if !f
            .contract
            .requires
            .iter()
            .all(|pre| collect_footprint(t.program, t.sem, pre, &mut Vec::new(), &mut footprint))
        {
            continue;
        }
        let mut args = Vec::new();
        let mut sorts_known = true;
        for p in &info.params {
            match t.theories.sort(&t.sem.var(*p).ty) {
                Ok(s) => args.push(s),
                Err(_) => sorts_known = false,
            }
        }
        let name = &f.name.name;
        let mut quantified = Vec::new();
        // The frame function's arguments: fingerprints where the function's are heaps.
        let mut framed_args = args.clone();
        for (_, item) in &footprint {
            if let Footprint::Quantified(map, forall) = item {
                match t.body_footprints.get(&forall.id) {
                    Some(b) if b.footprint.map == *map => {
                        args.push(b.footprint.heap.clone());
                        framed_args.push(t.frames.sort.clone());
                        quantified.push(b.clone());
                    }
                    _ => sorts_known = false,
                }
                continue;
            }
            let before = args.len();
            match item {
                Footprint::Field(field, _) => match t.fields.iter().find(|(f, _)| f == field) {
                    Some((_, s)) => args.push(s.clone()),
                    None => sorts_known = false,
                },
                Footprint::Predicate(name, _) if t.predicates.contains_key(name) => {
                    args.push(t.frames.sort.clone())
                }
                Footprint::Predicate(..) => sorts_known = false,
                Footprint::Quantified(..) => {}
            }
            framed_args.extend(args[before..].iter().cloned());
        }
        let Ok(result) = t.theories.sort(&info.result) else {
            continue;
        };
        if !sorts_known {
            continue;
        }
        let framed = (!quantified.is_empty()).then(|| {
            FunDecl::new(
                Symbol::user(&format!("fun%{name}%frame")),
                framed_args,
                result.clone(),
            )
        });
        let full = FunDecl::new(
            Symbol::user(&format!("fun%{name}")),
            args.clone(),
            result.clone(),
        );
        let held = crate::function_held::held_decl(name, &footprint, &args, t);
        let limited = FunDecl::new(Symbol::user(&format!("fun%{name}%limited")), args, result);
        let recursive = reaches(&t.function_call_graph, name, name);
        let trusted = recursive
            .then(|| FunDecl::constant(Symbol::user(&format!("fun%{name}%trusted")), Sort::Bool));
        out.insert(
            name.clone(),
            FunctionShape {
                function: f,
                params: info.params.clone(),
                result: info.result.clone(),
                footprint,
                full,
                limited,
                trusted,
                opaque,
                quantified,
                framed,
                held,
            },
        );
    }
    out
}

/// `name(args)` in a domain axiom: the function's SMT symbol, for a function whose value
/// depends on its arguments only (its precondition holds no permission) and whose result
/// is a built-in sort (the symbol must be the one its shape declares, which is known before
/// the theories' sorts are); `None` leaves the axiom out.
pub fn in_domain_axiom(
    program: &germanium_syntax::ast::Program,
    sem: &germanium_semantics::Semantics,
    name: &str,
    args: Vec<Term>,
) -> Option<Term> {
    let function = program.items.iter().find_map(|item| match &item.kind {
        germanium_syntax::ast::ItemKind::Function(f) if f.name.name == name => Some(f),
        _ => None,
    })?;
    let opaque = program.items.iter().any(|item| {
        matches!(&item.kind, germanium_syntax::ast::ItemKind::Function(f) if f.name.name == name)
            && item.annotations.iter().any(|a| a.name.name == "opaque")
    });
    if opaque
        || function
            .contract
            .requires
            .iter()
            .any(|p| holds_permission(sem, p))
    {
        return None;
    }
    let result = match &sem.functions.get(name)?.result {
        Type::Int => Sort::Int,
        Type::Bool => Sort::Bool,
        Type::Perm => Sort::Real,
        _ => return None,
    };
    let sorts = args.iter().map(|a| a.sort().clone()).collect();
    let decl = FunDecl::new(Symbol::user(&format!("fun%{name}")), sorts, result);
    Some(Term::app(&decl, args))
}

/// Adds the locations `a` holds (under `conditions`) to `out`; false for a precondition the
/// VCG cannot frame.
fn collect_footprint<'a>(
    program: &'a germanium_syntax::ast::Program,
    sem: &germanium_semantics::Semantics,
    a: &'a Expr,
    conditions: &mut Conditions<'a>,
    out: &mut Vec<(Conditions<'a>, Footprint<'a>)>,
) -> bool {
    if let Some(pa) = crate::predicates::access(sem, a) {
        out.push((conditions.clone(), Footprint::Predicate(pa.name, pa.args)));
        return true;
    }
    let mut under = |c: &'a Expr, holds: bool, x: &'a Expr, out: &mut Vec<_>| {
        conditions.push((c, holds));
        let framed = collect_footprint(program, sem, x, conditions, out);
        conditions.pop();
        framed
    };
    match &a.kind {
        ExprKind::Acc(loc, amount) => match &loc.kind {
            ExprKind::FieldAccess(rcv, field) => {
                let item = Footprint::Field(field.name.clone(), rcv);
                // `acc(e.f, c ? p : none)` holds the location where `c` does.
                let held_where = amount.as_deref().and_then(|a| match &a.kind {
                    ExprKind::Cond(c, _, none) if matches!(none.kind, ExprKind::NoPerm) => {
                        Some((&**c, true))
                    }
                    ExprKind::Cond(c, none, _) if matches!(none.kind, ExprKind::NoPerm) => {
                        Some((&**c, false))
                    }
                    _ => None,
                });
                let mut at = conditions.clone();
                at.extend(held_where);
                out.push((at, item));
                true
            }
            _ => false,
        },
        ExprKind::Binary(BinaryOp::And, x, y) => {
            collect_footprint(program, sem, x, conditions, out)
                && collect_footprint(program, sem, y, conditions, out)
        }
        ExprKind::Ascribed(x, _) | ExprKind::Annotated(_, x) => {
            collect_footprint(program, sem, x, conditions, out)
        }
        // A fingerprint of the whole heap map over the footprint stands for it.
        ExprKind::Quantifier { .. } if holds_permission(sem, a) => {
            match crate::quantified_frames::framable(program, sem, a) {
                Some(map) => {
                    out.push((conditions.clone(), Footprint::Quantified(map, a)));
                    true
                }
                None => false,
            }
        }
        ExprKind::Binary(BinaryOp::Implies, c, x) => under(c, true, x, out),
        ExprKind::Cond(c, x, y) => under(c, true, x, out) && under(c, false, y, out),
        // What the body may read is the inhale part; the exhale part is only checked where
        // the function is applied.
        ExprKind::InhaleExhale(x, _) => collect_footprint(program, sem, x, conditions, out),
        _ => !holds_permission(sem, a),
    }
}

/// Whether `e` holds permission anywhere (`acc`, a predicate instance, a wand). The
/// instance an `unfolding` opens is only read: `unfolding P(x) in e` is pure if `e` is.
pub(crate) fn holds_permission(sem: &germanium_semantics::Semantics, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Acc(..) | ExprKind::Binary(BinaryOp::Wand, ..) => true,
        ExprKind::Unfolding(_, body) => holds_permission(sem, body),
        _ if matches!(
            sem.call(e.id),
            Some(germanium_semantics::CallTarget::Predicate(_))
        ) =>
        {
            true
        }
        _ => germanium_semantics::visit::children(e)
            .into_iter()
            .any(|x| holds_permission(sem, x)),
    }
}

impl Lower<'_, '_> {
    /// `f(args)` in `st`: its precondition checked (unless reads are lenient), then the
    /// function of the arguments and the footprint's values.
    pub fn apply_function(
        &mut self,
        st: &State,
        guard: &Term,
        e: &Expr,
        name: &str,
        args: Vec<Term>,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let Some(shape) = self.t.functions.get(name).cloned() else {
            return unsupported(e.span, format!("the function {name}"));
        };
        let mut callee = st.clone();
        for (p, a) in shape.params.iter().zip(&args) {
            callee.store.insert(*p, a.clone());
        }
        // The termination and precondition checks; where reads are lenient (checked on
        // their own) or in an axiom, only what they say, for the postcondition below.
        let first_check = self.vc.checks.len();
        self.check_application_terminates(&callee, guard, shape.function, e.span)?;
        let pre_ctx = ErrorContext::at(
            "application.precondition",
            e.span,
            format!("Precondition of function {name} might not hold."),
        );
        self.with_modes(
            |m| m.function_reads = true,
            |l| {
                for pre in &shape.function.contract.requires {
                    l.check_precondition(&callee, guard, pre, &pre_ctx)?;
                }
                Ok(())
            },
        )?;
        let checked = self.vc.checks[first_check..].iter();
        let precondition: Vec<Term> = checked
            .filter(|c| c.error.id.starts_with("application.precondition"))
            .map(|c| c.holds())
            .collect();
        if self.snapshot.is_none() {
            self.defined_facts.extend(precondition.iter().cloned());
        }
        let precondition = Term::and(precondition);
        if self.modes.lenient || self.snapshot.is_some() {
            self.vc.checks.truncate(first_check);
        }
        let mut values = args;
        self.leniently(|l| {
            for (conditions, item) in &shape.footprint {
                if let Footprint::Quantified(map, _) = item {
                    values.push(l.heap_map(&callee, map, e)?);
                    continue;
                }
                let at = l.footprint_location(&callee, guard, item, ctx)?;
                let value = l.read_location(&callee, item.map(), at, e)?;
                let value = l.where_held(&callee, guard, conditions, item, value, ctx)?;
                values.push(value);
            }
            Ok(())
        })?;
        let in_cluster = self.limited.as_deref().is_some_and(|defined| {
            let graph = &self.t.function_call_graph;
            self.modes.all_limited
                || name == defined
                || reaches(graph, name, defined) && reaches(graph, defined, name)
        });
        let hidden = shape.opaque && self.modes.revealing != Some(e.id);
        let decl = if in_cluster || hidden {
            &shape.limited
        } else {
            &shape.full
        };
        self.application_held(&shape, st, guard, &precondition, &values);
        let app = Term::app(decl, values);
        // While functions are verified no postcondition axiom exists: each application gets
        // its function's postcondition where it is applied, the precondition having been
        // checked (as in Viper, which trusts functions to terminate: a recursive application
        // is the induction hypothesis; termination is checked where a measure asks).
        if self.snapshot.is_none()
            && self.verifying_function.is_some()
            && !self.modes.assuming_postcondition
            && !self.t.failed_functions.contains(name)
        {
            let outer = self.result.replace(app.clone());
            let (checks, facts) = (self.vc.checks.len(), self.defined_facts.len());
            // Applications inside the postcondition get none of their own (one level).
            let posts = self.with_modes(
                |m| {
                    m.lenient = true;
                    m.assuming_postcondition = true;
                },
                |l| {
                    let mut out = Vec::new();
                    for post in &shape.function.contract.ensures {
                        out.push(l.expr(&callee, guard, post, ctx)?);
                    }
                    Ok(out)
                },
            );
            self.vc.checks.truncate(checks);
            self.defined_facts.truncate(facts);
            self.result = outer;
            let posts = posts?;
            // Only where the precondition holds, and only for the checks made after this
            // point (see `Lower::activations`): the application's own checks, and those
            // before it, must not be answered by what the postcondition says.
            let applies = Term::and([guard.clone(), precondition]);
            let active = self.vc.fresh("after", germanium_smt::Sort::Bool);
            let assumed = Term::implies(applies, Term::and(posts));
            self.vc.fact(Term::implies(active.clone(), assumed));
            self.activations.push(active);
        }
        Ok(app)
    }

    /// `value` where the conditions hold, else a fixed value (not held, it does not count).
    fn where_held(
        &mut self,
        st: &State,
        guard: &Term,
        conditions: &Conditions<'_>,
        item: &Footprint<'_>,
        value: Term,
        ctx: &ErrorContext,
    ) -> R<Term> {
        if conditions.is_empty() {
            return Ok(value);
        }
        let holds = self.conditions_hold(st, guard, conditions, ctx)?;
        let Some(unheld) = self.t.frames.unheld(item.map()) else {
            return unsupported(Default::default(), "this footprint");
        };
        Ok(Term::ite(holds, value, unheld))
    }

    /// The conjunction of the conditions, in `st`.
    fn conditions_hold(
        &mut self,
        st: &State,
        guard: &Term,
        conditions: &Conditions<'_>,
        ctx: &ErrorContext,
    ) -> R<Term> {
        let mut parts = Vec::new();
        for (c, holds) in conditions {
            let t = self.expr(st, guard, c, ctx)?;
            parts.push(if *holds { t } else { Term::not(t) });
        }
        Ok(Term::and(parts))
    }

    /// Where a footprint's location is in `st`: the receiver, or the predicate location.
    fn footprint_location(
        &mut self,
        st: &State,
        guard: &Term,
        item: &Footprint<'_>,
        ctx: &ErrorContext,
    ) -> R<Term> {
        match item {
            Footprint::Field(_, rcv) => self.expr(st, guard, rcv, ctx),
            Footprint::Quantified(_, forall) => unsupported(forall.span, "this footprint"),
            Footprint::Predicate(name, args) => {
                let Some(shape) = self.t.predicates.get(name).cloned() else {
                    return unsupported(Default::default(), format!("the predicate {name}"));
                };
                let mut terms = Vec::new();
                for a in *args {
                    terms.push(self.expr(st, guard, a, ctx)?);
                }
                Ok(shape.location(terms))
            }
        }
    }

    /// The whole heap map of `map` (a quantified footprint's): the state's, or in an axiom
    /// the one the footprint names.
    pub(crate) fn heap_map(&mut self, st: &State, map: &str, e: &Expr) -> R<Term> {
        if let Some(snapshot) = &self.snapshot {
            match snapshot
                .iter()
                .rev()
                .find(|s| s.map == map && s.heap.is_some())
            {
                Some(s) => return Ok(s.heap.clone().unwrap_or_else(|| s.value.clone())),
                None if self.modes.snapshot_falls_back => {}
                None => return unsupported(e.span, "a read outside the function's footprint"),
            }
        }
        match st.memory.heap.get(map) {
            Some(h) => Ok(h.clone()),
            None => unsupported(e.span, "this field"),
        }
    }

    /// The value at `field` (or predicate) of `r`: the heap's, or in an axiom the
    /// footprint's.
    pub fn read_location(&mut self, st: &State, field: &str, r: Term, e: &Expr) -> R<Term> {
        if let Some(snapshot) = &self.snapshot {
            match snapshot_value(snapshot, field, &r) {
                Some(v) => return Ok(v),
                None if self.modes.snapshot_falls_back => {}
                None => return unsupported(e.span, "a read outside the function's footprint"),
            }
        }
        let Some(heap) = st.memory.heap.get(field) else {
            return unsupported(e.span, "this field");
        };
        let value = Term::select(heap.clone(), r);
        // The heap holds allocated references only (a new object is none of them).
        if *value.sort() == self.t.reference {
            let allocated = Term::select(st.memory.allocated.clone(), value.clone());
            self.vc.fact(allocated);
        }
        Ok(value)
    }

    /// Checks without taking: permissions held (at least the amount), pure parts true.
    fn check_precondition(
        &mut self,
        st: &State,
        guard: &Term,
        a: &Expr,
        ctx: &ErrorContext,
    ) -> R<()> {
        if let Some(pa) = crate::predicates::access(self.t.sem, a) {
            let loc = self.instance(st, guard, &pa, ctx)?;
            let Some(mask) = st.memory.mask.get(&pa.name) else {
                return unsupported(pa.call.span, "this predicate");
            };
            let held = Term::gt(Term::select(mask.clone(), loc), Term::real(0, 1));
            self.check(guard, held, ctx, Reason::InsufficientPermission, pa.call);
            return Ok(());
        }
        match &a.kind {
            ExprKind::Quantifier { .. } if holds_permission(self.t.sem, a) => {
                self.check_quantified_held(st, guard, a, ctx)
            }
            ExprKind::Ascribed(x, _) | ExprKind::Annotated(_, x) => {
                self.check_precondition(st, guard, x, ctx)
            }
            ExprKind::InhaleExhale(_, x) => self.check_precondition(st, guard, x, ctx),
            ExprKind::Binary(BinaryOp::And, x, y) => {
                self.check_precondition(st, guard, x, ctx)?;
                self.check_precondition(st, guard, y, ctx)
            }
            ExprKind::Binary(BinaryOp::Implies, c, x) if holds_permission(self.t.sem, x) => {
                let c = self.expr(st, guard, c, ctx)?;
                let inner = Term::and([guard.clone(), c]);
                self.check_precondition(st, &inner, x, ctx)
            }
            ExprKind::Cond(c, x, y) if holds_permission(self.t.sem, a) => {
                let c = self.expr(st, guard, c, ctx)?;
                let then = Term::and([guard.clone(), c.clone()]);
                self.check_precondition(st, &then, x, ctx)?;
                let otherwise = Term::and([guard.clone(), Term::not(c)]);
                self.check_precondition(st, &otherwise, y, ctx)
            }
            ExprKind::Acc(loc, _) => {
                let ExprKind::FieldAccess(rcv, field) = &loc.kind else {
                    return unsupported(loc.span, "predicate permissions");
                };
                let r = self.expr(st, guard, rcv, ctx)?;
                let Some(mask) = st.memory.mask.get(&field.name) else {
                    return unsupported(field.span, "this field");
                };
                // A function needs only some positive amount of each permission (Viper
                // reads its amounts as wildcards).
                let held = Term::gt(Term::select(mask.clone(), r), Term::real(0, 1));
                self.check(guard, held, ctx, Reason::InsufficientPermission, loc);
                Ok(())
            }
            _ if holds_permission(self.t.sem, a) => unsupported(a.span, "this precondition"),
            _ => {
                let t = self.expr(st, guard, a, ctx)?;
                self.check_ending_path(guard, t, ctx, Reason::AssertionFalse, a);
                Ok(())
            }
        }
    }

    /// A function's body and postcondition against its precondition.
    pub fn function(&mut self, f: &Function) -> R<()> {
        self.verifying_function = Some(f.name.name.clone());
        self.nests_instances = germanium_semantics::auto_import::has_predicate_measure(
            &f.contract.decreases,
            self.t.sem,
        );
        let r = self.function_obligations(f);
        self.verifying_function = None;
        r
    }

    fn function_obligations(&mut self, f: &Function) -> R<()> {
        let Some(shape) = self.t.functions.get(&f.name.name).cloned() else {
            return unsupported(f.name.span, "a function whose precondition it cannot frame");
        };
        let memory = Memory::empty(&mut self.vc, self.t);
        let mut st = State {
            store: Default::default(),
            memory,
            labels: Default::default(),
            reach: Term::tt(),
        };
        for p in &shape.params {
            let info = self.t.sem.var(*p).clone();
            let sort = self.sort(&info.ty, f.name.span)?;
            let v = self.vc.fresh(&info.name, sort);
            st.store.insert(*p, v);
        }
        // Contracts as a method's; the body's reads at the function's name (as Viper).
        let wellformed =
            ErrorContext::at_conjunct("not.wellformed", "Contract might not be well-formed.");
        // Applications in the precondition terminate by the measure of the initial state;
        // those in the body and postcondition by that after the precondition.
        let decreases = &f.contract.decreases;
        let caller = self.caller_at(&st, &f.name.name, decreases, false)?;
        self.with_caller(caller, |l| {
            l.with_modes(
                |m| m.wildcard_amounts = true,
                |l| l.inhale_contract(&mut st, &f.contract.requires, &wellformed),
            )
        })?;
        self.assume_terminated(&mut st);
        let caller = self.caller_at(&st, &f.name.name, decreases, false)?;
        self.with_caller(caller, |l| l.function_after_precondition(f, &shape, st))
    }

    /// A function's body and postcondition, from `st` where its precondition holds.
    fn function_after_precondition(
        &mut self,
        f: &Function,
        shape: &FunctionShape<'_>,
        mut st: State,
    ) -> R<()> {
        let wellformed =
            ErrorContext::at_conjunct("not.wellformed", "Contract might not be well-formed.");
        let result = match &f.body {
            Some(body) => {
                let reach = st.reach.clone();
                let ctx = ErrorContext::at(
                    "function.not.wellformed",
                    f.name.span,
                    "Function might not be well-formed.",
                );
                let value = self.expr(&st, &reach, body, &ctx)?;
                self.assume_terminated(&mut st);
                value
            }
            None => {
                let sort = self.sort(&shape.result, f.name.span)?;
                self.vc.fresh("result", sort)
            }
        };
        let outer = self.result.replace(result);
        let checked = (|| -> R<()> {
            let violated = ErrorContext::at_conjunct(
                "postcondition.violated",
                format!("Postcondition of {} might not hold.", f.name.name),
            );
            // Well-formedness on a path of its own; the postcondition itself is read
            // leniently (as a method's), so both are reported where both fail.
            // Both parts of an `[a, b]` must be well-formed.
            let parts = |l: &mut Self, exhale_parts: bool, side: &mut State| {
                l.with_modes(
                    |m| m.exhale_parts = exhale_parts,
                    |l| {
                        for post in &f.contract.ensures {
                            let reach = side.reach.clone();
                            let t = l.expr(side, &reach, post, &wellformed.for_clause(post))?;
                            side.reach = l.vc.assume(&side.reach, t);
                        }
                        Ok(())
                    },
                )
            };
            let has_parts = f
                .contract
                .ensures
                .iter()
                .any(crate::assertions::has_inhale_exhale);
            for exhale_parts in [false, true] {
                if exhale_parts && !has_parts {
                    break;
                }
                let mut side = st.clone();
                self.side_path(&st.reach, |l, reach| {
                    side.reach = reach;
                    parts(l, exhale_parts, &mut side)
                })?;
            }
            for post in &f.contract.ensures {
                let reach = st.reach.clone();
                let ctx = wellformed.for_clause(post);
                let t = self.with_modes(
                    |m| {
                        m.lenient = true;
                        m.exhale_parts = true;
                    },
                    |l| l.expr(&st, &reach, post, &ctx),
                )?;
                // An abstract function's postcondition is trusted (as in Viper).
                if f.body.is_some() {
                    let at = violated.for_clause(post);
                    self.check(&reach, t.clone(), &at, Reason::AssertionFalse, post);
                }
                st.reach = self.vc.assume(&st.reach, t);
            }
            Ok(())
        })();
        self.result = outer;
        checked
    }

    /// The axioms of a verified function: its definition (if it has a body) and its
    /// postcondition, for all arguments and footprint values, under what its verification
    /// assumed of them (the pure part of its precondition, its footprint's receivers not
    /// null). `None` where a read leaves the footprint (then it has none).
    pub fn function_axioms(&mut self, name: &str, which: Axioms) -> Option<Vec<Term>> {
        let shape = self.t.functions.get(name)?.clone();
        let mut vars: Vec<(Symbol, Sort)> = Vec::new();
        let mut st = State {
            store: Default::default(),
            memory: Memory::empty(&mut self.vc, self.t),
            labels: Default::default(),
            reach: Term::tt(),
        };
        let mut args = Vec::new();
        for p in &shape.params {
            let info = self.t.sem.var(*p).clone();
            let sort = self.t.theories.sort(&info.ty).ok()?;
            let symbol = Symbol::user(&format!("{}%f", info.name));
            let v = Term::var(symbol.clone(), sort.clone());
            vars.push((symbol, sort));
            st.store.insert(*p, v.clone());
            args.push(v);
        }
        let ctx = ErrorContext::at_conjunct("internal", "");
        self.snapshot = Some(Vec::new());
        let lenient = std::mem::replace(&mut self.modes.lenient, true);
        let checks = self.vc.checks.len();
        let mut held = Vec::new();
        // The `unfolded%P` marks of the footprint's instances, with their frame's position.
        let mut frame_vars = Vec::new();
        // The frame function's arguments (see `FunctionShape::framed`); the axioms of
        // quantified footprints are the program's (see `body_footprints`).
        let mut framed = args.clone();
        let built = (|| -> R<Vec<Term>> {
            let mut quantified = shape.quantified.iter();
            for (i, (conditions, item)) in shape.footprint.iter().enumerate() {
                if let Footprint::Quantified(map, _) = item {
                    let Some(b) = quantified.next() else {
                        return unsupported(shape.function.name.span, "this footprint");
                    };
                    let q = &b.footprint;
                    let symbol = Symbol::user(&format!("v{i}%f"));
                    let heap = Term::var(symbol.clone(), q.heap.clone());
                    vars.push((symbol, q.heap.clone()));
                    args.push(heap.clone());
                    // Its arguments read here (a field of the footprint read before it: its
                    // value in the snapshot).
                    let fp_args = self.footprint_args(&st, b)?;
                    let lowered = self.with_overrides(b, &fp_args, |l| {
                        l.lower_quantified_footprint(&st, q, &fp_args)
                    })?;
                    let index = q.witness.result().clone();
                    let r = Term::var(Symbol::user("r%fp"), index);
                    // Read only where in the footprint: a definition reading elsewhere (of
                    // a function not well-formed) must not contradict the framing.
                    let Some(unheld) = self.t.frames.unheld(map) else {
                        return unsupported(shape.function.name.span, "this footprint");
                    };
                    // Under conditions: held where they hold, and the frame is the
                    // fingerprint there only.
                    let holds = self.conditions_hold(&st, &Term::tt(), conditions, &ctx)?;
                    let held = Term::and([holds.clone(), lowered.at(&r)]);
                    let value =
                        Term::ite(held.clone(), Term::select(heap.clone(), r.clone()), unheld);
                    if let Some(s) = self.snapshot.as_mut() {
                        s.push(Snapshot {
                            map: map.clone(),
                            held,
                            at: r,
                            value,
                            heap: Some(heap.clone()),
                        });
                    }
                    let mut fp_args = fp_args;
                    fp_args.push(heap);
                    let fingerprint = Term::app(&q.fingerprint, fp_args);
                    framed.push(Term::ite(holds, fingerprint, self.t.frames.empty()));
                    continue;
                }
                let at = self.footprint_location(&st, &Term::tt(), item, &ctx)?;
                let holds = self.conditions_hold(&st, &Term::tt(), conditions, &ctx)?;
                let sort = match item {
                    Footprint::Field(field, _) => {
                        // The function was verified where it held these locations: not at
                        // null.
                        let non_null = Term::not(Term::eq(at.clone(), self.t.theories.null()));
                        held.push(Term::implies(holds.clone(), non_null));
                        self.t
                            .fields
                            .iter()
                            .find(|(f, _)| f == field)
                            .map(|(_, s)| s.clone())
                    }
                    Footprint::Predicate(name, _) => {
                        let shape = &self.t.predicates[name];
                        frame_vars.push((shape.unfolded.clone(), i));
                        Some(self.t.frames.sort.clone())
                    }
                    Footprint::Quantified(..) => None,
                };
                let Some(sort) = sort else {
                    return unsupported(shape.function.name.span, "this footprint");
                };
                let symbol = Symbol::user(&format!("v{i}%f"));
                let v = Term::var(symbol.clone(), sort.clone());
                vars.push((symbol, sort));
                args.push(v.clone());
                framed.push(v.clone());
                if let Some(s) = self.snapshot.as_mut() {
                    s.push(Snapshot {
                        map: item.map().to_string(),
                        at,
                        value: v,
                        held: holds.clone(),
                        heap: None,
                    });
                }
            }
            let app = Term::app(&shape.full, args.clone());
            let mut pure = Vec::new();
            for pre in &shape.function.contract.requires {
                pure_parts(self.t.sem, pre, &mut pure);
            }
            let mut pre_terms = held.clone();
            for p in pure {
                pre_terms.push(self.expr(&st, &Term::tt(), p, &ctx)?);
            }
            let pre = Term::and(pre_terms);
            if which == Axioms::Postcondition {
                // Of every application, limited ones too (an application is equal to its
                // limited twin): the values a definition unrolls to are known to satisfy
                // the postcondition. A postcondition applying its own function would then
                // unroll forever: it speaks of applications only.
                let about = if applies(self.t.sem, &shape.function.contract.ensures, name) {
                    app.clone()
                } else {
                    Term::app(&shape.limited, args.clone())
                };
                let outer = self.result.replace(about.clone());
                let posts = (|| -> R<Vec<Term>> {
                    let mut out = Vec::new();
                    for post in &shape.function.contract.ensures {
                        out.push(self.expr(&st, &Term::tt(), post, &ctx)?);
                    }
                    Ok(out)
                })();
                self.result = outer;
                let posts = posts?;
                let body = Term::implies(pre.clone(), Term::and(posts.clone()));
                // A postcondition that says nothing of the value (`ensures false` of a
                // function whose precondition cannot hold) would be a quantifier without a
                // trigger, there for every application or none: it is left out.
                if posts.is_empty() || body.as_bool().is_some() {
                    return Ok(Vec::new());
                }
                let mut axioms = Vec::new();
                let guarded = match &shape.held {
                    Some(held) => {
                        let premise = Term::and([pre, Term::app(held, args.clone())]);
                        // The applications a verified body makes are of such values too
                        // (its well-formedness was proved for every one), so unrolled
                        // applications get their postconditions.
                        let found = self.held_in_body(&shape, &st, &ctx)?;
                        if !found.is_empty() {
                            axioms.push(Term::forall(
                                vars.clone(),
                                Term::implies(premise.clone(), Term::and(found)),
                                definition_triggers(&shape, &args, &frame_vars),
                            ));
                        }
                        premise
                    }
                    None => pre,
                };
                axioms.push(Term::forall(
                    vars.clone(),
                    Term::implies(guarded, Term::and(posts)),
                    vec![vec![about]],
                ));
                return Ok(axioms);
            }
            let mut axioms = vec![Term::forall(
                vars.clone(),
                Term::eq(app.clone(), Term::app(&shape.limited, args.clone())),
                vec![vec![app.clone()]],
            )];
            // With quantified footprints: the value is one of the fingerprints.
            if let Some(frame) = &shape.framed {
                let limited = Term::app(&shape.limited, args.clone());
                axioms.push(Term::forall(
                    vars.clone(),
                    Term::eq(limited.clone(), Term::app(frame, framed.clone())),
                    vec![vec![limited]],
                ));
            }
            if let Some(body) = &shape.function.body {
                self.limited = Some(name.to_string());
                let body = self.expr(&st, &Term::tt(), body, &ctx);
                self.limited = None;
                let body = body?;
                // Applied, or its limited twin where the program unfolded an instance of the
                // footprint (seed 002's second trigger set).
                let triggers = definition_triggers(&shape, &args, &frame_vars);
                let mut defined = Term::implies(pre.clone(), Term::eq(app.clone(), body));
                if let Some(trusted) = &shape.trusted {
                    defined = Term::implies(Term::constant(trusted), defined);
                }
                axioms.push(Term::forall(vars.clone(), defined, triggers));
            }
            Ok(axioms)
        })();
        self.vc.checks.truncate(checks);
        self.modes.lenient = lenient;
        self.snapshot = None;
        built.ok()
    }
}

/// The triggers of a function's definition: its application, or its limited twin where
/// the program unfolded an instance of the footprint (seed 002's second trigger set; not
/// for an opaque function, whose limited applications are the hidden ones).
pub(crate) fn definition_triggers(
    shape: &FunctionShape<'_>,
    args: &[Term],
    frame_vars: &[(FunDecl, usize)],
) -> Vec<Vec<Term>> {
    let app = Term::app(&shape.full, args.to_vec());
    let limited = Term::app(&shape.limited, args.to_vec());
    let mut triggers = vec![vec![app]];
    if !shape.opaque {
        for (unfolded, i) in frame_vars {
            let frame = args[shape.params.len() + i].clone();
            triggers.push(vec![limited.clone(), Term::app(unfolded, vec![frame])]);
        }
    }
    triggers
}

/// Which axioms of a function: its definition (every function's, from the start: a body
/// defines its function), or its postcondition (a verified function's only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axioms {
    Definition,
    Postcondition,
}

/// Whether one of `exprs` applies the function `name`.
fn applies(sem: &germanium_semantics::Semantics, exprs: &[Expr], name: &str) -> bool {
    let mut found = false;
    for e in exprs {
        germanium_semantics::visit::walk_expr(e, &mut |x| {
            found |= matches!(sem.call(x.id), Some(germanium_semantics::CallTarget::Function(f)) if f == name);
        });
    }
    found
}

/// The conjuncts of a precondition that hold no permission.
fn pure_parts<'x>(sem: &germanium_semantics::Semantics, a: &'x Expr, out: &mut Vec<&'x Expr>) {
    match &a.kind {
        ExprKind::Binary(BinaryOp::And, x, y) => {
            pure_parts(sem, x, out);
            pure_parts(sem, y, out);
        }
        ExprKind::Ascribed(x, _) | ExprKind::Annotated(_, x) => pure_parts(sem, x, out),
        // What the function's verification assumed: the inhale part.
        ExprKind::InhaleExhale(x, _) => pure_parts(sem, x, out),
        ExprKind::Acc(..) => {}
        _ if holds_permission(sem, a) => {}
        _ => out.push(a),
    }
}
