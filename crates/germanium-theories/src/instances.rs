//! Finding the ground type instances a program uses, and how much of each generic domain
//! instance to emit.
//!
//! Every ground type in the semantic tables is recorded, closed under components (a
//! `Map[K, V]` brings `Set[K]` and `Set[V]` for its domain and range) and ADT fields. Each
//! domain instance gets a [`Level`]:
//! - instances the program mentions are *expanded*: functions and axioms are emitted;
//! - an axiom of a generic domain `D[T]` mentioning `E[σ(T)]` is also instantiated for every
//!   `T := τ` that makes `E[σ(τ)]` an expanded instance (so `add` at `Option[Int]` gets the
//!   axiom of `AddDomain[Int]` that defines it), parameters left open being Int as in Viper;
//!   such instances are never deeper than the one matched;
//! - instances mentioned by the axioms of expanded instances are expanded too when no deeper
//!   than the deepest domain instance of the program, and otherwise only *declared*
//!   (functions, no axioms) — this bounds monomorphisation;
//! - types in the signatures of declared functions get a *sort only*.
//!
//! Whatever is not expanded only has fewer axioms, which weakens assumptions, never
//! soundness.

use std::collections::{HashMap, HashSet};

use germanium_semantics::types::Type;
use germanium_semantics::visit::walk_expr;
use germanium_semantics::{CallTarget, FieldTarget, Semantics, VarKind};
use germanium_syntax::ast::{Domain, Expr, ExprKind, NodeId, Program};

use super::adt_contains;
use super::sorts::depth;

/// Types above this many are not created (a safety net for pathological programs).
const MAX_TYPES: usize = 20_000;

/// How much of a domain instance is emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    SortOnly,
    Declared,
    Expanded,
}

/// Where a type was found, which decides the level of the domain instances in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    Program,
    /// In an expanded instance's axiom (or a backward match): expanded up to the depth bound.
    Axiom,
    Signature,
}

/// The ground types of a program, in discovery order, and the level of each domain instance.
#[derive(Debug, Default)]
pub(crate) struct Instances {
    pub types: Vec<Type>,
    seen: HashSet<Type>,
    pub levels: HashMap<Type, Level>,
    pending: Vec<Type>,
    declared_done: HashSet<Type>,
    expanded_done: HashSet<Type>,
    /// Deepest domain instance the program itself mentions.
    bound: usize,
    /// Per domain name `E`: the generic domains `D` whose axioms mention `E[σ]`, with `σ`.
    patterns: HashMap<String, Vec<(String, Vec<Type>)>>,
    /// Whether the safety net cut something off.
    pub truncated: bool,
}

/// Substitution of a generic declaration's type parameters.
pub(crate) fn substitution(params: &[String], args: &[Type]) -> HashMap<String, Type> {
    params.iter().cloned().zip(args.iter().cloned()).collect()
}

pub(crate) fn apply_subst(ty: &Type, subst: &HashMap<String, Type>) -> Type {
    ty.subst_vars(&|name| subst.get(name).cloned())
}

/// Whether a type can be given a sort at all (not an assertion, error or variable).
fn is_value_type(ty: &Type) -> bool {
    match ty {
        Type::Wand | Type::Impure | Type::Error | Type::Var(_) | Type::Infer(_) => false,
        Type::Seq(t) | Type::Set(t) | Type::Multiset(t) => is_value_type(t),
        Type::Map(k, v) => is_value_type(k) && is_value_type(v),
        Type::Domain(_, a) | Type::Adt(_, a) => a.iter().all(is_value_type),
        _ => true,
    }
}

/// Every type an axiom mentions (expression and bound-variable types, and the domain or
/// ADT instance of each call and destructor), in terms of the domain's type variables.
fn axiom_types(body: &Expr, sem: &Semantics) -> Vec<Type> {
    let mut found = Vec::new();
    walk_expr(body, &mut |e| {
        found.extend(sem.type_of(e.id).cloned());
        found.extend(sem.call(e.id).into_iter().flat_map(call_instance));
        found.extend(sem.field_access(e.id).into_iter().flat_map(field_instance));
        let bound = match &e.kind {
            ExprKind::Quantifier { vars, .. } => vars.len(),
            ExprKind::Let(..) => 1,
            _ => 0,
        };
        for i in 0..bound {
            if let Some(v) = sem.binders.get(&(e.id, i)) {
                found.push(sem.var(*v).ty.clone());
            }
        }
    });
    found
}

/// Domain instances occurring in `ty` (itself included).
fn domain_parts(ty: &Type, out: &mut Vec<(String, Vec<Type>)>) {
    match ty {
        Type::Domain(n, a) => {
            out.push((n.clone(), a.clone()));
            a.iter().for_each(|t| domain_parts(t, out));
        }
        Type::Adt(_, a) => a.iter().for_each(|t| domain_parts(t, out)),
        Type::Seq(t) | Type::Set(t) | Type::Multiset(t) => domain_parts(t, out),
        Type::Map(k, v) => {
            domain_parts(k, out);
            domain_parts(v, out);
        }
        _ => {}
    }
}

/// One-way matching of `pattern` (with type variables) against the ground `ty`.
fn matches(pattern: &Type, ty: &Type, theta: &mut HashMap<String, Type>) -> bool {
    match (pattern, ty) {
        (Type::Var(n), _) => match theta.get(n) {
            Some(bound) => bound == ty,
            None => {
                theta.insert(n.clone(), ty.clone());
                true
            }
        },
        (Type::Seq(p), Type::Seq(t))
        | (Type::Set(p), Type::Set(t))
        | (Type::Multiset(p), Type::Multiset(t)) => matches(p, t, theta),
        (Type::Map(pk, pv), Type::Map(k, v)) => matches(pk, k, theta) && matches(pv, v, theta),
        (Type::Domain(pn, pa), Type::Domain(n, a)) | (Type::Adt(pn, pa), Type::Adt(n, a)) => {
            pn == n && pa.len() == a.len() && pa.iter().zip(a).all(|(p, t)| matches(p, t, theta))
        }
        _ => pattern == ty,
    }
}

impl Instances {
    /// Scans `program` and `semantics` (see the module documentation).
    pub fn collect(program: &Program, sem: &Semantics) -> Instances {
        let domains = program.domains_by_name();
        // Nodes inside generic domains speak about type variables; they are visited per
        // instance instead.
        let mut generic_nodes = HashSet::new();
        let mut patterns: HashMap<String, Vec<(String, Vec<Type>)>> = HashMap::new();
        for d in domains.values().filter(|d| !d.type_params.is_empty()) {
            for axiom in &d.axioms {
                walk_expr(&axiom.body, &mut |e| {
                    generic_nodes.insert(e.id);
                });
                let mut parts = Vec::new();
                for ty in axiom_types(&axiom.body, sem) {
                    domain_parts(&ty, &mut parts);
                }
                for (e, args) in parts {
                    let entry = patterns.entry(e).or_default();
                    let pattern = (d.name.name.clone(), args);
                    if !entry.contains(&pattern) {
                        entry.push(pattern);
                    }
                }
            }
        }
        let in_program = |id: usize| !generic_nodes.contains(&NodeId(id as u32));

        let mut found = Vec::new();
        for (i, ty) in sem.expr_types.iter().enumerate() {
            if let (Some(ty), true) = (ty, in_program(i)) {
                found.push(ty.clone());
            }
        }
        for (i, call) in sem.calls.iter().enumerate() {
            if let (Some(call), true) = (call, in_program(i)) {
                found.extend(call_instance(call));
            }
        }
        for (i, access) in sem.field_accesses.iter().enumerate() {
            if let (Some(access), true) = (access, in_program(i)) {
                found.extend(field_instance(access));
            }
        }
        for var in &sem.vars {
            if matches!(var.kind, VarKind::Param | VarKind::Return | VarKind::Local) {
                found.push(var.ty.clone());
            }
        }
        for ((node, _), var) in &sem.binders {
            if !generic_nodes.contains(node) {
                found.push(sem.var(*var).ty.clone());
            }
        }
        found.extend(sem.fields.values().map(|f| f.ty.clone()));
        found.extend(sem.functions.values().map(|f| f.result.clone()));
        // The orders termination measures are compared in.
        found.extend(germanium_semantics::auto_import::measure_order_instances(
            program, sem,
        ));
        // Axioms of non-generic domains hold whether or not the domain is used (as in Viper).
        let mut names: Vec<&String> = sem.domains.keys().collect();
        names.sort();
        for name in names {
            if sem.domains[name].type_params.is_empty() {
                found.push(Type::Domain(name.clone(), vec![]));
            }
        }

        let mut parts = Vec::new();
        for ty in found.iter().filter(|t| t.is_ground()) {
            domain_parts(ty, &mut parts);
        }
        let bound = parts
            .iter()
            .map(|(n, a)| depth(&Type::Domain(n.clone(), a.clone())))
            .max()
            .unwrap_or(0);
        let mut out = Instances {
            bound,
            patterns,
            ..Instances::default()
        };
        for ty in &found {
            out.add(ty, Origin::Program);
        }
        out.drain(sem, &domains);
        // `contains` of derived ADTs is transitive: declare the composed instances.
        if let Some(domain) = adt_contains::contains_domain(sem) {
            let mut pairs: Vec<(Type, Type)> = out
                .types
                .iter()
                .filter_map(|t| match t {
                    Type::Domain(n, a)
                        if *n == domain && a.len() == 2 && out.level(t) >= Level::Declared =>
                    {
                        Some((a[0].clone(), a[1].clone()))
                    }
                    _ => None,
                })
                .collect();
            pairs.dedup();
            for (a, c) in adt_contains::transitive_pairs(&pairs) {
                out.add(&Type::Domain(domain.clone(), vec![a, c]), Origin::Program);
            }
            out.drain(sem, &domains);
        }
        out
    }

    fn drain(&mut self, sem: &Semantics, domains: &HashMap<&str, &Domain>) {
        while let Some(ty) = self.pending.pop() {
            match &ty {
                Type::Domain(name, args) => self.expand_domain(&ty, name, args, sem, domains),
                Type::Adt(name, args) => self.expand_adt(name, args, sem),
                _ => {}
            }
        }
    }

    /// Level of a domain instance (`SortOnly` for unknown ones).
    pub fn level(&self, ty: &Type) -> Level {
        self.levels.get(ty).copied().unwrap_or(Level::SortOnly)
    }

    /// Records a ground type and its components.
    fn add(&mut self, ty: &Type, origin: Origin) {
        if !ty.is_ground() || !is_value_type(ty) {
            return;
        }
        if !self.seen.contains(ty) {
            if self.types.len() >= MAX_TYPES {
                self.truncated = true;
                return;
            }
            self.seen.insert(ty.clone());
            self.types.push(ty.clone());
            if let Type::Adt(..) = ty {
                self.pending.push(ty.clone());
            }
        }
        match ty {
            Type::Seq(t) | Type::Set(t) | Type::Multiset(t) => self.add(t, origin),
            Type::Map(k, v) => {
                self.add(k, origin);
                self.add(v, origin);
                self.add(&Type::set((**k).clone()), origin);
                self.add(&Type::set((**v).clone()), origin);
            }
            Type::Domain(_, args) => {
                let level = match origin {
                    Origin::Program => Level::Expanded,
                    Origin::Axiom if depth(ty) <= self.bound => Level::Expanded,
                    Origin::Axiom => Level::Declared,
                    Origin::Signature => Level::SortOnly,
                };
                if level > self.level(ty) || !self.levels.contains_key(ty) {
                    self.levels.insert(ty.clone(), level.max(self.level(ty)));
                    self.pending.push(ty.clone());
                }
                for a in args {
                    self.add(a, origin);
                }
            }
            Type::Adt(_, args) => {
                for a in args {
                    self.add(a, origin);
                }
            }
            _ => {}
        }
    }

    fn expand_domain(
        &mut self,
        ty: &Type,
        name: &str,
        args: &[Type],
        sem: &Semantics,
        domains: &HashMap<&str, &Domain>,
    ) {
        let Some(info) = sem.domains.get(name) else {
            return;
        };
        if info.type_params.len() != args.len() {
            return;
        }
        let level = self.level(ty);
        let subst = substitution(&info.type_params, args);
        if level >= Level::Declared && self.declared_done.insert(ty.clone()) {
            for f in &info.functions {
                if let Some(f) = sem.domain_functions.get(f) {
                    for t in f.params.iter().chain([&f.result]) {
                        self.add(&apply_subst(t, &subst), Origin::Signature);
                    }
                }
            }
        }
        if level < Level::Expanded || !self.expanded_done.insert(ty.clone()) {
            return;
        }
        if let Some(domain) = domains.get(name) {
            for axiom in &domain.axioms {
                for t in axiom_types(&axiom.body, sem) {
                    self.add(&apply_subst(&t, &subst), Origin::Axiom);
                }
            }
        }
        // Axioms of generic domains that speak about this instance.
        let users = self.patterns.get(name).cloned().unwrap_or_default();
        for (user, pattern_args) in users {
            let Some(user_info) = sem.domains.get(&user) else {
                continue;
            };
            let mut theta = HashMap::new();
            let pattern = Type::Domain(name.to_string(), pattern_args);
            if !matches(&pattern, ty, &mut theta) {
                continue;
            }
            // Parameters the match leaves open get Viper's default type, Int (so an axiom
            // of `D[A]` that speaks about `E[Ref]` only is assumed once, as `D[Int]`).
            let instance: Vec<Type> = user_info
                .type_params
                .iter()
                .map(|p| theta.get(p).cloned().unwrap_or(Type::Int))
                .collect();
            self.add(&Type::Domain(user.clone(), instance), Origin::Axiom);
        }
    }

    fn expand_adt(&mut self, name: &str, args: &[Type], sem: &Semantics) {
        let Some(info) = sem.adts.get(name) else {
            return;
        };
        if info.type_params.len() != args.len() {
            return;
        }
        let subst = substitution(&info.type_params, args);
        for c in &info.constructors {
            if let Some(c) = sem.constructors.get(c) {
                for (_, ty) in &c.fields {
                    self.add(&apply_subst(ty, &subst), Origin::Signature);
                }
            }
        }
        // `derives { contains }`: the instances its constructor axioms use.
        if let Some(domain) = adt_contains::contains_domain(sem) {
            let adt = Type::Adt(name.to_string(), args.to_vec());
            for (field, owner) in adt_contains::constructor_pairs(sem, &adt) {
                self.add(
                    &Type::Domain(domain.clone(), vec![field, owner]),
                    Origin::Program,
                );
            }
        }
    }
}

/// The domain or ADT instance a call needs.
fn call_instance(call: &CallTarget) -> Option<Type> {
    match call {
        CallTarget::DomainFunction {
            domain, type_args, ..
        } => Some(Type::Domain(domain.clone(), type_args.clone())),
        CallTarget::AdtConstructor { adt, type_args, .. } => {
            Some(Type::Adt(adt.clone(), type_args.clone()))
        }
        _ => None,
    }
}

/// The ADT instance a destructor or discriminator needs.
fn field_instance(access: &FieldTarget) -> Option<Type> {
    match access {
        FieldTarget::AdtDestructor { adt, type_args, .. }
        | FieldTarget::AdtDiscriminator { adt, type_args, .. } => {
            Some(Type::Adt(adt.clone(), type_args.clone()))
        }
        FieldTarget::Field(_) => None,
    }
}
