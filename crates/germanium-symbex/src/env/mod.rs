//! The program-wide environment: tables computed once per program and shared, read-only,
//! by every worker (declarations by name, call graphs, the theories, sorts).
//!
//! Architecture invariant: a pure function of the checked program; no solver, no state.

pub mod analysis;

use std::collections::{HashMap, HashSet};

use germanium_semantics::{Semantics, Type};
use germanium_smt::{FunDecl, Sort, Symbol, Term};
use germanium_syntax::ast::{Function, ItemKind, Method, Program};
use germanium_syntax::SourceMap;
use germanium_theories::Theories;

use crate::state::snapshot::SnapDecls;

/// How many times one member's paths may split without being joined again (see
/// `rules::joins`: sides that end in states with different chunks, or repeated tests of
/// one integer); past this budget the member is reported as not verified instead of
/// running for hours. No corpus member comes near it.
pub const MAX_BRANCHES_PER_MEMBER: usize = 50_000;

/// Read-only facts about the program, shared by the workers.
pub struct Env<'a> {
    pub sem: &'a Semantics,
    pub sources: &'a SourceMap,
    /// `None` while the theory layer cannot handle this program: then only Int, Bool, Perm
    /// and Ref are supported.
    pub theories: Option<Theories>,
    pub snap: SnapDecls,
    pub ref_sort: Sort,
    /// `null`, and its declaration when the theory layer does not declare it.
    pub null: Term,
    pub null_decl: Option<FunDecl>,
    pub methods: HashMap<String, &'a Method>,
    pub functions: HashMap<String, &'a Function>,
    pub predicates: HashMap<String, &'a germanium_syntax::ast::Predicate>,
    /// Functions annotated `@opaque()`: their bodies are not revealed to callers.
    pub opaque: HashSet<String>,
    /// Functions whose preconditions hold predicate instances or wands (see
    /// `rules::functions::held_decl`).
    pub reads_instances: HashSet<String>,
    /// How often one member's paths may split (see [`MAX_BRANCHES_PER_MEMBER`]).
    pub max_branches: usize,
    /// Which methods each method calls.
    pub call_graph: HashMap<String, HashSet<String>>,
    /// Which functions each function mentions.
    pub function_call_graph: HashMap<String, HashSet<String>>,
    /// Viper functions that domain axioms mention (declared before the axioms).
    pub axiom_functions: Vec<FunDecl>,
    /// Whether a quantifier's trigger names a magic wand (see `analysis::has_wand_triggers`).
    pub wand_triggers: bool,
    /// Fields read at the top of a trigger (see `analysis::fields_in_triggers`).
    pub trigger_fields: HashSet<String>,
    /// Whether the program uses abstract read permissions (`rd`, `rdc`, ...): only then
    /// does each member start with their symbols (see `rules::read_permissions`).
    pub read_permissions: bool,
    /// Wands are combinable wands (seed 004): fractions of one wand recombine, and a package
    /// checks the right-hand side with the footprint scaled to fit each left-hand side.
    pub combinable_wands: bool,
    /// A counterexample for each failed check (see `rules::counterexample`).
    pub counterexamples: bool,
    /// The predicates whose instances hold a wand (`analysis::wand_predicates`): their
    /// instances' fractions are not merged into one snapshot (two packages of one wand
    /// have snapshots defined apart, which need not be equal).
    pub wand_predicates: HashSet<String>,
}

impl<'a> Env<'a> {
    pub fn new(program: &'a Program, sem: &'a Semantics, sources: &'a SourceMap) -> Env<'a> {
        // Heap-independent Viper functions called in domain axioms: `sx.fn.f(unit, args)`,
        // as in method bodies (their snapshot is the unit).
        let snap = SnapDecls::new();
        let axiom_functions: std::cell::RefCell<Vec<FunDecl>> = Default::default();
        let calls = |name: &str, args: Vec<Term>| -> Option<Term> {
            let function = program.items.iter().find_map(|item| match &item.kind {
                ItemKind::Function(f) if f.name.name == name => Some(f),
                _ => None,
            })?;
            if function
                .contract
                .requires
                .iter()
                .any(|pre| analysis::is_impure(sem, pre))
            {
                return None;
            }
            let result = match &sem.functions.get(name)?.result {
                Type::Int => Sort::Int,
                Type::Bool => Sort::Bool,
                Type::Perm => Sort::Real,
                _ => return None,
            };
            let mut sorts = vec![snap.sort.clone()];
            sorts.extend(args.iter().map(|a| a.sort().clone()));
            let decl = FunDecl::new(Symbol::user(&format!("sx.fn.{name}")), sorts, result);
            axiom_functions.borrow_mut().push(decl.clone());
            let mut full = vec![snap.unit()];
            full.extend(args);
            Some(Term::app(&decl, full))
        };
        let theories = Theories::with_functions(program, sem, &calls).ok();
        let axiom_functions = axiom_functions.into_inner();
        let ref_sort = match &theories {
            Some(t) => t.sort(&Type::Ref).unwrap_or_else(|_| Sort::named("Ref")),
            None => Sort::Uninterpreted(Symbol::user("sx.Ref")),
        };
        let (null, null_decl) = match &theories {
            Some(t) => (t.null(), None),
            None => {
                let decl = FunDecl::constant(Symbol::user("sx.null"), ref_sort.clone());
                (Term::constant(&decl), Some(decl))
            }
        };
        let mut methods = HashMap::new();
        let mut functions = HashMap::new();
        let mut predicates = HashMap::new();
        let mut opaque = HashSet::new();
        let mut reads_instances = HashSet::new();
        for item in &program.items {
            match &item.kind {
                ItemKind::Method(m) => {
                    methods.insert(m.name.name.clone(), m);
                }
                ItemKind::Function(f) => {
                    functions.insert(f.name.name.clone(), f);
                    if item.annotations.iter().any(|a| a.name.name == "opaque") {
                        opaque.insert(f.name.name.clone());
                    }
                    if f.contract
                        .requires
                        .iter()
                        .any(|pre| analysis::holds_instances(sem, pre))
                    {
                        reads_instances.insert(f.name.name.clone());
                    }
                }
                ItemKind::Predicate(p) => {
                    predicates.insert(p.name.name.clone(), p);
                }
                _ => {}
            }
        }
        Env {
            sem,
            sources,
            theories,
            snap,
            ref_sort,
            null,
            null_decl,
            methods,
            functions,
            predicates,
            opaque,
            reads_instances,
            max_branches: MAX_BRANCHES_PER_MEMBER,
            call_graph: germanium_semantics::calls::call_graph(program, sem),
            function_call_graph: germanium_semantics::calls::function_call_graph(program, sem),
            axiom_functions,
            wand_triggers: analysis::has_wand_triggers(program),
            trigger_fields: analysis::fields_in_triggers(program, sem),
            read_permissions: analysis::uses_read_permissions(program),
            combinable_wands: false,
            counterexamples: false,
            wand_predicates: analysis::wand_predicates(program, sem),
        }
    }

    /// The SMT sort of a Viper type.
    pub fn sort_of(&self, ty: &Type) -> Result<Sort, String> {
        match ty {
            Type::Int => Ok(Sort::Int),
            Type::Bool => Ok(Sort::Bool),
            Type::Perm => Ok(Sort::Real),
            Type::Ref => Ok(self.ref_sort.clone()),
            _ => match &self.theories {
                Some(t) => t.sort(ty).map_err(|u| u.0),
                None => Err(format!("values of type {ty} are not supported yet")),
            },
        }
    }

    pub fn null(&self) -> Term {
        self.null.clone()
    }
}
