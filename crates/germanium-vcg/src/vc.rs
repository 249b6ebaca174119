//! The verification condition of one member in passive form: fresh constants with their
//! defining facts (asserted as they are: every constant is new, so a definition constrains
//! nothing else), and the checks, each "where it is reached, this holds". The solver is
//! asked once whether some check fails; the checks a model shows false are reported and
//! left out, and the question is asked again about the others until none fails. A check
//! that comes after another on its path is asked under it (the path assumes what it
//! checked), so one failure does not drag the checks after it along.

use germanium_smt::{FunDecl, NameGenerator, Sort, Symbol, Term, TermKind};
use germanium_syntax::Diagnostic;

/// One check: where `reach` holds, `fact` must hold, else `error`.
#[derive(Clone, Debug)]
pub struct Check {
    /// Names the check in the query: true exactly where the check holds.
    pub label: FunDecl,
    pub reach: Term,
    /// What the check may assume besides its path (the definedness of what it reads,
    /// checked before it).
    pub under: Term,
    pub fact: Term,
    pub error: Diagnostic,
    /// A failure of this check ends its path (a missing permission, an ill-defined
    /// expression), as in Viper: the checks after it on the path are not reported. A false
    /// assertion does not (the path goes on assuming it).
    pub cutting: bool,
}

/// How a path condition was made from others.
#[derive(Clone, Debug)]
enum ReachDef {
    /// `parent && fact`
    Within(Term, Term),
    /// `a || b` (where two branches meet)
    Either(Term, Term),
}

impl Check {
    /// What the check says: where it is reached (and what it may assume holds), its fact.
    pub fn holds(&self) -> Term {
        Term::implies(
            Term::and([self.reach.clone(), self.under.clone()]),
            self.fact.clone(),
        )
    }
}

/// The member's constants, definitions and checks, in the order they were made.
#[derive(Debug, Default)]
pub struct Vc {
    names: NameGenerator,
    pub decls: Vec<FunDecl>,
    pub facts: Vec<Term>,
    pub checks: Vec<Check>,
    /// `refute`s: where `reach` holds, `fact` must be possibly false, else the error.
    pub refutations: Vec<(Term, Term, Diagnostic)>,
    reaches: std::collections::HashMap<Term, ReachDef>,
    /// The packages being lowered, innermost last (see `Region`).
    regions: Vec<Region>,
    /// See `passes`.
    passes_memo:
        std::cell::RefCell<std::collections::HashMap<Term, std::collections::HashMap<Term, bool>>>,
}

/// What a package's witnesses are made of: the constants and facts made since it began.
/// The witnesses' own values (`seeds`: what the locations they hold have, amounts left
/// open) differ from one witness to another, and so may whatever is defined from
/// them; a term naming none of these is the same for every witness.
#[derive(Debug, Default)]
struct Region {
    decls_from: usize,
    facts_from: usize,
    seeds: std::collections::HashSet<Symbol>,
    /// Which facts of the region define a constant (`define`): index to constant.
    definitions: std::collections::HashMap<usize, Symbol>,
    /// Facts about what is chosen once for all witnesses (`fact_outside`).
    outside: std::collections::HashSet<usize>,
}

/// How many points of the paths `passes` may look at in one member.
const PASSES_WORK: usize = 2_000_000;

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

    /// A fact about something chosen once for every witness of the innermost package (its
    /// footprint), true of each: it ties nothing to the witness it names.
    pub fn fact_outside(&mut self, fact: Term) {
        if let Some(region) = self.regions.last_mut() {
            region.outside.insert(self.facts.len());
        }
        self.facts.push(fact);
    }

    /// Marks `t` (a fresh constant) as a value of the witnesses of the innermost package
    /// if there is one: a value a location gets where they hold it, an amount left open.
    pub fn witness_value(&mut self, t: &Term) {
        if let (Some(region), TermKind::App(f, _)) = (self.regions.last_mut(), t.kind()) {
            region.seeds.insert(f.name().clone());
        }
    }

    /// Starts recording a package's witnesses (see `Region`).
    pub fn begin_region(&mut self) {
        self.regions.push(Region {
            decls_from: self.decls.len(),
            facts_from: self.facts.len(),
            ..Region::default()
        });
    }

    pub fn end_region(&mut self) {
        self.regions.pop();
    }

    /// Whether `t` may differ between the witnesses of the innermost package: whether it
    /// names a seed or a constant or function the region's facts tie to one (a definition
    /// ties its constant to what defines it; any other fact ties all it names).
    /// The region's facts are walked once for all of `terms` (this is asked at every
    /// extraction).
    pub fn witness_dependent(&self, terms: &[&Term]) -> bool {
        let Some(region) = self.regions.last() else {
            return false;
        };
        let made: Vec<Symbol> = self.decls[region.decls_from..]
            .iter()
            .map(|d| d.name().clone())
            .collect();
        let mut tainted = region.seeds.clone();
        loop {
            let before = tainted.len();
            for (i, fact) in self.facts[region.facts_from..].iter().enumerate() {
                if region.outside.contains(&(i + region.facts_from)) || !fact.applies_any(&tainted)
                {
                    continue;
                }
                match region.definitions.get(&(i + region.facts_from)) {
                    Some(defined) => {
                        tainted.insert(defined.clone());
                    }
                    None => {
                        for name in &made {
                            if !tainted.contains(name) && fact.applies_any(&single(name)) {
                                tainted.insert(name.clone());
                            }
                        }
                    }
                }
            }
            if tainted.len() == before {
                break;
            }
        }
        terms.iter().any(|t| t.applies_any(&tainted))
    }

    /// `t` of another witness: the innermost region's constants and facts made again under
    /// fresh names (facts there only define the constants made with them, so the copy
    /// constrains nothing else). `None` where the region declared functions: their facts
    /// would speak of the same symbols twice.
    pub fn another_witness(&mut self, t: &Term) -> Option<Term> {
        let region = self.regions.last()?;
        let (decls_from, facts_from) = (region.decls_from, region.facts_from);
        if self.decls[decls_from..]
            .iter()
            .any(|d| !d.args().is_empty())
        {
            return None;
        }
        let mut renamed = std::collections::HashMap::new();
        let originals: Vec<FunDecl> = self.decls[decls_from..].to_vec();
        for d in originals {
            let copy = self.fresh("another", d.result().clone());
            renamed.insert(Term::constant(&d), copy);
        }
        let facts: Vec<Term> = self.facts[facts_from..]
            .iter()
            .map(|f| germanium_smt::substitute(f, &renamed))
            .collect();
        self.facts.extend(facts);
        Some(germanium_smt::substitute(t, &renamed))
    }

    /// A fresh name (of a function the caller declares in `decls`).
    pub fn fresh_name(&mut self, base: &str) -> germanium_smt::Symbol {
        self.names.fresh(base)
    }

    /// A fresh constant equal to `value` (values stay small however long the path).
    pub fn define(&mut self, base: &str, value: Term) -> Term {
        if is_atomic(&value) {
            return value;
        }
        let c = self.fresh(base, value.sort().clone());
        if let (Some(region), TermKind::App(f, _)) = (self.regions.last_mut(), c.kind()) {
            region
                .definitions
                .insert(self.facts.len(), f.name().clone());
        }
        self.facts.push(Term::eq(c.clone(), value));
        c
    }

    /// A fact about fresh constants (their definitions; never a path's assumption).
    pub fn fact(&mut self, fact: Term) {
        self.facts.push(fact);
    }

    /// `fact` must hold where `reach` and `under` hold; `cutting`: see [`Check::cutting`].
    pub fn check_under(
        &mut self,
        reach: &Term,
        under: Term,
        fact: Term,
        error: Diagnostic,
        cutting: bool,
    ) {
        if fact == Term::tt() || *reach == Term::ff() || under == Term::ff() {
            return;
        }
        let label = FunDecl::constant(self.names.fresh("check"), Sort::Bool);
        self.checks.push(Check {
            label,
            reach: reach.clone(),
            under,
            fact,
            error,
            cutting,
        });
    }

    /// The path condition `reach` extended by `fact`, as a fresh name.
    pub fn assume(&mut self, reach: &Term, fact: Term) -> Term {
        if fact == Term::tt() {
            return reach.clone();
        }
        let r = self.define("reach", Term::and([reach.clone(), fact.clone()]));
        self.reaches
            .insert(r.clone(), ReachDef::Within(reach.clone(), fact));
        r
    }

    /// A path of its own from `reach` (a side check: what fails on it ends no other path).
    pub fn branch_off(&mut self, reach: &Term) -> Term {
        let r = self.fresh("reach", germanium_smt::Sort::Bool);
        self.facts.push(Term::eq(r.clone(), reach.clone()));
        self.reaches
            .insert(r.clone(), ReachDef::Within(reach.clone(), Term::tt()));
        r
    }

    /// A path of its own from `reach` whose checks come after those of `after` (see
    /// `side_path_after`): equal to `reach`, placed after `after` for `passes`.
    pub fn branch_off_after(&mut self, reach: &Term, after: &Term) -> Term {
        let r = self.fresh("reach", germanium_smt::Sort::Bool);
        self.facts.push(Term::eq(r.clone(), reach.clone()));
        self.reaches
            .insert(r.clone(), ReachDef::Within(after.clone(), Term::tt()));
        r
    }

    /// Where either of two paths that meet is reached.
    pub fn either(&mut self, a: &Term, b: &Term) -> Term {
        let r = self.define("reach", Term::or([a.clone(), b.clone()]));
        self.reaches
            .insert(r.clone(), ReachDef::Either(a.clone(), b.clone()));
        r
    }

    /// Whether every path reaching `later` passes `earlier`: each conjunct of `earlier` is a
    /// path condition or an assumed fact on every way back from `later`.
    /// The answers are kept per conjunct (the same cut is asked about for every later
    /// failure); past `PASSES_WORK` points known, the answer is "no" (an error reported
    /// that a cut might have hidden: never a missed one).
    pub fn passes(&self, later: &Term, earlier: &Term) -> bool {
        let mut memos = self.passes_memo.borrow_mut();
        conjuncts(earlier).iter().all(|part| {
            let known: usize = memos.values().map(|m| m.len()).sum();
            let memo = memos.entry(part.clone()).or_default();
            self.implied_on_path(later, part, memo, PASSES_WORK.saturating_sub(known))
        })
    }

    fn implied_on_path(
        &self,
        from: &Term,
        part: &Term,
        memo: &mut std::collections::HashMap<Term, bool>,
        budget: usize,
    ) -> bool {
        let mut work = 0usize;
        // An explicit stack, each point answered once its predecessors are: paths are long
        // and joins follow each other, too deep for recursion.
        let mut stack = vec![from.clone()];
        while let Some(at) = stack.last().cloned() {
            if memo.contains_key(&at) {
                stack.pop();
                continue;
            }
            work += 1;
            if work > budget {
                return false;
            }
            let step = self.step(&at, part);
            let pending: Vec<Term> = match &step {
                Step::Known(_) => Vec::new(),
                Step::All(next) | Step::Any(next) => next
                    .iter()
                    .filter(|t| !memo.contains_key(*t))
                    .cloned()
                    .collect(),
            };
            if !pending.is_empty() {
                stack.extend(pending);
                continue;
            }
            let answer = match step {
                Step::Known(b) => b,
                Step::All(next) => next.iter().all(|t| memo[t]),
                Step::Any(next) => next.iter().any(|t| memo[t]),
            };
            memo.insert(at, answer);
            stack.pop();
        }
        memo[from]
    }

    /// How whether `part` holds at `at` is decided: known, or from the points before it.
    fn step(&self, at: &Term, part: &Term) -> Step {
        if at == part {
            return Step::Known(true);
        }
        match self.reaches.get(at) {
            Some(ReachDef::Within(parent, fact)) => {
                if conjuncts(fact).contains(part) {
                    Step::Known(true)
                } else {
                    Step::All(vec![parent.clone()])
                }
            }
            Some(ReachDef::Either(a, b)) => Step::All(vec![a.clone(), b.clone()]),
            None => {
                let parts = conjuncts(at);
                if parts.len() > 1 {
                    Step::Any(parts)
                } else {
                    Step::Known(false)
                }
            }
        }
    }
}

/// See `Vc::step`.
enum Step {
    Known(bool),
    /// Holds if it holds at all of these.
    All(Vec<Term>),
    /// Holds if it holds at one of these.
    Any(Vec<Term>),
}

fn single(name: &Symbol) -> std::collections::HashSet<Symbol> {
    std::iter::once(name.clone()).collect()
}

/// A literal or a constant: naming it again would gain nothing.
fn is_atomic(t: &Term) -> bool {
    match t.kind() {
        TermKind::Bool(_) | TermKind::Int(_) | TermKind::Real(_) | TermKind::Var(_) => true,
        TermKind::App(_, args) => args.is_empty(),
        _ => false,
    }
}

/// The conjuncts of a conjunction, or the term itself.
fn conjuncts(t: &Term) -> Vec<Term> {
    match t.kind() {
        TermKind::Op(germanium_smt::Op::And, parts) => parts.iter().flat_map(conjuncts).collect(),
        _ => vec![t.clone()],
    }
}
