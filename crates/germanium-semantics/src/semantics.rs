//! The facts semantic analysis hands to the verification back ends: side tables indexed by
//! [`NodeId`] and declaration tables keyed by name.

use std::collections::HashMap;

use germanium_syntax::ast::NodeId;
use germanium_syntax::Span;

use crate::types::Type;

/// Identity of a declared variable (parameter, result, local, bound or let variable).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VarKind {
    /// A method or function parameter (a predicate parameter too).
    Param,
    /// A method's return variable.
    Return,
    /// `var x: T` in a method body.
    Local,
    /// A quantified variable (`forall`, `exists`, `forperm`, `quasihavocall`).
    Bound,
    /// `let x == (e) in ...`.
    Let,
    /// A named parameter of a domain function or ADT constructor field (only in signatures).
    Signature,
}

#[derive(Clone, Debug)]
pub struct VarInfo {
    pub name: String,
    pub ty: Type,
    pub kind: VarKind,
    /// Position of the declaring name.
    pub span: Span,
}

/// What a call `f(args)` denotes.
#[derive(Clone, Debug, PartialEq)]
pub enum CallTarget {
    Function(String),
    /// A domain function; `type_args` instantiates the domain's type parameters in order
    /// (inferred from arguments and the expected type, unconstrained ones defaulted to Int).
    DomainFunction {
        domain: String,
        function: String,
        type_args: Vec<Type>,
    },
    Predicate(String),
    AdtConstructor {
        adt: String,
        constructor: String,
        type_args: Vec<Type>,
    },
    Method(String),
}

/// What `e.f` denotes.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldTarget {
    Field(String),
    AdtDestructor {
        adt: String,
        constructor: String,
        destructor: String,
        type_args: Vec<Type>,
    },
    /// `e.isC`
    AdtDiscriminator {
        adt: String,
        constructor: String,
        type_args: Vec<Type>,
    },
}

#[derive(Clone, Debug)]
pub struct FieldInfo {
    pub name: String,
    pub ty: Type,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct FunctionInfo {
    pub name: String,
    pub params: Vec<VarId>,
    pub result: Type,
    pub has_body: bool,
    pub has_pre: bool,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct PredicateInfo {
    pub name: String,
    pub params: Vec<VarId>,
    pub has_body: bool,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct MethodInfo {
    pub name: String,
    pub params: Vec<VarId>,
    pub returns: Vec<VarId>,
    pub has_body: bool,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct DomainFunctionInfo {
    pub name: String,
    pub domain: String,
    pub params: Vec<Type>,
    pub result: Type,
    pub unique: bool,
    /// `interpretation "smt-name"` (backend function).
    pub interpretation: Option<String>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct AxiomInfo {
    pub name: Option<String>,
    /// The axiom's body expression (look up its types in [`Semantics::expr_types`]).
    pub body: NodeId,
}

#[derive(Clone, Debug)]
pub struct DomainInfo {
    pub name: String,
    pub type_params: Vec<String>,
    pub functions: Vec<String>,
    pub axioms: Vec<AxiomInfo>,
    /// Backend type: `(backend key, type)` pairs such as `("SMTLIB", "(_ BitVec 32)")`.
    pub interpretation: Option<Vec<(String, String)>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct ConstructorInfo {
    pub name: String,
    pub adt: String,
    /// Destructor names and their types (in terms of the ADT's type parameters).
    pub fields: Vec<(String, Type)>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct AdtInfo {
    pub name: String,
    pub type_params: Vec<String>,
    pub constructors: Vec<String>,
    /// Names in the `derives` block, e.g. `contains`, with the excluded destructors.
    pub derives: Vec<(String, Option<Type>, Vec<String>)>,
    pub span: Span,
}

/// Everything semantic analysis learned about a program.
#[derive(Debug, Default)]
pub struct Semantics {
    /// Type of each expression by [`NodeId`] (`None` for statements and unreached nodes).
    pub expr_types: Vec<Option<Type>>,
    /// Resolution of each [`ExprKind::Call`](germanium_syntax::ast::ExprKind::Call) and of each
    /// method-call statement ([`StmtKind::Call`](germanium_syntax::ast::StmtKind::Call) by the
    /// statement's id).
    pub calls: Vec<Option<CallTarget>>,
    /// Resolution of each field access.
    pub field_accesses: Vec<Option<FieldTarget>>,
    /// Resolution of each identifier expression.
    pub idents: Vec<Option<VarId>>,
    /// All variables; [`VarId`] indexes this.
    pub vars: Vec<VarInfo>,
    /// Variables introduced by a statement or expression: `(node, i)` is the `i`-th
    /// variable of a `var` statement, quantifier, `forperm`, `quasihavocall` or `let`.
    pub binders: HashMap<(NodeId, usize), VarId>,
    pub fields: HashMap<String, FieldInfo>,
    pub functions: HashMap<String, FunctionInfo>,
    pub predicates: HashMap<String, PredicateInfo>,
    pub methods: HashMap<String, MethodInfo>,
    pub domains: HashMap<String, DomainInfo>,
    pub domain_functions: HashMap<String, DomainFunctionInfo>,
    pub adts: HashMap<String, AdtInfo>,
    pub constructors: HashMap<String, ConstructorInfo>,
    /// Field declaration order (for `new(*)` and deterministic output).
    pub field_order: Vec<String>,
}

impl Semantics {
    pub fn new(node_count: usize) -> Self {
        Semantics {
            expr_types: vec![None; node_count],
            calls: vec![None; node_count],
            field_accesses: vec![None; node_count],
            idents: vec![None; node_count],
            ..Default::default()
        }
    }

    pub fn type_of(&self, id: NodeId) -> Option<&Type> {
        self.expr_types.get(id.0 as usize).and_then(Option::as_ref)
    }

    pub fn call(&self, id: NodeId) -> Option<&CallTarget> {
        self.calls.get(id.0 as usize).and_then(Option::as_ref)
    }

    pub fn field_access(&self, id: NodeId) -> Option<&FieldTarget> {
        self.field_accesses
            .get(id.0 as usize)
            .and_then(Option::as_ref)
    }

    /// The variable an identifier expression names.
    pub fn var_id(&self, id: NodeId) -> Option<VarId> {
        self.idents.get(id.0 as usize).copied().flatten()
    }

    pub fn var_of(&self, id: NodeId) -> Option<&VarInfo> {
        let v = self.var_id(id)?;
        self.vars.get(v.0 as usize)
    }

    pub fn var(&self, v: VarId) -> &VarInfo {
        &self.vars[v.0 as usize]
    }

    pub(crate) fn set<T>(table: &mut Vec<Option<T>>, id: NodeId, value: T) {
        let i = id.0 as usize;
        if i >= table.len() {
            table.resize_with(i + 1, || None);
        }
        table[i] = Some(value);
    }

    pub(crate) fn add_var(&mut self, info: VarInfo) -> VarId {
        self.vars.push(info);
        VarId(self.vars.len() as u32 - 1)
    }
}
