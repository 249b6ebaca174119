//! Viper's built-in theories and user types in SMT: sorts for Viper types, the
//! axiomatisations of Seq, Set, Multiset and Map (written for Germanium), and the
//! translation of user domains (functions, axioms, `unique`, generic domains
//! monomorphised per ground instance) and ADTs.
//!
//! Interface contract with the engine (`evaluate` etc.):
//! - [`Theories::new`] scans the whole program once (every type in the semantic tables and
//!   every domain-function / constructor instantiation) and fixes the set of ground type
//!   instances; [`Theories::preamble`] returns the commands declaring every sort, function
//!   and axiom, to be sent once at solver scope 0 before any method is verified.
//! - [`Theories::sort`] maps a ground Viper type to its SMT sort.
//! - [`Theories::apply`] builds the term of one theory operation on already-evaluated
//!   arguments; it is pure (all declarations are in the preamble).
//! - Nothing here knows about the heap: heap-dependent expressions never reach this module
//!   except as already-evaluated terms.

use germanium_semantics::types::Type;
use germanium_smt::{Command, Sort, Term};

/// One operation of a built-in theory or of a user domain / ADT, applied to evaluated
/// arguments by [`Theories::apply`]. Types are the ground Viper types involved (element
/// type for collections, key and value types for maps).
#[derive(Clone, Debug, PartialEq)]
pub enum TheoryOp {
    // Sequences: element type.
    SeqEmpty(Type),
    /// `Seq(a, b, c)` (arguments: the elements).
    SeqLiteral(Type),
    /// `[a..b)` (Int sequences).
    SeqRange,
    SeqAppend(Type),
    SeqLength(Type),
    SeqIndex(Type),
    /// `s[..n]`
    SeqTake(Type),
    /// `s[n..]`
    SeqDrop(Type),
    /// `s[i := v]`
    SeqUpdate(Type),
    /// `x in s`
    SeqContains(Type),
    SeqEqual(Type),
    // Sets: element type.
    SetEmpty(Type),
    SetLiteral(Type),
    SetUnion(Type),
    SetIntersection(Type),
    SetDifference(Type),
    SetSubset(Type),
    SetContains(Type),
    SetCardinality(Type),
    SetEqual(Type),
    // Multisets: element type.
    MultisetEmpty(Type),
    MultisetLiteral(Type),
    MultisetUnion(Type),
    MultisetIntersection(Type),
    MultisetDifference(Type),
    MultisetSubset(Type),
    /// `x in m` is the multiplicity (an Int) in Viper.
    MultisetCount(Type),
    MultisetCardinality(Type),
    MultisetEqual(Type),
    // Maps: key and value types.
    MapEmpty(Type, Type),
    /// `Map(k1 := v1, ...)` (arguments: k1, v1, k2, v2, ...).
    MapLiteral(Type, Type),
    MapLookup(Type, Type),
    MapUpdate(Type, Type),
    /// `k in m` (key in the domain).
    MapContainsKey(Type, Type),
    MapDomain(Type, Type),
    MapRange(Type, Type),
    MapCardinality(Type, Type),
    MapEqual(Type, Type),
    /// A domain function with the ground instantiation of its domain's type parameters.
    DomainFunction { domain: String, function: String, type_args: Vec<Type> },
    AdtConstructor { adt: String, constructor: String, type_args: Vec<Type> },
    AdtDestructor { adt: String, constructor: String, destructor: String, type_args: Vec<Type> },
    AdtDiscriminator { adt: String, constructor: String, type_args: Vec<Type> },
}

/// Errors of the theory layer: a construct it cannot express (reported by the engine as
/// `internal:feature.unsupported` on the node), never a panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported(pub String);

/// The SMT view of a program's types and theories (see the module documentation).
#[derive(Debug)]
pub struct Theories {
    _private: (),
}

impl Theories {
    /// Scans the program and its semantic tables for every ground type instance in use.
    pub fn new(
        program: &germanium_syntax::ast::Program,
        semantics: &germanium_semantics::Semantics,
    ) -> Result<Theories, Unsupported> {
        let _ = (program, semantics);
        Err(Unsupported("theories are not implemented yet".into()))
    }

    /// Declarations and axioms for scope 0 of every solver session.
    pub fn preamble(&self) -> Vec<Command> {
        Vec::new()
    }

    /// The SMT sort of a ground Viper type (Int → Int, Bool → Bool, Perm → Real, Ref → a
    /// declared `Ref` sort, collections and domains → declared sorts per instance).
    pub fn sort(&self, ty: &Type) -> Result<Sort, Unsupported> {
        Err(Unsupported(format!("no sort for {ty:?} yet")))
    }

    /// The term of `op` applied to `args`.
    pub fn apply(&self, op: &TheoryOp, args: Vec<Term>) -> Result<Term, Unsupported> {
        let _ = args;
        Err(Unsupported(format!("{op:?} is not implemented yet")))
    }
}
