//! The lowering of one member: its context (program tables, theories, the VC being built)
//! and what every rule shares: reporting a construct that is not lowered yet, building the
//! error a check reports.

use germanium_semantics::types::Type;
use germanium_semantics::Semantics;
use germanium_smt::{Sort, Term};
use germanium_syntax::ast::{Expr, Program};
use germanium_syntax::{SourceMap, Span};
use germanium_theories::Theories;
use germanium_verifier::errors::{make_error, ErrorContext, Reason};

use crate::vc::Vc;

/// A construct the lowering does not handle: the member gets `internal:feature.unsupported`
/// there and no verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    pub span: Span,
    pub what: String,
}

pub type R<T> = Result<T, Unsupported>;

pub fn unsupported<T>(span: Span, what: impl Into<String>) -> R<T> {
    Err(Unsupported {
        span,
        what: what.into(),
    })
}

/// What the program's members share while being lowered.
pub struct Tables<'a> {
    pub program: &'a Program,
    pub sem: &'a Semantics,
    pub sources: &'a SourceMap,
    pub theories: &'a Theories,
    /// Every field with the sort of its values, in declaration order.
    pub fields: Vec<(String, Sort)>,
    pub reference: Sort,
    /// The functions the VCG can frame (see `functions`).
    pub functions: std::collections::HashMap<String, crate::functions::FunctionShape<'a>>,
    /// The values of predicate instances (see `frames`).
    pub frames: crate::frames::Frames,
    pub predicates: std::collections::HashMap<String, crate::frames::PredicateShape<'a>>,
    /// The quantified permissions of predicate bodies, by node (see `body_footprints`).
    pub body_footprints: std::collections::HashMap<
        germanium_syntax::ast::NodeId,
        crate::body_footprints::BodyFootprint<'a>,
    >,
    /// The program's wand shapes, by key (see `wands`).
    pub wands: std::collections::HashMap<String, crate::wands::WandShape>,
    /// Wands are combinable wands (seed 004, `--combinable-wands`): a package's witnesses
    /// see the footprint cut down to fit their left-hand side.
    pub combinable_wands: bool,
    /// Which methods each method calls, and which functions each function applies (for
    /// recursion clusters in termination checks).
    pub call_graph: std::collections::HashMap<String, std::collections::HashSet<String>>,
    pub function_call_graph: std::collections::HashMap<String, std::collections::HashSet<String>>,
    /// Functions known to fail (`VerifyOptions::failed_functions`): no application assumes
    /// their postconditions, which may contradict their definitions.
    pub failed_functions: std::collections::HashSet<String>,
}

impl Tables<'_> {
    /// Every heap map of the state: per field (indexed by references) and per predicate
    /// (indexed by its locations, holding frames), with its index and value sorts, fields
    /// first, in a fixed order.
    pub fn maps(&self) -> Vec<(String, Sort, Sort)> {
        let mut out: Vec<(String, Sort, Sort)> = self
            .fields
            .iter()
            .map(|(f, s)| (f.clone(), self.reference.clone(), s.clone()))
            .collect();
        let mut names: Vec<&String> = self.predicates.keys().collect();
        names.sort();
        for name in names {
            let shape = &self.predicates[name];
            out.push((name.clone(), shape.index.clone(), self.frames.sort.clone()));
        }
        let mut wands: Vec<&crate::wands::WandShape> = self.wands.values().collect();
        wands.sort_by(|a, b| a.map.cmp(&b.map));
        for w in wands {
            out.push((w.map.clone(), w.index.clone(), self.frames.sort.clone()));
        }
        out
    }

    pub fn is_field(&self, name: &str) -> bool {
        self.fields.iter().any(|(f, _)| f == name)
    }
}

/// How assertions are read at a point of the lowering. A rule that changes them does so for
/// what it lowers inside (`Lower::with_modes`), and they are back as they were after it.
#[derive(Clone, Debug, Default)]
pub struct Modes {
    /// Expressions need no definedness checks (postconditions and invariants where they are
    /// exhaled, a callee's postcondition where it is inhaled: their well-formedness is
    /// checked and reported on its own, as in Carbon).
    pub lenient: bool,
    /// Every permission amount inhaled is some positive amount (a function's precondition:
    /// Viper reads its amounts as wildcards, so `acc(x.f) && acc(x.f)` is satisfiable there).
    pub wildcard_amounts: bool,
    /// Amounts of `acc` are multiplied by this (the body of an instance folded or unfolded
    /// with an amount).
    pub scale: Option<Term>,
    /// An inhaled location not held before gets a value of its own (an unfolded body: its
    /// values are the instance's, whatever the heap said where nothing was held).
    pub fresh_on_inhale: bool,
    /// How many instance bodies are being opened inside each other (an `unfolding` in a
    /// recursive predicate's body would open bodies forever).
    pub opening_depth: usize,
    /// Every amount taken is some positive amount less than what is held (the body of a
    /// `fold acc(P(..), wildcard)`).
    pub wildcard_take: bool,
    /// Inhaling reads the exhale parts of `[a, b]` (to check they are well-formed).
    pub exhale_parts: bool,
    /// A postcondition is being assumed where its function is applied.
    pub assuming_postcondition: bool,
    /// A function's precondition is being read where it is applied: as in the function,
    /// an `unfolding` needs only some positive amount of its instance.
    pub function_reads: bool,
    /// Inside a quantifier of a definitional axiom: every application is of the limited
    /// twin (a trigger must match the limited applications that definitions unroll to).
    pub all_limited: bool,
    /// The application `@reveal()` names (an opaque function's definition holds there).
    pub revealing: Option<germanium_syntax::ast::NodeId>,
    /// The receivers and arguments of the resources of an assertion may also read what
    /// this memory holds in these maps (a wand's right-hand side being checked
    /// well-formed: its left-hand side frames them).
    pub receivers_in: Option<(crate::state::Memory, Vec<String>)>,
    /// A wand is being checked well-formed: `asserting` is read, not checked (it is checked
    /// where the wand is packaged or applied).
    pub wand_wellformedness: bool,
    /// Inside a quantifier (or `forperm`, `quasihavocall`): fresh constants stand for its
    /// variables until the body is closed, so no definition may name a value here.
    pub binding: bool,
    /// These expressions stand for the given terms (the parts of a quantified footprint
    /// that do not depend on its variables, where its axioms are stated over them).
    pub overrides:
        Option<std::rc::Rc<std::collections::HashMap<germanium_syntax::ast::NodeId, Term>>>,
    /// A location the snapshot does not name is read in the state's heap (an `unfolding`
    /// inside a quantifier, read from its instance's frame: see `closed_unfolding`).
    pub snapshot_falls_back: bool,
}

/// One member being lowered.
pub struct Lower<'t, 'a> {
    pub t: &'t Tables<'a>,
    pub vc: Vc,
    /// The permission maps `perm(..)` reads during an exhale: what is left at that point.
    pub perm_masks: Option<std::collections::BTreeMap<String, Term>>,
    /// `result` in a function's postcondition.
    pub result: Option<Term>,
    /// In a function's axioms: the footprint's locations (field, receiver) and their values,
    /// where every read must be found.
    pub snapshot: Option<Vec<crate::snapshots::Snapshot>>,
    /// Inside the definitional axiom of this function: applications of its recursion
    /// cluster are of the limited twins (so the definition does not unroll itself); others
    /// are full, as their definitions unroll only as far as the call graph goes.
    pub limited: Option<String>,
    /// The function being verified: its recursive applications, and those of abstract
    /// functions, get their postconditions assumed where applied (no axioms exist yet).
    pub verifying_function: Option<String>,
    /// How assertions are read where this point is lowered (see `Modes`).
    pub modes: Modes,
    /// The states of `goto`s whose label is still ahead, by label.
    pub pending_jumps: std::collections::HashMap<String, Vec<crate::state::State>>,
    /// The labels passed so far (a `goto` to one of them jumps back).
    pub labels_passed: std::collections::HashSet<String>,
    /// The member whose termination is being proved, with its measures (see
    /// `termination`).
    pub caller: Option<crate::termination::Caller>,
    /// The member has predicate instances as measures: unfolds record which instances are
    /// nested in which (see `termination`).
    pub nests_instances: bool,
    /// The termination checks from here on are not yet assumed by the path (see
    /// `termination`).
    pub terminated_from: usize,
    /// The definedness facts of the statement being lowered so far, each under its guard:
    /// checked ones, and where reads are lenient the preconditions of applications (their
    /// well-formedness is checked on its own). Every check is asked where they hold: as in
    /// Viper, an ill-defined expression ends its path, so an assertion that is not defined
    /// is reported once, as ill-defined.
    pub defined_facts: Vec<Term>,
    /// Facts that hold only after the point where they were made (a postcondition assumed
    /// where its function is applied, in the order of the lowering, as Viper's symbolic
    /// order has it): each is guarded by a constant here, which every later check assumes.
    pub activations: Vec<Term>,
    /// The packages being lowered, innermost last (see `package`).
    pub packages: Vec<crate::package::PackageFrame>,
    /// The wand shapes checked well-formed so far (each is reported once per member).
    pub wands_checked: std::collections::HashSet<String>,
    /// What `rd` is here: the method's own, or a call's or loop's (see
    /// `read_permissions`).
    pub read_amount: Option<Term>,
    /// While a function's axioms are made: the `held` facts of the applications its body
    /// makes, each under its guard (see `FunctionShape::held`).
    pub held_applications: Option<Vec<Term>>,
}

impl<'t, 'a> Lower<'t, 'a> {
    pub fn new(t: &'t Tables<'a>, names: germanium_smt::NameGenerator) -> Self {
        Lower {
            t,
            vc: Vc::continuing(names),
            perm_masks: None,
            result: None,
            snapshot: None,
            limited: None,
            verifying_function: None,
            held_applications: None,
            modes: Modes::default(),
            pending_jumps: Default::default(),
            labels_passed: Default::default(),
            caller: None,
            nests_instances: false,
            terminated_from: 0,
            defined_facts: Vec::new(),
            activations: Vec::new(),
            packages: Vec::new(),
            wands_checked: Default::default(),
            read_amount: None,
        }
    }

    /// `fact` must hold where `reach` holds; else `reason` about `offending` in `ctx`. A false
    /// assertion is assumed after its check; so is a negative index, whose length check
    /// still says something, and an amount to fold or unfold that is not positive, where
    /// the permission held is checked too; any other failure ends the path (see
    /// `Check::cutting`).
    pub fn check(
        &mut self,
        reach: &Term,
        fact: Term,
        ctx: &ErrorContext,
        reason: Reason,
        offending: &Expr,
    ) {
        let cutting = !matches!(
            reason,
            Reason::AssertionFalse
                | Reason::SeqIndexNegative(_)
                | Reason::NotPositive
                | Reason::NotInjective
        );
        self.record(reach, fact, ctx, reason, offending, cutting);
    }

    /// A check whose failure ends its path whatever the reason (a function's precondition
    /// where it is applied: the expression around it is not defined then).
    pub fn check_ending_path(
        &mut self,
        reach: &Term,
        fact: Term,
        ctx: &ErrorContext,
        reason: Reason,
        offending: &Expr,
    ) {
        self.record(reach, fact, ctx, reason, offending, true);
    }

    fn record(
        &mut self,
        reach: &Term,
        fact: Term,
        ctx: &ErrorContext,
        reason: Reason,
        offending: &Expr,
        cutting: bool,
    ) {
        let error = make_error(self.t.sources, ctx, &reason, offending).into_diagnostic();
        let under = self.assumable();
        self.vc.check_under(reach, under, fact, error, cutting);
    }

    /// What a check made now may assume besides its path: the definedness facts of its
    /// statement and the facts activated before it.
    pub fn assumable(&self) -> Term {
        Term::and(self.defined_facts.iter().chain(&self.activations).cloned())
    }

    /// `refute`: an error unless `fact` can be false where `reach` holds.
    pub fn refutation(&mut self, reach: &Term, fact: Term, ctx: &ErrorContext, offending: &Expr) {
        let error = make_error(self.t.sources, ctx, &Reason::RefutationTrue, offending);
        self.vc
            .refutations
            .push((reach.clone(), fact, error.into_diagnostic()));
    }

    /// The local variable an identifier expression names.
    pub fn variable(&self, e: &Expr) -> R<germanium_semantics::VarId> {
        match self.t.sem.idents.get(e.id.0 as usize).copied().flatten() {
            Some(v) => Ok(v),
            None => unsupported(e.span, "this variable"),
        }
    }

    /// A definedness check of an expression (none where reads are lenient: there the
    /// expression's well-formedness is checked on its own).
    pub fn defined(
        &mut self,
        guard: &Term,
        fact: Term,
        ctx: &ErrorContext,
        reason: Reason,
        offending: &Expr,
    ) {
        // Where reads are lenient a read's definedness is not assumed either: as in Viper, an
        // assertion reading what is not held is reported both ill-formed and false.
        if !self.modes.lenient {
            self.check(guard, fact.clone(), ctx, reason, offending);
            self.defined_facts.push(Term::implies(guard.clone(), fact));
        }
    }

    /// `f` with `entries` as the snapshot reads are found in (see `snapshot`), the one before
    /// back afterwards, whatever `f` returns.
    pub fn with_snapshot<T>(
        &mut self,
        entries: Vec<crate::snapshots::Snapshot>,
        f: impl FnOnce(&mut Self) -> R<T>,
    ) -> R<T> {
        let outer = self.snapshot.replace(entries);
        let r = f(self);
        self.snapshot = outer;
        r
    }

    /// Runs `f` with the modes `set` makes, restoring them whatever it returns.
    pub fn with_modes<T>(
        &mut self,
        set: impl FnOnce(&mut Modes),
        f: impl FnOnce(&mut Self) -> R<T>,
    ) -> R<T> {
        let before = self.modes.clone();
        let facts = self.defined_facts.len();
        set(&mut self.modes);
        let entered_lenient = self.modes.lenient && !before.lenient;
        let r = f(self);
        // Leaving lenient reads: their unchecked facts speak of what was read there only.
        if entered_lenient {
            self.defined_facts.truncate(facts);
        }
        self.modes = before;
        r
    }

    /// Runs `f` on a path of its own from `from` (see `Vc::branch_off`); the definedness
    /// facts it checks there say nothing of the path it left.
    pub fn side_path<T>(&mut self, from: &Term, f: impl FnOnce(&mut Self, Term) -> R<T>) -> R<T> {
        let saved = self.defined_facts.clone();
        let reach = self.vc.branch_off(from);
        let r = f(self, reach);
        self.defined_facts = saved;
        r
    }

    /// As `side_path`, but the new path comes after `after` (another side path from the
    /// same point, whose facts it does not assume): a failure there that ends its path is
    /// the one reported.
    pub fn side_path_after<T>(
        &mut self,
        from: &Term,
        after: &Term,
        f: impl FnOnce(&mut Self, Term) -> R<T>,
    ) -> R<T> {
        let saved = self.defined_facts.clone();
        let reach = self.vc.branch_off_after(from, after);
        let r = f(self, reach);
        self.defined_facts = saved;
        r
    }

    /// Runs `f` with lenient reads (see `Modes::lenient`).
    pub fn leniently<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        self.with_modes(|m| m.lenient = true, f)
    }

    /// `a * b` of two amounts. With a numeral among them the product is linear; else it is
    /// `vcg%mul(a, b)`, a function with what the VCG needs to know of products (positive
    /// times positive is positive, one and zero): a product of two unknowns would make the
    /// solver's arithmetic incomplete (`unknown`) where a linear argument suffices. True of
    /// multiplication, these facts prove nothing multiplication would not.
    pub fn product(&mut self, a: Term, b: Term) -> Term {
        if is_numeral(&a) || is_numeral(&b) {
            return Term::mul(vec![a, b]);
        }
        let product = Term::app(&product_decl(), vec![a.clone(), b.clone()]);
        let (zero, one) = (Term::real(0, 1), Term::real(1, 1));
        let positive = Term::and([
            Term::gt(a.clone(), zero.clone()),
            Term::gt(b.clone(), zero.clone()),
        ]);
        let facts = [
            Term::implies(positive, Term::gt(product.clone(), zero.clone())),
            Term::implies(
                Term::eq(a.clone(), one.clone()),
                Term::eq(product.clone(), b.clone()),
            ),
            Term::implies(
                Term::eq(b.clone(), one),
                Term::eq(product.clone(), a.clone()),
            ),
            Term::implies(
                Term::or([Term::eq(a, zero.clone()), Term::eq(b, zero.clone())]),
                Term::eq(product.clone(), zero),
            ),
        ];
        self.vc.fact(Term::and(facts));
        product
    }

    /// `wildcard`: some positive amount, chosen where it is used.
    pub fn some_amount(&mut self) -> Term {
        let w = self.vc.fresh("wildcard", Sort::Real);
        self.vc.witness_value(&w);
        self.vc.fact(Term::gt(w.clone(), Term::real(0, 1)));
        w
    }

    pub fn type_of(&self, e: &Expr) -> R<Type> {
        match self.t.sem.type_of(e.id) {
            Some(t) if t.is_ground() => Ok(t.clone()),
            _ => unsupported(e.span, "an expression whose type is not known"),
        }
    }

    pub fn sort(&self, ty: &Type, span: Span) -> R<Sort> {
        self.t.theories.sort(ty).or_else(|u| unsupported(span, u.0))
    }
}

/// The function products of two unknown amounts are (see `Lower::product`).
pub fn product_decl() -> germanium_smt::FunDecl {
    germanium_smt::FunDecl::new(
        germanium_smt::Symbol::user("vcg%mul"),
        vec![Sort::Real, Sort::Real],
        Sort::Real,
    )
}

/// A term of numerals and arithmetic only.
fn is_numeral(t: &Term) -> bool {
    match t.kind() {
        germanium_smt::TermKind::Int(_) | germanium_smt::TermKind::Real(_) => true,
        germanium_smt::TermKind::Op(_, args) => args.iter().all(is_numeral),
        _ => false,
    }
}
