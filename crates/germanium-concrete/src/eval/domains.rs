//! User domains over a finite model. Each domain type instance a run meets (`Option[Perm]`)
//! has a few values of its own (`Value::Domain`: the instance and an index below its size);
//! each domain function instance has a table of the applications the run made and a default
//! for every other application. The run chooses all of them (`exec::domains`) and keeps them,
//! so equal applications are equal. A failure counts only where the model meets every axiom
//! ([`Evaluator::axioms_hold`]), so that some real model of the program's domains shows it.
//!
//! In an axiom a quantifier over a domain type ranges over the instance's values. One over
//! the integers whose variable is used only as an argument of domain functions or in
//! equalities ranges over the integers the model and the axioms mention and one new integer
//! per variable: swapping a new integer for any other unmentioned one changes no table and no
//! literal, so the axiom's truth is the same for all of them.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use germanium_semantics::visit::walk_expr;
use germanium_semantics::{CallTarget, Type, VarId};
use germanium_syntax::ast::{Axiom, BinaryOp, Domain, Expr, ExprKind};
use num_bigint::BigInt;

use super::{unknown, Evaluator, Scope, R};
use crate::heap::Heap;
use crate::value::Value;

/// The values a run chose for the program's domains.
#[derive(Clone, Debug, Default)]
pub struct DomainModel {
    /// Values of each domain type instance, by its name (`Option[Perm]`).
    pub sizes: BTreeMap<String, u32>,
    /// Each domain function instance's table, by its name (`Option_None[Perm]`).
    pub tables: BTreeMap<String, Table>,
    /// The functions an axiom defines that the run applies (they have no table).
    pub defined: BTreeSet<String>,
}

/// A domain function instance's values: those of the applications made, and one for all
/// others.
#[derive(Clone, Debug)]
pub struct Table {
    pub function: String,
    pub type_args: Vec<Type>,
    pub entries: BTreeMap<Vec<Value>, Value>,
    pub default: Value,
}

/// The name of a domain type or domain function instance: `Option[Perm]`.
pub(crate) fn instance_name(name: &str, type_args: &[Type]) -> String {
    if type_args.is_empty() {
        return name.to_string();
    }
    let args: Vec<String> = type_args.iter().map(Type::to_string).collect();
    format!("{name}[{}]", args.join(", "))
}

/// What an axiom applies and quantifies over, for one instance of its domain.
#[derive(Clone, Debug, Default)]
pub(crate) struct AxiomNeeds {
    pub functions: Vec<(String, Vec<Type>)>,
    pub quantified: Vec<Type>,
}

/// What an axiom check binds: the domain's type parameters, and the integers mentioned.
#[derive(Clone, Debug, Default)]
pub(crate) struct AxiomContext {
    pub type_params: HashMap<String, Type>,
    pub mentioned: BTreeSet<BigInt>,
}

impl Evaluator<'_> {
    /// A copy of the run's model.
    pub fn domain_model(&self) -> DomainModel {
        self.model.borrow().clone()
    }

    pub(crate) fn with_model<T>(&self, f: impl FnOnce(&mut DomainModel) -> T) -> T {
        f(&mut self.model.borrow_mut())
    }

    /// `t` with the type parameters of the axiom being checked replaced.
    pub(crate) fn concrete_type(&self, t: &Type) -> Type {
        match &*self.axiom.borrow() {
            Some(context) => t.subst_vars(&|v| context.type_params.get(v).cloned()),
            None => t.clone(),
        }
    }

    /// Whether values of `t` are a user domain's, modelled here (not a backend type).
    pub(crate) fn modelled_domain(&self, t: &Type) -> bool {
        matches!(t, Type::Domain(name, _)
            if self.sem.domains.get(name).is_some_and(|d| d.interpretation.is_none()))
    }

    /// The values of the domain type instance `t`, if its size is chosen.
    pub(crate) fn domain_values(&self, t: &Type) -> R<Vec<Value>> {
        let Type::Domain(name, args) = t else {
            return unknown(format!("{t} is no domain type"));
        };
        let instance = instance_name(name, args);
        match self.model.borrow().sizes.get(&instance) {
            Some(n) => Ok((0..*n)
                .map(|index| Value::Domain {
                    domain: instance.clone(),
                    index,
                })
                .collect()),
            None => unknown(format!("no values of {instance} are chosen")),
        }
    }

    /// The value of the domain function application `function[type_args](args)` in the
    /// model; outside an axiom check an application read through the default keeps it.
    pub(crate) fn domain_application(
        &self,
        heap: &Heap,
        function: &str,
        type_args: &[Type],
        args: Vec<Value>,
    ) -> R<Value> {
        if self
            .sem
            .domain_functions
            .get(function)
            .is_some_and(|f| f.interpretation.is_some())
        {
            return unknown(format!("the backend function `{function}` is not modelled"));
        }
        if self.defined(function) {
            return self.defined_application(heap, function, args);
        }
        let type_args: Vec<Type> = type_args.iter().map(|t| self.concrete_type(t)).collect();
        let key = instance_name(function, &type_args);
        let checking = self.axiom.borrow().is_some();
        let mut model = self.model.borrow_mut();
        let Some(table) = model.tables.get_mut(&key) else {
            return unknown(format!(
                "the domain function `{key}` has no concrete interpretation"
            ));
        };
        if let Some(v) = table.entries.get(&args) {
            return Ok(v.clone());
        }
        let v = table.default.clone();
        if !checking {
            table.entries.insert(args, v.clone());
        }
        Ok(v)
    }

    /// The integers an axiom's quantifier over `var` ranges over, if its body uses `var`
    /// only where every unmentioned integer behaves alike: the integers mentioned, those
    /// bound around it, and `new` new ones.
    pub(crate) fn symmetric_integers(
        &self,
        scope: &Scope,
        var: VarId,
        body: &Expr,
        new: usize,
    ) -> Option<Vec<Value>> {
        let axiom = self.axiom.borrow();
        let context = axiom.as_ref()?;
        if !self.used_symmetrically(body, var) {
            return None;
        }
        let mut ints = context.mentioned.clone();
        for v in scope.store.values() {
            collect_ints(v, &mut ints);
        }
        let first_new = ints.iter().next_back().map_or(BigInt::from(0), |m| m + 1);
        let mut values: Vec<Value> = ints.into_iter().map(Value::Int).collect();
        values.extend((0..new).map(|i| Value::Int(&first_new + BigInt::from(i))));
        Some(values)
    }

    /// Whether every use of `var` in `body` is an argument of a domain function or an
    /// operand of `==` or `!=`.
    fn used_symmetrically(&self, body: &Expr, var: VarId) -> bool {
        let is_var =
            |e: &Expr| matches!(e.kind, ExprKind::Ident(_)) && self.sem.var_id(e.id) == Some(var);
        let mut uses = 0;
        let mut allowed = 0;
        walk_expr(body, &mut |e| {
            if is_var(e) {
                uses += 1;
            }
            match &e.kind {
                ExprKind::Call(_, args)
                    if matches!(self.sem.call(e.id), Some(CallTarget::DomainFunction { .. })) =>
                {
                    allowed += args.iter().filter(|a| is_var(a)).count();
                }
                ExprKind::Binary(BinaryOp::Eq | BinaryOp::Ne, a, b) => {
                    allowed += usize::from(is_var(a)) + usize::from(is_var(b));
                }
                _ => {}
            }
        });
        uses == allowed
    }

    /// Whether the model meets the axioms that constrain it: for each domain (each instance
    /// of a generic one the model has), those that apply a function instance the model has
    /// or quantify over a domain instance it has. The others speak only of functions and
    /// values the run never read; like Viper's verifiers, Germanium takes them to have a
    /// model. Unknown where the model lacks a value an axiom needs.
    pub fn axioms_hold(&self, heap: &Heap) -> R<Result<(), String>> {
        if !self.unique_values_distinct() {
            return Ok(Err(
                "unique functions of one type have distinct values".into()
            ));
        }
        let mut mentioned = BTreeSet::new();
        self.mentioned_integers(&mut mentioned);
        let mut names: Vec<&&str> = self.domains.keys().collect();
        names.sort();
        for name in names {
            let domain = self.domains[*name];
            for type_args in self.instances_of(domain) {
                let context = AxiomContext {
                    type_params: domain
                        .type_params
                        .iter()
                        .map(|p| p.name.clone())
                        .zip(type_args.iter().cloned())
                        .collect(),
                    mentioned: mentioned.clone(),
                };
                let relevant: Vec<&Axiom> = domain
                    .axioms
                    .iter()
                    .filter(|a| !self.is_definition(a.body.id))
                    .filter(|a| self.constrains_model(&self.axiom_needs(domain, &type_args, a)))
                    .collect();
                *self.axiom.borrow_mut() = Some(context);
                let outcome = self.each_axiom_holds(&relevant, heap);
                *self.axiom.borrow_mut() = None;
                if let Some(broken) = outcome? {
                    let axiom = broken.name.as_ref().map_or("", |n| n.name.as_str());
                    return Ok(Err(format!(
                        "the axiom {axiom} of {} is false there",
                        instance_name(&domain.name.name, &type_args)
                    )));
                }
            }
        }
        Ok(Ok(()))
    }

    /// The first of `axioms` that is false in the model; `heap`: the run's, whose objects
    /// (and one more, standing for all others) quantifiers over references range over.
    fn each_axiom_holds<'a>(&self, axioms: &[&'a Axiom], heap: &Heap) -> R<Option<&'a Axiom>> {
        for axiom in axioms {
            let mut scope = Scope {
                store: HashMap::new(),
                old: None,
                labels: &HashMap::new(),
                result: None,
                held: None,
                amounts_unknown: false,
                scale: None,
            };
            self.steps.set(0);
            if !self.boolean(&mut scope, heap, &axiom.body)? {
                return Ok(Some(axiom));
            }
        }
        Ok(None)
    }

    /// The domain function instances `axiom` of `domain` applies and the types it
    /// quantifies over, for the instance `type_args`.
    pub(crate) fn axiom_needs(
        &self,
        domain: &Domain,
        type_args: &[Type],
        axiom: &Axiom,
    ) -> AxiomNeeds {
        let subst = |t: &Type| {
            t.subst_vars(&|v| {
                domain
                    .type_params
                    .iter()
                    .position(|p| p.name == v)
                    .and_then(|i| type_args.get(i).cloned())
            })
        };
        let mut needs = AxiomNeeds::default();
        walk_expr(&axiom.body, &mut |e| {
            if let Some(CallTarget::DomainFunction {
                function,
                type_args,
                ..
            }) = self.sem.call(e.id)
            {
                let instance = (function.clone(), type_args.iter().map(subst).collect());
                if !needs.functions.contains(&instance) {
                    needs.functions.push(instance);
                }
            }
            for ty in self.quantified_types(e) {
                let ty = subst(&ty);
                if self.modelled_domain(&ty) && !needs.quantified.contains(&ty) {
                    needs.quantified.push(ty);
                }
            }
        });
        needs
    }

    /// Whether an axiom with these needs constrains the model: it applies a function
    /// instance the model has (or a defined function the run applies), or quantifies over a domain instance it has.
    pub(crate) fn constrains_model(&self, needs: &AxiomNeeds) -> bool {
        let model = self.model.borrow();
        needs.functions.iter().any(|(f, args)| {
            model.tables.contains_key(&instance_name(f, args)) || model.defined.contains(f)
        }) || needs.quantified.iter().any(|t| match t {
            Type::Domain(n, args) => model.sizes.contains_key(&instance_name(n, args)),
            _ => false,
        })
    }

    /// The type arguments the axioms of `domain` are checked for: none for a domain without
    /// type parameters, else each instance the model has.
    pub(crate) fn instances_of(&self, domain: &Domain) -> Vec<Vec<Type>> {
        if domain.type_params.is_empty() {
            return vec![Vec::new()];
        }
        let model = self.model.borrow();
        let mut seen: Vec<Vec<Type>> = Vec::new();
        for table in model.tables.values() {
            let of_domain = self
                .sem
                .domain_functions
                .get(&table.function)
                .is_some_and(|f| f.domain == domain.name.name);
            if of_domain && !seen.contains(&table.type_args) {
                seen.push(table.type_args.clone());
            }
        }
        seen
    }

    /// Unique functions of one type have distinct values.
    fn unique_values_distinct(&self) -> bool {
        let model = self.model.borrow();
        let mut seen = BTreeSet::new();
        for table in model.tables.values() {
            let unique = self
                .sem
                .domain_functions
                .get(&table.function)
                .is_some_and(|f| f.unique);
            if unique {
                let v = table.entries.get(&Vec::new()).unwrap_or(&table.default);
                if !seen.insert(v.clone()) {
                    return false;
                }
            }
        }
        true
    }

    /// The integers the model's tables and the axioms' literals mention.
    fn mentioned_integers(&self, into: &mut BTreeSet<BigInt>) {
        for table in self.model.borrow().tables.values() {
            for (args, v) in &table.entries {
                args.iter().for_each(|a| collect_ints(a, into));
                collect_ints(v, into);
            }
            collect_ints(&table.default, into);
        }
        for domain in self.domains.values() {
            for axiom in &domain.axioms {
                walk_expr(&axiom.body, &mut |e| {
                    if let ExprKind::IntLit(digits) = &e.kind {
                        if let Ok(i) = digits.parse::<BigInt>() {
                            into.insert(i);
                        }
                    }
                });
            }
        }
    }
}

/// Every integer inside `v`.
fn collect_ints(v: &Value, into: &mut BTreeSet<BigInt>) {
    match v {
        Value::Int(i) => {
            into.insert(i.clone());
        }
        Value::Seq(items) => items.iter().for_each(|i| collect_ints(i, into)),
        Value::Set(items) => items.iter().for_each(|i| collect_ints(i, into)),
        Value::Multiset(items) => items.keys().for_each(|i| collect_ints(i, into)),
        Value::Map(m) => m.iter().for_each(|(k, v)| {
            collect_ints(k, into);
            collect_ints(v, into);
        }),
        Value::Adt { args, .. } => args.iter().for_each(|a| collect_ints(a, into)),
        Value::Bool(_) | Value::Perm(_) | Value::Ref(_) | Value::Domain { .. } => {}
    }
}
