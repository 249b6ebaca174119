//! The checker's state: global declarations, local scopes, the current member, the
//! inference state of the expression being checked, and the two error phases.

use std::collections::{HashMap, HashSet};

use germanium_syntax::ast::{NodeId, TypeExpr, TypeExprKind};
use germanium_syntax::{Diagnostic, Span};

use crate::semantics::{CallTarget, FieldTarget, Semantics, VarId, VarInfo, VarKind};
use crate::types::{Type, Unifier};

/// What a global name denotes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Global {
    Field,
    Function,
    Predicate,
    Method,
    Domain,
    DomainFunction,
    Axiom,
    Adt,
    Constructor,
    /// Destructor of the named ADT and constructor.
    Destructor(String, String),
    /// `isC` of the named ADT and constructor.
    Discriminator(String, String),
}

/// The kind of member (or part of one) being checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemberKind {
    Method,
    Function,
    Predicate,
    Axiom,
    Other,
}

/// A lexical scope for local names.
#[derive(Debug)]
struct Frame {
    names: HashMap<String, VarId>,
    block: u32,
}

pub(crate) struct Checker {
    pub sem: Semantics,
    /// See [`crate::Rules::wands_in_predicates`].
    pub wands_in_predicates: bool,
    pub globals: HashMap<String, Global>,
    /// ADT destructors by name: `(adt, constructor)`; different ADTs may share a name.
    pub destructors: HashMap<String, Vec<(String, String)>>,
    /// Name-analysis errors: when there is one, type errors are not reported (as in Viper).
    pub name_errors: Vec<Diagnostic>,
    pub type_errors: Vec<Diagnostic>,

    // Current member.
    pub member: MemberKind,
    pub type_params: Vec<String>,
    pub result_type: Option<Type>,
    pub result_allowed: bool,

    // Local scopes of the current member.
    frames: Vec<Frame>,
    /// Parent of each block of the current member (for the overlap rule on locals).
    block_parents: Vec<Option<u32>>,
    /// Blocks in which each local name was declared so far in the current member.
    declared: HashMap<String, Vec<u32>>,
    /// Names declared twice in one scope: their uses are ambiguous.
    ambiguous: HashSet<String>,

    // Inference state of the current top-level expression.
    pub unifier: Unifier,
    pending_types: Vec<(NodeId, Type)>,
    pending_calls: Vec<(NodeId, CallTarget)>,
    pending_fields: HashMap<NodeId, FieldTarget>,
    /// Let-bound variables whose type is only known after inference.
    pub pending_let_types: Vec<(VarId, Type)>,
    /// Depth of nested top-level checks (only the outermost one grounds types).
    top_depth: u32,
    /// Arithmetic operators whose Int/Perm signature is still open.
    pub(crate) numeric_choices: Vec<crate::numeric_ops::NumericChoice>,
    /// Counter giving operators their post-order position.
    pub(crate) numeric_order: u32,
    /// The domain whose axiom is being checked.
    pub(crate) axiom_domain: Option<String>,
    /// Type arguments of calls of the axiom's own domain functions, with the domain type
    /// parameter they default to when left open.
    pub(crate) own_domain_defaults: Vec<(Type, Type)>,
}

impl Checker {
    pub fn new(node_count: usize) -> Self {
        Checker {
            sem: Semantics::new(node_count),
            wands_in_predicates: false,
            globals: HashMap::new(),
            destructors: HashMap::new(),
            name_errors: Vec::new(),
            type_errors: Vec::new(),
            member: MemberKind::Other,
            type_params: Vec::new(),
            result_type: None,
            result_allowed: false,
            frames: Vec::new(),
            block_parents: Vec::new(),
            declared: HashMap::new(),
            ambiguous: HashSet::new(),
            unifier: Unifier::default(),
            pending_types: Vec::new(),
            pending_calls: Vec::new(),
            pending_fields: HashMap::new(),
            pending_let_types: Vec::new(),
            top_depth: 0,
            numeric_choices: Vec::new(),
            numeric_order: 0,
            axiom_domain: None,
            own_domain_defaults: Vec::new(),
        }
    }

    pub fn name_error(&mut self, span: Span, msg: impl Into<String>) {
        self.name_errors.push(Diagnostic::typechecker(span, msg));
    }

    pub fn type_error(&mut self, span: Span, msg: impl Into<String>) {
        self.type_errors.push(Diagnostic::typechecker(span, msg));
    }

    // -----------------------------------------------------------------------------------
    // Types written in the program

    /// Resolves a written type; unknown names are reported and become the error type.
    pub fn resolve_type(&mut self, t: &TypeExpr) -> Type {
        match &t.kind {
            TypeExprKind::Int => Type::Int,
            TypeExprKind::Bool => Type::Bool,
            TypeExprKind::Perm | TypeExprKind::Rational => Type::Perm,
            TypeExprKind::Ref => Type::Ref,
            TypeExprKind::Seq(e) => Type::seq(self.resolve_type(e)),
            TypeExprKind::Set(e) => Type::set(self.resolve_type(e)),
            TypeExprKind::Multiset(e) => Type::multiset(self.resolve_type(e)),
            TypeExprKind::Map(k, v) => {
                let k = self.resolve_type(k);
                Type::map(k, self.resolve_type(v))
            }
            TypeExprKind::Named(name, args) => {
                let args: Vec<Type> = args.iter().map(|a| self.resolve_type(a)).collect();
                if args.is_empty() && self.type_params.iter().any(|p| p == &name.name) {
                    return Type::Var(name.name.clone());
                }
                let arity = match self.globals.get(&name.name) {
                    Some(Global::Domain) => self
                        .sem
                        .domains
                        .get(&name.name)
                        .map(|d| (d.type_params.len(), false)),
                    Some(Global::Adt) => self
                        .sem
                        .adts
                        .get(&name.name)
                        .map(|d| (d.type_params.len(), true)),
                    _ => None,
                };
                match arity {
                    Some((n, is_adt)) => {
                        if n != args.len() {
                            self.type_error(t.span, "wrong number of type arguments");
                            return Type::Error;
                        }
                        if is_adt {
                            Type::Adt(name.name.clone(), args)
                        } else {
                            Type::Domain(name.name.clone(), args)
                        }
                    }
                    None => {
                        // Like Viper, keep the name: a later mismatch is reported too.
                        self.type_error(t.span, format!("found undeclared type {}", name.name));
                        Type::Domain(name.name.clone(), args)
                    }
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------
    // Local scopes

    /// Starts a member: one root scope.
    pub fn begin_member(&mut self, kind: MemberKind) {
        self.member = kind;
        self.frames.clear();
        self.block_parents.clear();
        self.declared.clear();
        self.ambiguous.clear();
        self.result_type = None;
        self.result_allowed = false;
        self.push_scope();
    }

    pub fn end_member(&mut self) {
        self.frames.clear();
        self.member = MemberKind::Other;
        self.type_params.clear();
    }

    pub fn push_scope(&mut self) {
        let parent = self.frames.last().map(|f| f.block);
        self.block_parents.push(parent);
        let block = self.block_parents.len() as u32 - 1;
        self.frames.push(Frame {
            names: HashMap::new(),
            block,
        });
    }

    pub fn pop_scope(&mut self) {
        self.frames.pop();
    }

    fn is_ancestor_or_self(&self, ancestor: u32, mut block: u32) -> bool {
        loop {
            if block == ancestor {
                return true;
            }
            match self.block_parents[block as usize] {
                Some(p) => block = p,
                None => return false,
            }
        }
    }

    /// Declares a local name in the innermost scope. Two declarations of a name clash when
    /// the scope of one contains the other's (a local's scope is its whole block), and a
    /// local may not reuse a global name.
    pub fn declare(&mut self, name: &str, span: Span, ty: Type, kind: VarKind) -> VarId {
        let id = self.sem.add_var(VarInfo {
            name: name.to_string(),
            ty,
            kind,
            span,
        });
        if self.frames.is_empty() {
            self.push_scope();
        }
        let block = self.frames.last().map(|f| f.block).unwrap_or(0);
        let clash = self.declared.get(name).is_some_and(|blocks| {
            blocks
                .iter()
                .any(|&b| self.is_ancestor_or_self(b, block) || self.is_ancestor_or_self(block, b))
        });
        if self.globals.contains_key(name) {
            self.name_error(span, format!("Identifier shadowing `{name}'"));
        } else if clash {
            self.name_error(span, format!("Duplicate identifier `{name}'"));
            if self
                .frames
                .last()
                .is_some_and(|f| f.names.contains_key(name))
            {
                self.ambiguous.insert(name.to_string());
            }
        }
        self.declared
            .entry(name.to_string())
            .or_default()
            .push(block);
        let frame = self.frames.last_mut().expect("a scope");
        frame.names.entry(name.to_string()).or_insert(id);
        id
    }

    /// Makes an already declared variable visible again (parameters when checking bodies);
    /// its clashes were reported when it was declared.
    pub fn bind_existing(&mut self, name: &str, var: VarId) {
        let block = self.frames.last().map(|f| f.block).unwrap_or(0);
        let blocks = self.declared.entry(name.to_string()).or_default();
        if !blocks.is_empty() {
            self.ambiguous.insert(name.to_string());
        }
        blocks.push(block);
        if let Some(frame) = self.frames.last_mut() {
            frame.names.entry(name.to_string()).or_insert(var);
        }
    }

    /// The innermost visible local with this name.
    pub fn lookup_local(&self, name: &str) -> Option<VarId> {
        self.frames
            .iter()
            .rev()
            .find_map(|f| f.names.get(name).copied())
    }

    pub fn is_ambiguous(&self, name: &str) -> bool {
        self.ambiguous.contains(name)
    }

    // -----------------------------------------------------------------------------------
    // Recording facts (types may still contain inference variables)

    pub fn record_type(&mut self, id: NodeId, t: &Type) {
        self.pending_types.push((id, t.clone()));
    }

    pub fn record_call(&mut self, id: NodeId, target: CallTarget) {
        self.pending_calls.push((id, target));
    }

    pub fn record_field(&mut self, id: NodeId, target: FieldTarget) {
        self.pending_fields.insert(id, target);
    }

    /// The resolution of a field access checked in the current top-level expression.
    pub fn pending_field_of(&self, e: &germanium_syntax::ast::Expr) -> Option<&FieldTarget> {
        self.pending_fields.get(&e.id)
    }

    pub fn record_ident(&mut self, id: NodeId, var: VarId) {
        Semantics::set(&mut self.sem.idents, id, var);
    }

    /// Enters a top-level expression check (the outermost one owns the inference state).
    pub fn begin_top(&mut self) {
        if self.top_depth == 0 {
            self.unifier = Unifier::default();
            self.numeric_choices.clear();
            self.own_domain_defaults.clear();
        }
        self.top_depth += 1;
    }

    /// Leaves a top-level check; the outermost grounds unconstrained type variables to Int
    /// (Viper's default) and stores the final facts.
    pub fn end_top(&mut self) {
        self.top_depth -= 1;
        if self.top_depth > 0 {
            return;
        }
        self.resolve_numeric_choices();
        for (var, default) in std::mem::take(&mut self.own_domain_defaults) {
            if matches!(self.unifier.shallow(&var), Type::Infer(_)) {
                self.unifier.unify(&var, &default);
            }
        }
        let types = std::mem::take(&mut self.pending_types);
        for (id, t) in types {
            self.unifier.default_free(&t);
            let t = self.unifier.resolve(&t);
            Semantics::set(&mut self.sem.expr_types, id, t);
        }
        let lets = std::mem::take(&mut self.pending_let_types);
        for (v, t) in lets {
            self.unifier.default_free(&t);
            let t = self.unifier.resolve(&t);
            self.sem.vars[v.0 as usize].ty = t;
        }
        let calls = std::mem::take(&mut self.pending_calls);
        for (id, mut c) in calls {
            match &mut c {
                CallTarget::DomainFunction { type_args, .. }
                | CallTarget::AdtConstructor { type_args, .. } => self.ground(type_args),
                _ => {}
            }
            Semantics::set(&mut self.sem.calls, id, c);
        }
        let fields = std::mem::take(&mut self.pending_fields);
        for (id, mut f) in fields {
            match &mut f {
                FieldTarget::AdtDestructor { type_args, .. }
                | FieldTarget::AdtDiscriminator { type_args, .. } => self.ground(type_args),
                FieldTarget::Field(_) => {}
            }
            Semantics::set(&mut self.sem.field_accesses, id, f);
        }
    }

    fn ground(&mut self, ts: &mut [Type]) {
        for t in ts.iter_mut() {
            self.unifier.default_free(t);
            *t = self.unifier.resolve(t);
        }
    }
}
