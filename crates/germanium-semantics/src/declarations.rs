//! Global declarations: registering names (with Viper's duplicate rules) and resolving
//! signatures into the declaration tables of [`crate::Semantics`].

use germanium_syntax::ast::{Item, ItemKind, Program};
use germanium_syntax::Span;

use crate::checker::{Checker, Global, MemberKind};
use crate::semantics::*;
use crate::types::Type;

impl Checker {
    fn register(&mut self, name: &str, span: Span, what: Global) {
        if self.globals.contains_key(name) || self.destructors.contains_key(name) {
            self.name_error(span, format!("Duplicate identifier `{name}'"));
        } else {
            self.globals.insert(name.to_string(), what);
        }
    }

    fn register_destructor(&mut self, adt: &str, ctor: &str, name: &str, span: Span) {
        let same_adt = self
            .destructors
            .get(name)
            .is_some_and(|v| v.iter().any(|(a, _)| a == adt));
        if same_adt || self.globals.contains_key(name) {
            self.name_error(span, format!("Duplicate identifier `{name}'"));
            return;
        }
        self.destructors
            .entry(name.to_string())
            .or_default()
            .push((adt.to_string(), ctor.to_string()));
    }

    /// First pass: all global names in source order; ADT discriminators come last (they
    /// are generated declarations), so a clash with one is reported at the constructor.
    pub fn register_globals(&mut self, program: &Program) {
        let mut discriminators = Vec::new();
        for item in &program.items {
            match &item.kind {
                ItemKind::Import(_) | ItemKind::Macro(_) => {}
                ItemKind::Field(fields) => {
                    for f in fields {
                        self.register(&f.name.name, f.name.span, Global::Field);
                    }
                }
                ItemKind::Method(m) => self.register(&m.name.name, m.name.span, Global::Method),
                ItemKind::Function(f) => self.register(&f.name.name, f.name.span, Global::Function),
                ItemKind::Predicate(p) => {
                    self.register(&p.name.name, p.name.span, Global::Predicate)
                }
                ItemKind::Domain(d) => {
                    self.register(&d.name.name, d.name.span, Global::Domain);
                    for f in &d.functions {
                        self.register(&f.name.name, f.name.span, Global::DomainFunction);
                    }
                    for a in &d.axioms {
                        if let Some(n) = &a.name {
                            self.register(&n.name, n.span, Global::Axiom);
                        }
                    }
                }
                ItemKind::Adt(a) => {
                    self.register(&a.name.name, a.name.span, Global::Adt);
                    for c in &a.constructors {
                        self.register(&c.name.name, c.name.span, Global::Constructor);
                        for f in &c.fields {
                            self.register_destructor(
                                &a.name.name,
                                &c.name.name,
                                &f.name.name,
                                f.name.span,
                            );
                        }
                        discriminators.push((
                            format!("is{}", c.name.name),
                            c.name.span,
                            Global::Discriminator(a.name.name.clone(), c.name.name.clone()),
                        ));
                    }
                }
            }
        }
        for (name, span, g) in discriminators {
            self.register(&name, span, g);
        }
    }

    /// Second pass: signatures (types of fields and parameters), in the order Viper checks
    /// them: domains, fields, functions, predicates, methods, ADTs.
    pub fn collect_signatures(&mut self, program: &Program) {
        // Domain and ADT shells first: type names must be known before any type is resolved.
        for item in &program.items {
            match &item.kind {
                ItemKind::Domain(d) => {
                    self.sem
                        .domains
                        .entry(d.name.name.clone())
                        .or_insert_with(|| DomainInfo {
                            name: d.name.name.clone(),
                            type_params: d.type_params.iter().map(|t| t.name.clone()).collect(),
                            functions: d.functions.iter().map(|f| f.name.name.clone()).collect(),
                            axioms: d
                                .axioms
                                .iter()
                                .map(|a| AxiomInfo {
                                    name: a.name.as_ref().map(|n| n.name.clone()),
                                    body: a.body.id,
                                })
                                .collect(),
                            interpretation: d.interpretation.as_ref().map(|i| {
                                i.iter().map(|(k, v)| (k.name.clone(), v.clone())).collect()
                            }),
                            span: d.span,
                        });
                }
                ItemKind::Adt(a) => {
                    self.sem
                        .adts
                        .entry(a.name.name.clone())
                        .or_insert_with(|| AdtInfo {
                            name: a.name.name.clone(),
                            type_params: a.type_params.iter().map(|t| t.name.clone()).collect(),
                            constructors: a
                                .constructors
                                .iter()
                                .map(|c| c.name.name.clone())
                                .collect(),
                            derives: Vec::new(),
                            span: item.span,
                        });
                }
                _ => {}
            }
        }
        for item in &program.items {
            if let ItemKind::Domain(d) = &item.kind {
                self.type_params = d.type_params.iter().map(|t| t.name.clone()).collect();
                for f in &d.functions {
                    let params: Vec<Type> =
                        f.params.iter().map(|p| self.resolve_type(&p.ty)).collect();
                    let result = self.resolve_type(&f.result);
                    // Parameter names of one domain function must differ.
                    let mut seen = std::collections::HashSet::new();
                    for p in &f.params {
                        if let Some(n) = &p.name {
                            if !seen.insert(n.name.clone()) {
                                self.name_error(
                                    n.span,
                                    format!("Duplicate identifier `{}'", n.name),
                                );
                            }
                        }
                    }
                    self.sem
                        .domain_functions
                        .entry(f.name.name.clone())
                        .or_insert(DomainFunctionInfo {
                            name: f.name.name.clone(),
                            domain: d.name.name.clone(),
                            params,
                            result,
                            unique: f.unique,
                            interpretation: f.interpretation.clone(),
                            span: f.span,
                        });
                }
                self.type_params.clear();
            }
        }
        for item in &program.items {
            if let ItemKind::Field(fields) = &item.kind {
                for f in fields {
                    let ty = self.resolve_type(&f.ty);
                    if !self.sem.fields.contains_key(&f.name.name) {
                        self.sem.field_order.push(f.name.name.clone());
                        self.sem.fields.insert(
                            f.name.name.clone(),
                            FieldInfo {
                                name: f.name.name.clone(),
                                ty,
                                span: f.span,
                            },
                        );
                    }
                }
            }
        }
        self.collect_member_signatures(program);
        for item in &program.items {
            if let ItemKind::Adt(a) = &item.kind {
                self.type_params = a.type_params.iter().map(|t| t.name.clone()).collect();
                for c in &a.constructors {
                    let fields: Vec<(String, Type)> = c
                        .fields
                        .iter()
                        .map(|f| (f.name.name.clone(), self.resolve_type(&f.ty)))
                        .collect();
                    self.sem
                        .constructors
                        .entry(c.name.name.clone())
                        .or_insert(ConstructorInfo {
                            name: c.name.name.clone(),
                            adt: a.name.name.clone(),
                            fields,
                            span: c.span,
                        });
                }
                let mut derives = Vec::new();
                for d in &a.derives {
                    let arg = d.type_arg.as_ref().map(|t| self.resolve_type(t));
                    derives.push((
                        d.name.name.clone(),
                        arg,
                        d.without.iter().map(|w| w.name.clone()).collect(),
                    ));
                }
                self.type_params.clear();
                if let Some(info) = self.sem.adts.get_mut(&a.name.name) {
                    info.derives = derives;
                }
            }
        }
    }

    fn declare_params(
        &mut self,
        params: &[germanium_syntax::ast::VarDecl],
        kind: VarKind,
    ) -> Vec<VarId> {
        params
            .iter()
            .map(|p| {
                let ty = self.resolve_type(&p.ty);
                self.declare(&p.name.name, p.name.span, ty, kind)
            })
            .collect()
    }

    fn collect_member_signatures(&mut self, program: &Program) {
        let members: Vec<&Item> = program.items.iter().collect();
        for item in &members {
            if let ItemKind::Function(f) = &item.kind {
                self.begin_member(MemberKind::Function);
                let params = self.declare_params(&f.params, VarKind::Param);
                let result = self.resolve_type(&f.result);
                self.end_member();
                self.sem
                    .functions
                    .entry(f.name.name.clone())
                    .or_insert(FunctionInfo {
                        name: f.name.name.clone(),
                        params,
                        result,
                        has_body: f.body.is_some(),
                        has_pre: !f.contract.requires.is_empty(),
                        span: item.span,
                    });
            }
        }
        for item in &members {
            if let ItemKind::Predicate(p) = &item.kind {
                self.begin_member(MemberKind::Predicate);
                let params = self.declare_params(&p.params, VarKind::Param);
                self.end_member();
                self.sem
                    .predicates
                    .entry(p.name.name.clone())
                    .or_insert(PredicateInfo {
                        name: p.name.name.clone(),
                        params,
                        has_body: p.body.is_some(),
                        span: item.span,
                    });
            }
        }
        for item in &members {
            if let ItemKind::Method(m) = &item.kind {
                self.begin_member(MemberKind::Method);
                let params = self.declare_params(&m.params, VarKind::Param);
                let returns = self.declare_params(&m.returns, VarKind::Return);
                self.end_member();
                self.sem
                    .methods
                    .entry(m.name.name.clone())
                    .or_insert(MethodInfo {
                        name: m.name.name.clone(),
                        params,
                        returns,
                        has_body: m.body.is_some(),
                        span: item.span,
                    });
            }
        }
    }

    /// Re-enters a member's parameter scope (the variables declared by
    /// [`Checker::collect_signatures`]) so that bodies see the same [`VarId`]s.
    pub fn enter_params(&mut self, kind: MemberKind, vars: &[VarId]) {
        self.begin_member(kind);
        for &v in vars {
            let info = self.sem.var(v).clone();
            self.bind_existing(&info.name, v);
        }
    }

    /// Parameter types of a function, predicate or method.
    pub fn param_types(&self, vars: &[VarId]) -> Vec<Type> {
        vars.iter().map(|&v| self.sem.var(v).ty.clone()).collect()
    }
}
