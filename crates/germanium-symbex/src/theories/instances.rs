//! Finding the ground type instances a program uses: every ground type in the semantic
//! tables, closed under components (a `Map[K, V]` brings `Set[K]` and `Set[V]` for its
//! domain and range), under the signatures and axioms of each used generic domain instance
//! (with the domain's type variables substituted) and under ADT constructor fields.
//!
//! Generic domains can ask for ever deeper instances (`D[T]` mentioning `D[Seq[T]]`), so
//! types reached through an instantiation are bounded in depth; what is cut off is simply
//! not declared (its axioms are then skipped, which only weakens the assumptions).

use std::collections::{HashMap, HashSet};

use germanium_semantics::types::Type;
use germanium_semantics::visit::walk_expr;
use germanium_semantics::{CallTarget, FieldTarget, Semantics, VarKind};
use germanium_syntax::ast::{Domain, ExprKind, ItemKind, NodeId, Program};

use super::sorts::depth;

/// Instances above this many are not created by instantiation.
const MAX_TYPES: usize = 4000;

/// The ground types of a program, in discovery order.
#[derive(Debug, Default)]
pub(crate) struct Instances {
    pub types: Vec<Type>,
    seen: HashSet<Type>,
    pending: Vec<Type>,
    /// Depth bound for types reached through instantiation.
    max_depth: usize,
    /// Whether some instance was cut off by the bounds.
    pub truncated: bool,
}

/// Substitution of a generic declaration's type parameters.
pub(crate) fn substitution(params: &[String], args: &[Type]) -> HashMap<String, Type> {
    params.iter().cloned().zip(args.iter().cloned()).collect()
}

pub(crate) fn apply_subst(ty: &Type, subst: &HashMap<String, Type>) -> Type {
    ty.subst_vars(&|name| subst.get(name).cloned())
}

/// The syntax of every domain, by name.
pub(crate) fn domains_by_name(program: &Program) -> HashMap<&str, &Domain> {
    program
        .items
        .iter()
        .filter_map(|item| match &item.kind {
            ItemKind::Domain(d) => Some((d.name.name.as_str(), d)),
            _ => None,
        })
        .collect()
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

impl Instances {
    /// Scans `program` and `semantics` (see the module documentation).
    pub fn collect(program: &Program, sem: &Semantics) -> Instances {
        let domains = domains_by_name(program);
        // Nodes inside generic domains speak about type variables; they are visited per
        // instance instead.
        let mut generic_nodes = HashSet::new();
        for d in domains.values().filter(|d| !d.type_params.is_empty()) {
            for axiom in &d.axioms {
                walk_expr(&axiom.body, &mut |e| {
                    generic_nodes.insert(e.id);
                });
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
        // Axioms of non-generic domains hold whether or not the domain is used (as in Viper).
        let mut names: Vec<&String> = sem.domains.keys().collect();
        names.sort();
        for name in names {
            if sem.domains[name].type_params.is_empty() {
                found.push(Type::Domain(name.clone(), vec![]));
            }
        }

        let program_depth = found
            .iter()
            .filter(|t| t.is_ground())
            .map(depth)
            .max()
            .unwrap_or(0);
        let mut out = Instances {
            max_depth: program_depth.max(3) + 2,
            ..Instances::default()
        };
        for ty in &found {
            out.add(ty, false);
        }
        while let Some(ty) = out.pending.pop() {
            match &ty {
                Type::Domain(name, args) => out.expand_domain(name, args, sem, &domains),
                Type::Adt(name, args) => out.expand_adt(name, args, sem),
                _ => {}
            }
        }
        out
    }

    /// Records a ground type and its components. `derived`: reached by instantiation, and
    /// therefore bounded.
    fn add(&mut self, ty: &Type, derived: bool) {
        if !ty.is_ground() || !is_value_type(ty) || self.seen.contains(ty) {
            return;
        }
        if derived && (depth(ty) > self.max_depth || self.types.len() >= MAX_TYPES) {
            self.truncated = true;
            return;
        }
        self.seen.insert(ty.clone());
        self.types.push(ty.clone());
        match ty {
            Type::Seq(t) | Type::Set(t) | Type::Multiset(t) => self.add(t, derived),
            Type::Map(k, v) => {
                self.add(k, derived);
                self.add(v, derived);
                self.add(&Type::set((**k).clone()), derived);
                self.add(&Type::set((**v).clone()), derived);
            }
            Type::Domain(_, args) | Type::Adt(_, args) => {
                for a in args {
                    self.add(a, derived);
                }
                self.pending.push(ty.clone());
            }
            _ => {}
        }
    }

    fn expand_domain(
        &mut self,
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
        let subst = substitution(&info.type_params, args);
        for f in &info.functions {
            if let Some(f) = sem.domain_functions.get(f) {
                for ty in f.params.iter().chain([&f.result]) {
                    self.add(&apply_subst(ty, &subst), true);
                }
            }
        }
        let Some(domain) = domains.get(name) else {
            return;
        };
        for axiom in &domain.axioms {
            let mut found = Vec::new();
            walk_expr(&axiom.body, &mut |e| {
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
            for ty in found {
                self.add(&apply_subst(&ty, &subst), true);
            }
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
                    self.add(&apply_subst(ty, &subst), true);
                }
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
