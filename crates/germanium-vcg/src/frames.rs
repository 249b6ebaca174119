//! The SMT vocabulary of predicate instances: one location sort per predicate, whose
//! locations `loc%P(args)` are distinct for distinct arguments, and *frames*, the values a
//! predicate instance's heap location holds: a tree of pairs recording what its body held
//! when it was folded (a field's value, a nested instance's frame, nothing for a pure part).
//! Two frames built from the same values are equal, so an instance unfolded and folded again
//! unchanged keeps its frame, and a function of the frame keeps its value.

use std::collections::BTreeMap;

use germanium_smt::{Command, FunDecl, Sort, Symbol, Term};

use crate::lower::Tables;

/// The frame sort and its constructors and selectors.
#[derive(Clone, Debug)]
pub struct Frames {
    pub sort: Sort,
    sort_name: Symbol,
    pub empty: FunDecl,
    pub pair: FunDecl,
    pub first: FunDecl,
    pub second: FunDecl,
    /// Per field: a value into a frame, and back.
    pub value: BTreeMap<String, (FunDecl, FunDecl)>,
    /// Per field: the value a function's footprint has where a conditional location is not
    /// in it.
    pub unheld: BTreeMap<String, FunDecl>,
}

impl Frames {
    pub fn new(fields: &[(String, Sort)]) -> Frames {
        let sort_name = Symbol::user("vcg%Frame");
        let sort = Sort::Uninterpreted(sort_name.clone());
        let f = |name: &str, args: Vec<Sort>, result: Sort| {
            FunDecl::new(Symbol::user(name), args, result)
        };
        let value = fields
            .iter()
            .map(|(name, s)| {
                let into = f(&format!("vcg%frame%{name}"), vec![s.clone()], sort.clone());
                let out = f(&format!("vcg%value%{name}"), vec![sort.clone()], s.clone());
                (name.clone(), (into, out))
            })
            .collect();
        let unheld = fields
            .iter()
            .map(|(name, s)| {
                let c = FunDecl::constant(Symbol::user(&format!("vcg%unheld%{name}")), s.clone());
                (name.clone(), c)
            })
            .collect();
        Frames {
            unheld,
            empty: f("vcg%frame%empty", vec![], sort.clone()),
            pair: f(
                "vcg%frame%pair",
                vec![sort.clone(), sort.clone()],
                sort.clone(),
            ),
            first: f("vcg%frame%first", vec![sort.clone()], sort.clone()),
            second: f("vcg%frame%second", vec![sort.clone()], sort.clone()),
            value,
            sort,
            sort_name,
        }
    }

    pub fn pair(&self, a: Term, b: Term) -> Term {
        Term::app(&self.pair, vec![a, b])
    }

    pub fn first(&self, t: Term) -> Term {
        Term::app(&self.first, vec![t])
    }

    pub fn second(&self, t: Term) -> Term {
        Term::app(&self.second, vec![t])
    }

    pub fn empty(&self) -> Term {
        Term::app(&self.empty, vec![])
    }

    /// The frame holding the value of `field`.
    pub fn of_value(&self, field: &str, v: Term) -> Option<Term> {
        self.value
            .get(field)
            .map(|(into, _)| Term::app(into, vec![v]))
    }

    /// The value of a footprint's location of `map` (a field or a predicate) not held.
    pub fn unheld(&self, map: &str) -> Option<Term> {
        match self.unheld.get(map) {
            Some(c) => Some(Term::constant(c)),
            None if !self.value.contains_key(map) => Some(self.empty()),
            None => None,
        }
    }

    /// The value of `field` a frame holds.
    pub fn value_in(&self, field: &str, frame: Term) -> Option<Term> {
        self.value
            .get(field)
            .map(|(_, out)| Term::app(out, vec![frame]))
    }

    /// Declarations and axioms: the selectors undo the pair, a value comes back out.
    fn commands(&self, out: &mut Vec<Command>) {
        out.push(Command::DeclareSort(self.sort_name.clone()));
        for d in [&self.empty, &self.pair, &self.first, &self.second] {
            out.push(Command::DeclareFun(d.clone()));
        }
        let (a, b) = (Symbol::user("a"), Symbol::user("b"));
        let (ta, tb) = (
            Term::var(a.clone(), self.sort.clone()),
            Term::var(b.clone(), self.sort.clone()),
        );
        let pair = self.pair(ta.clone(), tb.clone());
        out.push(Command::assert(Term::forall(
            vec![(a, self.sort.clone()), (b, self.sort.clone())],
            Term::and([
                Term::eq(self.first(pair.clone()), ta),
                Term::eq(self.second(pair.clone()), tb),
            ]),
            vec![vec![pair]],
        )));
        for c in self.unheld.values() {
            out.push(Command::DeclareFun(c.clone()));
        }
        for (into, back) in self.value.values() {
            out.push(Command::DeclareFun(into.clone()));
            out.push(Command::DeclareFun(back.clone()));
            let v = Symbol::user("v");
            let sort = into.args()[0].clone();
            let tv = Term::var(v.clone(), sort.clone());
            let framed = Term::app(into, vec![tv.clone()]);
            out.push(Command::assert(Term::forall(
                vec![(v, sort)],
                Term::eq(Term::app(back, vec![framed.clone()]), tv),
                vec![vec![framed]],
            )));
        }
    }
}

/// What the VCG knows of one predicate.
#[derive(Clone, Debug)]
pub struct PredicateShape<'a> {
    pub predicate: &'a germanium_syntax::ast::Predicate,
    pub params: Vec<germanium_semantics::VarId>,
    /// The sort of its locations.
    pub index: Sort,
    index_name: Symbol,
    /// `loc%P(args)`.
    pub location: FunDecl,
    /// The arguments back from a location (so distinct arguments give distinct locations).
    pub arguments: Vec<FunDecl>,
    /// `unfolded%P(frame)`: the program unfolded or folded an instance with this frame. The
    /// definitions of functions over the instance unroll once more there (seed 002's
    /// second trigger set).
    pub unfolded: FunDecl,
    /// `instance%P(loc)`: the instance as a `PredicateInstance` termination measure (where
    /// the program has that library type).
    pub instance: Option<FunDecl>,
}

impl PredicateShape<'_> {
    pub fn location(&self, args: Vec<Term>) -> Term {
        Term::app(&self.location, args)
    }
}

/// The program's predicates whose parameters have sorts.
pub fn shapes<'a>(
    t: &Tables<'a>,
    frames: &Frames,
) -> std::collections::HashMap<String, PredicateShape<'a>> {
    let mut out = std::collections::HashMap::new();
    for item in &t.program.items {
        let germanium_syntax::ast::ItemKind::Predicate(p) = &item.kind else {
            continue;
        };
        let Some(info) = t.sem.predicates.get(&p.name.name) else {
            continue;
        };
        let sorts: Result<Vec<Sort>, _> = info
            .params
            .iter()
            .map(|v| t.theories.sort(&t.sem.var(*v).ty))
            .collect();
        let Ok(sorts) = sorts else { continue };
        let name = &p.name.name;
        let index_name = Symbol::user(&format!("vcg%Loc%{name}"));
        let index = Sort::Uninterpreted(index_name.clone());
        let location = FunDecl::new(
            Symbol::user(&format!("vcg%loc%{name}")),
            sorts.clone(),
            index.clone(),
        );
        let arguments = sorts
            .iter()
            .enumerate()
            .map(|(i, s)| {
                FunDecl::new(
                    Symbol::user(&format!("vcg%arg{i}%{name}")),
                    vec![index.clone()],
                    s.clone(),
                )
            })
            .collect();
        let unfolded = FunDecl::new(
            Symbol::user(&format!("vcg%unfolded%{name}")),
            vec![frames.sort.clone()],
            Sort::Bool,
        );
        let measure_type = germanium_semantics::Type::Domain("PredicateInstance".into(), vec![]);
        let instance = t.theories.sort(&measure_type).ok().map(|sort| {
            FunDecl::new(
                Symbol::user(&format!("vcg%instance%{name}")),
                vec![index.clone()],
                sort,
            )
        });
        out.insert(
            name.clone(),
            PredicateShape {
                instance,
                predicate: p,
                params: info.params.clone(),
                index,
                index_name,
                location,
                arguments,
                unfolded,
            },
        );
    }
    out
}

/// Everything the solver must know of frames and predicate locations.
pub fn commands(t: &Tables<'_>) -> Vec<Command> {
    let mut out = Vec::new();
    t.frames.commands(&mut out);
    let mut names: Vec<&String> = t.predicates.keys().collect();
    names.sort();
    for name in names {
        let shape = &t.predicates[name];
        out.push(Command::DeclareSort(shape.index_name.clone()));
        out.push(Command::DeclareFun(shape.unfolded.clone()));
        if let Some(instance) = &shape.instance {
            out.push(Command::DeclareFun(instance.clone()));
        }
        location_commands(&shape.location, &shape.arguments, &mut out);
    }
    out
}

/// A location constructor and its selectors: distinct arguments give distinct locations.
pub fn location_commands(location: &FunDecl, arguments: &[FunDecl], out: &mut Vec<Command>) {
    out.push(Command::DeclareFun(location.clone()));
    let vars: Vec<(Symbol, Sort)> = location
        .args()
        .iter()
        .enumerate()
        .map(|(i, s)| (Symbol::user(&format!("a{i}")), s.clone()))
        .collect();
    let terms: Vec<Term> = vars
        .iter()
        .map(|(s, sort)| Term::var(s.clone(), sort.clone()))
        .collect();
    let loc = Term::app(location, terms.clone());
    let mut facts = Vec::new();
    for (arg, value) in arguments.iter().zip(terms) {
        out.push(Command::DeclareFun(arg.clone()));
        facts.push(Term::eq(Term::app(arg, vec![loc.clone()]), value));
    }
    if !vars.is_empty() {
        out.push(Command::assert(Term::forall(
            vars,
            Term::and(facts),
            vec![vec![loc]],
        )));
    }
}
