//! The syntax tree of a Viper program, as parsed (before name resolution and typing).
//!
//! Every expression and statement has a [`NodeId`], unique within one [`Program`], so later
//! stages can attach facts (types, resolved names) in side tables indexed by it, and a [`Span`].
//! Ambiguous forms stay ambiguous here: `f(x)` is a [`ExprKind::Call`] whether `f` is a function,
//! a domain function, a predicate or an ADT constructor; `e.f` is a [`ExprKind::FieldAccess`]
//! whether `f` is a field or an ADT destructor. The semantic stage decides.

use crate::span::Span;

/// Identity of an expression or statement, dense from 0 within one program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// Hands out fresh [`NodeId`]s; one per program, shared by all its files and macro expansion.
#[derive(Debug, Default)]
pub struct NodeIdGen {
    next: u32,
}

impl NodeIdGen {
    pub fn fresh(&mut self) -> NodeId {
        let id = NodeId(self.next);
        self.next += 1;
        id
    }

    /// Number of ids handed out so far (the length side tables need).
    pub fn count(&self) -> usize {
        self.next as usize
    }
}

/// A name as written, with its position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// `@name(args)` before a declaration, statement or expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub name: Ident,
    /// The string literals given as arguments.
    pub args: Vec<String>,
    pub span: Span,
}

// ---------------------------------------------------------------------------------------------
// Types

#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExprKind {
    Int,
    Bool,
    Perm,
    Ref,
    /// `Rational`, an old synonym of `Perm`.
    Rational,
    Seq(Box<TypeExpr>),
    Set(Box<TypeExpr>),
    Multiset(Box<TypeExpr>),
    Map(Box<TypeExpr>, Box<TypeExpr>),
    /// A domain, ADT or type-variable name with optional type arguments: `D`, `D[Int, T]`, `T`.
    Named(Ident, Vec<TypeExpr>),
}

// ---------------------------------------------------------------------------------------------
// Program and declarations

/// A whole program: the items of the main file and of every file it imports (each once),
/// macros not yet expanded unless [`Program::macros_expanded`] is set.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub items: Vec<Item>,
    pub macros_expanded: bool,
    /// The top-level `define`s that expansion took out of `items`: what the expanded
    /// members depend on (the result cache's keys read their text).
    pub expanded_macros: Vec<Item>,
}

impl Program {
    /// Every domain, by name.
    pub fn domains_by_name(&self) -> std::collections::HashMap<&str, &Domain> {
        self.items
            .iter()
            .filter_map(|item| match &item.kind {
                ItemKind::Domain(d) => Some((d.name.name.as_str(), d)),
                _ => None,
            })
            .collect()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub annotations: Vec<Annotation>,
    pub kind: ItemKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    Import(Import),
    /// `field f: T` (a declaration may name several fields: `field a: Int, b: Int`).
    Field(Vec<FieldDecl>),
    Method(Method),
    Function(Function),
    Predicate(Predicate),
    Domain(Domain),
    Adt(Adt),
    Macro(MacroDef),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    pub target: ImportTarget,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ImportTarget {
    /// `import "path"`, relative to the importing file.
    Local(String),
    /// `import <path>`, from the standard library or an `--import-path` directory.
    Standard(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct FieldDecl {
    pub name: Ident,
    pub ty: TypeExpr,
    pub span: Span,
}

/// `name: T` as a parameter, return value, local variable or bound variable.
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    pub name: Ident,
    pub ty: TypeExpr,
    pub span: Span,
}

/// Specification clauses shared by methods and functions, in source order per kind.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contract {
    pub requires: Vec<Expr>,
    pub ensures: Vec<Expr>,
    pub decreases: Vec<Decreases>,
}

/// `decreases e1, ..., en [if c]`, `decreases _ [if c]` or `decreases *`.
#[derive(Clone, Debug, PartialEq)]
pub struct Decreases {
    pub kind: DecreasesKind,
    pub condition: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum DecreasesKind {
    Tuple(Vec<Expr>),
    /// `_`: terminates, proof not required.
    Wildcard,
    /// `*`: may not terminate.
    Star,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Method {
    pub name: Ident,
    pub params: Vec<VarDecl>,
    pub returns: Vec<VarDecl>,
    pub contract: Contract,
    pub body: Option<Block>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: Ident,
    pub params: Vec<VarDecl>,
    pub result: TypeExpr,
    pub contract: Contract,
    pub body: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Predicate {
    pub name: Ident,
    pub params: Vec<VarDecl>,
    pub body: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Domain {
    pub name: Ident,
    pub type_params: Vec<Ident>,
    /// `interpretation (SMTLIB: "...", Boogie: "...")`: a backend type.
    pub interpretation: Option<Vec<(Ident, String)>>,
    pub functions: Vec<DomainFunction>,
    pub axioms: Vec<Axiom>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DomainFunction {
    pub annotations: Vec<Annotation>,
    pub unique: bool,
    pub name: Ident,
    /// Domain function parameters may be unnamed: `function f(Int, Bool): Int`.
    pub params: Vec<DomainParam>,
    pub result: TypeExpr,
    /// `interpretation "smt-lib-name"`.
    pub interpretation: Option<String>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DomainParam {
    pub name: Option<Ident>,
    pub ty: TypeExpr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Axiom {
    pub annotations: Vec<Annotation>,
    pub name: Option<Ident>,
    pub body: Expr,
    pub span: Span,
}

/// `adt Name[T...] { Ctor(field: T, ...) ... } [derives { ... }]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Adt {
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub constructors: Vec<AdtConstructor>,
    pub derives: Vec<Derive>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AdtConstructor {
    pub annotations: Vec<Annotation>,
    pub name: Ident,
    pub fields: Vec<VarDecl>,
    pub span: Span,
}

/// One entry of a `derives` block: `contains`, `contains without f, g`, `contains[T]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Derive {
    pub name: Ident,
    pub type_arg: Option<TypeExpr>,
    pub without: Vec<Ident>,
    pub span: Span,
}

/// `define name(params) body`; the body is an expression, a block of statements, or
/// (for macros used as statements without braces) a single statement.
#[derive(Clone, Debug, PartialEq)]
pub struct MacroDef {
    pub name: Ident,
    /// `None` for `define A e` (no parentheses), `Some(vec![])` for `define A() e`.
    pub params: Option<Vec<Ident>>,
    pub body: MacroBody,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MacroBody {
    Expr(Expr),
    Stmts(Block),
}

// ---------------------------------------------------------------------------------------------
// Statements

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub id: NodeId,
    pub annotations: Vec<Annotation>,
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `var x: T [:= e]` (also `var x: T, y: U`; an initialiser only with one variable).
    VarDecl(Vec<VarDecl>, Option<Expr>),
    /// `x := e`, `e.f := e`, `x, y := m(...)`: targets are [`ExprKind::Ident`] or
    /// [`ExprKind::FieldAccess`] expressions; the right side may be a method call
    /// (an [`ExprKind::Call`] the semantic stage resolves to a method) or `new(...)`.
    Assign(Vec<Expr>, Expr),
    /// `m(args)` as a statement: a method call without results, or a statement macro.
    Call(Ident, Vec<Expr>),
    /// `x := new(f, g)` / `x := new(*)`.
    New(Expr, NewFields),
    If {
        cond: Expr,
        then: Block,
        /// `elseif` branches are nested as an `If` alone in the else block.
        otherwise: Option<Block>,
    },
    While {
        cond: Expr,
        invariants: Vec<Expr>,
        decreases: Vec<Decreases>,
        body: Block,
    },
    Label(Ident, Vec<Expr>),
    Goto(Ident),
    Fold(Expr),
    Unfold(Expr),
    /// `package wand [{ proof script }]`.
    Package(Expr, Option<Block>),
    Apply(Expr),
    Inhale(Expr),
    Exhale(Expr),
    Assert(Expr),
    Assume(Expr),
    Refute(Expr),
    /// `quasihavoc [cond ==>] resource`.
    Quasihavoc(Option<Expr>, Expr),
    /// `quasihavocall vars :: [cond ==>] resource`.
    Quasihavocall(Vec<VarDecl>, Option<Expr>, Expr),
    Block(Block),
    /// A statement macro's name used without arguments, e.g. `A` alone on a line.
    MacroRef(Ident),
    /// A `define` inside a method body (visible in the whole method). Only in parsed
    /// programs: [`crate::expand_macros`] removes these.
    Define(Box<MacroDef>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum NewFields {
    Fields(Vec<Ident>),
    /// `new(*)`: all fields of the program.
    All,
}

// ---------------------------------------------------------------------------------------------
// Expressions

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub id: NodeId,
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-e`
    Neg,
    /// `!e`
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// `/`: division of Int or Perm, or building a Perm from two Ints.
    Div,
    /// `\`: integer division.
    IntDiv,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Implies,
    Iff,
    /// `--*`
    Wand,
    /// `in`
    In,
    /// `++`
    Concat,
    Union,
    Intersection,
    Setminus,
    Subset,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuantifierKind {
    Forall,
    Exists,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollectionKind {
    Seq,
    Set,
    Multiset,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Trigger {
    pub exprs: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// Decimal literal, kept as written (Viper integers are unbounded).
    IntLit(String),
    BoolLit(bool),
    Null,
    Result,
    /// A local, parameter, bound variable, or a macro without parameters.
    Ident(Ident),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `e.f`: a field, or an ADT destructor or discriminator (`e.isCons`).
    FieldAccess(Box<Expr>, Ident),
    /// `f(args)`: function, domain function, predicate, ADT constructor or macro.
    Call(Ident, Vec<Expr>),
    /// `(f(args) : T)`: a call with its result type given, to fix type variables.
    Ascribed(Box<Expr>, TypeExpr),
    /// `old(e)` (label `None`) or `old[l](e)`.
    Old(Option<Ident>, Box<Expr>),
    /// `lhs(e)`: `e` in the state of a wand's left-hand side.
    Lhs(Box<Expr>),
    /// `let x == (e) in body` (the type of `x` is that of `e`).
    Let(Ident, Box<Expr>, Box<Expr>),
    Unfolding(Box<Expr>, Box<Expr>),
    Applying(Box<Expr>, Box<Expr>),
    /// `asserting (a) in e`
    Asserting(Box<Expr>, Box<Expr>),
    Quantifier {
        kind: QuantifierKind,
        vars: Vec<VarDecl>,
        triggers: Vec<Trigger>,
        body: Box<Expr>,
    },
    /// `forperm x: Ref [resource] :: body`
    Forperm {
        vars: Vec<VarDecl>,
        resources: Vec<Expr>,
        body: Box<Expr>,
    },
    /// `acc(loc[, amount])`; `loc` is a field access, a predicate call or a wand. Also
    /// written without `acc` for predicates (`P(x)`), which stays a plain `Call`.
    Acc(Box<Expr>, Option<Box<Expr>>),
    /// `perm(loc)`
    Perm(Box<Expr>),
    Write,
    NoPerm,
    Wildcard,
    Epsilon,
    /// Abstract read permission amounts (seed 003): `rd`, `rdc(n)`, `rdw`,
    /// `rd_token(e)`, `rd_token_fresh(e)`, `globalRd`.
    ReadPerm(ReadPermKind),
    /// `Seq(a, b)`, `Seq[T]()`, `Set(...)`, `Multiset(...)`.
    Collection(CollectionKind, Option<TypeExpr>, Vec<Expr>),
    /// `Map(k := v, ...)` / `Map[K, V]()`.
    MapLit(Option<(TypeExpr, TypeExpr)>, Vec<(Expr, Expr)>),
    /// `[a..b)`
    Range(Box<Expr>, Box<Expr>),
    /// `s[i]` (sequences and maps)
    Index(Box<Expr>, Box<Expr>),
    /// `s[a..b]`, `s[a..]`, `s[..b]`
    Slice(Box<Expr>, Option<Box<Expr>>, Option<Box<Expr>>),
    /// `s[i := v]` (sequences and maps)
    Update(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `|e|`
    Length(Box<Expr>),
    /// `domain(m)`
    MapDomain(Box<Expr>),
    /// `range(m)`
    MapRange(Box<Expr>),
    /// `[e1, e2]`: `e1` when inhaled, `e2` when exhaled.
    InhaleExhale(Box<Expr>, Box<Expr>),
    /// An annotated expression, e.g. `@reveal() f(x)`.
    Annotated(Annotation, Box<Expr>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum ReadPermKind {
    Rd,
    Rdc(Box<Expr>),
    Rdw,
    RdToken(Box<Expr>),
    RdTokenFresh(Box<Expr>),
    GlobalRd,
}
