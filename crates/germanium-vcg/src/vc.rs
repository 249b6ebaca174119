//! The verification condition of one member in passive form: fresh constants with their
//! defining facts (asserted as they are: every constant is new, so a definition constrains
//! nothing else), and the checks, each "where it is reached, this holds". The solver is
//! asked once whether some check fails; the checks a model shows false are reported and
//! left out, and the question is asked again about the others until none fails. A check
//! that comes after another on its path is asked under it (the path assumes what it
//! checked), so one failure does not drag the checks after it along.

use germanium_smt::{FunDecl, NameGenerator, Sort, Term, TermKind};
use germanium_syntax::Diagnostic;

/// One check: where `reach` holds, `fact` must hold, else `error`.
#[derive(Clone, Debug)]
pub struct Check {
    /// Names the check in the query: true exactly where the check holds.
    pub label: FunDecl,
    pub reach: Term,
    pub fact: Term,
    pub error: Diagnostic,
    /// The definedness checks of the expression this one checks: where one of them failed,
    /// this one is not reported (as Viper reports only the first).
    pub depends_on: Vec<usize>,
}

/// The member's constants, definitions and checks, in the order they were made.
#[derive(Debug, Default)]
pub struct Vc {
    names: NameGenerator,
    pub decls: Vec<FunDecl>,
    pub facts: Vec<Term>,
    pub checks: Vec<Check>,
}

impl Vc {
    /// A VC whose fresh names continue `names` (declarations outlive a solver scope, so
    /// names are unique in the whole session).
    pub fn continuing(names: NameGenerator) -> Vc {
        Vc {
            names,
            ..Vc::default()
        }
    }

    /// The names given so far, for the next member.
    pub fn names(&self) -> NameGenerator {
        self.names.clone()
    }

    /// A fresh constant of `sort`.
    pub fn fresh(&mut self, base: &str, sort: Sort) -> Term {
        let decl = FunDecl::constant(self.names.fresh(base), sort);
        let t = Term::constant(&decl);
        self.decls.push(decl);
        t
    }

    /// A fresh constant equal to `value` (values stay small however long the path).
    pub fn define(&mut self, base: &str, value: Term) -> Term {
        if is_atomic(&value) {
            return value;
        }
        let c = self.fresh(base, value.sort().clone());
        self.facts.push(Term::eq(c.clone(), value));
        c
    }

    /// A fact about fresh constants (their definitions; never a path's assumption).
    pub fn fact(&mut self, fact: Term) {
        self.facts.push(fact);
    }

    /// `fact` must hold where `reach` holds.
    pub fn check(&mut self, reach: &Term, fact: Term, error: Diagnostic) {
        if fact == Term::tt() || *reach == Term::ff() {
            return;
        }
        let label = FunDecl::constant(self.names.fresh("check"), Sort::Bool);
        self.checks.push(Check {
            label,
            reach: reach.clone(),
            fact,
            error,
            depends_on: Vec::new(),
        });
    }

    /// Makes the last check depend on the checks from `first` on (made while evaluating
    /// what it checks).
    pub fn last_depends_on_checks_from(&mut self, first: usize) {
        let end = self.checks.len().saturating_sub(1);
        if let Some(last) = self.checks.last_mut() {
            last.depends_on = (first..end).collect();
        }
    }

    /// The path condition `reach` extended by `fact`, as a fresh name.
    pub fn assume(&mut self, reach: &Term, fact: Term) -> Term {
        if fact == Term::tt() {
            return reach.clone();
        }
        self.define("reach", Term::and([reach.clone(), fact]))
    }
}

/// A literal or a constant: naming it again would gain nothing.
fn is_atomic(t: &Term) -> bool {
    match t.kind() {
        TermKind::Bool(_) | TermKind::Int(_) | TermKind::Real(_) | TermKind::Var(_) => true,
        TermKind::App(_, args) => args.is_empty(),
        _ => false,
    }
}
