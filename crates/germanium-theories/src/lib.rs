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
//! - Viper `==` on collections must be built with [`Theories::equal`] (or the `*Equal`
//!   ops): it is the extensional equality function, whose axioms prove and refute equalities;
//!   SMT `=` on collection terms is sound but the solver cannot prove it from the contents.
//!   For every other type `equal` is `=`.
//! - Names: every sort and function declared here is named after a Viper type with `.`,
//!   `[` or `,` in it (see [`sorts`]); plain Viper type names are used for non-generic
//!   domains and ADTs and for `Ref` (with the constant `null`). The engine must not
//!   declare SMT sorts named like Viper types.
//!
//! Map of the module: [`instances`] finds the ground types; [`sorts`] names them;
//! [`sequences`], [`sets`], [`multisets`], [`maps`] axiomatise the built-in collections;
//! [`domains`] and [`adts`] declare user types, with [`pure_translate`] and [`triggers`]
//! for domain axioms.

mod adt_contains;
mod adt_decreases;
mod adts;
mod domains;
mod instances;
mod maps;
pub mod measures;
mod multisets;
pub mod operators;
mod pure_translate;
mod sequences;
mod sets;
mod sorts;
#[doc(hidden)]
pub mod testing;
#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[h.clone()]` reads better in goals
mod tests_collections;
#[cfg(test)]
mod tests_corpus;
#[cfg(test)]
mod tests_user_types;
mod triggers;

use std::collections::{HashMap, HashSet};

use germanium_semantics::types::Type;
use germanium_smt::{Command, FunDecl, Solver, SolverError, Sort, Symbol, Term, TermKind};

use adts::AdtInstance;
use domains::{DomainFn, FnTable};
use maps::MapTheory;
use multisets::MultisetTheory;
use sequences::SeqTheory;
use sets::SetTheory;
pub use sorts::type_name;

/// Triggers for a quantifier over `vars` (bound variables) with body `body`, for a body
/// written without any (see `triggers`).
pub fn infer_triggers(vars: &[Term], body: &Term) -> Vec<Vec<Term>> {
    triggers::infer(vars, body)
}

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
    DomainFunction {
        domain: String,
        function: String,
        type_args: Vec<Type>,
    },
    AdtConstructor {
        adt: String,
        constructor: String,
        type_args: Vec<Type>,
    },
    AdtDestructor {
        adt: String,
        constructor: String,
        destructor: String,
        type_args: Vec<Type>,
    },
    AdtDiscriminator {
        adt: String,
        constructor: String,
        type_args: Vec<Type>,
    },
}

/// Calls of Viper functions inside domain axioms: `(function name, arguments)` to a term,
/// or `None` when the engine cannot express the call (see [`Theories::with_functions`]).
pub type FunctionCalls<'a> = &'a dyn Fn(&str, Vec<Term>) -> Option<Term>;

/// Errors of the theory layer: a construct it cannot express (reported by the engine as
/// `internal:feature.unsupported` on the node), never a panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported(pub String);

/// The SMT view of a program's types and theories (see the module documentation).
#[derive(Debug)]
pub struct Theories {
    sorts: HashMap<Type, Sort>,
    null: FunDecl,
    seqs: HashMap<Type, SeqTheory>,
    sets: HashMap<Type, SetTheory>,
    multisets: HashMap<Type, MultisetTheory>,
    maps: HashMap<(Type, Type), MapTheory>,
    domain_functions: FnTable,
    adts: HashMap<Type, AdtInstance>,
    preamble: Vec<Command>,
    /// Where the axioms start in `preamble` (declarations come first).
    axiom_start: usize,
    /// What could not be expressed (instances, functions and axioms left out).
    problems: Vec<String>,
}

impl Theories {
    /// Scans the program and its semantic tables for every ground type instance in use.
    /// Constructs that cannot be expressed are left out (see [`Theories::problems`]): their
    /// sorts and operations are then `Unsupported`, and skipped axioms only weaken what is
    /// assumed.
    pub fn new(
        program: &germanium_syntax::ast::Program,
        semantics: &germanium_semantics::Semantics,
    ) -> Result<Theories, Unsupported> {
        Theories::with_functions(program, semantics, &|_, _| None)
    }

    /// Like [`Theories::new`], with `functions(name, args)` giving the term of a call of
    /// the (heap-independent) Viper function `name` inside a domain axiom, or `None` to skip
    /// that axiom. Axioms then mention the engine's function symbols: send
    /// [`Theories::declarations`], then the engine's declarations, then
    /// [`Theories::axioms`].
    pub fn with_functions(
        program: &germanium_syntax::ast::Program,
        semantics: &germanium_semantics::Semantics,
        functions: FunctionCalls<'_>,
    ) -> Result<Theories, Unsupported> {
        let found = instances::Instances::collect(program, semantics);
        let mut problems = Vec::new();
        if found.truncated {
            problems.push("generic domain instantiation was cut off at a nesting bound".into());
        }

        // Sorts by name first (ADT and collection sorts are names; interpreted domains
        // need an SMT-LIB type), then keep the types whose components all have sorts.
        let mut named: HashMap<Type, Sort> = HashMap::new();
        for ty in &found.types {
            if let Some(sort) = nominal_sort(ty, semantics) {
                named.insert(ty.clone(), sort);
            } else {
                problems.push(format!("no SMT-LIB sort for {ty}"));
            }
        }
        let (adts, adt_problems) = adts::build(&found.types, semantics, &|t: &Type| {
            supported_sort(t, &named, None)
        });
        problems.extend(adt_problems);
        let sorts: HashMap<Type, Sort> = found
            .types
            .iter()
            .filter_map(|t| supported_sort(t, &named, Some(&adts)).map(|s| (t.clone(), s)))
            .collect();

        let mut theories = Theories {
            null: FunDecl::constant(Symbol::user("null"), Sort::named("Ref")),
            sorts,
            seqs: HashMap::new(),
            sets: HashMap::new(),
            multisets: HashMap::new(),
            maps: HashMap::new(),
            domain_functions: HashMap::new(),
            adts,
            preamble: Vec::new(),
            axiom_start: 0,
            problems,
        };
        theories.build_collections(&found.types, &quantified_members(program, semantics));
        theories.build_preamble(program, semantics, &found, functions);
        Ok(theories)
    }

    fn build_collections(&mut self, types: &[Type], members_quantified: &HashSet<Type>) {
        for ty in types {
            let (Some(sort), name) = (self.sorts.get(ty).cloned(), type_name(ty)) else {
                continue;
            };
            let elem = |t: &Type| self.sorts.get(t).cloned();
            match ty {
                Type::Seq(e) => {
                    if let Some(es) = elem(e) {
                        let mut th = SeqTheory::new(&name, sort, es);
                        th.members_quantified = members_quantified.contains(&**e);
                        self.seqs.insert((**e).clone(), th);
                    }
                }
                Type::Set(e) => {
                    if let Some(es) = elem(e) {
                        self.sets
                            .insert((**e).clone(), SetTheory::new(&name, sort, es));
                    }
                }
                Type::Multiset(e) => {
                    if let Some(es) = elem(e) {
                        self.multisets
                            .insert((**e).clone(), MultisetTheory::new(&name, sort, es));
                    }
                }
                Type::Map(k, v) => {
                    let parts = (
                        elem(k),
                        elem(v),
                        elem(&Type::set((**k).clone())),
                        elem(&Type::set((**v).clone())),
                    );
                    if let (Some(ks), Some(vs), Some(kset), Some(vset)) = parts {
                        let theory = MapTheory::new(&name, sort, ks, vs, kset, vset);
                        self.maps.insert(((**k).clone(), (**v).clone()), theory);
                    }
                }
                _ => {}
            }
        }
    }

    fn build_preamble(
        &mut self,
        program: &germanium_syntax::ast::Program,
        sem: &germanium_semantics::Semantics,
        found: &instances::Instances,
        calls: FunctionCalls<'_>,
    ) {
        let types = &found.types;
        let mut declarations = vec![Command::DeclareSort(Symbol::user("Ref"))];
        for ty in types {
            let declared = !matches!(
                ty,
                Type::Int | Type::Bool | Type::Perm | Type::Ref | Type::Adt(..)
            );
            if let (true, Some(Sort::Uninterpreted(name))) = (declared, self.sorts.get(ty)) {
                declarations.push(Command::DeclareSort(name.clone()));
            }
        }
        let adt_order: Vec<(&Type, &AdtInstance)> = types
            .iter()
            .filter_map(|t| self.adts.get(t).map(|a| (t, a)))
            .collect();
        if let Some(text) = adts::declare_datatypes(&adt_order) {
            declarations.push(Command::Raw(text.into()));
        }
        let mut functions = vec![self.null.clone()];
        let mut axioms = Vec::new();
        for ty in types {
            match ty {
                Type::Seq(e) => {
                    if let Some(th) = self.seqs.get(e) {
                        functions.extend(th.declarations());
                        axioms.extend(th.axioms());
                    }
                }
                Type::Set(e) => {
                    if let Some(th) = self.sets.get(e) {
                        functions.extend(th.declarations());
                        axioms.extend(th.axioms());
                    }
                }
                Type::Multiset(e) => {
                    if let Some(th) = self.multisets.get(e) {
                        functions.extend(th.declarations());
                        axioms.extend(th.axioms());
                    }
                }
                Type::Map(k, v) => {
                    let key = ((**k).clone(), (**v).clone());
                    let (Some(th), Some(ks), Some(vs)) = (
                        self.maps.get(&key),
                        self.sets.get(&**k),
                        self.sets.get(&**v),
                    ) else {
                        continue;
                    };
                    functions.extend(th.declarations());
                    axioms.extend(th.axioms(ks, vs));
                }
                _ => {}
            }
        }
        // Domain functions (all instances first: axioms of one domain may use another's).
        let mut unique = Vec::new();
        let domain_types: Vec<&Type> = types
            .iter()
            .filter(|t| matches!(t, Type::Domain(..)) && self.sorts.contains_key(*t))
            .filter(|t| found.level(t) >= instances::Level::Declared)
            .collect();
        for ty in &domain_types {
            let Type::Domain(_, args) = ty else { continue };
            let sorts = &self.sorts;
            let listed = domains::functions(
                ty,
                sem,
                &|t: &Type| sorts.get(t).cloned(),
                &mut self.problems,
            );
            for (fname, function, is_unique) in listed {
                if let DomainFn::Declared(decl) = &function {
                    functions.push(decl.clone());
                    if is_unique {
                        unique.push(decl.clone());
                    }
                }
                self.domain_functions
                    .insert((fname, args.clone()), function);
            }
        }
        axioms.extend(domains::uniqueness(&unique));
        axioms.extend(adt_contains::axioms(
            sem,
            &self.adts,
            &self.domain_functions,
        ));
        axioms.extend(adt_decreases::axioms(
            sem,
            &self.adts,
            &self.domain_functions,
        ));
        let syntax = program.domains_by_name();
        let mut problems = Vec::new();
        for ty in domain_types
            .iter()
            .filter(|t| found.level(t) == instances::Level::Expanded)
        {
            let Type::Domain(name, _) = ty else { continue };
            if let Some(d) = syntax.get(name.as_str()) {
                axioms.extend(domains::axioms(self, ty, d, sem, calls, &mut problems));
            }
        }
        self.problems.extend(problems);

        let mut preamble = declarations;
        preamble.extend(functions.into_iter().map(Command::DeclareFun));
        self.axiom_start = preamble.len();
        preamble.extend(axioms.into_iter().map(Command::assert));
        self.preamble = preamble;
    }

    /// Declarations and axioms for scope 0 of every solver session.
    pub fn preamble(&self) -> Vec<Command> {
        self.preamble.clone()
    }

    /// The declarations of the preamble (sorts, datatypes, functions).
    pub fn declarations(&self) -> &[Command] {
        &self.preamble[..self.axiom_start]
    }

    /// The axioms of the preamble (assertions), to be sent after [`Theories::declarations`].
    pub fn axioms(&self) -> &[Command] {
        &self.preamble[self.axiom_start..]
    }

    /// Sends the preamble to `solver` (at its current scope; meant for scope 0).
    pub fn declare_in(&self, solver: &mut Solver) -> Result<(), SolverError> {
        for command in &self.preamble {
            match command {
                Command::DeclareSort(name) => solver.declare_sort(name)?,
                Command::DeclareFun(decl) => solver.declare_fun(decl)?,
                Command::Assert { term, .. } => solver.assert(term)?,
                Command::Raw(text) => solver.raw(text)?,
                // The preamble holds nothing else.
                _ => {}
            }
        }
        Ok(())
    }

    /// What the theory layer left out, for logs and diagnostics (empty for most programs).
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The SMT sort of a ground Viper type (Int → Int, Bool → Bool, Perm → Real, Ref → a
    /// declared `Ref` sort, collections and domains → declared sorts per instance).
    pub fn sort(&self, ty: &Type) -> Result<Sort, Unsupported> {
        match ty {
            Type::Int => Ok(Sort::Int),
            Type::Bool => Ok(Sort::Bool),
            Type::Perm => Ok(Sort::Real),
            Type::Ref => Ok(Sort::named("Ref")),
            _ => self.sorts.get(ty).cloned().ok_or_else(|| {
                Unsupported(format!("the type {ty} has no SMT sort in this program"))
            }),
        }
    }

    /// The constant `null` of sort `Ref`.
    pub fn null(&self) -> Term {
        Term::constant(&self.null)
    }

    /// Viper's `a == b` at type `ty`: extensional equality for collections, `=` otherwise.
    pub fn equal(&self, ty: &Type, a: Term, b: Term) -> Result<Term, Unsupported> {
        match operators::equality_op(ty) {
            Some(op) => self.apply(&op, vec![a, b]),
            None => Ok(Term::eq(a, b)),
        }
    }

    /// The theory of the sequence sort `sort`, if it is one.
    fn sequence_of_sort(&self, sort: &Sort) -> Option<&SeqTheory> {
        let mut found: Vec<(&Type, &SeqTheory)> =
            self.seqs.iter().filter(|(_, t)| t.sort == *sort).collect();
        found.sort_by_key(|(ty, _)| ty.to_string());
        found.first().map(|(_, t)| *t)
    }

    /// The element sort of the sequence sort `sort`, if it is one (for reading values back).
    pub fn sequence_element(&self, sort: &Sort) -> Option<Sort> {
        self.sequence_of_sort(sort).map(|t| t.elem.clone())
    }

    /// `|s|` for a term `s` of a sequence sort.
    pub fn sequence_length(&self, s: Term) -> Option<Term> {
        let th = self.sequence_of_sort(s.sort())?;
        Some(th.length(s))
    }

    /// `s[i]` for a term `s` of a sequence sort.
    pub fn sequence_index(&self, s: Term, i: Term) -> Option<Term> {
        let th = self.sequence_of_sort(s.sort())?;
        Some(th.index(s, i))
    }

    /// Equality of two values of one sort as Viper's `==` sees them: for collections
    /// (found by the sort, where the type is not at hand) equal terms or extensionally
    /// equal ones, `=` otherwise.
    pub fn equal_values(&self, a: Term, b: Term) -> Term {
        let sort = a.sort().clone();
        let extensional = if let Some(t) = self.seqs.values().find(|t| t.sort == sort) {
            t.equal(a.clone(), b.clone())
        } else if let Some(t) = self.sets.values().find(|t| t.sort == sort) {
            t.equal(a.clone(), b.clone())
        } else if let Some(t) = self.multisets.values().find(|t| t.sort == sort) {
            t.equal(a.clone(), b.clone())
        } else if let Some(t) = self.maps.values().find(|t| t.sort == sort) {
            t.equal(a.clone(), b.clone())
        } else {
            return Term::eq(a, b);
        };
        Term::or([Term::eq(a, b), extensional])
    }

    /// `patterns` with, for each pattern that mentions sequence membership `x in s` as one
    /// of its terms, an alternative where each such term is `contains_trigger(s, x)`: every
    /// in-range index term `s[i]` makes `contains_trigger(s, s[i])`, so a program's
    /// quantifier over the members of `s` is also instantiated for the elements it reads.
    pub fn with_membership_triggers(&self, patterns: Vec<Vec<Term>>) -> Vec<Vec<Term>> {
        let marked = |t: &Term| -> Option<Term> {
            let TermKind::App(f, args) = t.kind() else {
                return None;
            };
            let seq = self
                .seqs
                .values()
                .find(|q| q.members_quantified && q.contains == *f)?;
            // Members of a range `[a..b)` are its bounds' interval: no element read is
            // needed to name them, and marking the index terms of its membership witnesses
            // would instantiate again for each.
            let range =
                |t: &Term| matches!(t.kind(), TermKind::App(g, _) if Some(g) == seq.range.as_ref());
            if range(&args[0]) {
                return None;
            }
            Some(seq.contains_trigger(args[0].clone(), args[1].clone()))
        };
        let mut out = Vec::with_capacity(patterns.len());
        let mut extra = Vec::new();
        for set in patterns {
            if set.iter().any(|t| marked(t).is_some()) {
                let alternative: Vec<Term> = set
                    .iter()
                    .map(|t| marked(t).unwrap_or_else(|| t.clone()))
                    .collect();
                extra.push(alternative);
            }
            out.push(set);
        }
        out.extend(extra);
        out
    }

    /// Whether `t` is a sequence built from literal pieces whose elements are literals or
    /// constants: a value worth keeping as it is (its length and elements fold), rather
    /// than naming it by a fresh constant.
    pub fn is_sequence_literal(&self, t: &Term) -> bool {
        let atomic = |e: &Term| match e.kind() {
            TermKind::App(_, args) => args.is_empty(),
            TermKind::Bool(_) | TermKind::Int(_) | TermKind::Real(_) => true,
            _ => false,
        };
        self.seqs.values().any(|seq| {
            seq.sort == *t.sort()
                && seq
                    .elements(t)
                    .is_some_and(|elems| elems.iter().all(atomic))
        })
    }

    fn seq(&self, t: &Type) -> Result<&SeqTheory, Unsupported> {
        self.seqs
            .get(t)
            .ok_or_else(|| Unsupported(format!("Seq[{t}] is not declared")))
    }
    fn set(&self, t: &Type) -> Result<&SetTheory, Unsupported> {
        self.sets
            .get(t)
            .ok_or_else(|| Unsupported(format!("Set[{t}] is not declared")))
    }
    fn multiset(&self, t: &Type) -> Result<&MultisetTheory, Unsupported> {
        self.multisets
            .get(t)
            .ok_or_else(|| Unsupported(format!("Multiset[{t}] is not declared")))
    }
    fn map(&self, k: &Type, v: &Type) -> Result<&MapTheory, Unsupported> {
        self.maps
            .get(&(k.clone(), v.clone()))
            .ok_or_else(|| Unsupported(format!("Map[{k}, {v}] is not declared")))
    }
    fn adt(&self, name: &str, args: &[Type]) -> Result<&AdtInstance, Unsupported> {
        let ty = Type::Adt(name.to_string(), args.to_vec());
        self.adts
            .get(&ty)
            .ok_or_else(|| Unsupported(format!("the ADT {ty} is not declared")))
    }

    /// The term of `op` applied to `args`.
    pub fn apply(&self, op: &TheoryOp, args: Vec<Term>) -> Result<Term, Unsupported> {
        use TheoryOp::*;
        let arity = match op {
            SeqEmpty(_) | SetEmpty(_) | MultisetEmpty(_) | MapEmpty(..) => Some(0),
            SeqLength(_)
            | SetCardinality(_)
            | MultisetCardinality(_)
            | MapDomain(..)
            | MapRange(..)
            | MapCardinality(..) => Some(1),
            SeqUpdate(_) | MapUpdate(..) => Some(3),
            SeqLiteral(_)
            | SetLiteral(_)
            | MultisetLiteral(_)
            | MapLiteral(..)
            | DomainFunction { .. }
            | AdtConstructor { .. } => None,
            AdtDestructor { .. } | AdtDiscriminator { .. } => Some(1),
            _ => Some(2),
        };
        if let Some(n) = arity {
            if args.len() != n {
                return Err(Unsupported(format!(
                    "{op:?} applied to {} arguments",
                    args.len()
                )));
            }
        }
        let mut it = args.into_iter();
        let mut next = || it.next().unwrap_or_else(Term::tt);
        Ok(match op {
            SeqEmpty(t) => self.seq(t)?.empty(),
            SeqLiteral(t) => self.seq(t)?.literal(it.collect()),
            SeqRange => match self.seq(&Type::Int)?.range.as_ref() {
                Some(range) => Term::app(range, vec![next(), next()]),
                None => return Err(Unsupported("integer ranges are not declared".into())),
            },
            SeqAppend(t) => self.seq(t)?.fold_append(next(), next()),
            SeqLength(t) => self.seq(t)?.fold_length(next()),
            SeqIndex(t) => self.seq(t)?.fold_index(next(), next()),
            SeqTake(t) => self.seq(t)?.take(next(), next()),
            SeqDrop(t) => self.seq(t)?.drop(next(), next()),
            SeqUpdate(t) => self.seq(t)?.update(next(), next(), next()),
            // Viper writes `x in s`: the element comes first.
            SeqContains(t) => {
                let (x, s) = (next(), next());
                self.seq(t)?.contains(s, x)
            }
            SeqEqual(t) => self.seq(t)?.equal(next(), next()),
            SetEmpty(t) => self.set(t)?.empty(),
            SetLiteral(t) => self.set(t)?.literal(it.collect()),
            SetUnion(t) => self.set(t)?.union(next(), next()),
            SetIntersection(t) => self.set(t)?.intersection(next(), next()),
            SetDifference(t) => self.set(t)?.difference(next(), next()),
            SetSubset(t) => self.set(t)?.subset(next(), next()),
            SetContains(t) => self.set(t)?.contains(next(), next()),
            SetCardinality(t) => self.set(t)?.card(next()),
            SetEqual(t) => self.set(t)?.equal(next(), next()),
            MultisetEmpty(t) => self.multiset(t)?.empty(),
            MultisetLiteral(t) => self.multiset(t)?.literal(it.collect()),
            MultisetUnion(t) => self.multiset(t)?.union(next(), next()),
            MultisetIntersection(t) => self.multiset(t)?.intersection(next(), next()),
            MultisetDifference(t) => self.multiset(t)?.difference(next(), next()),
            MultisetSubset(t) => self.multiset(t)?.subset(next(), next()),
            MultisetCount(t) => {
                let (x, m) = (next(), next());
                self.multiset(t)?.count(m, x)
            }
            MultisetCardinality(t) => self.multiset(t)?.card(next()),
            MultisetEqual(t) => self.multiset(t)?.equal(next(), next()),
            MapEmpty(k, v) => self.map(k, v)?.empty(),
            MapLiteral(k, v) => match self.map(k, v)?.literal(it.collect()) {
                Some(t) => t,
                None => {
                    return Err(Unsupported(
                        "a map literal with an odd number of terms".into(),
                    ))
                }
            },
            MapLookup(k, v) => self.map(k, v)?.lookup(next(), next()),
            MapUpdate(k, v) => self.map(k, v)?.update(next(), next(), next()),
            MapContainsKey(k, v) => {
                let (key, m) = (next(), next());
                let domain = self.map(k, v)?.domain(m);
                self.set(k)?.contains(key, domain)
            }
            MapDomain(k, v) => self.map(k, v)?.domain(next()),
            MapRange(k, v) => self.map(k, v)?.range(next()),
            MapCardinality(k, v) => {
                let domain = self.map(k, v)?.domain(next());
                self.set(k)?.card(domain)
            }
            MapEqual(k, v) => self.map(k, v)?.equal(next(), next()),
            DomainFunction {
                domain,
                function,
                type_args,
            } => {
                match self
                    .domain_functions
                    .get(&(function.clone(), type_args.clone()))
                {
                    Some(f) => f.apply(it.collect())?,
                    None => {
                        return Err(Unsupported(format!(
                        "the domain function {domain}.{function} at {type_args:?} is not declared"
                    )))
                    }
                }
            }
            AdtConstructor {
                adt,
                constructor,
                type_args,
            } => self
                .adt(adt, type_args)?
                .construct(constructor, it.collect())?,
            AdtDestructor {
                adt,
                constructor,
                destructor,
                type_args,
            } => self
                .adt(adt, type_args)?
                .destruct(constructor, destructor, next())?,
            AdtDiscriminator {
                adt,
                constructor,
                type_args,
            } => self
                .adt(adt, type_args)?
                .discriminate(constructor, next())?,
        })
    }
}

/// The sort a type gets by name alone (`None` for a domain interpreted for other back
/// ends only, or an unknown domain).
fn nominal_sort(ty: &Type, sem: &germanium_semantics::Semantics) -> Option<Sort> {
    Some(match ty {
        Type::Int => Sort::Int,
        Type::Bool => Sort::Bool,
        Type::Perm => Sort::Real,
        Type::Ref => Sort::named("Ref"),
        Type::Domain(name, _) => domains::domain_sort(sem.domains.get(name)?, ty)?,
        _ => Sort::named(&type_name(ty)),
    })
}

/// The sort of `ty` if it and all its components have one (ADTs: only the declared ones,
/// once `adts` is known).
fn supported_sort(
    ty: &Type,
    named: &HashMap<Type, Sort>,
    adts: Option<&HashMap<Type, AdtInstance>>,
) -> Option<Sort> {
    let parts_ok = match ty {
        Type::Seq(e) | Type::Set(e) | Type::Multiset(e) => supported_sort(e, named, adts).is_some(),
        Type::Map(k, v) => {
            supported_sort(k, named, adts).is_some() && supported_sort(v, named, adts).is_some()
        }
        Type::Domain(_, a) => a.iter().all(|t| supported_sort(t, named, adts).is_some()),
        Type::Adt(_, a) => {
            let declared = match adts {
                Some(built) => built.contains_key(ty),
                None => true,
            };
            declared && a.iter().all(|t| supported_sort(t, named, adts).is_some())
        }
        _ => true,
    };
    if parts_ok {
        named.get(ty).cloned()
    } else {
        None
    }
}

/// The element types of the sequences whose members some quantifier of the program speaks
/// about (`x in s` in its body or triggers, `s` a sequence other than a range `[a..b)`).
fn quantified_members(
    program: &germanium_syntax::ast::Program,
    sem: &germanium_semantics::Semantics,
) -> HashSet<Type> {
    use germanium_semantics::visit::{for_each_member_expr, walk_expr};
    use germanium_syntax::ast::{BinaryOp, ExprKind};
    let mut found = HashSet::new();
    for_each_member_expr(program, &mut |root| {
        walk_expr(root, &mut |q| {
            if !matches!(q.kind, ExprKind::Quantifier { .. }) {
                return;
            }
            walk_expr(q, &mut |e| {
                if let ExprKind::Binary(BinaryOp::In, _, s) = &e.kind {
                    if matches!(s.kind, ExprKind::Range(..)) {
                        return;
                    }
                    if let Some(Type::Seq(elem)) = sem.type_of(s.id) {
                        found.insert((**elem).clone());
                    }
                }
            });
        });
    });
    found
}
